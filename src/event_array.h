/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The caller's events array, as seen by a user-space reap.
 *
 * The kernel copies events out with a fault-safe copy: an array it cannot
 * write gets -EFAULT and every event stays in the ring.  User space has
 * no such copy, and a fault inside the reap lock would leave the lock
 * held for good if the program survived the SIGSEGV (by siglongjmp out
 * of its handler): every later reap and io_destroy of the context would
 * wait for ever.  So within one call, no page of the array is written
 * under the lock before it has been written outside it: a bad array then
 * faults with nothing held and nothing taken from the ring.
 *
 * Writing outside the lock means storing a byte's own value back: the
 * array's first byte before the lock is taken (every call that may take
 * an event would write it), and, when the events found run past that
 * byte's page, the first byte of each further page, after letting go and
 * before looking again for at most that many events.  Only bytes
 * of slots a reap may fill are written, so an array shorter than nr is
 * safe as long as the ring never holds more.  Pages are counted in 4 KiB
 * steps, the smallest page Linux has, so the proof holds on any page
 * size.
 */
#ifndef LIBAIO_EVENT_ARRAY_H
#define LIBAIO_EVENT_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "libaio.h"

#define EVENT_ARRAY_STEP ((uintptr_t)4096)

static inline void touch_byte(uintptr_t at)
{
	volatile unsigned char *p = (volatile unsigned char *)at;

	*p = *p;
}

/* Outside the lock, before any reap that may fill ev[0]: its first
 * byte, one load and one store (the other end of a slot that straddles
 * two pages cost every reap as much again: such an array takes the
 * proving path instead, see events_fit_first). */
static inline __attribute__((always_inline)) void
events_touch_first(struct io_event *ev)
{
	touch_byte((uintptr_t)ev);
}

/* Do n events end within the page events_touch_first wrote?  Not even
 * one does when the first slot runs into the next page. */
static inline __attribute__((always_inline)) bool
events_fit_first(const struct io_event *ev, size_t n)
{
	return (uintptr_t)ev + n * sizeof(*ev) <=
	       ((uintptr_t)ev | (EVENT_ARRAY_STEP - 1)) + 1;
}

/* Outside the lock: write each page of the first n events once. */
static inline void events_prove(struct io_event *ev, size_t n)
{
	uintptr_t end = (uintptr_t)ev + n * sizeof(*ev), at;

	touch_byte((uintptr_t)ev);
	for (at = ((uintptr_t)ev | (EVENT_ARRAY_STEP - 1)) + 1; at < end;
	     at += EVENT_ARRAY_STEP)
		touch_byte(at);
}

#endif /* LIBAIO_EVENT_ARRAY_H */
