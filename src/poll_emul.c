/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * IOCB_CMD_POLL done by the library: when the kernel has no aio poll
 * (before 4.19), when LIBAIO_DISABLE=poll asks for it, or when it refuses
 * a well-formed poll with EINVAL (ttys and ptys: two wait queues).
 *
 * The fd goes into a process-wide epoll set, one-shot, that a helper
 * thread waits on.  The completion must then wake a thread asleep in
 * io_getevents, which only a real AIO completion ends, and user space may
 * not write the kernel's ring; a second queue merged into every reap would
 * need signals or bounded sleeps and a second exactly-once argument.  So
 * the helper submits a doorbell to the context: an iocb of ours that
 * completes inside io_submit (a 0-byte read of a memfd or /dev/zero).
 * Its event's obj is one of our static doorbell iocbs, its data a token
 * naming the record, and every library reap rewrites it in place into the
 * application's completion.  One doorbell is one completion, so exactly-
 * once delivery is the kernel's, and IOCB_FLAG_RESFD is honoured by
 * putting the user's eventfd on the doorbell.
 *
 * Locking: one mutex (poll_helper.h) covers the records, their hash, the
 * backlog and the helper, and is held across every doorbell io_submit.
 * A reaper takes no lock: it claims a delivered record with one
 * compare-and-swap of its generation-and-state word (poll_rec.h) and
 * hands it back through a list that the lock's next holder recycles.
 *
 * Destroy: io_destroy publishes the context in a dying slot, then cancels
 * its polls under the lock; emulating a poll sets the used flag, then asks
 * the kernel whether the context lives and reads the slots, under the
 * lock.  Each side writes before it reads the other's variable
 * (sequentially consistent), so a poll is either cancelled or refused
 * with EINVAL, and no doorbell reaches a context after io_destroy.
 *
 * This file validates, emulates and cancels polls; poll_destroy.c follows
 * destroys; poll_helper.c has the lock, epoll set, helper and doorbells;
 * poll_rec.c the record store; fd_id.c descriptor identity.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>

#include "async.h"
#include "compiler.h"
#include "feature_flags.h"
#include "poll_carry.h"
#include "poll_emul.h"
#include "poll_helper.h"
#include "poll_rec.h"
#include "poll_syscall.h"
#include "registry.h"
#include "user_ptr.h"

/* --- fork ------------------------------------------------------------ */

static sigset_t fork_mask;	/* one fork at a time holds the lock */

static void fork_prepare(void)
{
	aioreap_pe_enter(&fork_mask);
	aioreap_thread_fork_prepare();
}

static void fork_parent(void)
{
	aioreap_pe_leave(&fork_mask);
}

/* The parent's contexts are not ours: forget every record, claimed ones
 * too (their reapers are not here), closing the inherited duplicates. */
static void fork_child(void)
{
	struct poll_rec *r;
	unsigned pos = 0;

	/* First: disarm must not touch the parent's epoll set, and the
	 * parent's helper is not here. */
	aioreap_thread_reset_in_child();
	aioreap_helper_reset_in_child();
	aioreap_async_reset_in_child();
	aioreap_rec_recycle_forget();
	while ((r = aioreap_rec_each(&pos)))
		aioreap_rec_free(r);
	aioreap_pe_leave(&fork_mask);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static int is_poll(const struct iocb *cb)
{
	return !obviously_bad_pointer(cb) && cb->aio_lio_opcode == IO_CMD_POLL;
}

/*
 * The kernel's store of KIOCB_KEY (0) into an iocb it takes: 0, or -EFAULT
 * where the iocb is not writable.  With the emulation forced the kernel
 * has not written it yet (checked): the store is a checked one, failing on
 * read-only memory as the kernel's does.  Otherwise the kernel already
 * wrote the key, so a plain store cannot fault.  The array and the iocbs
 * are read with plain loads: a checked read would add a system call to
 * every batch (a documented difference: an unreadable entry faults).
 */
static int store_key(struct iocb *cb, int checked)
{
	static const unsigned zero;

	if (checked)
		return aioreap_user_store(&cb->key, &zero, sizeof(cb->key));
	cb->key = 0;
	return 0;
}

/* Is ctx alive?  io_submit(ctx, 0) answers 0 or EINVAL, nothing more. */
static int ctx_check(io_context_t ctx)
{
	return (int)aio_sys_submit(ctx, 0, NULL);
}

/* 0 if the kernel would accept fd for I/O, else -EBADF (closed, O_PATH). */
static int check_fd(int fd)
{
	long fl = sys_fcntl(fd, F_GETFL, 0);

	return fl < 0 || (fl & O_PATH) ? -EBADF : 0;
}

/* A close-on-exec duplicate of fd, above 2 if it can be, that passes
 * check_fd; or -errno (EBADF, EMFILE). */
static int take_fd(int fd)
{
	long dup = sys_fcntl(fd, F_DUPFD_CLOEXEC, 3);

	if (dup == -EINVAL)	/* RLIMIT_NOFILE at 3 or below */
		dup = sys_fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup < 0)
		return dup == -EINVAL ? -EBADF : (int)dup;
	if (check_fd((int)dup) < 0) {
		sys_close((int)dup);
		return -EBADF;
	}
	return (int)dup;
}

/*
 * The kernel's descriptor lookups: 0, or -errno (EBADF; EINVAL: the
 * RESFD descriptor is no eventfd).  Nothing is duplicated here: fd only
 * to arm it (closing a duplicate drops the program's record locks on the
 * file, which a kernel poll never does), the eventfd never (the doorbell
 * names the program's own; see poll_rec.h).
 */
static int lookup_fds(const struct kernel_iocb *k)
{
	int ret = check_fd((int)k->aio_fildes);

	if (ret < 0 || !(k->aio_flags & KIOCB_FLAG_RESFD))
		return ret;
	ret = check_fd((int)k->aio_resfd);
	if (ret == 0 && !aioreap_fd_is_eventfd((int)k->aio_resfd))
		ret = -EINVAL;
	return ret;
}

/* The mask fd reports for events now; 0 also if ppoll fails. */
static unsigned ready_now(int fd, unsigned events)
{
	struct pollfd pfd = { .fd = fd, .events = (short)events };

	if (sys_ppoll_now(&pfd, 1) < 0)
		return 0;
	return (unsigned short)pfd.revents &
		(events | POLLERR | POLLHUP | POLLNVAL);
}

/*
 * -EINVAL for a file with no poll method (epoll says EPERM: its mask never
 * changes), which the kernel refuses when not ready; else 0 (also when
 * it cannot be asked).  Asked of the caller's fd in a throw-away set, so
 * that no duplicate is closed (see lookup_fds).
 */
static int check_waitable(int fd)
{
	struct epoll_event ev = { .events = 0 };
	long ep = sys_epoll_create1(EPOLL_CLOEXEC), ret;

	if (ep < 0)
		return 0;
	ret = sys_epoll_ctl((int)ep, EPOLL_CTL_ADD, fd, &ev);
	sys_close((int)ep);
	return ret == -EPERM ? -EINVAL : 0;
}

/*
 * Under the lock (so no destroy completes between the kernel's answer and
 * the insertion): a record owning fd (-1: none; programs: the program's
 * own) if ctx is alive, not dying, and the set exists.  Else NULL, *err
 * set, and the caller still holds fd.
 */
static struct poll_rec *admit_locked(io_context_t ctx, struct iocb *cb,
				     const struct kernel_iocb *k, int fd,
				     int programs, int *err)
{
	struct poll_rec *r;
	int ret = ctx_check(ctx);

	if (ret == 0 && aioreap_poll_ctx_dying(ctx))
		ret = -EINVAL;
	if (ret == 0)
		ret = aioreap_helper_ensure();
	if (ret < 0) {
		*err = ret;
		return NULL;
	}
	r = aioreap_rec_alloc();
	if (!r) {
		*err = -EAGAIN;
		return NULL;
	}
	r->ctx = ctx;
	r->user = cb;
	r->user_data = k->aio_data;
	r->user_fd = (int)k->aio_fildes;
	r->user_resfd = k->aio_flags & KIOCB_FLAG_RESFD ?
		(int)k->aio_resfd : -1;
	r->events = (unsigned)k->aio_buf;
	r->carried = 0;
	r->fd = fd;
	r->fd_programs = programs;
	if (fd >= 0)
		aioreap_fd_identify(fd, &r->fd_id);
	aioreap_rec_hash_insert(r);
	return r;
}

/* io_submit's answer when epoll refuses fd: EINVAL where the kernel
 * cannot poll it (no poll method; an epoll set watching itself), EAGAIN
 * for a full set. */
static int arm_error(int err)
{
	if (err == -EPERM || err == -ELOOP)
		return -EINVAL;
	if (err == -ENOSPC)
		return -EAGAIN;
	return err;
}

/* Under the lock: arm r, or complete it with ready if that is not 0.
 * -errno if neither: r is freed, its descriptor the caller's again. */
static int arm_or_complete(struct poll_rec *r, unsigned ready)
{
	int ret;

	r->res = ready;
	if (!r->res) {
		rec_set(r, REC_ARMED);
		ret = aioreap_helper_arm(r);
		if (ret == 0 && (ret = aioreap_thread_ensure()) == 0)
			return 0;	/* the helper completes it */
		if (ret == -EAGAIN || ret == -ENOMEM) {
			/* No helper could start: not armed after all. */
			aioreap_helper_disarm(r);
			aioreap_rec_free(r);
			return -EAGAIN;
		}
		/* EPERM: no poll method, always readable and writable. */
		r->res = r->events & (POLLIN | POLLOUT |
				      POLLRDNORM | POLLWRNORM);
		if (ret != -EPERM || !r->res) {
			r->fd = -1;	/* never armed: the caller closes it */
			aioreap_rec_free(r);
			return arm_error(ret);
		}
	}
	/* Complete at once; fd (-1 if never duplicated) is not armed. */
	rec_set(r, REC_FIRED);
	if (r->fd >= 0 && !r->fd_programs)
		sys_close(r->fd);
	r->fd = -1;
	r->fd_programs = 0;
	aioreap_helper_complete(r);
	return 0;
}

/*
 * Before the first record: the fork handlers, and the used flag.
 * Sequentially consistent, before the admission reads the dying slots:
 * the destroy handshake's other half.  It also precedes every doorbell
 * and carried submission, and makes io_cancel and the reaps look here.
 */
void aioreap_poll_note_used(void)
{
	pthread_once(&init_once, init);
	atomic_store(&aioreap_poll_emul_used, 1);
}

/* The poll's own fields, which the kernel checks after its lookups. */
static int poll_fields_ok(const struct kernel_iocb *k)
{
	return !(k->aio_buf > 0xffff || k->aio_offset || k->aio_nbytes ||
		 k->aio_rw_flags);
}

/* emulate_one's flags. */
#define CTX_KNOWN_OK	0x1	/* the kernel just accepted an iocb for ctx */
#define KEY_UNWRITTEN	0x2	/* the kernel has not written cb's key */

/* Emulate one poll iocb, checking in the kernel's order so that a bad
 * one gets the kernel's error: 0 once armed or completed, or -errno. */
static int emulate_one(io_context_t ctx, struct iocb *cb, unsigned how)
{
	struct kernel_iocb k;
	struct poll_rec *r;
	sigset_t old;
	int fd = -1, programs = 0, ret;
	unsigned ready;

	memcpy(&k, cb, sizeof(k));
	if (!(how & CTX_KNOWN_OK) && (ret = ctx_check(ctx)) < 0)
		return ret;
	/* The checks the kernel makes before it looks up any descriptor. */
	if (k.aio_reserved2 || (int64_t)k.aio_nbytes < 0)
		return -EINVAL;
	if ((ret = lookup_fds(&k)) < 0)
		return ret;
	/* The kernel stores KIOCB_KEY (0) here, or answers EFAULT. */
	if ((ret = store_key(cb, how & KEY_UNWRITTEN)) < 0)
		return ret;
	/* The poll's own fields: checked after the lookups. */
	if (!poll_fields_ok(&k))
		return -EINVAL;
	/* Ready now: completed inside io_submit, with no duplicate. */
	ready = ready_now((int)k.aio_fildes, (unsigned)k.aio_buf);
	if (ready & POLLNVAL)
		return -EBADF;	/* closed since check_fd: as if before it */
	if (!ready && (ret = check_waitable((int)k.aio_fildes)) < 0)
		return ret;
	if (!ready) {
		fd = take_fd((int)k.aio_fildes);
		/* No number left for a duplicate: arm the program's own
		 * descriptor rather than fail a poll the kernel would take. */
		if (fd == -EMFILE) {
			fd = (int)k.aio_fildes;
			programs = 1;
		} else if (fd < 0) {
			return fd;	/* closed meanwhile (EBADF) */
		}
	}

	aioreap_poll_note_used();
	aioreap_pe_enter(&old);
	r = admit_locked(ctx, cb, &k, fd, programs, &ret);
	if (r)
		ret = arm_or_complete(r, ready);
	aioreap_pe_leave(&old);
	if (ret == 0)
		return 0;	/* the record owns the descriptor now */
	if (fd >= 0 && !programs)
		sys_close(fd);
	/* The library's own descriptors could not be had (its set, its
	 * doorbell file): resources, as io_submit says for its own. */
	return ret == -EMFILE || ret == -ENFILE ? -EAGAIN : ret;
}

int aioreap_poll_emul_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	long done = 0;
	int bad;

	if (nr <= 0 || obviously_bad_pointer(ios))
		return (int)aio_sys_submit(ctx, nr, ios);
	/* A context we did not create may be garbage: the kernel would say
	 * EINVAL before reading the array, so ask it before we read. */
	if (!aioreap_registry_lookup(ctx) && (bad = ctx_check(ctx)) < 0)
		return bad;
	nr = registry_clamp_nr(ctx, nr);
	while (done < nr) {
		long ret, run = 0;

		if (is_poll(ios[done])) {
			ret = emulate_one(ctx, ios[done],
					  (done > 0 ? CTX_KNOWN_OK : 0) |
					  KEY_UNWRITTEN);
			if (ret < 0)
				return done ? (int)done : (int)ret;
			done++;
			continue;
		}
		while (done + run < nr && !is_poll(ios[done + run]))
			run++;
		ret = aio_sys_submit(ctx, run, ios + done);
		if (ret < 0)
			return done ? (int)done : (int)ret;
		done += ret;
		if (ret < run)
			break;
	}
	return (int)done;
}

/* io_submit: the kernel first, the emulation for what it refuses. */
int aioreap_poll_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	long ret;

	/* No question to the kernel first: the batch itself tells. */
	if (unlikely(features_disabled() & DISABLE_POLL))
		return aioreap_poll_emul_submit(ctx, nr, ios);
	ret = aio_sys_submit(ctx, nr, ios);
	if (unlikely(ret != nr) && nr > 0 && (ret >= 0 || ret == -EINVAL))
		return aioreap_poll_emul_resume(ctx, nr, ios, ret);
	return (int)ret;
}

/*
 * The kernel refused a well-formed poll of fd with EINVAL: a file with
 * two wait queues (a tty, a pty, a FIFO open read-write), which we serve,
 * or one that never waits (many /proc files), which epoll would accept
 * and never report: there the kernel's answer stands, as with stock
 * libaio.  Type 0 (anonymous inodes, or neither statx nor fstat works)
 * is served, and so is a tty that never waits (N_NULL): epoll cannot
 * tell it from the others.
 */
static int worth_emulating(int fd)
{
	unsigned type = aioreap_fd_type(fd);

	return type == 0 || type == S_IFCHR || type == S_IFIFO;
}

/*
 * Go on at *pos, where the kernel stopped; err is its answer for the
 * batch from there: -EINVAL, or 0 (then *pos is submitted alone, so an
 * unreadable entry gets EFAULT).  1 once the entry is taken by the kernel
 * or emulated, else the answer that ends the batch there.
 */
static long resume_at(io_context_t ctx, struct iocb **pos, long err,
		      int ctx_known_ok)
{
	struct kernel_iocb k;
	struct iocb *cb;
	long ret;

	if (err == 0) {
		ret = aio_sys_submit(ctx, 1, pos);
		if (ret != -EINVAL)	/* 1: taken; else what ends the batch */
			return ret;
	}
	cb = *pos;		/* read once, as the kernel reads it */
	if (!is_poll(cb) || !worth_emulating((int)cb->aio_fildes))
		return -EINVAL;
	/* The kernel checked all but the poll's own fields (it would have
	 * said EBADF or EFAULT first), and wrote the key. */
	memcpy(&k, cb, sizeof(k));
	if (k.aio_reserved2 || !poll_fields_ok(&k))
		return -EINVAL;
	aioreap_poll_note_used();
	ret = aioreap_poll_carry(ctx, cb, &k);
	if (ret == CARRY_UNAVAILABLE)
		ret = emulate_one(ctx, cb, ctx_known_ok ? CTX_KNOWN_OK : 0);
	return ret < 0 ? ret : 1;
}

int aioreap_poll_emul_resume(io_context_t ctx, long nr, struct iocb **ios,
			     long done)
{
	long err = done < 0 ? done : 0;		/* 0 or -EINVAL: see submit.c */

	if (done < 0)
		done = 0;
	nr = registry_clamp_nr(ctx, nr);
	if (done >= nr)
		return (int)done;
	/* Read no entry the kernel has not shown readable: EINVAL for the
	 * whole batch means a bad context (asked) or a bad first iocb. */
	if (err == -EINVAL && ctx_check(ctx) != 0)
		return (int)err;
	for (;;) {
		long ret = resume_at(ctx, ios + done, err, done > 0);

		if (ret != 1)		/* the batch ends at ios[done] */
			return done ? (int)done : (int)ret;
		done++;
		if (done == nr)
			return (int)done;
		/* The rest back to the kernel in one call. */
		ret = aio_sys_submit(ctx, nr - done, ios + done);
		if (ret < 0 && ret != -EINVAL)
			return (int)done;	/* its error ends the batch */
		err = ret < 0 ? ret : 0;
		if (ret > 0)
			done += ret;
		if (done == nr)
			return (int)done;
	}
}

/* --- completion, cancel ------------------------------------------------ */

/* Lock-free: a signal handler may reap while its thread holds the lock. */
long aioreap_poll_emul_translate(struct io_event *ev, long n)
{
	long i, out = 0;

	for (i = 0; i < n; i++) {
		struct poll_rec *r;
		uint64_t token, want;

		memcpy(&token, &ev[i], sizeof(token));	/* the kernel's u64 */
		r = aioreap_rec_at(token);
		/* A carried poll's obj is its record's iocb, which no
		 * program iocb can share; a doorbell's is one of ours. */
		if (!aioreap_helper_is_doorbell(ev[i].obj) &&
		    (!r || ev[i].obj != (struct iocb *)&r->carry)) {
			if (out != i)
				ev[out] = ev[i];
			out++;
			continue;
		}
		want = (token & ~(uint64_t)UINT32_MAX) | REC_DELIVERED;
		/* Acquire: pairs with the release that made it DELIVERED,
		 * so the fields read below are the helper's.  A failed claim:
		 * the context was destroyed meanwhile and the record with
		 * it; the event is dropped, as the kernel drops a destroyed
		 * context's (an event with no iocb crashes io_queue_run). */
		if (!r || !atomic_compare_exchange_strong_explicit(
				  &r->tag, &want,
				  (token & ~(uint64_t)UINT32_MAX) | REC_CLAIMED,
				  memory_order_acquire, memory_order_relaxed))
			continue;
		if (r->async) {
			/* A read or write of async submission: taken out
			 * when a worker must do it. */
			out += aioreap_async_complete(r, &ev[i], &ev[out]);
		} else {
			unsigned long res = r->carried ?
				aioreap_poll_carry_res(r, ev[i].res) : r->res;

			memcpy(&ev[out], &r->user_data, sizeof(r->user_data));
			ev[out].obj = r->user;
			ev[out].res = res;
			ev[out].res2 = 0;
			out++;
			/* No descriptor of ours is left on a record
			 * whose event is out: the next lock holder frees
			 * it, and no system call is added here. */
			aioreap_rec_recycle_push(r);
		}
	}
	return out;
}

int aioreap_poll_emul_cancel(io_context_t ctx, struct iocb *iocb, int *ret)
{
	struct poll_rec *r, *found = NULL;
	sigset_t old;

	if (obviously_bad_pointer(iocb))
		return 0;
	aioreap_pe_enter(&old);
	for (r = aioreap_rec_hash_first(iocb); r; r = r->hnext) {
		if (r->user != iocb || r->ctx != ctx)
			continue;
		found = r;
		if (rec_state(r) == REC_ARMED ||
		    (r->carried && rec_state(r) == REC_DELIVERED))
			break;
	}
	if (!found) {
		aioreap_pe_leave(&old);
		return 0;	/* not ours: the kernel answers */
	}
	*ret = -EINVAL;		/* a key the kernel would refuse, or fired */
	if (iocb->key == 0 && found->carried &&
	    rec_state(found) == REC_DELIVERED) {
		struct io_event unused;

		/* The kernel's answer for its own poll: EINPROGRESS, the
		 * event (res 0) to come; EINVAL once it completed. */
		*ret = (int)aio_sys_cancel(ctx, (struct iocb *)&found->carry,
					   &unused);
	} else if (iocb->key == 0 && !found->carried) {
		aioreap_helper_check();		/* before any epoll_ctl below */
		if (rec_move(found, REC_ARMED, REC_FIRED)) {
			found->res = 0;
			aioreap_helper_disarm(found);
			aioreap_helper_complete(found);
			*ret = -EINPROGRESS;
		}
	}
	aioreap_pe_leave(&old);
	return 1;
}
