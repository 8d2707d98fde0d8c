/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One record per emulated poll, and their store (poll_rec.c). */
#ifndef LIBAIO_POLL_REC_H
#define LIBAIO_POLL_REC_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/uio.h>

#include "compiler.h"
#include "fd_id.h"
#include "kernel_abi.h"
#include "libaio.h"
#include "raw_syscall.h"

/* FREE -> ARMED -> FIRED -> DELIVERED -> CLAIMED -> FREE, all under the
 * lock but DELIVERED -> CLAIMED: a reaper's compare-and-swap that includes
 * the generation, after which it hands the record back (recycle list). */
enum {
	REC_FREE = 0,
	REC_ARMED,	/* in the epoll set, nobody has completed it */
	REC_FIRED,	/* completed (ready or cancelled); doorbell not rung */
	REC_DELIVERED,	/* doorbell event in the ring, awaiting the reaper;
			 * for a carried poll, from its submission on */
	REC_CLAIMED,	/* translated by a reaper; on its way to recycling */
};

struct poll_rec {
	/* Generation << 32 | state: a claim never takes a reused record. */
	_Atomic uint64_t tag;
	uint32_t idx;		/* position in the record store */
	uint32_t gen;		/* bumped at each reuse: stale tokens miss */
	int fd;			/* our duplicate of the polled fd, or -1 */
	int fd_programs;	/* 1: fd is the program's own (no number was
				 * left for a duplicate); never closed */
	struct fd_id fd_id;	/* what fd named */
	unsigned events;	/* the POLL* bits asked for */
	unsigned long res;	/* the mask the completion reports */
	io_context_t ctx;
	struct iocb *user;	/* the application's iocb */
	int user_fd;		/* its aio_fildes as submitted */
	/* Its RESFD eventfd, or -1.  The doorbell names the program's own
	 * descriptor, which the kernel resolves when it is rung.  A kernel
	 * poll takes its reference at submission, so an eventfd the program
	 * closes (or whose number it reuses) while the poll waits is still
	 * the one signalled there, and not here (io_prep_poll(3)); holding a
	 * duplicate instead would need telling ours from the program's after
	 * its clean-ups, which only /proc can do for an eventfd. */
	int user_resfd;
	int carried;		/* 1: carry is in the kernel (poll_carry.c) */
	/* The poll the kernel carries for a carried record: its event's
	 * obj is this address, its data the record's token. */
	struct kernel_iocb carry;
	uint64_t user_data;	/* its aio_data as submitted */
	/* Async submission (async.h): carry is the program's read or write
	 * with the record's token, tried without blocking while nowait is
	 * set; err, when not 0, is the res a worker's refused submission
	 * reports through a bell.  iov: the copy of a vectored iocb's array
	 * that carry points at, in iov_small or mapped (iov_map bytes). */
	int async;
	int nowait;
	/* The library's own duplicates of the program's descriptor and of
	 * its RESFD eventfd, which carry names (or -1: the program's own):
	 * a worker submits after io_submit returned, when the program's
	 * numbers may name other files.  Closed when the event is out. */
	int kfd, kresfd;
	/* Async: the write's place in line behind the other writes to its
	 * file on its context, or 0 (async_worker.c). */
	uint64_t wkey;
	long err;
	struct iovec *iov;
	size_t iov_map;
	struct iovec iov_small[4];
	struct poll_rec *dnext;	/* async: the re-drive list */
	struct poll_rec *hnext;	/* chain in the by-iocb hash */
	struct poll_rec *qnext;	/* backlog or free list */
	struct poll_rec *rnext;	/* recycle list */
};

/* Records in REC_ARMED (under the lock): the helper thread has work
 * while there are any. */
extern hidden unsigned long aioreap_rec_armed;

static inline unsigned rec_state(struct poll_rec *r)
{
	/* Relaxed: the lock orders the locked writers; after the one
	 * lock-free move, DELIVERED to CLAIMED, the record is not the lock
	 * holder's whichever of the two it reads. */
	return (uint32_t)atomic_load_explicit(&r->tag, memory_order_relaxed);
}

/* Under the lock.  Release: the claim (acquire) that reads DELIVERED
 * must see the record's fields; other states are read under the lock. */
static inline void rec_set(struct poll_rec *r, unsigned state)
{
	aioreap_rec_armed += (state == REC_ARMED) - (rec_state(r) == REC_ARMED);
	atomic_store_explicit(&r->tag, (uint64_t)r->gen << 32 | state,
			      memory_order_release);
}

/* Under the lock: move r unless a reaper claimed it first.  Relaxed: it
 * only picks the winner; the lock orders the rest. */
static inline int rec_move(struct poll_rec *r, unsigned from, unsigned to)
{
	uint64_t want = (uint64_t)r->gen << 32 | from;

	if (!atomic_compare_exchange_strong_explicit(
		    &r->tag, &want, (uint64_t)r->gen << 32 | to,
		    memory_order_relaxed, memory_order_relaxed))
		return 0;
	aioreap_rec_armed += (to == REC_ARMED) - (from == REC_ARMED);
	return 1;
}

/* The store: under the lock unless said.  The record a token names: at
 * whatever its state (no lock), by_token only while it is that poll. */
uint64_t aioreap_rec_token(const struct poll_rec *r);	/* no lock */
struct poll_rec *aioreap_rec_at(uint64_t token);
struct poll_rec *aioreap_rec_by_token(uint64_t token);
/* A FREE record of a new generation (or NULL); hash it once user is set. */
struct poll_rec *aioreap_rec_alloc(void);
void aioreap_rec_hash_insert(struct poll_rec *r);
/* The head of iocb's hash chain (follow hnext). */
struct poll_rec *aioreap_rec_hash_first(const struct iocb *cb);
/* An async record's duplicates closed (none left open after). */
static inline void aioreap_rec_close_dups(struct poll_rec *r)
{
	if (r->kfd >= 0)
		sys_close(r->kfd);
	if (r->kresfd >= 0)
		sys_close(r->kresfd);
	r->kfd = r->kresfd = -1;
}
/* Back to the free list; the descriptors are the caller's business. */
void aioreap_rec_release(struct poll_rec *r);
/* Records not free, and each in turn (*pos from 0; NULL at the end;
 * the one returned may be released before the next call). */
unsigned long aioreap_rec_live(void);
struct poll_rec *aioreap_rec_each(unsigned *pos);
/* Claimed records: push (no lock), take all, or forget (fork child). */
void aioreap_rec_recycle_push(struct poll_rec *r);
struct poll_rec *aioreap_rec_recycle_take(void);
void aioreap_rec_recycle_forget(void);

#endif /* LIBAIO_POLL_REC_H */
