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
#include <string.h>
#ifdef HAVE_VALGRIND_HINTS
# include <valgrind/memcheck.h>
#endif

#include "features.h"
#include "registry.h"
#include "ring.h"
#include "syscall.h"

struct ctx_entry registry_table[REGISTRY_SIZE];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set, under table_lock, before the first entry is written; read only
 * in a fork child, where the forking thread is the only one left. */
static int table_used;

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

/*
 * Wait while a user-space reaper holds the ring: it is copying at most nr
 * events, with no system call.  Spin briefly (the usual copy is shorter
 * than a system call), then sleep on the state word in short steps, so
 * that the holder gets the CPU even when it runs at a lower real-time
 * priority on the same CPU (where a sched_yield loop would livelock).
 * The holder's release is a plain store that wakes nobody, so each sleep
 * is bounded; the futex returns at once if the word has already changed.
 */
static void wait_for_copy(struct ctx_entry *e, unsigned seen)
{
	static const long step[2] = { 0, 50000 };	/* 50 us */
	int i;

	for (i = 0; i < 100; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		if (atomic_load_explicit(&e->state, memory_order_relaxed) != seen)
			return;
	}
	sys_futex_wait_for((int *)&e->state, (int)seen, step);
}

/*
 * Called with table_lock held, for a ring address the kernel has just
 * handed out: an entry already keyed by it is not a live context of ours.
 * Either its ring was moved away with mremap (the kernel knows that
 * context by its new address, which we never saw) or it is being
 * destroyed, possibly with kernel reapers still counted on it.  Never
 * wait here.  A quiet stale entry is refreshed in place; a busy or dying
 * one is left alone and the new context stays unregistered (the kernel
 * serves it).  Returns 1 when an entry with the key exists, 0 when the
 * caller must add one.
 */
static int refresh_stale(uintptr_t key, unsigned nr)
{
	struct ctx_entry *e = registry_lookup((io_context_t)key);
	unsigned quiet = 0;

	if (!e)
		return 0;
	/* Acquire: the last reaper's ring accesses happen before ours. */
	if (atomic_compare_exchange_strong_explicit(&e->state, &quiet,
						    ST_FILLING,
						    memory_order_acquire,
						    memory_order_relaxed)) {
		e->nr = nr;
		/* Release: the next reaper to lock the entry sees the new
		 * nr. */
		atomic_fetch_and_explicit(&e->state, ~ST_FILLING,
					  memory_order_release);
	}
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

	pthread_mutex_lock(&table_lock);
	table_used = 1;
	if (refresh_stale(key, nr)) {
		pthread_mutex_unlock(&table_lock);
		return;
	}
	for (i = 0; i < REGISTRY_MAX_PROBE; i++) {
		struct ctx_entry *e = &registry_table[(s + i) & (REGISTRY_SIZE - 1)];
		uintptr_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
		unsigned expected = 0;

		if (k != KEY_EMPTY && k != KEY_TOMBSTONE)
			continue;
		/* Claim it; fails while a stale thread still counts on it. */
		if (!atomic_compare_exchange_strong_explicit(
			    &e->state, &expected, ST_FILLING,
			    memory_order_acquire, memory_order_relaxed))
			continue;
		e->nr = nr;
		atomic_store_explicit(&e->key, key, memory_order_relaxed);
		/* Release: a reaper that sees ST_FILLING clear also sees key
		 * and nr. */
		atomic_fetch_and_explicit(&e->state, ~ST_FILLING,
					  memory_order_release);
		break;
	}
	pthread_mutex_unlock(&table_lock);
}

/*
 * Slow path of reap_excl_try.  Another user-space reaper holds the ring
 * only for the length of a copy, so wait for it; kernel reapers in flight,
 * a dying context or a slot being filled send the caller to the kernel.
 */
int reap_excl_contended(struct ctx_entry *e, uintptr_t key)
{
	for (;;) {
		unsigned s = atomic_load_explicit(&e->state, memory_order_relaxed);

		if (s & (ST_DEAD | ST_FILLING | ST_COUNT))
			return 0;
		if (s & ST_EXCL) {
			wait_for_copy(e, s);
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

/*
 * The entry is dead, destroyed and counted on by nobody: make the slot
 * free.  Several threads may try at once (io_destroy and kernel reapers
 * that saw the count reach zero); only the one whose compare-and-swap
 * finds the state exactly DEAD|DESTROYED does it.  If a thread joined
 * the count meanwhile, it retires the entry when it leaves.
 */
static void retire(struct ctx_entry *e)
{
	unsigned s = ST_DEAD | ST_DESTROYED;

	/* Acquire: every counted reaper's exit happens before the reuse. */
	if (!atomic_compare_exchange_strong_explicit(&e->state, &s, ST_FILLING,
						     memory_order_acquire,
						     memory_order_relaxed))
		return;
	atomic_store_explicit(&e->key, KEY_TOMBSTONE, memory_order_relaxed);
	/* Release: a stale thread that finds the slot free sees the
	 * tombstone, and the slot is reusable only after it. */
	atomic_fetch_and_explicit(&e->state, ~ST_FILLING, memory_order_release);
}

/*
 * Acquire: pairs with the release of the last user-space reaper, so the
 * head it stored is in memory before the kernel reads it.  The count is
 * joined even on a dying entry: while anyone counts on it, it keeps its
 * key, and a new context at the same address stays unregistered (see the
 * top of registry.h).  A slot being refilled, or one that now holds
 * another key, is not ctx's: look ctx up again.
 */
struct ctx_entry *reap_shared_enter(struct ctx_entry *e, uintptr_t key)
{
	int lookups = 0;

	while (e) {
		unsigned s = atomic_load_explicit(&e->state, memory_order_relaxed);

		if (s & ST_EXCL) {
			wait_for_copy(e, s);
			continue;
		}
		if (!(s & ST_FILLING)) {
			if (!atomic_compare_exchange_weak_explicit(
				    &e->state, &s, s + 1, memory_order_acquire,
				    memory_order_relaxed))
				continue;
			if (atomic_load_explicit(&e->key, memory_order_relaxed) ==
			    key)
				return e;
			reap_shared_exit(e);
		}
		if (++lookups > 4)
			break;
		e = registry_lookup((io_context_t)key);
	}
	/* No entry holds ctx (or it kept changing under us): the kernel
	 * answers alone, as for a context the library never saw. */
	return NULL;
}

/* Release: the kernel reap is finished before the count says so. */
void reap_shared_exit(struct ctx_entry *e)
{
	unsigned old = atomic_fetch_sub_explicit(&e->state, 1,
						 memory_order_release);

	if ((old & (ST_DESTROYED | ST_COUNT)) == (ST_DESTROYED | 1))
		retire(e);
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
		    (s & (ST_DEAD | ST_FILLING)))
			return NULL;	/* freed meanwhile, or another destroyer */
		if (s & ST_EXCL) {
			wait_for_copy(e, s);
			continue;
		}
		/* Acquire: the last reaper's ring accesses happen before ours. */
		if (atomic_compare_exchange_weak_explicit(
			    &e->state, &s, s | ST_DEAD, memory_order_acquire,
			    memory_order_relaxed))
			return e;
	}
}

/*
 * Whatever the kernel answered, the ring at this address is no longer one
 * the library may read: the context is gone, or it was destroyed (or moved
 * away with mremap) behind the library's back.  So the entry never comes
 * back to life; it is retired once nobody counts on it.
 */
void registry_end_destroy(struct ctx_entry *e)
{
	unsigned old;

	if (!e)
		return;
	/* Acq_rel: retire below must see the exits that brought the count
	 * to zero; a reaper that sees DESTROYED sees our syscall done. */
	old = atomic_fetch_or_explicit(&e->state, ST_DESTROYED,
				       memory_order_acq_rel);
	if (!(old & ST_COUNT))
		retire(e);
}

int registry_live(io_context_t ctx)
{
	struct ctx_entry *e = registry_lookup(ctx);

	return e && !(atomic_load_explicit(&e->state, memory_order_relaxed) &
		      (ST_DEAD | ST_FILLING));
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
	/* A process that never registered a context has an untouched table
	 * (zero pages never faulted in): leave it so, instead of writing
	 * 256 KiB in every child. */
	if (!table_used)
		return;
	memset((void *)registry_table, 0, sizeof(registry_table));
	pthread_mutex_init(&table_lock, NULL);
	table_used = 0;
}

__attribute__((constructor)) static void registry_init(void)
{
	pthread_atfork(NULL, NULL, registry_forget_all);
}
