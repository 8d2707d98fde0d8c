/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user-space ring reaper: takes completions straight from the ring the
 * kernel maps at the context address, exactly as io_getevents would, with
 * no system call.  Inline, because io_getevents' fast path is made of
 * its steps (fuzz/fuzz-ring.c includes this header to test them).
 *
 * The ring is ordinary application memory, so nothing read from it is
 * trusted to stay in range: head and tail are checked against the size
 * cached at io_setup (which the ring's nr word must still match) on every
 * reap, and a ring that fails the checks is left to the kernel (which
 * reduces both indexes modulo its own size).  Only head is ever written,
 * only forward from where the library left it, never past the tail read,
 * and only if it still holds the value the copy started at.
 *
 * A reap is three steps, so that a caller can look before it takes:
 * ring_peek (checks, and how many events are there), a copy, and
 * ring_publish (the new head).  The caller holds the entry's exclusive
 * reap lock throughout.  The copy writes the caller's events array, so
 * each page of it that a copy writes must have been written before the
 * lock was taken (event_array.h): a fault inside would keep the lock held.
 */
#ifndef LIBAIO_REAP_H
#define LIBAIO_REAP_H

#include <stdbool.h>
#include <string.h>

#include "compiler.h"
#include "registry.h"
#include "ring.h"

struct ring_pos {
	struct aio_ring *r;
	size_t nr;		/* slots, as cached at io_setup */
	size_t head;		/* first event to take */
	size_t n;		/* how many to take */
};

/* What a look at the ring found. */
enum ring_look {
	RING_READY,	/* p is filled in: take p->n events from p->head */
	RING_UNTRUSTED,	/* header or indexes unusable: let the kernel answer */
	RING_FOREIGN,	/* head is not where the library left it: a reap the
			   library did not make moved it (registry.h) */
};

/* Fills p with where a reap of at most max would start and how many
 * events it would take (p->n).  r is the entry's key, which the caller
 * checked after taking the lock (not loaded again here). */
static inline __attribute__((always_inline)) enum ring_look
ring_peek(struct ctx_entry *e, struct aio_ring *r, long max,
	  struct ring_pos *p)
{
	size_t nr = e->nr, head, tail, avail;

	/* The ring's own nr must agree with our copy: an entry left behind by
	 * a ring moved with mremap may now name another ring of another size
	 * (a context created behind the library's back), and a scribbled nr
	 * means a scribbled ring.  Either way the kernel answers instead. */
	if (unlikely(r->magic != AIO_RING_MAGIC || r->incompat_features != 0 ||
		     r->nr != nr))
		return RING_UNTRUSTED;
	head = ring_load_head(r);
	tail = ring_load_tail(r);
	if (unlikely(head >= nr || tail >= nr))
		return RING_UNTRUSTED;
	/* Relaxed: written under the lock we hold, or by kernel reapers
	 * whose leaving the count our acquire of the lock follows. */
	if (unlikely(head != atomic_load_explicit(&e->head_seen,
						  memory_order_relaxed)))
		return RING_FOREIGN;
	avail = tail >= head ? tail - head : nr - head + tail;
	p->r = r;
	p->nr = nr;
	p->head = head;
	p->n = max <= 0 ? 0 : (size_t)max < avail ? (size_t)max : avail;
	return RING_READY;
}

/* At most two runs: up to the end of the ring, then from slot 0. */
static inline void ring_copy(const struct ring_pos *p, struct io_event *ev)
{
	const struct io_event *src = &p->r->events[p->head];
	size_t first = p->nr - p->head;

	if (p->n == 1) {
		ev[0] = *src;
		return;
	}
	if (first > p->n)
		first = p->n;
	memcpy(ev, src, first * sizeof(*ev));
	if (p->n > first)
		memcpy(ev + first, &p->r->events[0],
		       (p->n - first) * sizeof(*ev));
}

/* Hand the taken slots back to the kernel: false when head moved under
 * the copy (a reap the library did not make), and then nothing is
 * handed back and the copy must be dropped. */
static inline bool ring_publish(struct ctx_entry *e, const struct ring_pos *p)
{
	size_t head = p->head + p->n;

	if (head >= p->nr)
		head -= p->nr;
	if (unlikely(!ring_publish_head(p->r, (unsigned)p->head,
					(unsigned)head)))
		return false;
	/* Relaxed: the lock's release publishes it to the next holder. */
	atomic_store_explicit(&e->head_seen, (unsigned)head,
			      memory_order_relaxed);
	return true;
}

/* Caller holds the entry's exclusive reap lock, and every byte of
 * ev[0..max) that a copy may write is known to be writable.  On
 * RING_READY, *got events were copied into ev (0 when there were none);
 * otherwise *got is 0 and nothing was taken. */
static inline enum ring_look ring_reap(struct ctx_entry *e,
				       struct io_event *ev, long max,
				       long *got)
{
	struct ring_pos p;
	enum ring_look look = ring_peek(
		e,
		(struct aio_ring *)atomic_load_explicit(&e->key,
							memory_order_relaxed),
		max, &p);

	*got = 0;
	if (look != RING_READY)
		return look;
	if (p.n) {
		ring_copy(&p, ev);
		if (!ring_publish(e, &p))
			return RING_FOREIGN;
	}
	*got = (long)p.n;
	return RING_READY;
}

#endif /* LIBAIO_REAP_H */
