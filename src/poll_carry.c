/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A poll the kernel refuses, carried by the kernel all the same.
 *
 * Aio poll (Linux 4.19 on) serves only files whose poll waits on a single
 * queue: it refuses ttys, ptys and FIFOs open for both ends with EINVAL.
 * An epoll set waits on one queue of its own, and becomes readable when a
 * file registered in it is ready.  So the library registers the refused
 * file in a new set of one, submits IOCB_CMD_POLL on the set in the
 * program's context, and closes its own descriptor for the set before
 * io_submit returns: from the submission on, the kernel holds the set
 * until the poll completes or is cancelled, and the set needs no
 * descriptor to report its file.  No thread, no wake-up, and no
 * descriptor of the library's outlives the call; the completion, the
 * RESFD eventfd, io_cancel and io_destroy are the kernel's own.
 *
 * The iocb the kernel sees is the record's (carry), so the event names it
 * and carries the record's token as data; every library reap rewrites it
 * into the program's event (poll_emul.c), with the file's mask as res:
 * the set's own completion says only that the set is readable.  The mask
 * is read with ppoll on the program's descriptor when the event is
 * rewritten.  A set completes with 0 only when cancelled, and so does the
 * rewritten event, as a native poll does.
 *
 * What differs from a native poll: the set keeps no reference to the
 * file, so a poll whose file has no descriptor left anywhere (the program
 * closed its last one) never completes until it is cancelled or its
 * context destroyed; a native poll keeps the file open.  And the mask is
 * the file's when the event is reaped, not when it completed; if nothing
 * asked for is ready any more, res holds the events asked for.
 */
#include "config.h"

#include <poll.h>
#include <string.h>
#include <sys/epoll.h>

#include "compiler.h"
#include "fd_id.h"
#include "poll_bits.h"
#include "poll_carry.h"
#include "poll_emul.h"
#include "poll_helper.h"
#include "poll_rec.h"
#include "poll_syscall.h"

/* Set once a carried submission says EINVAL for a poll without RESFD: a
 * kernel without aio poll, where the helper serves every poll.  Relaxed:
 * it only saves the attempt; either value is correct to act on. */
static _Atomic int carry_refused;

/* A new set holding fd for the request, or io_submit's answer: EINVAL
 * where the kernel cannot poll it (no poll method, an epoll loop) and at
 * the descriptor limit (what stock libaio answers for such a file
 * anyway), EAGAIN where the set or memory is short, EBADF if fd closed. */
static int set_of_one(int fd, unsigned events)
{
	struct epoll_event ev;
	long ep = aioreap_fd_above_stdio(sys_epoll_create1(EPOLL_CLOEXEC)),
	     ret;

	if (ep < 0)		/* EMFILE, or ENOMEM */
		return ep == -ENOMEM ? -EAGAIN : -EINVAL;
	memset(&ev, 0, sizeof(ev));
	ev.events = poll_bits_translate(poll_bits_woken_by(events), 1);
	ret = sys_epoll_ctl((int)ep, EPOLL_CTL_ADD, fd, &ev);
	if (ret == 0)
		return (int)ep;
	sys_close((int)ep);
	if (ret == -ENOSPC || ret == -ENOMEM)
		return -EAGAIN;
	return ret == -EBADF ? -EBADF : -EINVAL;
}

/* Under the lock: r's iocb for the kernel, a poll of set in r's stead. */
static void prep_carry(struct poll_rec *r, const struct kernel_iocb *k,
		       int set)
{
	memset(&r->carry, 0, sizeof(r->carry));
	r->carry.aio_data = aioreap_rec_token(r);
	r->carry.aio_lio_opcode = IO_CMD_POLL;
	r->carry.aio_reqprio = k->aio_reqprio;
	r->carry.aio_fildes = (uint32_t)set;
	/* An epoll set reports only POLLIN (a file in it is ready), and
	 * wakes its waiters with that key: the set's poll asks for it,
	 * whatever the program asked of the file (r->events). */
	r->carry.aio_buf = POLLIN;
	r->carry.aio_flags = k->aio_flags;
	r->carry.aio_resfd = k->aio_resfd;
}

/* Under the lock: a record for the poll, submitted.  1 once the kernel
 * took it, else its answer (the record freed). */
static long submit_locked(io_context_t ctx, struct iocb *cb,
			  const struct kernel_iocb *k, int set)
{
	struct poll_rec *r;
	struct iocb *one;
	long ret;

	if (aioreap_poll_ctx_dying(ctx))
		return -EBADSLT;	/* EINVAL to the program (see caller) */
	r = aioreap_rec_alloc();
	if (!r)
		return -EAGAIN;
	r->ctx = ctx;
	r->user = cb;
	r->user_data = k->aio_data;
	r->user_fd = (int)k->aio_fildes;
	r->user_resfd = -1;	/* the kernel holds the eventfd itself */
	r->events = (unsigned)k->aio_buf;
	r->carried = 1;
	prep_carry(r, k, set);
	aioreap_rec_hash_insert(r);
	/* Before the submission: its event may be reaped before it returns. */
	rec_set(r, REC_DELIVERED);
	one = (struct iocb *)&r->carry;
	ret = aio_sys_submit(ctx, 1, &one);
	if (ret != 1) {
		/* No event exists, so no reaper can have claimed it. */
		rec_move(r, REC_DELIVERED, REC_FIRED);
		aioreap_rec_free(r);
	}
	return ret;
}

int aioreap_poll_carry(io_context_t ctx, struct iocb *cb,
		       const struct kernel_iocb *k)
{
	sigset_t old;
	long ret;
	int set;

	if (atomic_load_explicit(&carry_refused, memory_order_relaxed))
		return CARRY_UNAVAILABLE;
	set = set_of_one((int)k->aio_fildes, (unsigned)k->aio_buf);
	if (set < 0)
		return set;
	aioreap_pe_enter(&old);
	ret = submit_locked(ctx, cb, k, set);
	aioreap_pe_leave(&old);
	sys_close(set);		/* the kernel holds it now, or never will */
	if (ret == 1)
		return 0;
	if (ret == -EBADSLT)
		return -EINVAL;	/* io_destroy has begun: as if done */
	/* EINVAL for a poll of a set, with no eventfd to blame and a
	 * context that lives: this kernel has no aio poll at all. */
	if (ret == -EINVAL && !(k->aio_flags & KIOCB_FLAG_RESFD) &&
	    aio_sys_submit(ctx, 0, NULL) == 0) {
		atomic_store_explicit(&carry_refused, 1, memory_order_relaxed);
		return CARRY_UNAVAILABLE;
	}
	return (int)ret;
}

unsigned long aioreap_poll_carry_res(const struct poll_rec *r,
				     unsigned long set_res)
{
	unsigned want = poll_bits_woken_by(r->events);
	struct pollfd pfd = { .fd = r->user_fd, .events = (short)want };

	if (set_res == 0)
		return 0;	/* cancelled */
	if (sys_ppoll_now(&pfd, 1) == 1 && !(pfd.revents & POLLNVAL) &&
	    ((unsigned short)pfd.revents & want))
		return (unsigned short)pfd.revents & want;
	return r->events;
}
