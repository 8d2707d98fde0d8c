/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The poll emulation's side of io_destroy and io_setup: the contexts
 * being destroyed, the records of one that is gone (see poll_emul.c). */
#include "config.h"

#include "poll_emul.h"
#include "poll_helper.h"
#include "poll_rec.h"

_Atomic int aioreap_poll_emul_used;	/* the used flag (poll_emul.h) */

/* Under the lock: free every poll record of ctx, which is gone or
 * going (async submission's are async_worker.c's to forget). */
static void forget_locked(io_context_t ctx)
{
	struct poll_rec *r;
	unsigned pos = 0;

	if (!aioreap_rec_live())
		return;
	aioreap_helper_check();
	aioreap_helper_unqueue(ctx, 0);	/* freed below */
	while ((r = aioreap_rec_each(&pos))) {
		unsigned st = rec_state(r);

		if (r->ctx != ctx || st == REC_CLAIMED || r->async)
			continue;
		/* Unless a reaper claimed it: then it is the reaper's. */
		if (st == REC_DELIVERED &&
		    !rec_move(r, REC_DELIVERED, REC_FIRED))
			continue;
		aioreap_rec_free(r);
	}
}

/*
 * io_destroy publishes its context here before the system call, polls
 * emulated or not (one compare-and-swap): a destroy may begin before the
 * first poll.  The value is the page-aligned address with bits of the
 * destroyer's frame below it, so an old destroyer never clears a slot a
 * new one took for the same address.  Overflow goes on a locked list.
 */
#define DYING_SLOTS	16
static _Atomic uintptr_t dying[DYING_SLOTS];
static struct pe_destroy *dying_list;	/* under the lock */

#define CTX_ALIGN_MASK	((uintptr_t)0xfff)

static uintptr_t dying_value(const struct pe_destroy *d)
{
	return (uintptr_t)d->ctx | ((((uintptr_t)d >> 4) & CTX_ALIGN_MASK) | 1);
}

/* Sequentially consistent: see destroy_begin. */
int aioreap_poll_ctx_dying(io_context_t ctx)
{
	struct pe_destroy *d;
	unsigned i;

	for (i = 0; i < DYING_SLOTS; i++)
		if ((atomic_load(&dying[i]) & ~CTX_ALIGN_MASK) ==
		    (uintptr_t)ctx)
			return 1;
	for (d = dying_list; d; d = d->next)
		if (d->ctx == ctx)
			return 1;
	return 0;
}

/* Take d off the list, or with d NULL every destroyer of ctx. */
static void dying_unlist(const struct pe_destroy *d, io_context_t ctx)
{
	struct pe_destroy **p = &dying_list;

	while (*p)
		if (d ? *p == d : (*p)->ctx == ctx)
			*p = (*p)->next;
		else
			p = &(*p)->next;
}

void aioreap_poll_emul_destroy_begin(io_context_t ctx, struct pe_destroy *d)
{
	sigset_t old;
	unsigned i;

	d->ctx = ctx;
	d->slot = PE_UNPUBLISHED;
	/* Not a context address: the kernel refuses it, no poll has it. */
	if (((uintptr_t)ctx & CTX_ALIGN_MASK) || !ctx)
		return;
	d->slot = PE_LISTED;	/* unless a slot is free */
	/* Publish, then read the used flag; emulate_one stores it, then
	 * reads the slots (all sequentially consistent): if we read 0, it
	 * sees our slot and refuses; else we cancel what it added. */
	for (i = 0; i < DYING_SLOTS; i++) {
		uintptr_t free_slot = 0;

		if (atomic_compare_exchange_strong(&dying[i], &free_slot,
						   dying_value(d))) {
			d->slot = (int)i;
			break;
		}
	}
	if (d->slot >= 0 && !atomic_load(&aioreap_poll_emul_used))
		return;
	aioreap_pe_enter(&old);
	if (d->slot == PE_LISTED) {	/* no free slot: under the lock */
		d->next = dying_list;
		dying_list = d;
	}
	if (atomic_load(&aioreap_poll_emul_used))
		forget_locked(ctx);
	aioreap_pe_leave(&old);
}

void aioreap_poll_emul_destroy_end(struct pe_destroy *d)
{
	sigset_t old;

	if (d->slot >= 0) {
		uintptr_t mine = dying_value(d);

		/* Relaxed: clearing publishes nothing; fails harmlessly
		 * if io_setup cleared it. */
		atomic_compare_exchange_strong_explicit(
			&dying[d->slot], &mine, 0, memory_order_relaxed,
			memory_order_relaxed);
		return;
	}
	if (d->slot == PE_UNPUBLISHED)
		return;
	aioreap_pe_enter(&old);
	dying_unlist(d, NULL);	/* a no-op if io_setup took it off */
	aioreap_pe_leave(&old);
}

/* The kernel gave out ctx: an older context there is gone, so its dying
 * marks (which would refuse the new one's polls) and records go too. */
void aioreap_poll_emul_setup_done(io_context_t ctx)
{
	sigset_t old;
	unsigned i;

	for (i = 0; i < DYING_SLOTS; i++) {
		uintptr_t v = atomic_load_explicit(&dying[i],
						   memory_order_relaxed);

		/* Relaxed: the kernel's io_setup ordered the destroy.  ctx
		 * is not 0, so a free slot never matches. */
		if ((v & ~CTX_ALIGN_MASK) == (uintptr_t)ctx)
			atomic_compare_exchange_strong_explicit(
				&dying[i], &v, 0, memory_order_relaxed,
				memory_order_relaxed);
	}
	if (!atomic_load_explicit(&aioreap_poll_emul_used,
				  memory_order_relaxed))
		return;
	aioreap_pe_enter(&old);
	dying_unlist(NULL, ctx);
	forget_locked(ctx);
	aioreap_pe_leave(&old);
}
