/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reap: the cost of taking already-completed events, per event.
 *
 * A fill step (not timed) puts FILL ready completions in the ring: poll
 * requests for POLLOUT on an eventfd, which is always writable, so each
 * completes inside io_submit.  The timed step reaps them in calls of
 * `batch` events (min_nr = nr = batch, zero timeout) until the ring is
 * empty.  One clock pair per FILL events, nothing subtracted.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_SYS_SINGLE_THREADED_H
# include <sys/single_threaded.h>
#endif
#ifdef HAVE_LIBURING
# include <liburing.h>
#endif

#include "bench-util.h"

#define FILL	3840	/* a multiple of 1, 16, 256 and 3840 */
#define CHUNK	256
#define CTX_NR	4096

static const char *const WL = "reap";
static const char *const BASE = "stock-libaio";

enum {
	S_FLOOR, S_RING_FLOOR, S_OURS, S_OURS_MT, S_SYS, S_STOCK, S_URING,
	S_COUNT
};
static const char *const names[S_COUNT] = {
	"copy-floor", "ring-copy-floor", "ours-ring", "ours-ring-mt",
	"ours-syscall", "stock-libaio", "io_uring-cq",
};

struct aio_side {
	const struct aio_ops *ops;
	io_context_t ctx;
	int ok;
	char why[96];
};

/*
 * The cost of the timed steps of the current cell: CPU time of the
 * process (getrusage just outside each pair of clock reads, so the fill
 * is left out) and AIO system calls, summed over the cell's fills.
 */
static struct cell_cost {
	double usr, sys, calls, events;
} cc;

static unsigned long long no_calls(void)
{
	return 0;
}

static void cc_add(const struct cost *a, const struct cost *b, double events)
{
	cc.usr += b->usr - a->usr;
	cc.sys += b->sys - a->sys;
	cc.calls += (double)(b->calls - a->calls);
	cc.events += events;
}

static struct io_event evbuf[FILL];
static struct io_event srcbuf[FILL];
static struct iocb cbs[CHUNK];
static struct iocb *cbp[CHUNK];
static int efd = -1;

static int aio_open(struct aio_side *s, const struct aio_ops *ops)
{
	int ret;

	s->ops = ops;
	s->ctx = NULL;
	ret = ops->setup(CTX_NR, &s->ctx);
	if (ret < 0) {
		snprintf(s->why, sizeof(s->why), "io_setup: %s", strerror(-ret));
		return -1;
	}
	s->ok = 1;
	return 0;
}

static int aio_fill(struct aio_side *s)
{
	int done = 0, ret;

	while (done < FILL) {
		ret = s->ops->submit(s->ctx, CHUNK, cbp);
		if (ret != CHUNK) {
			snprintf(s->why, sizeof(s->why), "io_submit: %s",
				 ret < 0 ? strerror(-ret) : "short");
			return -1;
		}
		done += ret;
	}
	return 0;
}

/* Takes exactly batch ready events into ev: 0, or -1 with s->why set. */
typedef int reap_batch_fn(struct aio_side *s, struct io_event *ev, long batch);

/*
 * One cell: fill the ring (not timed), then time reaping it in calls of
 * batch events until it is empty, again and again for the cell's time.
 * Returns ns per event, or a negative value on failure.  Always inlined,
 * so that each caller's reap function is a direct call.
 */
static inline __attribute__((always_inline)) double
run_cell(struct aio_side *s, long batch, reap_batch_fn *reap)
{
	uint64_t spent = 0, events = 0, t0, t1, budget, start;
	unsigned long long (*calls)(void) = s->ops->calls;
	struct cost a, b;
	long i;

	/* One pass untimed first: the first write to each page of evbuf in
	 * a fork child (ours-ring-mt) is a copy-on-write fault, a few
	 * microseconds each, which at batch 256 doubled the figure of a
	 * cell whose timed part is a few hundred microseconds in all. */
	if (aio_fill(s))
		return -1;
	for (i = 0; i < FILL; i += batch)
		if (reap(s, evbuf + i, batch))
			return -1;
	budget = (uint64_t)(opt.cell_time * 1e9);
	start = now_ns();
	do {
		if (aio_fill(s))
			return -1;
		cost_now(&a, calls());
		t0 = now_ns();
		for (i = 0; i < FILL; i += batch)
			if (reap(s, evbuf + i, batch))
				return -1;
		t1 = now_ns();
		cost_now(&b, calls());
		cc_add(&a, &b, FILL);
		spent += t1 - t0;
		events += FILL;
	} while (t1 - start < budget && !interrupted);
	return (double)spent / (double)events;
}

/* Through the library under test: min_nr = nr = batch, zero timeout. */
static int reap_with_library(struct aio_side *s, struct io_event *ev,
			     long batch)
{
	static const struct timespec zero = { 0, 0 };
	long got = s->ops->getevents(s->ctx, batch, batch, ev,
				     (struct timespec *)&zero);

	if (got == batch)
		return 0;
	snprintf(s->why, sizeof(s->why), "io_getevents returned %ld, want %ld",
		 got, batch);
	return -1;
}

static double aio_cell(struct aio_side *s, long batch)
{
	return run_cell(s, batch, reap_with_library);
}

static double floor_cell(long batch)
{
	uint64_t spent = 0, events = 0, t0, t1, budget;
	struct cost a, b;
	long i;

	budget = (uint64_t)(opt.cell_time * 1e9);
	do {
		cost_now(&a, no_calls());
		t0 = now_ns();
		for (i = 0; i < FILL; i += batch) {
			memcpy(evbuf + i, srcbuf + i, batch * sizeof(srcbuf[0]));
			__asm__ volatile("" : : "r"(evbuf) : "memory");
		}
		t1 = now_ns();
		cost_now(&b, no_calls());
		cc_add(&a, &b, FILL);
		spent += t1 - t0;
		events += FILL;
	} while (spent < budget && !interrupted);
	return (double)spent / (double)events;
}

static void *idle_thread(void *arg)
{
	return arg;
}

/*
 * ours-ring in a multi-threaded process, where the reap lock costs a
 * compare-and-swap instead of two plain stores.  glibc never turns its
 * single-threaded flag back on once a thread existed, so this runs in a
 * child that made one, with its own context (a child cannot reap its
 * parent's), and hands the figure back through a pipe.
 */
static double mt_cell(struct aio_side *s, long batch)
{
	struct { double v; struct cell_cost cc; } msg = { -1, { 0, 0, 0, 0 } };
	double v = -1;
	int fd[2], status;
	pid_t pid;

	if (pipe(fd)) {
		snprintf(s->why, sizeof(s->why), "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		struct aio_side c;
		pthread_t t;

		close(fd[0]);
		memset(&c, 0, sizeof(c));
		if (pthread_create(&t, NULL, idle_thread, NULL) == 0 &&
		    pthread_join(t, NULL) == 0 &&
#ifdef HAVE_SYS_SINGLE_THREADED_H
		    !__libc_single_threaded &&	/* else this measures nothing new */
#endif
		    aio_open(&c, &ops_ours) == 0) {
			msg.v = aio_cell(&c, batch);
			msg.cc = cc;
			c.ops->destroy(c.ctx);
		}
		if (write(fd[1], &msg, sizeof(msg)) != sizeof(msg))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &msg, sizeof(msg)) != sizeof(msg))
		msg.v = -1;
	v = msg.v;
	cc = msg.cc;
	close(fd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (v < 0)
		snprintf(s->why, sizeof(s->why), "the measuring child failed");
	return v;
}

/* The kernel's ring header, as far as a bare reaper needs it. */
struct bare_ring {
	unsigned id, nr;
	_Atomic unsigned head, tail;
	unsigned magic, compat, incompat, header_length;
	struct io_event events[];
};

/*
 * The least any user-space reaper of an AIO ring can do after the same
 * fill: tail (acquire), one or two memcpy runs, head (release), with no
 * lookup, lock, header check or call into a library.  The context is a
 * raw one (ops_sys), which our library never reaps itself.  What ours-ring
 * costs above this is the library's; what this costs above copy-floor is
 * the ring's (memory the kernel has just written, 32-byte events).
 */
static int reap_bare(struct aio_side *s, struct io_event *ev, long batch)
{
	struct bare_ring *r = (struct bare_ring *)s->ctx;
	unsigned head, tail, nr = r->nr, first, n = (unsigned)batch;

	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if ((tail + nr - head) % nr < n) {
		snprintf(s->why, sizeof(s->why), "ring holds %u events, want %ld",
			 (tail + nr - head) % nr, batch);
		return -1;
	}
	first = nr - head < n ? nr - head : n;
	memcpy(ev, &r->events[head], first * sizeof(*ev));
	if (first < n)
		memcpy(ev + first, &r->events[0], (n - first) * sizeof(*ev));
	head += n;
	if (head >= nr)
		head -= nr;
	atomic_store_explicit(&r->head, head, memory_order_release);
	return 0;
}

static double ring_floor_cell(struct aio_side *s, long batch)
{
	return run_cell(s, batch, reap_bare);
}

#ifdef HAVE_LIBURING
struct cq_copy {
	uint64_t data;
	int32_t res;
	uint32_t flags;
};
static struct cq_copy cqbuf[FILL];
static struct io_uring ring;
static int ring_ok;
static char ring_why[96];

static int uring_fill(void)
{
	struct io_uring_sqe *sqe;
	int i, ret;

	for (i = 0; i < FILL; i++) {
		sqe = io_uring_get_sqe(&ring);
		if (!sqe)
			return -1;
		io_uring_prep_nop(sqe);
		sqe->user_data = (uint64_t)i;
	}
	ret = io_uring_submit(&ring);
	if (ret != FILL) {
		snprintf(ring_why, sizeof(ring_why), "io_uring_submit: %d", ret);
		return -1;
	}
	return 0;
}

/* Take batch CQEs at a time, copy them out, advance the head. */
static double uring_cell(long batch)
{
	struct io_uring_cqe *cqes[256];
	uint64_t spent = 0, events = 0, t0, t1, budget, start;
	struct cost a, b;
	long i, k;
	unsigned got;

	budget = (uint64_t)(opt.cell_time * 1e9);
	start = now_ns();
	do {
		if (uring_fill())
			return -1;
		/* Peeking and advancing the CQ never enters the kernel. */
		cost_now(&a, no_calls());
		t0 = now_ns();
		for (i = 0; i < FILL; i += batch) {
			got = io_uring_peek_batch_cqe(&ring, cqes, batch);
			if (got != (unsigned)batch) {
				snprintf(ring_why, sizeof(ring_why),
					 "peek_batch_cqe returned %u", got);
				return -1;
			}
			for (k = 0; k < batch; k++) {
				cqbuf[i + k].data = cqes[k]->user_data;
				cqbuf[i + k].res = cqes[k]->res;
				cqbuf[i + k].flags = cqes[k]->flags;
			}
			io_uring_cq_advance(&ring, got);
		}
		t1 = now_ns();
		cost_now(&b, no_calls());
		cc_add(&a, &b, FILL);
		spent += t1 - t0;
		events += FILL;
	} while (t1 - start < budget && !interrupted);
	return (double)spent / (double)events;
}
#endif

static struct aio_side side[S_COUNT];

static struct row *reap_row(int s, int p)
{
	char param[24];

	snprintf(param, sizeof(param), "batch=%ld", opt.batches[p]);
	return row_get(WL, names[s], param, "ns/event", 1, BASE, NULL);
}

static void reap_note(int s, int p, struct row *r)
{
	(void)p;
	if (s == S_FLOOR)
		row_note(r, "memcpy of 32-byte events, warm");
	else if (s == S_RING_FLOOR && side[s].ok)
		row_note(r, "bare memcpy from the filled ring");
	else if (s == S_OURS_MT)
		row_note(r, "the same, in a multi-threaded process");
	else if (s == S_OURS && side[s].ok)
		row_note(r, io_reaper_active(side[s].ctx) ?
				    "io_getevents, reaper active" :
				    "io_getevents, REAPER OFF");
	else if (s == S_SYS && side[s].ok)
		row_note(r, "raw io_setup ctx: kernel reaps");
	else if (s == S_STOCK && side[s].ok)
		row_note(r, "dlmopen, same process");
}

/* io_uring's cell: < 0 (its reason in ring_why) when it cannot run. */
static double reap_uring(long batch, struct row *r)
{
#ifdef HAVE_LIBURING
	double v;

	if (!ring_ok) {
		row_note(r, ring_why);
		return -1;
	}
	v = uring_cell(batch);
	if (v < 0) {
		ring_ok = 0;
		row_note(r, ring_why);
	}
	return v;
#else
	(void)batch;
	row_note(r, "not built with liburing");
	return -1;
#endif
}

static int reap_cell(int s, int p, struct row *r, char *why, size_t len)
{
	long batch = opt.batches[p];
	double v;

	(void)why, (void)len;
	memset(&cc, 0, sizeof(cc));
	if (s == S_FLOOR) {
		v = floor_cell(batch);
	} else if (s == S_URING) {
		v = reap_uring(batch, r);
		if (v < 0)
			return GRID_SKIP;
	} else {
		if (!side[s].ok) {
			row_note(r, side[s].why);
			return GRID_SKIP;
		}
		if (s == S_RING_FLOOR)
			v = ring_floor_cell(&side[s], batch);
		else if (s == S_OURS_MT)
			v = mt_cell(&side[s], batch);
		else
			v = aio_cell(&side[s], batch);
		if (v < 0) {
			side[s].ok = 0;
			row_note(r, side[s].why);
			return GRID_SKIP;
		}
	}
	row_add(r, v);
	if (cc.events > 0) {
		struct cost zero = { 0, 0, 0 }, sum;

		sum.usr = cc.usr;
		sum.sys = cc.sys;
		sum.calls = (unsigned long long)cc.calls;
		row_add_cost(r, &zero, &sum, cc.events);
	}
	return GRID_DONE;
}

/* The ready events every fill copies, the contexts and the ring. */
static void reap_setup(void)
{
	int s;

	memset(side, 0, sizeof(side));
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		die("eventfd: %m");
	for (s = 0; s < CHUNK; s++) {
		io_prep_poll(&cbs[s], efd, POLLOUT);
		cbs[s].data = &cbs[s];
		cbp[s] = &cbs[s];
	}
	for (s = 0; s < FILL; s++) {
		srcbuf[s].data = &cbs[s % CHUNK];
		srcbuf[s].obj = &cbs[s % CHUNK];
		srcbuf[s].res = POLLOUT;
	}

	aio_open(&side[S_RING_FLOOR], &ops_sys);
	aio_open(&side[S_OURS], &ops_ours);
	side[S_OURS_MT].ok = 1;		/* each cell opens its own, in a child */
	aio_open(&side[S_SYS], &ops_sys);
	if (stock_loaded)
		aio_open(&side[S_STOCK], &ops_stock);
	else
		snprintf(side[S_STOCK].why, sizeof(side[S_STOCK].why),
			 "not loaded: %.80s", stock_error);
#ifdef HAVE_LIBURING
	{
		struct io_uring_params p;
		int ret;

		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = 2 * CTX_NR;
		ret = io_uring_queue_init_params(CTX_NR, &ring, &p);
		if (ret < 0)
			snprintf(ring_why, sizeof(ring_why),
				 "io_uring_queue_init: %s", strerror(-ret));
		else
			ring_ok = 1;
	}
#endif
}

void bench_reap(void)
{
	static const struct grid g = {
		.workload = "reap", .series = names, .nseries = S_COUNT,
		.series_outer = 1, .row = reap_row, .note = reap_note,
		.cell = reap_cell,
	};
	struct grid run = g;
	int s;

	reap_setup();
	run.nparams = opt.nbatches;
	grid_run(&run);
	for (s = S_RING_FLOOR; s <= S_STOCK; s++)
		if (side[s].ctx)
			side[s].ops->destroy(side[s].ctx);
#ifdef HAVE_LIBURING
	if (ring_ok)
		io_uring_queue_exit(&ring);
#endif
	close(efd);
	report_line(WL, "ours-syscall: a context made with a raw io_setup system "
			"call, unknown to our registry, so io_getevents asks the kernel.");
}
