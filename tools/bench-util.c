/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: library back ends, result rows and the three output formats.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench-util.h"

struct options opt;
volatile int interrupted;
int run_failed;

/* ---- back ends ---------------------------------------------------------- */

static int ours_getevents(io_context_t ctx, long min_nr, long nr,
			  struct io_event *ev, struct timespec *ts)
{
	return io_getevents(ctx, min_nr, nr, ev, ts);
}

const struct aio_ops ops_ours = {
	"ours", io_setup, io_destroy, io_submit, ours_getevents,
	io_syscall_count,
};

/* A context made behind the library's back: the registry does not know
 * it, so our io_getevents hands every reap to the kernel. */
static int raw_setup(int nr, io_context_t *ctx)
{
	*ctx = NULL;
	return syscall(SYS_io_setup, nr, ctx) < 0 ? -errno : 0;
}

static int raw_destroy(io_context_t ctx)
{
	return syscall(SYS_io_destroy, ctx) < 0 ? -errno : 0;
}

/* Our io_submit and io_getevents count their own calls; the raw setup
 * and destroy happen outside every measured window. */
const struct aio_ops ops_sys = {
	"ours-syscall", raw_setup, raw_destroy, io_submit, ours_getevents,
	io_syscall_count,
};

/*
 * The stock library keeps no count, so the tool counts its calls: each
 * one is one system call, except io_getevents with a zero timeout on a
 * ring whose head equals its tail, which the stock library answers
 * itself (it checks the ring's magic number first).  Relaxed: the count
 * is read only after the threads that call these have been joined, or
 * by the thread that made the calls.
 */
static _Atomic unsigned long long stock_calls;
_Atomic unsigned long long uring_calls;
static int (*stock_setup_fn)(int, io_context_t *);
static int (*stock_destroy_fn)(io_context_t);
static int (*stock_submit_fn)(io_context_t, long, struct iocb **);
static int (*stock_getevents_fn)(io_context_t, long, long, struct io_event *,
				 struct timespec *);

static void stock_count(void)
{
	atomic_fetch_add_explicit(&stock_calls, 1, memory_order_relaxed);
}

static int stock_setup(int nr, io_context_t *ctx)
{
	stock_count();
	return stock_setup_fn(nr, ctx);
}

static int stock_destroy(io_context_t ctx)
{
	stock_count();
	return stock_destroy_fn(ctx);
}

static int stock_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	stock_count();
	return stock_submit_fn(ctx, nr, ios);
}

struct ring_head {
	unsigned id, nr, head, tail, magic;
};

static int stock_getevents(io_context_t ctx, long min_nr, long nr,
			   struct io_event *ev, struct timespec *ts)
{
	const volatile struct ring_head *r = (const void *)ctx;

	if (!(ts && !ts->tv_sec && !ts->tv_nsec && r &&
	      r->magic == 0xa10a10a1u && r->head == r->tail))
		stock_count();
	return stock_getevents_fn(ctx, min_nr, nr, ev, ts);
}

static unsigned long long stock_calls_now(void)
{
	return atomic_load_explicit(&stock_calls, memory_order_relaxed);
}

struct aio_ops ops_stock = { "stock", NULL, NULL, NULL, NULL, stock_calls_now };
int stock_loaded;
char stock_error[256] = "not loaded";

/*
 * The stock library goes into a namespace of its own, so its io_setup and
 * ours coexist in one process without one interposing on the other.
 */
int stock_load(const char *path)
{
	void *h;

	if (!path || !*path) {
		snprintf(stock_error, sizeof(stock_error),
			 "no stock libaio configured (--stock PATH)");
		return -1;
	}
	h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(stock_error, sizeof(stock_error), "%s", dlerror());
		return -1;
	}
	*(void **)&stock_setup_fn = dlsym(h, "io_setup");
	*(void **)&stock_destroy_fn = dlsym(h, "io_destroy");
	*(void **)&stock_submit_fn = dlsym(h, "io_submit");
	*(void **)&stock_getevents_fn = dlsym(h, "io_getevents");
	if (!stock_setup_fn || !stock_destroy_fn || !stock_submit_fn ||
	    !stock_getevents_fn) {
		snprintf(stock_error, sizeof(stock_error),
			 "%s lacks an io_* symbol", path);
		return -1;
	}
	ops_stock.setup = stock_setup;
	ops_stock.destroy = stock_destroy;
	ops_stock.submit = stock_submit;
	ops_stock.getevents = stock_getevents;
	stock_loaded = 1;
	return 0;
}

/* ---- messages ----------------------------------------------------------- */

static int progress_on = -1;
static int progress_dirty;

void progress(const char *workload, int done, int total)
{
	if (progress_on < 0)
		progress_on = opt.progress || isatty(2);
	if (!progress_on)
		return;
	fprintf(stderr, "\raio-bench: %s %d/%d ", workload, done, total);
	progress_dirty = 1;
}

void progress_end(void)
{
	if (progress_dirty) {
		fprintf(stderr, "\r%40s\r", "");
		progress_dirty = 0;
	}
}

void die(const char *fmt, ...)
{
	va_list ap;

	progress_end();
	fputs("aio-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	file_cleanup();
	exit(1);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	progress_end();
	fputs("aio-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int series_on(const char *name)
{
	const char *s = opt.series;
	size_t len = strlen(name), n;

	if (!s)
		return 1;
	while (*s) {
		n = strcspn(s, ",");
		if (n == len && !strncmp(s, name, n))
			return 1;
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Another CPU this process may run on, or -1. */
int other_cpu(int cpu)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (i != cpu && CPU_ISSET(i, &set))
			return i;
	return -1;
}

/* ---- rows ---------------------------------------------------------------- */

#define MAX_ROWS 512
static struct row rows[MAX_ROWS];
static int nrows;

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

int report_missing(void)
{
	return nrows == 0;
}

/* ---- extra lines and targets --------------------------------------------- */

#define MAX_LINES 64
static struct {
	const char *workload;
	char text[320];
} lines[MAX_LINES];
static int nlines;

static struct {
	const char *workload;
	char what[120];
	double measured, want;
} goals[MAX_LINES];
static int ngoals;

void report_line(const char *workload, const char *fmt, ...)
{
	va_list ap;

	if (nlines == MAX_LINES)
		return;
	lines[nlines].workload = workload;
	va_start(ap, fmt);
	vsnprintf(lines[nlines].text, sizeof(lines[nlines].text), fmt, ap);
	va_end(ap);
	nlines++;
}

void report_target(const char *workload, const char *what, double measured,
		   double want)
{
	if (ngoals == MAX_LINES)
		return;
	goals[ngoals].workload = workload;
	snprintf(goals[ngoals].what, sizeof(goals[0].what), "%s", what);
	goals[ngoals].measured = measured;
	goals[ngoals].want = want;
	ngoals++;
}

/* ---- header: version, kernel, features ------------------------------------ */

static struct utsname uts;
static unsigned feat;
static const char *poll_text = "";
static double load1 = NAN;
static long ncpu;

static const char *feat_state(unsigned on, unsigned disabled)
{
	if (feat & on)
		return "native";
	if (feat & disabled)
		return "emulated (LIBAIO_DISABLE)";
	return "emulated (kernel lacks it)";
}

/*
 * io_features() cannot say whether the kernel itself takes aio polls
 * (learning it takes a context and a poll), so the report asks the
 * kernel directly, with raw system calls the library does not see: a
 * poll for POLLOUT on a fresh eventfd completes at once where aio poll
 * exists (Linux 4.19), and is refused with EINVAL where it does not.
 */
static const char *poll_state(void)
{
	unsigned long ctx = 0;
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;
	const char *s = "unknown (the test poll could not be made)";
	long r;
	int efd;

	if (feat & IO_FEATURE_POLL_DISABLED)
		return "emulated (LIBAIO_DISABLE)";
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		return s;
	if (syscall(SYS_io_setup, 1, &ctx) != 0) {
		close(efd);
		return s;
	}
	io_prep_poll(&cb, efd, POLLOUT);
	r = syscall(SYS_io_submit, ctx, 1L, cbs);
	if (r == 1 && syscall(SYS_io_getevents, ctx, 1L, 1L, &ev, NULL) == 1)
		s = "native";
	else if (r < 0 && errno == EINVAL)
		s = "emulated (kernel lacks it)";
	syscall(SYS_io_destroy, ctx);
	close(efd);
	return s;
}

static const char *ring_state(void)
{
	if (feat & IO_FEATURE_RING)
		return "on (completions read from the ring)";
	if (feat & IO_FEATURE_RING_DISABLED)
		return "off (LIBAIO_DISABLE): the kernel reaps";
	return "off (unrecognised ring layout): the kernel reaps";
}

void report_header(void)
{
	uname(&uts);
	feat = io_features();
	poll_text = feat & IO_FEATURE_AIO ? poll_state() : "no (no kernel AIO)";
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (getloadavg(&load1, 1) != 1)
		load1 = NAN;
	if (opt.json || opt.csv)
		return;
	printf("aio-bench (%s %s)\n", PACKAGE_NAME, PACKAGE_VERSION);
	printf("kernel:       %s %s %s\n", uts.sysname, uts.release,
	       uts.machine);
	printf("cpus:         %ld online, load average %.2f%s\n", ncpu, load1,
	       load1 > 0.5 ? " (timings are noisy on a busy machine)" : "");
	printf("kernel AIO:   %s\n", feat & IO_FEATURE_AIO ? "yes" :
	       "no: the io_* system calls answer ENOSYS or EPERM (a kernel "
	       "without CONFIG_AIO, or a sandbox); the AIO rows are not "
	       "measured");
	printf("poll:         %s\n", poll_text);
	printf("pgetevents:   %s\n",
	       feat_state(IO_FEATURE_PGETEVENTS, IO_FEATURE_PGETEVENTS_DISABLED));
	printf("ring reaper:  %s\n", ring_state());
	printf("stock libaio: %s%s%s\n",
	       opt.stock && *opt.stock ? opt.stock : "(none)",
	       stock_loaded ? "" : ": ", stock_loaded ? "" : stock_error);
#ifdef HAVE_LIBURING
	printf("io_uring:     liburing (built in)\n");
#else
	printf("io_uring:     not built (configure found no liburing)\n");
#endif
	printf("run:          %d interleaved repetitions of %.3g s per cell\n",
	       opt.reps, opt.cell_time);
	fflush(stdout);
}

/* ---- output ------------------------------------------------------------- */

static void fmt_value(char *buf, size_t n, const struct row *r, double v)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (r->lower_better)
		snprintf(buf, n, "%.2f", v);
	else
		snprintf(buf, n, "%.0f", v);
}

static void fmt_ratio(char *buf, size_t n, double v)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2fx", v);
}

static const char *titles[][2] = {
	{ "reap", "reap: ns per completion of ready events (lower is better)" },
	{ "loop", "loop: echoed messages per second (higher is better)" },
	{ "file", "file: random 4 KiB reads per second (higher is better)" },
	{ "threads", "threads: random 4 KiB reads per second, threads sharing one "
		     "context (higher is better)" },
};

/* The text table shows reap costs in ns per event, the others in us. */
static double cost_scale(const char *workload)
{
	return strcmp(workload, "reap") ? 1e-3 : 1.0;
}

static void fmt_cost(char *buf, size_t n, double v)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (v >= 100)
		snprintf(buf, n, "%.0f", v);
	else if (v >= 10)
		snprintf(buf, n, "%.1f", v);
	else
		snprintf(buf, n, "%.2f", v);
}

static void fmt_cost_ratio(char *buf, size_t n, double v)
{
	if (isinf(v))
		snprintf(buf, n, "inf");
	else
		fmt_ratio(buf, n, v);
}

static void print_table(const char *workload, const char *title)
{
	const char *b1 = NULL, *b2 = NULL, *cu = cost_scale(workload) == 1 ?
							 "ns" : "us";
	double sc = cost_scale(workload);
	char h1[40], h2[40], hc[40];
	int i, any = 0, costs = 0, checks = 0;

	for (i = 0; i < nrows; i++) {
		if (strcmp(rows[i].workload, workload))
			continue;
		any = 1;
		if (!b1)
			b1 = rows[i].baseline;
		if (!b2)
			b2 = rows[i].baseline2;
		costs |= rows[i].nc > 0;
		checks |= rows[i].checked;
	}
	if (!any)
		return;
	snprintf(h1, sizeof(h1), "vs %s", b1 ? b1 : "-");
	snprintf(h2, sizeof(h2), "vs %s", b2 ? b2 : "-");
	printf("\n== %s\n", title);
	printf("%-22s %-17s %10s %21s %11s", "series", "param", "median",
	       "spread (min-max)", h1);
	if (b2)
		printf(" %11s", h2);
	if (costs) {
		snprintf(hc, sizeof(hc), "usr %s", cu);
		printf(" %8s", hc);
		snprintf(hc, sizeof(hc), "sys %s", cu);
		printf(" %8s %8s %8s %8s", hc, "cpu vs", "sc/op", "sc vs");
	}
	if (checks)
		printf(" %5s %5s", "dup", "lost");
	printf("  note\n");
	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		char med[32], lo[32], hi[32], sp[70], r1[24], r2[24];
		char u[24], s_[24], cr[24], scv[24], sr[24];

		if (strcmp(r->workload, workload))
			continue;
		fmt_value(med, sizeof(med), r, r->median);
		fmt_value(lo, sizeof(lo), r, r->min);
		fmt_value(hi, sizeof(hi), r, r->max);
		if (r->n)
			snprintf(sp, sizeof(sp), "%s-%s", lo, hi);
		else
			snprintf(sp, sizeof(sp), "-");
		fmt_ratio(r1, sizeof(r1), r->ratio);
		fmt_ratio(r2, sizeof(r2), r->ratio2);
		printf("%-22s %-17s %10s %21s %11s", r->series, r->param, med,
		       sp, r1);
		if (b2)
			printf(" %11s", r->baseline2 ? r2 : "");
		if (costs) {
			fmt_cost(u, sizeof(u), r->usr_med * sc);
			fmt_cost(s_, sizeof(s_), r->sys_med * sc);
			fmt_cost_ratio(cr, sizeof(cr), r->cpu_ratio);
			if (isnan(r->sc_med))
				snprintf(scv, sizeof(scv), "-");
			else
				snprintf(scv, sizeof(scv), "%.3f", r->sc_med);
			fmt_cost_ratio(sr, sizeof(sr), r->sc_ratio);
			printf(" %8s %8s %8s %8s %8s", u, s_, cr, scv, sr);
		}
		if (checks) {
			if (r->checked)
				printf(" %5lld %5lld", r->dups, r->lost);
			else
				printf(" %5s %5s", "-", "-");
		}
		printf("  %s\n", r->note);
	}
	if (costs)
		printf("usr/sys: CPU time of the whole process per %s (getrusage "
		       "RUSAGE_SELF around the timed part); sc/op: AIO system calls "
		       "per %s (io_uring_enter for io_uring); \"vs\": %s over the "
		       "row, higher is better.\n",
		       sc == 1 ? "event, ns" : "I/O, us",
		       sc == 1 ? "event" : "I/O", b1 ? b1 : "the baseline");
	for (i = 0; i < ngoals; i++) {
		if (strcmp(goals[i].workload, workload))
			continue;
		if (isnan(goals[i].measured))
			printf("target: %s: want >= %.2fx, not measured\n",
			       goals[i].what, goals[i].want);
		else
			printf("target: %s: want >= %.2fx, measured %.2fx: %s\n",
			       goals[i].what, goals[i].want,
			       goals[i].measured,
			       goals[i].measured >= goals[i].want ? "met" :
									 "MISSED");
	}
	for (i = 0; i < nlines; i++)
		if (!strcmp(lines[i].workload, workload))
			printf("%s\n", lines[i].text);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_num(double v)
{
	if (isnan(v) || isinf(v))
		printf("null");
	else
		printf("%.6g", v);
}

static void print_json(void)
{
	int i, j;

	printf("{\n  \"tool\": \"aio-bench\",\n  \"version\": ");
	json_str(PACKAGE_VERSION);
	printf(",\n  \"kernel\": ");
	json_str(uts.release);
	printf(",\n  \"machine\": ");
	json_str(uts.machine);
	printf(",\n  \"cpus\": %ld,\n  \"loadavg\": ", ncpu);
	json_num(load1);
	printf(",\n  \"features\": {\"aio\": %s, \"poll\": ",
	       feat & IO_FEATURE_AIO ? "true" : "false");
	json_str(poll_text);
	printf(", \"pgetevents\": ");
	json_str(feat_state(IO_FEATURE_PGETEVENTS, IO_FEATURE_PGETEVENTS_DISABLED));
	printf(", \"ring_reaper\": ");
	json_str(ring_state());
	printf(", \"bits\": %u},\n", feat);
	printf("  \"stock_libaio\": ");
	json_str(stock_loaded ? opt.stock : "");
	printf(",\n  \"io_uring\": %s,\n",
#ifdef HAVE_LIBURING
	       "true"
#else
	       "false"
#endif
	);
	printf("  \"reps\": %d,\n  \"cell_time\": ", opt.reps);
	json_num(opt.cell_time);
	printf(",\n  \"rows\": [");
	for (i = 0, j = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		printf("%s\n    {\"workload\": ", j++ ? "," : "");
		json_str(r->workload);
		printf(", \"series\": ");
		json_str(r->series);
		printf(", \"param\": ");
		json_str(r->param);
		printf(", \"unit\": ");
		json_str(r->unit);
		printf(", \"median\": ");
		json_num(r->median);
		printf(", \"min\": ");
		json_num(r->min);
		printf(", \"max\": ");
		json_num(r->max);
		printf(", \"reps\": %d, \"baseline\": ", r->n);
		if (r->baseline)
			json_str(r->baseline);
		else
			printf("null");
		printf(", \"ratio\": ");
		json_num(r->ratio);
		if (r->baseline2) {
			printf(", \"baseline2\": ");
			json_str(r->baseline2);
			printf(", \"ratio2\": ");
			json_num(r->ratio2);
		}
		printf(", \"cpu_usr_us\": ");
		json_num(r->usr_med / 1e3);
		printf(", \"cpu_sys_us\": ");
		json_num(r->sys_med / 1e3);
		printf(", \"cpu_us\": ");
		json_num(r->cpu_med / 1e3);
		printf(", \"cpu_ratio\": ");
		json_num(r->cpu_ratio);
		printf(", \"syscalls\": ");
		json_num(r->sc_med);
		printf(", \"syscall_ratio\": ");
		json_num(r->sc_ratio);
		printf(", \"cost_reps\": %d", r->nc);
		if (r->checked)
			printf(", \"dups\": %lld, \"lost\": %lld", r->dups, r->lost);
		printf(", \"note\": ");
		json_str(r->note);
		printf("}");
	}
	printf("\n  ],\n  \"targets\": [");
	for (i = 0; i < ngoals; i++) {
		printf("%s\n    {\"workload\": ", i ? "," : "");
		json_str(goals[i].workload);
		printf(", \"what\": ");
		json_str(goals[i].what);
		printf(", \"want\": ");
		json_num(goals[i].want);
		printf(", \"measured\": ");
		json_num(goals[i].measured);
		printf(", \"met\": %s}",
		       isnan(goals[i].measured) ? "null" :
		       goals[i].measured >= goals[i].want ? "true" : "false");
	}
	printf("\n  ]\n}\n");
}

static void csv_field(const char *s)
{
	if (strpbrk(s, ",\"\n")) {
		putchar('"');
		for (; *s; s++) {
			if (*s == '"')
				putchar('"');
			putchar(*s);
		}
		putchar('"');
	} else {
		fputs(s, stdout);
	}
}

static void csv_num(double v)
{
	if (isinf(v))
		printf("inf");
	else if (!isnan(v))
		printf("%.6g", v);
}

static void print_csv(void)
{
	int i;

	printf("workload,series,param,unit,median,min,max,reps,baseline,ratio,"
	       "baseline2,ratio2,cpu_usr_us,cpu_sys_us,cpu_us,cpu_ratio,"
	       "syscalls,syscall_ratio,dups,lost,kernel,version,note\n");
	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		csv_field(r->workload);
		putchar(',');
		csv_field(r->series);
		putchar(',');
		csv_field(r->param);
		putchar(',');
		csv_field(r->unit);
		putchar(',');
		csv_num(r->median);
		putchar(',');
		csv_num(r->min);
		putchar(',');
		csv_num(r->max);
		printf(",%d,", r->n);
		csv_field(r->baseline ? r->baseline : "");
		putchar(',');
		csv_num(r->ratio);
		putchar(',');
		csv_field(r->baseline2 ? r->baseline2 : "");
		putchar(',');
		csv_num(r->ratio2);
		putchar(',');
		csv_num(r->usr_med / 1e3);
		putchar(',');
		csv_num(r->sys_med / 1e3);
		putchar(',');
		csv_num(r->cpu_med / 1e3);
		putchar(',');
		csv_num(r->cpu_ratio);
		putchar(',');
		csv_num(r->sc_med);
		putchar(',');
		csv_num(r->sc_ratio);
		putchar(',');
		if (r->checked)
			printf("%lld,%lld", r->dups, r->lost);
		else
			putchar(',');
		putchar(',');
		csv_field(uts.release);
		putchar(',');
		csv_field(PACKAGE_VERSION);
		putchar(',');
		csv_field(r->note);
		putchar('\n');
	}
}

void report_print(void)
{
	size_t i;

	progress_end();
	if (opt.json) {
		print_json();
	} else if (opt.csv) {
		print_csv();
	} else {
		for (i = 0; i < sizeof(titles) / sizeof(titles[0]); i++)
			print_table(titles[i][0], titles[i][1]);
	}
	fflush(stdout);
}
