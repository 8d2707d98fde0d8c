/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * IOCB_CMD_POLL, natively and through the library's emulation.  Every
 * test runs in each mode of tests/run-mode.sh; with LIBAIO_DISABLE=poll
 * the same bodies exercise the emulation, and ptys (which the kernel's
 * aio poll refuses) are emulated in every mode.  Waits use generous
 * timeouts only as hang guards.  Results are masked before comparing:
 * the kernel may report more bits than were asked for.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "test-common.h"

#define GUARD_S 20		/* hang guard for every wait */


static int env_disables(const char *what)
{
	const char *s = getenv("LIBAIO_DISABLE");

	return s && (strstr(s, what) || strstr(s, "all"));
}

static int poll_emulated(void)
{
	return !(io_features() & IO_FEATURE_POLL);
}

static io_context_t new_ctx(int n)
{
	io_context_t ctx = NULL;

	ck_assert_int_eq(io_setup(n, &ctx), 0);
	return ctx;
}

/* One event, waiting up to the hang guard. */
static struct io_event wait_one(io_context_t ctx)
{
	struct timespec ts = { GUARD_S, 0 };
	struct io_event ev;

	memset(&ev, 0, sizeof(ev));
	ck_assert_int_eq(io_getevents(ctx, 1, 1, &ev, &ts), 1);
	return ev;
}

/* No event within a short while (absence check, not a timing test). */
static void expect_none(io_context_t ctx)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	struct io_event ev;

	ck_assert_int_eq(io_getevents(ctx, 0, 1, &ev, &ts), 0);
}

static void prep_poll(struct iocb *cb, int fd, int events, uintptr_t tag)
{
	io_prep_poll(cb, fd, events);
	cb->data = (void *)tag;
}

static int submit1(io_context_t ctx, struct iocb *cb)
{
	return io_submit(ctx, 1, &cb);
}

static void check_event(const struct io_event *ev, struct iocb *cb,
			uintptr_t tag, unsigned want)
{
	ck_assert_ptr_eq(ev->obj, cb);
	ck_assert_ptr_eq(ev->data, (void *)tag);
	ck_assert_uint_ne(ev->res & want, 0);
	ck_assert_uint_eq(ev->res2, 0);
}

START_TEST(features_match_the_mode)
{
	unsigned f = io_features();

	ck_assert_uint_ne(f & IO_FEATURE_AIO, 0);
	if (env_disables("poll")) {
		ck_assert_uint_eq(f & IO_FEATURE_POLL, 0);
		ck_assert_uint_ne(f & IO_FEATURE_POLL_DISABLED, 0);
	} else {
		/* Polls go to the kernel first (6.18 here has aio poll). */
		ck_assert_uint_ne(f & IO_FEATURE_POLL, 0);
		ck_assert_uint_eq(f & IO_FEATURE_POLL_DISABLED, 0);
	}
	if (env_disables("pgetevents")) {
		ck_assert_uint_eq(f & IO_FEATURE_PGETEVENTS, 0);
		ck_assert_uint_ne(f & IO_FEATURE_PGETEVENTS_DISABLED, 0);
	} else if (test_mode_disables("pgetevents")) {
		/* The seccomp filter: missing, not disabled. */
		ck_assert_uint_eq(f & IO_FEATURE_PGETEVENTS, 0);
		ck_assert_uint_eq(f & IO_FEATURE_PGETEVENTS_DISABLED, 0);
	} else {
		ck_assert_uint_ne(f & IO_FEATURE_PGETEVENTS, 0);
		ck_assert_uint_eq(f & IO_FEATURE_PGETEVENTS_DISABLED, 0);
	}
	if (env_disables("ring")) {
		ck_assert_uint_eq(f & IO_FEATURE_RING, 0);
		ck_assert_uint_ne(f & IO_FEATURE_RING_DISABLED, 0);
	} else {
		ck_assert_uint_ne(f & IO_FEATURE_RING, 0);
		ck_assert_uint_eq(f & IO_FEATURE_RING_DISABLED, 0);
	}
}
END_TEST

START_TEST(pipe_becomes_readable)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb;
	struct io_event ev;
	struct timespec zero = { 0, 0 };
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	prep_poll(&cb, p[0], POLLIN, 0x1234);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ck_assert_int_eq(io_getevents(ctx, 0, 1, &ev, &zero), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ev = wait_one(ctx);
	check_event(&ev, &cb, 0x1234, POLLIN);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(socketpair_in_and_out)
{
	io_context_t ctx = new_ctx(8);
	struct iocb in, out;
	struct io_event ev;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	/* Writable at once. */
	prep_poll(&out, sv[0], POLLOUT, 1);
	ck_assert_int_eq(submit1(ctx, &out), 1);
	ev = wait_one(ctx);
	check_event(&ev, &out, 1, POLLOUT);
	ck_assert_uint_eq(ev.res & POLLIN, 0);
	/* Readable once the peer sends. */
	prep_poll(&in, sv[1], POLLIN, 2);
	ck_assert_int_eq(submit1(ctx, &in), 1);
	ck_assert_int_eq(send(sv[0], "hi", 2, 0), 2);
	ev = wait_one(ctx);
	check_event(&ev, &in, 2, POLLIN);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(eventfd_in_and_out)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb;
	struct io_event ev;
	uint64_t one = 1;
	int efd = eventfd(0, EFD_CLOEXEC);

	ck_assert_int_ge(efd, 0);
	prep_poll(&cb, efd, POLLIN, 3);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ck_assert_int_eq(write(efd, &one, sizeof(one)), sizeof(one));
	ev = wait_one(ctx);
	check_event(&ev, &cb, 3, POLLIN);
	/* An eventfd is always writable. */
	prep_poll(&cb, efd, POLLOUT, 4);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ev = wait_one(ctx);
	check_event(&ev, &cb, 4, POLLOUT);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(efd);
}
END_TEST

START_TEST(pipe_write_end_pollout_and_hup)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb;
	struct io_event ev;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	prep_poll(&cb, p[1], POLLOUT, 5);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ev = wait_one(ctx);
	check_event(&ev, &cb, 5, POLLOUT);
	/* POLLHUP comes unrequested once the writer is gone. */
	prep_poll(&cb, p[0], POLLIN, 6);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	close(p[1]);
	ev = wait_one(ctx);
	check_event(&ev, &cb, 6, POLLHUP);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(p[0]);
}
END_TEST

START_TEST(one_shot_until_resubmitted)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb;
	struct io_event ev;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	prep_poll(&cb, p[0], POLLIN, 7);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ev = wait_one(ctx);
	check_event(&ev, &cb, 7, POLLIN);
	/* Still readable, but the poll is spent. */
	expect_none(ctx);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ev = wait_one(ctx);
	check_event(&ev, &cb, 7, POLLIN);
	expect_none(ctx);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(cancel_pending_poll)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb;
	struct io_event ev, res;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	prep_poll(&cb, p[0], POLLIN, 8);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	memset(&res, 0xa5, sizeof(res));
	ck_assert_int_eq(io_cancel(ctx, &cb, &res), -EINPROGRESS);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_ptr_eq(ev.data, (void *)8);
	ck_assert_uint_eq(ev.res, 0);
	ck_assert_uint_eq(ev.res2, 0);
	ck_assert_int_eq(io_cancel(ctx, &cb, &res), -EINVAL);
	/* The fd becoming ready now changes nothing. */
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	expect_none(ctx);
	/* A poll that already fired cannot be cancelled either. */
	prep_poll(&cb, p[0], POLLIN, 9);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ev = wait_one(ctx);
	check_event(&ev, &cb, 9, POLLIN);
	ck_assert_int_eq(io_cancel(ctx, &cb, &res), -EINVAL);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* Cancel racing readiness: always exactly one completion. */
START_TEST(cancel_races_readiness)
{
	io_context_t ctx = new_ctx(8);
	int i;

	for (i = 0; i < 200; i++) {
		struct iocb cb;
		struct io_event ev;
		int p[2], r;

		ck_assert_int_eq(pipe(p), 0);
		prep_poll(&cb, p[0], POLLIN, 10);
		ck_assert_int_eq(submit1(ctx, &cb), 1);
		ck_assert_int_eq(write(p[1], "x", 1), 1);
		r = io_cancel(ctx, &cb, &ev);
		ck_assert(r == -EINPROGRESS || r == -EINVAL);
		ev = wait_one(ctx);
		ck_assert_ptr_eq(ev.obj, &cb);
		if (r == -EINPROGRESS)
			ck_assert_uint_eq(ev.res, 0);
		else
			ck_assert_uint_ne(ev.res & POLLIN, 0);
		close(p[0]);
		close(p[1]);
	}
	expect_none(ctx);
	ck_assert_int_eq(io_destroy(ctx), 0);
}
END_TEST

#define MANY 64

START_TEST(many_polls_in_one_submit)
{
	io_context_t ctx = new_ctx(MANY * 2);
	struct iocb cbs[MANY], *list[MANY];
	struct io_event ev[MANY];
	struct timespec ts = { GUARD_S, 0 };
	int p[MANY][2], seen[MANY], i, got = 0;

	for (i = 0; i < MANY; i++) {
		ck_assert_int_eq(pipe(p[i]), 0);
		prep_poll(&cbs[i], p[i][0], POLLIN, 100 + i);
		list[i] = &cbs[i];
		seen[i] = 0;
	}
	ck_assert_int_eq(io_submit(ctx, MANY, list), MANY);
	for (i = 0; i < MANY; i++)
		ck_assert_int_eq(write(p[i][1], "x", 1), 1);
	while (got < MANY) {
		int r = io_getevents(ctx, 1, MANY - got, ev, &ts), k;

		ck_assert_int_gt(r, 0);
		for (k = 0; k < r; k++) {
			long idx = (struct iocb *)ev[k].obj - cbs;

			ck_assert(idx >= 0 && idx < MANY);
			ck_assert_ptr_eq(ev[k].data, (void *)(uintptr_t)(100 + idx));
			ck_assert_uint_ne(ev[k].res & POLLIN, 0);
			ck_assert_int_eq(seen[idx]++, 0);
		}
		got += r;
	}
	expect_none(ctx);
	ck_assert_int_eq(io_destroy(ctx), 0);
	for (i = 0; i < MANY; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}
END_TEST

START_TEST(mixed_read_and_poll_batches)
{
	io_context_t ctx = new_ctx(16);
	int fd = test_tmpfile(4096), p[2], bad;
	struct iocb rd1, rd2, pl, badpl, *list[3];
	struct io_event ev;
	unsigned char b1[16], b2[16];
	int i, seen_rd1 = 0, seen_rd2 = 0, seen_pl = 0;

	ck_assert_int_eq(pipe(p), 0);
	bad = dup(p[0]);
	close(bad);

	/* [read, poll, read]: all accepted. */
	io_prep_pread(&rd1, fd, b1, sizeof(b1), 0);
	rd1.data = (void *)1;
	prep_poll(&pl, p[0], POLLIN, 2);
	io_prep_pread(&rd2, fd, b2, sizeof(b2), 16);
	rd2.data = (void *)3;
	list[0] = &rd1;
	list[1] = &pl;
	list[2] = &rd2;
	ck_assert_int_eq(io_submit(ctx, 3, list), 3);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	for (i = 0; i < 3; i++) {
		ev = wait_one(ctx);
		if (ev.obj == &rd1) {
			ck_assert_int_eq((long)ev.res, 16);
			seen_rd1++;
		} else if (ev.obj == &rd2) {
			ck_assert_int_eq((long)ev.res, 16);
			seen_rd2++;
		} else {
			check_event(&ev, &pl, 2, POLLIN);
			seen_pl++;
		}
	}
	ck_assert(seen_rd1 == 1 && seen_rd2 == 1 && seen_pl == 1);
	ck_assert_int_eq(b1[3], test_pattern(3));
	ck_assert_int_eq(b2[3], test_pattern(19));

	/* [good read, poll on a bad fd]: 1. */
	list[0] = &rd1;
	prep_poll(&badpl, bad, POLLIN, 4);
	list[1] = &badpl;
	ck_assert_int_eq(io_submit(ctx, 2, list), 1);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &rd1);

	/* [poll on a bad fd, read]: the poll's error. */
	list[0] = &badpl;
	list[1] = &rd1;
	ck_assert_int_eq(io_submit(ctx, 2, list), -EBADF);

	/* [poll, read of a bad fd, read]: 1, and the poll is live. */
	prep_poll(&pl, p[0], POLLIN, 5);
	io_prep_pread(&rd2, bad, b2, sizeof(b2), 0);
	list[0] = &pl;
	list[1] = &rd2;
	list[2] = &rd1;
	ck_assert_int_eq(io_submit(ctx, 3, list), 1);
	ev = wait_one(ctx);		/* the pipe still holds a byte */
	check_event(&ev, &pl, 5, POLLIN);
	expect_none(ctx);

	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(bad_and_malformed_polls)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb;
	int p[2], bad, fd = test_tmpfile(16);

	ck_assert_int_eq(pipe(p), 0);
	bad = dup(p[0]);
	close(bad);
	prep_poll(&cb, bad, POLLIN, 0);
	ck_assert_int_eq(submit1(ctx, &cb), -EBADF);
	/* More than 16 bits of events. */
	prep_poll(&cb, p[0], POLLIN, 0);
	cb.u.poll.events = 0x10001;
	ck_assert_int_eq(submit1(ctx, &cb), -EINVAL);
	prep_poll(&cb, p[0], POLLIN, 0);
	cb.u.c.nbytes = 1;
	ck_assert_int_eq(submit1(ctx, &cb), -EINVAL);
	prep_poll(&cb, p[0], POLLIN, 0);
	cb.u.c.offset = 1;
	ck_assert_int_eq(submit1(ctx, &cb), -EINVAL);
	prep_poll(&cb, p[0], POLLIN, 0);
	cb.aio_rw_flags = 1;
	ck_assert_int_eq(submit1(ctx, &cb), -EINVAL);
	prep_poll(&cb, p[0], POLLIN, 0);
	cb.u.c.__pad3 = 1;
	ck_assert_int_eq(submit1(ctx, &cb), -EINVAL);
	/* A resfd that is not an eventfd. */
	prep_poll(&cb, p[0], POLLIN, 0);
	io_set_eventfd(&cb, p[1]);
	ck_assert_int_eq(submit1(ctx, &cb), -EINVAL);
	/* A regular file has no poll method: POLLPRI can never be set. */
	prep_poll(&cb, fd, POLLPRI, 0);
	ck_assert_int_eq(submit1(ctx, &cb), -EINVAL);
	/* ...but it is always readable. */
	prep_poll(&cb, fd, POLLIN | POLLPRI, 11);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	{
		struct io_event ev = wait_one(ctx);

		check_event(&ev, &cb, 11, POLLIN);
		ck_assert_uint_eq(ev.res & POLLPRI, 0);
	}
	/* An invalid context. */
	prep_poll(&cb, p[0], POLLIN, 0);
	ck_assert_int_eq(submit1((io_context_t)0x1000, &cb), -EINVAL);
	expect_none(ctx);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(resfd_is_signalled)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb;
	struct io_event ev;
	struct pollfd pfd;
	uint64_t count = 0;
	int p[2], efd = eventfd(0, EFD_CLOEXEC);

	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(pipe(p), 0);
	prep_poll(&cb, p[0], POLLIN, 12);
	io_set_eventfd(&cb, efd);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	pfd.fd = efd;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, GUARD_S * 1000), 1);
	ck_assert_int_eq(read(efd, &count, sizeof(count)), sizeof(count));
	ck_assert_uint_eq(count, 1);
	ev = wait_one(ctx);
	check_event(&ev, &cb, 12, POLLIN);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(efd);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* A thread asleep in io_getevents wakes when the poll fires. */
struct sleeper {
	io_context_t ctx;
	_Atomic long tid;
	int ret;
	struct io_event ev;
	int use_pget;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct timespec ts = { GUARD_S, 0 };
	sigset_t mask;

	s->tid = syscall(SYS_gettid);
	sigemptyset(&mask);
	if (s->use_pget)
		s->ret = io_pgetevents(s->ctx, 1, 1, &s->ev, &ts, &mask);
	else
		s->ret = io_getevents(s->ctx, 1, 1, &s->ev, &ts);
	return NULL;
}

/* Wait (bounded) until thread tid sleeps in the kernel. */
static void wait_until_sleeping(long tid)
{
	char path[64], buf[256];
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
	for (i = 0; i < GUARD_S * 100; i++) {
		FILE *f = fopen(path, "r");
		char *p = NULL;

		if (f) {
			if (fgets(buf, sizeof(buf), f))
				p = strrchr(buf, ')');
			fclose(f);
		}
		if (p && p[1] == ' ' && p[2] == 'S')
			return;
		usleep(10000);
	}
	ck_abort_msg("thread never went to sleep");
}

static void blocked_thread_wakes(int use_pget)
{
	struct sleeper s;
	struct iocb cb;
	pthread_t t;
	int p[2];

	memset(&s, 0, sizeof(s));
	s.ctx = new_ctx(8);
	s.use_pget = use_pget;
	ck_assert_int_eq(pipe(p), 0);
	prep_poll(&cb, p[0], POLLIN, 13);
	ck_assert_int_eq(submit1(s.ctx, &cb), 1);
	ck_assert_int_eq(pthread_create(&t, NULL, sleeper_main, &s), 0);
	while (!s.tid)
		usleep(1000);
	wait_until_sleeping(s.tid);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(s.ret, 1);
	check_event(&s.ev, &cb, 13, POLLIN);
	ck_assert_int_eq(io_destroy(s.ctx), 0);
	close(p[0]);
	close(p[1]);
}

START_TEST(blocked_getevents_is_woken)
{
	blocked_thread_wakes(0);
}
END_TEST

START_TEST(blocked_pgetevents_is_woken)
{
	blocked_thread_wakes(1);
}
END_TEST

START_TEST(pty_works_everywhere)
{
	io_context_t ctx = new_ctx(8);
	struct iocb in, out;
	struct io_event ev;
	struct termios tio;
	int m = posix_openpt(O_RDWR | O_NOCTTY), s;

	ck_assert_int_ge(m, 0);
	ck_assert_int_eq(grantpt(m), 0);
	ck_assert_int_eq(unlockpt(m), 0);
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(tcgetattr(s, &tio), 0);
	cfmakeraw(&tio);
	ck_assert_int_eq(tcsetattr(s, TCSANOW, &tio), 0);

	/* Not readable yet: the kernel refuses this one natively. */
	prep_poll(&in, m, POLLIN, 14);
	ck_assert_int_eq(submit1(ctx, &in), 1);
	expect_none(ctx);
	ck_assert_int_eq(write(s, "x", 1), 1);
	ev = wait_one(ctx);
	check_event(&ev, &in, 14, POLLIN);
	/* Writable. */
	prep_poll(&out, s, POLLOUT, 15);
	ck_assert_int_eq(submit1(ctx, &out), 1);
	ev = wait_one(ctx);
	check_event(&ev, &out, 15, POLLOUT);
	/* Cancel works on an emulated pty poll too. */
	prep_poll(&in, s, POLLIN, 16);
	ck_assert_int_eq(submit1(ctx, &in), 1);
	ck_assert_int_eq(io_cancel(ctx, &in, &ev), -EINPROGRESS);
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &in);
	ck_assert_uint_eq(ev.res, 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(s);
	close(m);
}
END_TEST

static int cb_calls;
static long cb_res;
static struct iocb *cb_iocb;

static void poll_cb(io_context_t ctx, struct iocb *iocb, long res, long res2)
{
	(void)ctx;
	ck_assert_int_eq(res2, 0);
	cb_calls++;
	cb_res = res;
	cb_iocb = iocb;
}

START_TEST(queue_run_calls_back)
{
	io_context_t ctx = NULL;
	struct iocb cb;
	struct pollfd pfd;
	uint64_t v;
	int p[2], efd = eventfd(0, EFD_CLOEXEC);

	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(io_queue_init(8, &ctx), 0);
	ck_assert_int_eq(pipe(p), 0);
	io_prep_poll(&cb, p[0], POLLIN);
	io_set_callback(&cb, poll_cb);
	io_set_eventfd(&cb, efd);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ck_assert_int_eq(io_queue_run(ctx), 0);
	ck_assert_int_eq(cb_calls, 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	/* The eventfd says the completion is in the ring. */
	pfd.fd = efd;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, GUARD_S * 1000), 1);
	ck_assert_int_eq(read(efd, &v, sizeof(v)), sizeof(v));
	ck_assert_int_eq(io_queue_run(ctx), 0);
	ck_assert_int_eq(cb_calls, 1);
	ck_assert_ptr_eq(cb_iocb, &cb);
	ck_assert_int_ne(cb_res & POLLIN, 0);
	ck_assert_int_eq(io_queue_release(ctx), 0);
	close(efd);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(destroy_with_pending_polls)
{
	int round;

	for (round = 0; round < 20; round++) {
		io_context_t ctx = new_ctx(8), ctx2;
		struct iocb cbs[3], rd, *list[3];
		struct io_event ev;
		unsigned char b[4];
		int p[3][2], i, fd = test_tmpfile(16);

		for (i = 0; i < 3; i++) {
			ck_assert_int_eq(pipe(p[i]), 0);
			prep_poll(&cbs[i], p[i][0], POLLIN, 20 + i);
			list[i] = &cbs[i];
		}
		ck_assert_int_eq(io_submit(ctx, 3, list), 3);
		/* One fires before the destroy, maybe unreaped. */
		ck_assert_int_eq(write(p[0][1], "x", 1), 1);
		ck_assert_int_eq(io_destroy(ctx), 0);
		for (i = 1; i < 3; i++)
			ck_assert_int_eq(write(p[i][1], "x", 1), 1);
		/* A new context, perhaps at the same address, sees only
		 * its own completions. */
		ctx2 = new_ctx(8);
		io_prep_pread(&rd, fd, b, sizeof(b), 0);
		rd.data = (void *)99;
		ck_assert_int_eq(submit1(ctx2, &rd), 1);
		ev = wait_one(ctx2);
		ck_assert_ptr_eq(ev.obj, &rd);
		ck_assert_ptr_eq(ev.data, (void *)99);
		if (round == 0)
			expect_none(ctx2);
		ck_assert_int_eq(io_destroy(ctx2), 0);
		for (i = 0; i < 3; i++) {
			close(p[i][0]);
			close(p[i][1]);
		}
		close(fd);
	}
}
END_TEST

/* Arming more polls than the ring holds: the kernel refuses with EAGAIN;
 * the emulation accepts and delivers once the ring has room.
 *
 * The kernel counts free slots per CPU: io_submit takes them from the
 * submitting CPU's share, which it refills in batches from the shared
 * pool, and answers EAGAIN when both are empty.  Another CPU's share can
 * still hold slots then, so a thread that moved to that CPU after the
 * EAGAIN got one more submission in.  The fill and the poll's submission
 * therefore stay on one CPU. */
START_TEST(full_ring)
{
	io_context_t ctx = new_ctx(1);
	int fd = test_tmpfile(16), efd = eventfd(0, EFD_CLOEXEC), n = 0, r;
	static struct iocb rds[4096];
	struct iocb pl, *p;
	struct io_event ev;
	unsigned char b;
	cpu_set_t all, one;
	int cpu = sched_getcpu();

	ck_assert_int_ge(efd, 0);
	ck_assert_int_ge(cpu, 0);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	do {
		ck_assert_int_lt(n, 4096);
		io_prep_pread(&rds[n], fd, &b, 1, 0);
		p = &rds[n];
		r = io_submit(ctx, 1, &p);
		if (r == 1)
			n++;
	} while (r == 1);
	ck_assert_int_eq(r, -EAGAIN);
	prep_poll(&pl, efd, POLLOUT, 30);
	r = submit1(ctx, &pl);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(all), &all), 0);
	if (!poll_emulated()) {
		ck_assert_int_eq(r, -EAGAIN);
		ck_assert_int_eq(io_destroy(ctx), 0);
		close(fd);
		close(efd);
		return;
	}
	ck_assert_int_eq(r, 1);
	/* Make room: the doorbell gets in, the poll's event appears. */
	while (n > 0) {
		ev = wait_one(ctx);
		if (ev.obj == &pl) {
			check_event(&ev, &pl, 30, POLLOUT);
			n = -1;
			break;
		}
		n--;
	}
	if (n == 0) {
		ev = wait_one(ctx);
		check_event(&ev, &pl, 30, POLLOUT);
	}
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
	close(efd);
}
END_TEST

START_TEST(fork_child_starts_afresh)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb;
	struct io_event ev;
	pid_t pid;
	int p[2], st;

	ck_assert_int_eq(pipe(p), 0);
	prep_poll(&cb, p[0], POLLIN, 40);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* Own context, own poll: works in the child too. */
		io_context_t c2 = NULL;
		struct iocb c;
		struct io_event e;
		struct timespec ts = { GUARD_S, 0 };
		int q[2];

		if (io_setup(8, &c2) != 0 || pipe(q) != 0)
			_exit(2);
		io_prep_poll(&c, q[0], POLLIN);
		c.data = (void *)41;
		if (io_submit(c2, 1, (struct iocb *[]){ &c }) != 1)
			_exit(3);
		if (write(q[1], "y", 1) != 1)
			_exit(4);
		if (io_getevents(c2, 1, 1, &e, &ts) != 1 || e.obj != &c ||
		    e.data != (void *)41 || !(e.res & POLLIN))
			_exit(5);
		_exit(io_destroy(c2) == 0 ? 0 : 6);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	/* The parent's poll is untouched by the child. */
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ev = wait_one(ctx);
	check_event(&ev, &cb, 40, POLLIN);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* A raw pty pair (master, slave), no echo, no line discipline. */
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

static int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;		/* the directory's own descriptor */
}

/*
 * Every kind of descriptor the test can make: the library's answer must be
 * the kernel's (raw system calls on a second context), both the io_submit
 * result and, when the poll completes inside io_submit, its mask; a poll
 * left pending is cancelled on both sides.  Two exceptions:
 *  - FD_TWO_QUEUES (ptys, a FIFO open for reading and writing): the
 *    kernel's aio poll refuses a file that waits on two queues (EINVAL)
 *    unless it is ready, and the emulation is the answer.
 *  - FD_NEVER_WAITS (a /proc file whose mask never changes): the kernel
 *    refuses a poll of it that is not ready (EINVAL), and so does the
 *    library, except with LIBAIO_DISABLE=poll, where it accepts the poll
 *    and never completes it (a documented difference: epoll cannot tell
 *    such a file from one that waits).
 */
enum { FD_PLAIN, FD_TWO_QUEUES, FD_NEVER_WAITS, FD_CLOSED };

#define RAW_KERNEL_TAG 0x6b726e6cu

struct fd_kind {
	const char *name;
	int fd;
	int how;
};

static const char *tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

/* Submit cb on ctx (raw or through the library) and say what happened:
 * the submit result, and the completion's res if it completed at once
 * (else -1 after cancelling it). */
static int poll_once(io_context_t ctx, struct iocb *cb, int raw, long *res)
{
	struct timespec zero = { 0, 0 }, guard = { GUARD_S, 0 };
	struct io_event ev;
	struct iocb *p = cb;
	int r, n;

	r = raw ? (int)test_sys_io_submit(ctx, 1, &p) : io_submit(ctx, 1, &p);
	*res = -1;
	if (r != 1)
		return r;
	n = raw ? (int)test_sys_io_getevents(ctx, 0, 1, &ev, &zero) :
		  io_getevents(ctx, 0, 1, &ev, &zero);
	ck_assert_int_ge(n, 0);
	if (n == 1) {
		ck_assert_ptr_eq(ev.obj, cb);
		*res = (long)ev.res;
		return r;
	}
	/* Pending: cancel, and reap the cancellation. */
	n = raw ? (int)test_sys_io_cancel(ctx, cb, &ev) : io_cancel(ctx, cb, &ev);
	ck_assert_int_eq(n, -EINPROGRESS);
	n = raw ? (int)test_sys_io_getevents(ctx, 1, 1, &ev, &guard) :
		  io_getevents(ctx, 1, 1, &ev, &guard);
	ck_assert_int_eq(n, 1);
	ck_assert_ptr_eq(ev.obj, cb);
	ck_assert_int_eq(ev.res, 0);
	return r;
}

/* One poll of one descriptor kind, by the kernel (kctx) and by the
 * library (lctx): the same answer, or the library's emulation where the
 * kernel refuses. */
static void poll_as_the_kernel(io_context_t kctx, io_context_t lctx,
			       const struct fd_kind *k, short ev)
{
	struct iocb kcb, lcb;
	long kres, lres;
	int kr, lr;
	unsigned keep = (unsigned)ev | POLLERR | POLLHUP;
	char name[64];

	snprintf(name, sizeof(name), "%s, events 0x%x", k->name, (unsigned)ev);
	/* This tag marks the raw kernel polls, which tests/poll-strace.sh
	 * leaves out of its count. */
	prep_poll(&kcb, k->fd, ev, RAW_KERNEL_TAG);
	prep_poll(&lcb, k->fd, ev, 2);
	kr = poll_once(kctx, &kcb, 1, &kres);
	lr = poll_once(lctx, &lcb, 0, &lres);
	if (k->how == FD_TWO_QUEUES && kr != 1) {
		/* The kernel refuses a file on two wait queues that is not
		 * ready; the library emulates. */
		ck_assert_msg(kr == -EINVAL, "%s: kernel %d", name, kr);
		ck_assert_msg(lr == 1 && lres < 0, "%s: library %d, res %ld",
			      name, lr, lres);
		return;
	}
	if (k->how == FD_NEVER_WAITS && kr != 1 && env_disables("poll")) {
		ck_assert_msg(kr == -EINVAL, "%s: kernel %d", name, kr);
		ck_assert_msg(lr == 1 && lres < 0, "%s: library %d, res %ld",
			      name, lr, lres);
		return;
	}
	ck_assert_msg(kr == lr, "%s: kernel %d, library %d", name, kr, lr);
	ck_assert_msg((kres < 0) == (lres < 0), "%s: kernel %s, library %s",
		      name, kres < 0 ? "pending" : "complete",
		      lres < 0 ? "pending" : "complete");
	if (kres >= 0)
		ck_assert_msg((kres & keep) == (lres & keep),
			      "%s: kernel res 0x%lx, library 0x%lx",
			      name, kres, lres);
}

START_TEST(every_descriptor_kind_answers_as_the_kernel)
{
	io_context_t kctx = NULL, lctx = new_ctx(8);
	static const short evs[] = { POLLIN, POLLOUT, POLLPRI,
				     POLLIN | POLLOUT };
	struct fd_kind k[24];
	int nk = 0, i, j, p[2], sv[2], m, sl, tf, closed, path_dir, path_file;
	int fifo, loadavg;
	char fifo_path[4096];
	sigset_t mask;

	test_hang_guard("every_descriptor_kind_answers_as_the_kernel", 60);
	ck_assert_int_eq(test_sys_io_setup(8, &kctx), 0);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	open_pty(&m, &sl);
	tf = test_tmpfile(16);
	path_dir = open(tmpdir(), O_PATH | O_CLOEXEC);
	path_file = open("/dev/null", O_PATH | O_CLOEXEC);
	snprintf(fifo_path, sizeof(fifo_path), "%s/libaio-fifo-%ld", tmpdir(),
		 (long)getpid());
	ck_assert_int_eq(mkfifo(fifo_path, 0600), 0);
	fifo = open(fifo_path, O_RDWR | O_CLOEXEC);
	unlink(fifo_path);
	loadavg = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	closed = dup(p[0]);	/* last: no later open may take its number */
	close(closed);
	sigemptyset(&mask);
	sigaddset(&mask, SIGURG);
#define KIND(n, f, h) do {						\
		k[nk].name = (n);					\
		k[nk].fd = (f);						\
		k[nk].how = (h);					\
		ck_assert_msg(k[nk].fd >= 0 || (h) == FD_CLOSED,	\
			      "cannot make a %s", (n));			\
		nk++;							\
	} while (0)
	KIND("regular file", tf, FD_PLAIN);
	KIND("directory", open(tmpdir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	     FD_PLAIN);
	KIND("O_PATH directory", path_dir, FD_PLAIN);
	KIND("O_PATH file", path_file, FD_PLAIN);
	KIND("/dev/null", open("/dev/null", O_RDWR | O_CLOEXEC), FD_PLAIN);
	KIND("pipe read end", p[0], FD_PLAIN);
	KIND("pipe write end", p[1], FD_PLAIN);
	KIND("socketpair", sv[0], FD_PLAIN);
	KIND("eventfd", eventfd(0, EFD_CLOEXEC), FD_PLAIN);
	KIND("epoll", epoll_create1(EPOLL_CLOEXEC), FD_PLAIN);
	KIND("timerfd", timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), FD_PLAIN);
	KIND("signalfd", signalfd(-1, &mask, SFD_CLOEXEC), FD_PLAIN);
	KIND("memfd", memfd_create("poll-kind", MFD_CLOEXEC), FD_PLAIN);
	KIND("inotify", inotify_init1(IN_CLOEXEC), FD_PLAIN);
	KIND("pty master", m, FD_TWO_QUEUES);
	KIND("pty slave", sl, FD_TWO_QUEUES);
	KIND("FIFO open for reading and writing", fifo, FD_TWO_QUEUES);
	if (loadavg >= 0)
		KIND("/proc/loadavg", loadavg, FD_NEVER_WAITS);
	else
		fprintf(stderr, "every_descriptor_kind_answers_as_the_kernel: "
				"no /proc here, /proc/loadavg left out\n");
	KIND("closed descriptor", closed, FD_CLOSED);
#undef KIND
	for (i = 0; i < nk; i++)
		for (j = 0; j < (int)(sizeof(evs) / sizeof(evs[0])); j++)
			poll_as_the_kernel(kctx, lctx, &k[i], evs[j]);
	test_hang_guard(NULL, 0);
	for (i = 0; i < nk; i++)
		if (k[i].how != FD_CLOSED)
			close(k[i].fd);
	close(sv[1]);
	ck_assert_int_eq(test_sys_io_destroy(kctx), 0);
	ck_assert_int_eq(io_destroy(lctx), 0);
}
END_TEST

/*
 * io_destroy racing an io_submit of emulated polls (ptys, emulated in every
 * mode): whatever the interleaving, after both return nothing of the
 * context is armed or open (the library's duplicates are closed) and a new
 * context, perhaps at the same address, sees none of its completions.
 */
struct racer {
	io_context_t ctx;
	pthread_barrier_t *go;
	struct iocb *list[64];
	int ret;
};

static void *submit_racer(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(r->go);
	r->ret = io_submit(r->ctx, 64, r->list);
	return NULL;
}

START_TEST(destroy_racing_submit_leaves_nothing_armed)
{
	static struct iocb cbs[64];
	pthread_barrier_t go;
	struct racer rc;
	struct io_event ev;
	struct iocb warm;
	int m, sl, i, round, base, rounds = test_under_valgrind() ? 20 : 200;
	int partial = 0, refused = 0, whole = 0;

	test_hang_guard("destroy_racing_submit_leaves_nothing_armed", 120);
	open_pty(&m, &sl);
	/* Warm up: the emulation's own descriptors exist from here on. */
	{
		io_context_t c = new_ctx(8);

		prep_poll(&warm, m, POLLIN, 1);
		ck_assert_int_eq(submit1(c, &warm), 1);
		ck_assert_int_eq(io_cancel(c, &warm, &ev), -EINPROGRESS);
		ev = wait_one(c);
		ck_assert_int_eq(io_destroy(c), 0);
	}
	base = count_open_fds();
	ck_assert_int_eq(pthread_barrier_init(&go, NULL, 2), 0);
	for (round = 0; round < rounds; round++) {
		pthread_t t;
		io_context_t ctx2;
		int d;

		memset(&rc, 0, sizeof(rc));
		rc.ctx = new_ctx(64);
		rc.go = &go;
		for (i = 0; i < 64; i++) {
			prep_poll(&cbs[i], m, POLLIN, 100 + i);
			rc.list[i] = &cbs[i];
		}
		ck_assert_int_eq(pthread_create(&t, NULL, submit_racer, &rc), 0);
		pthread_barrier_wait(&go);
		d = io_destroy(rc.ctx);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		ck_assert_int_eq(d, 0);
		ck_assert_msg(rc.ret == -EINVAL || (rc.ret >= 0 && rc.ret <= 64),
			      "io_submit returned %d", rc.ret);
		refused += rc.ret == -EINVAL;
		whole += rc.ret == 64;
		partial += rc.ret >= 0 && rc.ret < 64;
		/* Nothing of the old context is open. */
		ck_assert_int_eq(count_open_fds(), base);
		/* A new context (the kernel may reuse the address) gets only
		 * its own completion once the pty turns readable. */
		ctx2 = new_ctx(8);
		prep_poll(&warm, m, POLLIN, 7);
		ck_assert_int_eq(submit1(ctx2, &warm), 1);
		ck_assert_int_eq(write(sl, "x", 1), 1);
		ev = wait_one(ctx2);
		ck_assert_ptr_eq(ev.obj, &warm);
		{
			char c;

			ck_assert_int_eq(read(m, &c, 1), 1);
		}
		if (round == rounds - 1)
			expect_none(ctx2);
		ck_assert_int_eq(io_destroy(ctx2), 0);
	}
	pthread_barrier_destroy(&go);
	test_hang_guard(NULL, 0);
	/* Which interleavings occurred (for the log; any mix is right). */
	fprintf(stderr, "destroy race: %d refused, %d partial, %d whole\n",
		refused, partial, whole);
	close(m);
	close(sl);
}
END_TEST

/*
 * A signal handler that submits, cancels and reaps an emulated poll on its
 * own context, interrupting a thread that is doing the same on another:
 * the interrupted thread may be inside the emulation's lock, which must
 * never make the handler wait for it.
 */
static io_context_t handler_ctx;
static int handler_fd;
static _Atomic int handled, handler_failed;

static void poll_in_handler(int sig)
{
	struct timespec guard = { GUARD_S, 0 };
	struct iocb cb, *p = &cb;
	struct io_event ev;
	int e = errno;

	(void)sig;
	io_prep_poll(&cb, handler_fd, POLLIN);
	if (io_submit(handler_ctx, 1, &p) != 1 ||
	    io_cancel(handler_ctx, &cb, &ev) != -EINPROGRESS ||
	    io_getevents(handler_ctx, 1, 1, &ev, &guard) != 1 || ev.obj != &cb)
		handler_failed = 1;
	handled++;
	errno = e;
}

struct kicker {
	pthread_t target;
	int n;
	_Atomic int done;
};

static void *kick_main(void *arg)
{
	struct kicker *k = arg;
	int i;

	for (i = 0; i < k->n; i++) {
		pthread_kill(k->target, SIGUSR1);
		while (handled <= i)
			usleep(50);
	}
	k->done = 1;
	return NULL;
}

START_TEST(signal_handler_polls_while_its_thread_is_in_the_library)
{
	struct sigaction sa, old;
	struct kicker k;
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	struct io_event ev;
	struct iocb keeper;
	pthread_t t;
	int m, sl, hm, hs, km, ks, n, loops = 0;

	test_hang_guard("signal_handler_polls_while_its_thread_is_in_the_library",
			90);
	open_pty(&m, &sl);
	open_pty(&hm, &hs);
	handler_ctx = new_ctx(8);
	handler_fd = hm;
	handled = handler_failed = 0;
	/* A helper thread starts with the first poll it serves and leaves
	 * with the last; starting one is async-signal-safe (clone) except in
	 * ThreadSanitizer builds, where it is a pthread: a poll kept armed
	 * for the whole test keeps it running, as io_prep_poll(3) advises. */
	open_pty(&km, &ks);
	prep_poll(&keeper, km, POLLIN, 99);
	ck_assert_int_eq(submit1(ctx, &keeper), 1);
	poll_in_handler(0);
	ck_assert_int_eq(handler_failed, 0);
	handled = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = poll_in_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, &old), 0);
	memset(&k, 0, sizeof(k));
	k.target = pthread_self();
	k.n = test_under_valgrind() ? 100 : 2000;
	ck_assert_int_eq(pthread_create(&t, NULL, kick_main, &k), 0);
	while (!k.done) {
		struct timespec guard = { GUARD_S, 0 };

		io_prep_poll(&cb, m, POLLIN);
		ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
		ck_assert_int_eq(io_cancel(ctx, &cb, &ev), -EINPROGRESS);
		/* A kernel-carried poll's cancel completes a moment later,
		 * so the handler may interrupt this wait, as it would a
		 * native poll's: EINTR, then wait again. */
		while ((n = io_getevents(ctx, 1, 1, &ev, &guard)) == -EINTR)
			;
		ck_assert_int_eq(n, 1);
		ck_assert_ptr_eq(ev.obj, &cb);
		loops++;
	}
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(sigaction(SIGUSR1, &old, NULL), 0);
	test_hang_guard(NULL, 0);
	ck_assert_int_eq(handler_failed, 0);
	ck_assert_int_eq(handled, k.n);
	ck_assert_int_gt(loops, 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	ck_assert_int_eq(io_destroy(handler_ctx), 0);
	close(m);
	close(sl);
	close(hm);
	close(hs);
	close(km);
	close(ks);
}
END_TEST

/* The library's duplicate of fd: another descriptor on the same file,
 * not fd itself; -1 if there is none. */
static int duplicate_of(int fd)
{
	struct stat want, st;
	int i;

	ck_assert_int_eq(fstat(fd, &want), 0);
	for (i = 3; i < 1024; i++)
		if (i != fd && fstat(i, &st) == 0 && st.st_dev == want.st_dev &&
		    st.st_ino == want.st_ino)
			return i;
	return -1;
}

/* Poll a pty master (served by the library in every mode) three times,
 * closing the library's duplicates after each of the first two: each new
 * duplicate first gets a closed one's number, whose registration is still
 * in the epoll set.  cancel: cancel the first poll then. */
static void polls_after_duplicates_closed(int cancel)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb[3];
	struct io_event ev;
	int m, sl, i, d, got[3] = { 0, 0, 0 };

	open_pty(&m, &sl);
	for (i = 0; i < 3; i++) {
		prep_poll(&cb[i], m, POLLIN, (uintptr_t)i + 1);
		ck_assert_int_eq(submit1(ctx, &cb[i]), 1);
		if (i == 2)
			break;
		if (!poll_emulated()) {
			/* Carried by the kernel: no duplicate to close. */
			ck_assert_int_eq(duplicate_of(m), -1);
			continue;
		}
		ck_assert_int_ge(duplicate_of(m), 0);
		while ((d = duplicate_of(m)) >= 0)
			ck_assert_int_eq(close(d), 0);
	}
	if (cancel) {
		ck_assert_int_eq(io_cancel(ctx, &cb[0], &ev), -EINPROGRESS);
		ev = wait_one(ctx);
		ck_assert_ptr_eq(ev.obj, &cb[0]);
		ck_assert_uint_eq(ev.res, 0);
		got[0] = 1;
	}
	expect_none(ctx);
	ck_assert_int_eq(write(sl, "x", 1), 1);
	for (i = cancel; i < 3; i++) {
		ev = wait_one(ctx);
		d = (int)((struct iocb *)ev.obj - cb);
		ck_assert(d >= 0 && d < 3);
		check_event(&ev, &cb[d], (uintptr_t)d + 1, POLLIN);
		got[d]++;
	}
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(got[i], 1);
	ck_assert_int_eq(io_destroy(ctx), 0);
	/* Nothing of the library's is left on the file. */
	ck_assert_int_eq(duplicate_of(m), -1);
	close(sl);
	close(m);
}

/* Each poll keeps its own registration: none is lost, and cancelling
 * the first leaves the others armed. */
START_TEST(polls_survive_their_duplicate_closed_and_reused)
{
	polls_after_duplicates_closed(0);
	polls_after_duplicates_closed(1);
}
END_TEST

/*
 * A program closes every descriptor it does not know (as daemons do) while
 * an emulated poll is armed, then opens epoll sets of its own, which get
 * the library's old numbers.  The library must notice: the poll whose
 * duplicate was closed completes with POLLNVAL, the next poll works, and
 * the program's epoll sets and eventfd are never touched.
 */
#define MAX_FD_SEEN 1024

static int is_library_kind(int fd)
{
	char path[64], link[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	/* Check itself uses none of these; the library's may be left from
	 * earlier tests when Check does not fork. */
	return !strncmp(link, "/memfd:libaio-doorbell", 22) ||
	       !strcmp(link, "anon_inode:[eventpoll]") ||
	       !strncmp(link, "pipe:", 5);
}

static void mark_open_fds(unsigned char *known, int skip_library)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(d) || fd >= MAX_FD_SEEN)
			continue;
		if (!skip_library || !is_library_kind(fd))
			known[fd] = 1;
	}
	closedir(d);
}

static int epoll_tfd_count(int ep)
{
	char path[64], line[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "tfd:", 4);
	fclose(f);
	return n;
}

/* Close every descriptor the program does not know; the highest closed,
 * or -1. */
static int close_unknown_fds(const unsigned char *known)
{
	int i, closed_max = -1;

	for (i = 3; i < MAX_FD_SEEN; i++)
		if (!known[i] && fcntl(i, F_GETFD) >= 0) {
			close(i);
			closed_max = i;
		}
	return closed_max;
}

/* The program's own epoll sets take the numbers up to closed_max, each
 * watching the program's eventfd (one registration apiece); how many. */
static int epolls_take_numbers(int prog_efd, int closed_max, int *eps)
{
	struct epoll_event pev;
	int neps = 0;

	memset(&pev, 0, sizeof(pev));
	pev.events = EPOLLIN;
	pev.data.u64 = 0x1111;
	do {
		int ep = epoll_create1(EPOLL_CLOEXEC);

		ck_assert_int_ge(ep, 0);
		ck_assert_int_eq(epoll_ctl(ep, EPOLL_CTL_ADD, prog_efd, &pev), 0);
		eps[neps++] = ep;
	} while (eps[neps - 1] < closed_max && neps < MAX_FD_SEEN);
	return neps;
}

/* Both polls, the one armed before the clean-up and the next, complete. */
static void armed_and_next_complete(io_context_t ctx, struct iocb *armed,
				    struct iocb *next)
{
	struct io_event ev[2];
	struct timespec guard = { GUARD_S, 0 };
	int i, n, got_armed = 0, got_next = 0;

	for (i = 0; i < 2 && !(got_armed && got_next); i++) {
		n = io_getevents(ctx, 1, 1, ev, &guard);
		ck_assert_msg(n == 1, "completion lost (%d)", n);
		if (ev[0].obj == armed) {
			/* The polled descriptor is open: the program's
			 * clean-up must not have failed the poll. */
			check_event(&ev[0], armed, 2, POLLIN);
			got_armed = 1;
		} else {
			check_event(&ev[0], next, 3, POLLIN);
			got_next = 1;
		}
	}
	ck_assert(got_armed && got_next);
}

/* The program's descriptors were left alone. */
static void program_fds_left_alone(const int *eps, int neps, int prog_efd,
				   const unsigned char *known)
{
	uint64_t count;
	int i;

	for (i = 0; i < neps; i++) {
		struct epoll_event out;

		ck_assert_int_ge(fcntl(eps[i], F_GETFD), 0);
		ck_assert_int_eq(epoll_tfd_count(eps[i]), 1);
		ck_assert_int_eq(epoll_wait(eps[i], &out, 1, 0), 0);
	}
	ck_assert_int_eq(read(prog_efd, &count, sizeof(count)), -1);
	ck_assert_int_eq(errno, EAGAIN);
	for (i = 3; i < MAX_FD_SEEN; i++)
		if (known[i])
			ck_assert_msg(fcntl(i, F_GETFD) >= 0, "fd %d closed", i);
}

START_TEST(library_descriptors_closed_behind_its_back)
{
	static unsigned char known[MAX_FD_SEEN];
	io_context_t ctx = new_ctx(8);
	struct iocb warm, armed, next;
	struct io_event ev[2];
	int m, sl, prog_efd, eps[MAX_FD_SEEN], neps, closed_max;
	int i;

	test_hang_guard("library_descriptors_closed_behind_its_back", 60);
	memset(known, 0, sizeof(known));
	open_pty(&m, &sl);
	prog_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ck_assert_int_ge(prog_efd, 0);
	mark_open_fds(known, 1);
	known[m] = known[sl] = known[prog_efd] = 1;

	/* The emulation makes its descriptors; one poll stays armed. */
	prep_poll(&warm, m, POLLIN, 1);
	ck_assert_int_eq(submit1(ctx, &warm), 1);
	ck_assert_int_eq(io_cancel(ctx, &warm, &ev[0]), -EINPROGRESS);
	ev[0] = wait_one(ctx);
	prep_poll(&armed, m, POLLIN, 2);
	ck_assert_int_eq(submit1(ctx, &armed), 1);

	closed_max = close_unknown_fds(known);
	/* Only the helper's emulation keeps descriptors to close; a poll
	 * the kernel carries leaves none (and the program may have no
	 * pipe of its own either). */
	if (poll_emulated())
		ck_assert_int_ge(closed_max, 3);
	neps = epolls_take_numbers(prog_efd, closed_max, eps);

	/* The next emulated poll works. */
	prep_poll(&next, m, POLLIN, 3);
	ck_assert_int_eq(submit1(ctx, &next), 1);
	ck_assert_int_eq(write(sl, "x", 1), 1);
	armed_and_next_complete(ctx, &armed, &next);
	program_fds_left_alone(eps, neps, prog_efd, known);
	test_hang_guard(NULL, 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	for (i = 0; i < neps; i++)
		close(eps[i]);
	close(prog_efd);
	close(m);
	close(sl);
}
END_TEST

/*
 * fork right after the first emulated poll of a process, which starts the
 * helper thread: the child's own first poll must work.  (The helper may
 * still be starting inside the C library or a sanitizer runtime, holding
 * an allocator lock the child would inherit.)
 */
static int fork_grandchild_polls(void)
{
	struct timespec ts = { GUARD_S, 0 };
	io_context_t c = NULL;
	struct iocb cb, *p = &cb;
	struct io_event e;
	struct termios tio;
	int m, s;

	m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) || unlockpt(m))
		return 10;
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	if (s < 0 || tcgetattr(s, &tio))
		return 11;
	cfmakeraw(&tio);
	if (tcsetattr(s, TCSANOW, &tio) || io_setup(8, &c))
		return 12;
	io_prep_poll(&cb, m, POLLIN);
	if (io_submit(c, 1, &p) != 1)
		return 13;
	if (write(s, "y", 1) != 1)
		return 14;
	if (io_getevents(c, 1, 1, &e, &ts) != 1 || e.obj != &cb ||
	    !(e.res & POLLIN))
		return 15;
	return io_destroy(c) == 0 ? 0 : 16;
}

static int fork_child_first_poll_then_fork(void)
{
	io_context_t c = NULL;
	struct iocb cb, *p = &cb;
	int q[2], st;
	pid_t pid;

	/* A fresh process: the helper thread starts in this io_submit. */
	if (io_setup(8, &c) || pipe(q))
		return 20;
	io_prep_poll(&cb, q[0], POLLIN);
	cb.aio_fildes = (unsigned)q[0];
	{
		int m, s;
		struct termios tio;

		m = posix_openpt(O_RDWR | O_NOCTTY);
		if (m < 0 || grantpt(m) || unlockpt(m))
			return 21;
		s = open(ptsname(m), O_RDWR | O_NOCTTY);
		if (s < 0 || tcgetattr(s, &tio))
			return 22;
		io_prep_poll(&cb, m, POLLIN);	/* emulated in every mode */
		if (io_submit(c, 1, &p) != 1)
			return 23;
	}
	pid = fork();
	if (pid < 0)
		return 24;
	if (pid == 0)
		_exit(fork_grandchild_polls());
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 25;
	return WEXITSTATUS(st);
}

START_TEST(fork_right_after_the_helper_starts)
{
	int round, rounds = test_under_valgrind() ? 3 : 10;

	test_hang_guard("fork_right_after_the_helper_starts",
			(unsigned)(rounds * (GUARD_S + 5)));
	for (round = 0; round < rounds; round++) {
		pid_t pid = fork();
		int st;

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			/* The child of this test process: new helper. */
			_exit(fork_child_first_poll_then_fork());
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFEXITED(st));
		ck_assert_msg(WEXITSTATUS(st) == 0, "round %d: child exit %d",
			      round, WEXITSTATUS(st));
	}
	test_hang_guard(NULL, 0);
}
END_TEST

/* Does another process see a lock on fd's file?  A process never
 * conflicts with its own record locks, so a child asks. */
static int locked_for_others(int fd)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		if (fcntl(fd, F_GETLK, &fl) < 0)
			_exit(2);
		_exit(fl.l_type == F_UNLCK ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_ne(WEXITSTATUS(st), 2);
	return WEXITSTATUS(st);
}

/* Lock fd's whole file, poll it for POLLIN (ready now), reap: the lock
 * must still be there. */
static void ready_poll_keeps_lock(io_context_t ctx, int fd, uintptr_t tag)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct iocb cb;
	struct io_event ev;

	ck_assert_int_eq(fcntl(fd, F_SETLK, &fl), 0);
	ck_assert_int_eq(locked_for_others(fd), 1);
	prep_poll(&cb, fd, POLLIN, tag);
	ck_assert_int_eq(submit1(ctx, &cb), 1);
	ev = wait_one(ctx);
	check_event(&ev, &cb, tag, POLLIN);
	ck_assert_msg(locked_for_others(fd) == 1,
		      "poll %lu dropped the program's record lock",
		      (unsigned long)tag);
}

/*
 * Record (fcntl) locks belong to the process and the file, and closing any
 * descriptor of the file drops them all.  The kernel's poll holds the
 * file without a descriptor, so polling never drops a lock.  A poll that
 * is ready when it is submitted must not either, in every mode: a
 * regular file and a pty with input waiting, both emulated with
 * LIBAIO_DISABLE=poll.  (The kernel refuses a pty that is not ready, so
 * that one is emulated in every mode; a ready one it completes itself.)
 * Nor may a poll that is refused: POLLPRI on a regular file, which has no
 * poll method, gets EINVAL from the kernel, and then from the emulation
 * in every mode (the library asks it to try, since a pty gets the same
 * EINVAL from the kernel).
 */
START_TEST(ready_or_refused_polls_keep_the_programs_record_locks)
{
	io_context_t ctx = new_ctx(8);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct pollfd pfd;
	struct iocb cb;
	int fd = test_tmpfile(4096), m, s;

	ready_poll_keeps_lock(ctx, fd, 70);
	ck_assert_int_eq(fcntl(fd, F_SETLK, &fl), 0);
	prep_poll(&cb, fd, POLLPRI, 72);
	ck_assert_int_eq(submit1(ctx, &cb), -EINVAL);
	ck_assert_msg(locked_for_others(fd) == 1,
		      "a refused poll dropped the program's record lock");
	open_pty(&m, &s);
	ck_assert_int_eq(write(m, "x", 1), 1);
	pfd.fd = s;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, GUARD_S * 1000), 1);	/* input arrived */
	ready_poll_keeps_lock(ctx, s, 71);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
	close(m);
	close(s);
}
END_TEST


/* The child of polls_work_when_process_vm_calls_are_refused: 0, or the
 * step that went wrong. */
static int refused_vm_calls_child(void)
{
	static const long vm[] = { SYS_process_vm_readv, SYS_process_vm_writev };
	struct timespec guard = { GUARD_S, 0 };
	struct iocb cbs[3], *ios[3] = { &cbs[0], &cbs[1], &cbs[2] };
	struct io_event ev[3];
	io_context_t ctx = NULL;
	unsigned char byte;
	int p[2], fd = test_tmpfile(4096), got = 0, n;

	if (test_seccomp_errno(vm, 2, ENOSYS) != 0)
		return 77;
	if (pipe(p) != 0 || io_setup(8, &ctx) != 0)
		return 2;
	prep_poll(&cbs[0], p[1], POLLOUT, 80);		/* ready now */
	io_prep_pread(&cbs[1], fd, &byte, 1, 0);
	prep_poll(&cbs[2], p[0], POLLIN, 82);		/* armed */
	if (io_submit(ctx, 3, ios) != 3)
		return 3;
	if (write(p[1], "x", 1) != 1)
		return 4;
	while (got < 3) {
		n = io_getevents(ctx, 1, 3 - got, ev, &guard);
		if (n <= 0)
			return 5;
		got += n;
	}
	return io_destroy(ctx) == 0 ? 0 : 6;
}

/*
 * With LIBAIO_DISABLE=poll the library stores poll keys through
 * process_vm_writev (so that a read-only iocb gets EFAULT, not SIGSEGV).
 * A seccomp filter that refuses those calls must cost nothing but that:
 * polls and reads in one batch still work, with plain stores.
 */
START_TEST(polls_work_when_process_vm_calls_are_refused)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(refused_vm_calls_child());
	test_expect_child(pid, "polls_work_when_process_vm_calls_are_refused",
			    "no seccomp filter here");
}
END_TEST

/* A poll of a /proc file that is not ready: the kernel's EINVAL stands
 * (the library must know the file's type, from fstat if not statx).
 * With LIBAIO_DISABLE=poll (or all) the library accepts it, as
 * documented. */
static int never_waits_answers_as_the_kernel(io_context_t ctx)
{
	struct iocb cb, *p = &cb;
	io_context_t kctx = NULL;
	int fd, r, ours;

	if (env_disables("poll"))
		return 0;
	fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* no /proc: nothing to compare */
	if (test_sys_io_setup(1, &kctx) != 0)
		return 1;
	prep_poll(&cb, fd, POLLPRI, 11);
	r = (int)test_sys_io_submit(kctx, 1, &p);
	ours = r == -EINVAL ? io_submit(ctx, 1, &p) : -EINVAL;
	test_sys_io_destroy(kctx);
	close(fd);
	return ours == -EINVAL ? 0 : 1;
}

/* A pty pair, the slave in raw mode; 0, or -1 when one step fails. */
static int raw_pty(int *m, int *sl)
{
	struct termios tio;

	*m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*m < 0 || grantpt(*m) || unlockpt(*m))
		return -1;
	*sl = open(ptsname(*m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*sl < 0 || tcgetattr(*sl, &tio))
		return -1;
	cfmakeraw(&tio);
	return tcsetattr(*sl, TCSANOW, &tio) ? -1 : 0;
}

/* Each number in mine[] (the library's descriptors) becomes the read end
 * of a pipe of the program's, close-on-exec like the library's, holding
 * one byte nobody may read; 0, or -1 when one step fails. */
static int take_numbers_with_pipes(const int *mine, int nmine)
{
	int i, q[2];

	for (i = 0; i < nmine; i++) {
		if (pipe2(q, O_CLOEXEC) || write(q[1], "p", 1) != 1 ||
		    dup3(q[0], mine[i], O_CLOEXEC) != mine[i])
			return -1;
		close(q[0]);
	}
	return 0;
}

/* Both polls complete, each once: 0, 8 when the reap fails, 9 on any
 * other event. */
static int reap_armed_and_next(io_context_t ctx, struct iocb *armed,
			       struct iocb *next)
{
	struct timespec guard = { GUARD_S, 0 };
	struct io_event ev;
	int got = 0;

	while (got != 3) {
		if (io_getevents(ctx, 1, 1, &ev, &guard) != 1)
			return 8;
		if (ev.obj == armed && !(got & 1))
			got |= 1;	/* POLLNVAL or POLLIN: either is fair */
		else if (ev.obj == next && (ev.res & POLLIN) && !(got & 2))
			got |= 2;
		else
			return 9;
	}
	return 0;
}

/* The child of polls_work_without_statx_or_kcmp: 0, 77 (no seccomp) or
 * the step that went wrong.  No ck_assert here: with CK_FORK=no a failed
 * one would unwind into a copy of the runner. */
static int without_statx_or_kcmp_child(void)
{
	/* On loongarch64, statx is the only way the C library knows to stat
	 * a file (fstat included), and every kernel of the architecture
	 * (5.19 on) has it: only kcmp can be missing there. */
	static const long refused[] = {
#if defined(SYS_statx) && !defined(__loongarch64)
		SYS_statx,
#endif
#ifdef SYS_kcmp
		SYS_kcmp,
#endif
	};
	static unsigned char known[MAX_FD_SEEN];
	struct iocb armed, next, *ios[1];
	io_context_t ctx = NULL;
	int m, sl, i, mine[MAX_FD_SEEN], nmine = 0, left, ret;

	if (test_seccomp_errno(refused, sizeof(refused) / sizeof(refused[0]),
			       ENOSYS) != 0)
		return 77;
	if (raw_pty(&m, &sl) || io_setup(8, &ctx))
		return 2;
	if (never_waits_answers_as_the_kernel(ctx) != 0)
		return 12;
	for (i = 3; i < MAX_FD_SEEN; i++)
		known[i] = fcntl(i, F_GETFD) >= 0;
	/* A pty is emulated in every mode: the library makes its
	 * descriptors, and this poll stays armed. */
	prep_poll(&armed, m, POLLIN, 1);
	ios[0] = &armed;
	if (io_submit(ctx, 1, ios) != 1)
		return 3;
	/* Each new descriptor (the library's) becomes a pipe of the
	 * program's, close-on-exec like the library's, holding one byte
	 * nobody may read.  All are listed first: the pipes take numbers. */
	for (i = 3; i < MAX_FD_SEEN; i++)
		if (!known[i] && fcntl(i, F_GETFD) >= 0)
			mine[nmine++] = i;
	/* Only the helper's emulation keeps descriptors; the kernel
	 * carries a refused poll with none. */
	if (nmine == 0 && poll_emulated())
		return 5;
	if (nmine != 0 && !poll_emulated())
		return 13;
	if (take_numbers_with_pipes(mine, nmine) != 0)
		return 4;
	prep_poll(&next, m, POLLIN, 3);
	ios[0] = &next;
	if (io_submit(ctx, 1, ios) != 1)
		return 6;
	if (write(sl, "x", 1) != 1)
		return 7;
	ret = reap_armed_and_next(ctx, &armed, &next);
	if (ret != 0)
		return ret;
	/* The program's pipes are open and still hold their byte. */
	for (i = 0; i < nmine; i++)
		if (fcntl(mine[i], F_GETFD) < 0 ||
		    ioctl(mine[i], FIONREAD, &left) || left != 1)
			return 10;
	return io_destroy(ctx) == 0 ? 0 : 11;
}

/*
 * On a kernel without statx or kcmp (statx came in 4.11, and a seccomp
 * filter may refuse either) the library must still know a file's type
 * and tell its descriptors from the program's: a /proc file gets the
 * kernel's EINVAL, and when the program puts pipes of its own at the
 * numbers of the library's descriptors, they are left alone.
 */
START_TEST(polls_work_without_statx_or_kcmp)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(without_statx_or_kcmp_child());
	test_expect_child(pid, "polls_work_without_statx_or_kcmp",
			    "no seccomp filter here");
}
END_TEST

/* In a thread left behind by a main thread's pthread_exit: return once
 * the main thread is a zombie; exit 77 without /proc, 5 if it never is. */
static void wait_until_main_thread_exits(void)
{
	char path[64], st[256];
	int i, n, fd;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", (long)getpid());
	for (i = 0; i < 20000; i++) {	/* up to about 20 s */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(77);	/* no /proc: cannot tell */
		n = (int)read(fd, st, sizeof(st) - 1);
		close(fd);
		st[n > 0 ? n : 0] = '\0';
		if (strstr(st, ") Z ") || strstr(st, ") X "))
			return;
		usleep(1000);
	}
	_exit(5);
}

/* The thread left behind by read_only_poll_after_the_main_thread_exits:
 * once the main thread is a zombie, submits a poll iocb that lies in
 * read-only memory. */
static void *orphan_submits(void *arg)
{
	struct iocb *ro;
	io_context_t ctx = NULL;
	int p[2];

	(void)arg;
	wait_until_main_thread_exits();
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || pipe(p) != 0 || io_setup(4, &ctx) != 0)
		_exit(2);
	io_prep_poll(ro, p[1], POLLOUT);
	if (mprotect(ro, 4096, PROT_READ) != 0)
		_exit(2);
	_exit(io_submit(ctx, 1, &ro) == -EFAULT ? 0 : 3);
}

/*
 * Once the main thread has exited, the process id names a zombie: a
 * system call aimed at it (process_vm_writev, which the forced emulation
 * stores a poll's key with) fails with ESRCH.  A poll iocb in read-only
 * memory must still get the kernel's EFAULT, in every mode, not a
 * SIGSEGV.
 */
START_TEST(read_only_poll_after_the_main_thread_exits_gets_efault)
{
	pid_t pid;

	if (test_under_valgrind()) {
		/* The main thread's stack goes with pthread_exit, and with it
		 * the only pointers to the test framework's allocations:
		 * memcheck would count them as leaks of the child. */
		test_skip("under valgrind: its leak check would count the "
			  "runner's allocations");
		return;
	}
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, orphan_submits, NULL) != 0)
			_exit(4);
		pthread_exit(NULL);
	}
	test_expect_child(pid,
			    "read_only_poll_after_the_main_thread_exits_gets_efault",
			    "no /proc here");
}
END_TEST

/* Threads in this process (the zombie main thread counts): 0 if unknown. */
static int task_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Descriptors open below 1024, counted without /proc/self/fd (the
 * zombie main thread's, which has none). */
static int fds_open(void)
{
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* ThreadSanitizer runs a thread of its own, so such a process is never
 * down to its zombie main thread and the library's helper: the helper
 * cannot tell that the program's threads are gone, and the process does
 * not end by itself. */
#if defined(__SANITIZE_THREAD__)
# define EXTRA_RUNTIME_THREAD 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define EXTRA_RUNTIME_THREAD 1
# endif
#endif
#ifndef EXTRA_RUNTIME_THREAD
# define EXTRA_RUNTIME_THREAD 0
#endif

/* The thread left behind by polls_work_after_the_main_thread_exits: the
 * step that failed as the exit status; returns (exit status 0, if the
 * process ends) with a poll still armed. */
static void *orphan_polls(void *arg)
{
	struct timespec guard = { GUARD_S, 0 };
	struct iocb cb, *ios[1] = { &cb };
	struct io_event ev;
	io_context_t ctx = NULL;
	struct termios tio;
	int m, sl, round, fds = 0;
	char c;

	(void)arg;
	wait_until_main_thread_exits();
	if (!EXTRA_RUNTIME_THREAD && task_count() != 2)
		_exit(2);		/* the zombie and this thread */
	/* A pty: the kernel refuses its poll, so it is emulated in every
	 * mode. */
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) || unlockpt(m))
		_exit(77);
	sl = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (sl < 0 || tcgetattr(sl, &tio))
		_exit(3);
	cfmakeraw(&tio);
	if (tcsetattr(sl, TCSANOW, &tio) || io_setup(8, &ctx))
		_exit(3);
	for (round = 0; round < 3; round++) {
		io_prep_poll(&cb, m, POLLIN);
		if (io_submit(ctx, 1, ios) != 1 || write(sl, "x", 1) != 1)
			_exit(4);
		if (io_getevents(ctx, 1, 1, &ev, &guard) != 1 ||
		    ev.obj != &cb || !(ev.res & POLLIN) || read(m, &c, 1) != 1)
			_exit(5);
		if (round == 0)
			fds = fds_open();
	}
	/* The library keeps what it made for the first round, no more. */
	if (fds_open() != fds)
		_exit(6);
	/* A RESFD that is no eventfd (told by /proc): refused as by the
	 * kernel. */
	io_prep_poll(&cb, m, POLLIN);
	io_set_eventfd(&cb, sl);
	if (io_submit(ctx, 1, ios) != -EINVAL || io_destroy(ctx) != 0)
		_exit(10);
	/* A poll left armed: the process must end all the same. */
	ctx = NULL;
	io_prep_poll(&cb, m, POLLIN);
	if (io_setup(8, &ctx) || io_submit(ctx, 1, ios) != 1)
		_exit(8);
	if (EXTRA_RUNTIME_THREAD)
		_exit(0);
	return NULL;
}

/* Registered last, run first at exit: the process ends here, status 0. */
static void end_now(void)
{
	_exit(0);
}

/*
 * After the main thread's pthread_exit, emulated polls still complete
 * (the library's descriptor checks look at the calling thread's file
 * table, not the zombie main thread's, which has none), nothing leaks, a
 * RESFD that is no eventfd is still refused, and when the last thread of
 * the program leaves, the process ends even with a poll armed: the
 * library's helper thread does not keep it alive.
 */
START_TEST(polls_work_after_the_main_thread_exits)
{
	pid_t pid;

	if (test_under_valgrind()) {
		/* As in read_only_poll_after_the_main_thread_exits. */
		test_skip("under valgrind: its leak check would count the "
			  "runner's allocations");
		return;
	}
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pthread_t t;

		/* The process ends through exit, where LeakSanitizer would
		 * count what only the main thread's stack held as leaks. */
		if (atexit(end_now) != 0 ||
		    pthread_create(&t, NULL, orphan_polls, NULL) != 0)
			_exit(9);
		pthread_exit(NULL);
	}
	test_expect_child(pid, "polls_work_after_the_main_thread_exits",
			    "no /proc or no pty here");
}
END_TEST

/* The library never changes errno. */
START_TEST(errno_is_kept)
{
	io_context_t ctx = new_ctx(8);
	struct iocb cb, *p = &cb;
	struct io_event ev;
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	prep_poll(&cb, fds[0], POLLIN, 50);
	ck_assert_errno_kept(io_submit(ctx, 1, &p));
	ck_assert_errno_kept(io_cancel(ctx, &cb, &ev));
	ev = wait_one(ctx);
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("poll");
	TCase *t = tcase_create("poll");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, features_match_the_mode);
	tcase_add_test(t, pipe_becomes_readable);
	tcase_add_test(t, socketpair_in_and_out);
	tcase_add_test(t, eventfd_in_and_out);
	tcase_add_test(t, pipe_write_end_pollout_and_hup);
	tcase_add_test(t, one_shot_until_resubmitted);
	tcase_add_test(t, cancel_pending_poll);
	tcase_add_test(t, cancel_races_readiness);
	tcase_add_test(t, many_polls_in_one_submit);
	tcase_add_test(t, mixed_read_and_poll_batches);
	tcase_add_test(t, bad_and_malformed_polls);
	tcase_add_test(t, resfd_is_signalled);
	tcase_add_test(t, blocked_getevents_is_woken);
	tcase_add_test(t, blocked_pgetevents_is_woken);
	tcase_add_test(t, pty_works_everywhere);
	tcase_add_test(t, queue_run_calls_back);
	tcase_add_test(t, destroy_with_pending_polls);
	tcase_add_test(t, full_ring);
	tcase_add_test(t, fork_child_starts_afresh);
	tcase_add_test(t, errno_is_kept);
	tcase_add_test(t, ready_or_refused_polls_keep_the_programs_record_locks);
	tcase_add_test(t, polls_work_when_process_vm_calls_are_refused);
	tcase_add_test(t, read_only_poll_after_the_main_thread_exits_gets_efault);
	tcase_add_test(t, polls_work_after_the_main_thread_exits);
	tcase_add_test(t, every_descriptor_kind_answers_as_the_kernel);
	tcase_add_test(t, destroy_racing_submit_leaves_nothing_armed);
	tcase_add_test(t, signal_handler_polls_while_its_thread_is_in_the_library);
	tcase_add_test(t, library_descriptors_closed_behind_its_back);
	tcase_add_test(t, polls_survive_their_duplicate_closed_and_reused);
	tcase_add_test(t, polls_work_without_statx_or_kcmp);
	tcase_add_test(t, fork_right_after_the_helper_starts);
	suite_add_tcase(s, t);
	return s;
}
