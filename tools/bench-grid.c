/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: the one loop nest every workload runs.  Rows are made first,
 * in the order the table shows them, then the whole grid is measured
 * opt.reps times over: each repetition visits every (series, param) cell
 * once, so slow drifts of the machine (frequency, page cache, other
 * load) spread over all series alike instead of landing on one.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "bench-util.h"

void note_unavailable(struct row *r, int stock, int uring)
{
	if (stock && !stock_loaded)
		row_note(r, stock_error);
#ifndef HAVE_LIBURING
	if (uring)
		row_note(r, "not built with liburing");
#else
	(void)uring;
#endif
}

static int grid_on(const struct grid *g, int s, int p)
{
	return series_on(g->series[s]) && (!g->on || g->on(s, p));
}

static int grid_group(const struct grid *g)
{
	return g->group > 0 ? g->group : g->nparams > 0 ? g->nparams : 1;
}

/* Group by group, series by series, param by param: the table's order. */
static void grid_rows(const struct grid *g)
{
	int n = grid_group(g), first, s, p;

	for (first = 0; first < g->nparams; first += n)
		for (s = 0; s < g->nseries; s++)
			for (p = first; p < first + n && p < g->nparams; p++) {
				struct row *r;

				if (!grid_on(g, s, p))
					continue;
				r = g->row(s, p);
				if (g->note)
					g->note(s, p, r);
			}
}

/* One short untimed pass (page cache faulted in, each path warm). */
static void grid_warm(const struct grid *g)
{
	double saved = opt.cell_time;
	int s, p;

	opt.cell_time = 0.01;
	for (p = 0; p < g->nparams; p++)
		for (s = 0; s < g->nseries; s++)
			g->warm(s, p);
	opt.cell_time = saved;
}

/* One cell, and what its answer does to the row and to the series. */
static void grid_cell(const struct grid *g, int s, int p, unsigned char *dead)
{
	char why[160];
	struct row *r = g->row(s, p);
	int ret;

	if (*dead)
		return;
	why[0] = 0;
	ret = g->cell(s, p, r, why, sizeof(why));
	if (ret == GRID_DEAD || ret == GRID_GONE)
		*dead = 1;
	if (ret == GRID_DEAD || ret == GRID_NOTE) {
		memset(r->note, 0, sizeof(r->note));
		row_note(r, why);
	}
}

void grid_run(const struct grid *g)
{
	int n = grid_group(g), cells = g->nseries * g->nparams;
	int rep, i, s, p, done = 0, total = 0;
	unsigned char *dead;

	/* One flag per series and group: a series that failed for good on
	 * one target is not tried on it again. */
	dead = calloc((size_t)((g->nparams + n - 1) / n + 1) *
		      (size_t)g->nseries, 1);
	if (!dead)
		die("out of memory");
	grid_rows(g);
	if (g->warm)
		grid_warm(g);
	for (i = 0; i < cells; i++)
		total += grid_on(g, i / g->nparams, i % g->nparams);
	total *= opt.reps;
	for (rep = 0; rep < opt.reps && !interrupted; rep++)
		for (i = 0; i < cells && !interrupted; i++) {
			s = g->series_outer ? i / g->nparams : i % g->nseries;
			p = g->series_outer ? i % g->nparams : i / g->nseries;
			if (!grid_on(g, s, p))
				continue;
			progress(g->workload, ++done, total);
			grid_cell(g, s, p, &dead[(p / n) * g->nseries + s]);
		}
	progress_end();
	free(dead);
}
