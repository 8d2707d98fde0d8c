/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One program for the two cross checks of tests/abi-stock-header.sh and
 * tests/abi-our-header.sh: built against one libaio.h and run on the other
 * library.  It uses only the stock interface (no LIBAIO_0.6/0.7 names)
 * and binds the three LIBAIO_0.1 entry points by version.  It prints the
 * path of the libaio it was loaded with, one line per check, and exits 0
 * only if every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <libaio.h>

/* Declared by our header, not by the stock one; same prototype in both
 * places so either header compiles. */
extern int io_queue_wait(io_context_t ctx, const struct timespec *timeout);

/* The pre-0.4 interface, reached by symbol version. */
int old_io_getevents(io_context_t ctx, long nr, struct io_event *events,
		     const struct timespec *timeout);
int old_io_cancel(io_context_t ctx, struct iocb *iocb);
int old_io_queue_wait(io_context_t ctx, const struct timespec *timeout);
__asm__(".symver old_io_getevents, io_getevents@LIBAIO_0.1");
__asm__(".symver old_io_cancel, io_cancel@LIBAIO_0.1");
__asm__(".symver old_io_queue_wait, io_queue_wait@LIBAIO_0.1");

static int failures;

#define CHECK(what, call, want)                                              \
	do {                                                                  \
		long got_;                                                    \
		errno = 4242;                                                 \
		got_ = (long)(call);                                          \
		if (got_ != (long)(want) || errno != 4242) {                  \
			printf("FAIL %s: %s = %ld (errno %d), want %ld\n", what, \
			       #call, got_, errno, (long)(want));             \
			failures++;                                           \
		} else {                                                      \
			printf("ok   %s\n", what);                            \
		}                                                             \
	} while (0)

#define TRUE(what, cond)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			printf("FAIL %s: %s\n", what, #cond);                 \
			failures++;                                           \
		}                                                             \
	} while (0)

static void print_libaio_path(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libaio.so")) {
			printf("libaio: %s", p);
			break;
		}
	}
	fclose(f);
}

static int tmpfile_fd(void)
{
	/* $TMPDIR when set, as every test does; /tmp otherwise. */
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if (snprintf(path, sizeof(path), "%s/libaio-abi-XXXXXX", dir) >= (int)sizeof(path))
		exit(99);
	fd = mkstemp(path);
	if (fd < 0)
		exit(99);
	unlink(path);
	return fd;
}

static int pipefd[2];

static void *late_writer(void *arg)
{
	char c = 'w';

	(void)arg;
	usleep(20000);	/* the reader should be waiting by now (not required) */
	if (write(pipefd[1], &c, 1) != 1)
		abort();
	return NULL;
}

static int callbacks;
static long callback_res;

static void on_done(io_context_t ctx, struct iocb *iocb, long res, long res2)
{
	(void)ctx;
	(void)iocb;
	(void)res2;
	callbacks++;
	callback_res = res;
}

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

/* pwrite then pread, data compared; then preadv. */
static void read_write_checks(io_context_t ctx, struct iocb *cbp, int fd)
{
	struct io_event ev[4];
	unsigned char out[4096], in[4096], a[100], b[200];
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	size_t i;

	for (i = 0; i < sizeof(out); i++)
		out[i] = (unsigned char)(i * 31 + 7);
	io_prep_pwrite(cbp, fd, out, sizeof(out), 0);
	CHECK("io_submit pwrite", io_submit(ctx, 1, &cbp), 1);
	CHECK("io_getevents pwrite", io_getevents(ctx, 1, 1, ev, NULL), 1);
	TRUE("pwrite event", ev[0].obj == cbp && ev[0].res == sizeof(out));
	io_prep_pread(cbp, fd, in, sizeof(in), 0);
	CHECK("io_submit pread", io_submit(ctx, 1, &cbp), 1);
	CHECK("io_getevents pread", io_getevents(ctx, 1, 4, ev, NULL), 1);
	TRUE("pread data", ev[0].res == sizeof(in) && !memcmp(in, out, sizeof(in)));

	/* preadv. */
	io_prep_preadv(cbp, fd, iov, 2, 1000);
	CHECK("io_submit preadv", io_submit(ctx, 1, &cbp), 1);
	CHECK("io_getevents preadv", io_getevents(ctx, 1, 1, ev, NULL), 1);
	TRUE("preadv data", ev[0].res == sizeof(a) + sizeof(b) &&
				    !memcmp(a, out + 1000, sizeof(a)) &&
				    !memcmp(b, out + 1100, sizeof(b)));
}

/* Poll on a pipe, reaped by io_pgetevents with a mask; then a pending
 * signal the mask opens interrupts io_pgetevents.  SIGUSR1 stays
 * blocked afterwards.  0, or 99 when the pipe fails. */
static int pgetevents_checks(io_context_t ctx, struct iocb *cbp)
{
	struct timespec zero = { 0, 0 };
	struct io_event ev[4];
	struct sigaction sa;
	sigset_t blocked, open_usr1;
	unsigned char in[1];

	sigemptyset(&blocked);
	sigaddset(&blocked, SIGUSR1);
	io_prep_poll(cbp, pipefd[0], POLLIN);
	CHECK("io_submit poll", io_submit(ctx, 1, &cbp), 1);
	CHECK("poll not ready", io_pgetevents(ctx, 0, 1, ev, &zero, &blocked), 0);
	if (write(pipefd[1], "x", 1) != 1)
		return 99;
	CHECK("io_pgetevents poll", io_pgetevents(ctx, 1, 1, ev, NULL, &blocked), 1);
	TRUE("poll event", ev[0].obj == cbp && (ev[0].res & POLLIN));
	if (read(pipefd[0], in, 1) != 1)
		return 99;

	/* io_pgetevents: a pending signal the mask opens interrupts it. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigprocmask(SIG_BLOCK, &blocked, NULL);
	sigprocmask(SIG_BLOCK, NULL, &open_usr1);
	sigdelset(&open_usr1, SIGUSR1);
	kill(getpid(), SIGUSR1);
	CHECK("io_pgetevents EINTR", io_pgetevents(ctx, 1, 1, ev, NULL, &open_usr1),
	      -EINTR);
	TRUE("signal handler ran", usr1_seen == 1);
	return 0;
}

/* io_queue_run with a callback (completion known via eventfd), io_fsync,
 * and io_queue_wait in both versions. */
static void queue_checks(io_context_t ctx, struct iocb *cbp, int fd, int efd)
{
	struct timespec zero = { 0, 0 }, tenth = { 0, 100000000 };
	struct io_event ev[4];
	unsigned char in[512];
	uint64_t count;

	io_prep_pread(cbp, fd, in, 512, 512);
	io_set_callback(cbp, on_done);
	io_set_eventfd(cbp, efd);
	CHECK("io_submit callback", io_submit(ctx, 1, &cbp), 1);
	TRUE("eventfd", read(efd, &count, sizeof(count)) == sizeof(count));
	CHECK("io_queue_run", io_queue_run(ctx), 0);
	TRUE("callback ran", callbacks == 1 && callback_res == 512);

	/* io_fsync returns io_submit's 1. */
	CHECK("io_fsync", io_fsync(ctx, cbp, on_done, fd), 1);
	CHECK("io_getevents fsync", io_getevents(ctx, 1, 1, ev, NULL), 1);
	TRUE("fsync event", ev[0].obj == cbp && ev[0].res == 0);

	/* io_queue_wait (0.4 and 0.1): returns at once, consumes nothing. */
	CHECK("io_queue_wait@@LIBAIO_0.4", io_queue_wait(ctx, &tenth), 0);
	CHECK("io_queue_wait@LIBAIO_0.1", old_io_queue_wait(ctx, NULL), 0);
	CHECK("io_queue_wait@LIBAIO_0.1 bad ctx", old_io_queue_wait(NULL, &zero),
	      -EINVAL);
}

/* io_getevents and io_cancel of LIBAIO_0.1.  0, or 99 when the pipe or
 * the thread fails. */
static int old_interface_checks(io_context_t ctx, struct iocb *cbp)
{
	struct timespec zero = { 0, 0 };
	struct io_event ev[4];
	unsigned char in[1];
	pthread_t t;

	/* io_getevents@LIBAIO_0.1 has min_nr 1: with no timeout it waits for
	 * the poll that a second thread completes later. */
	io_prep_poll(cbp, pipefd[0], POLLIN);
	CHECK("io_submit poll 2", io_submit(ctx, 1, &cbp), 1);
	if (pthread_create(&t, NULL, late_writer, NULL) != 0)
		return 99;
	CHECK("io_getevents@LIBAIO_0.1 waits", old_io_getevents(ctx, 4, ev, NULL), 1);
	pthread_join(t, NULL);
	TRUE("old getevents event", ev[0].obj == cbp && (ev[0].res & POLLIN));
	if (read(pipefd[0], in, 1) != 1)
		return 99;
	CHECK("io_getevents@LIBAIO_0.1 timeout", old_io_getevents(ctx, 4, ev, &zero),
	      0);

	/* io_cancel@LIBAIO_0.1: two arguments; the kernel says EINPROGRESS
	 * and the completion (res 0) comes through the ring. */
	io_prep_poll(cbp, pipefd[0], POLLIN);
	CHECK("io_submit poll 3", io_submit(ctx, 1, &cbp), 1);
	CHECK("io_cancel@LIBAIO_0.1", old_io_cancel(ctx, cbp), -EINPROGRESS);
	CHECK("cancelled event", io_getevents(ctx, 1, 1, ev, NULL), 1);
	TRUE("cancelled res 0", ev[0].obj == cbp && ev[0].res == 0);
	CHECK("io_cancel@LIBAIO_0.1 again", old_io_cancel(ctx, cbp), -EINVAL);
	CHECK("io_cancel@@LIBAIO_0.4 again", io_cancel(ctx, cbp, ev), -EINVAL);
	return 0;
}

int main(void)
{
	io_context_t ctx = NULL;
	struct io_event ev[4];
	struct iocb cb, *cbp = &cb;
	int fd = tmpfile_fd(), efd = eventfd(0, 0);

	print_libaio_path();
	if (efd < 0 || pipe(pipefd) != 0)
		return 99;

	CHECK("io_queue_init", io_queue_init(8, &ctx), 0);
	if (failures)
		return 1;

	read_write_checks(ctx, cbp, fd);
	if (pgetevents_checks(ctx, cbp) != 0)
		return 99;
	queue_checks(ctx, cbp, fd, efd);
	if (old_interface_checks(ctx, cbp) != 0)
		return 99;

	/* A few errors. */
	CHECK("io_setup EINVAL", io_setup(0, &ctx), -EINVAL);
	CHECK("io_submit bad ctx", io_submit(NULL, 1, &cbp), -EINVAL);
	CHECK("io_getevents min>nr", io_getevents(ctx, 2, 1, ev, NULL), -EINVAL);
	CHECK("io_queue_release", io_queue_release(ctx), 0);
	CHECK("io_destroy twice", io_destroy(ctx), -EINVAL);

	printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
