/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user-space ring reaper: completions taken from the ring without a
 * system call, exactly once under threads, and safe across fork,
 * io_destroy, mremap and a corrupted ring.  Every test also runs with
 * LIBAIO_DISABLE=ring (tests/run-mode.sh), where the same answers must
 * come from the kernel.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-common.h"


/* Submit n one-byte reads of fd that complete inside io_submit. */
static void submit_reads(io_context_t ctx, int fd, struct iocb *cbs, int n,
			 unsigned char *buf, uintptr_t tag0)
{
	int i, done = 0;

	for (i = 0; i < n; i++) {
		io_prep_pread(&cbs[i], fd, buf + i, 1, i);
		cbs[i].data = (void *)(tag0 + i);
	}
	while (done < n) {
		struct iocb *p = &cbs[done];
		int r = io_submit(ctx, 1, &p);

		ck_assert_int_eq(r, 1);
		done++;
	}
}

START_TEST(reaps_ready_events_in_order)
{
	io_context_t ctx = NULL;
	struct iocb cbs[64];
	struct io_event ev[64];
	unsigned char buf[64];
	struct timespec zero = { 0, 0 };
	int fd = test_tmpfile(4096), i, got = 0;

	ck_assert_int_eq(io_setup(64, &ctx), 0);
	ck_assert_int_eq(io_reaper_active(ctx), ring_mode());
	submit_reads(ctx, fd, cbs, 64, buf, 1000);
	while (got < 64) {
		int r = io_getevents(ctx, 0, 7, ev + got, &zero);

		ck_assert_int_ge(r, 0);
		got += r;
	}
	for (i = 0; i < 64; i++) {
		ck_assert_ptr_eq(ev[i].obj, &cbs[i]);
		ck_assert_int_eq((uintptr_t)ev[i].data, 1000 + i);
		ck_assert_int_eq((long)ev[i].res, 1);
		ck_assert_int_eq(buf[i], test_pattern(i));
	}
	ck_assert_int_eq(io_getevents(ctx, 0, 64, ev, &zero), 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/* Cross the end of the ring many times, with batches that straddle it. */
START_TEST(wraps_around_the_ring)
{
	io_context_t ctx = NULL;
	struct iocb cbs[50];
	struct io_event ev[50];
	unsigned char buf[50];
	int fd = test_tmpfile(4096), round, i;
	unsigned nr;
	uintptr_t tag = 0;

	ck_assert_int_eq(io_setup(1, &ctx), 0);
	nr = hdr(ctx)->nr;
	ck_assert_uint_ge(nr, 2);
	for (round = 0; round < (int)(nr * 3 / 37) + 10; round++) {
		int n = 37, got = 0;

		submit_reads(ctx, fd, cbs, n, buf, tag);
		while (got < n) {
			int r = io_getevents(ctx, 1, n - got, ev + got, NULL);

			ck_assert_int_ge(r, 1);
			got += r;
		}
		for (i = 0; i < n; i++)
			ck_assert_int_eq((uintptr_t)ev[i].data, tag + i);
		tag += n;
	}
	ck_assert_uint_lt(hdr(ctx)->head, nr);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/*
 * Ready completions are reaped without entering the kernel: in a child,
 * a seccomp filter makes io_getevents and io_pgetevents fail with an
 * errno the kernel never gives, so any system call shows up as that error.
 */
#define SENTINEL_ERRNO EHWPOISON

static int forbid_reap_syscalls(void)
{
	static const long reaps[] = { SYS_io_getevents, SYS_io_pgetevents };

	return test_seccomp_errno(reaps, 2, SENTINEL_ERRNO);
}

START_TEST(no_system_call_when_events_are_ready)
{
	io_context_t ctx = NULL;
	struct iocb cbs[16];
	struct io_event ev[16];
	unsigned char buf[16];
	struct timespec zero = { 0, 0 }, sec = { 1, 0 };
	sigset_t mask;
	int fd = test_tmpfile(4096), status;
	pid_t pid;

	ck_assert_int_eq(io_setup(16, &ctx), 0);
	submit_reads(ctx, fd, cbs, 16, buf, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int r1, r2, r3, r4, r5;

		/* The child cannot use the parent's context, so let the
		 * parent's be, and make one of its own for this check. */
		io_context_t c2 = NULL;

		if (io_setup(16, &c2) != 0)
			_exit(10);
		submit_reads(c2, fd, cbs, 16, buf, 0);
		if (forbid_reap_syscalls() != 0)
			_exit(11);
		sigemptyset(&mask);
		r1 = io_getevents(c2, 4, 4, ev, NULL);
		r2 = io_getevents(c2, 1, 4, ev, &sec);
		r3 = io_reap(c2, 4, ev);
		r4 = io_pgetevents(c2, 1, 4, ev, &zero, &mask);
		/* Empty ring with a zero timeout: still no system call. */
		r5 = io_getevents(c2, 0, 4, ev, &zero);
		if (ring_mode())
			_exit(r1 == 4 && r2 == 4 && r3 == 4 && r4 == 4 && r5 == 0 ? 0 : 20);
		/* Reaper off: every reap is a system call. */
		_exit(r1 == -SENTINEL_ERRNO && r3 == -SENTINEL_ERRNO ? 0 : 21);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(io_getevents(ctx, 16, 16, ev, NULL), 16);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/*
 * Exactly once: several threads reap one context in different ways while
 * others submit tagged iocbs (reads, and polls on an always-writable
 * eventfd); every tag must be delivered once.
 */
#define STRESS_REAPERS 4
#define STRESS_SUBMITTERS 2

struct stress {
	io_context_t ctx;
	int fd, efd;
	long n;
	struct iocb *cbs;
	unsigned char *buf;
	_Atomic unsigned char *seen;
	_Atomic long reaped, dupes, bad;
	_Atomic int next_submitter;
};

static void *stress_submit(void *arg)
{
	struct stress *s = arg;
	int me = atomic_fetch_add(&s->next_submitter, 1);
	long i;

	for (i = me; i < s->n; i += STRESS_SUBMITTERS) {
		struct iocb *cb = &s->cbs[i];
		int r;

		if (i % 2)
			io_prep_poll(cb, s->efd, POLLOUT);
		else
			io_prep_pread(cb, s->fd, s->buf + i, 1, i % 4096);
		cb->data = (void *)(uintptr_t)(i + 1);
		while ((r = io_submit(s->ctx, 1, &cb)) == -EAGAIN)
			sched_yield();
		if (r != 1)
			atomic_fetch_add(&s->bad, 1);
	}
	return NULL;
}

static void stress_count(struct stress *s, const struct io_event *ev, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uintptr_t tag = (uintptr_t)ev[i].data;

		if (tag < 1 || tag > (uintptr_t)s->n ||
		    ev[i].obj != &s->cbs[tag - 1]) {
			atomic_fetch_add(&s->bad, 1);
			continue;
		}
		if (atomic_fetch_add(&s->seen[tag - 1], 1) != 0)
			atomic_fetch_add(&s->dupes, 1);
	}
	atomic_fetch_add(&s->reaped, n);
}

struct reaper_arg {
	struct stress *s;
	int how;
};

static void *stress_reap(void *arg)
{
	struct reaper_arg *a = arg;
	struct stress *s = a->s;
	struct io_event ev[32];
	struct timespec zero = { 0, 0 }, ms = { 0, 5000000 };
	sigset_t mask;

	sigemptyset(&mask);
	while (atomic_load(&s->reaped) < s->n && atomic_load(&s->bad) == 0) {
		int r;

		switch (a->how) {
		case 0:
			r = io_getevents(s->ctx, 1, 32, ev, &ms);
			break;
		case 1:
			r = io_getevents(s->ctx, 0, 5, ev, &zero);
			break;
		case 2:
			r = io_reap(s->ctx, 32, ev);
			break;
		default:
			r = io_pgetevents(s->ctx, 1, 16, ev, &ms, &mask);
			break;
		}
		if (r < 0 && r != -EINTR) {
			atomic_fetch_add(&s->bad, 1);
			break;
		}
		if (r > 0)
			stress_count(s, ev, r);
	}
	return NULL;
}

START_TEST(exactly_once_under_threads)
{
	const char *env = getenv("LIBAIO_STRESS_N");
	struct stress s;
	pthread_t sub[STRESS_SUBMITTERS], rp[STRESS_REAPERS];
	struct reaper_arg ra[STRESS_REAPERS];
	long i;

	memset(&s, 0, sizeof(s));
	s.n = env ? atol(env) : 200000;
	s.fd = test_tmpfile(4096);
	s.efd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(s.efd, 0);
	s.cbs = calloc(s.n, sizeof(*s.cbs));
	s.buf = calloc(s.n, 1);
	s.seen = calloc(s.n, 1);
	ck_assert(s.cbs && s.buf && s.seen);
	ck_assert_int_eq(io_setup(256, &s.ctx), 0);

	for (i = 0; i < STRESS_REAPERS; i++) {
		ra[i].s = &s;
		ra[i].how = (int)i;
		ck_assert_int_eq(pthread_create(&rp[i], NULL, stress_reap, &ra[i]), 0);
	}
	for (i = 0; i < STRESS_SUBMITTERS; i++)
		ck_assert_int_eq(pthread_create(&sub[i], NULL, stress_submit, &s), 0);
	for (i = 0; i < STRESS_SUBMITTERS; i++)
		pthread_join(sub[i], NULL);
	for (i = 0; i < STRESS_REAPERS; i++)
		pthread_join(rp[i], NULL);

	long bad = atomic_load(&s.bad), dupes = atomic_load(&s.dupes);
	long reaped = atomic_load(&s.reaped);

	ck_assert_int_eq(bad, 0);
	ck_assert_int_eq(dupes, 0);
	ck_assert_int_eq(reaped, s.n);
	for (i = 0; i < s.n; i++)
		ck_assert_int_eq(atomic_load(&s.seen[i]), 1);
	for (i = 0; i < s.n; i += 2)
		ck_assert_int_eq(s.buf[i], test_pattern(i % 4096));
	ck_assert_int_eq(io_destroy(s.ctx), 0);
	close(s.fd);
	close(s.efd);
	free(s.cbs);
	free(s.buf);
	free((void *)s.seen);
}
END_TEST

/*
 * A call that takes no event (io_getevents with nr 0 and no array, as
 * io_queue_wait makes) still enters the kernel's reap when the ring is
 * not empty: the kernel reads the head and stores it back.  A ring reap
 * in another thread between the two would be undone and its events
 * delivered again, unless the library counts that call as a kernel
 * reaper.  Batches of 32 reads complete inside io_submit, one thread
 * reaps them while another makes such calls; a context that ever saw a
 * kernel reap overlap goes to the kernel for good, so a new context
 * every 64 batches.  Every tag must come back once, and nothing may be
 * left in the ring.
 */
struct empty_caller {
	_Atomic(io_context_t) ctx;
	atomic_int stop;
	atomic_long bad;
};

static void *call_for_no_event(void *arg)
{
	struct empty_caller *c = arg;

	while (!atomic_load(&c->stop)) {
		io_context_t ctx = atomic_load(&c->ctx);

		if (!ctx)
			continue;
		/* Either may meet a context just destroyed: EINVAL. */
		if (io_getevents(ctx, 0, 0, NULL, NULL) > 0 ||
		    io_queue_wait(ctx, NULL) > 0)
			atomic_fetch_add(&c->bad, 1);
	}
	return NULL;
}

START_TEST(calls_taking_no_event_do_not_undo_ring_reaps)
{
	const char *env = getenv("LIBAIO_STRESS_N");
	long batches = (env ? atol(env) : 200000) / 32, b, dupes = 0;
	struct empty_caller c;
	struct iocb cbs[32], *list[32];
	struct io_event ev[32];
	unsigned char buf[32];
	unsigned char *seen = calloc((size_t)batches * 32, 1);
	struct timespec zero = { 0, 0 };
	int fd = test_tmpfile(4096), i;
	io_context_t ctx = NULL;
	pthread_t t;

	ck_assert_ptr_nonnull(seen);
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(pthread_create(&t, NULL, call_for_no_event, &c), 0);
	for (b = 0; b < batches; b++) {
		int got = 0, n;

		if (b % 64 == 0) {
			ctx = NULL;
			ck_assert_int_eq(io_setup(64, &ctx), 0);
			atomic_store(&c.ctx, ctx);
		}
		for (i = 0; i < 32; i++) {
			io_prep_pread(&cbs[i], fd, buf + i, 1, i);
			cbs[i].data = (void *)(uintptr_t)(b * 32 + i);
			list[i] = &cbs[i];
		}
		ck_assert_int_eq(io_submit(ctx, 32, list), 32);
		while (got < 32) {
			n = io_getevents(ctx, 1, 32, ev, NULL);
			ck_assert_int_gt(n, 0);
			for (i = 0; i < n; i++) {
				uintptr_t tag = (uintptr_t)ev[i].data;

				ck_assert_uint_lt(tag, (uintptr_t)batches * 32);
				if (seen[tag]++)
					dupes++;
				else
					got++;
			}
		}
		if (b % 64 == 63 || b == batches - 1) {
			/* Anything still in the ring came back once already. */
			while ((n = io_getevents(ctx, 0, 32, ev, &zero)) > 0)
				dupes += n;
			ck_assert_int_eq(n, 0);
			atomic_store(&c.ctx, NULL);
			ck_assert_int_eq(io_destroy(ctx), 0);
		}
	}
	atomic_store(&c.stop, 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(dupes, 0);
	ck_assert_int_eq(atomic_load(&c.bad), 0);
	close(fd);
	free(seen);
}
END_TEST

/* After fork the child gets -EINVAL and leaves the parent's ring alone.
 * Newer kernels (Debian's 7.2 among them) no longer copy the ring's
 * mapping into the child at all: there the child has no ring to look
 * at, and touching the address would fault, so it checks the head only
 * where the mapping was copied (msync answers ENOMEM where nothing is
 * mapped). */
START_TEST(fork_child_gets_einval_and_parent_keeps_events)
{
	io_context_t ctx = NULL;
	struct iocb cbs[5];
	struct io_event ev[5];
	unsigned char buf[5];
	struct timespec zero = { 0, 0 };
	int fd = test_tmpfile(4096), status, i;
	unsigned head0;
	pid_t pid;

	ck_assert_int_eq(io_setup(8, &ctx), 0);
	submit_reads(ctx, fd, cbs, 5, buf, 77);
	head0 = hdr(ctx)->head;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct iocb *p = &cbs[0];
		int bad = 0;

		bad |= io_getevents(ctx, 0, 5, ev, &zero) != -EINVAL;
		bad |= io_getevents(ctx, 1, 5, ev, NULL) != -EINVAL;
		bad |= io_reap(ctx, 5, ev) != -EINVAL;
		bad |= io_queue_run(ctx) != -EINVAL;
		bad |= io_submit(ctx, 1, &p) != -EINVAL;
		bad |= io_reaper_active(ctx) != 0;
		bad |= io_destroy(ctx) != -EINVAL;
		if (msync((void *)ctx, (size_t)sysconf(_SC_PAGESIZE), MS_ASYNC) == 0)
			bad |= hdr(ctx)->head != head0;
		_exit(bad ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_uint_eq(hdr(ctx)->head, head0);
	ck_assert_int_eq(io_getevents(ctx, 5, 5, ev, NULL), 5);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq((uintptr_t)ev[i].data, 77 + i);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

START_TEST(destroyed_context_gives_einval)
{
	io_context_t ctx = NULL;
	struct iocb cbs[3];
	struct io_event ev[3];
	unsigned char buf[3];
	struct timespec zero = { 0, 0 };
	sigset_t mask;
	int fd = test_tmpfile(4096);

	sigemptyset(&mask);
	ck_assert_int_eq(io_setup(8, &ctx), 0);
	submit_reads(ctx, fd, cbs, 3, buf, 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	/* The ring is unmapped now: the stock library faults here. */
	ck_assert_int_eq(io_getevents(ctx, 0, 3, ev, &zero), -EINVAL);
	ck_assert_int_eq(io_getevents(ctx, 1, 3, ev, NULL), -EINVAL);
	ck_assert_int_eq(io_pgetevents(ctx, 0, 3, ev, &zero, &mask), -EINVAL);
	ck_assert_int_eq(io_reap(ctx, 3, ev), -EINVAL);
	ck_assert_int_eq(io_queue_run(ctx), -EINVAL);
	ck_assert_int_eq(io_reaper_active(ctx), 0);
	ck_assert_int_eq(io_destroy(ctx), -EINVAL);
	close(fd);
}
END_TEST

struct spinner {
	io_context_t ctx;
	_Atomic int stop, bad;
	int blocking;
};

static void *spin_reap(void *arg)
{
	struct spinner *sp = arg;
	struct io_event ev[8];
	struct timespec zero = { 0, 0 };

	while (!atomic_load(&sp->stop)) {
		int r = sp->blocking ? io_getevents(sp->ctx, 1, 8, ev, NULL)
				     : io_getevents(sp->ctx, 0, 8, ev, &zero);

		if (r == -EINVAL)
			break;
		if (r < 0)
			atomic_store(&sp->bad, r);
	}
	return NULL;
}

/* io_destroy beside spinning and blocked reapers: no crash, no hang;
 * the blocked one is woken with -EINVAL by the kernel.  Fewer rounds
 * under valgrind, which runs one thread at a time: there a destroyer
 * that finds a spinner holding the ring waits a whole time slice for it,
 * and 200 rounds took 33 s of memcheck where the point is memory errors,
 * not the race (the other jobs run all 200). */
START_TEST(destroy_while_others_reap)
{
	int round, rounds = test_under_valgrind() ? 40 : 200;
	int fd = test_tmpfile(4096);

	test_hang_guard("destroy_while_others_reap", 60);
	for (round = 0; round < rounds; round++) {
		struct spinner sp = { NULL, 0, 0, round % 2 };
		struct iocb cbs[4];
		unsigned char buf[4];
		pthread_t t[2];

		ck_assert_int_eq(io_setup(8, &sp.ctx), 0);
		submit_reads(sp.ctx, fd, cbs, 4, buf, 0);
		ck_assert_int_eq(pthread_create(&t[0], NULL, spin_reap, &sp), 0);
		ck_assert_int_eq(pthread_create(&t[1], NULL, spin_reap, &sp), 0);
		if (round % 3 == 0)
			sched_yield();
		ck_assert_int_eq(io_destroy(sp.ctx), 0);
		atomic_store(&sp.stop, 1);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		ck_assert_int_eq(atomic_load(&sp.bad), 0);
	}
	test_hang_guard(NULL, 0);
	close(fd);
}
END_TEST

/*
 * io_setup beside an io_destroy that is still waiting for a pending poll:
 * the kernel has already unmapped the old ring and usually hands its
 * address to the new context.  Both calls must return (they deadlocked
 * once: the new context's registration waited on the dying entry while
 * holding the lock its destroyer needed), and the new context must work.
 */
static void *destroy_in_thread(void *arg)
{
	return (void *)(intptr_t)io_destroy(*(io_context_t *)arg);
}

START_TEST(setup_beside_a_slow_destroy)
{
	io_context_t old = NULL, fresh = NULL;
	struct iocb pcb, *pp = &pcb, cbs[2];
	struct io_event ev[2];
	unsigned char buf[2];
	pthread_t t;
	void *ret;
	int p[2], fd = test_tmpfile(4096), round;

	test_hang_guard("setup_beside_a_slow_destroy", 60);
	ck_assert_int_eq(pipe(p), 0);
	for (round = 0; round < 5; round++) {
		ck_assert_int_eq(io_setup(8, &old), 0);
		io_prep_poll(&pcb, p[0], POLLIN);
		ck_assert_int_eq(io_submit(old, 1, &pp), 1);
		ck_assert_int_eq(pthread_create(&t, NULL, destroy_in_thread, &old), 0);
		usleep(2000);	/* let the destroy reach the kernel's wait */
		ck_assert_int_eq(io_setup(8, &fresh), 0);
		pthread_join(t, &ret);
		ck_assert_int_eq((intptr_t)ret, 0);
		submit_reads(fresh, fd, cbs, 2, buf, 40);
		ck_assert_int_eq(io_getevents(fresh, 2, 2, ev, NULL), 2);
		ck_assert_int_eq((uintptr_t)ev[1].data, 41);
		ck_assert_int_eq(io_destroy(fresh), 0);
		old = fresh = NULL;
	}
	test_hang_guard(NULL, 0);
	close(p[0]);
	close(p[1]);
	close(fd);
}
END_TEST

/* A ring the application scribbled on never crashes the library, and a
 * fresh context afterwards works normally. */
START_TEST(corrupted_ring_is_survived)
{
	static const struct {
		const char *what;
		unsigned word;	/* index into the header */
		unsigned value;
	} cases[] = {
		{ "magic", 4, 0 },
		{ "incompat", 6, 1 },
		{ "head past nr", 2, 100000 },
		{ "tail past nr", 3, 0xffffffffu },
		{ "huge nr", 1, 0x7fffffffu },
		{ "zero nr", 1, 0 },
	};
	struct io_event ev[400];
	struct timespec zero = { 0, 0 };
	unsigned i;
	int fd = test_tmpfile(4096);

	/* The kernel then returns stale events whose obj is garbage, and
	 * valgrind's own io_getevents wrapper dereferences it and dies. */
	if (test_under_valgrind()) {
		close(fd);
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		io_context_t ctx = NULL;
		struct iocb cbs[4];
		unsigned char buf[4];
		unsigned *w;
		int r;

		ck_assert_int_eq(io_setup(8, &ctx), 0);
		submit_reads(ctx, fd, cbs, 4, buf, 0);
		w = (unsigned *)ctx;
		w[cases[i].word] = cases[i].value;
		r = io_getevents(ctx, 0, 400, ev, &zero);
		/* Whatever the kernel makes of it, never more than asked. */
		ck_assert_msg(r >= -EINVAL && r <= 400, "%s: %d", cases[i].what, r);
		r = io_reap(ctx, 400, ev);
		ck_assert_msg(r >= -EINVAL && r <= 400, "%s: %d", cases[i].what, r);
		io_destroy(ctx);
	}

	/* A fresh context works normally. */
	{
		io_context_t ctx = NULL;
		struct iocb cbs[4];
		unsigned char buf[4];

		ck_assert_int_eq(io_setup(8, &ctx), 0);
		ck_assert_int_eq(io_reaper_active(ctx), ring_mode());
		submit_reads(ctx, fd, cbs, 4, buf, 0);
		ck_assert_int_eq(io_getevents(ctx, 4, 4, ev, NULL), 4);
		ck_assert_int_eq(io_destroy(ctx), 0);
	}
	close(fd);
}
END_TEST

/* nr overwritten in the ring: the reaper never indexes by it; it sees the
 * word disagree with its own copy and leaves the ring to the kernel, so
 * the events still come out right and nothing outside the ring is read. */
START_TEST(ring_nr_word_is_not_trusted)
{
	io_context_t ctx = NULL;
	struct iocb cbs[6];
	struct io_event ev[6];
	unsigned char buf[6];
	int fd = test_tmpfile(4096), i;

	ck_assert_int_eq(io_setup(8, &ctx), 0);
	submit_reads(ctx, fd, cbs, 6, buf, 500);
	hdr(ctx)->nr = 0x7fffffff;
	ck_assert_int_eq(io_getevents(ctx, 6, 6, ev, NULL), 6);
	for (i = 0; i < 6; i++)
		ck_assert_int_eq((uintptr_t)ev[i].data, 500 + i);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/* Programs that reap the ring themselves (fio's userspace_reap, QEMU)
 * keep working: the library holds no copy of head that could go stale. */
START_TEST(application_reaping_its_own_ring)
{
	io_context_t ctx = NULL;
	struct iocb cbs[40];
	struct io_event ev[40];
	unsigned char buf[40];
	int fd = test_tmpfile(4096), round;
	uintptr_t expect = 0;

	/* With async submission on the ring holds the library's copies of
	 * the iocbs: not for programs that read it themselves. */
	if (test_skip_in_async_mode("the ring holds the library's copies of async iocbs"))
		return;
	ck_assert_int_eq(io_setup(16, &ctx), 0);
	for (round = 0; round < 20; round++) {
		struct ring_hdr *h = hdr(ctx);
		struct io_event *slots = (struct io_event *)(h + 1);
		int n = 0;

		submit_reads(ctx, fd, cbs, 10, buf, expect);
		/* Take three by hand, the way fio does. */
		while (n < 3) {
			unsigned head = __atomic_load_n(&h->head, __ATOMIC_RELAXED);

			ck_assert_uint_ne(head, __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE));
			ck_assert_int_eq((uintptr_t)slots[head].data, expect + n);
			__atomic_store_n(&h->head, (head + 1) % h->nr, __ATOMIC_RELEASE);
			n++;
		}
		/* And the rest through the library. */
		ck_assert_int_eq(io_getevents(ctx, 7, 7, ev, NULL), 7);
		for (n = 0; n < 7; n++)
			ck_assert_int_eq((uintptr_t)ev[n].data, expect + 3 + n);
		expect += 10;
	}
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/* A ring moved with mremap (CRIU does this): the new address is the
 * context now; the library does not know it and goes through the kernel. */
START_TEST(mremapped_ring_still_works)
{
	io_context_t ctx = NULL, moved;
	struct iocb cbs[4];
	struct io_event ev[4];
	unsigned char buf[4];
	size_t len;
	void *dst;
	int fd = test_tmpfile(4096);

	ck_assert_int_eq(io_setup(8, &ctx), 0);
	len = ((size_t)hdr(ctx)->nr * 32 + 32 + 4095) & ~(size_t)4095;
	dst = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(dst, MAP_FAILED);
	moved = mremap(ctx, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	ck_assert_ptr_eq(moved, dst);
	submit_reads(moved, fd, cbs, 4, buf, 9);
	ck_assert_int_eq(io_getevents(moved, 4, 4, ev, NULL), 4);
	ck_assert_int_eq((uintptr_t)ev[0].data, 9);
	ck_assert_int_eq(io_destroy(moved), 0);
	close(fd);
}
END_TEST

/* A context made with the raw system call still works, via the kernel. */
START_TEST(foreign_context_works_through_the_kernel)
{
	io_context_t ctx = NULL;
	struct iocb cbs[4];
	struct io_event ev[4];
	unsigned char buf[4];
	int fd = test_tmpfile(4096);

	ck_assert_int_eq(test_sys_io_setup(8, &ctx), 0);
	ck_assert_int_eq(io_reaper_active(ctx), 0);
	submit_reads(ctx, fd, cbs, 4, buf, 3);
	ck_assert_int_eq(io_getevents(ctx, 4, 4, ev, NULL), 4);
	ck_assert_int_eq((uintptr_t)ev[3].data, 6);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/*
 * Data read by a completion reaped from the ring is used by the program
 * (branching on it).  Under valgrind's memcheck this is an error unless
 * the library tells memcheck the kernel filled the buffer; the test is run
 * under valgrind by tests/reaper-valgrind.sh.
 */
START_TEST(read_data_is_defined_after_ring_reap)
{
	io_context_t ctx = NULL;
	struct iocb cb, *p = &cb;
	struct io_event ev;
	struct timespec zero = { 0, 0 };
	unsigned char *buf = malloc(8192);
	int fd = test_tmpfile(8192), r, i, mismatches = 0;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(io_setup(4, &ctx), 0);
	ck_assert_int_eq(io_reaper_active(ctx), ring_mode());
	io_prep_pread(&cb, fd, buf, 8192, 0);
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	do
		r = io_getevents(ctx, 0, 1, &ev, &zero);
	while (r == 0);
	ck_assert_int_eq(r, 1);
	ck_assert_int_eq((long)ev.res, 8192);
	for (i = 0; i < 8192; i++)
		if (buf[i] != test_pattern(i))
			mismatches++;
	ck_assert_int_eq(mismatches, 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	free(buf);
	close(fd);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("reaper");
	TCase *t = tcase_create("reaper");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, reaps_ready_events_in_order);
	tcase_add_test(t, wraps_around_the_ring);
	tcase_add_test(t, no_system_call_when_events_are_ready);
	tcase_add_test(t, exactly_once_under_threads);
	tcase_add_test(t, calls_taking_no_event_do_not_undo_ring_reaps);
	tcase_add_test(t, fork_child_gets_einval_and_parent_keeps_events);
	tcase_add_test(t, destroyed_context_gives_einval);
	tcase_add_test(t, destroy_while_others_reap);
	tcase_add_test(t, setup_beside_a_slow_destroy);
	tcase_add_test(t, corrupted_ring_is_survived);
	tcase_add_test(t, ring_nr_word_is_not_trusted);
	tcase_add_test(t, application_reaping_its_own_ring);
	tcase_add_test(t, mremapped_ring_still_works);
	tcase_add_test(t, foreign_context_works_through_the_kernel);
	suite_add_tcase(s, t);
	/* Its own case, so tests/reaper-valgrind.sh can run it alone. */
	t = tcase_create("valgrind");
	tcase_add_test(t, read_data_is_defined_after_ring_reap);
	suite_add_tcase(s, t);
	return s;
}
