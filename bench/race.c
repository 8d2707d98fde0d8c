/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-race: reaps around the library, counted.  One thread submits
 * tagged requests, one reaps with the library (io_getevents with a zero
 * timeout, io_reap or io_queue_run) and one reaps the same context around
 * it (the io_getevents system call made directly, or a second copy of the
 * library loaded with dlmopen).  At the end the kernel drains what is
 * left, and the program prints how many completions came back twice and
 * how many never came back.  libaio(7), section Reaping around the
 * library, says why the count can be non-zero in principle.
 *
 *   aio-race [COMPLETIONS [LIBRARY-REAP [AROUND [WORK]]]]
 *     LIBRARY-REAP  getevents (default), reap or queue-run
 *     AROUND        syscall (default) or dlmopen
 *     WORK          read (reads of /dev/zero, default) or poll (polls of
 *                   eventfds, completed by a write after the submit)
 *
 * Linked with -laio, it measures whichever libaio.so.1 the dynamic
 * linker finds: LD_LIBRARY_PATH picks this build or the stock library
 * (which has no io_reap; use the other two reaps there).
 * Exit status: 0 when every completion came back exactly once.
 */
#include "config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <libaio.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define IN_FLIGHT 48

/* Absent from the stock library: then io_reap is not offered. */
extern int io_reap(io_context_t, long, struct io_event *) __attribute__((weak));

typedef int getevents_fn(io_context_t, long, long, struct io_event *,
			 struct timespec *);

static long total;
static io_context_t ctx;
static struct iocb *cbs;
static _Atomic unsigned char *seen;
static _Atomic long first_seen;
static _Atomic int stop;
static int zero_fd, efd[IN_FLIGHT];
static enum { BY_GETEVENTS, BY_REAP, BY_QUEUE_RUN } lib_reap;
static int around_dlmopen, poll_work;
static getevents_fn *other_copy;

static void tally(const struct io_event *ev, long n)
{
	long i;

	for (i = 0; i < n; i++) {
		long tag = (struct iocb *)ev[i].obj - cbs;

		if (tag < 0 || tag >= total) {
			fprintf(stderr, "aio-race: an event names no request\n");
			exit(2);
		}
		if (atomic_fetch_add(&seen[tag], 1) == 0)
			atomic_fetch_add(&first_seen, 1);
	}
}

/* io_queue_run's callbacks tally one completion each. */
static void tally_cb(io_context_t c, struct iocb *io, long res, long res2)
{
	struct io_event ev = { .obj = io };

	(void)c;
	(void)res;
	(void)res2;
	tally(&ev, 1);
}

static void *submitter(void *arg)
{
	char buf[64];
	long i;

	(void)arg;
	for (i = 0; i < total; i++) {
		struct iocb *p = &cbs[i];
		time_t start = time(NULL);
		uint64_t v;

		/* At most IN_FLIGHT at once: wait for the one that many back. */
		while (i >= IN_FLIGHT && !atomic_load(&seen[i - IN_FLIGHT]))
			if (time(NULL) - start > 5) {
				fprintf(stderr, "aio-race: request %ld never "
					"completed\n", i - IN_FLIGHT);
				return NULL;
			}
		if (poll_work) {
			if (read(efd[i % IN_FLIGHT], &v, sizeof(v)) < 0)
				v = 0;	/* already clear */
			io_prep_poll(p, efd[i % IN_FLIGHT], POLLIN);
		} else
			io_prep_pread(p, zero_fd, buf, sizeof(buf), 0);
		if (lib_reap == BY_QUEUE_RUN)
			io_set_callback(p, tally_cb);
		if (io_submit(ctx, 1, &p) != 1) {
			fprintf(stderr, "aio-race: io_submit failed\n");
			exit(2);
		}
		v = 1;
		if (poll_work && write(efd[i % IN_FLIGHT], &v, sizeof(v)) < 0)
			exit(2);
	}
	return NULL;
}

static void *around_reaper(void *arg)
{
	struct io_event ev[32];

	(void)arg;
	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, 10000000 };
		long n = around_dlmopen ?
			other_copy(ctx, 1, 32, ev, &ts) :
			syscall(__NR_io_getevents, ctx, 1L, 32L, ev, &ts);

		if (n > 0)
			tally(ev, n);
	}
	return NULL;
}

static void *library_reaper(void *arg)
{
	struct timespec zero = { 0, 0 };
	struct io_event ev[32];

	(void)arg;
	while (!atomic_load(&stop)) {
		long n = 0;

		if (lib_reap == BY_GETEVENTS)
			n = io_getevents(ctx, 0, 32, ev, &zero);
		else if (lib_reap == BY_REAP)
			n = io_reap(ctx, 32, ev);
		else
			io_queue_run(ctx);
		if (n > 0)
			tally(ev, n);
	}
	return NULL;
}

static int pick(const char *arg, const char *a, const char *b,
		const char *c)
{
	if (!arg || !strcmp(arg, a))
		return 0;
	if (!strcmp(arg, b))
		return 1;
	if (c && !strcmp(arg, c))
		return 2;
	fprintf(stderr, "aio-race: unknown choice '%s'\n", arg);
	exit(2);
}

int main(int argc, char **argv)
{
	struct timespec zero = { 0, 0 };
	struct io_event ev[64];
	pthread_t sub, lib, around;
	long n, i, twice = 0, never = 0;

	total = argc > 1 ? atol(argv[1]) : 1000000;
	lib_reap = pick(argc > 2 ? argv[2] : NULL, "getevents", "reap",
			"queue-run");
	around_dlmopen = pick(argc > 3 ? argv[3] : NULL, "syscall", "dlmopen",
			      NULL);
	poll_work = pick(argc > 4 ? argv[4] : NULL, "read", "poll", NULL);
	if (total < 1 || (lib_reap == BY_REAP && !io_reap)) {
		fprintf(stderr, "aio-race: nothing to do (io_reap needs this "
			"library)\n");
		return 2;
	}
	zero_fd = open("/dev/zero", O_RDONLY);
	for (i = 0; i < IN_FLIGHT; i++)
		efd[i] = eventfd(0, EFD_NONBLOCK);
	seen = calloc((size_t)total, sizeof(*seen));
	cbs = calloc((size_t)total, sizeof(*cbs));
	if (zero_fd < 0 || !seen || !cbs)
		return 2;
	if (around_dlmopen) {
		Dl_info where;
		void *h;

		if (!dladdr((void *)io_setup, &where) ||
		    !(h = dlmopen(LM_ID_NEWLM, where.dli_fname, RTLD_NOW)) ||
		    !(other_copy = (getevents_fn *)dlsym(h, "io_getevents"))) {
			fprintf(stderr, "aio-race: no second copy: %s\n",
				dlerror());
			return 2;
		}
	}
	if (io_setup(IN_FLIGHT + 16, &ctx) != 0)
		return 2;
	pthread_create(&around, NULL, around_reaper, NULL);
	pthread_create(&lib, NULL, library_reaper, NULL);
	pthread_create(&sub, NULL, submitter, NULL);
	pthread_join(sub, NULL);
	for (i = 0; i < 500 && atomic_load(&first_seen) < total; i++)
		usleep(10000);
	atomic_store(&stop, 1);
	pthread_join(lib, NULL);
	pthread_join(around, NULL);
	while ((n = syscall(__NR_io_getevents, ctx, 0L, 64L, ev, &zero)) > 0)
		tally(ev, n);
	for (i = 0; i < total; i++) {
		int c = atomic_load(&seen[i]);

		twice += c > 1 ? c - 1 : 0;
		never += c == 0;
	}
	printf("%ld completions, library %s, around it %s, %s: %ld twice, "
	       "%ld never\n", total, argc > 2 ? argv[2] : "getevents",
	       around_dlmopen ? "dlmopen" : "syscall",
	       poll_work ? "poll" : "read", twice, never);
	io_destroy(ctx);
	return twice || never;
}
