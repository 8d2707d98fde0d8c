/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * threads: T threads share one AIO context, each submitting and reaping
 * (the pattern of database and storage I/O thread pools).  A thread
 * resubmits whatever it reaped, whoever submitted it, so T x depth reads
 * stay in flight.  io_uring has no shared-ring idiom for this: each
 * thread gets a ring of its own, which is how io_uring is used.
 *
 * Every request carries a tag (its slot and a generation); each slot's
 * state records which generation is in flight, so a completion delivered
 * twice, or for a request not in flight, is counted as a duplicate, and a
 * request still in flight when the drain gives up is counted as lost.
 * Either makes aio-bench exit 3.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
# include <liburing.h>
#endif

#include "bench-util.h"

#define MAXT	64
#define MAXD	1024
#define DRAIN_NS 5000000000ull	/* give up on missing completions after 5 s */

static const char *const WL = "threads";
static const char *const BASE = "stock-libaio";

struct slot {
	struct iocb cb;
	/* 2 * generation + 1 while that generation is in flight, 2 *
	 * generation once it has been reaped.  Only the thread that reaps a
	 * completion moves the slot on (a compare-and-swap from "in flight"),
	 * so a second delivery of one completion finds the state moved and is
	 * counted.  Relaxed: each slot's state is its own object; the kernel
	 * orders the submit before the completion. */
	_Atomic unsigned long state;
};

struct worker {
	struct run *run;
	pthread_t tid;
	int idx;
	uint64_t rng;
	long long dups;
	char why[96];
	/* read by the main thread while this one runs: its own line */
	_Alignas(64) _Atomic unsigned long long done;
	char pad[56];
};

struct run {
	const struct aio_ops *ops;	/* NULL: io_uring, one ring a thread */
	const struct target *t;
	io_context_t ctx;
	long nthreads, depth;
	struct slot *slots;
	char *bufs;
	pthread_barrier_t ready;
	_Atomic int go, stop;
	_Atomic long inflight;		/* AIO: requests submitted, not reaped */
	struct worker w[MAXT];
};

static inline long long rnd_off(struct worker *w)
{
	uint64_t x = w->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	w->rng = x;
	return (long long)(x % w->run->t->nblocks) * BS;
}

static int stopping(struct run *R)
{
	return atomic_load_explicit(&R->stop, memory_order_relaxed) || interrupted;
}

/* Start the next generation of slot i and return its iocb. */
static struct iocb *arm(struct worker *w, long i)
{
	struct run *R = w->run;
	struct slot *s = &R->slots[i];
	unsigned long gen = atomic_load_explicit(&s->state, memory_order_relaxed) / 2 + 1;

	io_prep_pread(&s->cb, R->t->fd, R->bufs + i * BS, BS, rnd_off(w));
	s->cb.data = (void *)(uintptr_t)gen;
	atomic_store_explicit(&s->state, 2 * gen + 1, memory_order_relaxed);
	return &s->cb;
}

/* Take one completion of slot i, generation gen: 1 fine, 0 duplicate. */
static int take(struct run *R, long i, unsigned long gen)
{
	unsigned long want = 2 * gen + 1;

	return atomic_compare_exchange_strong_explicit(&R->slots[i].state, &want,
						       2 * gen,
						       memory_order_relaxed,
						       memory_order_relaxed);
}

static void wait_go(struct run *R)
{
	pthread_barrier_wait(&R->ready);
	while (!atomic_load_explicit(&R->go, memory_order_acquire))
		sched_yield();
}

static int submit_all(struct worker *w, struct iocb **v, long n)
{
	struct run *R = w->run;
	long off = 0;
	int ret;

	/* Counted before the call: a completion may be reaped by another
	 * thread before io_submit returns. */
	atomic_fetch_add_explicit(&R->inflight, n, memory_order_relaxed);
	while (off < n) {
		ret = submit_reads(R->ops, R->ctx, n - off, v + off);
		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret <= 0) {
			snprintf(w->why, sizeof(w->why), "io_submit: %s",
				 ret ? strerror(-ret) : "submitted nothing");
			atomic_fetch_sub_explicit(&R->inflight, n - off,
						  memory_order_relaxed);
			while (off < n) {	/* never submitted: not lost */
				struct slot *s = (struct slot *)v[off++];

				atomic_fetch_sub_explicit(&s->state, 1,
							  memory_order_relaxed);
			}
			return -1;
		}
		off += ret;
	}
	return 0;
}

static void *aio_worker(void *arg)
{
	struct worker *w = arg;
	struct run *R = w->run;
	struct iocb *v[MAXD];
	struct io_event ev[MAXD];
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	uint64_t deadline = 0;
	long i, n, k, nsub, first = w->idx * R->depth;
	int failed = 0;

	wait_go(R);
	for (i = 0; i < R->depth; i++)
		v[i] = arm(w, first + i);
	if (submit_all(w, v, R->depth))
		failed = 1;
	for (;;) {
		int stop = stopping(R) || failed;

		if (stop) {
			if (!deadline)
				deadline = now_ns() + DRAIN_NS;
			if (atomic_load_explicit(&R->inflight, memory_order_relaxed) <= 0 ||
			    now_ns() > deadline)
				break;
		}
		n = R->ops->getevents(R->ctx, 1, opt.single ? 1 : R->depth, ev,
				      &ts);
		if (n < 0) {
			if (n == -EINTR)
				continue;
			snprintf(w->why, sizeof(w->why), "io_getevents: %s",
				 strerror(-(int)n));
			failed = 1;
			continue;
		}
		nsub = 0;
		for (k = 0; k < n; k++) {
			struct slot *s = (struct slot *)ev[k].obj;

			i = s - R->slots;
			if (i < 0 || i >= R->nthreads * R->depth ||
			    !take(R, i, (unsigned long)(uintptr_t)ev[k].data)) {
				w->dups++;
				continue;
			}
			if ((long)ev[k].res != BS && !w->why[0])
				snprintf(w->why, sizeof(w->why),
					 "read returned %ld", (long)ev[k].res);
			if (!stop)
				v[nsub++] = arm(w, i);
		}
		atomic_fetch_sub_explicit(&R->inflight, n, memory_order_relaxed);
		atomic_store_explicit(&w->done,
				      atomic_load_explicit(&w->done,
							   memory_order_relaxed) + n,
				      memory_order_relaxed);
		if (nsub && submit_all(w, v, nsub))
			failed = 1;
	}
	return NULL;
}

#ifdef HAVE_LIBURING
/* Arm slot i and queue its read as an SQE: 0, or -1 if the SQ is full. */
static int uring_queue(struct io_uring *ring, struct worker *w, long i)
{
	struct iocb *cb = arm(w, i);
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return -1;
	io_uring_prep_read(sqe, w->run->t->fd, (void *)(uintptr_t)cb->u.c.buf,
			   BS, cb->u.c.offset);
	io_uring_sqe_set_data64(sqe, (uint64_t)i << 32 |
				     (uint32_t)(uintptr_t)cb->data);
	return 0;
}

/* Drain: the SQEs armed last were never submitted; submit them, so that
 * every armed slot completes, and take what completes (DRAIN_NS). */
static void uring_drain(struct io_uring *ring, struct worker *w)
{
	struct __kernel_timespec ts = { 0, 20 * 1000 * 1000 };
	struct run *R = w->run;
	struct io_uring_cqe *cqe;
	long i, first = w->idx * R->depth;
	uint64_t deadline;
	int ret;

	io_uring_submit(ring);
	deadline = now_ns() + DRAIN_NS;
	while (now_ns() < deadline) {
		for (i = first; i < first + R->depth; i++)
			if (atomic_load_explicit(&R->slots[i].state,
						 memory_order_relaxed) & 1)
				break;
		if (i == first + R->depth)
			break;
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (ret == -ETIME || ret == -EINTR)
			continue;
		if (ret < 0)
			break;
		i = (long)(cqe->user_data >> 32);
		if (i < first || i >= first + R->depth ||
		    !take(R, i, (uint32_t)cqe->user_data))
			w->dups++;
		io_uring_cqe_seen(ring, cqe);
	}
}

static void *uring_worker(void *arg)
{
	struct worker *w = arg;
	struct run *R = w->run;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	long i, first = w->idx * R->depth;
	unsigned head, seen;
	int ret, ok = 1;

	ret = io_uring_queue_init((unsigned)R->depth, &ring, 0);
	if (ret < 0)
		snprintf(w->why, sizeof(w->why), "io_uring_queue_init: %s",
			 strerror(-ret));
	wait_go(R);
	if (ret < 0)
		return NULL;
	for (i = 0; i < R->depth; i++)
		uring_queue(&ring, w, first + i);
	while (!stopping(R) && ok) {
		atomic_fetch_add_explicit(&uring_calls, 1, memory_order_relaxed);
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR) {
			snprintf(w->why, sizeof(w->why),
				 "io_uring_submit_and_wait: %s", strerror(-ret));
			break;
		}
		seen = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			uint64_t ud = cqe->user_data;

			seen++;
			i = (long)(ud >> 32);
			if (i < first || i >= first + R->depth ||
			    !take(R, i, (uint32_t)ud)) {
				w->dups++;
				continue;
			}
			if (cqe->res != BS && !w->why[0])
				snprintf(w->why, sizeof(w->why),
					 "read returned %d", cqe->res);
			if (uring_queue(&ring, w, i)) {
				ok = 0;
				break;
			}
		}
		io_uring_cq_advance(&ring, seen);
		atomic_store_explicit(&w->done,
				      atomic_load_explicit(&w->done,
							   memory_order_relaxed) + seen,
				      memory_order_relaxed);
	}
	uring_drain(&ring, w);
	io_uring_queue_exit(&ring);
	return NULL;
}
#endif

static unsigned long long calls_of(const struct run *R)
{
	return R->ops ? R->ops->calls() : uring_calls_now();
}

static unsigned long long done_of(struct run *R)
{
	unsigned long long d = 0;
	long i;

	for (i = 0; i < R->nthreads; i++)
		d += atomic_load_explicit(&R->w[i].done, memory_order_relaxed);
	return d;
}

/* Start the workers; they wait on the barrier with this thread. */
static void start_workers(struct run *R, void *(*fn)(void *))
{
	long i;

	pthread_barrier_init(&R->ready, NULL, (unsigned)R->nthreads + 1);
	for (i = 0; i < R->nthreads; i++) {
		R->w[i].run = R;
		R->w[i].idx = (int)i;
		R->w[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) + now_ns();
		if (pthread_create(&R->w[i].tid, NULL, fn, &R->w[i]))
			die("pthread_create failed");
	}
	pthread_barrier_wait(&R->ready);
}

/* After the join: duplicates the workers saw, slots still in flight, and
 * the first worker's error. */
static void tally(const struct run *R, long long *dups, long long *lost,
		  char *why, size_t len)
{
	long i;

	for (i = 0; i < R->nthreads; i++) {
		*dups += R->w[i].dups;
		if (R->w[i].why[0] && !why[0])
			snprintf(why, len, "%s", R->w[i].why);
	}
	for (i = 0; i < R->nthreads * R->depth; i++)
		*lost += atomic_load_explicit(&R->slots[i].state,
					      memory_order_relaxed) & 1;
}

/*
 * One cell: the workers start together; the window is the main thread's
 * sleep of --time seconds, with the cost snapshots at its ends (the main
 * thread itself is asleep inside it).  Then the workers stop resubmitting
 * and reap until nothing is in flight.
 */
static int cell(const struct aio_ops *ops, const struct target *t, long nt,
		long depth, struct row *r, char *why, size_t len)
{
	struct run *R;
	struct cost a, b;
	struct timespec nap;
	unsigned long long d0, d1;
	uint64_t t0, t1;
	long long dups = 0, lost = 0;
	long i, nslots = nt * depth;
	int ret;
	void *(*fn)(void *) = NULL;

	R = calloc(1, sizeof(*R));
	if (!R)
		die("out of memory");
	R->ops = ops;
	R->t = t;
	R->nthreads = nt;
	R->depth = depth;
	R->slots = calloc(nslots, sizeof(*R->slots));
	if (!R->slots || posix_memalign((void **)&R->bufs, BS, nslots * BS))
		die("out of memory");
	if (ops) {
		ret = ops->setup((int)nslots, &R->ctx);
		if (ret < 0) {
			snprintf(why, len, "io_setup: %s", strerror(-ret));
			goto out;
		}
		fn = aio_worker;
	} else {
#ifdef HAVE_LIBURING
		fn = uring_worker;
#endif
	}
	start_workers(R, fn);
	d0 = done_of(R);
	cost_now(&a, calls_of(R));
	t0 = now_ns();
	atomic_store_explicit(&R->go, 1, memory_order_release);
	nap.tv_sec = (time_t)opt.cell_time;
	nap.tv_nsec = (long)((opt.cell_time - (double)nap.tv_sec) * 1e9);
	while (nanosleep(&nap, &nap) && errno == EINTR && !interrupted)
		;
	d1 = done_of(R);
	cost_now(&b, calls_of(R));
	t1 = now_ns();
	atomic_store_explicit(&R->stop, 1, memory_order_relaxed);
	for (i = 0; i < nt; i++)
		pthread_join(R->w[i].tid, NULL);
	pthread_barrier_destroy(&R->ready);

	tally(R, &dups, &lost, why, len);
	row_add_integrity(r, dups, lost);
	if (why[0] && !dups && !lost)
		goto out;
	row_add(r, (double)(d1 - d0) * 1e9 / (double)(t1 - t0));
	row_add_cost(r, &a, &b, (double)(d1 - d0));
out:
	/* Lost requests may still complete into the buffers: keep them. */
	if (ops && R->ctx && !lost)
		ops->destroy(R->ctx);
	if (!lost) {
		free(R->bufs);
		free(R->slots);
	}
	free(R);
	return why[0] ? -1 : 0;
}

enum { S_OURS, S_STOCK, S_URING, S_COUNT };
static const char *const names[S_COUNT] = {
	"ours-ring", "stock-libaio", "io_uring",
};

/* Params: target by target, thread count by thread count. */
static struct row *threads_row(int s, int p)
{
	char param[24];

	snprintf(param, sizeof(param), "%s T=%ld",
		 targets[p / opt.nthreads].name, opt.threads[p % opt.nthreads]);
	return row_get(WL, names[s], param, "IOPS", 0, BASE, NULL);
}

static void threads_note(int s, int p, struct row *r)
{
	(void)p;
	if (s == S_STOCK && !stock_loaded)
		row_note(r, stock_error);
	else if (s == S_URING)
#ifdef HAVE_LIBURING
		row_note(r, "one ring per thread (io_uring's idiom)");
#else
		row_note(r, "not built with liburing");
#endif
	else
		row_note(r, "one shared context");
}

static int threads_cell(int s, int p, struct row *r, char *why, size_t len)
{
	const struct aio_ops *ops = NULL;

	if (s == S_OURS)
		ops = &ops_ours;
	else if (s == S_STOCK) {
		if (!stock_loaded)
			return GRID_SKIP;
		ops = &ops_stock;
	}
#ifndef HAVE_LIBURING
	if (s == S_URING)
		return GRID_SKIP;
#endif
	if (cell(ops, &targets[p / opt.nthreads], opt.threads[p % opt.nthreads],
		 opt.thread_depth, r, why, len))
		return GRID_DEAD;
	return GRID_DONE;
}

void bench_threads(void)
{
	static const struct grid grid = {
		.workload = "threads", .series = names, .nseries = S_COUNT,
		.row = threads_row, .note = threads_note, .cell = threads_cell,
	};
	struct grid run = grid;
	long depth = opt.thread_depth;
	int g;

	file_prepare();
	if (!ntargets) {
		warnx_("threads workload skipped: nothing to read");
		run_failed = 1;
		return;
	}
	run.nparams = ntargets * opt.nthreads;
	run.group = opt.nthreads;
	grid_run(&run);
	report_line(WL, "Each of T threads keeps %ld reads in flight on one shared "
			"AIO context, reaps with io_getevents(ctx, 1, %ld, 20 ms) and "
			"resubmits what it reaped (%s); io_uring: one ring per thread "
			"(its idiom: a ring is not shared between submitters).",
		    depth, opt.single ? 1L : depth,
		    opt.single ? "--pattern=single" : "--pattern=batch: one io_submit");
	report_line(WL, "dup: completions delivered twice or for a request not in "
			"flight; lost: requests never completed (5 s drain); both must be 0.");
	for (g = 0; g < ntargets; g++)
		report_line(WL, "%s", targets[g].desc);
}
