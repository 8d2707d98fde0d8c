/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: is AIO poll with ring reaping worth it on this machine?
 *
 * Prints the library and kernel versions and the feature probe, then
 * measures four workloads side by side in one process (our library, the
 * stock libaio.so.1 loaded with dlmopen, epoll and io_uring), with the CPU
 * time and system calls each operation took, and prints a table per
 * workload, or one JSON object, or CSV.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"

static _Noreturn void usage_error(const char *fmt, const char *arg)
{
	fputs("aio-bench: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'aio-bench --help' for more information.\n", stderr);
	exit(2);
}

static int parse_list(const char *s, long *out, int max, long lo, long hi)
{
	char *end;
	int n = 0;
	long v;

	for (;;) {
		errno = 0;
		v = strtol(s, &end, 10);
		if (end == s || errno || v < lo || v > hi || n == max)
			return -1;
		out[n++] = v;
		if (*end == 0)
			return n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

static int parse_workloads(const char *s)
{
	int w = 0;

	while (*s) {
		size_t n = strcspn(s, ",");

		if (n == 4 && !strncmp(s, "reap", 4))
			w |= WL_REAP;
		else if (n == 4 && !strncmp(s, "loop", 4))
			w |= WL_LOOP;
		else if (n == 4 && !strncmp(s, "file", 4))
			w |= WL_FILE;
		else if (n == 7 && !strncmp(s, "threads", 7))
			w |= WL_THREADS;
		else if (n == 8 && !strncmp(s, "buffered", 8))
			w |= WL_BUFFERED;
		else if (n == 3 && !strncmp(s, "all", 3))
			w |= WL_ALL;
		else
			return -1;
		s += n;
		if (*s == ',')
			s++;
	}
	return w;
}

/* Setters of the options that take an argument: 0, or -1 to refuse it. */
static int set_workloads(const char *arg)
{
	opt.workloads = parse_workloads(arg);
	return opt.workloads > 0 ? 0 : -1;
}

static int set_time(const char *arg)
{
	char *end;

	errno = 0;
	opt.cell_time = strtod(arg, &end);
	return end == arg || *end || errno ||
	       !(opt.cell_time > 0 && opt.cell_time <= 3600) ? -1 : 0;
}

static int set_one(const char *arg, long lo, long hi, long *out)
{
	return parse_list(arg, out, 1, lo, hi) == 1 ? 0 : -1;
}

static int set_reps(const char *arg)
{
	long v;

	if (set_one(arg, 1, MAX_REPS, &v))
		return -1;
	opt.reps = (int)v;
	return 0;
}

static int set_list(const char *arg, long *list, int *n, long lo, long hi)
{
	int got = parse_list(arg, list, MAX_LIST, lo, hi);

	if (got < 0)
		return -1;
	*n = got;
	return 0;
}

/* A batch divides the FILL events the reap workload takes per fill. */
static int set_batches(const char *arg)
{
	int i;

	if (set_list(arg, opt.batches, &opt.nbatches, 1, 3840))
		return -1;
	for (i = 0; i < opt.nbatches; i++)
		if (3840 % opt.batches[i])
			return -1;
	return 0;
}

static int set_conns(const char *arg)
{
	return set_list(arg, opt.conns, &opt.nconns, 1, 65536);
}

/* One or two ints, lo..hi, into out[] and *n. */
static int set_two(const char *arg, long lo, long hi, int *out, int *n)
{
	long tmp[2];
	int i, got = parse_list(arg, tmp, 2, lo, hi);

	if (got < 0)
		return -1;
	for (i = 0; i < got; i++)
		out[i] = (int)tmp[i];
	*n = got;
	return 0;
}

static int set_procs(const char *arg)
{
	if (set_two(arg, 1, 2, opt.procs, &opt.nprocs))
		return -1;
	return opt.nprocs == 2 && opt.procs[0] == opt.procs[1] ? -1 : 0;
}

static int set_cpu(const char *arg)
{
	return set_two(arg, 0, CPU_SETSIZE - 1, opt.cpus, &opt.ncpus);
}

static int set_depths(const char *arg)
{
	return set_list(arg, opt.depths, &opt.ndepths, 1, 4096);
}

static int set_file(const char *arg)
{
	opt.file = arg;
	return *arg ? 0 : -1;
}

static int set_file_size(const char *arg)
{
	return set_one(arg, 1, 1 << 20, &opt.file_mib);
}

/* Index of arg in words (NULL-terminated), or -1. */
static int word_of(const char *arg, const char *const *words)
{
	int i;

	for (i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	return -1;
}

static int set_direct(const char *arg)
{
	static const char *const w[] = { "auto", "off", "on", NULL };

	opt.direct = word_of(arg, w) - 1;	/* -1 auto, 0 off, 1 on */
	return opt.direct < -1 ? -1 : 0;
}

static int set_threads(const char *arg)
{
	return set_list(arg, opt.threads, &opt.nthreads, 1, 64);
}

static int set_thread_depth(const char *arg)
{
	return set_one(arg, 1, 1024, &opt.thread_depth);
}

static int set_pattern(const char *arg)
{
	static const char *const w[] = { "batch", "single", NULL };

	opt.single = word_of(arg, w);
	return opt.single < 0 ? -1 : 0;
}

static int set_series(const char *arg)
{
	opt.series = arg;
	return *arg ? 0 : -1;
}

static int set_stock(const char *arg)
{
	opt.stock = strcmp(arg, "none") ? arg : "";
	return 0;
}

static int show_help(const char *arg);

static int show_version(const char *arg)
{
	(void)arg;
	printf("aio-bench (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
	exit(0);
}

/*
 * Every option: its long name, short letter (0: none), argument (NULL:
 * none), help (each line but the first indented under the first; %s in
 * it is the default stock library), and what it sets: a flag set to 1,
 * or a setter whose refusal prints `bad` with the argument.
 */
static const struct optdef {
	const char *name;
	char letter;
	const char *arg, *help;
	int *flag;
	int (*set)(const char *arg);
	const char *bad;
} optdefs[] = {
	{ "workloads", 'w', "LIST", "workloads to run: reap,loop,file,threads,\n"
	  "buffered (default: all)", NULL, set_workloads,
	  "bad --workloads '%s' (want reap,loop,file,threads,buffered)" },
	{ "time", 't', "SECONDS", "time per measured cell (default 0.1)", NULL,
	  set_time, "bad --time '%s' (seconds, > 0)" },
	{ "reps", 'r', "N", "interleaved repetitions per cell (default 5)", NULL,
	  set_reps, "bad --reps '%s'" },
	{ "batches", 'b', "LIST", "reap batch sizes (default 1,16,256)", NULL,
	  set_batches, "bad --batches '%s' (1..3840, dividing 3840)" },
	{ "conns", 'k', "LIST", "loop: socket pairs K (default 1,64,1024)", NULL,
	  set_conns, "bad --conns '%s'" },
	{ "procs", 'p', "LIST", "loop: 1 = one process, 2 = peers in a second\n"
	  "process on another CPU; 1,2 = both (default 1)", NULL, set_procs,
	  "bad --procs '%s' (1, 2 or 1,2)" },
	{ "cpu", 'c', "CPU[,CPU]", "pin the benchmark to CPU; the second CPU is "
	  "for\nthe peer process of --procs 2", NULL, set_cpu,
	  "bad --cpu '%s'" },
	{ "depths", 'd', "LIST", "file, buffered: queue depths (default "
	  "1,32,128)", NULL, set_depths, "bad --depths '%s' (1..4096)" },
	{ "file", 'f', "PATH", "file, threads: the disk-backed file to read with\n"
	  "O_DIRECT (created with --file-size MiB and removed\n"
	  "afterwards if it does not exist); default: a\n"
	  "temporary file in /var/tmp.  A tmpfs file in\n"
	  "/dev/shm is always read as well.  buffered reads\n"
	  "and writes a file the tool made (beside PATH\n"
	  "if PATH existed).", NULL, set_file, "bad --file '%s'" },
	{ "file-size", 0, "MIB", "size of a file the tool creates (default 256)",
	  NULL, set_file_size, "bad --file-size '%s' (MiB)" },
	{ "direct", 0, "WHEN", "O_DIRECT for the disk-backed file: auto (where "
	  "the\nfile system takes it), on or off (default auto)", NULL,
	  set_direct, "bad --direct '%s' (auto, on or off)" },
	{ "loop", 0, NULL, "also read a loop device with direct I/O over the\n"
	  "disk-backed file (root only; detached on exit);\n"
	  "buffered: also a file on ext4 on a loop device", &opt.loop,
	  NULL, NULL },
	{ "threads", 'T', "LIST", "threads: threads sharing one context "
	  "(default 2,4)", NULL, set_threads, "bad --threads '%s' (1..64)" },
	{ "thread-depth", 0, "N", "threads: reads in flight per thread "
	  "(default 32)", NULL, set_thread_depth,
	  "bad --thread-depth '%s' (1..1024)" },
	{ "pattern", 0, "HOW", "file, threads, buffered: single (default: one "
	  "event per\nio_getevents, one read per io_submit, as fio does\n"
	  "by default) or batch (take up to the depth, resubmit\n"
	  "them in one io_submit)", NULL, set_pattern,
	  "bad --pattern '%s' (single or batch)" },
	{ "series", 0, "LIST", "run only these series (names as in the tables)",
	  NULL, set_series, "bad --series '%s'" },
	{ "stock", 0, "PATH", "the stock libaio.so.1 (default %s);\n"
	  "'none' skips it", NULL, set_stock, NULL },
	{ "json", 0, NULL, "print one JSON object instead of tables",
	  &opt.json, NULL, NULL },
	{ "csv", 0, NULL, "print CSV rows (with a header) instead of tables",
	  &opt.csv, NULL, NULL },
	{ "targets", 0, NULL, "also show this project's own targets: each ratio\n"
	  "beside the figure it aims at, met or MISSED", &opt.targets, NULL,
	  NULL },
	{ "progress", 0, NULL, "show a progress line on stderr even if it is\n"
	  "not a terminal", &opt.progress, NULL, NULL },
	{ "help", 'h', NULL, "show this help and exit", NULL, show_help, NULL },
	{ "version", 'V', NULL, "show the version and exit", NULL,
	  show_version, NULL },
};
#define NOPTS ((int)(sizeof(optdefs) / sizeof(optdefs[0])))

/* One option's help: "  -w, --workloads=LIST  text", more lines under. */
static void usage_option(const struct optdef *o)
{
	const char *stock = *STOCK_LIBAIO ? STOCK_LIBAIO : "none configured";
	const char *h = o->help, *nl;
	char head[40], line[100];

	snprintf(head, sizeof(head), "--%s%s%s", o->name, o->arg ? "=" : "",
		 o->arg ? o->arg : "");
	printf("  %c%c%c %-18s", o->letter ? '-' : ' ',
	       o->letter ? o->letter : ' ', o->letter ? ',' : ' ', head);
	for (;;) {
		nl = strchr(h, '\n');
		snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - h) : 99, h);
		if (strstr(line, "%s"))
			printf(line, stock);
		else
			fputs(line, stdout);
		putchar('\n');
		if (!nl)
			break;
		h = nl + 1;
		printf("%24s", "");
	}
}

static int show_help(const char *arg)
{
	int i;

	(void)arg;
	fputs("Usage: aio-bench [OPTION]...\n"
	      "Report the AIO features of this kernel and library, then measure "
	      "reaping,\nan echo event loop, file reads, threads sharing one "
	      "context and buffered\nI/O on a cold page cache with our libaio, "
	      "the stock libaio.so.1, epoll and\nio_uring, side by side in one "
	      "run, with CPU time and system calls per\noperation.\n\n", stdout);
	for (i = 0; i < NOPTS; i++)
		usage_option(&optdefs[i]);
	fputs("\nExit status: 0 on success, 1 if a benchmark could not run, 2 "
	      "on a usage\nerror, 3 if a completion was delivered twice or lost, "
	      "130 if interrupted.\n", stdout);
	exit(0);
}

static void set_defaults(void)
{
	static const long batches[] = { 1, 16, 256 }, conns[] = { 1, 64, 1024 },
			  depths[] = { 1, 32, 128 };

	opt.cell_time = 0.1;
	opt.reps = 5;
	opt.workloads = WL_ALL;
	opt.threads[0] = 2, opt.threads[1] = 4;
	opt.nthreads = 2;
	opt.thread_depth = 32;
	opt.single = 1;
	memcpy(opt.batches, batches, sizeof(batches));
	opt.nbatches = 3;
	memcpy(opt.conns, conns, sizeof(conns));
	opt.nconns = 3;
	memcpy(opt.depths, depths, sizeof(depths));
	opt.ndepths = 3;
	opt.procs[0] = 1;
	opt.nprocs = 1;
	opt.file_mib = 256;
	opt.direct = -1;
	opt.stock = STOCK_LIBAIO;
}

static void parse_args(int argc, char **argv)
{
	struct option longopts[NOPTS + 1];
	char shorts[3 * NOPTS + 2], *sp = shorts;
	const struct optdef *o;
	int c, i;

	set_defaults();
	memset(longopts, 0, sizeof(longopts));
	*sp++ = ':';	/* a missing argument is ':', not '?' */
	for (i = 0; i < NOPTS; i++) {
		o = &optdefs[i];
		longopts[i].name = o->name;
		longopts[i].has_arg = o->arg ? required_argument : no_argument;
		longopts[i].val = o->letter ? o->letter : 256 + i;
		if (o->letter) {
			*sp++ = o->letter;
			if (o->arg)
				*sp++ = ':';
		}
	}
	*sp = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, &i)) != -1) {
		if (c == ':')
			usage_error("option '%s' needs an argument",
				    argv[optind - 1]);
		for (i = 0; i < NOPTS && longopts[i].val != c; i++)
			;
		if (i == NOPTS)
			usage_error("unknown option '%s'", argv[optind - 1]);
		o = &optdefs[i];
		if (o->flag)
			*o->flag = 1;
		else if (o->set(optarg) < 0)
			usage_error(o->bad, optarg);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opt.json && opt.csv)
		usage_error("%s", "--json and --csv exclude each other");
}

/*
 * The first SIGINT/SIGTERM asks the workloads to stop early: the tool
 * still prints what it measured and removes its files.  A second one
 * does not wait: it removes the files, closes the loop device (which
 * detaches itself on the last close) and exits.
 */
static void on_signal(int sig)
{
	if (interrupted) {
		file_cleanup();
		signal(sig, SIG_DFL);
		raise(sig);
		_exit(130);
	}
	interrupted = 1;
}

static void at_exit(void)
{
	file_cleanup();
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int ret;

	parse_args(argc, argv);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	atexit(at_exit);
	if (opt.ncpus > 0 && (ret = pin_cpu(opt.cpus[0])) < 0) {
		fprintf(stderr, "aio-bench: cannot pin to CPU %d: %s\n",
			opt.cpus[0], strerror(-ret));
		return 2;
	}
	if (opt.stock && *opt.stock)
		stock_load(opt.stock);
	else
		snprintf(stock_error, sizeof(stock_error), "skipped (--stock none)");

	report_header();
	if (opt.workloads & WL_REAP)
		bench_reap();
	if (opt.workloads & WL_LOOP && !interrupted)
		bench_loop();
	if (opt.workloads & WL_FILE && !interrupted)
		bench_file();
	/* Last: once a thread has existed, glibc treats the process as
	 * multi-threaded for good, and the reaper takes its lock with a
	 * compare-and-swap from then on. */
	if (opt.workloads & WL_THREADS && !interrupted)
		bench_threads();
	/* After threads: its async series starts worker threads. */
	if (opt.workloads & WL_BUFFERED && !interrupted)
		bench_buffered();
	file_cleanup();
	report_finish();
	if (opt.targets)
		report_targets();
	reap_floor_lines();
	report_print();
	if (interrupted) {
		fprintf(stderr, "aio-bench: interrupted; partial results\n");
		return 130;
	}
	if (integrity_failed) {
		fprintf(stderr, "aio-bench: a completion was delivered twice or "
				"lost (see the dup and lost columns)\n");
		return 3;
	}
	return run_failed ? 1 : 0;
}
