/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: this project's own targets, each a measured ratio shown
 * beside the figure it aims at (never asserted).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "bench-util.h"

static double ratio_of(const char *wl, const char *a, const char *b,
		       const char *param)
{
	const struct row *ra = row_find(wl, a, param);
	const struct row *rb = row_find(wl, b, param);

	if (!ra || !rb || !ra->n || !rb->n || !(ra->median > 0) ||
	    !(rb->median > 0))
		return NAN;
	return ra->lower_better ? rb->median / ra->median :
				  ra->median / rb->median;
}

static int has(const long *list, int n, long v)
{
	int i;

	for (i = 0; i < n; i++)
		if (list[i] == v)
			return 1;
	return 0;
}

static double cpu_ratio_of(const char *wl, const char *series,
			   const char *param)
{
	const struct row *r = row_find(wl, series, param);

	return r ? r->cpu_ratio : NAN;
}

/*
 * Direct I/O and many threads: CPU per I/O lower than stock's by a
 * factor, IOPS not below stock's, and at queue depth 1 neither worse
 * than stock's by more than noise (taken as 5%).
 */
static void io_targets(void)
{
	static const char *const devs[] = { "direct", "loop" };
	char what[120], param[24];
	size_t d;
	int q, t;

	for (d = 0; d < 2 && opt.workloads & WL_FILE; d++)
		for (q = 0; q < opt.ndepths; q++) {
			long qd = opt.depths[q];

			snprintf(param, sizeof(param), "%s QD=%ld", devs[d], qd);
			if (!row_find("file", "ours-ring", param))
				continue;
			snprintf(what, sizeof(what), "ours-ring IOPS %s stock, %s",
				 qd == 1 ? "within 5% of" : "not below", param);
			report_target("file", what,
				      ratio_of("file", "ours-ring", "stock-libaio",
					       param), qd == 1 ? 0.95 : 1.0);
			snprintf(what, sizeof(what), "ours-ring CPU per I/O %s "
				 "stock's, %s", qd == 1 ? "within 5% of" :
				 "1.25x lower than", param);
			report_target("file", what,
				      cpu_ratio_of("file", "ours-ring", param),
				      qd == 1 ? 0.95 : 1.25);
		}
	for (d = 0; d < 2 && opt.workloads & WL_THREADS; d++)
		for (t = 0; t < opt.nthreads; t++) {
			snprintf(param, sizeof(param), "%s T=%ld", devs[d],
				 opt.threads[t]);
			if (!row_find("threads", "ours-ring", param))
				continue;
			snprintf(what, sizeof(what), "ours-ring IOPS not below "
				 "stock, %s", param);
			report_target("threads", what,
				      ratio_of("threads", "ours-ring",
					       "stock-libaio", param), 1.0);
			snprintf(what, sizeof(what), "ours-ring CPU per I/O 1.2x "
				 "lower than stock's, %s", param);
			report_target("threads", what,
				      cpu_ratio_of("threads", "ours-ring", param),
				      1.2);
		}
}

static double submit_ratio_of(const char *wl, const char *a, const char *b,
			      const char *param)
{
	const struct row *ra = row_find(wl, a, param);
	const struct row *rb = row_find(wl, b, param);

	if (!ra || !rb || !(ra->submax_med > 0) || !(rb->submax_med > 0))
		return NAN;
	return rb->submax_med / ra->submax_med;
}

/*
 * Async submission: at queue depth 32 on a cold cache, IOPS 4x the stock
 * library's and within 1.5x of io_uring's, the longest io_submit 4x
 * shorter than the stock library's; direct I/O at depth 128 no slower
 * with it on than off (noise taken as 5%).
 */
static void async_targets(void)
{
	static const char *const prefix[] = { "", "loop " };
	char what[120], param[24];
	size_t p;

	if (!(opt.workloads & WL_BUFFERED))
		return;
	for (p = 0; p < 2 && has(opt.depths, opt.ndepths, 32); p++) {
		snprintf(param, sizeof(param), "%sread QD=32", prefix[p]);
		if (!row_find("buffered", "ours-async", param))
			continue;
		snprintf(what, sizeof(what), "ours-async IOPS 4x stock's, %s", param);
		report_target("buffered", what,
			      ratio_of("buffered", "ours-async", "stock-libaio",
				       param), 4.0);
		snprintf(what, sizeof(what), "ours-async IOPS within 1.5x of "
			 "io_uring's, %s", param);
		report_target("buffered", what,
			      ratio_of("buffered", "ours-async", "io_uring",
				       param), 1 / 1.5);
		snprintf(what, sizeof(what), "ours-async longest io_submit 4x "
			 "shorter than stock's, %s", param);
		report_target("buffered", what,
			      submit_ratio_of("buffered", "ours-async",
					      "stock-libaio", param), 4.0);
	}
	if (row_find("buffered", "ours-async", "direct QD=128"))
		report_target("buffered", "ours-async IOPS within 5% of "
			      "ours-ring (async off), direct QD=128",
			      ratio_of("buffered", "ours-async", "ours-ring",
				       "direct QD=128"), 0.95);
}

/* reap: ours-ring's speedup over the stock library wanted per batch. */
static const struct { long batch; double want; } reap_want[] = {
	{ 1, 10.0 }, { 16, 6.0 }, { 256, 1.8 },
};

/* ours-ring cheaper than base at each batch from reap_want[from] on, by
 * want (0: reap_want's). */
static void reap_cheaper(const char *base, size_t from, double want)
{
	char what[120], param[24];
	size_t i;

	for (i = from; i < sizeof(reap_want) / sizeof(reap_want[0]); i++) {
		if (!has(opt.batches, opt.nbatches, reap_want[i].batch))
			continue;
		snprintf(param, sizeof(param), "batch=%ld", reap_want[i].batch);
		snprintf(what, sizeof(what), "ours-ring cheaper than %s, %s",
			 base, param);
		report_target("reap", what, ratio_of("reap", "ours-ring", base,
						     param),
			      want > 0 ? want : reap_want[i].want);
	}
}

/* reap: how much cheaper than the stock library and io_uring, how near
 * the copy floors. */
static void reap_targets(void)
{
	static const char *const floors[] = { "copy-floor", "ring-copy-floor" };
	char what[120];
	size_t i;

	reap_cheaper("stock-libaio", 0, 0);
#ifdef HAVE_LIBURING
	reap_cheaper("io_uring-cq", 1, 1.0);
#endif
	/* "Within 1.3x of the copy floor" at 256, against both floors: a
	 * warm buffer, and the ring just filled. */
	for (i = 0; i < 2 && has(opt.batches, opt.nbatches, 256); i++) {
		snprintf(what, sizeof(what),
			 "ours-ring within 1.3x of %s, batch=256", floors[i]);
		report_target("reap", what, ratio_of("reap", "ours-ring",
						     floors[i], "batch=256"),
			      1.0 / 1.3);
	}
}

/* loop: faster than the stock library, even with epoll-oneshot. */
static void loop_targets(void)
{
	static const long ks[] = { 1, 64 };
	char what[120], param[24];
	size_t i;
	int p;

	for (p = 0; p < opt.nprocs; p++) {
		snprintf(param, sizeof(param), "K=1 %dp", opt.procs[p]);
		if (has(opt.conns, opt.nconns, 1) && stock_loaded) {
			snprintf(what, sizeof(what),
				 "aio-poll-ours faster than aio-poll-stock, %s",
				 param);
			report_target("loop", what,
				      ratio_of("loop", "aio-poll-ours",
					       "aio-poll-stock", param), 1.10);
		}
		for (i = 0; i < 2; i++) {
			if (!has(opt.conns, opt.nconns, ks[i]))
				continue;
			snprintf(param, sizeof(param), "K=%ld %dp", ks[i],
				 opt.procs[p]);
			snprintf(what, sizeof(what),
				 "aio-poll-ours even with epoll-oneshot, %s", param);
			report_target("loop", what,
				      ratio_of("loop", "aio-poll-ours",
					       "epoll-oneshot", param), 1.0);
		}
	}
}

void report_targets(void)
{
	if (opt.workloads & WL_REAP)
		reap_targets();
	if (opt.workloads & WL_LOOP)
		loop_targets();
	io_targets();
	async_targets();
}

/* Said whether or not targets are asked for: when the ring itself, with
 * no library at all, is already dearer than io_uring, no AIO ring reaper
 * can win there. */
void reap_floor_lines(void)
{
#ifdef HAVE_LIBURING
	static const long batches[] = { 16, 256 };
	char param[24];
	double r;
	size_t i;

	if (!(opt.workloads & WL_REAP))
		return;
	for (i = 0; i < 2; i++) {
		if (!has(opt.batches, opt.nbatches, batches[i]))
			continue;
		snprintf(param, sizeof(param), "batch=%ld", batches[i]);
		r = ratio_of("reap", "ring-copy-floor", "io_uring-cq", param);
		if (r < 1.0)
			report_line("reap",
				    "%s: even ring-copy-floor (a bare copy of the "
				    "kernel's 32-byte events) costs %.2fx "
				    "io_uring-cq (16-byte CQEs): no AIO ring "
				    "reaper can beat io_uring here.", param,
				    1.0 / r);
	}
#endif
}
