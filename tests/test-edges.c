/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reap lock and the registry at the edges a hostile but legitimate
 * program reaches: threads that never come back from a reap (siglongjmp
 * out of a handler, asynchronous cancellation), a handler that runs while
 * the context is destroyed, two destroyers beside reapers, io_queue_run
 * beside io_destroy, and real-time priorities on one CPU.  The stock
 * library is a plain system-call wrapper and survives all of these; so
 * must we.  Each test arms a hang guard: a wait on another thread's
 * progress shows up as a named failure, not a stuck run.
 */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#ifdef HAVE_SYS_SINGLE_THREADED_H
# include <sys/single_threaded.h>
#endif
#include <unistd.h>

#include "test-common.h"

/* n one-byte reads of fd that complete inside io_submit, tagged tag0.. */
static void submit_reads(io_context_t ctx, int fd, struct iocb *cbs, int n,
			 unsigned char *buf, uintptr_t tag0)
{
	int i;

	for (i = 0; i < n; i++) {
		struct iocb *p = &cbs[i];

		io_prep_pread(&cbs[i], fd, buf + i, 1, i);
		cbs[i].data = (void *)(tag0 + i);
		ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	}
}

/* Reap exactly n events and check their tags. */
static void reap_tagged(io_context_t ctx, int n, uintptr_t tag0)
{
	struct io_event ev[8];
	int got = 0, seen = 0, i;

	ck_assert_int_le(n, 8);
	while (got < n) {
		int r = io_getevents(ctx, 1, n - got, ev, NULL);

		ck_assert_int_gt(r, 0);
		for (i = 0; i < r; i++) {
			uintptr_t t = (uintptr_t)ev[i].data - tag0;

			ck_assert_uint_lt(t, (unsigned)n);
			ck_assert(!(seen & (1 << t)));
			seen |= 1 << t;
			ck_assert_int_eq((long)ev[i].res, 1);
		}
		got += r;
	}
}

/* Is thread tid inside one of the kernel's reap calls right now? */
static int in_kernel_reap(pid_t tid)
{
	long nr = test_task_syscall(tid);

	if (nr == -2)
		return -1;
#ifdef SYS_io_getevents
	if (nr == SYS_io_getevents)
		return 1;
#endif
#ifdef SYS_io_pgetevents
	if (nr == SYS_io_pgetevents)
		return 1;
#endif
#ifdef SYS_io_pgetevents_time64
	if (nr == SYS_io_pgetevents_time64)
		return 1;
#endif
	return 0;
}

/* Wait until tid sleeps in a kernel reap (the hang guard bounds it).
 * Without /proc the wait is a plain pause: the tests stay meaningful
 * whenever the thread did get that far. */
static void wait_until_in_kernel_reap(pid_t tid)
{
	int i;

	for (i = 0; i < 100000; i++) {
		int r = in_kernel_reap(tid);

		if (r != 0) {
			if (r < 0)
				usleep(20000);
			return;
		}
		usleep(100);
	}
	ck_abort_msg("the reaping thread never entered the kernel");
}

struct blocker {
	io_context_t ctx;
	_Atomic pid_t tid;
	_Atomic int result;	/* 1: the call returned; 2: longjmp'd out */
	int async_cancel;
};

static sigjmp_buf blocker_jump;

static void jump_out(int sig)
{
	(void)sig;
	siglongjmp(blocker_jump, 1);
}

static void *block_in_reap(void *arg)
{
	struct blocker *b = arg;
	struct io_event ev;

	atomic_store(&b->tid, (pid_t)syscall(SYS_gettid));
	if (b->async_cancel) {
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	} else if (sigsetjmp(blocker_jump, 1)) {
		atomic_store(&b->result, 2);
		return NULL;
	}
	/* Nothing was submitted: this sleeps in the kernel until the
	 * signal, the cancellation or the context's destruction. */
	io_getevents(b->ctx, 1, 1, &ev, NULL);
	atomic_store(&b->result, 1);
	return NULL;
}

/* After a reaper vanished inside the kernel: the context still works,
 * io_destroy returns, and a new context (often at the same address)
 * works too. */
static void context_survives_a_vanished_reaper(io_context_t ctx, int fd)
{
	io_context_t fresh = NULL;
	struct iocb cbs[4];
	unsigned char buf[4];

	submit_reads(ctx, fd, cbs, 3, buf, 100);
	reap_tagged(ctx, 3, 100);
	ck_assert_int_eq(io_destroy(ctx), 0);
	ck_assert_int_eq(io_setup(8, &fresh), 0);
	submit_reads(fresh, fd, cbs, 4, buf, 200);
	reap_tagged(fresh, 4, 200);
	ck_assert_int_eq(io_destroy(fresh), 0);
}

START_TEST(siglongjmp_out_of_a_blocking_reap_wedges_nothing)
{
	struct blocker b = { NULL, 0, 0, 0 };
	struct sigaction sa, old;
	struct iocb cbs[2];
	unsigned char buf[2];
	pthread_t t;
	int fd = test_tmpfile(4096);

	test_hang_guard("siglongjmp_out_of_a_blocking_reap_wedges_nothing", 30);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = jump_out;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, &old), 0);
	ck_assert_int_eq(io_setup(8, &b.ctx), 0);
	/* One round through the ring first, so the context is known. */
	submit_reads(b.ctx, fd, cbs, 2, buf, 0);
	reap_tagged(b.ctx, 2, 0);

	ck_assert_int_eq(pthread_create(&t, NULL, block_in_reap, &b), 0);
	while (!atomic_load(&b.tid))
		usleep(100);
	wait_until_in_kernel_reap(atomic_load(&b.tid));
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	ck_assert_int_eq(atomic_load(&b.result), 2);

	context_survives_a_vanished_reaper(b.ctx, fd);
	sigaction(SIGUSR1, &old, NULL);
	test_hang_guard(NULL, 0);
	close(fd);
}
END_TEST

START_TEST(asynchronous_cancel_of_a_blocking_reap_wedges_nothing)
{
	struct blocker b = { NULL, 0, 0, 1 };
	pthread_t t;
	void *ret;
	int fd;

#if TEST_UNDER_ASAN
	/* AddressSanitizer cannot follow an asynchronous unwind: it reports
	 * its own thread teardown as a stack overflow.  Every other job
	 * runs this test. */
	test_skip("not under AddressSanitizer");
	return;
#endif
	fd = test_tmpfile(4096);

	test_hang_guard("asynchronous_cancel_of_a_blocking_reap_wedges_nothing",
			30);
	ck_assert_int_eq(io_setup(8, &b.ctx), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, block_in_reap, &b), 0);
	while (!atomic_load(&b.tid))
		usleep(100);
	wait_until_in_kernel_reap(atomic_load(&b.tid));
	ck_assert_int_eq(pthread_cancel(t), 0);
	pthread_join(t, &ret);
	ck_assert_ptr_eq(ret, PTHREAD_CANCELED);

	context_survives_a_vanished_reaper(b.ctx, fd);
	test_hang_guard(NULL, 0);
	close(fd);
}
END_TEST

/* A handler that stays until the main thread lets it go. */
static int handler_gate[2];
static _Atomic int handler_entered;

static void linger(int sig)
{
	char c;

	(void)sig;
	atomic_store(&handler_entered, 1);
	while (read(handler_gate[0], &c, 1) < 0)
		;
}

START_TEST(destroy_does_not_wait_for_a_handler_that_interrupted_a_reap)
{
	struct blocker b = { NULL, 0, 0, 0 };
	struct sigaction sa, old;
	pthread_t t;

	test_hang_guard("destroy_does_not_wait_for_a_handler_that_interrupted_a_reap",
			30);
	ck_assert_int_eq(pipe(handler_gate), 0);
	atomic_store(&handler_entered, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = linger;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR2, &sa, &old), 0);
	ck_assert_int_eq(io_setup(8, &b.ctx), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, block_in_reap, &b), 0);
	while (!atomic_load(&b.tid))
		usleep(100);
	wait_until_in_kernel_reap(atomic_load(&b.tid));
	pthread_kill(t, SIGUSR2);
	while (!atomic_load(&handler_entered))
		usleep(100);
	/* The other thread is inside its handler, its reap interrupted:
	 * the stock library's io_destroy is one system call and returns. */
	ck_assert_int_eq(io_destroy(b.ctx), 0);
	ck_assert_int_eq(io_reaper_active(b.ctx), 0);
	ck_assert_int_eq(write(handler_gate[1], "x", 1), 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(atomic_load(&b.result), 1);
	sigaction(SIGUSR2, &old, NULL);
	close(handler_gate[0]);
	close(handler_gate[1]);
	test_hang_guard(NULL, 0);
}
END_TEST

struct race {
	io_context_t ctx;
	pthread_barrier_t go;
	_Atomic int destroyed_ok, destroyed_einval, bad;
	_Atomic int stop;
};

static void *destroyer(void *arg)
{
	struct race *r = arg;
	int ret;

	pthread_barrier_wait(&r->go);
	ret = io_destroy(r->ctx);
	if (ret == 0)
		atomic_fetch_add(&r->destroyed_ok, 1);
	else if (ret == -EINVAL)
		atomic_fetch_add(&r->destroyed_einval, 1);
	else
		atomic_store(&r->bad, ret);
	return NULL;
}

static void *nonblocking_reaper(void *arg)
{
	struct race *r = arg;
	struct io_event ev[4];
	struct timespec zero = { 0, 0 };

	pthread_barrier_wait(&r->go);
	while (!atomic_load(&r->stop)) {
		int ret = io_getevents(r->ctx, 0, 4, ev, &zero);

		if (ret == -EINVAL)
			break;
		if (ret < 0)
			atomic_store(&r->bad, ret);
	}
	return NULL;
}

static void done_cb(io_context_t ctx, struct iocb *cb, long res, long res2)
{
	(void)ctx;
	(void)res;
	(void)res2;
	ck_assert_ptr_nonnull(cb);
}

static void *queue_runner(void *arg)
{
	struct race *r = arg;

	pthread_barrier_wait(&r->go);
	while (!atomic_load(&r->stop)) {
		int ret = io_queue_run(r->ctx);

		if (ret == -EINVAL)
			break;
		if (ret < 0)
			atomic_store(&r->bad, ret);
	}
	return NULL;
}

/*
 * Two destroyers and two reapers start together.  Exactly one destroy
 * succeeds; afterwards every call on the handle answers -EINVAL and
 * io_reaper_active says 0.  (The second destroyer's system call can be
 * the one that reaches the kernel first: the library must not bring the
 * entry back to life when the first one's call then fails.)
 */
START_TEST(two_destroyers_beside_reapers_leave_nothing_alive)
{
	int round, rounds = test_under_valgrind() ? 20 : 400;
	int fd = test_tmpfile(4096);

	test_hang_guard("two_destroyers_beside_reapers_leave_nothing_alive", 60);
	for (round = 0; round < rounds; round++) {
		struct race r;
		struct iocb cbs[4];
		struct io_event ev[1];
		struct timespec zero = { 0, 0 };
		unsigned char buf[4];
		pthread_t t[4];
		int i;

		memset(&r, 0, sizeof(r));
		pthread_barrier_init(&r.go, NULL, 4);
		ck_assert_int_eq(io_setup(8, &r.ctx), 0);
		submit_reads(r.ctx, fd, cbs, 4, buf, 0);
		pthread_create(&t[0], NULL, destroyer, &r);
		pthread_create(&t[1], NULL, destroyer, &r);
		pthread_create(&t[2], NULL, nonblocking_reaper, &r);
		pthread_create(&t[3], NULL, nonblocking_reaper, &r);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		ck_assert_int_eq(atomic_load(&r.destroyed_ok), 1);
		ck_assert_int_eq(atomic_load(&r.destroyed_einval), 1);
		ck_assert_int_eq(io_reaper_active(r.ctx), 0);
		ck_assert_int_eq(io_getevents(r.ctx, 0, 1, ev, &zero), -EINVAL);
		atomic_store(&r.stop, 1);
		for (i = 2; i < 4; i++)
			pthread_join(t[i], NULL);
		ck_assert_int_eq(atomic_load(&r.bad), 0);
		pthread_barrier_destroy(&r.go);
	}
	test_hang_guard(NULL, 0);
	close(fd);
}
END_TEST

/*
 * io_queue_run in two threads while a third destroys the context, with
 * reads and polls (emulated ones too, in that mode) completing meanwhile.
 * Every event io_queue_run hands a callback must be one of ours: a
 * completion the destroy swallowed may vanish, but never turn into an
 * event with no callback (the stock io_queue_run would call it).
 */
START_TEST(io_queue_run_beside_destroy_gets_einval)
{
	int round, rounds = test_under_valgrind() ? 20 : 400;
	int fd = test_tmpfile(4096), p[2];

	test_hang_guard("io_queue_run_beside_destroy_gets_einval", 60);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);	/* readable from now on */
	for (round = 0; round < rounds; round++) {
		struct race r;
		struct iocb cbs[8], *pp;
		unsigned char buf[8];
		pthread_t t[3];
		int i;

		memset(&r, 0, sizeof(r));
		pthread_barrier_init(&r.go, NULL, 3);
		ck_assert_int_eq(io_setup(8, &r.ctx), 0);
		for (i = 0; i < 6; i++) {
			if (i % 2)
				io_prep_poll(&cbs[i], p[0], POLLIN);
			else
				io_prep_pread(&cbs[i], fd, buf + i, 1, i);
			io_set_callback(&cbs[i], done_cb);
			pp = &cbs[i];
			ck_assert_int_eq(io_submit(r.ctx, 1, &pp), 1);
		}
		pthread_create(&t[0], NULL, queue_runner, &r);
		pthread_create(&t[1], NULL, queue_runner, &r);
		pthread_create(&t[2], NULL, destroyer, &r);
		pthread_join(t[2], NULL);
		ck_assert_int_eq(atomic_load(&r.destroyed_ok), 1);
		ck_assert_int_eq(io_queue_run(r.ctx), -EINVAL);
		atomic_store(&r.stop, 1);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		ck_assert_int_eq(atomic_load(&r.bad), 0);
		pthread_barrier_destroy(&r.go);
	}
	test_hang_guard(NULL, 0);
	close(p[0]);
	close(p[1]);
	close(fd);
}
END_TEST

/* --- a handle reaped across destroy and re-creation ------------------ */

#define REUSE_K		128
#define REUSE_GENS	150

struct reuse {
	io_context_t first;
	_Atomic unsigned char seen[REUSE_GENS][REUSE_K];
	_Atomic long delivered[REUSE_GENS], dups, bad;
	_Atomic int stop;
};

static void reuse_take(struct reuse *u, const struct io_event *ev, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uintptr_t d = (uintptr_t)ev[i].data;
		unsigned g = (unsigned)(d / REUSE_K), k = (unsigned)(d % REUSE_K);

		if (g >= REUSE_GENS) {
			atomic_fetch_add(&u->bad, 1);
			continue;
		}
		if (atomic_fetch_add(&u->seen[g][k], 1))
			atomic_fetch_add(&u->dups, 1);
		atomic_fetch_add(&u->delivered[g], 1);
	}
}

/* Keeps reaping the first handle value, blocking briefly: once the kernel
 * hands that address to a new context, these are reaps of the new one. */
static void *reap_first_handle(void *arg)
{
	struct reuse *u = arg;
	struct io_event ev[REUSE_K];
	struct timespec ts = { 0, 2000000 };

	while (!atomic_load(&u->stop)) {
		int r = io_getevents(u->first, REUSE_K, REUSE_K, ev, &ts);

		if (r > 0)
			reuse_take(u, ev, r);
	}
	return NULL;
}

/*
 * The owner destroys and re-creates its context over and over (the kernel
 * usually hands back the same address) and reaps each generation from the
 * ring, while another thread keeps reaping the first handle value.  Every
 * completion must reach exactly one of them: the stock library, a plain
 * wrapper, never delivers one twice.
 */
START_TEST(a_handle_reaped_across_re_creation_never_duplicates)
{
	static struct reuse u;
	struct iocb cbs[REUSE_K], *ptrs[REUSE_K];
	struct io_event ev[REUSE_K];
	struct timespec zero = { 0, 0 };
	unsigned char *buf = malloc(REUSE_K);
	io_context_t ctx = NULL;
	pthread_t t;
	int g, i, fd = test_tmpfile(4096);

	test_hang_guard("a_handle_reaped_across_re_creation_never_duplicates", 90);
	memset(&u, 0, sizeof(u));
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(io_setup(REUSE_K, &ctx), 0);
	u.first = ctx;
	ck_assert_int_eq(pthread_create(&t, NULL, reap_first_handle, &u), 0);
	for (g = 0; g < REUSE_GENS; g++) {
		int spins;

		for (i = 0; i < REUSE_K; i++) {
			io_prep_pread(&cbs[i], fd, buf + i, 1, i);
			cbs[i].data = (void *)(uintptr_t)(g * REUSE_K + i);
			ptrs[i] = &cbs[i];
		}
		ck_assert_int_eq(io_submit(ctx, REUSE_K, ptrs), REUSE_K);
		/* Drain what this thread can; the other may take some. */
		for (spins = 0; spins < 20000 &&
				atomic_load(&u.delivered[g]) < REUSE_K; spins++) {
			int r = g & 1 ? io_reap(ctx, REUSE_K, ev) :
					io_getevents(ctx, 0, REUSE_K, ev, &zero);

			if (r > 0)
				reuse_take(&u, ev, r);
		}
		ck_assert_int_eq(io_destroy(ctx), 0);
		ctx = NULL;
		ck_assert_int_eq(io_setup(REUSE_K, &ctx), 0);
	}
	atomic_store(&u.stop, 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(io_destroy(ctx), 0);
	{
		long bad = atomic_load(&u.bad), dups = atomic_load(&u.dups);

		ck_assert_msg(bad == 0, "%ld events with a foreign tag", bad);
		ck_assert_msg(dups == 0, "%ld events delivered twice", dups);
	}
	test_hang_guard(NULL, 0);
	free(buf);
	close(fd);
}
END_TEST

/* --- a fork that runs no atfork handler -------------------------------- */

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
# define HAVE__FORK 1
extern pid_t _Fork(void);
#endif

/*
 * _Fork (async-signal-safe, POSIX 2024) runs no pthread_atfork handler,
 * so the library cannot forget its contexts there the usual way.  The
 * child shares the parent's ring pages: a reap of the parent's handle
 * must answer -EINVAL, as the kernel does, and leave the parent's
 * completion where it is.
 */
START_TEST(a_child_of__Fork_never_takes_the_parents_completions)
{
#ifdef HAVE__FORK
	io_context_t ctx = NULL;
	struct iocb cb, *p = &cb;
	struct io_event ev[2];
	struct timespec zero = { 0, 0 };
	unsigned char byte;
	int fd = test_tmpfile(4096), st;
	pid_t pid;

	ck_assert_int_eq(io_setup(8, &ctx), 0);
	io_prep_pread(&cb, fd, &byte, 1, 0);
	cb.data = (void *)(uintptr_t)77;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	pid = _Fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(io_getevents(ctx, 0, 2, ev, &zero) == -EINVAL ? 0 : 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "the child's reap of the parent's context did not answer -EINVAL");
	ck_assert_int_eq(io_getevents(ctx, 1, 2, ev, NULL), 1);
	ck_assert_int_eq((uintptr_t)ev[0].data, 77);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
#else
	test_skip("the C library has no _Fork");
#endif
}
END_TEST

/* --- real-time priorities on one CPU ---------------------------------- */

struct rt {
	io_context_t ctx;
	int cpu, prio;
	_Atomic int stop, started, perm;
	long rounds;
};

/* Pin the calling thread to cpu at SCHED_FIFO prio: 0, or the error. */
static int go_realtime(int cpu, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		return -1;
	return pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

/* The low-priority thread: reaps the (empty) ring without pause, so it
 * holds the reap lock a good part of the time it runs. */
static void *low_reaper(void *arg)
{
	struct rt *rt = arg;
	struct io_event ev[4];
	struct timespec zero = { 0, 0 };

	if (go_realtime(rt->cpu, rt->prio)) {
		atomic_store(&rt->perm, 1);
		atomic_store(&rt->started, 1);
		return NULL;
	}
	atomic_store(&rt->started, 1);
	while (!atomic_load_explicit(&rt->stop, memory_order_relaxed))
		io_getevents(rt->ctx, 0, 4, ev, &zero);
	return NULL;
}

/* The high-priority thread: wakes often (so it often preempts the low
 * one while it holds the lock) and reaps too. */
static void *high_reaper(void *arg)
{
	struct rt *rt = arg;
	struct io_event ev[4];
	struct timespec zero = { 0, 0 }, nap = { 0, 20000 };
	long i;

	if (go_realtime(rt->cpu, rt->prio + 1)) {
		atomic_store(&rt->perm, 1);
		return NULL;
	}
	for (i = 0; i < rt->rounds; i++) {
		nanosleep(&nap, NULL);
		ck_assert_int_ge(io_getevents(rt->ctx, 0, 4, ev, &zero), 0);
	}
	return NULL;
}

static int realtime_unavailable(void)
{
	if (test_under_valgrind()) {
		test_skip("under valgrind: its scheduler runs one "
				"thread at a time, whatever the priorities");
		return 1;
	}
	return 0;
}

START_TEST(sched_fifo_reapers_on_one_cpu_make_progress)
{
	struct rt rt;
	pthread_t lo, hi;

	if (realtime_unavailable())
		return;
	test_hang_guard("sched_fifo_reapers_on_one_cpu_make_progress", 60);
	memset(&rt, 0, sizeof(rt));
	rt.cpu = sched_getcpu() < 0 ? 0 : sched_getcpu();
	rt.prio = 10;
	rt.rounds = 3000;
	ck_assert_int_eq(io_setup(8, &rt.ctx), 0);
	ck_assert_int_eq(pthread_create(&lo, NULL, low_reaper, &rt), 0);
	while (!atomic_load(&rt.started))
		usleep(100);
	ck_assert_int_eq(pthread_create(&hi, NULL, high_reaper, &rt), 0);
	pthread_join(hi, NULL);
	atomic_store(&rt.stop, 1);
	pthread_join(lo, NULL);
	ck_assert_int_eq(io_destroy(rt.ctx), 0);
	test_hang_guard(NULL, 0);
	if (atomic_load(&rt.perm))
		test_skip("SCHED_FIFO not permitted here");
}
END_TEST

struct rt_setup {
	io_context_t old;
	int cpu;
	_Atomic int perm;
	long setup_ret;
};

static void *high_setup(void *arg)
{
	struct rt_setup *s = arg;
	io_context_t fresh = NULL;

	if (go_realtime(s->cpu, 20)) {
		atomic_store(&s->perm, 1);
		return NULL;
	}
	usleep(2000);	/* let the destroy reach the kernel's wait */
	s->setup_ret = io_setup(8, &fresh);
	if (s->setup_ret == 0)
		io_destroy(fresh);
	return NULL;
}

/*
 * A low-priority thread destroys a context whose poll keeps the kernel
 * waiting; a high-priority thread on the same CPU calls io_setup meanwhile
 * and is usually handed the old ring's address.  io_setup must not wait
 * for the destroyer (which cannot run while the high thread spins).
 */
START_TEST(sched_fifo_setup_beside_a_slow_destroy_returns)
{
	int p[2], round;

	if (realtime_unavailable())
		return;
	test_hang_guard("sched_fifo_setup_beside_a_slow_destroy_returns", 60);
	ck_assert_int_eq(pipe(p), 0);
	for (round = 0; round < 5; round++) {
		struct rt_setup s;
		struct iocb pcb, *pp = &pcb;
		pthread_t hi;
		int cpu = sched_getcpu() < 0 ? 0 : sched_getcpu();

		memset(&s, 0, sizeof(s));
		s.cpu = cpu;
		if (go_realtime(cpu, 10)) {
			test_skip("SCHED_FIFO not permitted here");
			break;
		}
		ck_assert_int_eq(io_setup(8, &s.old), 0);
		io_prep_poll(&pcb, p[0], POLLIN);
		ck_assert_int_eq(io_submit(s.old, 1, &pp), 1);
		/* The high thread starts while we are inside io_destroy. */
		ck_assert_int_eq(pthread_create(&hi, NULL, high_setup, &s), 0);
		ck_assert_int_eq(io_destroy(s.old), 0);
		pthread_join(hi, NULL);
		if (!atomic_load(&s.perm))
			ck_assert_int_eq(s.setup_ret, 0);
		{
			struct sched_param sp = { .sched_priority = 0 };

			pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
		}
	}
	test_hang_guard(NULL, 0);
	close(p[0]);
	close(p[1]);
}
END_TEST

/*
 * A signal handler that reaps the context its own thread is reaping, at
 * every instruction of that reap (single-stepped, see test_single_step):
 * libaio(7) promises that it gets its events, each once, everywhere but
 * inside the user-space copy, where it waits for ever (the copy holds the
 * context's lock, and the thread that would release it is the one the
 * handler interrupted).  Taking that lock with plain stores in a
 * single-threaded process must not change either: a handler that runs
 * between the lock's load and its store does a whole reap of its own,
 * and the interrupted one must then neither repeat nor lose its events,
 * nor leave the context locked.  The same test with another thread
 * created first checks the compare-and-swap the same way.
 */
#define NEST_EVENTS 2048
/* Instructions: a backstop.  A reap that waits for the copy is given up
 * at its first futex wait; one that does not wait takes a hundred or so,
 * some thousands with sanitizers. */
#define NEST_LIMIT 1000000
#define NEST_BEFORE_COPY 1000

static struct nest_state {
	io_context_t ctx;
	int seen[NEST_EVENTS];
	int outer_got, outer_done;
	struct io_event outer_ev;
	/* Nested reaps start at step from: NEST_BEFORE_COPY before the
	 * step that saw the copy done (every step in an optimised build). */
	unsigned long copied, from, tried;
	unsigned long waits, waits_after, first_wait, last_wait;
} nest;

static void nest_tally(const struct io_event *ev, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uintptr_t tag = (uintptr_t)ev[i].data;

		if (tag >= NEST_EVENTS)
			abort();
		nest.seen[tag]++;
	}
}

static void nest_inner(void *arg)
{
	struct io_event ev;
	int r = io_reap(nest.ctx, 1, &ev);

	(void)arg;
	if (r < 0)
		abort();
	nest_tally(&ev, r);
}

/* A pass that only finds the step at which the outer reap's event is
 * written (the copy, under the lock). */
static void nest_find_copy(unsigned long step, void *arg)
{
	(void)arg;
	if (!nest.copied && nest.outer_ev.obj)
		nest.copied = step;
}

static void nest_at(unsigned long step, void *arg)
{
	(void)arg;
	/* Before from, or inside the copy once a wait showed the lock
	 * held (every step there waits, at hundreds of steps each). */
	if (step < nest.from ||
	    (nest.waits && step <= nest.copied && nest.last_wait < step))
		return;
	nest.tried++;
	if (test_step_nested(nest_inner, NULL, NEST_LIMIT))
		return;
	if (!nest.waits++)
		nest.first_wait = step;
	nest.last_wait = step;
	nest.waits_after += nest.outer_done;
}

static void nest_outer(void *arg)
{
	static const struct timespec zero = { 0, 0 };

	(void)arg;
	memset(&nest.outer_ev, 0, sizeof(nest.outer_ev));
	nest.outer_got = io_getevents(nest.ctx, 1, 1, &nest.outer_ev,
				      (struct timespec *)&zero);
	if (nest.outer_got > 0)
		nest_tally(&nest.outer_ev, nest.outer_got);
	nest.outer_done = 1;
}

static void *idle_thread(void *arg)
{
	return arg;
}

/* The context and its NEST_EVENTS reads, in the ring before any reap;
 * threads: a thread has lived first, so the C library no longer counts
 * the program as single-threaded. */
static void nest_start(int threads, int fd, struct iocb *cbs,
		       unsigned char *buf, struct io_event *ev)
{
	int i;

	if (threads) {
		pthread_t t;

		ck_assert_int_eq(pthread_create(&t, NULL, idle_thread, NULL),
				 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
	}
	memset(&nest, 0, sizeof(nest));
	ck_assert_int_eq(io_setup(NEST_EVENTS + 64, &nest.ctx), 0);
	/* Its reads must be in the ring when the reaps meet them: a read
	 * handed to a worker (the async mode) arrives later. */
	ck_assert_int_ge(io_set_async(nest.ctx, 0), 0);
	for (i = 0; i < NEST_EVENTS; i++) {
		struct iocb *p = &cbs[i];

		io_prep_pread(p, fd, &buf[i], 1, 0);
		p->data = (void *)(uintptr_t)i;
		ck_assert_int_eq(io_submit(nest.ctx, 1, &p), 1);
	}
	/* Bind both calls' symbols first: the dynamic linker's steps would
	 * cost a nested reap each (with sanitizers, hundreds of steps each). */
	ck_assert_int_eq(io_reap(nest.ctx, 1, ev), 1);
	nest_tally(ev, 1);
	ck_assert_int_eq(io_getevents(nest.ctx, 1, 1, ev, NULL), 1);
	nest_tally(ev, 1);
}

/* How the stepped reaps met the lock. */
static void nest_check_lock(int threads)
{
#ifdef HAVE_SYS_SINGLE_THREADED_H
	/* Which way the library took its lock. */
	ck_assert_int_eq(__libc_single_threaded, !threads);
#else
	(void)threads;
#endif
	ck_assert_int_ge(nest.outer_got, 0);
	ck_assert_int_eq(nest.waits_after, 0);
	if (ring_mode()) {
		/* The copy was found, and it is one unbroken run of steps:
		 * the lock was held once, and let go for good. */
		ck_assert_uint_gt(nest.waits, 0);
		ck_assert_uint_lt(nest.first_wait, nest.copied);
		ck_assert_uint_ge(nest.last_wait, nest.copied);
		ck_assert_uint_eq(nest.last_wait - nest.copied + 1, nest.waits);
		/* The steps tried began well before the lock was taken, so
		 * the taking itself was interrupted at every instruction. */
		ck_assert_uint_gt(nest.first_wait, nest.from + 16);
	} else {
		ck_assert_uint_eq(nest.waits, 0);
	}
}

/* The rest reaped: every event delivered exactly once. */
static void nest_check_each_once(struct io_event *ev, long steps)
{
	int i, r;

	while ((r = io_reap(nest.ctx, 64, ev)) > 0)
		nest_tally(ev, r);
	ck_assert_int_eq(r, 0);
	for (i = 0; i < NEST_EVENTS; i++)
		ck_assert_msg(nest.seen[i] == 1, "event %d delivered %d times "
			      "(%ld steps)", i, nest.seen[i], steps);
}

/* Not locked, and still the ring reaper's: one more read is taken with
 * no system call. */
static void nest_check_still_reaped(int fd, struct iocb *cbs,
				    unsigned char *buf, struct io_event *ev)
{
	unsigned long long calls;
	struct iocb *p = &cbs[0];

	ck_assert_int_eq(io_reaper_active(nest.ctx), ring_mode());
	io_prep_pread(p, fd, &buf[0], 1, 0);
	p->data = (void *)(uintptr_t)0;
	ck_assert_int_eq(io_submit(nest.ctx, 1, &p), 1);
	calls = io_syscall_count();
	ck_assert_int_eq(io_reap(nest.ctx, 1, ev), 1);
	if (ring_mode())
		ck_assert_uint_eq(io_syscall_count(), calls);
}

static void handler_reaps_at_every_instruction(int threads)
{
	static struct iocb cbs[NEST_EVENTS];
	static unsigned char buf[NEST_EVENTS];
	int fd = test_tmpfile(16);
	struct io_event ev[64];
	long steps;

	test_hang_guard(__func__, 110);
	nest_start(threads, fd, cbs, buf, ev);
	/* Stepping a nested reap at every step costs steps times its own
	 * steps, too much with sanitizers: find the copy first. */
	steps = test_single_step(nest_outer, nest_find_copy, NULL);
	if (steps > 0 && ring_mode())
		ck_assert_uint_gt(nest.copied, 0);
	nest.from = nest.copied > NEST_BEFORE_COPY ?
			    nest.copied - NEST_BEFORE_COPY : 1;
	nest.outer_done = 0;
	if (steps > 0)
		steps = test_single_step(nest_outer, nest_at, NULL);
	if (steps < 0) {
		/* Only where there is no trap flag to use. */
		ck_assert_msg(test_no_trap_flag(), "no single-stepping here");
		ck_assert_int_eq(io_destroy(nest.ctx), 0);
		close(fd);
		return;
	}
	nest_check_lock(threads);
	nest_check_each_once(ev, steps);
	nest_check_still_reaped(fd, cbs, buf, ev);
	ck_assert_int_eq(io_destroy(nest.ctx), 0);
	close(fd);
	test_hang_guard(NULL, 0);
}

START_TEST(a_handler_reaping_its_own_threads_context_one_thread)
{
	handler_reaps_at_every_instruction(0);
}
END_TEST

START_TEST(a_handler_reaping_its_own_threads_context_threaded)
{
	handler_reaps_at_every_instruction(1);
}
END_TEST

/* One case per test, so that CK_RUN_CASE=NAME runs one of them alone. */
#define ADD(s, fn) do {						\
		TCase *t_ = tcase_create(#fn);			\
		tcase_set_timeout(t_, 120);			\
		tcase_add_test(t_, fn);				\
		suite_add_tcase(s, t_);				\
	} while (0)

Suite *test_suite(void)
{
	Suite *s = suite_create("edges");

	ADD(s, siglongjmp_out_of_a_blocking_reap_wedges_nothing);
	ADD(s, asynchronous_cancel_of_a_blocking_reap_wedges_nothing);
	ADD(s, destroy_does_not_wait_for_a_handler_that_interrupted_a_reap);
	ADD(s, two_destroyers_beside_reapers_leave_nothing_alive);
	ADD(s, io_queue_run_beside_destroy_gets_einval);
	ADD(s, a_handle_reaped_across_re_creation_never_duplicates);
	ADD(s, a_child_of__Fork_never_takes_the_parents_completions);
	ADD(s, sched_fifo_reapers_on_one_cpu_make_progress);
	ADD(s, sched_fifo_setup_beside_a_slow_destroy_returns);
	ADD(s, a_handler_reaping_its_own_threads_context_one_thread);
	ADD(s, a_handler_reaping_its_own_threads_context_threaded);
	return s;
}
