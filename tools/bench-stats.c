/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: the samples of every (workload, series, param) cell, their
 * CPU and system-call cost, and the medians and ratios made of them.
 * Apart from the report so the numbers are settled in one place, whatever
 * format then prints them.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench-util.h"
#include "bench-stats.h"

/* ---- rows ---------------------------------------------------------------- */

#define MAX_ROWS 512
struct row rows[MAX_ROWS];
int nrows;

struct row *row_get(const char *workload, const char *series,
		    const char *param, const char *unit, int lower_better,
		    const char *baseline, const char *baseline2)
{
	struct row *r;
	int i;

	for (i = 0; i < nrows; i++) {
		r = &rows[i];
		if (!strcmp(r->workload, workload) &&
		    !strcmp(r->series, series) && !strcmp(r->param, param))
			return r;
	}
	if (nrows == MAX_ROWS)
		die("too many result rows");
	r = &rows[nrows++];
	memset(r, 0, sizeof(*r));
	r->workload = workload;
	snprintf(r->series, sizeof(r->series), "%s", series);
	snprintf(r->param, sizeof(r->param), "%s", param);
	r->unit = unit;
	r->lower_better = lower_better;
	r->baseline = baseline;
	r->baseline2 = baseline2;
	r->ratio = r->ratio2 = NAN;
	r->median = r->min = r->max = NAN;
	return r;
}

void row_add(struct row *r, double v)
{
	if (r->n < MAX_REPS)
		r->samples[r->n++] = v;
}

void row_note(struct row *r, const char *note)
{
	if (!r->note[0])
		snprintf(r->note, sizeof(r->note), "%s", note);
}

/*
 * RUSAGE_SELF: the whole process, because work done for a series may run
 * on threads other than the caller's (the worker threads of the threads
 * workload, io_uring's io-wq workers, our poll helper).  The kernel keeps
 * the total exactly (scheduler nanoseconds); the user/system split is in
 * proportion to timer-tick samples, so it is coarse for short cells.
 */
void cost_now(struct cost *c, unsigned long long calls)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	c->usr = ru.ru_utime.tv_sec * 1e9 + ru.ru_utime.tv_usec * 1e3;
	c->sys = ru.ru_stime.tv_sec * 1e9 + ru.ru_stime.tv_usec * 1e3;
	c->calls = calls;
}

void row_add_cost(struct row *r, const struct cost *a, const struct cost *b,
		  double ops)
{
	if (r->nc >= MAX_REPS || !(ops > 0))
		return;
	r->usr[r->nc] = (b->usr - a->usr) / ops;
	r->sys[r->nc] = (b->sys - a->sys) / ops;
	r->sc[r->nc] = (double)(b->calls - a->calls) / ops;
	r->nc++;
}

int integrity_failed;

void row_add_integrity(struct row *r, long long dups, long long lost)
{
	r->dups += dups;
	r->lost += lost;
	r->checked = 1;
	if (dups || lost)
		integrity_failed = 1;
}

void row_add_submit_max(struct row *r, double ns)
{
	if (r->nsm < MAX_REPS)
		r->submax[r->nsm++] = ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

const struct row *row_find(const char *workload, const char *series,
			    const char *param)
{
	int i;

	for (i = 0; i < nrows; i++)
		if (!strcmp(rows[i].workload, workload) &&
		    !strcmp(rows[i].series, series) &&
		    !strcmp(rows[i].param, param))
			return &rows[i];
	return NULL;
}

static double ratio_to(const struct row *r, const char *baseline)
{
	const struct row *b;

	if (!baseline || !r->n)
		return NAN;
	b = row_find(r->workload, baseline, r->param);
	if (!b || !b->n || !(b->median > 0) || !(r->median > 0))
		return NAN;
	return r->lower_better ? b->median / r->median : r->median / b->median;
}

static double median_of(const double *v, int n)
{
	double s[MAX_REPS];

	if (!n)
		return NAN;
	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	return n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Baseline over this row, for a lower-is-better cost: inf when this row
 * is 0 and the baseline is not, NaN when either is missing. */
static double cost_ratio(double base, double mine)
{
	if (isnan(base) || isnan(mine))
		return NAN;
	if (mine == 0)
		return base == 0 ? 1.0 : INFINITY;
	return base / mine;
}

void report_finish(void)
{
	double tot[MAX_REPS];
	int i, k;

	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		double s[MAX_REPS];

		r->usr_med = r->sys_med = r->cpu_med = r->sc_med = NAN;
		r->cpu_ratio = r->sc_ratio = NAN;
		r->submax_med = median_of(r->submax, r->nsm);
		if (r->nc) {
			for (k = 0; k < r->nc; k++)
				tot[k] = r->usr[k] + r->sys[k];
			r->usr_med = median_of(r->usr, r->nc);
			r->sys_med = median_of(r->sys, r->nc);
			r->cpu_med = median_of(tot, r->nc);
			r->sc_med = median_of(r->sc, r->nc);
		}
		if (!r->n)
			continue;
		memcpy(s, r->samples, r->n * sizeof(double));
		qsort(s, r->n, sizeof(double), cmp_double);
		r->min = s[0];
		r->max = s[r->n - 1];
		r->median = median_of(r->samples, r->n);
	}
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		const struct row *b;

		r->ratio = ratio_to(r, r->baseline);
		r->ratio2 = ratio_to(r, r->baseline2);
		b = r->baseline ? row_find(r->workload, r->baseline, r->param) : NULL;
		if (b && b->nc && r->nc) {
			r->cpu_ratio = cost_ratio(b->cpu_med, r->cpu_med);
			r->sc_ratio = cost_ratio(b->sc_med, r->sc_med);
		}
	}
}
