/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * buffered: random 4 KiB buffered reads and writes on a cold page cache,
 * fio-style (keep depth requests in flight, resubmit as many as completed).
 *
 * Kernel AIO is asynchronous for O_DIRECT only: for a buffered read the
 * kernel's io_submit calls the file's read routine, which on a page-cache
 * miss waits for the device inside the call, so with the stock library a
 * queue depth of 32 behaves like a depth of 1.  The library's async
 * submission (io_set_async) tries each read with RWF_NOWAIT and hands the
 * ones that would block to worker threads: this workload measures what
 * that buys, against the stock library, our library with it off, and
 * io_uring (which never blocks its submitter on a miss).
 *
 * Targets: a file on the disk-backed file system (the file workload's
 * file when it made one, else a new one there), and with --loop a file on
 * an ext4 file system made on a loop device (root only).  Before each
 * cell the file's dirty pages are written back and its page cache dropped
 * (fdatasync, POSIX_FADV_DONTNEED).  Write cells end with an fsync through
 * the series' own submission path.  One more row reads the disk file with
 * O_DIRECT at queue depth 128, async submission on against off.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/mount.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
# include <liburing.h>
#endif

#include "bench-util.h"

#define DIRECT_QD	128
/* A write cell stops after this many writes even if time is left, so that
 * its closing fsync (random 4 KiB blocks) stays short. */
#define WRITE_CAP	2048

static const char *const WL = "buffered";
static const char *const BASE = "stock-libaio";
static const char *const BASE2 = "io_uring";

enum { S_STOCK, S_OURS, S_ASYNC, S_URING, S_COUNT };
static const char *const names[S_COUNT] = {
	"stock-libaio", "ours-ring", "ours-async", "io_uring",
};

enum { K_READ, K_WRITE, K_DIRECT, K_COUNT };
static const char *const kinds[K_COUNT] = { "read", "write", "direct" };

struct btarget {
	const char *prefix;	/* of the param: "" (disk) or "loop " */
	int fd;			/* O_RDWR, buffered */
	int dfd;		/* O_RDONLY | O_DIRECT, or -1 */
	unsigned long long nblocks;
	char desc[320];
};
static struct btarget bt[2];
static int nbt;

/* One cell: a target, a kind of I/O and a queue depth. */
struct cell {
	const struct btarget *t;
	int kind;
	long qd;
};

struct result {
	double iops, ops;
	double submax;		/* the longest io_submit, ns */
	struct cost a, b;
};

static char *bufs;
static struct iocb *cbs;
static struct iocb **subs;
static struct io_event *evs;
static const char *fsync_how = "IOCB_CMD_FSYNC";

/* ---- targets ------------------------------------------------------------ */

static int size_of(struct btarget *t)
{
	struct stat st;

	if (fstat(t->fd, &st))
		return -errno;
	t->nblocks = (unsigned long long)st.st_size / BS;
	return t->nblocks < 16 ? -EFBIG : 0;
}

/*
 * The disk-backed file: the one the file workload made, or a new one as
 * it would make it (--file, or a temporary file in /var/tmp).  A --file
 * that existed before the run belongs to the user: it is never written,
 * and a temporary file beside it is used instead.
 */
static void prepare_disk(void)
{
	struct btarget *t = &bt[nbt];
	const char *path = made_file(1), *fs;
	char dir[4096], why[200];
	int ret = 0;

	if (!path && opt.file && !access(opt.file, F_OK)) {
		snprintf(dir, sizeof(dir), "%s", opt.file);
		ret = make_file(2, NULL, dirname(dir), opt.file_mib);
		path = made_file(2);
	} else if (!path) {
		ret = make_file(1, opt.file, "/var/tmp", opt.file_mib);
		path = made_file(1);
	}
	if (ret < 0 || !path) {
		snprintf(why, sizeof(why), "cannot create a file %s%.100s: %s",
			 opt.file ? "for " : "in ", opt.file ? opt.file : "/var/tmp",
			 strerror(-ret));
		goto fail;
	}
	memset(t, 0, sizeof(*t));
	t->prefix = "";
	t->fd = open(path, O_RDWR | O_CLOEXEC);
	t->dfd = -1;
	if (t->fd < 0 || (ret = size_of(t)) < 0) {
		snprintf(why, sizeof(why), "%.100s: %s", path,
			 strerror(t->fd < 0 ? errno : -ret));
		if (t->fd >= 0)
			close(t->fd);
		goto fail;
	}
	if (opt.direct != 0)
		t->dfd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (t->dfd < 0)
		report_line(WL, "direct QD=%d: skipped: %s", DIRECT_QD,
			    opt.direct ? strerror(errno) : "--direct=off");
	fs = fs_name(path);
	snprintf(t->desc, sizeof(t->desc), "disk: %.100s on %s, %llu MiB, "
		 "buffered%s", path, fs, t->nblocks * BS >> 20,
		 on_tmpfs(path) ? " (tmpfs: NOT a disk; its pages cannot be "
				  "dropped: every read hits)" :
				  ", page cache dropped before each cell");
	nbt++;
	return;
fail:
	warnx_("buffered: disk-backed file skipped: %s", why);
	report_line(WL, "disk: skipped: %s", why);
	run_failed = 1;
}

/* mkfs.ext4 on image: 0, or -1 with why set. */
static int make_ext4(const char *image, char *why, size_t len)
{
	static const char *const paths[] = {
		"/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4", "/usr/bin/mkfs.ext4",
	};
	/* Inode tables and journal written now: lazy initialisation would
	 * write them from a kernel thread during the measurements. */
	char *argv[] = {
		(char *)"mkfs.ext4", (char *)"-q", (char *)"-F", (char *)"-b",
		(char *)"4096", (char *)"-E",
		(char *)"lazy_itable_init=0,lazy_journal_init=0,nodiscard",
		(char *)image, NULL,
	};
	extern char **environ;
	posix_spawn_file_actions_t fa;
	const char *prog = NULL;
	size_t i;
	pid_t pid;
	int st, ret;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]) && !prog; i++)
		if (!access(paths[i], X_OK))
			prog = paths[i];
	if (!prog) {
		snprintf(why, len, "no mkfs.ext4 (e2fsprogs) in /usr/sbin or /sbin");
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	ret = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		snprintf(why, len, "%s: %s", prog, strerror(ret));
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, len, "waitpid: %s", strerror(errno));
			return -1;
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(why, len, "%s failed (status %d)", prog, st);
		return -1;
	}
	return 0;
}

/*
 * The file system on the loop device is mounted with fsopen and fsmount
 * (Linux 5.2) and never attached anywhere: no mount point, nothing any
 * other process can see, and nothing to undo: it goes away with the last
 * descriptor of a file on it.  -errno, or a mount descriptor.
 */
static int mount_detached(const char *dev)
{
#if defined(SYS_fsopen) && defined(SYS_fsconfig) && defined(SYS_fsmount)
	int fs, mfd, err;

	fs = (int)syscall(SYS_fsopen, "ext4", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", dev, 0) ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) {
		err = -errno;
		close(fs);
		return err;
	}
	mfd = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	err = -errno;
	close(fs);
	return mfd >= 0 ? mfd : err;
#else
	(void)dev;
	return -ENOSYS;
#endif
}

/*
 * --loop: a file on ext4 on a loop device (direct I/O) over a sparse
 * image beside the disk-backed file.  Not a loop device over the disk
 * file itself, as the file workload reads: that one is read-only (this
 * workload writes), and buffered I/O of a raw block device is not what
 * programs doing buffered file I/O do.  Everything is gone once the
 * process is: the image is unlinked as soon as the loop device holds it,
 * the device detaches itself on its last close (LO_FLAGS_AUTOCLEAR), and
 * the file system is never attached to a mount point.
 */
static void prepare_loop(void)
{
	struct btarget *t = &bt[nbt];
	const char *disk = made_file(2) ? made_file(2) : made_file(1);
	char dir[4096], dev[64], why[200];
	const char *image, *where;
	long long bytes;
	int ret, dio = -1, lfd = -1, mfd;

	if (geteuid()) {
		snprintf(why, sizeof(why), "needs root (a loop device and a mount)");
		goto fail;
	}
	snprintf(dir, sizeof(dir), "%s", disk ? disk : "/var/tmp/");
	where = dirname(dir);
	/* The file, the file system's metadata and its journal. */
	bytes = ((long long)opt.file_mib * 9 / 8 + 64) << 20;
	ret = make_file(3, NULL, where, 0);
	image = made_file(3);
	if (ret < 0 || !image || truncate(image, bytes)) {
		snprintf(why, sizeof(why), "cannot create an image in %.100s: %s",
			 where, strerror(ret < 0 ? -ret : errno));
		goto fail;
	}
	if (make_ext4(image, why, sizeof(why)))
		goto fail;
	ret = attach_loop(image, 1, dev, sizeof(dev), &dio, &lfd);
	if (ret < 0) {
		snprintf(why, sizeof(why), "cannot set up a loop device over "
			 "%.100s: %s", image, strerror(-ret));
		goto fail;
	}
	drop_file(3);
	mfd = mount_detached(dev);
	close(lfd);
	if (mfd < 0) {
		snprintf(why, sizeof(why), "cannot mount ext4 on %s (fsopen, "
			 "fsmount: Linux 5.2): %s", dev, strerror(-mfd));
		goto fail;
	}
	memset(t, 0, sizeof(*t));
	t->prefix = "loop ";
	t->dfd = -1;
	t->fd = openat(mfd, "data", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	close(mfd);
	if (t->fd < 0 || (ret = fill_file(t->fd, opt.file_mib)) < 0 ||
	    (ret = size_of(t)) < 0) {
		snprintf(why, sizeof(why), "a file on ext4 on %s: %s", dev,
			 strerror(t->fd < 0 ? errno : -ret));
		if (t->fd >= 0)
			close(t->fd);
		goto fail;
	}
	snprintf(t->desc, sizeof(t->desc), "loop: a %llu MiB file on ext4 on "
		 "%.20s (loop direct I/O %s), image in %.80s, buffered, page "
		 "cache dropped before each cell", t->nblocks * BS >> 20, dev,
		 dio > 0 ? "on" : dio == 0 ? "OFF: the image's page cache may "
		 "serve reads" : "unknown", where);
	nbt++;
	return;
fail:
	drop_file(3);
	warnx_("buffered: --loop skipped: %s", why);
	report_line(WL, "loop: skipped: %s", why);
}

/* A cold start: what the last cell left dirty written back (DONTNEED
 * drops clean pages only), then the file's pages dropped. */
static int drop_cache(int fd)
{
	if (fdatasync(fd))
		return -errno;
	return -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

/* ---- AIO ---------------------------------------------------------------- */

/* io_submit, timed: every call of a cell goes through here. */
static const struct aio_ops *timed_ops;
static uint64_t submit_max;

static int timed_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	uint64_t t0 = now_ns(), d;
	int ret = timed_ops->submit(ctx, nr, ios);

	d = now_ns() - t0;
	if (d > submit_max)
		submit_max = d;
	return ret;
}

static void prep(struct iocb *cb, const struct cell *c, long slot)
{
	if (c->kind == K_WRITE)
		io_prep_pwrite(cb, c->t->fd, bufs + slot * BS, BS,
			       next_off(c->t->nblocks));
	else
		io_prep_pread(cb, c->kind == K_DIRECT ? c->t->dfd : c->t->fd,
			      bufs + slot * BS, BS, next_off(c->t->nblocks));
	cb->data = (void *)(uintptr_t)slot;
}

static int check_events(const struct cell *c, long n, char *why, size_t len)
{
	long k;

	for (k = 0; k < n; k++)
		if ((long)evs[k].res != BS) {
			snprintf(why, len, "%s returned %ld", kinds[c->kind],
				 (long)evs[k].res);
			return -1;
		}
	return 0;
}

/*
 * The closing fsync of a write cell, through the series' own io_submit
 * (IOCB_CMD_FSYNC, Linux 4.18; the kernel runs it on a workqueue, so
 * io_submit does not wait for it); fsync(2) where the kernel refuses it.
 */
static int aio_fsync(const struct aio_ops *ops, io_context_t ctx, int fd,
		     char *why, size_t len)
{
	struct iocb cb, *p = &cb;
	struct io_event ev;
	int ret;

	io_prep_fsync(&cb, fd);
	ret = ops->submit(ctx, 1, &p);
	if (ret == -EINVAL) {
		fsync_how = "fsync(2) (the kernel refused IOCB_CMD_FSYNC)";
		if (!fsync(fd))
			return 0;
		snprintf(why, len, "fsync: %s", strerror(errno));
		return -1;
	}
	if (ret != 1) {
		snprintf(why, len, "io_submit(fsync): %s",
			 ret < 0 ? strerror(-ret) : "short");
		return -1;
	}
	do
		ret = ops->getevents(ctx, 1, 1, &ev, NULL);
	while (ret == -EINTR);
	if (ret != 1 || ev.res) {
		snprintf(why, len, "fsync: %s", ret != 1 ?
			 strerror(ret < 0 ? -ret : EIO) : strerror(-(int)ev.res));
		return -1;
	}
	return 0;
}

/*
 * Each AIO series keeps one context, as deep as the deepest cell, from
 * its first cell to the end of the workload: io_destroy waits for the
 * kernel to retire the context (tens of ms), which a context per cell
 * would add to every cell's wall time.  A cell that fails destroys it
 * (requests may still be in flight), and the next cell makes a new one.
 */
static io_context_t ctxs[S_COUNT];
static long ctx_depth;

/* What the library's counters moved by between a and b, added to sum. */
static void stats_add(struct io_async_stats *sum, const struct io_async_stats *a,
		      const struct io_async_stats *b)
{
	sum->inline_done += b->inline_done - a->inline_done;
	sum->to_workers += b->to_workers - a->to_workers;
	sum->redriven += b->redriven - a->redriven;
	sum->failed += b->failed - a->failed;
}

/* Requeue the first `more` reaped slots (in evs) and submit them. */
static int resubmit(const struct aio_ops *ops, io_context_t ctx,
		    const struct cell *c, long more, char *why, size_t len)
{
	long i, k;
	int ret;

	for (k = 0; k < more; k++) {
		i = (long)(uintptr_t)evs[k].data;
		prep(&cbs[i], c, i);
		subs[k] = &cbs[i];
	}
	ret = submit_reads(ops, ctx, more, subs);
	if (ret == more)
		return 0;
	snprintf(why, len, "io_submit: %s", ret < 0 ? strerror(-ret) : "short");
	return -1;
}

/* A write cell ends when its writes are on the device: the ones in
 * flight are waited for and counted, then the fsync. */
static int finish_writes(const struct aio_ops *ops, io_context_t ctx,
			 const struct cell *c, long *inflight, uint64_t *done,
			 char *why, size_t len)
{
	long n;

	while (*inflight > 0) {
		n = aio_wait(ops, ctx, 1, *inflight, evs, why, len);
		if (n < 0 || check_events(c, n, why, len))
			return -1;
		*inflight -= n;
		*done += (uint64_t)n;
	}
	return aio_fsync(ops, ctx, c->t->fd, why, len) ? -1 : 0;
}

/* acc: where the cell's requests went (io_async_stats) is added there;
 * NULL: not asked. */
static int aio_cell(int s, const struct aio_ops *base, const struct cell *c,
		    struct io_async_stats *acc, struct result *res, char *why,
		    size_t len)
{
	struct io_async_stats sa, sb;
	struct aio_ops ops = *base;
	io_context_t ctx;
	uint64_t t0, t1 = 0, budget, done = 0;
	long i, n, more, inflight = 0, issued, cap;
	int ret;

	timed_ops = base;
	ops.submit = timed_submit;
	submit_max = 0;
	cap = c->kind == K_WRITE ? WRITE_CAP : LONG_MAX;
	if (!ctxs[s]) {
		ret = ops.setup((int)ctx_depth, &ctxs[s]);
		if (ret < 0) {
			ctxs[s] = NULL;
			snprintf(why, len, "io_setup: %s", strerror(-ret));
			return -1;
		}
	}
	ctx = ctxs[s];
	for (i = 0; i < c->qd; i++) {
		prep(&cbs[i], c, i);
		subs[i] = &cbs[i];
	}
	budget = (uint64_t)(opt.cell_time * 1e9);
	if (acc && io_async_stats(&sa, sizeof(sa)))
		acc = NULL;
	cost_now(&res->a, ops.calls());
	t0 = now_ns();
	ret = submit_reads(&ops, ctx, c->qd, subs);
	if (ret != c->qd) {
		snprintf(why, len, "io_submit: %s", ret < 0 ? strerror(-ret) : "short");
		goto fail;
	}
	inflight = issued = c->qd;
	for (;;) {
		n = aio_wait(&ops, ctx, 1, opt.single ? 1 : c->qd, evs, why,
			     len);
		if (n < 0)
			goto fail;
		inflight -= n;
		if (check_events(c, n, why, len))
			goto fail;
		done += n;
		t1 = now_ns();
		if (t1 - t0 >= budget || interrupted || issued >= cap)
			break;
		more = n < cap - issued ? n : cap - issued;
		if (resubmit(&ops, ctx, c, more, why, len))
			goto fail;
		inflight += more;
		issued += more;
	}
	if (c->kind == K_WRITE) {
		if (finish_writes(&ops, ctx, c, &inflight, &done, why, len))
			goto fail;
		t1 = now_ns();
	}
	cost_now(&res->b, ops.calls());
	if (aio_drain(&ops, ctx, inflight, evs) > 0) {
		ops.destroy(ctx);
		ctxs[s] = NULL;
	}
	if (acc && !io_async_stats(&sb, sizeof(sb)))
		stats_add(acc, &sa, &sb);
	res->ops = (double)done;
	res->iops = (double)done * 1e9 / (double)(t1 - t0);
	res->submax = (double)submit_max;
	return 0;
fail:
	ops.destroy(ctx);
	ctxs[s] = NULL;
	return -1;
}

static const struct aio_ops *aio_ops_of(int s)
{
	return s == S_STOCK ? &ops_stock : s == S_OURS ? &ops_ours_off :
	       &ops_async;
}

/* ---- io_uring ----------------------------------------------------------- */

#ifdef HAVE_LIBURING
static void uring_prep(struct io_uring *ring, const struct cell *c, long slot)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (c->kind == K_WRITE)
		io_uring_prep_write(sqe, c->t->fd, bufs + slot * BS, BS,
				    next_off(c->t->nblocks));
	else
		io_uring_prep_read(sqe, c->kind == K_DIRECT ? c->t->dfd : c->t->fd,
				   bufs + slot * BS, BS, next_off(c->t->nblocks));
	io_uring_sqe_set_data64(sqe, (uint64_t)slot);
}

/* Submit what is queued, wait for a completion, take the ready ones;
 * their slots go to slots[].  The count, or -1 with why set.  want: the
 * result every completion must have. */
static long uring_step(struct io_uring *ring, const struct cell *c,
		       long *slots, int want, char *why, size_t len)
{
	struct io_uring_cqe *cqe;
	unsigned head;
	long seen = 0;
	int ret;

	ret = uring_submit_and_wait(ring);
	if (ret < 0 && ret != -EINTR) {
		snprintf(why, len, "io_uring_submit_and_wait: %s", strerror(-ret));
		return -1;
	}
	io_uring_for_each_cqe(ring, head, cqe) {
		if (cqe->res != want) {
			snprintf(why, len, "%s returned %d",
				 want ? kinds[c->kind] : "fsync", cqe->res);
			return -1;
		}
		slots[seen++] = (long)cqe->user_data;
	}
	io_uring_cq_advance(ring, (unsigned)seen);
	return seen;
}

static int uring_cell(const struct cell *c, struct result *res, char *why,
		      size_t len)
{
	struct io_uring ring;
	uint64_t t0, t1 = 0, budget, done = 0;
	long i, seen, more, inflight, issued, cap, *slots;
	int ret;

	ret = io_uring_queue_init((unsigned)c->qd, &ring, 0);
	if (ret < 0) {
		snprintf(why, len, "io_uring_queue_init: %s", strerror(-ret));
		return -1;
	}
	slots = calloc((size_t)c->qd + 1, sizeof(*slots));
	if (!slots)
		die("out of memory");
	cap = c->kind == K_WRITE ? WRITE_CAP : LONG_MAX;
	for (i = 0; i < c->qd; i++)
		uring_prep(&ring, c, i);
	inflight = issued = c->qd;
	budget = (uint64_t)(opt.cell_time * 1e9);
	cost_now(&res->a, uring_calls_now());
	t0 = now_ns();
	for (;;) {
		seen = uring_step(&ring, c, slots, BS, why, len);
		if (seen < 0)
			goto fail;
		inflight -= seen;
		done += (uint64_t)seen;
		t1 = now_ns();
		if (t1 - t0 >= budget || interrupted || issued >= cap)
			break;
		more = seen < cap - issued ? seen : cap - issued;
		for (i = 0; i < more; i++)
			uring_prep(&ring, c, slots[i]);
		inflight += more;
		issued += more;
	}
	if (c->kind == K_WRITE) {
		while (inflight > 0) {
			seen = uring_step(&ring, c, slots, BS, why, len);
			if (seen < 0)
				goto fail;
			inflight -= seen;
			done += (uint64_t)seen;
		}
		io_uring_prep_fsync(io_uring_get_sqe(&ring), c->t->fd, 0);
		do
			seen = uring_step(&ring, c, slots, 0, why, len);
		while (!seen);
		if (seen < 0)
			goto fail;
		t1 = now_ns();
	}
	cost_now(&res->b, uring_calls_now());
	while (inflight > 0) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&ring, &cqe))
			break;
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
	io_uring_queue_exit(&ring);
	free(slots);
	res->ops = (double)done;
	res->iops = (double)done * 1e9 / (double)(t1 - t0);
	return 0;
fail:
	io_uring_queue_exit(&ring);
	free(slots);
	return -1;
}
#endif

/* ---- the workload ------------------------------------------------------- */

/* One cell of series s: 0 measured, -1 failed (why set), -2 unavailable.
 * acc: see aio_cell. */
static int run_series(int s, const struct cell *c, struct io_async_stats *acc,
		      struct result *res, char *why, size_t len)
{
	switch (s) {
	case S_STOCK:
		return stock_loaded ? aio_cell(s, &ops_stock, c, NULL, res, why,
					       len) : -2;
	case S_OURS:
		return aio_cell(s, aio_ops_of(s), c, NULL, res, why, len);
	case S_ASYNC:
		return aio_cell(s, aio_ops_of(s), c, acc, res, why, len);
	default:
#ifdef HAVE_LIBURING
		return uring_cell(c, res, why, len);
#else
		return -2;
#endif
	}
}

/* The direct row compares async submission on and off, nothing else (the
 * file workload compares the rest on the same file). */
static int measured(int s, const struct cell *c)
{
	return series_on(names[s]) &&
	       (c->kind != K_DIRECT || s == S_OURS || s == S_ASYNC);
}

static void param_of(char *buf, size_t n, const struct cell *c)
{
	snprintf(buf, n, "%s%s QD=%ld", c->t->prefix, kinds[c->kind], c->qd);
}

static struct row *row_of(int s, const struct cell *c)
{
	char param[24];

	param_of(param, sizeof(param), c);
	return row_get(WL, names[s], param, "IOPS", 0, BASE, BASE2);
}

/* The note of an ours-async row: where its requests went, as shares. */
static void note_stats(struct row *r, const struct io_async_stats *st)
{
	double all = (double)(st->inline_done + st->to_workers + st->redriven);
	char note[96];

	if (!(all > 0))
		return;
	snprintf(note, sizeof(note), "inline %.0f%%, to workers %.0f%%, "
		 "redriven %.0f%%%s", 100 * st->inline_done / all,
		 100 * st->to_workers / all, 100 * st->redriven / all,
		 st->failed ? ", some FAILED" : "");
	row_note(r, note);
}

/* Buffers, iocbs and events for n requests in flight; the buffers hold
 * what the writes write. */
static void alloc_slots(long n)
{
	if (posix_memalign((void **)&bufs, BS, (size_t)n * BS))
		die("out of memory");
	memset(bufs, 0x5a, (size_t)n * BS);
	cbs = calloc((size_t)n, sizeof(*cbs));
	subs = calloc((size_t)n, sizeof(*subs));
	evs = calloc((size_t)n, sizeof(*evs));
	if (!cbs || !subs || !evs)
		die("out of memory");
}

/* The grid's params: file by file, kind by kind, depth by depth. */
static struct cell cells[2 * (2 * MAX_LIST + 1)];
static struct io_async_stats acc[2 * (2 * MAX_LIST + 1)];
static int ncells;

static void make_cells(void)
{
	int g, k, q;

	ncells = 0;
	for (g = 0; g < nbt; g++)
		for (k = 0; k < K_COUNT; k++)
			for (q = 0; q < (k == K_DIRECT ? 1 : opt.ndepths); q++) {
				struct cell *c = &cells[ncells];

				if (k == K_DIRECT && bt[g].dfd < 0)
					continue;
				c->t = &bt[g];
				c->kind = k;
				c->qd = k == K_DIRECT ? DIRECT_QD : opt.depths[q];
				ncells++;
			}
	memset(acc, 0, sizeof(acc));
}

static int buffered_on(int s, int p)
{
	return measured(s, &cells[p]);
}

static struct row *buffered_row(int s, int p)
{
	return row_of(s, &cells[p]);
}

static void buffered_note(int s, int p, struct row *r)
{
	(void)p;
	note_unavailable(r, s == S_STOCK, s == S_URING);
}

static int buffered_cell(int s, int p, struct row *r, char *why, size_t len)
{
	const struct cell *c = &cells[p];
	struct result res;
	int ret;

	ret = drop_cache(c->t->fd);
	if (ret < 0)
		snprintf(why, len, "dropping the page cache: %s", strerror(-ret));
	else
		ret = run_series(s, c, &acc[p], &res, why, len);
	if (ret < 0)
		return ret == -2 ? GRID_GONE : GRID_DEAD;
	row_add(r, res.iops);
	row_add_cost(r, &res.a, &res.b, res.ops);
	if (s != S_URING)
		row_add_submit_max(r, res.submax);
	return GRID_DONE;
}

static void buffered_notes(void)
{
	int g, k;

	for (k = 0; k < ncells; k++)
		if (measured(S_ASYNC, &cells[k]))
			note_stats(row_of(S_ASYNC, &cells[k]), &acc[k]);
	for (g = 0; g < nbt; g++)
		report_line(WL, "%s", bt[g].desc);
	report_line(WL, "ours-ring: async submission off; ours-async: "
		    "io_set_async(ctx, 1) on each context.  AIO series: %s; "
		    "io_uring: one io_uring_submit_and_wait per wait.",
		    opt.single ? "one event per io_getevents, one I/O per "
				 "io_submit (--pattern=single)" :
				 "up to QD events per io_getevents, one io_submit "
				 "for all of them (--pattern=batch)");
	report_line(WL, "write: random 4 KiB writes for the cell's time, at "
		    "most %d, then one fsync through the series' own "
		    "submission (%s; io_uring: IORING_OP_FSYNC), inside the "
		    "timed window.  direct: O_DIRECT reads of the disk file, "
		    "async submission on against off.", WRITE_CAP, fsync_how);
	report_line(WL, "sub max: the longest io_submit call of a cell, us "
		    "(median over the repetitions); io_uring has none: its one "
		    "call submits and waits.  ours-async notes: where its "
		    "requests went (io_async_stats): completed without "
		    "blocking, handed to a worker at submission, or handed over "
		    "after completing with -EAGAIN.");
}

void bench_buffered(void)
{
	static const struct grid grid = {
		.workload = "buffered", .series = names, .nseries = S_COUNT,
		.group = 1, .on = buffered_on, .row = buffered_row,
		.note = buffered_note, .cell = buffered_cell,
	};
	struct grid run = grid;
	long maxqd = deepest_depth();
	int s, g;

	if (maxqd < DIRECT_QD)
		maxqd = DIRECT_QD;
	ctx_depth = maxqd;
	prepare_disk();
	if (opt.loop && !interrupted)
		prepare_loop();
	if (!nbt) {
		warnx_("buffered workload skipped: nothing to read");
		run_failed = 1;
		return;
	}
	alloc_slots(maxqd);
	make_cells();
	run.nparams = ncells;
	grid_run(&run);
	for (s = 0; s < S_URING; s++)
		if (ctxs[s]) {
			aio_ops_of(s)->destroy(ctxs[s]);
			ctxs[s] = NULL;
		}
	buffered_notes();
	for (g = 0; g < nbt; g++) {
		close(bt[g].fd);
		if (bt[g].dfd >= 0)
			close(bt[g].dfd);
	}
	nbt = 0;
	free(cbs);
	free(subs);
	free(evs);
	free(bufs);
	bufs = NULL;
}
