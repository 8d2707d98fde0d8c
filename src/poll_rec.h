/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to the poll emulation (poll_emul.c, poll_helper.c, poll_rec.c):
 * one record per emulated poll iocb, and the store that holds them.
 * The design is explained at the top of poll_emul.c.
 */
#ifndef LIBAIO_POLL_REC_H
#define LIBAIO_POLL_REC_H

#include <stdatomic.h>
#include <stdint.h>

#include "compiler.h"
#include "fd_id.h"
#include "kernel_abi.h"
#include "libaio.h"

/*
 * A record's life: FREE -> ARMED -> FIRED -> DELIVERED -> CLAIMED -> FREE.
 * Every change is made under the emulation's lock (poll_helper.h) but
 * one: a reaper, holding no lock, moves DELIVERED to CLAIMED with a
 * compare-and-swap that includes the generation, and hands the record
 * back through the recycle list.
 */
enum {
	REC_FREE = 0,
	REC_ARMED,	/* in the epoll set, nobody has completed it */
	REC_FIRED,	/* completed (ready or cancelled); doorbell not rung */
	REC_DELIVERED,	/* doorbell event in the ring, awaiting the reaper */
	REC_CLAIMED,	/* translated by a reaper; on its way to recycling */
};

struct poll_rec {
	/* Generation (high 32 bits) and state (low 32 bits) in one word, so
	 * a lock-free claim can never take a record that was reused. */
	_Atomic uint64_t tag;
	uint32_t idx;		/* position in the record store */
	uint32_t gen;		/* bumped at each reuse: stale tokens miss */
	int fd;			/* our duplicate of the polled fd, or -1 */
	int resfd;		/* our duplicate of the RESFD eventfd, or -1 */
	struct fd_id fd_id, resfd_id;	/* what fd and resfd named */
	unsigned events;	/* the POLL* bits asked for */
	unsigned long res;	/* the mask the completion reports */
	io_context_t ctx;
	struct iocb *user;	/* the application's iocb */
	uint64_t user_data;	/* its aio_data as submitted */
	struct poll_rec *hnext;	/* chain in the by-iocb hash */
	struct poll_rec *qnext;	/* backlog or free list */
	struct poll_rec *rnext;	/* recycle list */
};

static inline unsigned rec_state(struct poll_rec *r)
{
	/* Relaxed: callers hold the lock, which orders every locked
	 * writer; the one lock-free writer only moves DELIVERED to
	 * CLAIMED, which locked code treats as "not mine" whichever value
	 * it reads. */
	return (uint32_t)atomic_load_explicit(&r->tag, memory_order_relaxed);
}

/* Under the lock.  Release: a DELIVERED record's fields must be visible
 * to the reaper whose claim (acquire) reads this value; for the other
 * states nobody reads without the lock, and release costs nothing on
 * stores. */
static inline void rec_set(struct poll_rec *r, unsigned state)
{
	atomic_store_explicit(&r->tag, (uint64_t)r->gen << 32 | state,
			      memory_order_release);
}

/* Under the lock: move r from one state to another unless a reaper
 * claimed it first.  Relaxed: only decides the winner; the lock orders
 * the rest. */
static inline int rec_move(struct poll_rec *r, unsigned from, unsigned to)
{
	uint64_t want = (uint64_t)r->gen << 32 | from;

	return atomic_compare_exchange_strong_explicit(
		&r->tag, &want, (uint64_t)r->gen << 32 | to,
		memory_order_relaxed, memory_order_relaxed);
}

/* The record store (poll_rec.c): under the lock unless said. */
uint64_t aioreap_rec_token(const struct poll_rec *r);	/* no lock */
/* The record a token names, whatever its state, or NULL (no lock). */
struct poll_rec *aioreap_rec_at(uint64_t token);
/* The record a token names if it is still that poll, else NULL. */
struct poll_rec *aioreap_rec_by_token(uint64_t token);
/* A record of a new generation, still FREE, or NULL when out of memory;
 * insert it in the hash once its iocb is set. */
struct poll_rec *aioreap_rec_alloc(void);
void aioreap_rec_hash_insert(struct poll_rec *r);
/* The first record in iocb's hash chain (follow hnext). */
struct poll_rec *aioreap_rec_hash_first(const struct iocb *cb);
/* Back to the free list (its descriptors are the caller's business). */
void aioreap_rec_release(struct poll_rec *r);
/* Records not free, and each of them in turn: start *pos at 0; NULL at
 * the end.  The one returned may be released before the next call. */
unsigned long aioreap_rec_live(void);
struct poll_rec *aioreap_rec_each(unsigned *pos);
/* Records reapers claimed: push (any thread, no lock), take them all, or
 * forget them (a fork child, whose claimers are not there). */
void aioreap_rec_recycle_push(struct poll_rec *r);
struct poll_rec *aioreap_rec_recycle_take(void);
void aioreap_rec_recycle_forget(void);

#endif /* LIBAIO_POLL_REC_H */
