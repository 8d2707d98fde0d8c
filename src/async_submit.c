/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Async submission (io_set_async(3)): io_submit that does not wait for
 * the I/O it submits.
 *
 * The kernel does a buffered read or write inside io_submit, and a direct
 * one too when it must look up or allocate extents or the device queue is
 * full.  With RWF_NOWAIT it does only what needs no waiting: a page-cache
 * hit completes at once, and an op that would wait completes at once with
 * -EAGAIN (after starting readahead, for a read), or is refused with
 * EOPNOTSUPP at submission when the file has no non-blocking mode.  Such
 * an op goes to a worker thread of the library (async_worker.c), which
 * submits it again, blocking, on the same context: its completion then
 * arrives in the same ring as the rest.
 *
 * The kernel sees the library's copy of each read and write, in a record
 * of the poll emulation's store (poll_rec.h), with the record's token as
 * data: the program's iocb is never written, and the program may reuse a
 * vectored iocb's array once io_submit returns (it is copied too).  Every
 * library reap rewrites the copy's events into the program's (obj, data)
 * and takes an -EAGAIN one out of the batch, handing the record to a
 * worker; the claim that makes each event the reaper's is the one carried
 * polls use, so exactly-once delivery is still the kernel's.
 *
 * The batch is submitted under the emulation's lock, as carried polls
 * are, so that io_destroy (which takes the lock to forget a context's
 * records) never frees a record between its filling and its submission.
 * Nothing submitted with RWF_NOWAIT waits, so the lock is held briefly.
 * fsync, fdatasync and poll go to the kernel as they are: the kernel runs
 * fsync on a work queue of its own (Linux 4.18 on), and a poll waits
 * without holding io_submit.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "async.h"
#include "export.h"
#include "feature_flags.h"
#include "poll_emul.h"
#include "poll_helper.h"
#include "poll_rec.h"
#include "raw_syscall.h"
#include "registry.h"
#include "user_ptr.h"

#ifndef RWF_NOWAIT
# define RWF_NOWAIT	0x00000008
#endif
#define IOV_LIMIT	1024	/* the kernel's UIO_MAXIOV */
#define BATCH		64	/* copies submitted in one call */

/* --- which contexts have it on ------------------------------------------ */

/* A setting of io_set_async: the context's address (page-aligned), with
 * SLOT_SET and the setting in its low bits; 0 is a free slot.  Written
 * under the lock, read without it (relaxed: a thread that needs to see
 * another's setting has synchronised with it by other means). */
#define CTX_SLOTS	256
#define SLOT_ON		0x1u
#define SLOT_SET	0x2u
#define SLOT_BITS	((uintptr_t)0xfff)
static _Atomic uintptr_t slots[CTX_SLOTS];
static _Atomic unsigned slots_used;	/* slots ever taken: a bound */
_Atomic int aioreap_async_set_any;

/* Set once RWF_NOWAIT turned out unknown to this kernel (before 4.13):
 * every read and write then goes straight to a worker.  Relaxed: either
 * value gives a correct submission. */
static _Atomic int nowait_missing;

static int slot_of(io_context_t ctx)
{
	unsigned n = atomic_load_explicit(&slots_used, memory_order_relaxed),
		 i;

	for (i = 0; i < n; i++) {
		uintptr_t v = atomic_load_explicit(&slots[i],
						   memory_order_relaxed);

		if (v && (v & ~SLOT_BITS) == (uintptr_t)ctx)
			return (int)i;
	}
	return -1;
}

int aioreap_async_on(io_context_t ctx)
{
	if (atomic_load_explicit(&aioreap_async_set_any,
				 memory_order_relaxed)) {
		int i = slot_of(ctx);

		if (i >= 0)
			return (int)(atomic_load_explicit(
					     &slots[i], memory_order_relaxed) &
				     SLOT_ON);
	}
	return !!(features_disabled() & ASYNC_ENV);
}

AIO_PUBLIC int io_set_async(io_context_t ctx, int on)
{
	uintptr_t v = (uintptr_t)ctx | SLOT_SET | (on ? SLOT_ON : 0);
	sigset_t old;
	int prev, i;

	/* A context is a page-aligned address the kernel knows. */
	if (!ctx || ((uintptr_t)ctx & SLOT_BITS) ||
	    aio_sys_submit(ctx, 0, NULL) < 0)
		return -EINVAL;
	aioreap_pe_enter(&old);
	prev = aioreap_async_on(ctx);
	i = slot_of(ctx);
	if (i < 0) {
		unsigned n = atomic_load_explicit(&slots_used,
						  memory_order_relaxed);

		for (i = 0; i < (int)n && atomic_load_explicit(
				&slots[i], memory_order_relaxed); i++)
			;
		if (i == (int)n && n < CTX_SLOTS)
			atomic_store_explicit(&slots_used, n + 1,
					      memory_order_relaxed);
	}
	if (i < CTX_SLOTS) {
		atomic_store_explicit(&slots[i], v, memory_order_relaxed);
		atomic_store_explicit(&aioreap_async_set_any, 1,
				      memory_order_relaxed);
	} else {
		prev = -ENOSPC;
	}
	aioreap_pe_leave(&old);
	return prev;
}

void aioreap_async_setup_done(io_context_t ctx)
{
	sigset_t old;
	int i;

	if (!atomic_load_explicit(&aioreap_async_set_any,
				  memory_order_relaxed))
		return;
	aioreap_pe_enter(&old);
	if ((i = slot_of(ctx)) >= 0)
		atomic_store_explicit(&slots[i], 0, memory_order_relaxed);
	aioreap_pe_leave(&old);
}

/* --- submission ----------------------------------------------------------- */

/* The flags of aio_rw_flags async submission takes on: RWF_DSYNC,
 * RWF_SYNC, RWF_NOWAIT and RWF_APPEND (Linux 4.16).  An iocb with any
 * other goes to the kernel unchanged: one it does not know (RWF_NOAPPEND
 * before 6.9), or one it refuses on most files (RWF_HIPRI, RWF_ATOMIC,
 * RWF_DONTCACHE), is its to refuse with EOPNOTSUPP, and a try would
 * read that refusal as a file with no non-blocking mode. */
#define RWF_KNOWN	0x1eu

/* Is the copy cb a read or write async submission takes? */
static int is_rw(const struct iocb *cb)
{
	if (cb->aio_rw_flags & ~RWF_KNOWN)
		return 0;
	switch (cb->aio_lio_opcode) {
	case IO_CMD_PREAD:
	case IO_CMD_PWRITE:
	case IO_CMD_PREADV:
	case IO_CMD_PWRITEV:
		return 1;
	default:
		return 0;
	}
}

/*
 * ios[0..n) and the iocbs they point at, into ptrs and cbs, read as the
 * kernel reads them: an unreadable array or iocb is its EFAULT, where a
 * plain read would fault with every signal blocked.  Returns how many,
 * from the front, were read whole; plainly where process_vm_readv is
 * refused (a seccomp filter).
 */
static long read_batch(struct iocb **ios, long n, struct iocb **ptrs,
		       struct iocb *cbs)
{
	struct iovec local[BATCH], remote[BATCH];
	long got, i, k;

	local[0].iov_base = ptrs;
	remote[0].iov_base = ios;
	local[0].iov_len = remote[0].iov_len = (size_t)n * sizeof(*ptrs);
	got = sys_vm_read(local, remote);
	if (got == -ENOSYS || got == -EPERM) {
		memcpy(ptrs, ios, (size_t)n * sizeof(*ptrs));
	} else if (got < 0) {
		return 0;
	} else {
		n = got / (long)sizeof(*ptrs);
	}
	for (k = 0; k < n && !obviously_bad_pointer(ptrs[k]); k++) {
		local[k].iov_base = &cbs[k];
		remote[k].iov_base = ptrs[k];
		local[k].iov_len = remote[k].iov_len = sizeof(cbs[k]);
	}
	if (!k)
		return 0;
	got = sys_vm_readv(local, remote, (unsigned long)k);
	if (got == -ENOSYS || got == -EPERM) {
		for (i = 0; i < k; i++)
			memcpy(&cbs[i], ptrs[i], sizeof(cbs[i]));
		return k;
	}
	return got < 0 ? 0 : got / (long)sizeof(cbs[0]);
}

/* A vectored copy's own array: the kernel reads it again when a worker
 * submits, and the program may have reused its own by then.  Left
 * pointing at the program's where it cannot be copied (the kernel then
 * answers for it).  Read through process_vm_readv: an unreadable array
 * is the kernel's EFAULT, and a fault here, under the lock with every
 * signal blocked, would kill the process whatever its handlers. */
static void copy_iov(struct poll_rec *r)
{
	uint64_t n = r->carry.aio_nbytes;
	const void *src = (const void *)(uintptr_t)r->carry.aio_buf;
	size_t size = (size_t)n * sizeof(struct iovec);
	struct iovec *dst = r->iov_small, local, remote;
	size_t map = 0;
	long got;

	if (n == 0 || n > IOV_LIMIT || obviously_bad_pointer(src))
		return;
	if (n > sizeof(r->iov_small) / sizeof(r->iov_small[0])) {
		long a = sys_mmap0(size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1);

		if (a < 0 && a > -4096)
			return;
		dst = (struct iovec *)a;
		map = size;
	}
	local.iov_base = dst;
	remote.iov_base = (void *)(uintptr_t)src;
	local.iov_len = remote.iov_len = size;
	got = sys_vm_read(&local, &remote);
	if (got == -EFAULT || (got >= 0 && got != (long)size)) {
		if (map)
			sys_munmap(dst, map);
		return;
	}
	if (got < 0)		/* the call is refused (seccomp): plainly */
		memcpy(dst, src, size);
	r->iov = dst;
	r->iov_map = map;
	r->carry.aio_buf = (uint64_t)(uintptr_t)dst;
}

/* Where duplicates start: half the descriptor limit, far above the low
 * numbers a program gets back from open() and may still hold after a
 * close (a stale number must not come to name a duplicate of ours:
 * the program's EBADF would become a request on some file).  Read once;
 * relaxed: every thread computes the same.  sysconf(_SC_OPEN_MAX) is the
 * soft RLIMIT_NOFILE (-1 when unlimited); getrlimit would tie a 32-bit
 * library to the 32-bit rlimit layout, which Debian's checks refuse. */
static _Atomic long dup_base;

static long base_now(void)
{
	long b = atomic_load_explicit(&dup_base, memory_order_relaxed);
	long lim;

	if (b)
		return b;
	lim = sysconf(_SC_OPEN_MAX);
	if (lim < 0 || lim / 2 > 65536)
		b = 65536;
	else
		b = lim / 2 > 3 ? lim / 2 : 3;
	atomic_store_explicit(&dup_base, b, memory_order_relaxed);
	return b;
}

/* A close-on-exec duplicate of fd, high (base_now), else above 2; or -1
 * (fd is not open, or no number is left: the copy then names the
 * program's own, and the kernel answers for a bad one). */
static int dup_of(int fd)
{
	long d = sys_fcntl(fd, F_DUPFD_CLOEXEC, base_now());

	if (d == -EINVAL || d == -EMFILE)	/* the limit moved, or full */
		d = sys_fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return d < 0 ? -1 : (int)d;
}

/* Under the lock: r becomes the library's copy of cb (read from user), tried without
 * blocking unless the program asked for RWF_NOWAIT itself (then its
 * -EAGAIN is the program's answer); straight_to_worker says whether
 * the try is worth making. */
static void fill(struct poll_rec *r, io_context_t ctx, struct iocb *user,
		 const struct iocb *cb)
{
	r->ctx = ctx;
	r->user = user;
	r->async = 1;
	r->carried = 0;
	memcpy(&r->carry, cb, sizeof(r->carry));
	r->user_data = r->carry.aio_data;
	r->user_fd = (int)r->carry.aio_fildes;
	r->user_resfd = -1;
	r->carry.aio_data = aioreap_rec_token(r);
	r->carry.aio_key = 0;
	if ((r->kfd = dup_of(r->user_fd)) >= 0)
		r->carry.aio_fildes = (uint32_t)r->kfd;
	if ((r->carry.aio_flags & KIOCB_FLAG_RESFD) &&
	    (r->kresfd = dup_of((int)r->carry.aio_resfd)) >= 0)
		r->carry.aio_resfd = (uint32_t)r->kresfd;
	if (cb->aio_lio_opcode == IO_CMD_PREADV ||
	    cb->aio_lio_opcode == IO_CMD_PWRITEV)
		copy_iov(r);
	r->nowait = !(r->carry.aio_rw_flags & RWF_NOWAIT);
	if (r->nowait)
		r->carry.aio_rw_flags |= RWF_NOWAIT;
	r->wkey = aioreap_async_write_key(r);
	aioreap_rec_hash_insert(r);
}

/* The kernel takes at most this many bytes in one request (INT_MAX to
 * a 4 KiB page boundary; less by a few pages where pages are larger,
 * which moves only the end-of-file-offsets check below by that much). */
#define RW_MAX	((long long)(INT_MAX & ~4095))

/* The bytes a vectored copy asks for, as the kernel counts them (at most
 * RW_MAX), or -EINVAL for a length negative as a signed size. */
static long long iov_total(const struct poll_rec *r)
{
	long long sum = 0;
	uint64_t i;

	for (i = 0; i < r->carry.aio_nbytes; i++) {
		if ((ssize_t)r->iov[i].iov_len < 0)
			return -EINVAL;
		if (sum < RW_MAX)
			sum += r->iov[i].iov_len < (size_t)(RW_MAX - sum) ?
			       (long long)r->iov[i].iov_len : RW_MAX - sum;
	}
	return sum;
}

/*
 * What the kernel would still have checked at submission for r, which
 * goes to a worker without it (no non-blocking mode, or tries that keep
 * failing): without this, a worker's submission would answer in an
 * event what io_submit answers for the kernel.  0, or the kernel's
 * answer: EINVAL for a byte count negative as a signed size; EBADF for a descriptor not open in
 * r's direction; EINVAL for a vectored array of more than 1024 segments
 * or with a bad length, and for a negative offset or an end past the
 * largest one (the files that take any offset have no method aio can
 * use, so the kernel answers EINVAL for them as well); EFAULT for an
 * array that could not be copied.  What the kernel checks before it
 * looks at RWF_NOWAIT is checked by the try itself, and straight_to_worker
 * sends no iocb that needs those checks (reserved field, priority, RESFD)
 * without a try.  Not checked, so answered in the event by the worker's
 * submission: a buffer at an address beyond the process's reach, and a
 * count of 2 GiB or more from a 32-bit program on a 32-bit kernel.
 */
static long queue_check(const struct poll_rec *r)
{
	int fd = r->kfd >= 0 ? r->kfd : r->user_fd;
	long fl, acc;
	long long off = (long long)r->carry.aio_offset, len;
	int reading = r->carry.aio_lio_opcode == IO_CMD_PREAD ||
		      r->carry.aio_lio_opcode == IO_CMD_PREADV;

	if ((long long)r->carry.aio_nbytes < 0)
		return -EINVAL;
	fl = sys_fcntl(fd, F_GETFL, 0);
	if (fl < 0 || (fl & O_PATH))
		return -EBADF;
	acc = fl & O_ACCMODE;
	if (acc == O_ACCMODE || (reading ? acc == O_WRONLY : acc == O_RDONLY))
		return -EBADF;
	len = r->carry.aio_nbytes < RW_MAX ? (long long)r->carry.aio_nbytes
					    : RW_MAX;
	if (r->carry.aio_lio_opcode == IO_CMD_PREADV ||
	    r->carry.aio_lio_opcode == IO_CMD_PWRITEV) {
		if (r->carry.aio_nbytes > IOV_LIMIT)
			return -EINVAL;
		if (r->carry.aio_nbytes && !r->iov)
			return -EFAULT;
		if ((len = iov_total(r)) < 0)
			return len;
	}
	if (off < 0 || len > LLONG_MAX - off)
		return -EINVAL;
	return 0;
}

/* Does cb go to a worker without a try: on a kernel that does not know
 * RWF_NOWAIT, and on a descriptor whose tries in that direction keep
 * failing (async_worker.c remembers which). */
static int straight_to_worker(const struct iocb *cb)
{
	const struct kernel_iocb *k = (const struct kernel_iocb *)cb;

	/* What the kernel checks before RWF_NOWAIT, queue_check does not:
	 * such an iocb is tried (and, on a kernel without RWF_NOWAIT,
	 * submitted blocking), so that the kernel answers for it. */
	if (k->aio_reserved2 || k->aio_flags || k->aio_reqprio)
		return 0;
	if (atomic_load_explicit(&nowait_missing, memory_order_relaxed))
		return 1;
	return !(cb->aio_rw_flags & RWF_NOWAIT) &&
	       aioreap_async_try_pays((int)cb->aio_fildes,
				      cb->aio_lio_opcode) == 0;
}

/*
 * Under the lock: the kernel refused r's submission with err.  0 if r
 * is accepted all the same (handed to a worker, or submitted blocking
 * where the kernel does not know RWF_NOWAIT), else the program's answer.
 */
static long take_refused(io_context_t ctx, struct poll_rec *r, long err)
{
	struct iocb *one = (struct iocb *)&r->carry;

	if (!r->nowait)
		return err;
	if (err == -EOPNOTSUPP) {	/* no non-blocking mode: a worker's */
		if ((err = queue_check(r)) < 0)
			return err;
		aioreap_async_note_try(r->user_fd, r->carry.aio_lio_opcode,
				       -EOPNOTSUPP);
		aioreap_async_count(ASYNC_TO_WORKERS);
		aioreap_async_queue(r);
		return 0;
	}
	if (err != -EINVAL)
		return err;
	/* RWF_NOWAIT unknown (before 4.13), or an iocb that is bad anyway:
	 * the kernel tells which.  Blocking, this once, as stock does. */
	aioreap_async_unmark(r);
	if ((err = aio_sys_submit(ctx, 1, &one)) != 1)
		return err < 0 ? err : -EAGAIN;
	atomic_store_explicit(&nowait_missing, 1, memory_order_relaxed);
	return 0;
}

/* The kernel's answer for recs[at..have), whose first it stopped at or
 * refused with next (0: stopped, the reason unknown): how many of them,
 * from the front, are accepted, in the kernel or a worker's queue. */
static long finish(io_context_t ctx, struct poll_rec **recs,
		   struct iocb **ptrs, long have, long next, long *err)
{
	long taken = 0;

	while (taken < have) {
		if (next > 0) {
			taken += next;
			next = 0;
			continue;
		}
		if (next == 0) {	/* why it stopped: ask for that one */
			next = aio_sys_submit(ctx, 1, ptrs + taken);
			continue;
		}
		if ((next = take_refused(ctx, recs[taken], next)) < 0) {
			*err = next;
			break;
		}
		taken++;
		next = taken < have ?
			aio_sys_submit(ctx, have - taken, ptrs + taken) : 0;
	}
	return taken;
}

/* Up to n reads and writes: how many were accepted, or -errno if none;
 * *whole is 1 when every one of them this call took on was (it stops
 * early where the run changes from tries in the kernel to the workers'
 * queue or back, and the caller goes on from there).  One call either
 * tries a run in the kernel or queues a run for the workers
 * (straight_to_worker asked once per iocb: it may answer differently
 * when asked again), so that the count it returns is a prefix. */
static long submit_rw(io_context_t ctx, struct iocb **user,
		      const struct iocb *cbs, long n, int *whole)
{
	struct poll_rec *recs[BATCH];
	struct iocb *ptrs[BATCH];
	long have, taken, err = -EAGAIN, i;
	int queue = straight_to_worker(&cbs[0]);
	sigset_t old;

	aioreap_pe_enter(&old);
	for (have = 0; have < n; have++) {
		struct poll_rec *r;

		if (have && straight_to_worker(&cbs[have]) != queue)
			break;
		if (!(r = aioreap_rec_alloc())) {
			*whole = 0;
			break;
		}
		fill(r, ctx, user[have], &cbs[have]);
		if (queue && (err = queue_check(r)) < 0) {
			aioreap_rec_free(r);	/* never queued */
			*whole = 0;
			break;
		}
		if (queue) {
			aioreap_async_count(ASYNC_TO_WORKERS);
			aioreap_async_queue(r);
			continue;
		}
		/* Before the submission: its event may be reaped before
		 * io_submit returns. */
		rec_set(r, REC_DELIVERED);
		recs[have] = r;
		ptrs[have] = (struct iocb *)&r->carry;
	}
	if (queue) {
		aioreap_pe_leave(&old);
		return have ? have : err;
	}
	taken = finish(ctx, recs, ptrs, have,
		       have ? aio_sys_submit(ctx, have, ptrs) : -EAGAIN, &err);
	if (taken < have)
		*whole = 0;
	for (i = taken; i < have; i++) {
		/* Never in the kernel: no event names it. */
		rec_move(recs[i], REC_DELIVERED, REC_FIRED);
		aioreap_rec_free(recs[i]);
	}
	aioreap_pe_leave(&old);
	return taken ? taken : err;
}

int aioreap_async_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	struct iocb *ptrs[BATCH], cbs[BATCH];
	long done = 0, ret;

	if (nr <= 0 || obviously_bad_pointer(ios))
		return (int)aio_sys_submit(ctx, nr, ios);
	/* A bad context: the kernel's EINVAL, before the array is read. */
	if (!aioreap_registry_lookup(ctx) &&
	    (ret = aio_sys_submit(ctx, 0, NULL)) < 0)
		return (int)ret;
	nr = registry_clamp_nr(ctx, nr);
	/* Before the first copy reaches a ring: reaps must rewrite. */
	aioreap_poll_note_used();
	while (done < nr) {
		long have = read_batch(ios + done,
				       nr - done < BATCH ? nr - done : BATCH,
				       ptrs, cbs), at = 0;

		if (!have)	/* unreadable: the kernel's answer */
			return done ? (int)done : -EFAULT;
		while (at < have) {
			long run = 0;
			int whole = 1;

			while (at + run < have && is_rw(&cbs[at + run]))
				run++;
			if (run) {
				ret = submit_rw(ctx, ptrs + at, cbs + at, run,
						&whole);
				if (whole && ret > 0)
					run = ret;	/* the run split */
			} else {
				while (at + run < have && !is_rw(&cbs[at + run]))
					run++;
				ret = aioreap_poll_submit(ctx, run, ios + done + at);
			}
			if (ret < 0)
				return done + at ? (int)(done + at) : (int)ret;
			at += ret;
			if (ret < run)
				return (int)(done + at);
		}
		done += have;
	}
	return (int)done;
}

/* --- cancel ------------------------------------------------------------ */

int aioreap_async_cancel(io_context_t ctx, struct iocb *iocb,
			 struct io_event *evt, int *ret)
{
	struct poll_rec *r;
	sigset_t old;
	int found = 0;

	if (obviously_bad_pointer(iocb))
		return 0;
	aioreap_pe_enter(&old);
	aioreap_async_drain_locked();
	r = aioreap_async_unqueue_one(ctx, iocb);
	if (r) {
		struct io_event ev;

		memcpy(&ev, &r->user_data, sizeof(r->user_data));
		ev.obj = r->user;
		ev.res = (unsigned long)(long)-ECANCELED;
		ev.res2 = 0;
		/* -EFAULT where evt is not writable, as the kernel's. */
		*ret = aioreap_user_store(evt, &ev, sizeof(ev));
		if (*ret == 0) {
			aioreap_async_count(ASYNC_CANCELLED);
			aioreap_rec_free(r);
		} else {
			aioreap_async_queue(r);		/* not cancelled */
		}
		found = 1;
	}
	for (r = found ? NULL : aioreap_rec_hash_first(iocb); r;
	     r = r->hnext) {
		if (r->user != iocb || r->ctx != ctx || !r->async ||
		    rec_state(r) != REC_DELIVERED)
			continue;
		/* The kernel holds it: its answer (EINVAL for file I/O). */
		*ret = (int)aio_sys_cancel(ctx, (struct iocb *)&r->carry, evt);
		found = 1;
		break;
	}
	aioreap_pe_leave(&old);
	return found;
}
