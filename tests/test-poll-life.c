/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How the polls the library serves live and die with the process: the
 * threads and descriptors they cost while armed and after, and what
 * cancel, destroy, fork and the program's own clean-ups do to them.
 * A pty is refused by the kernel's aio poll in every mode, so the
 * library serves it: carried by the kernel through an epoll set where
 * the kernel has aio poll, by the helper thread where it has not (the
 * modes with LIBAIO_DISABLE=poll stand for such kernels).
 */
#include "config.h"
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <grp.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include "test-common.h"

#define GUARD_S 20		/* hang guard for every wait */

/* ThreadSanitizer's runtime must see every thread, so under it the
 * library's helper is an ordinary thread (which keeps the process alive
 * while a poll is armed), and the runtime runs a thread of its own. */
#define UNDER_TSAN TEST_UNDER_TSAN
#define FD_SEEN 1024		/* descriptors compared below this */

/* Does the kernel carry refused polls in this mode (no helper thread)? */
static int kernel_carries(void)
{
	return !test_mode_disables("poll");
}

static io_context_t new_ctx(int n)
{
	io_context_t ctx = NULL;

	ck_assert_int_eq(io_setup(n, &ctx), 0);
	return ctx;
}

static struct io_event wait_one(io_context_t ctx)
{
	struct timespec ts = { GUARD_S, 0 };
	struct io_event ev;
	int n;

	memset(&ev, 0, sizeof(ev));
	while ((n = io_getevents(ctx, 1, 1, &ev, &ts)) == -EINTR)
		;
	ck_assert_int_eq(n, 1);
	return ev;
}

static void open_pty(int *m, int *s)
{
	struct termios tio;

	*m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(*m, 0);
	ck_assert_int_eq(grantpt(*m), 0);
	ck_assert_int_eq(unlockpt(*m), 0);
	*s = open(ptsname(*m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(*s, 0);
	ck_assert_int_eq(tcgetattr(*s, &tio), 0);
	cfmakeraw(&tio);
	ck_assert_int_eq(tcsetattr(*s, TCSANOW, &tio), 0);
}

/* Which descriptors below FD_SEEN are open. */
static void fds_snapshot(unsigned char *open_fds)
{
	int fd;

	for (fd = 0; fd < FD_SEEN; fd++)
		open_fds[fd] = fcntl(fd, F_GETFD) >= 0;
}

static void expect_same_fds(const unsigned char *before, const char *when)
{
	unsigned char now[FD_SEEN];
	int fd;

	fds_snapshot(now);
	for (fd = 0; fd < FD_SEEN; fd++)
		ck_assert_msg(now[fd] == before[fd], "fd %d %s %s", fd,
			      now[fd] ? "opened" : "closed", when);
}

/*
 * A pty poll on a kernel with aio poll: no thread and no descriptor of the
 * library's while it is armed or after; its event is the program's own
 * (obj, data), res the pty's mask as the kernel gives it for a file it
 * polls (POLLIN|POLLRDNORM), and its RESFD eventfd is signalled once.
 */
START_TEST(refused_poll_costs_no_thread_or_descriptor)
{
	unsigned char fds[FD_SEEN];
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	struct io_event ev;
	uint64_t count = 0;
	int m, sl, efd, threads = test_threads_now();

	if (!kernel_carries())
		return;		/* the helper's costs: its own tests */
	/* Check runs each test in a process of its own (unless CK_FORK=no,
	 * as under valgrind): one thread, and ThreadSanitizer's, the count
	 * the program must keep. */
	if (!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no"))
		ck_assert_int_eq(threads, 1 + UNDER_TSAN);
	open_pty(&m, &sl);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ck_assert_int_ge(efd, 0);
	fds_snapshot(fds);

	io_prep_poll(&cb, m, POLLIN);
	io_set_eventfd(&cb, efd);
	cb.data = (void *)0x5eed;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	expect_same_fds(fds, "while the poll is armed");
	ck_assert_int_eq(test_threads_now(), threads);
	ck_assert_int_eq(read(efd, &count, sizeof(count)), -1);

	ck_assert_int_eq(write(sl, "x", 1), 1);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_ptr_eq(ev.data, (void *)0x5eed);
	ck_assert_uint_eq(ev.res, POLLIN | POLLRDNORM);
	ck_assert_uint_eq(ev.res2, 0);
	ck_assert_int_eq(read(efd, &count, sizeof(count)), sizeof(count));
	ck_assert_uint_eq(count, 1);
	expect_same_fds(fds, "after the completion");
	ck_assert_int_eq(test_threads_now(), threads);

	ck_assert_int_eq(io_destroy(ctx), 0);
	expect_same_fds(fds, "after io_destroy");
	ck_assert_int_eq(test_threads_now(), threads);
	close(efd);
	close(m);
	close(sl);
}
END_TEST

/* io_cancel of a served poll answers as for a native one: EINPROGRESS,
 * then an event with res 0; a second cancel finds nothing. */
START_TEST(cancel_answers_as_for_a_native_poll)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	struct io_event ev;
	int m, sl;

	open_pty(&m, &sl);
	io_prep_poll(&cb, m, POLLIN);
	cb.data = (void *)7;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	ck_assert_int_eq(io_cancel(ctx, &cb, &ev), -EINPROGRESS);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_ptr_eq(ev.data, (void *)7);
	ck_assert_uint_eq(ev.res, 0);
	ck_assert_int_eq(io_cancel(ctx, &cb, &ev), -EINVAL);
	/* Readable now: nothing more arrives for the cancelled poll. */
	ck_assert_int_eq(write(sl, "x", 1), 1);
	{
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		ck_assert_int_eq(io_getevents(ctx, 0, 1, &ev, &ts), 0);
	}
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(m);
	close(sl);
}
END_TEST

/*
 * The program closes the descriptor it polled while another descriptor of
 * the same file stays open (a dup): as with a native poll, the poll stays
 * armed and completes when the file becomes ready.
 */
START_TEST(closing_the_polled_descriptor_keeps_the_poll)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	struct io_event ev;
	int m, sl, keep;

	open_pty(&m, &sl);
	keep = dup(m);
	ck_assert_int_ge(keep, 0);
	io_prep_poll(&cb, m, POLLIN);
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	ck_assert_int_eq(close(m), 0);
	ck_assert_int_eq(write(sl, "x", 1), 1);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_uint_ne(ev.res & POLLIN, 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(keep);
	close(sl);
}
END_TEST

/*
 * io_destroy with served polls armed ends them, leaving nothing behind; a
 * fork child cannot use the parent's context, and the parent's poll still
 * completes after the child is gone.
 */
START_TEST(destroy_and_fork_leave_nothing_behind)
{
	unsigned char fds[FD_SEEN];
	io_context_t ctx = new_ctx(8), ctx2;
	struct iocb cb[3], *p;
	struct io_event ev;
	int m, sl, i, status, threads;
	pid_t pid;

	open_pty(&m, &sl);
	threads = test_threads_now();
	fds_snapshot(fds);
	for (i = 0; i < 3; i++) {
		io_prep_poll(&cb[i], m, POLLIN);
		p = &cb[i];
		ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	}
	ck_assert_int_eq(io_destroy(ctx), 0);
	if (kernel_carries()) {
		expect_same_fds(fds, "after io_destroy");
		ck_assert_int_eq(test_threads_now(), threads);
	}

	ctx2 = new_ctx(8);
	io_prep_poll(&cb[0], m, POLLIN);
	cb[0].data = (void *)42;
	p = &cb[0];
	ck_assert_int_eq(io_submit(ctx2, 1, &p), 1);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct timespec zero = { 0, 0 };

		_exit(io_getevents(ctx2, 0, 1, &ev, &zero) == -EINVAL ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(write(sl, "x", 1), 1);
	ev = wait_one(ctx2);
	ck_assert_ptr_eq(ev.obj, &cb[0]);
	ck_assert_ptr_eq(ev.data, (void *)42);
	ck_assert_int_eq(io_destroy(ctx2), 0);
	close(m);
	close(sl);
}
END_TEST

/* Run fn in a child process and expect it to pass (test_expect_child). */
static void in_child(int (*fn)(void), const char *test, const char *why)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fn());
	test_expect_child(pid, test, why);
}

/*
 * A served poll completes for whatever it asks: POLLOUT once a full pty
 * drains, POLLHUP (asked or not: always reported) once the other end
 * closes, as the kernel's own polls do.
 */
START_TEST(served_polls_complete_for_every_event)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	struct io_event ev;
	static char buf[65536];
	int m, sl, flags;
	ssize_t n;

	open_pty(&m, &sl);
	/* Fill the master's output until it would block. */
	flags = fcntl(m, F_GETFL);
	ck_assert_int_eq(fcntl(m, F_SETFL, flags | O_NONBLOCK), 0);
	while (write(m, buf, sizeof(buf)) > 0)
		;
	ck_assert_int_eq(errno, EAGAIN);
	io_prep_poll(&cb, m, POLLOUT);
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	ck_assert_int_eq(fcntl(sl, F_SETFL, fcntl(sl, F_GETFL) | O_NONBLOCK), 0);
	do
		n = read(sl, buf, sizeof(buf));
	while (n > 0);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_msg(ev.res & POLLOUT, "res %#lx", ev.res);

	/* Hang-up, asked for with a mask that has no POLLIN. */
	io_prep_poll(&cb, m, POLLPRI);
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	ck_assert_int_eq(close(sl), 0);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_msg(ev.res & POLLHUP, "res %#lx", ev.res);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(m);
}
END_TEST

/* The child of the_standard_descriptors_stay_free: 0, or the step that
 * failed.  Check's output is not touched: 1 and 2 are closed. */
static int stdio_child(void)
{
	struct timespec guard = { GUARD_S, 0 };
	io_context_t ctx = NULL;
	struct iocb cb, *p = &cb;
	struct io_event ev;
	int m, sl, fd;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) || unlockpt(m))
		return 2;
	sl = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (sl < 0 || io_setup(8, &ctx))
		return 3;
	close(0);
	close(1);
	close(2);
	io_prep_poll(&cb, m, POLLIN);
	if (io_submit(ctx, 1, &p) != 1)
		return 4;
	/* What a daemon does next: its own 0, 1 and 2. */
	for (fd = 0; fd < 3; fd++)
		if (open("/dev/null", O_RDWR) != fd)
			return 10 + fd;
	if (write(sl, "x", 1) != 1 || io_getevents(ctx, 1, 1, &ev, &guard) != 1 ||
	    ev.obj != &cb)
		return 5;
	return io_destroy(ctx) == 0 ? 0 : 6;
}

/* A daemon closes 0, 1 and 2 and opens /dev/null three times, expecting
 * them back: no descriptor of the library's may sit there, even while a
 * poll it serves is armed. */
START_TEST(the_standard_descriptors_stay_free)
{
	in_child(stdio_child, "the_standard_descriptors_stay_free", "");
}
END_TEST

/*
 * The helper thread, where there is one (kernels without aio poll), exists
 * only while a poll is armed: once the poll completes, is cancelled or its
 * context destroyed, the process is back to its own threads.  Where the
 * kernel carries the poll there is never an extra thread.
 */
START_TEST(the_helper_leaves_when_no_poll_is_armed)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	struct io_event ev;
	int m, sl, round, base = test_threads_now();
	int extra = kernel_carries() ? 0 : 1;

	open_pty(&m, &sl);
	for (round = 0; round < 3; round++) {
		io_prep_poll(&cb, m, POLLIN);
		ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
		ck_assert_int_eq(test_threads_now(), base + extra);
		if (round == 0) {	/* completes */
			char c;

			ck_assert_int_eq(write(sl, "x", 1), 1);
			ev = wait_one(ctx);
			ck_assert_int_eq(read(m, &c, 1), 1);
		} else if (round == 1) {	/* cancelled */
			ck_assert_int_eq(io_cancel(ctx, &cb, &ev), -EINPROGRESS);
			ev = wait_one(ctx);
		} else {		/* its context destroyed */
			ck_assert_int_eq(io_destroy(ctx), 0);
		}
		ck_assert_msg(test_threads_settle_to(base, GUARD_S) == base,
			      "round %d: %d threads, %d before the poll",
			      round, test_threads_now(), base);
	}
	close(m);
	close(sl);
}
END_TEST

/* Context switches of task tid so far (voluntary and not). */
static long task_switches(const char *tid)
{
	char path[64], line[128];
	long n = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			n += v;
	fclose(f);
	return n;
}

/* The id of a task that is not in known (a list of ids), or 0. */
static long new_task(const long *known, int nknown)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long found = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) && !found) {
		long t = atol(e->d_name);
		int i;

		for (i = 0; t && i < nknown && known[i] != t; i++)
			;
		if (t && i == nknown)
			found = t;
	}
	closedir(d);
	return found;
}

/*
 * While a poll waits, the helper sleeps: no periodic wake-up, which a
 * sandbox would see as system calls and a laptop as power.  Looked at
 * over a second and a half of idle (what matters is that the count does
 * not move at all, however long the look).
 */
START_TEST(the_helper_sleeps_while_a_poll_waits)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	long before[64], helper;
	char name[32];
	int m, sl, n = 0;
	DIR *d;
	struct dirent *e;

	if (kernel_carries())
		return;		/* no helper at all: the first test */
	open_pty(&m, &sl);
	d = opendir("/proc/self/task");
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) && n < 64)
		if (atol(e->d_name))
			before[n++] = atol(e->d_name);
	closedir(d);
	io_prep_poll(&cb, m, POLLIN);
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	helper = new_task(before, n);
	ck_assert_msg(helper != 0, "no helper task while a poll is armed");
	snprintf(name, sizeof(name), "%ld", helper);
	{
		long s0, s1;

		usleep(200000);		/* let it reach its wait */
		s0 = task_switches(name);
		usleep(1500000);
		s1 = task_switches(name);
		ck_assert_msg(s1 == s0, "the idle helper woke %ld times",
			      s1 - s0);
	}
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(m);
	close(sl);
}
END_TEST

/* Every task of the process: 1 if each has uid (real, effective and
 * saved) want and, besides the calling thread, no effective capability. */
static int tasks_have(unsigned want)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int ok = d != NULL;
	long self = syscall(SYS_gettid);

	while (ok && (e = readdir(d))) {
		char path[320], line[128];
		unsigned r, ef, sv;
		unsigned long long cap = 0;
		FILE *f;

		if (!atol(e->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status",
			 e->d_name);
		if (!(f = fopen(path, "r")))
			continue;	/* gone meanwhile */
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "Uid: %u %u %u", &r, &ef, &sv) == 3 &&
			    (r != want || ef != want || sv != want))
				ok = 0;
			if (sscanf(line, "CapEff: %llx", &cap) == 1 && cap &&
			    atol(e->d_name) != self && want == 0)
				ok = 0;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return ok;
}

/* The child of dropped_ids_reach_the_helper: 0, 77, or the failed step. */
static int ids_child(void)
{
	struct timespec guard = { GUARD_S, 0 };
	io_context_t ctx = NULL;
	struct iocb a, b, *p;
	struct io_event ev[2];
	int m, sl, got = 0, n;

	if (geteuid() != 0)
		return 77;
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) || unlockpt(m) ||
	    (sl = open(ptsname(m), O_RDWR | O_NOCTTY)) < 0 || io_setup(8, &ctx))
		return 2;
	io_prep_poll(&a, m, POLLIN);
	p = &a;
	if (io_submit(ctx, 1, &p) != 1)
		return 3;
	/* Root, but a helper (where there is one) holds no capability:
	 * it gives them up as it starts, so look until it has. */
	for (n = 0; !tasks_have(0); n++) {
		if (n == GUARD_S * 100)
			return 4;
		usleep(10000);
	}
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 5;
	/* The program's next call into the library: no task may keep
	 * the ids the program gave up. */
	io_prep_poll(&b, m, POLLIN);
	p = &b;
	if (io_submit(ctx, 1, &p) != 1)
		return 6;
	for (n = 0; !tasks_have(65534); n++) {
		if (n == GUARD_S * 100)
			return 7;
		usleep(10000);
	}
	if (write(sl, "x", 1) != 1)
		return 8;
	while (got < 2 && (n = io_getevents(ctx, 1, 2 - got, ev, &guard)) > 0)
		got += n;
	return got == 2 ? 0 : 9;
}

/*
 * A daemon that drops root after arming its polls: setuid and its kin
 * reach only the C library's threads, so the library's helper (no such
 * thread) must not keep root: it holds no capability from its start, and
 * gives way to one with the program's new ids at the program's next call.
 */
START_TEST(dropped_ids_reach_the_helper)
{
	in_child(ids_child, "dropped_ids_reach_the_helper", "not run as root");
}
END_TEST

/* --- the process's end ------------------------------------------------ */

static int end_pipe[2] = { -1, -1 };	/* the child's report to the test */
static io_context_t end_ctx;
static int end_m, end_sl;
/* The program's own threads in the child: its main thread and the last
 * thread it starts.  Each thread compares only its own store, so relaxed
 * accesses are enough. */
static atomic_int end_tids[2];

/* The last atexit handler to run: the process has reached exit() in a
 * program thread, which is what the test checks.  _exit, because
 * LeakSanitizer's exit check would count the runner's allocations, which
 * only the ended main thread's stack held. */
static void end_quietly(void)
{
	_exit(0);
}

/* atexit: runs in whichever thread ends the process.  Reports 'P' if
 * that thread is one of the program's own (not a helper the library
 * made) and 'R' if the poll could be reaped, one byte each, else '-'.
 * Whether a signal raised here runs its handler would say less: when
 * the main thread, having called pthread_exit, is the last to end,
 * Debian unstable's C library runs exit there with every signal blocked
 * (seen on the loong64 guest, where the main thread sometimes ended
 * after the other; Debian 12's runs it with the mask unchanged). */
static void end_report(void)
{
	struct timespec guard = { GUARD_S, 0 };
	int self = (int)syscall(SYS_gettid);
	struct io_event ev;
	char r[2];

	r[0] = self == atomic_load_explicit(&end_tids[0], memory_order_relaxed) ||
	       self == atomic_load_explicit(&end_tids[1], memory_order_relaxed) ?
	       'P' : '-';
	r[1] = write(end_sl, "x", 1) == 1 &&
	       io_getevents(end_ctx, 1, 1, &ev, &guard) == 1 ? 'R' : '-';
	if (write(end_pipe[1], r, 2) != 2)
		_exit(3);
	end_quietly();
}

/* Set by the main thread's thread-specific data destructor, which its
 * pthread_exit runs just before it counts itself out of the process. */
static atomic_int end_main_leaving;

static void main_leaving(void *arg)
{
	(void)arg;
	/* Relaxed: last_thread only waits for the store to appear. */
	atomic_store_explicit(&end_main_leaving, 1, memory_order_relaxed);
}

/* Ends after the main thread, so that this thread runs the atexit
 * handlers.  A fixed sleep alone was not enough on a loaded machine:
 * the main thread's pthread_exit unwinds its stack first, and when it
 * ended last under AddressSanitizer with no descriptor left, the
 * sanitizer's look at the main thread's stack (which reads
 * /proc/self/maps) failed with EMFILE and aborted.  So wait for the
 * main thread's destructors, then leave it the rest of its way. */
static void *last_thread(void *arg)
{
	int n;

	(void)arg;
	atomic_store_explicit(&end_tids[1], (int)syscall(SYS_gettid),
			      memory_order_relaxed);
	for (n = 0; n < GUARD_S * 1000 &&
		    !atomic_load_explicit(&end_main_leaving, memory_order_relaxed);
	     n++)
		usleep(1000);
	usleep(50000);
	return NULL;
}

static void *exits_at_once(void *arg)
{
	pthread_exit(arg);
}

enum end_case { END_PLAIN, END_NO_DESCRIPTOR_LEFT, END_RING_FULL };

/*
 * The child of the process-end tests: a poll armed (served by the
 * library), then the main thread ends with pthread_exit and the last
 * thread returns.  The process must end by itself, with status 0, as
 * with a kernel poll, running its atexit handler in a program thread.
 */
static void end_child(enum end_case how)
{
	struct iocb cb, fill, *p;
	pthread_t t;
	int i;

	atomic_store_explicit(&end_tids[0], (int)syscall(SYS_gettid),
			      memory_order_relaxed);
	if (io_setup(1, &end_ctx))
		_exit(2);
	end_m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (end_m < 0 || grantpt(end_m) || unlockpt(end_m) ||
	    (end_sl = open(ptsname(end_m), O_RDWR | O_NOCTTY)) < 0)
		_exit(2);
	if (how == END_RING_FULL) {
		/* Completions nobody reaps fill the ring: reads done
		 * inside io_submit, until it answers EAGAIN. */
		static char byte;
		int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);

		if (zero < 0)
			_exit(2);
		for (i = 0; i < 4096; i++) {
			io_prep_pread(&fill, zero, &byte, 1, 0);
			p = &fill;
			if (io_submit(end_ctx, 1, &p) != 1)
				break;
		}
		if (i == 4096)
			_exit(2);
	}
	io_prep_poll(&cb, end_m, POLLIN);
	p = &cb;
	if (how == END_RING_FULL) {
		/* Armed, and fired into a full ring (or refused for it,
		 * as the kernel may): something waits either way. */
		io_submit(end_ctx, 1, &p);
		if (write(end_sl, "y", 1) != 1)
			_exit(2);
	} else if (io_submit(end_ctx, 1, &p) != 1 || atexit(end_report)) {
		_exit(2);
	}
	if (how == END_RING_FULL && atexit(end_quietly))
		_exit(2);
	if (how == END_NO_DESCRIPTOR_LEFT) {
		/* pthread_exit loads the unwinder on first use, which
		 * takes a descriptor: load it while there is one. */
		if (pthread_create(&t, NULL, exits_at_once, NULL) ||
		    pthread_join(t, NULL))
			_exit(2);
		while (dup(end_m) >= 0)
			;
	}
	{
		pthread_key_t key;

		if (pthread_key_create(&key, main_leaving) ||
		    pthread_setspecific(key, &end_main_leaving))
			_exit(2);
	}
	if (pthread_create(&t, NULL, last_thread, NULL))
		_exit(2);
	pthread_exit(NULL);
}

static void expect_process_ends(enum end_case how)
{
	char report[2] = { 0, 0 };
	pid_t pid;

	if (UNDER_TSAN && !kernel_carries()) {
		/* a pthread helper there: see UNDER_TSAN */
		test_skip("under ThreadSanitizer, with the poll helper thread");
		return;
	}
	if (test_under_valgrind()) {
		/* The main thread's stack goes with pthread_exit, and with it
		 * the only pointers to the test runner's allocations, which
		 * memcheck then counts as the child's leaks (its own check
		 * at the end, which no atexit handler can skip). */
		test_skip("under valgrind: its leak check would count the "
			  "runner's allocations");
		return;
	}
	ck_assert_int_eq(pipe(end_pipe), 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(end_pipe[0]);
		end_child(how);
	}
	close(end_pipe[1]);
	/* It must end by itself ("did not end" otherwise), with status 0. */
	test_expect_child(pid, "the_process_ends_with_its_last_thread", "");
	if (how != END_RING_FULL) {
		ck_assert_int_eq(read(end_pipe[0], report, 2), 2);
		ck_assert_msg(report[0] == 'P',
			      "the atexit handler ran in a thread the program "
			      "did not make");
		ck_assert_msg(report[1] == 'R',
			      "the atexit handler could not reap the poll");
	}
	close(end_pipe[0]);
}

START_TEST(the_process_ends_with_its_last_thread)
{
	expect_process_ends(END_PLAIN);
	expect_process_ends(END_NO_DESCRIPTOR_LEFT);
	expect_process_ends(END_RING_FULL);
}
END_TEST

/* The child of a_sandbox_that_kills_openat_spares_the_process. */
static int sandbox_child(void)
{
	static const long deadly[] = {
#ifdef SYS_openat
		SYS_openat,
#endif
#ifdef SYS_open
		SYS_open,
#endif
	};
	struct timespec guard = { GUARD_S, 0 };
	io_context_t ctx = NULL;
	struct iocb cb, *p = &cb;
	struct io_event ev;
	int m, sl;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) || unlockpt(m))
		return 2;
	sl = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (sl < 0 || io_setup(8, &ctx))
		return 2;
	io_prep_poll(&cb, m, POLLIN);
	if (io_submit(ctx, 1, &p) != 1)
		return 3;
	if (test_seccomp_kill_in_every_thread(
		    deadly, (int)(sizeof(deadly) / sizeof(deadly[0]))) != 0)
		return 77;
	sleep(2);		/* what the program does: nothing */
	if (write(sl, "x", 1) != 1 || io_getevents(ctx, 1, 1, &ev, &guard) != 1 ||
	    ev.obj != &cb)
		return 4;
	return 0;
}

/*
 * A program that sandboxes itself once set up, with a filter that kills
 * the process on openat, must survive its armed polls: the library makes
 * no system call the program did not ask for while it waits.
 */
START_TEST(a_sandbox_that_kills_openat_spares_the_process)
{
	/* Killed by the filter: "child died of signal 31" (SIGSYS). */
	in_child(sandbox_child, "a_sandbox_that_kills_openat_spares_the_process",
		 "no seccomp filter here");
}
END_TEST

/* A pipe's poll reports as the kernel's does for a pipe turning
 * readable: POLLIN|POLLRDNORM, in every mode. */
START_TEST(a_pipe_poll_reports_as_the_kernel)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	struct io_event ev;
	int q[2];

	ck_assert_int_eq(pipe(q), 0);
	io_prep_poll(&cb, q[0], POLLIN);
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	ck_assert_int_eq(write(q[1], "x", 1), 1);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_uint_eq(ev.res, POLLIN | POLLRDNORM);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(q[0]);
	close(q[1]);
}
END_TEST

/* The child of polls_at_the_descriptor_limit: 0 or the failed step. */
static int limit_child(void)
{
	struct timespec guard = { GUARD_S, 0 };
	io_context_t ctx = NULL;
	struct iocb warm, cb, pt, *p;
	struct io_event ev;
	int q[2], m, sl, ret;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) || unlockpt(m) || pipe(q) ||
	    (sl = open(ptsname(m), O_RDWR | O_NOCTTY)) < 0 || io_setup(8, &ctx))
		return 2;
	/* The library's own descriptors, where it keeps any, exist. */
	io_prep_poll(&warm, m, POLLIN);
	p = &warm;
	if (io_submit(ctx, 1, &p) != 1)
		return 3;
	while (dup(q[0]) >= 0)
		;
	if (errno != EMFILE)
		return 4;
	/* A pipe: the kernel takes it, so must the library. */
	io_prep_poll(&cb, q[0], POLLIN);
	p = &cb;
	ret = io_submit(ctx, 1, &p);
	if (ret != 1)
		return 10 + (ret < 0 ? -ret : 0) % 80;
	/* A second pty poll: served through the helper's set, or refused
	 * with EINVAL where the kernel carries it (no set can be made). */
	io_prep_poll(&pt, m, POLLIN);
	p = &pt;
	ret = io_submit(ctx, 1, &p);
	if (ret != 1 && !(ret == -EINVAL && !test_mode_disables("poll")))
		return 5;
	if (write(q[1], "x", 1) != 1 || io_getevents(ctx, 1, 1, &ev, &guard) != 1 ||
	    ev.obj != &cb)
		return 6;
	return io_destroy(ctx) == 0 ? 0 : 7;
}

/* At RLIMIT_NOFILE a poll of a file the kernel polls itself is never
 * refused with EMFILE, which io_submit does not answer for a poll. */
START_TEST(polls_at_the_descriptor_limit)
{
	in_child(limit_child, "polls_at_the_descriptor_limit", "");
}
END_TEST

/* What a program's clean-up does to descriptors it did not open. */
enum cleanup { CLOSE_THEM, DUP2_OVER_THEM, CLEAR_CLOEXEC };

/*
 * A program cleans up descriptors it does not know while a poll with a
 * RESFD eventfd is armed: closes them, dup2s its own pipe over them, or
 * clears their close-on-exec flag.  The polled descriptor and the
 * eventfd are the program's and stay open, so the poll must complete as
 * usual and signal the eventfd.
 */
static void cleanup_keeps_the_poll(enum cleanup how)
{
	unsigned char before[FD_SEEN];
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	struct io_event ev;
	uint64_t count = 0;
	int m, sl, efd, fd, q[2];

	open_pty(&m, &sl);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(pipe2(q, O_CLOEXEC), 0);
	fds_snapshot(before);
	io_prep_poll(&cb, m, POLLIN);
	io_set_eventfd(&cb, efd);
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	for (fd = 3; fd < FD_SEEN; fd++) {
		if (before[fd] || fcntl(fd, F_GETFD) < 0)
			continue;
		if (how == CLOSE_THEM)
			close(fd);
		else if (how == DUP2_OVER_THEM)
			ck_assert_int_eq(dup2(q[0], fd), fd);
		else
			ck_assert_int_eq(fcntl(fd, F_SETFD, 0), 0);
	}
	ck_assert_int_eq(write(sl, "x", 1), 1);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_msg(ev.res & POLLIN, "case %d: res %#lx", how, ev.res);
	ck_assert_int_eq(read(efd, &count, sizeof(count)), sizeof(count));
	ck_assert_uint_eq(count, 1);
	ck_assert_int_eq(io_destroy(ctx), 0);
	/* The program's own descriptors were left alone. */
	for (fd = 3; fd < FD_SEEN; fd++)
		if (before[fd])
			ck_assert_msg(fcntl(fd, F_GETFD) >= 0, "fd %d closed", fd);
	for (fd = 3; fd < FD_SEEN; fd++)
		if (!before[fd] && fcntl(fd, F_GETFD) >= 0 && how != CLOSE_THEM)
			close(fd);
	close(q[0]);
	close(q[1]);
	close(efd);
	close(m);
	close(sl);
}

START_TEST(clean_ups_of_library_descriptors_keep_polls)
{
	cleanup_keeps_the_poll(CLOSE_THEM);
	cleanup_keeps_the_poll(DUP2_OVER_THEM);
	cleanup_keeps_the_poll(CLEAR_CLOEXEC);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("poll-life");
	TCase *t = tcase_create("poll-life");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, refused_poll_costs_no_thread_or_descriptor);
	tcase_add_test(t, cancel_answers_as_for_a_native_poll);
	tcase_add_test(t, closing_the_polled_descriptor_keeps_the_poll);
	tcase_add_test(t, destroy_and_fork_leave_nothing_behind);
	tcase_add_test(t, served_polls_complete_for_every_event);
	tcase_add_test(t, the_standard_descriptors_stay_free);
	tcase_add_test(t, the_helper_leaves_when_no_poll_is_armed);
	tcase_add_test(t, the_helper_sleeps_while_a_poll_waits);
	tcase_add_test(t, the_process_ends_with_its_last_thread);
	tcase_add_test(t, dropped_ids_reach_the_helper);
	tcase_add_test(t, a_sandbox_that_kills_openat_spares_the_process);
	tcase_add_test(t, a_pipe_poll_reports_as_the_kernel);
	tcase_add_test(t, polls_at_the_descriptor_limit);
	tcase_add_test(t, clean_ups_of_library_descriptors_keep_polls);
	suite_add_tcase(s, t);
	return s;
}
