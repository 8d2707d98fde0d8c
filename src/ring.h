/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's completion ring, as user space sees it at the context
 * address, and every memory-ordering rule the reaper relies on.
 *
 * Layout (the kernel's, not in any uapi header): eight 32-bit words, then
 * nr 32-byte struct io_event slots.  The kernel writes tail (after the
 * event it publishes) and reads head to learn how many slots are free;
 * user space may advance head exactly as io_getevents would.
 */
#ifndef LIBAIO_RING_H
#define LIBAIO_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "libaio.h"

#define AIO_RING_MAGIC		0xa10a10a1u
#define AIO_RING_HEADER_LEN	32u
#define AIO_RING_COMPAT		1u

struct aio_ring {
	unsigned id;		/* the kernel's table index: never written */
	unsigned nr;		/* slots; cached at io_setup, then ignored */
	_Atomic unsigned head;	/* consumer index */
	_Atomic unsigned tail;	/* producer index (kernel only) */
	unsigned magic;
	unsigned compat_features;
	unsigned incompat_features;
	unsigned header_length;
	struct io_event events[];
};

_Static_assert(sizeof(struct aio_ring) == AIO_RING_HEADER_LEN, "ring header");
_Static_assert(sizeof(struct io_event) == 32, "io_event size");

/*
 * tail: acquire.  Pairs with the kernel's write barrier between storing an
 * event and storing the new tail, so the slots before tail are complete
 * when we copy them.
 */
static inline unsigned ring_load_tail(struct aio_ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire);
}

/*
 * head: relaxed.  Inside the library only the holder of the context's
 * exclusive reap lock writes head, and the lock's acquire already orders
 * this load after the previous holder's store.
 */
static inline unsigned ring_load_head(struct aio_ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_relaxed);
}

/*
 * head store: release.  The kernel may refill a slot as soon as it sees
 * head pass it; the release keeps our copies of those slots before the
 * store that hands them back.
 */
static inline void ring_store_head(struct aio_ring *r, unsigned head)
{
	atomic_store_explicit(&r->head, head, memory_order_release);
}

/* Header checks that need no cached state; nr is checked against the
 * copy taken at io_setup, since the word in the ring is writable. */
static inline int ring_header_ok(const struct aio_ring *r)
{
	return r->magic == AIO_RING_MAGIC && r->incompat_features == 0 &&
	       r->header_length == AIO_RING_HEADER_LEN;
}

#endif /* LIBAIO_RING_H */
