/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: shared declarations.
 *
 * Each workload measures a set of series over a set of parameters, in
 * interleaved repetitions (rep 1: every series and parameter, rep 2: every
 * series and parameter again, ...), and records one sample per cell.  The
 * report turns the samples of a (series, param) pair into one row: median,
 * min and max, and the speedup over a named baseline series.
 */
#ifndef AIO_BENCH_UTIL_H
#define AIO_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "libaio.h"

#define MAX_LIST	16
#define MAX_REPS	1000

/* What an AIO series calls: our library, our library on a context the
 * registry does not know (kernel reaping), or the stock library. */
struct aio_ops {
	const char *name;
	int (*setup)(int nr, io_context_t *ctx);
	int (*destroy)(io_context_t ctx);
	int (*submit)(io_context_t ctx, long nr, struct iocb **ios);
	int (*getevents)(io_context_t ctx, long min_nr, long nr,
			 struct io_event *ev, struct timespec *ts);
};

extern const struct aio_ops ops_ours;	/* io_setup: registered, ring reaper */
extern const struct aio_ops ops_sys;	/* raw io_setup: kernel reaps */
extern struct aio_ops ops_stock;	/* filled by stock_load() */
extern int stock_loaded;
extern char stock_error[256];
int stock_load(const char *path);

struct options {
	double cell_time;	/* seconds per measured cell */
	int reps;
	int workloads;		/* WL_* bits */
	long batches[MAX_LIST];
	int nbatches;
	long conns[MAX_LIST];
	int nconns;
	long depths[MAX_LIST];
	int ndepths;
	int procs[2];
	int nprocs;
	int cpus[2];
	int ncpus;
	const char *file;
	long file_mib;
	int direct;		/* -1 auto, 0 off, 1 on */
	const char *stock;
	const char *series;	/* comma-separated filter, or NULL: all */
	int json, csv, progress;
};

#define WL_REAP	1
#define WL_LOOP	2
#define WL_FILE	4

extern struct options opt;

/* One measured cell.  value is in the row's unit. */
struct row {
	const char *workload;
	char series[48];
	char param[24];
	const char *unit;	/* "ns/event", "msg/s", "IOPS" */
	int lower_better;
	double samples[MAX_REPS];
	int n;
	const char *baseline;	/* series name the ratio is against */
	const char *baseline2;	/* optional second baseline */
	char note[96];
	/* filled by report_finish() */
	double median, min, max, ratio, ratio2;
};

struct row *row_get(const char *workload, const char *series,
		    const char *param, const char *unit, int lower_better,
		    const char *baseline, const char *baseline2);
void row_add(struct row *r, double v);
void row_note(struct row *r, const char *note);

const struct row *row_find(const char *workload, const char *series,
			    const char *param);
void report_header(void);
void report_finish(void);	/* medians, ratios */
void report_print(void);	/* table, JSON or CSV on stdout */
int report_missing(void);

/* Extra lines printed under a workload's table (targets, explanations). */
void report_line(const char *workload, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A target: shown with its measured value, never asserted. */
void report_target(const char *workload, const char *what, double measured,
		   double want);

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void progress(const char *workload, int done, int total);
void progress_end(void);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int series_on(const char *name);
int pin_cpu(int cpu);
int other_cpu(int cpu);

/* Workloads. */
void bench_reap(void);
void bench_loop(void);
void bench_file(void);

/* Set by a SIGINT/SIGTERM handler: workloads stop early, files are removed. */
extern volatile int interrupted;
extern int run_failed;		/* a workload could not run at all: exit 1 */
void file_cleanup(void);

#endif /* AIO_BENCH_UTIL_H */
