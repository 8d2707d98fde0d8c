/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user-space ring reaper: takes completions straight from the ring the
 * kernel maps at the context address, exactly as io_getevents would, with
 * no system call.  Inline, because it is the whole of io_getevents' fast
 * path; reap.c keeps an out-of-line copy for the fuzzer.
 *
 * The ring is ordinary application memory, so nothing read from it is
 * trusted to stay in range: head and tail are checked against the size
 * cached at io_setup (which the ring's nr word must still match) on every
 * reap, and a ring that fails the checks is
 * left to the kernel (which reduces both indexes modulo its own size).
 * Only head is ever written, only forward, and never past the tail read.
 */
#ifndef LIBAIO_REAP_H
#define LIBAIO_REAP_H

#include <string.h>

#include "internal.h"
#include "ring.h"

/* Caller holds the entry's exclusive reap lock.  Returns the number of
 * events copied into ev (at most max), or -1 when the ring's header or
 * indexes cannot be trusted and the kernel must answer instead. */
static inline long ring_reap(struct ctx_entry *e, struct io_event *ev,
			     long max)
{
	struct aio_ring *r = (struct aio_ring *)atomic_load_explicit(
		&e->key, memory_order_relaxed);
	size_t nr = e->nr, head, tail, avail, n, first;

	/* The ring's own nr must agree with our copy: an entry left behind by
	 * a ring moved with mremap may now name another ring of another size
	 * (a context created behind the library's back), and a scribbled nr
	 * means a scribbled ring.  Either way the kernel answers instead. */
	if (unlikely(r->magic != AIO_RING_MAGIC || r->incompat_features != 0 ||
		     r->nr != nr))
		return -1;
	head = ring_load_head(r);
	tail = ring_load_tail(r);
	if (unlikely(head >= nr || tail >= nr))
		return -1;
	if (head == tail || max <= 0)
		return 0;
	avail = tail > head ? tail - head : nr - head + tail;
	n = (size_t)max < avail ? (size_t)max : avail;

	/* At most two runs: up to the end of the ring, then from slot 0. */
	first = nr - head;
	if (first > n)
		first = n;
	if (n == 1) {
		ev[0] = r->events[head];
	} else {
		memcpy(ev, &r->events[head], first * sizeof(*ev));
		if (n > first)
			memcpy(ev + first, &r->events[0], (n - first) * sizeof(*ev));
	}

	head += n;
	if (head >= nr)
		head -= nr;
	ring_store_head(r, (unsigned)head);
	return (long)n;
}

#endif /* LIBAIO_REAP_H */
