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
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: aio-bench [OPTION]...\n"
"Report the AIO features of this kernel and library, then measure reaping,\n"
"an echo event loop, file reads, threads sharing one context and buffered\n"
"I/O on a cold page cache with our libaio, the stock libaio.so.1, epoll and\n"
"io_uring, side by side in one run, with CPU time and system calls per\n"
"operation.\n"
"\n"
"  -w, --workloads=LIST  workloads to run: reap,loop,file,threads,\n"
"                        buffered (default: all)\n"
"  -t, --time=SECONDS    time per measured cell (default 0.1)\n"
"  -r, --reps=N          interleaved repetitions per cell (default 5)\n"
"  -b, --batches=LIST    reap batch sizes (default 1,16,256)\n"
"  -k, --conns=LIST      loop: socket pairs K (default 1,64,1024)\n"
"  -p, --procs=LIST      loop: 1 = one process, 2 = peers in a second\n"
"                        process on another CPU; 1,2 = both (default 1)\n"
"  -c, --cpu=CPU[,CPU]   pin the benchmark to CPU; the second CPU is for\n"
"                        the peer process of --procs 2\n"
"  -d, --depths=LIST     file, buffered: queue depths (default 1,32,128)\n"
"  -f, --file=PATH       file, threads: the disk-backed file to read with\n"
"                        O_DIRECT (created with --file-size MiB and removed\n"
"                        afterwards if it does not exist); default: a\n"
"                        temporary file in /var/tmp.  A tmpfs file in\n"
"                        /dev/shm is always read as well.  buffered reads\n"
"                        and writes a file the tool made (beside PATH\n"
"                        if PATH existed).\n"
"      --file-size=MIB   size of a file the tool creates (default 256)\n"
"      --direct=WHEN     O_DIRECT for the disk-backed file: auto (where the\n"
"                        file system takes it), on or off (default auto)\n"
"      --loop            also read a loop device with direct I/O over the\n"
"                        disk-backed file (root only; detached on exit);\n"
"                        buffered: also a file on ext4 on a loop device\n"
"  -T, --threads=LIST    threads: threads sharing one context (default 2,4)\n"
"      --thread-depth=N  threads: reads in flight per thread (default 32)\n"
"      --pattern=HOW     file, threads, buffered: single (default: one event per\n"
"                        io_getevents, one read per io_submit, as fio does\n"
"                        by default) or batch (take up to the depth, resubmit\n"
"                        them in one io_submit)\n"
"      --series=LIST     run only these series (names as in the tables)\n"
"      --stock=PATH      the stock libaio.so.1 (default %s);\n"
"                        'none' skips it\n"
"      --json            print one JSON object instead of tables\n"
"      --csv             print CSV rows (with a header) instead of tables\n"
"      --progress        show a progress line on stderr even if it is\n"
"                        not a terminal\n"
"  -h, --help            show this help and exit\n"
"  -V, --version         show the version and exit\n"
"\n"
"Exit status: 0 on success, 1 if a benchmark could not run, 2 on a usage\n"
"error, 3 if a completion was delivered twice or lost, 130 if interrupted.\n",
		*STOCK_LIBAIO ? STOCK_LIBAIO : "none configured");
}

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

enum { O_JSON = 256, O_CSV, O_STOCK, O_PROGRESS, O_FILESIZE, O_DIRECT_,
       O_SERIES, O_LOOP, O_TDEPTH, O_PATTERN };

static const struct option longopts[] = {
	{ "workloads", required_argument, NULL, 'w' },
	{ "time", required_argument, NULL, 't' },
	{ "reps", required_argument, NULL, 'r' },
	{ "batches", required_argument, NULL, 'b' },
	{ "conns", required_argument, NULL, 'k' },
	{ "procs", required_argument, NULL, 'p' },
	{ "cpu", required_argument, NULL, 'c' },
	{ "depths", required_argument, NULL, 'd' },
	{ "file", required_argument, NULL, 'f' },
	{ "file-size", required_argument, NULL, O_FILESIZE },
	{ "direct", required_argument, NULL, O_DIRECT_ },
	{ "loop", no_argument, NULL, O_LOOP },
	{ "threads", required_argument, NULL, 'T' },
	{ "thread-depth", required_argument, NULL, O_TDEPTH },
	{ "pattern", required_argument, NULL, O_PATTERN },
	{ "stock", required_argument, NULL, O_STOCK },
	{ "series", required_argument, NULL, O_SERIES },
	{ "json", no_argument, NULL, O_JSON },
	{ "csv", no_argument, NULL, O_CSV },
	{ "progress", no_argument, NULL, O_PROGRESS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void parse_args(int argc, char **argv)
{
	long tmp[MAX_LIST];
	char *end;
	int c, i, n;

	opt.cell_time = 0.1;
	opt.reps = 5;
	opt.workloads = WL_ALL;
	opt.threads[0] = 2, opt.threads[1] = 4;
	opt.nthreads = 2;
	opt.thread_depth = 32;
	opt.single = 1;
	opt.batches[0] = 1, opt.batches[1] = 16, opt.batches[2] = 256;
	opt.nbatches = 3;
	opt.conns[0] = 1, opt.conns[1] = 64, opt.conns[2] = 1024;
	opt.nconns = 3;
	opt.depths[0] = 1, opt.depths[1] = 32, opt.depths[2] = 128;
	opt.ndepths = 3;
	opt.procs[0] = 1;
	opt.nprocs = 1;
	opt.file_mib = 256;
	opt.direct = -1;
	opt.stock = STOCK_LIBAIO;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:t:r:b:k:p:c:d:f:T:hV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'w':
			opt.workloads = parse_workloads(optarg);
			if (opt.workloads <= 0)
				usage_error("bad --workloads '%s' (want "
					    "reap,loop,file,threads,buffered)",
					    optarg);
			break;
		case 't':
			errno = 0;
			opt.cell_time = strtod(optarg, &end);
			if (end == optarg || *end || errno ||
			    !(opt.cell_time > 0 && opt.cell_time <= 3600))
				usage_error("bad --time '%s' (seconds, > 0)", optarg);
			break;
		case 'r':
			if (parse_list(optarg, tmp, 1, 1, MAX_REPS) != 1)
				usage_error("bad --reps '%s'", optarg);
			opt.reps = (int)tmp[0];
			break;
		case 'b':
			n = parse_list(optarg, opt.batches, MAX_LIST, 1, 3840);
			if (n < 0)
				usage_error("bad --batches '%s' (1..3840, dividing 3840)",
					    optarg);
			for (i = 0; i < n; i++)
				if (3840 % opt.batches[i])
					usage_error("bad --batches '%s' (1..3840, "
						    "dividing 3840)", optarg);
			opt.nbatches = n;
			break;
		case 'k':
			n = parse_list(optarg, opt.conns, MAX_LIST, 1, 65536);
			if (n < 0)
				usage_error("bad --conns '%s'", optarg);
			opt.nconns = n;
			break;
		case 'p':
			n = parse_list(optarg, tmp, 2, 1, 2);
			if (n < 0 || (n == 2 && tmp[0] == tmp[1]))
				usage_error("bad --procs '%s' (1, 2 or 1,2)", optarg);
			for (i = 0; i < n; i++)
				opt.procs[i] = (int)tmp[i];
			opt.nprocs = n;
			break;
		case 'c':
			n = parse_list(optarg, tmp, 2, 0, CPU_SETSIZE - 1);
			if (n < 0)
				usage_error("bad --cpu '%s'", optarg);
			for (i = 0; i < n; i++)
				opt.cpus[i] = (int)tmp[i];
			opt.ncpus = n;
			break;
		case 'd':
			n = parse_list(optarg, opt.depths, MAX_LIST, 1, 4096);
			if (n < 0)
				usage_error("bad --depths '%s' (1..4096)", optarg);
			opt.ndepths = n;
			break;
		case 'f':
			if (!*optarg)
				usage_error("bad --file '%s'", optarg);
			opt.file = optarg;
			break;
		case O_FILESIZE:
			if (parse_list(optarg, tmp, 1, 1, 1 << 20) != 1)
				usage_error("bad --file-size '%s' (MiB)", optarg);
			opt.file_mib = tmp[0];
			break;
		case O_DIRECT_:
			if (!strcmp(optarg, "auto"))
				opt.direct = -1;
			else if (!strcmp(optarg, "on"))
				opt.direct = 1;
			else if (!strcmp(optarg, "off"))
				opt.direct = 0;
			else
				usage_error("bad --direct '%s' (auto, on or off)",
					    optarg);
			break;
		case O_LOOP:
			opt.loop = 1;
			break;
		case 'T':
			n = parse_list(optarg, opt.threads, MAX_LIST, 1, 64);
			if (n < 0)
				usage_error("bad --threads '%s' (1..64)", optarg);
			opt.nthreads = n;
			break;
		case O_TDEPTH:
			if (parse_list(optarg, tmp, 1, 1, 1024) != 1)
				usage_error("bad --thread-depth '%s' (1..1024)",
					    optarg);
			opt.thread_depth = tmp[0];
			break;
		case O_PATTERN:
			if (!strcmp(optarg, "single"))
				opt.single = 1;
			else if (!strcmp(optarg, "batch"))
				opt.single = 0;
			else
				usage_error("bad --pattern '%s' (single or batch)",
					    optarg);
			break;
		case O_SERIES:
			if (!*optarg)
				usage_error("bad --series '%s'", optarg);
			opt.series = optarg;
			break;
		case O_STOCK:
			opt.stock = strcmp(optarg, "none") ? optarg : "";
			break;
		case O_JSON:
			opt.json = 1;
			break;
		case O_CSV:
			opt.csv = 1;
			break;
		case O_PROGRESS:
			opt.progress = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("aio-bench (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			exit(0);
		case ':':
			usage_error("option '%s' needs an argument",
				    argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
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

/* The project's targets, shown beside the numbers. */
static void report_targets(void)
{
	static const struct { long batch; double want; } rt[] = {
		{ 1, 10.0 }, { 16, 6.0 }, { 256, 1.8 },
	};
	char what[120], param[24];
	size_t i;
	int p;

	if (opt.workloads & WL_REAP) {
		for (i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
			if (!has(opt.batches, opt.nbatches, rt[i].batch))
				continue;
			snprintf(param, sizeof(param), "batch=%ld", rt[i].batch);
			snprintf(what, sizeof(what),
				 "ours-ring cheaper than stock-libaio, %s", param);
			report_target("reap", what,
				      ratio_of("reap", "ours-ring", "stock-libaio",
					       param), rt[i].want);
		}
#ifdef HAVE_LIBURING
		for (i = 1; i < sizeof(rt) / sizeof(rt[0]); i++) {
			if (!has(opt.batches, opt.nbatches, rt[i].batch))
				continue;
			snprintf(param, sizeof(param), "batch=%ld", rt[i].batch);
			snprintf(what, sizeof(what),
				 "ours-ring cheaper than io_uring-cq, %s", param);
			report_target("reap", what,
				      ratio_of("reap", "ours-ring", "io_uring-cq",
					       param), 1.0);
			/* Say so when the ring itself, with no library at
			 * all, is already dearer than io_uring. */
			if (ratio_of("reap", "ring-copy-floor", "io_uring-cq",
				     param) < 1.0)
				report_line("reap",
					    "%s: even ring-copy-floor (a bare copy "
					    "of the kernel's 32-byte events) costs "
					    "%.2fx io_uring-cq (16-byte CQEs): no "
					    "AIO ring reaper can beat io_uring "
					    "here.", param,
					    1.0 / ratio_of("reap", "ring-copy-floor",
							   "io_uring-cq", param));
		}
#endif
		/* "Within 1.3x of the copy floor" at 256, against both
		 * floors: a warm buffer, and the ring just filled. */
		if (has(opt.batches, opt.nbatches, 256)) {
			static const char *const floors[] = {
				"copy-floor", "ring-copy-floor",
			};

			for (i = 0; i < 2; i++) {
				snprintf(what, sizeof(what),
					 "ours-ring within 1.3x of %s, batch=256",
					 floors[i]);
				report_target("reap", what,
					      ratio_of("reap", "ours-ring",
						       floors[i], "batch=256"),
					      1.0 / 1.3);
			}
		}
	}
	if (opt.workloads & WL_LOOP) {
		for (p = 0; p < opt.nprocs; p++) {
			static const long ks[] = { 1, 64 };

			snprintf(param, sizeof(param), "K=1 %dp", opt.procs[p]);
			if (has(opt.conns, opt.nconns, 1) && stock_loaded) {
				snprintf(what, sizeof(what),
					 "aio-poll-ours faster than aio-poll-stock, %s",
					 param);
				report_target("loop", what,
					      ratio_of("loop", "aio-poll-ours",
						       "aio-poll-stock", param),
					      1.10);
			}
			for (i = 0; i < 2; i++) {
				if (!has(opt.conns, opt.nconns, ks[i]))
					continue;
				snprintf(param, sizeof(param), "K=%ld %dp", ks[i],
					 opt.procs[p]);
				snprintf(what, sizeof(what),
					 "aio-poll-ours even with epoll-oneshot, %s",
					 param);
				report_target("loop", what,
					      ratio_of("loop", "aio-poll-ours",
						       "epoll-oneshot", param),
					      1.0);
			}
		}
	}
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
	report_targets();
	io_targets();
	async_targets();
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
