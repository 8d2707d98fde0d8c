/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Load and faults.
 *
 * soak: for LIBAIO_SOAK_SECONDS (default 10; make check runs it in each
 * library mode), epochs of: io_setup; submitter threads writing tagged
 * blocks to a temporary file and reading each back once its write has
 * completed; a poll thread arming polls on eventfds and then either
 * firing (write to the eventfd) or cancelling them; reaper threads in
 * every reaping mode at once; then a drain and io_destroy, and again with
 * a new context.  Every submission uses an iocb of its own (never reused
 * within an epoch), so each completion can be checked exactly once by
 * its tag: a second completion of the same iocb, or one of an iocb that
 * was never submitted, fails the test, and so does a completion missing
 * at the end of an epoch.  Every byte written is read back and compared.
 *   Epochs alternate between tags in iocb->data, reaped by io_getevents
 *   (blocking and zero-timeout), io_pgetevents and io_reap, and callbacks
 *   in iocb->data (io_queue_run calls them) reaped by io_queue_run and by
 *   a blocking io_getevents that calls them itself.
 *
 * aio-max-nr: io_setup at the system-wide limit gives -EAGAIN, and the
 * library works normally once there is room again.
 *
 * destroy wakes waiters: io_destroy while other threads are blocked in
 * io_getevents / io_pgetevents makes them return -EINVAL.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test-common.h"

#define BLOCK		512
#define NSUBMIT		3		/* file submitter threads */
#define BLOCKS_PER	16		/* blocks each submitter owns */
#define NPOLL		8		/* eventfds the poll thread arms */
#define NREAP		4
#define POOL		(1 << 15)	/* iocbs per epoch */
#define EPOCH_NS	400000000LL

enum { OP_WRITE = 1, OP_READ, OP_POLL };
enum { B_IDLE, B_WRITING, B_WRITTEN, B_READING };

struct op {
	struct iocb cb;
	_Atomic int state;	/* 0 free, 1 submitted, 2 completed */
	int kind, index;	/* block or eventfd */
	unsigned version;
};

struct block {
	_Atomic int state;
	unsigned version;
	unsigned char wbuf[BLOCK] __attribute__((aligned(64)));
	unsigned char rbuf[BLOCK];
};

struct pollfd_slot {
	int fd;
	_Atomic int armed;	/* an op is pending on it */
	_Atomic int op;		/* its pool index */
	_Atomic int fired;
};

static struct op *pool;
static _Atomic int pool_next;
static struct block blocks[NSUBMIT * BLOCKS_PER];
static struct pollfd_slot polls[NPOLL];
static io_context_t ctx;
static int file_fd;
static int callbacks_epoch;
static _Atomic int stop_submit, stop_reap;
static _Atomic long submitted, completed, bytes_checked, cancels, errors;
static _Atomic long total_completions;
static char first_error[200];
static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;

static void soak_fail(const char *what, long a, long b)
{
	pthread_mutex_lock(&err_lock);
	if (!errors)
		snprintf(first_error, sizeof(first_error), "%s (%ld, %ld)", what, a, b);
	atomic_fetch_add(&errors, 1);
	pthread_mutex_unlock(&err_lock);
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static unsigned char pattern(int block, unsigned version, int i)
{
	return (unsigned char)(block * 31 + version * 7 + i * 13 + (i >> 5));
}

static void on_completion(io_context_t c, struct iocb *cb, long res, long res2);

/* A fresh iocb from the pool: -1 when the epoch has used them all. */
static int new_op(int kind, int index, unsigned version)
{
	int i = atomic_fetch_add(&pool_next, 1);
	struct op *o;

	if (i >= POOL)
		return -1;
	o = &pool[i];
	o->kind = kind;
	o->index = index;
	o->version = version;
	return i;
}

static int submit_op(int i)
{
	struct iocb *p = &pool[i].cb;
	int r;

	atomic_store(&pool[i].state, 1);
	atomic_fetch_add(&submitted, 1);
	while ((r = io_submit(ctx, 1, &p)) == -EAGAIN)
		sched_yield();	/* ring full: the reapers will make room */
	if (r != 1) {
		atomic_store(&pool[i].state, 0);
		atomic_fetch_sub(&submitted, 1);
		soak_fail("io_submit", r, pool[i].kind);
	}
	return r;
}

static void check_op(int i, long res)
{
	struct op *o = &pool[i];
	int expected = 1;

	if (!atomic_compare_exchange_strong(&o->state, &expected, 2)) {
		soak_fail(expected == 2 ? "completion delivered twice" :
				     "completion of an iocb never submitted", i,
		     expected);
		return;
	}
	switch (o->kind) {
	case OP_WRITE: {
		struct block *b = &blocks[o->index];

		if (res != BLOCK)
			soak_fail("write result", res, o->index);
		atomic_store(&b->state, B_WRITTEN);
		break;
	}
	case OP_READ: {
		struct block *b = &blocks[o->index];
		int k;

		if (res != BLOCK)
			soak_fail("read result", res, o->index);
		for (k = 0; k < BLOCK; k++)
			if (b->rbuf[k] != pattern(o->index, o->version, k)) {
				soak_fail("byte read back differs", o->index, k);
				break;
			}
		atomic_fetch_add(&bytes_checked, BLOCK);
		atomic_store(&b->state, B_IDLE);
		break;
	}
	case OP_POLL: {
		struct pollfd_slot *s = &polls[o->index];
		uint64_t v;

		/* Fired: POLLIN (maybe with other bits); cancelled: 0. */
		if (res != 0 && !(res & POLLIN))
			soak_fail("poll result", res, o->index);
		if (read(s->fd, &v, sizeof(v)) < 0) {
			/* nonblocking: nothing to reset */
		}
		atomic_store(&s->armed, 0);
		break;
	}
	default:
		soak_fail("unknown op kind", o->kind, i);
	}
	atomic_fetch_add(&completed, 1);
}

static void on_completion(io_context_t c, struct iocb *cb, long res, long res2)
{
	struct op *o = (struct op *)cb;
	long i = o - pool;

	(void)c; (void)res2;
	if (i < 0 || i >= POOL || &pool[i].cb != cb) {
		soak_fail("callback for a foreign iocb", i, 0);
		return;
	}
	check_op((int)i, res);
}

static void handle(const struct io_event *ev, int n)
{
	int k;

	for (k = 0; k < n; k++) {
		if (callbacks_epoch) {
			on_completion(ctx, ev[k].obj, (long)ev[k].res, (long)ev[k].res2);
		} else {
			uintptr_t tag = (uintptr_t)ev[k].data;

			if (tag == 0 || tag > POOL || ev[k].obj != &pool[tag - 1].cb) {
				soak_fail("event with a bad tag", (long)tag, 0);
				continue;
			}
			check_op((int)tag - 1, (long)ev[k].res);
		}
	}
}

static void *submitter(void *arg)
{
	int t = (int)(intptr_t)arg, j;

	while (!atomic_load(&stop_submit)) {
		for (j = 0; j < BLOCKS_PER && !atomic_load(&stop_submit); j++) {
			int bi = t * BLOCKS_PER + j, i, k;
			struct block *b = &blocks[bi];
			int st = atomic_load(&b->state);

			if (st == B_IDLE) {
				b->version++;
				for (k = 0; k < BLOCK; k++)
					b->wbuf[k] = pattern(bi, b->version, k);
				if ((i = new_op(OP_WRITE, bi, b->version)) < 0)
					return NULL;
				io_prep_pwrite(&pool[i].cb, file_fd, b->wbuf, BLOCK,
					       (long long)bi * BLOCK);
				if (callbacks_epoch)
					io_set_callback(&pool[i].cb, on_completion);
				else
					pool[i].cb.data = (void *)(uintptr_t)(i + 1);
				atomic_store(&b->state, B_WRITING);
				if (submit_op(i) != 1)
					return NULL;
			} else if (st == B_WRITTEN) {
				memset(b->rbuf, 0, BLOCK);
				if ((i = new_op(OP_READ, bi, b->version)) < 0)
					return NULL;
				io_prep_pread(&pool[i].cb, file_fd, b->rbuf, BLOCK,
					      (long long)bi * BLOCK);
				if (callbacks_epoch)
					io_set_callback(&pool[i].cb, on_completion);
				else
					pool[i].cb.data = (void *)(uintptr_t)(i + 1);
				atomic_store(&b->state, B_READING);
				if (submit_op(i) != 1)
					return NULL;
			}
		}
		sched_yield();
	}
	return NULL;
}

static void cancel_poll(struct pollfd_slot *s)
{
	int i = atomic_load(&s->op);
	struct io_event res;
	int r = io_cancel(ctx, &pool[i].cb, &res);

	/* Accepted (the completion, res 0, comes through the ring), or it
	 * had completed already. */
	if (r == -EINPROGRESS || r == 0)
		atomic_fetch_add(&cancels, 1);
	else if (r != -EINVAL && r != -EAGAIN)
		soak_fail("io_cancel", r, i);
}

static void *poller(void *arg)
{
	unsigned seed = 12345;

	(void)arg;
	while (!atomic_load(&stop_submit)) {
		int k;

		for (k = 0; k < NPOLL; k++) {
			struct pollfd_slot *s = &polls[k];
			int i;

			seed = seed * 1103515245u + 12345u;
			if (!atomic_load(&s->armed)) {
				if ((i = new_op(OP_POLL, k, 0)) < 0)
					return NULL;
				io_prep_poll(&pool[i].cb, s->fd, POLLIN);
				if (callbacks_epoch)
					io_set_callback(&pool[i].cb, on_completion);
				else
					pool[i].cb.data = (void *)(uintptr_t)(i + 1);
				atomic_store(&s->op, i);
				atomic_store(&s->armed, 1);
				if (submit_op(i) != 1)
					return NULL;
			} else if ((seed >> 16) % 3 == 0) {
				uint64_t one = 1;

				if (write(s->fd, &one, sizeof(one)) != sizeof(one))
					soak_fail("eventfd write", k, 0);
			} else if ((seed >> 16) % 3 == 1) {
				cancel_poll(s);
			}
		}
		usleep(200);
	}
	return NULL;
}

static void *reaper(void *arg)
{
	int mode = (int)(intptr_t)arg;
	struct io_event ev[16];
	struct timespec zero = { 0, 0 }, wait = { 0, 20000000 };
	sigset_t mask;
	int n;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	while (!atomic_load(&stop_reap)) {
		if (callbacks_epoch) {
			if (mode % 2 == 0) {
				n = io_queue_run(ctx);
				if (n < 0)
					soak_fail("io_queue_run", n, mode);
				sched_yield();
			} else {
				n = io_getevents(ctx, 1, 16, ev, &wait);
				if (n > 0)
					handle(ev, n);
				else if (n < 0)
					soak_fail("io_getevents (callbacks)", n, mode);
			}
			continue;
		}
		switch (mode) {
		case 0:
			n = io_getevents(ctx, 1, 16, ev, &wait);
			break;
		case 1:
			n = io_getevents(ctx, 0, 16, ev, &zero);
			break;
		case 2:
			n = io_pgetevents(ctx, 1, 8, ev, &wait, &mask);
			break;
		default:
			n = io_reap(ctx, 16, ev);
			break;
		}
		if (n < 0) {
			soak_fail("reap", n, mode);
			continue;
		}
		handle(ev, n);
		if (n == 0 && (mode == 1 || mode == 3))
			sched_yield();
	}
	return NULL;
}

static void run_epoch(void)
{
	pthread_t sub[NSUBMIT], rp[NREAP], pl;
	long long deadline;
	int k;

	memset(pool, 0, sizeof(struct op) * POOL);
	atomic_store(&pool_next, 0);
	atomic_store(&submitted, 0);
	atomic_store(&completed, 0);
	atomic_store(&stop_submit, 0);
	atomic_store(&stop_reap, 0);
	for (k = 0; k < NSUBMIT * BLOCKS_PER; k++)
		atomic_store(&blocks[k].state, B_IDLE);
	for (k = 0; k < NPOLL; k++)
		atomic_store(&polls[k].armed, 0);

	ctx = NULL;
	ck_assert_int_eq(io_setup(256, &ctx), 0);
	for (k = 0; k < NREAP; k++)
		ck_assert_int_eq(pthread_create(&rp[k], NULL, reaper, (void *)(intptr_t)k), 0);
	for (k = 0; k < NSUBMIT; k++)
		ck_assert_int_eq(pthread_create(&sub[k], NULL, submitter, (void *)(intptr_t)k), 0);
	ck_assert_int_eq(pthread_create(&pl, NULL, poller, NULL), 0);

	deadline = now_ns() + EPOCH_NS;
	while (now_ns() < deadline && atomic_load(&pool_next) < POOL &&
	       !atomic_load(&errors))
		usleep(10000);
	atomic_store(&stop_submit, 1);
	for (k = 0; k < NSUBMIT; k++)
		pthread_join(sub[k], NULL);
	pthread_join(pl, NULL);

	/* Drain: cancel what is still armed, then every submission must
	 * complete (the watchdog bounds the wait, it is no timing test). */
	deadline = now_ns() + 20000000000LL;
	while (atomic_load(&completed) < atomic_load(&submitted) &&
	       now_ns() < deadline) {
		for (k = 0; k < NPOLL; k++)
			if (atomic_load(&polls[k].armed))
				cancel_poll(&polls[k]);
		usleep(2000);
	}
	atomic_store(&stop_reap, 1);
	for (k = 0; k < NREAP; k++)
		pthread_join(rp[k], NULL);
	if (atomic_load(&completed) != atomic_load(&submitted))
		soak_fail("completions missing at the end of an epoch",
		     atomic_load(&submitted) - atomic_load(&completed),
		     atomic_load(&submitted));
	total_completions += atomic_load(&completed);
	ck_assert_int_eq(io_destroy(ctx), 0);
}

START_TEST(soak)
{
	const char *env = getenv("LIBAIO_SOAK_SECONDS");
	double secs = env ? atof(env) : 10;
	long long end = now_ns() + (long long)(secs * 1e9);
	int k, epochs = 0;

	pool = calloc(POOL, sizeof(struct op));
	ck_assert_ptr_nonnull(pool);
	file_fd = test_tmpfile((size_t)NSUBMIT * BLOCKS_PER * BLOCK);
	for (k = 0; k < NPOLL; k++) {
		polls[k].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		ck_assert_int_ge(polls[k].fd, 0);
	}
	do {
		callbacks_epoch = epochs % 2;
		run_epoch();
		epochs++;
	} while (now_ns() < end && !atomic_load(&errors));

	fprintf(stderr, "soak: %d epochs, %ld completions checked exactly once, "
		"%ld bytes read back and compared, %ld polls cancelled\n",
		epochs, atomic_load(&total_completions),
		atomic_load(&bytes_checked), atomic_load(&cancels));
	if (atomic_load(&errors))
		ck_abort_msg("%ld errors, first: %s", atomic_load(&errors), first_error);
	for (k = 0; k < NPOLL; k++)
		close(polls[k].fd);
	close(file_fd);
	free(pool);
}
END_TEST

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * io_setup at fs.aio-max-nr answers EAGAIN; then, with room again, the
 * library must work normally: io_setup, a read, and its completion
 * reaped.
 *
 * By default the limit is not touched: aio-nr is system-wide, so while it
 * is at the limit every io_setup on the machine fails, other test
 * programs' and any real program's alike.  Instead a seccomp filter in a
 * child makes io_setup of one odd size answer EAGAIN, which is all the
 * library sees of the limit.  LIBAIO_TEST_AIO_LIMIT=1, on a machine of
 * one's own, reaches the real limit as well:
 *  - as root, the limit itself is lowered to the current aio-nr for three
 *    system calls (write, io_setup, write back), in a child; the parent
 *    writes the saved value back again whatever happened to the child.
 *  - otherwise a child fills the remaining room with one context (freed
 *    by the kernel however the child ends), which takes milliseconds.
 */
static const char max_path[] = "/proc/sys/fs/aio-max-nr";

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* io_setup while there is no room: -EAGAIN expected; 1 if room appeared
 * (someone released a context meanwhile: try again). */
static int setup_without_room(int lower, long saved)
{
	long nr = read_long("/proc/sys/fs/aio-nr");
	io_context_t big = NULL, one = NULL;
	int r;

	if (lower) {
		if (write_long(max_path, nr) != 0)
			return 77;
		r = io_setup(1, &one);
		write_long(max_path, saved);
	} else {
		if (saved - nr <= 0 || saved - nr > 4194304)
			return 77;
		if (io_setup((int)(saved - nr), &big) != 0)
			return 1;
		r = io_setup(1, &one);
		io_destroy(big);
	}
	if (r == 0) {
		io_destroy(one);
		return 1;
	}
	return r == -EAGAIN ? 0 : 4;
}

/* In a child that just saw io_setup fail with EAGAIN: the library works
 * as before.  Exits 0, or the step that failed. */
static void usable_after_eagain(void)
{
	io_context_t again = NULL;
	struct iocb cb, *p = &cb;
	struct io_event ev;
	unsigned char b = 0;
	int fd;

	if (io_setup(4, &again) != 0)
		_exit(5);
	fd = test_tmpfile(4096);
	io_prep_pread(&cb, fd, &b, 1, 0);
	if (io_submit(again, 1, &p) != 1)
		_exit(6);
	if (io_getevents(again, 1, 1, &ev, NULL) != 1 || ev.obj != &cb)
		_exit(7);
	if (b != test_pattern(0))
		_exit(8);
	if (io_destroy(again) != 0)
		_exit(9);
	_exit(0);
}

#define EAGAIN_NR	4093u	/* a size no other io_setup here asks for */

START_TEST(setup_at_aio_max_nr)
{
	const char *real = getenv("LIBAIO_TEST_AIO_LIMIT");
	long saved = read_long(max_path);
	int lower = geteuid() == 0, status, attempt, r = 1;
	pid_t pid;

	if (!real || strcmp(real, "1") != 0) {
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			io_context_t none = NULL;

			if (test_seccomp_setup_eagain(EAGAIN_NR) != 0)
				_exit(77);
			if (io_setup(EAGAIN_NR, &none) != -EAGAIN || none)
				_exit(4);
			usable_after_eagain();
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFEXITED(status));
		if (WEXITSTATUS(status) == 77) {
			test_skip("no seccomp filter for this architecture; "
				  "LIBAIO_TEST_AIO_LIMIT=1 tries the real limit");
			return;
		}
		ck_assert_int_eq(WEXITSTATUS(status), 0);
		fprintf(stderr, "aio-max-nr: io_setup's EAGAIN (seccomp), "
			"library usable afterwards\n");
		return;
	}
	ck_assert_int_gt(saved, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (attempt = 0; attempt < 20 && r == 1; attempt++)
			r = setup_without_room(lower, saved);
		if (r != 0)
			_exit(r == 1 ? 77 : r);
		usable_after_eagain();	/* room again */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (lower && read_long(max_path) != saved)
		write_long(max_path, saved);	/* the child died in between */
	ck_assert_int_eq(read_long(max_path), saved);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		test_skip("could not reach fs.aio-max-nr (a busy system)");
		return;
	}
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	fprintf(stderr, "aio-max-nr: io_setup at the limit gave -EAGAIN (%s), "
		"library usable afterwards\n",
		lower ? "limit lowered to aio-nr" : "room filled");
}
END_TEST

struct waiter {
	io_context_t ctx;
	int pget;
	_Atomic int started;
	int ret;
};

static void *blocked_waiter(void *arg)
{
	struct waiter *w = arg;
	struct io_event ev[2];
	sigset_t mask;

	sigemptyset(&mask);
	atomic_store(&w->started, 1);
	w->ret = w->pget ? io_pgetevents(w->ctx, 1, 2, ev, NULL, &mask)
			 : io_getevents(w->ctx, 1, 2, ev, NULL);
	return NULL;
}

/* Threads blocked with no timeout are woken by io_destroy with -EINVAL
 * (the hang guard ends the test if one is not). */
START_TEST(destroy_wakes_blocked_waiters)
{
	struct waiter w[3];
	pthread_t th[3];
	io_context_t c = NULL;
	struct iocb cb, *p = &cb;
	int pfd[2], k;

	test_hang_guard("destroy_wakes_blocked_waiters", 30);
	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_eq(io_setup(8, &c), 0);
	/* A pending poll too, so the ring is not trivially idle. */
	io_prep_poll(&cb, pfd[0], POLLIN);
	ck_assert_int_eq(io_submit(c, 1, &p), 1);
	for (k = 0; k < 3; k++) {
		w[k].ctx = c;
		w[k].pget = k == 2;
		atomic_store(&w[k].started, 0);
		w[k].ret = 12345;
		ck_assert_int_eq(pthread_create(&th[k], NULL, blocked_waiter, &w[k]), 0);
	}
	for (k = 0; k < 3; k++)
		while (!atomic_load(&w[k].started))
			usleep(1000);
	usleep(100000);		/* let them enter the kernel */
	ck_assert_int_eq(io_destroy(c), 0);
	for (k = 0; k < 3; k++) {
		pthread_join(th[k], NULL);
		ck_assert_int_eq(w[k].ret, -EINVAL);
	}
	/* And the library carries on. */
	c = NULL;
	ck_assert_int_eq(io_setup(8, &c), 0);
	ck_assert_int_eq(io_destroy(c), 0);
	test_hang_guard(NULL, 0);
	close(pfd[0]);
	close(pfd[1]);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("soak");
	TCase *t = tcase_create("soak");
	const char *env = getenv("LIBAIO_SOAK_SECONDS");

	/* The soak's own length plus the drains, with room for valgrind. */
	tcase_set_timeout(t, (env ? atof(env) : 10) * 4 + 120);
	tcase_add_test(t, soak);
	tcase_add_test(t, setup_at_aio_max_nr);
	tcase_add_test(t, destroy_wakes_blocked_waiters);
	suite_add_tcase(s, t);
	return s;
}
