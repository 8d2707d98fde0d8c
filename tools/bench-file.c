/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * file: random 4 KiB reads at a fixed queue depth, fio-style: keep depth
 * reads in flight, wait for at least one, resubmit as many as completed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
# include <liburing.h>
#endif

#include "bench-util.h"

#define BS	4096
#define MAXQD	4096

static const char *const WL = "file";
static const char *const BASE = "stock-libaio";

static char created[4096];	/* a file this run made, removed at exit */
static int fd = -1;
static int direct;
static unsigned long long nblocks;

void file_cleanup(void)
{
	if (created[0]) {
		unlink(created);
		created[0] = 0;
	}
}

static uint64_t rng_state;

static inline long long next_off(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return (long long)(x % nblocks) * BS;
}

static int make_file(const char *path, long mib)
{
	char *buf;
	long i;
	int wfd;

	if (path) {
		snprintf(created, sizeof(created), "%s", path);
		wfd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	} else {
		snprintf(created, sizeof(created), "/dev/shm/aio-bench.XXXXXX");
		wfd = mkostemp(created, O_CLOEXEC);
	}
	if (wfd < 0) {
		created[0] = 0;
		return -1;
	}
	buf = malloc(1 << 20);
	if (!buf)
		die("out of memory");
	for (i = 0; i < mib && !interrupted; i++) {
		memset(buf, (int)(i & 0xff), 1 << 20);
		if (write(wfd, buf, 1 << 20) != 1 << 20) {
			free(buf);
			close(wfd);
			die("writing %s: %s", created, strerror(errno));
		}
	}
	free(buf);
	fsync(wfd);
	close(wfd);
	return 0;
}

static int on_tmpfs(const char *path)
{
	struct statfs sf;

	return !statfs(path, &sf) && sf.f_type == 0x01021994; /* TMPFS_MAGIC */
}

static int open_file(char *why, size_t len)
{
	const char *path = opt.file;
	struct stat st;

	if (!path || access(path, F_OK)) {
		if (make_file(path, opt.file_mib)) {
			snprintf(why, len, "cannot create %.100s: %s",
				 path ? path : "a file in /dev/shm", strerror(errno));
			return -1;
		}
		path = created;
	}
	/* O_DIRECT where the filesystem has it, except on tmpfs (auto), whose
	 * "direct" reads are page-cache copies that io_uring cannot do
	 * without blocking: there buffered reads are the fair comparison. */
	fd = -1;
	if (opt.direct > 0 || (opt.direct < 0 && !on_tmpfs(path)))
		fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	direct = fd >= 0;
	if (fd < 0 && opt.direct > 0) {
		snprintf(why, len, "%.100s: O_DIRECT: %s", path, strerror(errno));
		return -1;
	}
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(why, len, "%.100s: %s", path, strerror(errno));
		return -1;
	}
	nblocks = (unsigned long long)st.st_size / BS;
	if (nblocks < 16) {
		snprintf(why, len, "%.100s: too small", path);
		return -1;
	}
	return 0;
}

static char *bufs;
static struct iocb cbs[MAXQD];
static struct iocb *subs[MAXQD];
static struct io_event evs[MAXQD];

static double aio_cell(const struct aio_ops *ops, long qd, char *why, size_t len)
{
	io_context_t ctx = NULL;
	uint64_t t0, t1 = 0, budget, done = 0;
	long i, inflight, n, k;
	int ret;

	ret = ops->setup((int)qd, &ctx);
	if (ret < 0) {
		snprintf(why, len, "io_setup: %s", strerror(-ret));
		return -1;
	}
	for (i = 0; i < qd; i++) {
		io_prep_pread(&cbs[i], fd, bufs + i * BS, BS, next_off());
		cbs[i].data = (void *)(uintptr_t)i;
		subs[i] = &cbs[i];
	}
	budget = (uint64_t)(opt.cell_time * 1e9);
	t0 = now_ns();
	ret = ops->submit(ctx, qd, subs);
	if (ret != qd) {
		snprintf(why, len, "io_submit: %s", ret < 0 ? strerror(-ret) : "short");
		inflight = ret > 0 ? ret : 0;
		goto drain;
	}
	inflight = qd;
	for (;;) {
		n = ops->getevents(ctx, 1, qd, evs, NULL);
		if (n < 0) {
			if (n == -EINTR)
				continue;
			snprintf(why, len, "io_getevents: %s", strerror(-n));
			goto drain;
		}
		inflight -= n;
		for (k = 0; k < n; k++) {
			if ((long)evs[k].res != BS) {
				snprintf(why, len, "read returned %ld",
					 (long)evs[k].res);
				goto drain;
			}
			i = (long)(uintptr_t)evs[k].data;
			io_prep_pread(&cbs[i], fd, bufs + i * BS, BS, next_off());
			cbs[i].data = (void *)(uintptr_t)i;
			subs[k] = &cbs[i];
		}
		done += n;
		t1 = now_ns();
		if (t1 - t0 >= budget || interrupted)
			break;
		ret = ops->submit(ctx, n, subs);
		if (ret != n) {
			snprintf(why, len, "io_submit: %s",
				 ret < 0 ? strerror(-ret) : "short");
			if (ret > 0)
				inflight += ret;
			goto drain;
		}
		inflight += n;
	}
	while (inflight > 0) {
		n = ops->getevents(ctx, inflight, inflight, evs, NULL);
		if (n <= 0 && n != -EINTR)
			break;
		if (n > 0)
			inflight -= n;
	}
	ops->destroy(ctx);
	return (double)done * 1e9 / (double)(t1 - t0);
drain:
	ops->destroy(ctx);
	return -1;
}

#ifdef HAVE_LIBURING
static double uring_cell(long qd, char *why, size_t len)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint64_t t0, t1 = 0, budget, done = 0;
	unsigned head, seen;
	long i, inflight;
	int ret, stop = 0;

	ret = io_uring_queue_init((unsigned)qd, &ring, 0);
	if (ret < 0) {
		snprintf(why, len, "io_uring_queue_init: %s", strerror(-ret));
		return -1;
	}
	for (i = 0; i < qd; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, fd, bufs + i * BS, BS, next_off());
		io_uring_sqe_set_data64(sqe, (uint64_t)i);
	}
	inflight = qd;
	budget = (uint64_t)(opt.cell_time * 1e9);
	t0 = now_ns();
	while (!stop) {
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR) {
			snprintf(why, len, "io_uring_submit_and_wait: %s",
				 strerror(-ret));
			goto fail;
		}
		seen = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res != BS) {
				snprintf(why, len, "read returned %d", cqe->res);
				goto fail;
			}
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
		inflight -= seen;
		done += seen;
		t1 = now_ns();
		if (t1 - t0 >= budget || interrupted) {
			stop = 1;
			break;
		}
		/* Resubmit as many as completed; any slot index will do. */
		for (i = 0; i < (long)seen; i++) {
			sqe = io_uring_get_sqe(&ring);
			if (!sqe)
				break;
			io_uring_prep_read(sqe, fd, bufs + ((inflight + i) % qd) * BS,
					   BS, next_off());
			io_uring_sqe_set_data64(sqe, 0);
		}
		inflight += i;
	}
	while (inflight > 0) {
		if (io_uring_wait_cqe(&ring, &cqe))
			break;
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
	io_uring_queue_exit(&ring);
	return (double)done * 1e9 / (double)(t1 - t0);
fail:
	io_uring_queue_exit(&ring);
	return -1;
}
#endif

enum { S_OURS, S_SYS, S_STOCK, S_URING, S_COUNT };
static const char *const names[S_COUNT] = {
	"ours-ring", "ours-syscall", "stock-libaio", "io_uring",
};

void bench_file(void)
{
	char why[160], param[24];
	int s, q, rep, done = 0, total, dead[S_COUNT] = { 0 };
	long maxqd = 0;
	double v;

	for (q = 0; q < opt.ndepths; q++)
		if (opt.depths[q] > maxqd)
			maxqd = opt.depths[q];
	if (maxqd > MAXQD)
		die("queue depth above %d", MAXQD);
	if (open_file(why, sizeof(why))) {
		warnx_("file workload skipped: %s", why);
		run_failed = 1;
		report_line(WL, "skipped: %s", why);
		file_cleanup();
		return;
	}
	if (posix_memalign((void **)&bufs, BS, (size_t)maxqd * BS))
		die("out of memory");
	rng_state = 0x9e3779b97f4a7c15ull;

	for (s = 0; s < S_COUNT; s++)
		for (q = 0; q < opt.ndepths && series_on(names[s]); q++) {
			struct row *r;

			snprintf(param, sizeof(param), "QD=%ld", opt.depths[q]);
			r = row_get(WL, names[s], param, "IOPS", 0, BASE, NULL);
			if (s == S_STOCK && !stock_loaded)
				row_note(r, stock_error);
#ifndef HAVE_LIBURING
			if (s == S_URING)
				row_note(r, "not built with liburing");
#endif
		}

	/* One short untimed pass: fault in the page cache, warm each path. */
	{
		double saved = opt.cell_time;

		opt.cell_time = 0.01;
		for (q = 0; q < opt.ndepths; q++) {
			aio_cell(&ops_ours, opt.depths[q], why, sizeof(why));
			if (stock_loaded)
				aio_cell(&ops_stock, opt.depths[q], why, sizeof(why));
#ifdef HAVE_LIBURING
			uring_cell(opt.depths[q], why, sizeof(why));
#endif
		}
		opt.cell_time = saved;
	}

	total = opt.reps * S_COUNT * opt.ndepths;
	for (rep = 0; rep < opt.reps && !interrupted; rep++)
		for (q = 0; q < opt.ndepths; q++)
			for (s = 0; s < S_COUNT; s++) {
				long qd = opt.depths[q];
				struct row *r;

				progress(WL, ++done, total);
				if (!series_on(names[s]))
					continue;
				snprintf(param, sizeof(param), "QD=%ld", qd);
				r = row_get(WL, names[s], param, "IOPS", 0, BASE,
					    NULL);
				if (dead[s])
					continue;
				why[0] = 0;
				if (s == S_OURS)
					v = aio_cell(&ops_ours, qd, why, sizeof(why));
				else if (s == S_SYS)
					v = aio_cell(&ops_sys, qd, why, sizeof(why));
				else if (s == S_STOCK)
					v = stock_loaded ? aio_cell(&ops_stock, qd,
								    why, sizeof(why))
							 : -2;
				else
#ifdef HAVE_LIBURING
					v = uring_cell(qd, why, sizeof(why));
#else
					v = -2;
#endif
				if (v == -2) {
					dead[s] = 1;
					continue;
				}
				if (v < 0) {
					dead[s] = 1;
					memset(r->note, 0, sizeof(r->note));
					row_note(r, why);
					continue;
				}
				row_add(r, v);
			}
	progress_end();
	report_line(WL, "file: %s, %llu MiB, %s", created[0] ? created : opt.file,
		    nblocks * BS >> 20, direct ? "O_DIRECT" : opt.direct < 0 && on_tmpfs(created[0] ? created : opt.file) ? "buffered (tmpfs)" : "buffered (no O_DIRECT here)");
	free(bufs);
	close(fd);
	fd = -1;
	file_cleanup();
}
