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

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "libaio.h"

#define MAX_LIST	16
#define MAX_REPS	1000

/* What an AIO series calls: our library, our library on a context the
 * registry does not know (kernel reaping), or the stock library.  calls()
 * is the number of AIO system calls made so far in this process: ours
 * counts its own (io_syscall_count), the stock library's are counted by
 * the tool's wrappers around it. */
struct aio_ops {
	const char *name;
	int (*setup)(int nr, io_context_t *ctx);
	int (*destroy)(io_context_t ctx);
	int (*submit)(io_context_t ctx, long nr, struct iocb **ios);
	int (*getevents)(io_context_t ctx, long min_nr, long nr,
			 struct io_event *ev, struct timespec *ts);
	unsigned long long (*calls)(void);
};

extern const struct aio_ops ops_ours;	/* io_setup: registered, ring reaper */
extern const struct aio_ops ops_ours_off; /* the same, async submission off */
extern const struct aio_ops ops_async;	/* the same, async submission on */
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
	const char *file;	/* the disk-backed file; NULL: one in /var/tmp */
	long file_mib;
	int loop;		/* --loop: also a loop device with direct I/O */
	long threads[MAX_LIST];	/* threads: threads sharing one context */
	int nthreads;
	long thread_depth;	/* threads: requests in flight per thread */
	int single;		/* file, threads: one event per io_getevents,
				 * one read per io_submit (fio's defaults) */
	int direct;		/* -1 auto, 0 off, 1 on */
	const char *stock;
	const char *series;	/* comma-separated filter, or NULL: all */
	int json, csv, progress;
	int targets;		/* --targets: the project's own targets */
};

#define WL_REAP	1
#define WL_LOOP	2
#define WL_FILE	4
#define WL_THREADS 8
#define WL_BUFFERED 16
#define WL_ALL	(WL_REAP | WL_LOOP | WL_FILE | WL_THREADS | WL_BUFFERED)

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
	/* Cost per operation (I/O or event), one sample per cell: user and
	 * system CPU of the whole process in ns (getrusage RUSAGE_SELF around
	 * the timed part), and AIO system calls (or io_uring_enter calls). */
	double usr[MAX_REPS], sys[MAX_REPS], sc[MAX_REPS];
	int nc;
	/* The longest io_submit call of each cell, in ns (buffered). */
	double submax[MAX_REPS];
	int nsm;
	/* threads: completions delivered twice and never delivered */
	long long dups, lost;
	int checked;		/* dups and lost were counted */
	/* filled by report_finish() */
	double median, min, max, ratio, ratio2;
	double usr_med, sys_med, cpu_med, sc_med, cpu_ratio, sc_ratio;
	double submax_med;	/* median of submax, ns; NaN if none */
};

struct row *row_get(const char *workload, const char *series,
		    const char *param, const char *unit, int lower_better,
		    const char *baseline, const char *baseline2);
void row_add(struct row *r, double v);
void row_note(struct row *r, const char *note);

/* A snapshot of the process's CPU time (ns) and a system-call count. */
struct cost {
	double usr, sys;
	unsigned long long calls;
};
void cost_now(struct cost *c, unsigned long long calls);
/* Add the cost between a and b, spread over ops operations. */
void row_add_cost(struct row *r, const struct cost *a, const struct cost *b,
		  double ops);
void row_add_integrity(struct row *r, long long dups, long long lost);
void row_add_submit_max(struct row *r, double ns);
extern int integrity_failed;	/* a duplicate or lost completion: exit 3 */

/* io_uring_enter calls the tool made (liburing enters exactly once per
 * io_uring_submit_and_wait with wait_nr > 0 and no SQPOLL). */
extern _Atomic unsigned long long uring_calls;
static inline unsigned long long uring_calls_now(void)
{
	return atomic_load_explicit(&uring_calls, memory_order_relaxed);
}

const struct row *row_find(const char *workload, const char *series,
			    const char *param);
void report_header(void);
void report_finish(void);	/* medians, ratios */
void report_print(void);	/* table, JSON or CSV on stdout */

/* Extra lines printed under a workload's table (targets, explanations). */
void report_line(const char *workload, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A target: shown with its measured value, never asserted. */
void report_target(const char *workload, const char *what, double measured,
		   double want);
/* The project's own targets (bench-targets.c, --targets), from the
 * finished rows; reap_floor_lines: the floor lines every run prints. */
void report_targets(void);
void reap_floor_lines(void);

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
long deepest_depth(void);
int pin_cpu(int cpu);
int other_cpu(int cpu);

/*
 * The grid driver (bench-grid.c): what a workload gives it.  Params are
 * the table's row parameters (batch=16, direct QD=32, ...), cut into
 * groups of `group` (0: one group); the table shows each group series by
 * series.  Each repetition measures every cell once, param by param with
 * the series inside (series by series with series_outer).
 */
enum {
	GRID_DONE = 0,		/* measured; the cell recorded it */
	GRID_SKIP = 1,		/* nothing measured this time */
	GRID_NOTE = 2,		/* nothing measured: why replaces the note */
	GRID_DEAD = -1,		/* as GRID_NOTE, and the series stops in
				 * this group */
	GRID_GONE = -2,		/* the series stops in this group, the note
				 * stays */
};
struct grid {
	const char *workload;
	const char *const *series;	/* names, as --series takes them */
	int nseries, nparams, group, series_outer;
	int (*on)(int s, int p);	/* NULL: every cell --series keeps */
	struct row *(*row)(int s, int p);
	void (*note)(int s, int p, struct row *r);	/* NULL: none */
	void (*warm)(int s, int p);	/* an untimed pass first; NULL: none */
	int (*cell)(int s, int p, struct row *r, char *why, size_t len);
};
void grid_run(const struct grid *g);
/* The note of a row of the stock library's series when it is not loaded
 * (stock), or of io_uring's when liburing was not found (uring). */
void note_unavailable(struct row *r, int stock, int uring);

/* Workloads. */
void bench_reap(void);
void bench_loop(void);
void bench_file(void);
void bench_threads(void);
void bench_buffered(void);

/*
 * The files and devices that file and threads read: a tmpfs file, a file
 * on a disk-backed file system (O_DIRECT where it works), and with --loop
 * a loop device with direct I/O over that file.  Made by file_prepare(),
 * undone by file_cleanup() (also from atexit and a second signal).
 */
#define BS	4096
struct target {
	const char *name;	/* "tmpfs", "direct", "buffered", "loop", or
				 * "direct-tmpfs"/"buffered-tmpfs" for --file
				 * on tmpfs */
	char path[4096];
	int fd;
	int direct;		/* opened with O_DIRECT */
	unsigned long long nblocks;
	char desc[320];		/* one line for the report */
};
#define MAX_TARGETS 3
extern struct target targets[MAX_TARGETS];
extern int ntargets;
void file_prepare(void);
int submit_reads(const struct aio_ops *ops, io_context_t ctx, long n,
		 struct iocb **v);

/* The next random BS-aligned offset below nblocks blocks (xorshift64,
 * one sequence for the whole run). */
long long next_off(unsigned long long nblocks);
long aio_drain(const struct aio_ops *ops, io_context_t ctx, long inflight,
	       struct io_event *ev);
long aio_wait(const struct aio_ops *ops, io_context_t ctx, long min_nr,
	      long nr, struct io_event *ev, char *why, size_t len);
#ifdef HAVE_LIBURING
struct io_uring;
/* Submit what is queued and wait for one completion, counted in
 * uring_calls. */
int uring_submit_and_wait(struct io_uring *ring);
#endif

/* Helpers of file_prepare() that the buffered workload shares. */
int fill_file(int fd, long mib);
int make_file(int slot, const char *path, const char *dir, long mib);
const char *made_file(int slot);	/* created[slot], or NULL */
void drop_file(int slot);		/* unlink it now */
const char *fs_name(const char *path);
int on_tmpfs(const char *path);
int attach_loop(const char *file, int rw, char *dev, size_t devlen, int *dio,
		int *lfd);

/* Set by a SIGINT/SIGTERM handler: workloads stop early, files are removed. */
extern volatile int interrupted;
extern int run_failed;		/* a workload could not run at all: exit 1 */
void file_cleanup(void);

#endif /* AIO_BENCH_UTIL_H */
