/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user-space ring reaper: takes completions straight from the ring the
 * kernel maps at the context address, exactly as io_getevents would, with
 * no system call.
 *
 * The ring is ordinary application memory, so nothing read from it is
 * trusted to stay in range: head and tail are checked against the size
 * cached at io_setup on every reap, and a ring that fails the checks is
 * left to the kernel (which reduces both indexes modulo its own size).
 * Only head is ever written, only forward, and never past the tail read.
 */
#include "config.h"

#include "internal.h"
#include "ring.h"

long ring_reap_locked(struct ctx_entry *e, struct io_event *ev, long max)
{
	struct aio_ring *r = (struct aio_ring *)atomic_load_explicit(
		&e->key, memory_order_relaxed);
	unsigned nr = e->nr, head, tail, avail, n, first, i;

	if (unlikely(r->magic != AIO_RING_MAGIC || r->incompat_features != 0))
		return -1;
	head = ring_load_head(r);
	tail = ring_load_tail(r);
	if (unlikely(head >= nr || tail >= nr))
		return -1;
	if (head == tail || max <= 0)
		return 0;
	avail = tail > head ? tail - head : nr - head + tail;
	n = (unsigned long)max < avail ? (unsigned)max : avail;

	first = nr - head;
	if (first > n)
		first = n;
	for (i = 0; i < first; i++)
		ev[i] = r->events[head + i];
	for (; i < n; i++)
		ev[i] = r->events[i - first];

	head += n;
	if (head >= nr)
		head -= nr;
	ring_store_head(r, head);
	return n;
}
