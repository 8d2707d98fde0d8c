/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reaps the library did not start: a raw io_getevents system call beside
 * the library's own reaps, on the same context, and tasks made by a raw
 * clone(CLONE_VM) that the C library does not know about.  Every
 * completion must still be delivered exactly once, and once the library
 * has seen head moved by somebody else it must leave that context's ring
 * to the kernel (src/registry.h argues why that is the most it can do).
 * Every test also runs in the other library modes (tests/all-modes.sh),
 * where the answers come from the kernel or the fallbacks.
 */
#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-common.h"


/* n one-byte reads of fd, tagged tag0.., that complete inside io_submit. */
static void submit_reads(io_context_t ctx, int fd, struct iocb *cbs, int n,
			 unsigned char *buf, uintptr_t tag0)
{
	int i;

	for (i = 0; i < n; i++) {
		struct iocb *p = &cbs[i];

		io_prep_pread(p, fd, buf + i, 1, i);
		p->data = (void *)(tag0 + i);
		ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	}
}

/* Count the tags of n events into seen[]; the tags are 0..max-1. */
static void tally(int *seen, int max, const struct io_event *ev, long n)
{
	long i;

	ck_assert_int_ge(n, 0);
	for (i = 0; i < n; i++) {
		uintptr_t tag = (uintptr_t)ev[i].data;

		ck_assert_uint_lt(tag, (uintptr_t)max);
		seen[tag]++;
	}
}

static void all_once(const int *seen, int max)
{
	int i;

	for (i = 0; i < max; i++)
		ck_assert_msg(seen[i] == 1, "event %d delivered %d times", i,
			      seen[i]);
}

/* Is the context kernel-only now?  One completion waiting, a library
 * reap must go to the kernel to take it. */
static void check_kernel_only(io_context_t ctx, int fd, struct iocb *cb,
			      unsigned char *buf, uintptr_t tag, int *seen,
			      int max)
{
	static const struct timespec second = { 1, 0 };
	struct io_event ev;
	unsigned long long calls;

	submit_reads(ctx, fd, cb, 1, buf, tag);
	calls = io_syscall_count();
	ck_assert_int_eq(io_getevents(ctx, 1, 1, &ev, (struct timespec *)&second), 1);
	tally(seen, max, &ev, 1);
	ck_assert_uint_gt(io_syscall_count(), calls);
}

/*
 * The case no lock can prevent: a raw reap that runs while the library
 * is between reading head and publishing it.  Made deterministic with
 * the events array: it starts PROT_NONE, so the library's first write to
 * it faults; the handler reaps two events with the raw system call (as
 * another thread would at that moment), opens the page and returns.
 */
static io_context_t window_ctx;
static struct io_event window_ev[2];
static long window_raw = -1;
static void *window_page;

static void reap_in_the_window(int sig)
{
	(void)sig;
	if (window_raw >= 0)
		abort();	/* a second fault: the page did not open */
	window_raw = test_sys_io_getevents(window_ctx, 2, 2, window_ev, NULL);
	if (mprotect(window_page, 4096, PROT_READ | PROT_WRITE) != 0)
		abort();
}

START_TEST(a_raw_reap_inside_the_reap_window_is_noticed)
{
	static const struct timespec second = { 1, 0 };
	int fd = test_tmpfile(16), seen[5] = { 0 };
	struct iocb cbs[5];
	unsigned char buf[5];
	struct io_event ev[4];
	struct sigaction sa, old;
	long r;

	ck_assert_int_eq(io_setup(8, &window_ctx), 0);
	window_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	ck_assert_ptr_ne(window_page, MAP_FAILED);
	submit_reads(window_ctx, fd, cbs, 4, buf, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = reap_in_the_window;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGSEGV, &sa, &old), 0);

	r = io_getevents(window_ctx, 2, 4, window_page,
			 (struct timespec *)&second);
	sigaction(SIGSEGV, &old, NULL);
	if (window_raw < 0) {
		/* The kernel did the copy: it faulted there, harmlessly. */
		ck_assert_int_eq(r, -EFAULT);
		ck_assert(!ring_mode());
		mprotect(window_page, 4096, PROT_READ | PROT_WRITE);
	} else {
		ck_assert_int_eq(window_raw, 2);
		tally(seen, 5, window_ev, 2);
		ck_assert_int_gt(r, 0);
		tally(seen, 5, window_page, r);
	}
	/* Whatever is left comes once. */
	while ((r = io_getevents(window_ctx, 0, 4, ev,
				 (struct timespec *)&second)) > 0)
		tally(seen, 5, ev, r);
	ck_assert_int_eq(r, 0);
	all_once(seen, 4);
	if (ring_mode())
		check_kernel_only(window_ctx, fd, &cbs[4], &buf[4], 4, seen, 5);
	else {
		submit_reads(window_ctx, fd, &cbs[4], 1, &buf[4], 4);
		ck_assert_int_eq(io_getevents(window_ctx, 1, 1, ev, NULL), 1);
		tally(seen, 5, ev, 1);
	}
	all_once(seen, 5);
	ck_assert_int_eq(io_destroy(window_ctx), 0);
	munmap(window_page, 4096);
	close(fd);
}
END_TEST

/* A raw reap between two of the library's: noticed at the next one, and
 * the context stays the kernel's from then on. */
START_TEST(a_raw_reap_between_library_reaps_makes_the_context_kernel_only)
{
	int fd = test_tmpfile(16), seen[6] = { 0 };
	struct iocb cbs[6];
	unsigned char buf[6];
	struct io_event ev[4];
	io_context_t ctx = NULL;

	ck_assert_int_eq(io_setup(8, &ctx), 0);
	submit_reads(ctx, fd, cbs, 4, buf, 0);
	ck_assert_int_eq(io_getevents(ctx, 1, 1, ev, NULL), 1);
	tally(seen, 6, ev, 1);
	ck_assert_int_eq(test_sys_io_getevents(ctx, 1, 1, ev, NULL), 1);
	tally(seen, 6, ev, 1);
	ck_assert_int_eq(io_getevents(ctx, 2, 4, ev, NULL), 2);
	tally(seen, 6, ev, 2);
	all_once(seen, 4);
	if (ring_mode()) {
		check_kernel_only(ctx, fd, &cbs[4], &buf[4], 4, seen, 6);
		check_kernel_only(ctx, fd, &cbs[5], &buf[5], 5, seen, 6);
		ck_assert_int_eq(io_reaper_active(ctx), 0);
	} else {
		submit_reads(ctx, fd, &cbs[4], 2, &buf[4], 4);
		ck_assert_int_eq(io_getevents(ctx, 2, 2, ev, NULL), 2);
		tally(seen, 6, ev, 2);
	}
	all_once(seen, 6);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/* The library's own kernel reaps move head too: they must not be taken
 * for somebody else's, or every context would lose its fast path after
 * its first wait.  Each kind of kernel reap the library makes, then two
 * completions that must come from the ring without a system call. */
START_TEST(the_librarys_own_kernel_reaps_keep_the_ring_reaper)
{
	static const struct timespec ms = { 0, 1000000 };
	int fd = test_tmpfile(16), seen[12] = { 0 }, round;
	struct iocb cbs[12];
	unsigned char buf[12];
	struct io_event ev[4];
	io_context_t ctx = NULL;
	sigset_t mask;

	sigemptyset(&mask);
	ck_assert_int_eq(io_setup(8, &ctx), 0);
	for (round = 0; round < 4; round++) {
		int t = round * 3;
		unsigned long long calls;

		/* One event waiting, two wanted: the kernel does the call
		 * and returns the one at the timeout. */
		submit_reads(ctx, fd, &cbs[t], 1, &buf[t], (uintptr_t)t);
		if (round % 2)
			ck_assert_int_eq(io_pgetevents(ctx, 2, 2, ev,
						       (struct timespec *)&ms,
						       round == 3 ? &mask : NULL), 1);
		else
			ck_assert_int_eq(io_getevents(ctx, 2, 2, ev,
						      (struct timespec *)&ms), 1);
		tally(seen, 12, ev, 1);
		submit_reads(ctx, fd, &cbs[t + 1], 2, &buf[t + 1],
			     (uintptr_t)t + 1);
		calls = io_syscall_count();
		ck_assert_int_eq(io_getevents(ctx, 2, 2, ev, NULL), 2);
		tally(seen, 12, ev, 2);
		if (ring_mode())
			ck_assert_uint_eq(io_syscall_count(), calls);
	}
	all_once(seen, 12);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/*
 * Two tasks made by a raw clone(CLONE_VM): the C library still says the
 * process has one thread, yet both reap one context.  The clone task
 * calls nothing but io_reap and atomics (it shares the parent's TLS).
 */
#define CLONE_EVENTS 100000
#define CLONE_STACK (256 * 1024)

struct clone_share {
	io_context_t ctx;
	_Atomic int stop;
	_Atomic long errors;
	_Atomic unsigned char seen[CLONE_EVENTS];
};

static void clone_count(struct clone_share *s, const struct io_event *ev,
			int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uintptr_t tag = (uintptr_t)ev[i].data;

		if (tag >= CLONE_EVENTS)
			atomic_fetch_add(&s->errors, 1);
		else
			atomic_fetch_add(&s->seen[tag], 1);
	}
}

static int clone_reaper(void *arg)
{
	struct clone_share *s = arg;
	struct io_event ev[2];

	/* Small reaps: many lock takings, so the tasks meet often. */
	while (!atomic_load(&s->stop)) {
		int n = io_reap(s->ctx, 2, ev);

		if (n < 0) {
			atomic_fetch_add(&s->errors, 1);
			break;
		}
		clone_count(s, ev, n);
	}
	return 0;
}

/* One round: two clone tasks reap while this one submits CLONE_EVENTS
 * reads in batches; returns how many came twice plus how many never. */
static long clone_round(struct clone_share *s, struct iocb *cbs,
			unsigned char *stack, int fd)
{
	struct io_event ev[8];
	unsigned char b;
	long i, wrong = 0;
	int status, n, k;
	pid_t pid[2];

	memset((void *)s->seen, 0, sizeof(s->seen));
	atomic_store(&s->stop, 0);
	for (k = 0; k < 2; k++) {
		pid[k] = clone(clone_reaper, stack + (k + 1) * CLONE_STACK,
			       CLONE_VM | CLONE_FS | CLONE_FILES |
				       CLONE_SYSVSEM | SIGCHLD, s);
		ck_assert_int_gt(pid[k], 0);
	}
	/* Batches of 32, so that both tasks find events to race for. */
	for (i = 0; i < CLONE_EVENTS; i += n) {
		struct iocb *p[32];

		for (k = 0; k < 32 && i + k < CLONE_EVENTS; k++) {
			p[k] = &cbs[i + k];
			io_prep_pread(p[k], fd, &b, 1, 0);
			p[k]->data = (void *)(uintptr_t)(i + k);
		}
		while ((n = io_submit(s->ctx, k, p)) == -EAGAIN)
			sched_yield();
		ck_assert_int_gt(n, 0);
	}
	atomic_store(&s->stop, 1);
	for (k = 0; k < 2; k++) {
		ck_assert_int_eq(waitpid(pid[k], &status, __WALL), pid[k]);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	while ((n = io_reap(s->ctx, 8, ev)) > 0)
		clone_count(s, ev, n);
	ck_assert_int_eq(n, 0);
	for (i = 0; i < CLONE_EVENTS; i++) {
		int c = atomic_load(&s->seen[i]);

		wrong += c == 1 ? 0 : c == 0 ? 1 : c - 1;
	}
	return wrong;
}

/* Three rounds: a lock that lets both tasks in shows within them on
 * most runs (3c5ad12: from 1 to a few hundred per round, when the two
 * tasks really run at once). */
START_TEST(clone_vm_tasks_reaping_one_context_get_each_event_once)
{
	struct clone_share *s = calloc(1, sizeof(*s));
	struct iocb *cbs = calloc(CLONE_EVENTS, sizeof(*cbs));
	unsigned char *stack = malloc(2 * CLONE_STACK);
	int fd = test_tmpfile(16), round;

	ck_assert(s && cbs && stack);
	ck_assert_int_eq(io_setup(64, &s->ctx), 0);
	for (round = 0; round < 3; round++) {
		long wrong = clone_round(s, cbs, stack, fd);

		ck_assert_int_eq(atomic_load(&s->errors), 0);
		ck_assert_msg(wrong == 0, "round %d: %ld events delivered "
			      "twice or never", round, wrong);
	}
	ck_assert_int_eq(io_destroy(s->ctx), 0);
	close(fd);
	free(stack);
	free(cbs);
	free(s);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("foreign");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, a_raw_reap_inside_the_reap_window_is_noticed);
	tcase_add_test(t, a_raw_reap_between_library_reaps_makes_the_context_kernel_only);
	tcase_add_test(t, the_librarys_own_kernel_reaps_keep_the_ring_reaper);
	tcase_add_test(t, clone_vm_tasks_reaping_one_context_get_each_event_once);
	suite_add_tcase(s, t);
	return s;
}
