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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include "test-common.h"

#define GUARD_S 20		/* hang guard for every wait */
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

/* "Threads:" of /proc/self/status: every task of the process. */
static int threads_now(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	int n = -1;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	ck_assert_int_gt(n, 0);
	return n;
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
	int m, sl, efd, threads = threads_now();

	if (!kernel_carries())
		return;		/* the helper's costs: its own tests */
	open_pty(&m, &sl);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ck_assert_int_ge(efd, 0);
	fds_snapshot(fds);

	io_prep_poll(&cb, m, POLLIN);
	io_set_eventfd(&cb, efd);
	cb.data = (void *)0x5eed;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	expect_same_fds(fds, "while the poll is armed");
	ck_assert_int_eq(threads_now(), threads);
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
	ck_assert_int_eq(threads_now(), threads);

	ck_assert_int_eq(io_destroy(ctx), 0);
	expect_same_fds(fds, "after io_destroy");
	ck_assert_int_eq(threads_now(), threads);
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
	threads = threads_now();
	fds_snapshot(fds);
	for (i = 0; i < 3; i++) {
		io_prep_poll(&cb[i], m, POLLIN);
		p = &cb[i];
		ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	}
	ck_assert_int_eq(io_destroy(ctx), 0);
	if (kernel_carries()) {
		expect_same_fds(fds, "after io_destroy");
		ck_assert_int_eq(threads_now(), threads);
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
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(stdio_child());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child failed at step %d", WEXITSTATUS(status));
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
	tcase_add_test(t, the_standard_descriptors_stay_free);
	suite_add_tcase(s, t);
	return s;
}
