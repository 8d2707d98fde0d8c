/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Built only for 32-bit targets, with -D_TIME_BITS=64: struct timespec has
 * a 64-bit tv_sec here, and the header sends io_getevents/io_pgetevents to
 * io_getevents_time64/io_pgetevents_time64 (LIBAIO_0.6).  Checks that the
 * timeouts are read with that layout: zero means poll, a short one
 * expires, one beyond 2^32 seconds waits for the event, and the mask of
 * io_pgetevents still applies.  Exit 0 on success, 1 on failure.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libaio.h>

_Static_assert(sizeof(time_t) == 8, "built with _TIME_BITS=64");
_Static_assert(sizeof(struct timespec) == 16, "64-bit struct timespec");

static int failures;

#define EXPECT_EQ(call, want)                                                \
	do {                                                                  \
		long got_;                                                    \
		errno = 4242;                                                 \
		got_ = (long)(call);                                          \
		if (got_ != (long)(want) || errno != 4242) {                  \
			fprintf(stderr, "%s:%d: %s = %ld (errno %d), want %ld\n", \
				__FILE__, __LINE__, #call, got_, errno,       \
				(long)(want));                                \
			failures++;                                           \
		}                                                             \
	} while (0)

static int pipefd[2];

static void *late_writer(void *arg)
{
	char c = 'w';

	(void)arg;
	usleep(20000);	/* let the main thread block first (not required) */
	if (write(pipefd[1], &c, 1) != 1)
		abort();
	return NULL;
}

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

int main(void)
{
	io_context_t ctx = NULL;
	struct timespec zero = { 0, 0 }, short_wait = { 0, 1000000 };
	struct timespec far = { (time_t)1 << 33, 0 };
	struct io_event ev;
	struct iocb cb, *cbp = &cb;
	struct sigaction sa;
	sigset_t blocked, open_usr1;
	pthread_t t;

	EXPECT_EQ(io_setup(4, &ctx), 0);
	if (failures)
		return 1;
	if (pipe(pipefd) != 0)
		return 1;

	EXPECT_EQ(io_getevents(ctx, 0, 1, &ev, &zero), 0);
	EXPECT_EQ(io_getevents(ctx, 1, 1, &ev, &zero), 0);
	EXPECT_EQ(io_getevents(ctx, 1, 1, &ev, &short_wait), 0);
	EXPECT_EQ(io_getevents(ctx, 2, 1, &ev, &zero), -EINVAL);

	/* A timeout whose tv_sec does not fit in 32 bits: if it were cut
	 * to 32 bits it would read as zero and return 0 at once. */
	io_prep_poll(&cb, pipefd[0], POLLIN);
	EXPECT_EQ(io_submit(ctx, 1, &cbp), 1);
	if (pthread_create(&t, NULL, late_writer, NULL) != 0)
		return 1;
	EXPECT_EQ(io_getevents(ctx, 1, 1, &ev, &far), 1);
	pthread_join(t, NULL);
	if (ev.obj != &cb || !(ev.res & POLLIN)) {
		fprintf(stderr, "wrong poll event\n");
		failures++;
	}

	/* io_pgetevents_time64: the mask applies, the timeout is 64-bit. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGUSR1);
	sigprocmask(SIG_BLOCK, &blocked, NULL);
	sigprocmask(SIG_BLOCK, NULL, &open_usr1);
	sigdelset(&open_usr1, SIGUSR1);
	kill(getpid(), SIGUSR1);
	EXPECT_EQ(io_pgetevents(ctx, 1, 1, &ev, &short_wait, &blocked), 0);
	EXPECT_EQ(usr1_seen, 0);
	EXPECT_EQ(io_pgetevents(ctx, 1, 1, &ev, &far, &open_usr1), -EINTR);
	EXPECT_EQ(usr1_seen, 1);
	EXPECT_EQ(io_pgetevents(ctx, 0, 1, &ev, &zero, NULL), 0);

	/* The 0.4 entry points still answer a bad context the same way. */
	EXPECT_EQ(io_getevents(NULL, 0, 1, &ev, &zero), -EINVAL);
	EXPECT_EQ(io_destroy(ctx), 0);
	EXPECT_EQ(io_getevents(ctx, 0, 1, &ev, &zero), -EINVAL);

	printf("time64: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
