/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * file: random 4 KiB reads at a fixed queue depth, fio-style: keep depth
 * reads in flight, wait for at least one, resubmit as many as completed.
 *
 * Each read target is measured in turn: a tmpfs file (buffered: every
 * read completes inside io_submit), a file on a disk-backed file system
 * read with O_DIRECT (completions arrive later, from the device), and with
 * --loop a loop device doing direct I/O on that file (completions arrive
 * from the loop driver's worker).  Every cell also records the CPU time
 * and the AIO system calls it took per completed read.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
# include <liburing.h>
#endif

#include "bench-util.h"

#define MAXQD	4096

static const char *const WL = "file";
static const char *const BASE = "stock-libaio";

struct target targets[MAX_TARGETS];
int ntargets;

/*
 * What file_cleanup() undoes.  It runs from atexit, from die() and from a
 * second SIGINT/SIGTERM, so it uses only unlink and close (both safe in a
 * signal handler).  The loop device is configured to detach itself when
 * its last descriptor closes (LO_FLAGS_AUTOCLEAR), so even SIGKILL frees
 * it; the files are the only thing a SIGKILL leaves behind.
 */
/* Files this run made: 0 the tmpfs file, 1 the disk-backed file, 2 and 3
 * the buffered workload's (bench-buffered.c). */
static char created[4][4096];
static int loop_ctl_fd = -1;	/* the configured loop device */

void file_cleanup(void)
{
	int i;

	for (i = 0; i < ntargets; i++)
		if (targets[i].fd >= 0) {
			close(targets[i].fd);
			targets[i].fd = -1;
		}
	if (loop_ctl_fd >= 0) {
		close(loop_ctl_fd);
		loop_ctl_fd = -1;
	}
	for (i = 0; i < 4; i++)
		if (created[i][0]) {
			unlink(created[i]);
			created[i][0] = 0;
		}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

long long next_off(unsigned long long nblocks)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return (long long)(x % nblocks) * BS;
}

/* Write mib MiB of data to fd (each MiB a different byte) and flush it
 * to the device.  0 or -errno. */
int fill_file(int fd, long mib)
{
	char *buf;
	long i;
	int err = 0;

	buf = malloc(1 << 20);
	if (!buf)
		die("out of memory");
	for (i = 0; i < mib && !interrupted; i++) {
		memset(buf, (int)(i & 0xff), 1 << 20);
		if (write(fd, buf, 1 << 20) != 1 << 20) {
			err = errno ? -errno : -ENOSPC;
			break;
		}
	}
	free(buf);
	if (!err && fsync(fd))
		err = -errno;
	return err ? err : interrupted ? -EINTR : 0;
}

/* Create path (or a temporary file in dir when path is NULL), mib MiB of
 * data, recorded in created[slot] for removal.  0 or -errno. */
int make_file(int slot, const char *path, const char *dir, long mib)
{
	int wfd, err;

	if (path) {
		snprintf(created[slot], sizeof(created[slot]), "%s", path);
		wfd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	} else {
		snprintf(created[slot], sizeof(created[slot]),
			 "%s/aio-bench.%ld.XXXXXX", dir, (long)getpid());
		wfd = mkostemp(created[slot], O_CLOEXEC);
	}
	if (wfd < 0) {
		err = -errno;
		created[slot][0] = 0;
		return err;
	}
	err = fill_file(wfd, mib);
	close(wfd);
	if (err == -EINTR)
		return err;
	if (err)
		drop_file(slot);
	return err;
}

const char *made_file(int slot)
{
	return created[slot][0] ? created[slot] : NULL;
}

void drop_file(int slot)
{
	if (created[slot][0]) {
		unlink(created[slot]);
		created[slot][0] = 0;
	}
}

const char *fs_name(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf))
		return "unknown";
	switch ((unsigned long)sf.f_type) {
	case 0x01021994: return "tmpfs";
	case 0x858458f6: return "ramfs";
	case 0xef53: return "ext4";
	case 0x58465342: return "xfs";
	case 0x9123683e: return "btrfs";
	case 0x794c7630: return "overlayfs";
	case 0x6969: return "nfs";
	case 0x2fc12fc1: return "zfs";
	case 0xf2f52010: return "f2fs";
	case 0x65735546: return "fuse";
	default: return "other";
	}
}

int on_tmpfs(const char *path)
{
	return !strcmp(fs_name(path), "tmpfs") || !strcmp(fs_name(path), "ramfs");
}

static int size_target(struct target *t)
{
	struct stat st;
	unsigned long long bytes;

	if (fstat(t->fd, &st))
		return -errno;
	bytes = (unsigned long long)st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(t->fd, BLKGETSIZE64, &bytes))
		return -errno;
	t->nblocks = bytes / BS;
	return t->nblocks < 16 ? -EFBIG : 0;
}

static struct target *new_target(const char *name)
{
	struct target *t = &targets[ntargets++];

	memset(t, 0, sizeof(*t));
	t->name = name;
	t->fd = -1;
	return t;
}

/* The tmpfs file: buffered reads of the page cache, as before. */
static void prepare_tmpfs(void)
{
	struct target *t;
	int ret;

	if (access("/dev/shm", W_OK) || !on_tmpfs("/dev/shm")) {
		report_line(WL, "tmpfs: skipped: /dev/shm is not a writable tmpfs");
		return;
	}
	ret = make_file(0, NULL, "/dev/shm", opt.file_mib);
	if (ret < 0) {
		report_line(WL, "tmpfs: skipped: cannot create a file in /dev/shm: %s",
			    strerror(-ret));
		return;
	}
	t = new_target("tmpfs");
	snprintf(t->path, sizeof(t->path), "%s", created[0]);
	t->fd = open(t->path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0 || (ret = size_target(t)) < 0) {
		report_line(WL, "tmpfs: skipped: %s", strerror(errno));
		ntargets--;
		return;
	}
	snprintf(t->desc, sizeof(t->desc), "tmpfs: %.100s, %llu MiB, buffered "
		 "(tmpfs: each read completes inside io_submit)", created[0],
		 t->nblocks * BS >> 20);
}

/*
 * The disk-backed file: --file, or a temporary file in /var/tmp (which,
 * unlike /tmp, is on disk on every common distribution).  Read with
 * O_DIRECT unless --direct=off; --direct=auto falls back to buffered
 * reads, and says so, where the file system refuses O_DIRECT.
 */
static void prepare_disk(void)
{
	const char *path = opt.file, *fs;
	struct target *t;
	char why[160];
	int ret;

	if (!path || access(path, F_OK)) {
		ret = make_file(1, path, "/var/tmp", opt.file_mib);
		if (ret < 0) {
			snprintf(why, sizeof(why), "cannot create %.100s: %s",
				 path ? path : "a file in /var/tmp", strerror(-ret));
			goto fail;
		}
		path = created[1];
	}
	fs = fs_name(path);
	t = new_target("direct");
	snprintf(t->path, sizeof(t->path), "%s", path);
	if (opt.direct != 0)
		t->fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	t->direct = t->fd >= 0;
	if (t->fd < 0 && opt.direct > 0) {
		snprintf(why, sizeof(why), "%.100s (%s): O_DIRECT: %s", path, fs,
			 strerror(errno));
		ntargets--;
		goto fail;
	}
	if (t->fd < 0) {
		ret = errno;
		t->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (opt.direct < 0)
			warnx_("%s (%s) does not take O_DIRECT (%s): reading it "
			       "buffered", path, fs, strerror(ret));
	}
	if (t->fd < 0 || (ret = size_target(t)) < 0) {
		snprintf(why, sizeof(why), "%.100s: %s", path,
			 strerror(t->fd < 0 ? errno : -ret));
		ntargets--;
		goto fail;
	}
	if (!t->direct)
		t->name = "buffered";
	/* Not a device: named so that no device target line or loop device
	 * takes it for one. */
	if (on_tmpfs(path))
		t->name = t->direct ? "direct-tmpfs" : "buffered-tmpfs";
	if (on_tmpfs(path))
		warnx_("%s is on %s, not on a disk: its reads never reach a "
		       "device (use --file on a disk-backed file system)", path, fs);
	snprintf(t->desc, sizeof(t->desc), "%s: %.100s on %s, %llu MiB, %s%s",
		 t->name, path, fs, t->nblocks * BS >> 20,
		 t->direct ? "O_DIRECT" : "buffered",
		 on_tmpfs(path) ? " (tmpfs: NOT a disk)" :
		 t->direct ? " (completions come from the device)" :
			     " (O_DIRECT refused or --direct=off)");
	return;
fail:
	warnx_("disk-backed file skipped: %s", why);
	report_line(WL, "direct: skipped: %s", why);
	run_failed = 1;
}

/* Is direct I/O on for /dev/loopN?  1, 0, or -1 when sysfs does not say. */
static int loop_dio(int n)
{
	char p[64], c = 0;
	int fd, got;

	snprintf(p, sizeof(p), "/sys/block/loop%d/loop/dio", n);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = (int)read(fd, &c, 1);
	close(fd);
	return got == 1 ? c == '1' : -1;
}

/*
 * A loop device over file with direct I/O (what losetup --direct-io=on
 * sets up, done here with the ioctls so that the device can also be
 * marked to detach itself on the last close), read-only unless rw.
 * The device's descriptor goes to *lfd, its path to dev.  The loop driver
 * reads and writes the file with O_DIRECT from its own context:
 * completions arrive asynchronously.
 */
int attach_loop(const char *file, int rw, char *dev, size_t devlen, int *dio,
		int *lfd_out)
{
	struct loop_config cfg;
	int ctl, n, lfd = -1, bfd, tries, err = 0;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	bfd = open(file, (rw ? O_RDWR : O_RDONLY) | O_DIRECT | O_CLOEXEC);
	if (bfd < 0) {
		err = -errno;
		close(ctl);
		return err;
	}
	for (tries = 0; tries < 8; tries++) {
		n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0) {
			err = -errno;
			break;
		}
		snprintf(dev, devlen, "/dev/loop%d", n);
		lfd = open(dev, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			err = -errno;
			break;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned)bfd;
		cfg.block_size = BS;
		cfg.info.lo_flags = (rw ? 0 : LO_FLAGS_READ_ONLY) |
				    LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO;
		memcpy(cfg.info.lo_file_name, file,
		       strnlen(file, sizeof(cfg.info.lo_file_name) - 1));
		if (!ioctl(lfd, LOOP_CONFIGURE, &cfg)) {
			err = 0;
			break;
		}
		err = -errno;
		close(lfd);
		lfd = -1;
		if (err != -EBUSY)	/* EBUSY: another user took it first */
			break;
	}
	close(bfd);
	close(ctl);
	if (lfd < 0)
		return err ? err : -EBUSY;
	*lfd_out = lfd;
	*dio = loop_dio(n);
	return 0;
}

static void prepare_loop(void)
{
	struct target *t, *disk = NULL;
	char dev[64], why[200];
	int i, dio = -1, ret;

	for (i = 0; i < ntargets; i++)
		if (!strcmp(targets[i].name, "direct"))
			disk = &targets[i];
	if (!disk) {
		snprintf(why, sizeof(why), "no disk-backed file read with O_DIRECT "
			 "to put it on (see the direct target)");
		goto fail;
	}
	if (geteuid()) {
		snprintf(why, sizeof(why), "needs root (loop devices)");
		goto fail;
	}
	/* --loop: a read-only loop device over the disk-backed file. */
	ret = attach_loop(disk->path, 0, dev, sizeof(dev), &dio, &loop_ctl_fd);
	if (ret < 0) {
		snprintf(why, sizeof(why), "cannot set up a loop device over "
			 "%.100s: %s", disk->path, strerror(-ret));
		goto fail;
	}
	t = new_target("loop");
	snprintf(t->path, sizeof(t->path), "%s", dev);
	t->fd = open(dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	t->direct = t->fd >= 0;
	if (t->fd < 0 || (ret = size_target(t)) < 0) {
		snprintf(why, sizeof(why), "%s: %s", dev,
			 strerror(t->fd < 0 ? errno : -ret));
		ntargets--;
		goto fail;
	}
	snprintf(t->desc, sizeof(t->desc), "loop: %s over %.100s, %llu MiB, "
		 "O_DIRECT, loop direct I/O %s (completions come from the loop "
		 "driver's worker)", dev, created[1][0] ? created[1] : opt.file, t->nblocks * BS >> 20,
		 dio > 0 ? "on" : dio == 0 ? "OFF (the file system refused it)" :
			   "unknown");
	return;
fail:
	warnx_("--loop skipped: %s", why);
	report_line(WL, "loop: skipped: %s", why);
}

void file_prepare(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	prepare_tmpfs();
	if (!interrupted)
		prepare_disk();
	if (opt.loop && !interrupted)
		prepare_loop();
}

static char *bufs;
static struct iocb cbs[MAXQD];
static struct iocb *subs[MAXQD];
static struct io_event evs[MAXQD];

/* What one cell measured: reads per second, and the cost over the same
 * window (from just before the first submit to just after the last reap
 * that counts). */
struct result {
	double iops, ops;
	struct cost a, b;
};

/*
 * Submit n reads: one io_submit per read (--pattern=single: fio's default,
 * iodepth_batch_submit 1, and what database engines do), or all in one
 * (--pattern=batch).  The return value is io_submit's: the number
 * submitted, or -errno when the first call failed.
 */
int submit_reads(const struct aio_ops *ops, io_context_t ctx, long n,
		 struct iocb **v)
{
	long i;
	int ret;

	if (!opt.single)
		return ops->submit(ctx, n, v);
	for (i = 0; i < n; i++) {
		ret = ops->submit(ctx, 1, v + i);
		if (ret != 1)
			return i ? (int)i : ret;
	}
	return (int)n;
}

/* Wait for the inflight requests still in flight on ctx: what could not
 * be waited for (0 when all completed). */
long aio_drain(const struct aio_ops *ops, io_context_t ctx, long inflight,
	       struct io_event *ev)
{
	long n;

	while (inflight > 0) {
		n = ops->getevents(ctx, inflight, inflight, ev, NULL);
		if (n <= 0 && n != -EINTR)
			break;
		if (n > 0)
			inflight -= n;
	}
	return inflight;
}

/* io_getevents(ctx, min_nr, nr) again for as long as a signal interrupts
 * it (the benchmark's own SIGINT handler may): the events, or the error
 * with why set. */
long aio_wait(const struct aio_ops *ops, io_context_t ctx, long min_nr,
	      long nr, struct io_event *ev, char *why, size_t len)
{
	long n;

	do
		n = ops->getevents(ctx, min_nr, nr, ev, NULL);
	while (n == -EINTR);
	if (n < 0)
		snprintf(why, len, "io_getevents: %s", strerror((int)-n));
	return n;
}

static int aio_cell(const struct aio_ops *ops, const struct target *t, long qd,
		    struct result *res, char *why, size_t len)
{
	io_context_t ctx = NULL;
	uint64_t t0, t1 = 0, budget, done = 0;
	long i, inflight, n, k;
	int ret, fd = t->fd;

	ret = ops->setup((int)qd, &ctx);
	if (ret < 0) {
		snprintf(why, len, "io_setup: %s", strerror(-ret));
		return -1;
	}
	for (i = 0; i < qd; i++) {
		io_prep_pread(&cbs[i], fd, bufs + i * BS, BS, next_off(t->nblocks));
		cbs[i].data = (void *)(uintptr_t)i;
		subs[i] = &cbs[i];
	}
	budget = (uint64_t)(opt.cell_time * 1e9);
	cost_now(&res->a, ops->calls());
	t0 = now_ns();
	ret = submit_reads(ops, ctx, qd, subs);
	if (ret != qd) {
		snprintf(why, len, "io_submit: %s", ret < 0 ? strerror(-ret) : "short");
		inflight = ret > 0 ? ret : 0;
		goto drain;
	}
	inflight = qd;
	for (;;) {
		n = aio_wait(ops, ctx, 1, opt.single ? 1 : qd, evs, why, len);
		if (n < 0)
			goto drain;
		inflight -= n;
		for (k = 0; k < n; k++) {
			if ((long)evs[k].res != BS) {
				snprintf(why, len, "read returned %ld",
					 (long)evs[k].res);
				goto drain;
			}
			i = (long)(uintptr_t)evs[k].data;
			io_prep_pread(&cbs[i], fd, bufs + i * BS, BS,
				      next_off(t->nblocks));
			cbs[i].data = (void *)(uintptr_t)i;
			subs[k] = &cbs[i];
		}
		done += n;
		t1 = now_ns();
		if (t1 - t0 >= budget || interrupted)
			break;
		ret = submit_reads(ops, ctx, n, subs);
		if (ret != n) {
			snprintf(why, len, "io_submit: %s",
				 ret < 0 ? strerror(-ret) : "short");
			if (ret > 0)
				inflight += ret;
			goto drain;
		}
		inflight += n;
	}
	cost_now(&res->b, ops->calls());
	aio_drain(ops, ctx, inflight, evs);
	ops->destroy(ctx);
	res->ops = (double)done;
	res->iops = (double)done * 1e9 / (double)(t1 - t0);
	return 0;
drain:
	ops->destroy(ctx);
	return -1;
}

#ifdef HAVE_LIBURING
/* io_uring_submit_and_wait(ring, 1) enters the kernel exactly once. */
int uring_submit_and_wait(struct io_uring *ring)
{
	atomic_fetch_add_explicit(&uring_calls, 1, memory_order_relaxed);
	return io_uring_submit_and_wait(ring, 1);
}

static int uring_cell(const struct target *t, long qd, struct result *res,
		      char *why, size_t len)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint64_t t0, t1 = 0, budget, done = 0;
	unsigned head, seen;
	long i, inflight;
	int ret, fd = t->fd;

	ret = io_uring_queue_init((unsigned)qd, &ring, 0);
	if (ret < 0) {
		snprintf(why, len, "io_uring_queue_init: %s", strerror(-ret));
		return -1;
	}
	for (i = 0; i < qd; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, fd, bufs + i * BS, BS, next_off(t->nblocks));
		io_uring_sqe_set_data64(sqe, (uint64_t)i);
	}
	inflight = qd;
	budget = (uint64_t)(opt.cell_time * 1e9);
	cost_now(&res->a, uring_calls_now());
	t0 = now_ns();
	for (;;) {
		ret = uring_submit_and_wait(&ring);
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
		if (t1 - t0 >= budget || interrupted)
			break;
		/* Resubmit as many as completed; any slot index will do. */
		for (i = 0; i < (long)seen; i++) {
			sqe = io_uring_get_sqe(&ring);
			if (!sqe)
				break;
			io_uring_prep_read(sqe, fd, bufs + ((inflight + i) % qd) * BS,
					   BS, next_off(t->nblocks));
			io_uring_sqe_set_data64(sqe, 0);
		}
		inflight += i;
	}
	cost_now(&res->b, uring_calls_now());
	while (inflight > 0) {
		if (io_uring_wait_cqe(&ring, &cqe))
			break;
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
	io_uring_queue_exit(&ring);
	res->ops = (double)done;
	res->iops = (double)done * 1e9 / (double)(t1 - t0);
	return 0;
fail:
	io_uring_queue_exit(&ring);
	return -1;
}
#endif

enum { S_OURS, S_SYS, S_STOCK, S_URING, S_COUNT };
static const char *const names[S_COUNT] = {
	"ours-ring", "ours-syscall", "stock-libaio", "io_uring",
};

static void param_of(char *buf, size_t n, const struct target *t, long qd)
{
	snprintf(buf, n, "%s QD=%ld", t->name, qd);
}

/* One cell of series s: 0 measured, -1 failed (why set), -2 unavailable. */
static int run_series(int s, const struct target *t, long qd,
		      struct result *res, char *why, size_t len)
{
	switch (s) {
	case S_OURS:
		return aio_cell(&ops_ours, t, qd, res, why, len);
	case S_SYS:
		return aio_cell(&ops_sys, t, qd, res, why, len);
	case S_STOCK:
		return stock_loaded ? aio_cell(&ops_stock, t, qd, res, why, len) :
				      -2;
	default:
#ifdef HAVE_LIBURING
		return uring_cell(t, qd, res, why, len);
#else
		return -2;
#endif
	}
}

/* Params: target by target, queue depth by queue depth. */
static struct row *file_row(int s, int p)
{
	char param[24];

	param_of(param, sizeof(param), &targets[p / opt.ndepths],
		 opt.depths[p % opt.ndepths]);
	return row_get(WL, names[s], param, "IOPS", 0, BASE, NULL);
}

static void file_note(int s, int p, struct row *r)
{
	(void)p;
	note_unavailable(r, s == S_STOCK, s == S_URING);
}

static void file_warm(int s, int p)
{
	struct result res;
	char why[160];

	if (s != S_SYS)
		run_series(s, &targets[p / opt.ndepths],
			   opt.depths[p % opt.ndepths], &res, why, sizeof(why));
}

static int file_cell(int s, int p, struct row *r, char *why, size_t len)
{
	struct result res;
	int ret;

	ret = run_series(s, &targets[p / opt.ndepths],
			 opt.depths[p % opt.ndepths], &res, why, len);
	if (ret < 0)
		return ret == -2 ? GRID_GONE : GRID_DEAD;
	row_add(r, res.iops);
	row_add_cost(r, &res.a, &res.b, res.ops);
	return GRID_DONE;
}

void bench_file(void)
{
	static const struct grid grid = {
		.workload = "file", .series = names, .nseries = S_COUNT,
		.row = file_row, .note = file_note, .warm = file_warm,
		.cell = file_cell,
	};
	struct grid run = grid;
	long maxqd = deepest_depth();
	int g;

	if (maxqd > MAXQD)
		die("queue depth above %d", MAXQD);
	file_prepare();
	if (!ntargets) {
		warnx_("file workload skipped: nothing to read");
		run_failed = 1;
		return;
	}
	if (posix_memalign((void **)&bufs, BS, (size_t)maxqd * BS))
		die("out of memory");
	run.nparams = ntargets * opt.ndepths;
	run.group = opt.ndepths;
	grid_run(&run);
	for (g = 0; g < ntargets; g++)
		report_line(WL, "%s", targets[g].desc);
	report_line(WL, "AIO series: %s; io_uring: the reads queued as SQEs and "
			"one io_uring_submit_and_wait per wait (its idiom).",
		    opt.single ? "io_getevents(ctx, 1, 1, NULL), then one io_submit "
				 "of one read (--pattern=single: fio's defaults, "
				 "iodepth_batch_submit=1, iodepth_batch_complete_max=1)" :
				 "io_getevents(ctx, 1, QD, NULL), then one io_submit "
				 "for all of them (--pattern=batch)");
	free(bufs);
	bufs = NULL;
}
