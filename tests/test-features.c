/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel features are learnt from the program's own calls: the library
 * never makes a system call of its own to test the kernel (no context of
 * its own, no eventfd, no io_pgetevents the program did not ask for), so
 * a program under a seccomp profile that allows exactly what the stock
 * library needs runs unchanged, the first io_submit costs what the
 * system call costs, nothing is retried when fs.aio-max-nr is reached,
 * and no lock of the library can be inherited held across fork().
 *
 * Each case runs in a child of its own: a seccomp filter cannot be
 * removed, and a child killed with SIGSYS (a call the filter refuses) or
 * SIGALRM (a hang) is a named failure here.  After its filter is in
 * place, a child makes no call but the library's and _exit: no stdio, no
 * allocation, no Check assertion; it reports by its exit status.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test-common.h"

#define GUARD_S 20		/* hang guard of a whole test */
#define CHILD_S 10		/* alarm of one child */
#define BLOCK 512
#define NBLOCKS 8

/* What the stock library needs for io_submit, io_getevents, io_cancel and
 * io_destroy, plus the ways out of a process and of a signal handler. */
static const long stock_calls[] = {
	SYS_io_submit, SYS_io_getevents, SYS_io_destroy, SYS_io_cancel,
	SYS_exit, SYS_exit_group, SYS_rt_sigreturn,
};
#define N_STOCK ((int)(sizeof(stock_calls) / sizeof(stock_calls[0])))

/* _exit through the system call itself, trapping directly where we can:
 * a sanitizer's _exit and syscall() interceptors make calls of their own
 * (sigaltstack) that the filter would refuse, and so does the hook
 * AddressSanitizer puts before every call of a noreturn function, which
 * is why this one is not declared so. */
static void child_exit(int status)
{
#if defined(__x86_64__) && !defined(__ILP32__)
	__asm__ volatile("syscall" : : "a"((long)SYS_exit_group), "D"((long)status)
			 : "rcx", "r11", "memory");
#elif defined(__i386__)
	__asm__ volatile("int $0x80" : : "a"((long)SYS_exit_group), "b"((long)status)
			 : "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_exit_group;
	register long x0 __asm__("x0") = status;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8) : "memory");
#endif
	syscall(SYS_exit_group, status);
	_exit(status);
}

/*
 * Run fn in a child whose SIGALRM is left at its default action, so that
 * a hang ends it without any system call of ours, and check that it
 * exited with 0.  Statuses 1-99 name the step that failed.
 */
static void run_child(const char *what, int (*fn)(void *), void *arg)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(test_under_valgrind() ? 3 * CHILD_S : CHILD_S);
		child_exit(fn(arg));
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		ck_abort_msg("%s: child killed by signal %d (%s)", what,
			     WTERMSIG(st),
			     WTERMSIG(st) == SIGSYS ? "a system call the filter refuses" :
			     WTERMSIG(st) == SIGALRM ? "it hung" : "crash");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "%s: child failed at step %d", what, WEXITSTATUS(st));
}

/* Under valgrind the tool itself makes system calls around every one of
 * the program's: a strict filter would kill valgrind, not judge us. */
static int install_allow_only(const long *nrs, int n)
{
	if (test_under_valgrind())
		return 0;
	return test_seccomp_allow_only(nrs, n);
}

struct reads {
	int fd;
	io_context_t ctx;
	unsigned char buf[NBLOCKS][BLOCK];
	struct iocb cb[NBLOCKS];
	struct iocb *cbs[NBLOCKS];
	struct io_event ev[NBLOCKS];
};

/* The file, in the parent; the context, in the child (a fork child has
 * none of its parent's contexts). */
static void reads_prepare(struct reads *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = test_tmpfile(NBLOCKS * BLOCK);
}

/* n reads in one batch, reaped and checked; no call but the library's. */
static int reads_round(struct reads *r, int n)
{
	int i, got = 0;

	for (i = 0; i < n; i++) {
		memset(r->buf[i], 0, BLOCK);
		io_prep_pread(&r->cb[i], r->fd, r->buf[i], BLOCK,
			      (long long)i * BLOCK);
		r->cbs[i] = &r->cb[i];
	}
	if (io_submit(r->ctx, n, r->cbs) != n)
		return 0;
	while (got < n) {
		int ret = io_getevents(r->ctx, 1, NBLOCKS, r->ev + got, NULL);

		if (ret <= 0)
			return 0;
		got += ret;
	}
	for (i = 0; i < n; i++) {
		struct iocb *cb = r->ev[i].obj;
		long j = cb - r->cb;
		unsigned char *b = cb->u.c.buf;
		int k;

		if (j < 0 || j >= n || r->ev[i].res != BLOCK || r->ev[i].res2)
			return 0;
		for (k = 0; k < BLOCK; k++)
			if (b[k] != test_pattern(j * BLOCK + k))
				return 0;
	}
	return 1;
}

/* ---------------------------------------------------- no unasked calls */

/* Async submission makes calls of its own by design: it blocks signals
 * around its lock (rt_sigprocmask), maps its records (mmap), and starts
 * and wakes workers (clone, futex), none of which stock makes. */
static const char async_calls[] =
	"async submission makes system calls stock does not (rt_sigprocmask, "
	"mmap, futex, clone)";

static int forbidden_call(void *arg)
{
	(void)arg;
	if (test_seccomp_allow_only(stock_calls, N_STOCK) != 0)
		return 1;
	syscall(SYS_getpid);
	return 2;
}

/* The control: the filter the cases below use kills on any call it does
 * not list, so a call the library made of its own would be seen. */
START_TEST(the_strict_filter_kills_on_any_other_call)
{
	pid_t pid;
	int st;

	if (test_under_valgrind())
		return;		/* valgrind's own calls would trip it */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(forbidden_call(NULL));
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
		      "status %#x: the filter let getpid through", st);
}
END_TEST

static int strict_reads(void *arg)
{
	struct reads *r = arg;
	int i;

	if (io_setup(NBLOCKS, &r->ctx) != 0)	/* the program's own */
		return 10;
	if (install_allow_only(stock_calls, N_STOCK) != 0)
		return 1;
	if (!reads_round(r, 1))		/* the process's first io_submit */
		return 2;
	for (i = 0; i < 20; i++)
		if (!reads_round(r, 1 + i % NBLOCKS))
			return 3;
	if (io_destroy(r->ctx) != 0)
		return 4;
	return 0;
}

/*
 * A program that sets up its context and then allows only what the stock
 * library needs: submitting and reaping reads, and destroying the
 * context, make no other system call in any mode.  Plain reads need no
 * fallback, so even with every fallback forced the list is the same.
 */
START_TEST(plain_reads_need_only_the_system_calls_stock_makes)
{
	struct reads r;

	if (test_skip_in_async_mode(async_calls))
		return;
	test_hang_guard("plain_reads_need_only_the_system_calls_stock_makes",
			GUARD_S);
	reads_prepare(&r);
	run_child("strict seccomp", strict_reads, &r);
	close(r.fd);
	test_hang_guard(NULL, 0);
}
END_TEST

static int reads_at_aio_max_nr(void *arg)
{
	static const long setup[] = { SYS_io_setup };
	struct reads *r = arg;
	io_context_t other = NULL;
	struct iocb bad, *badp = &bad;
	int i;

	if (io_setup(NBLOCKS, &r->ctx) != 0)	/* the program's own */
		return 10;
	/* What fs.aio-max-nr answers when every context slot is taken. */
	if (test_seccomp_errno(setup, 1, EAGAIN) != 0)
		return 1;
	if (io_setup(1, &other) != -EAGAIN)
		return 2;
	/* The first io_submit while no context can be created... */
	if (!reads_round(r, 2))
		return 3;
	/* ...and every later one, successful or failing, asks nothing. */
	if (install_allow_only(stock_calls, N_STOCK) != 0)
		return 4;
	for (i = 0; i < 50; i++)
		if (!reads_round(r, 1 + i % NBLOCKS))
			return 5;
	io_prep_pread(&bad, -1, r->buf[0], BLOCK, 0);
	for (i = 0; i < 50; i++)
		if (io_submit(r->ctx, 1, &badp) != -EBADF)
			return 6;
	if (io_submit((io_context_t)r->buf, 1, &badp) != -EINVAL)
		return 7;
	if (!reads_round(r, NBLOCKS))
		return 8;
	if (io_destroy(r->ctx) != 0)
		return 9;
	return 0;
}

/*
 * At fs.aio-max-nr (simulated: io_setup answers EAGAIN, as the kernel
 * then does), io_submit on an existing context, successful or failing,
 * makes no attempt to create a context of its own, now or later.
 */
START_TEST(submit_when_no_context_can_be_created_tries_to_create_none)
{
	struct reads r;

	if (test_skip_in_async_mode(async_calls))
		return;
	test_hang_guard("submit_when_no_context_can_be_created_tries_to_create_none",
			GUARD_S);
	reads_prepare(&r);
	run_child("aio-max-nr", reads_at_aio_max_nr, &r);
	close(r.fd);
	test_hang_guard(NULL, 0);
}
END_TEST

static int features_strictly(void *arg)
{
	/* io_features() is asked for: it may ask the kernel through calls
	 * on the NULL context, never with a context of its own. */
	static const long asked[] = {
		SYS_io_submit, SYS_io_getevents,
#ifdef SYS_io_pgetevents
		SYS_io_pgetevents,
#endif
#ifdef SYS_io_pgetevents_time64
		SYS_io_pgetevents_time64,
#endif
		SYS_exit, SYS_exit_group, SYS_rt_sigreturn,
	};
	unsigned f, want_pget;

	(void)arg;
	if (install_allow_only(asked, (int)(sizeof(asked) / sizeof(asked[0]))) != 0)
		return 1;
	f = io_features();
	if (!(f & IO_FEATURE_AIO))
		return 2;
	want_pget = test_mode_disables("pgetevents") ? 0 : IO_FEATURE_PGETEVENTS;
	if ((f & IO_FEATURE_PGETEVENTS) != want_pget)
		return 3;
	if (!(f & IO_FEATURE_POLL) != !!test_mode_disables("poll"))
		return 4;
	if (!(f & IO_FEATURE_RING) != !!test_mode_disables("ring"))
		return 5;
	if (io_features() != f)
		return 6;
	return 0;
}

/* io_features() answers with no context of its own, no eventfd, and
 * the same bits as before for each mode. */
START_TEST(io_features_creates_no_context)
{
	test_hang_guard("io_features_creates_no_context", GUARD_S);
	run_child("io_features under seccomp", features_strictly, NULL);
	test_hang_guard(NULL, 0);
}
END_TEST

/* ------------------------------------------------------------------ fork */

struct round_arg {
	int fd;
	int first_submit;
};

struct forker {
	int fd;
	int first_submit;	/* the thread's first call: 1 io_submit, 0 io_features */
	io_context_t ctx;
	atomic_int stop;
};

static void *busy_thread(void *arg)
{
	struct forker *f = arg;
	unsigned char buf[BLOCK];
	struct io_event ev;
	struct iocb cb, *cbp = &cb;

	if (f->first_submit) {
		io_prep_pread(&cb, f->fd, buf, BLOCK, 0);
		if (io_submit(f->ctx, 1, &cbp) == 1)
			io_getevents(f->ctx, 1, 1, &ev, NULL);
	}
	while (!atomic_load_explicit(&f->stop, memory_order_relaxed))
		(void)io_features();
	return NULL;
}

/* The forked child: its first io_submit, io_getevents and io_features
 * complete.  Each failure is its own status; a hang ends by alarm. */
static int child_after_fork(int fd)
{
	io_context_t ctx = NULL;
	unsigned char buf[BLOCK];
	struct io_event ev;
	struct iocb cb, *cbp = &cb;
	int k;

	if (io_setup(2, &ctx) != 0)
		return 11;
	io_prep_pread(&cb, fd, buf, BLOCK, BLOCK);
	if (io_submit(ctx, 1, &cbp) != 1)
		return 12;
	if (io_getevents(ctx, 1, 1, &ev, NULL) != 1 || ev.obj != &cb ||
	    ev.res != BLOCK)
		return 13;
	for (k = 0; k < BLOCK; k++)
		if (buf[k] != test_pattern(BLOCK + k))
			return 14;
	if (!(io_features() & IO_FEATURE_AIO))
		return 15;
	if (io_destroy(ctx) != 0)
		return 16;
	return 0;
}

/*
 * One fresh process per round, so that the library's first calls happen
 * in it: one thread makes its first io_submit or io_features call and
 * keeps calling io_features while the main thread forks children at
 * spread-out moments.
 */
static int fork_round(void *arg)
{
	const struct round_arg *a = arg;
	struct forker f;
	pthread_t t;
	int i, bad = 0;

	memset(&f, 0, sizeof(f));
	f.fd = a->fd;
	f.first_submit = a->first_submit;
	if (f.first_submit && io_setup(2, &f.ctx) != 0)
		return 1;
	if (pthread_create(&t, NULL, busy_thread, &f) != 0)
		return 2;
	for (i = 0; i < 6 && !bad; i++) {
		struct timespec d = { 0, (i ? 1L << (i - 1) : 0) * 1000000L };
		pid_t pid;
		int st;

		nanosleep(&d, NULL);
		pid = fork();
		if (pid < 0) {
			bad = 3;
			break;
		}
		if (pid == 0) {
			signal(SIGALRM, SIG_DFL);
			alarm(test_under_valgrind() ? 3 * CHILD_S : CHILD_S);
			_exit(child_after_fork(f.fd));
		}
		if (waitpid(pid, &st, 0) != pid)
			bad = 4;
		else if (WIFSIGNALED(st))
			bad = WTERMSIG(st) == SIGALRM ? 5 : 6;
		else if (WEXITSTATUS(st) != 0)
			bad = WEXITSTATUS(st);
	}
	atomic_store_explicit(&f.stop, 1, memory_order_relaxed);
	pthread_join(t, NULL);
	if (f.ctx)
		io_destroy(f.ctx);
	return bad;
}

/*
 * fork() while another thread is inside the library's first calls: the
 * child's first io_submit, io_getevents and io_features all complete
 * (status 5: a child hung, as when a lock was inherited held).
 */
START_TEST(fork_during_first_calls_leaves_the_child_working)
{
	int fd = test_tmpfile(2 * BLOCK), round;
	int rounds = test_under_valgrind() ? 4 : 12;	/* each forks 7 */

	test_hang_guard("fork_during_first_calls_leaves_the_child_working",
			6 * GUARD_S);
	for (round = 0; round < rounds; round++) {
		struct round_arg arg = { fd, round & 1 };

		run_child(round & 1 ? "fork during the first io_submit" :
				      "fork during the first io_features",
			  fork_round, &arg);
	}
	close(fd);
	test_hang_guard(NULL, 0);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("features");
	TCase *t = tcase_create("features");

	tcase_set_timeout(t, 8 * GUARD_S);
	tcase_add_test(t, the_strict_filter_kills_on_any_other_call);
	tcase_add_test(t, plain_reads_need_only_the_system_calls_stock_makes);
	tcase_add_test(t, submit_when_no_context_can_be_created_tries_to_create_none);
	tcase_add_test(t, io_features_creates_no_context);
	tcase_add_test(t, fork_during_first_calls_leaves_the_child_working);
	suite_add_tcase(s, t);
	return s;
}
