/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * io_pgetevents: the kernel's call and the library's emulation (with
 * LIBAIO_DISABLE=pgetevents, or when a seccomp filter makes the call
 * answer ENOSYS).  The same bodies run in every mode.  Where one signal
 * per call is the point (no_lost_wakeup_under_stress), one is sent; the
 * other waits are signalled repeatedly until they return, and generous
 * timeouts are hang guards only.
 */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test-common.h"

#define GUARD_S 20

static _Atomic int handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void install(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	handled = 0;
}

static void block_usr1(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
}

static int usr1_blocked(void)
{
	sigset_t cur;

	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &cur), 0);
	return sigismember(&cur, SIGUSR1);
}

/* A mask that lets SIGUSR1 in (all else as now). */
static sigset_t mask_opening_usr1(void)
{
	sigset_t m;

	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &m), 0);
	sigdelset(&m, SIGUSR1);
	return m;
}

static io_context_t new_ctx(void)
{
	io_context_t ctx = NULL;

	ck_assert_int_eq(io_setup(8, &ctx), 0);
	return ctx;
}

/* One read of a temporary file, completed inside io_submit. */
static void submit_read(io_context_t ctx, int fd, struct iocb *cb, void *buf)
{
	struct iocb *p = cb;

	io_prep_pread(cb, fd, buf, 8, 0);
	cb->data = (void *)0x77;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
}

START_TEST(returns_events_with_a_mask)
{
	io_context_t ctx = new_ctx();
	struct iocb cb;
	struct io_event ev;
	struct timespec ts = { GUARD_S, 0 };
	unsigned char buf[8];
	int fd = test_tmpfile(64);
	sigset_t m;

	block_usr1();
	m = mask_opening_usr1();
	submit_read(ctx, fd, &cb, buf);
	ck_assert_int_eq(io_pgetevents(ctx, 1, 1, &ev, &ts, &m), 1);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_ptr_eq(ev.data, (void *)0x77);
	ck_assert_int_eq((long)ev.res, 8);
	ck_assert(usr1_blocked());
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

START_TEST(null_mask_and_timeout)
{
	io_context_t ctx = new_ctx();
	struct iocb cb;
	struct io_event ev;
	struct timespec ts = { GUARD_S, 0 }, shrt = { 0, 1000 * 1000 };
	unsigned char buf[8];
	int fd = test_tmpfile(64);
	sigset_t m;

	/* Nothing there: the timeout gives 0, with or without a mask. */
	ck_assert_int_eq(io_pgetevents(ctx, 1, 1, &ev, &shrt, NULL), 0);
	sigemptyset(&m);
	ck_assert_int_eq(io_pgetevents(ctx, 1, 1, &ev, &shrt, &m), 0);
	submit_read(ctx, fd, &cb, buf);
	ck_assert_int_eq(io_pgetevents(ctx, 1, 1, &ev, &ts, NULL), 1);
	ck_assert_ptr_eq(ev.obj, &cb);
	/* Argument errors are the kernel's. */
	ck_assert_int_eq(io_pgetevents(ctx, 2, 1, &ev, &shrt, &m), -EINVAL);
	ck_assert_int_eq(io_pgetevents(ctx, -1, 1, &ev, &shrt, &m), -EINVAL);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/*
 * glibc's sigset_t is 128 bytes; the kernel wants its own size (8 here)
 * and answers EINVAL to anything else.  The library passes the kernel's.
 */
START_TEST(sigset_size_is_translated)
{
	io_context_t ctx = new_ctx();
	struct io_event ev;
	struct timespec zero = { 0, 0 };
	struct { const void *ss; size_t len; } arg;
	sigset_t m;
	long r;

	ck_assert_uint_eq(sizeof(sigset_t), 128);
	sigemptyset(&m);
	ck_assert_int_eq(io_pgetevents(ctx, 0, 1, &ev, &zero, &m), 0);
	/* The kernel itself refuses glibc's size (or the call is gone). */
	arg.ss = &m;
	arg.len = sizeof(sigset_t);
	r = syscall(SYS_io_pgetevents, ctx, 0L, 1L, &ev, &zero, &arg);
	ck_assert_int_eq(r, -1);
	ck_assert(errno == EINVAL || errno == ENOSYS);
	ck_assert_int_eq(io_destroy(ctx), 0);
}
END_TEST

/* A thread waiting in io_pgetevents with SIGUSR1 opened by its mask. */
struct waiter {
	io_context_t ctx;
	_Atomic long tid;
	_Atomic int done;
	int ret;
	int blocked_after;
	struct timespec ts;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct timespec ts = w->ts;
	struct io_event ev;
	sigset_t m;

	block_usr1();
	m = mask_opening_usr1();
	w->tid = syscall(SYS_gettid);
	w->ret = io_pgetevents(w->ctx, 1, 1, &ev, &ts, &m);
	w->blocked_after = usr1_blocked();
	w->done = 1;
	return NULL;
}

static void signal_during_wait(int sa_flags, struct timespec ts)
{
	struct waiter w;
	pthread_t t;
	int i;

	install(sa_flags);
	memset(&w, 0, sizeof(w));
	w.ts = ts;
	w.ctx = new_ctx();
	ck_assert_int_eq(pthread_create(&t, NULL, waiter_main, &w), 0);
	while (!w.tid)
		usleep(1000);
	/* Keep signalling until it returns (a hang guard only). */
	for (i = 0; !w.done && i < GUARD_S * 100; i++) {
		pthread_kill(t, SIGUSR1);
		usleep(10000);
	}
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(w.ret, -EINTR);
	ck_assert_int_ge(handled, 1);
	ck_assert(w.blocked_after);
	ck_assert_int_eq(io_destroy(w.ctx), 0);
}

START_TEST(signal_during_wait_gives_eintr)
{
	signal_during_wait(0, (struct timespec){ GUARD_S, 0 });
}
END_TEST

START_TEST(signal_during_wait_gives_eintr_even_with_restart)
{
	signal_during_wait(SA_RESTART, (struct timespec){ GUARD_S, 0 });
}
END_TEST

/* A timeout below zero, in whole or in part, is no timeout for the
 * kernel: the call waits until the signal, as with no timeout at all. */
START_TEST(a_negative_timeout_waits_as_none)
{
	signal_during_wait(0, (struct timespec){ -1, 0 });
	signal_during_wait(0, (struct timespec){ 0, -1 });
}
END_TEST

/*
 * No lost wake-up: a signal the call's mask lets in, sent once per call,
 * must end every call with -EINTR.  An emulation that installs the mask
 * and then sleeps loses the wake-up of a signal that lands between the
 * two (a microsecond or so): the handler runs before the sleep, and the
 * call sleeps out its whole timeout.  That timeout is long enough for such
 * a call to be unmistakable (it returns 0); no call may do so.
 *
 * The sender signals as soon as it sees the call about to start, and the
 * waiter steers its own start so that most signals land just after it:
 * when the signal was already out before the call began (it was pending,
 * the easy case), the next call starts sooner; otherwise a little later.
 * With the steps 9 : 1, about one signal in ten arrives before the call
 * and the rest in its first microseconds, where the window was; the
 * start is swept up from no delay every 25 calls, as the window's place
 * varies with the machine's load.  Every tenth call the sender sleeps
 * instead, so its signal comes during the wait, a slice or two in.
 * Natively a call ends at once; emulated, at most one wait slice after
 * its signal.
 */
#define STRESS_CALLS 400
#define STRESS_TIMEOUT_S 10
#define STRESS_STEP 40

struct stress {
	pthread_t waiter;
	_Atomic int go;		/* call i + 1 is about to start */
	_Atomic int sent;	/* its signal has been sent */
};

/* A busy wait of n loop turns: moments a fraction of a microsecond
 * apart, which no sleep gives. */
static void spin(unsigned n)
{
	volatile unsigned k = 0;

	while (k < n)
		k = k + 1;
}

static void *stress_sender(void *arg)
{
	struct stress *st = arg;
	int i;

	for (i = 0; i < STRESS_CALLS; i++) {
		/* Acquire and release here and below only keep the turns in
		 * order (one signal per call); no other data passes. */
		while (atomic_load_explicit(&st->go, memory_order_acquire)
		       != i + 1)
			sched_yield();
		if (i % 10 == 9)
			usleep((useconds_t)(i % 7) * 3000);
		pthread_kill(st->waiter, SIGUSR1);
		atomic_store_explicit(&st->sent, i + 1, memory_order_release);
	}
	return NULL;
}

START_TEST(no_lost_wakeup_under_stress)
{
	io_context_t ctx = new_ctx();
	struct io_event ev;
	struct timespec ts = { STRESS_TIMEOUT_S, 0 };
	struct stress st;
	unsigned delay = 0;
	pthread_t t;
	sigset_t m;
	int i;
	long r;

	install(0);
	block_usr1();
	m = mask_opening_usr1();
	memset(&st, 0, sizeof(st));
	st.waiter = pthread_self();
	ck_assert_int_eq(pthread_create(&t, NULL, stress_sender, &st), 0);
	for (i = 0; i < STRESS_CALLS; i++) {
		if (i % 25 == 0)
			delay = 0;
		atomic_store_explicit(&st.go, i + 1, memory_order_release);
		spin(delay);
		if (atomic_load_explicit(&st.sent, memory_order_acquire) ==
		    i + 1)
			delay = delay > 9 * STRESS_STEP ?
				delay - 9 * STRESS_STEP : 0;
		else
			delay += STRESS_STEP;
		r = io_pgetevents(ctx, 1, 1, &ev, &ts, &m);
		ck_assert_msg(r == -EINTR,
			      "call %d of %d returned %ld (0: it slept out its "
			      "%d s timeout, the signal's wake-up was lost)",
			      i + 1, STRESS_CALLS, r, STRESS_TIMEOUT_S);
		ck_assert_int_eq(handled, i + 1);
		ck_assert(usr1_blocked());
		while (atomic_load_explicit(&st.sent, memory_order_acquire)
		       != i + 1)
			sched_yield();
	}
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
}
END_TEST

START_TEST(pending_signal_opened_by_the_mask)
{
	io_context_t ctx = new_ctx();
	struct io_event ev;
	struct timespec ts = { GUARD_S, 0 };
	sigset_t m, pend;

	install(0);
	block_usr1();
	ck_assert_int_eq(raise(SIGUSR1), 0);
	ck_assert_int_eq(handled, 0);
	m = mask_opening_usr1();
	ck_assert_int_eq(io_pgetevents(ctx, 1, 1, &ev, &ts, &m), -EINTR);
	ck_assert_int_eq(handled, 1);
	ck_assert(usr1_blocked());
	ck_assert_int_eq(sigpending(&pend), 0);
	ck_assert(!sigismember(&pend, SIGUSR1));
	ck_assert_int_eq(io_destroy(ctx), 0);
}
END_TEST

/* Even with min_nr 0 and a zero timeout: nothing reaped, so EINTR. */
START_TEST(pending_signal_with_min_nr_zero)
{
	io_context_t ctx = new_ctx();
	struct io_event ev;
	struct timespec zero = { 0, 0 };
	sigset_t m;

	install(0);
	block_usr1();
	ck_assert_int_eq(raise(SIGUSR1), 0);
	m = mask_opening_usr1();
	ck_assert_int_eq(io_pgetevents(ctx, 0, 1, &ev, &zero, &m), -EINTR);
	ck_assert_int_eq(handled, 1);
	ck_assert(usr1_blocked());
	ck_assert_int_eq(io_destroy(ctx), 0);
}
END_TEST

/*
 * Ready event plus a pending signal the mask opens: the kernel returns
 * the event and runs the handler; so does the emulation.  The ring
 * reaper returns ready events without a system call and so without the
 * mask (documented), leaving the signal pending.
 */
START_TEST(pending_signal_and_ready_event)
{
	io_context_t ctx = new_ctx();
	struct iocb cb;
	struct io_event ev;
	struct timespec ts = { GUARD_S, 0 };
	unsigned char buf[8];
	int fd = test_tmpfile(64);
	sigset_t m, pend;

	install(0);
	block_usr1();
	submit_read(ctx, fd, &cb, buf);
	ck_assert_int_eq(raise(SIGUSR1), 0);
	m = mask_opening_usr1();
	ck_assert_int_eq(io_pgetevents(ctx, 1, 1, &ev, &ts, &m), 1);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert(usr1_blocked());
	if (!(io_features() & IO_FEATURE_RING))
		ck_assert_int_eq(handled, 1);
	ck_assert_int_eq(sigpending(&pend), 0);
	ck_assert_int_eq(sigismember(&pend, SIGUSR1), handled == 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/* A signal the mask keeps blocked does not interrupt the wait. */
START_TEST(blocked_signal_does_not_interrupt)
{
	io_context_t ctx = new_ctx();
	struct io_event ev;
	struct timespec shrt = { 0, 20 * 1000 * 1000 };
	sigset_t m, pend;
	int sig;

	install(0);
	block_usr1();
	ck_assert_int_eq(raise(SIGUSR1), 0);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &m), 0);
	ck_assert_int_eq(io_pgetevents(ctx, 1, 1, &ev, &shrt, &m), 0);
	ck_assert_int_eq(handled, 0);
	ck_assert_int_eq(sigpending(&pend), 0);
	ck_assert(sigismember(&pend, SIGUSR1));
	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	ck_assert_int_eq(sigwait(&m, &sig), 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
}
END_TEST

START_TEST(errno_is_kept)
{
	io_context_t ctx = new_ctx();
	struct io_event ev;
	struct timespec shrt = { 0, 1000 * 1000 };
	sigset_t m;

	sigemptyset(&m);
	ck_assert_errno_kept(io_pgetevents(ctx, 1, 1, &ev, &shrt, &m));
	ck_assert_errno_kept(io_pgetevents(ctx, 2, 1, &ev, &shrt, &m));
	ck_assert_int_eq(io_destroy(ctx), 0);
}
END_TEST

START_TEST(features_match_the_mode)
{
	unsigned f = io_features();

	if (test_mode_disables("pgetevents"))
		ck_assert_uint_eq(f & IO_FEATURE_PGETEVENTS, 0);
	else
		ck_assert_uint_ne(f & IO_FEATURE_PGETEVENTS, 0);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("pgetevents");
	TCase *t = tcase_create("pgetevents");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, features_match_the_mode);
	tcase_add_test(t, returns_events_with_a_mask);
	tcase_add_test(t, null_mask_and_timeout);
	tcase_add_test(t, sigset_size_is_translated);
	tcase_add_test(t, signal_during_wait_gives_eintr);
	tcase_add_test(t, signal_during_wait_gives_eintr_even_with_restart);
	tcase_add_test(t, a_negative_timeout_waits_as_none);
	tcase_add_test(t, no_lost_wakeup_under_stress);
	tcase_add_test(t, pending_signal_opened_by_the_mask);
	tcase_add_test(t, pending_signal_with_min_nr_zero);
	tcase_add_test(t, pending_signal_and_ready_event);
	tcase_add_test(t, blocked_signal_does_not_interrupt);
	tcase_add_test(t, errno_is_kept);
	suite_add_tcase(s, t);
	return s;
}
