/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Context registry: an open-addressed table keyed by context address.
 *
 * Lookups take no lock (they run on every io_getevents); additions and
 * removals are rare and take a mutex.  Slots are never freed, only marked
 * as tombstones, so a reader holding a slot pointer never touches freed
 * memory.  A context that does not fit, or whose ring the library does not
 * recognise, is simply not registered: it works through the kernel.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#ifdef HAVE_VALGRIND_HINTS
# include <valgrind/memcheck.h>
#endif

#include "features.h"
#include "registry.h"
#include "ring.h"

struct ctx_entry registry_table[REGISTRY_SIZE];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

struct ctx_entry *registry_lookup(io_context_t ctx)
{
	uintptr_t key = (uintptr_t)ctx;
	unsigned i, s = registry_slot(key);

	/* NULL and 1 are the marker keys of empty and freed slots, never a
	 * context: without this, io_getevents(NULL, ...) "found" an empty
	 * slot and reaped a ring at address 0. */
	if (key == KEY_EMPTY || key == KEY_TOMBSTONE)
		return NULL;
	/* Relaxed: a hit is confirmed again under the reap lock's acquire. */
	for (i = 0; i < REGISTRY_MAX_PROBE; i++) {
		struct ctx_entry *e = &registry_table[(s + i) & (REGISTRY_SIZE - 1)];
		uintptr_t k = atomic_load_explicit(&e->key, memory_order_relaxed);

		if (k == key)
			return e;
		if (k == KEY_EMPTY)
			return NULL;
	}
	return NULL;
}

static void wait_a_moment(void)
{
	sched_yield();
}

/*
 * An entry already keyed by a brand-new ring's address is stale: its ring
 * was moved away with mremap (the kernel then knows the context by its new
 * address, which we never saw) and the address has been reused.  Its
 * cached nr belongs to the old ring, so refresh it under ST_DEAD, which
 * keeps user-space reapers out meanwhile.  Called with table_lock held.
 */
static int refresh_stale(uintptr_t key, unsigned nr)
{
	struct ctx_entry *e = registry_lookup((io_context_t)key);
	unsigned s;

	if (!e)
		return 0;
	/*
	 * Never wait here: the caller holds table_lock, and the entry may
	 * belong to an io_destroy that needs that lock to finish (the kernel
	 * hands the freed address to our io_setup while it still waits for
	 * the old context's requests).  Report busy; the caller retries.
	 */
	s = atomic_load_explicit(&e->state, memory_order_relaxed);
	if ((s & (ST_EXCL | ST_DEAD)) ||
	    !atomic_compare_exchange_strong_explicit(
		    &e->state, &s, s | ST_DEAD, memory_order_acquire,
		    memory_order_relaxed))
		return -1;
	e->nr = nr;
	/* Release: the next reaper to lock the entry sees the new nr. */
	atomic_fetch_and_explicit(&e->state, ~ST_DEAD, memory_order_release);
	return 1;
}

/*
 * The kernel wrote the header just now; if it is one we understand, keep
 * a private copy of nr so that a later stray write to the ring's own nr
 * word cannot make the reaper index outside the mapping.
 */
void registry_add(io_context_t ctx)
{
	const struct aio_ring *r = (const struct aio_ring *)ctx;
	uintptr_t key = (uintptr_t)ctx;
	unsigned i, s = registry_slot(key), nr;

	if (features_disabled() & DISABLE_RING)
		return;
	if (!ring_header_ok(r) || r->nr == 0 || r->nr > (1u << 24))
		return;
	nr = r->nr;
#ifdef HAVE_VALGRIND_HINTS
	/*
	 * Valgrind sizes the ring from io_setup's argument, not from the
	 * kernel's nr (at least twice as many slots, rounded up to pages):
	 * it would call reads of the later slots invalid.  The kernel
	 * mapped all of them, and writes every slot before tail passes it.
	 */
	if (RUNNING_ON_VALGRIND)
		VALGRIND_MAKE_MEM_DEFINED(r, AIO_RING_HEADER_LEN + (size_t)nr * 32);
#endif

	for (;;) {
		int stale;

		pthread_mutex_lock(&table_lock);
		stale = refresh_stale(key, nr);
		if (stale == 0)
			break;		/* insert below, still locked */
		pthread_mutex_unlock(&table_lock);
		if (stale > 0)
			return;
		wait_a_moment();
	}
	for (i = 0; i < REGISTRY_MAX_PROBE; i++) {
		struct ctx_entry *e = &registry_table[(s + i) & (REGISTRY_SIZE - 1)];
		uintptr_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
		unsigned expected = 0;

		if (k != KEY_EMPTY && k != KEY_TOMBSTONE)
			continue;
		/* Claim it; fails while a stale reaper still passes through. */
		if (!atomic_compare_exchange_strong_explicit(
			    &e->state, &expected, ST_DEAD, memory_order_acquire,
			    memory_order_relaxed))
			continue;
		e->nr = nr;
		atomic_store_explicit(&e->key, key, memory_order_relaxed);
		/* Release: a reaper that sees ST_DEAD clear also sees key and
		 * nr.  Clear only the flag: a thread still holding an old
		 * pointer to this slot may have joined the kernel-reap count. */
		atomic_fetch_and_explicit(&e->state, ~ST_DEAD, memory_order_release);
		break;
	}
	pthread_mutex_unlock(&table_lock);
}

/*
 * Slow path of reap_excl_try.  Another user-space reaper holds the ring
 * only for the length of a copy, so wait for it; kernel reapers in flight
 * or a dying context send the caller to the kernel instead.
 */
int reap_excl_contended(struct ctx_entry *e, uintptr_t key)
{
	for (;;) {
		unsigned s = atomic_load_explicit(&e->state, memory_order_relaxed);

		if (s & (ST_DEAD | ST_COUNT))
			return 0;
		if (s & ST_EXCL) {
			wait_a_moment();
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(
			    &e->state, &s, ST_EXCL, memory_order_acquire,
			    memory_order_relaxed)) {
			if (atomic_load_explicit(&e->key, memory_order_relaxed) == key)
				return 1;
			reap_excl_release(e);
			return 0;
		}
	}
}

/* Acquire: pairs with the release of the last user-space reaper, so the
 * head it stored is in memory before the kernel reads it. */
void reap_shared_enter(struct ctx_entry *e)
{
	for (;;) {
		unsigned s = atomic_load_explicit(&e->state, memory_order_relaxed);

		if (s & ST_EXCL) {
			wait_a_moment();
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(
			    &e->state, &s, s + 1, memory_order_acquire,
			    memory_order_relaxed))
			return;
	}
}

struct ctx_entry *registry_begin_destroy(io_context_t ctx)
{
	struct ctx_entry *e = registry_lookup(ctx);

	if (!e)
		return NULL;
	for (;;) {
		unsigned s = atomic_load_explicit(&e->state, memory_order_relaxed);

		if (atomic_load_explicit(&e->key, memory_order_relaxed) !=
			    (uintptr_t)ctx ||
		    (s & ST_DEAD))
			return NULL;	/* freed meanwhile, or another destroyer */
		if (s & ST_EXCL) {
			wait_a_moment();
			continue;
		}
		/* Acquire: the last reaper's ring accesses happen before ours. */
		if (atomic_compare_exchange_weak_explicit(
			    &e->state, &s, s | ST_DEAD, memory_order_acquire,
			    memory_order_relaxed))
			return e;
	}
}

void registry_end_destroy(struct ctx_entry *e, int destroyed)
{
	if (!e)
		return;
	if (!destroyed) {
		atomic_fetch_and_explicit(&e->state, ~ST_DEAD, memory_order_release);
		return;
	}
	/* The kernel has woken its sleepers; wait for them to leave. */
	while (atomic_load_explicit(&e->state, memory_order_acquire) & ST_COUNT)
		wait_a_moment();
	pthread_mutex_lock(&table_lock);
	atomic_store_explicit(&e->key, KEY_TOMBSTONE, memory_order_relaxed);
	/* Release: a stale reaper that locks the slot sees the tombstone.
	 * Clear only the flag, keeping the count of a late kernel reaper
	 * that joined after the wait above (its exit must find it). */
	atomic_fetch_and_explicit(&e->state, ~ST_DEAD, memory_order_release);
	pthread_mutex_unlock(&table_lock);
}

/*
 * A forked child shares the parent's ring pages but not its contexts: the
 * kernel answers -EINVAL for them, and a child that moved head would steal
 * the parent's completions.  Forget every context, so the child's calls go
 * to the kernel and never touch the ring.  Only the forking thread exists
 * in the child, so no lock is needed (and the mutex may be held by a
 * thread that did not survive the fork).
 */
static void registry_forget_all(void)
{
	memset((void *)registry_table, 0, sizeof(registry_table));
	pthread_mutex_init(&table_lock, NULL);
}

__attribute__((constructor)) static void registry_init(void)
{
	pthread_atfork(NULL, NULL, registry_forget_all);
}
