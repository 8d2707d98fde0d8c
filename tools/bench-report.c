/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: what the machine offers (kernel, features, stock library,
 * liburing) and the results, as text tables, JSON or CSV, with the
 * workloads' extra lines and targets.  Apart so that output formats change
 * without touching how anything is measured or computed.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench-util.h"
#include "bench-stats.h"

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
static struct io_aio_limits lim;
static int lim_err = 1;	/* not asked yet */
static long lim_depth;

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

static void print_limits(void)
{
	if (lim_err) {
		printf("aio limit:    unknown: %s\n", strerror(-lim_err));
		return;
	}
	printf("aio limit:    fs.aio-nr %llu of fs.aio-max-nr %llu, %llu left "
	       "(machine-wide: every process and container)\n",
	       lim.aio_nr, lim.aio_max_nr, lim.available);
	printf("io_setup(%ld): charges %llu, maps %llu slots in %llu KiB "
	       "(%u possible CPUs, %u KiB pages)\n", lim_depth, lim.charge,
	       lim.ring_events, lim.ring_bytes / 1024, lim.possible_cpus,
	       lim.page_size / 1024);
}

void report_header(void)
{
	uname(&uts);
	feat = io_features();
	/* The io_setup the file workload makes: its deepest queue. */
	lim_depth = deepest_depth();
	lim_err = io_aio_limits((unsigned)lim_depth, &lim);
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
	print_limits();
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
	{ "buffered", "buffered: random 4 KiB buffered reads and writes per "
		      "second on a cold page cache (higher is better)" },
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

/* What a workload's table shows: its baselines and optional columns. */
struct table {
	const char *b1, *b2;
	int costs, checks, subs;
	double sc;		/* cost_scale() */
};

static int table_of(const char *workload, struct table *t)
{
	int i, any = 0;

	memset(t, 0, sizeof(*t));
	t->sc = cost_scale(workload);
	for (i = 0; i < nrows; i++) {
		if (strcmp(rows[i].workload, workload))
			continue;
		any = 1;
		if (!t->b1)
			t->b1 = rows[i].baseline;
		if (!t->b2)
			t->b2 = rows[i].baseline2;
		t->costs |= rows[i].nc > 0;
		t->checks |= rows[i].checked;
		t->subs |= rows[i].nsm > 0;
	}
	return any;
}

static void print_head(const struct table *t, const char *title)
{
	const char *cu = t->sc == 1 ? "ns" : "us";
	char h1[40], h2[40], hc[40];

	snprintf(h1, sizeof(h1), "vs %s", t->b1 ? t->b1 : "-");
	snprintf(h2, sizeof(h2), "vs %s", t->b2 ? t->b2 : "-");
	printf("\n== %s\n", title);
	printf("%-22s %-17s %10s %21s %11s", "series", "param", "median",
	       "spread (min-max)", h1);
	if (t->b2)
		printf(" %11s", h2);
	if (t->costs) {
		snprintf(hc, sizeof(hc), "usr %s", cu);
		printf(" %8s", hc);
		snprintf(hc, sizeof(hc), "sys %s", cu);
		printf(" %8s %8s %8s %8s", hc, "cpu vs", "sc/op", "sc vs");
	}
	if (t->checks)
		printf(" %5s %5s", "dup", "lost");
	if (t->subs)
		printf(" %8s", "sub max");
	printf("  note\n");
}

static void print_costs(const struct row *r, double sc)
{
	char u[24], s_[24], cr[24], scv[24], sr[24];

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

static void print_row(const struct table *t, const struct row *r)
{
	char med[32], lo[32], hi[32], sp[70], r1[24], r2[24], u[24];

	fmt_value(med, sizeof(med), r, r->median);
	fmt_value(lo, sizeof(lo), r, r->min);
	fmt_value(hi, sizeof(hi), r, r->max);
	if (r->n)
		snprintf(sp, sizeof(sp), "%s-%s", lo, hi);
	else
		snprintf(sp, sizeof(sp), "-");
	fmt_ratio(r1, sizeof(r1), r->ratio);
	fmt_ratio(r2, sizeof(r2), r->ratio2);
	printf("%-22s %-17s %10s %21s %11s", r->series, r->param, med, sp, r1);
	if (t->b2)
		printf(" %11s", r->baseline2 ? r2 : "");
	if (t->costs)
		print_costs(r, t->sc);
	if (t->checks) {
		if (r->checked)
			printf(" %5lld %5lld", r->dups, r->lost);
		else
			printf(" %5s %5s", "-", "-");
	}
	if (t->subs) {
		fmt_cost(u, sizeof(u), r->submax_med / 1e3);
		printf(" %8s", u);
	}
	printf("  %s\n", r->note);
}

/* Under the table: the cost legend, the targets, the workload's lines. */
static void print_foot(const struct table *t, const char *workload)
{
	int i;

	if (t->costs)
		printf("usr/sys: CPU time of the whole process per %s (getrusage "
		       "RUSAGE_SELF around the timed part); sc/op: AIO system calls "
		       "per %s (io_uring_enter for io_uring); \"vs\": %s over the "
		       "row, higher is better.\n",
		       t->sc == 1 ? "event, ns" : "I/O, us",
		       t->sc == 1 ? "event" : "I/O", t->b1 ? t->b1 : "the baseline");
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

static void print_table(const char *workload, const char *title)
{
	struct table t;
	int i;

	if (!table_of(workload, &t))
		return;
	print_head(&t, title);
	for (i = 0; i < nrows; i++)
		if (!strcmp(rows[i].workload, workload))
			print_row(&t, &rows[i]);
	print_foot(&t, workload);
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

/* The machine: version, kernel, features, limits, libraries, run. */
static void json_head(void)
{
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
	if (!lim_err)
		printf("  \"aio_limits\": {\"aio_nr\": %llu, \"aio_max_nr\": %llu, "
		       "\"available\": %llu, \"io_setup\": %ld, \"charge\": %llu, "
		       "\"ring_events\": %llu, \"ring_bytes\": %llu, "
		       "\"possible_cpus\": %u, \"page_size\": %u},\n",
		       lim.aio_nr, lim.aio_max_nr, lim.available, lim_depth,
		       lim.charge, lim.ring_events, lim.ring_bytes,
		       lim.possible_cpus, lim.page_size);
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
}

/* One row, an object. */
static void json_row(const struct row *r)
{
	printf("{\"workload\": ");
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
	printf(", \"submit_max_us\": ");
	json_num(r->submax_med / 1e3);
	if (r->checked)
		printf(", \"dups\": %lld, \"lost\": %lld", r->dups, r->lost);
	printf(", \"note\": ");
	json_str(r->note);
	printf("}");
}

static void json_targets(void)
{
	int i;

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
}

static void print_json(void)
{
	int i;

	json_head();
	printf(",\n  \"rows\": [");
	for (i = 0; i < nrows; i++) {
		printf("%s\n    ", i ? "," : "");
		json_row(&rows[i]);
	}
	printf("\n  ],\n  \"targets\": [");
	json_targets();
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
	       "syscalls,syscall_ratio,dups,lost,kernel,version,note,"
	       "submit_max_us\n");
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
		putchar(',');
		csv_num(r->submax_med / 1e3);
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
