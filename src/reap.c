/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Out-of-line copy of the ring reaper (reap.h), for the fuzzer. */
#include "config.h"

#include "reap.h"

long aioreap_ring_reap_locked(struct ctx_entry *e, struct io_event *ev, long max)
{
	return ring_reap(e, ev, max);
}
