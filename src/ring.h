/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every memory-ordering rule the reaper relies on when it reads the
 * kernel's completion ring (its layout is in kernel_abi.h).  The kernel
 * writes tail (after the event it publishes) and reads head to learn how
 * many slots are free; user space may advance head exactly as
 * io_getevents would.
 */
#ifndef LIBAIO_RING_H
#define LIBAIO_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "kernel_abi.h"

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
 * this load after the previous holder's store.  A store by a reap outside
 * the library is not ordered by anything: comparing with where the
 * library left head, and reading it again before publishing, is what
 * notices it (registry.h).
 */
static inline unsigned ring_load_head(struct aio_ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_relaxed);
}

/*
 * Publishing head: only if head still holds the value the copy started
 * at, read again just before the store.  A reap outside the library that
 * stored head since our first read is seen, and nothing is written.  One
 * that stores between this read and our store is not: a window of one
 * instruction, against the whole copy that the re-read closes (a
 * compare-and-swap would close that instruction too, for a locked
 * instruction on every reap: 6 ns at batch 1, more than the rest of the
 * reap).  The store is a release: the kernel may refill a slot as soon as
 * it sees head pass it, and our copies of those slots must come first.
 */
static inline bool ring_publish_head(struct aio_ring *r, unsigned from,
				     unsigned to)
{
	if (atomic_load_explicit(&r->head, memory_order_relaxed) != from)
		return false;
	atomic_store_explicit(&r->head, to, memory_order_release);
	return true;
}

/* Header checks that need no cached state; nr is checked against the
 * copy taken at io_setup, since the word in the ring is writable. */
static inline int ring_header_ok(const struct aio_ring *r)
{
	return r->magic == AIO_RING_MAGIC && r->incompat_features == 0 &&
	       r->header_length == AIO_RING_HEADER_LEN;
}

#endif /* LIBAIO_RING_H */
