/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Context registry: an open-addressed table keyed by context address.
 *
 * Nothing here takes a lock: lookups run on every io_getevents, and an
 * addition claims a slot with a compare-and-swap on its state.  Slots are
 * never freed, only marked as tombstones, so a reader holding a slot
 * pointer never touches freed memory.  A context that does not fit, or
 * whose ring the library does not recognise, is simply not registered:
 * it works through the kernel.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>
#ifdef HAVE_VALGRIND_HINTS
# include <valgrind/memcheck.h>
#endif

#include "feature_flags.h"
#include "registry.h"
#include "ring.h"
#include "raw_syscall.h"

/* MADV_WIPEONFORK takes whole pages: each array it is applied to starts
 * on a page boundary and fills its last page, for every base page size
 * the target's kernels can have.  x86, 32-bit arm, s390 and riscv
 * kernels only have 4 KiB pages; elsewhere (arm64, ppc64, mips,
 * loongarch, sparc64...) a page can be up to 64 KiB.  Not 64 KiB
 * everywhere: that costs 458 KiB of .bss in every process and puts it
 * in a load segment of its own, whose debug information valgrind 3.19
 * does not read (its suppressions then match nothing in the library). */
#if defined(__x86_64__) || defined(__i386__) || defined(__s390__) || \
	(defined(__arm__) && !defined(__aarch64__)) || defined(__riscv)
#define WIPE_PAGE	4096u
#else
#define WIPE_PAGE	65536u
#endif

/* Page aligned, so that its own pages can be wiped in fork children. */
struct ctx_entry aioreap_registry_table[REGISTRY_SIZE]
	__attribute__((aligned(WIPE_PAGE)));
_Static_assert(sizeof(aioreap_registry_table) % WIPE_PAGE == 0,
	       "the table fills whole pages");
/* The kernel zeroes the table in every child (MADV_WIPEONFORK, Linux
 * 4.14), even one created by _Fork or a raw clone, which runs no
 * pthread_atfork handler. */
static int table_wipes_on_fork;
/* Library threads inside a kernel reap of a context that had no entry
 * (see aioreap_reap_shared_enter and publish_filled), counted per group
 * of keys so that a thread waiting long on a context the library never
 * registered does not keep every new context kernel-only. */
#define GHOST_GROUPS	64u
#define GHOST_STRIDE	16u	/* one cache line per group */
/* A page of its own, wiped in fork children with the table: the ghosts
 * of the parent's other threads do not exist there. */
static _Atomic unsigned ghosts[WIPE_PAGE / sizeof(unsigned)]
	__attribute__((aligned(WIPE_PAGE)));
_Static_assert(GHOST_GROUPS * GHOST_STRIDE <= WIPE_PAGE / sizeof(unsigned),
	       "the ghost groups fit in the page");

static _Atomic unsigned *ghosts_of(uintptr_t key)
{
	unsigned group = registry_slot(key) & (GHOST_GROUPS - 1);

	return &ghosts[group * GHOST_STRIDE];
}

/* Set before the first entry is written; read only in a fork child,
 * where the forking thread is the only one left. */
static _Atomic int table_used;

struct ctx_entry *aioreap_registry_lookup(io_context_t ctx)
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
		struct ctx_entry *e =
			&aioreap_registry_table[(s + i) & (REGISTRY_SIZE - 1)];
		uintptr_t k =
			atomic_load_explicit(&e->key, memory_order_relaxed);

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
	static const __kernel_long_t step[2] = { 0, 50000 };	/* 50 us */
	int i;

	for (i = 0; i < 100; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		if (atomic_load_explicit(&e->state,
					 memory_order_relaxed) != seen)
			return;
	}
	sys_futex_wait_for((int *)&e->state, (int)seen, step);
}

/*
 * The last step of filling a slot: the key is stored, now let reapers in.
 * A thread that found no entry for this key may be inside a kernel reap of
 * it right now, uncounted (a "ghost": the key was free when it looked).
 * The ghost announced itself before its last lookup, and we stored the key
 * before counting ghosts; with a sequentially consistent fence on each
 * side, either it saw our key (and counts on this entry instead) or we see
 * it.  Then the entry starts kernel-only (ST_KONLY) until no ghost is left.
 */
static void publish_filled(struct ctx_entry *e, uintptr_t key)
{
	unsigned konly;

	atomic_thread_fence(memory_order_seq_cst);
	konly = atomic_load_explicit(ghosts_of(key), memory_order_relaxed) ?
			ST_KONLY : 0;
	/* Release: a reaper that sees ST_FILLING clear also sees key and nr.
	 * Only our own bit changes: a thread holding an old pointer to this
	 * slot may have joined the kernel-reap count meanwhile. */
	if (konly)
		atomic_fetch_or_explicit(&e->state, konly,
					 memory_order_relaxed);
	atomic_fetch_and_explicit(&e->state, ~ST_FILLING, memory_order_release);
}

/* Under ST_FILLING: the entry now describes the ring at key, whose head
 * the library has not moved yet. */
static void fill(struct ctx_entry *e, const struct aio_ring *r, unsigned nr)
{
	unsigned head = atomic_load_explicit(&r->head, memory_order_relaxed);

	e->nr = nr;
	atomic_store_explicit(&e->head_seen, head, memory_order_relaxed);
}

/*
 * For a ring address the kernel has just handed out: an entry already
 * keyed by it is not a live context of ours.  Either its ring was moved
 * away with mremap (the kernel knows that context by its new address,
 * which we never saw) or it is being destroyed, possibly with kernel
 * reapers still counted on it.  Never wait here.  A quiet stale entry is
 * refreshed in place; a busy or dying one is left alone and the new
 * context stays unregistered (the kernel serves it, and its reaps count
 * on the old entry, which keeps the key).  Returns whether an entry with
 * the key exists (false: the caller must add one).
 */
static bool refresh_stale(uintptr_t key, unsigned nr)
{
	struct ctx_entry *e = aioreap_registry_lookup((io_context_t)key);
	unsigned quiet;

	if (!e)
		return false;
	quiet = atomic_load_explicit(&e->state, memory_order_relaxed);
	/* Quiet: nobody holds or counts on it.  A foreign mark belonged to
	 * the context that had this address before.  Acquire: the last
	 * reaper's ring accesses happen before ours. */
	if ((quiet == 0 || quiet == ST_FOREIGN) &&
	    atomic_compare_exchange_strong_explicit(&e->state, &quiet,
						    ST_FILLING,
						    memory_order_acquire,
						    memory_order_relaxed)) {
		fill(e, (const struct aio_ring *)key, nr);
		publish_filled(e, key);
	}
	return true;
}

/*
 * The kernel wrote the header just now; if it is one we understand, keep
 * a private copy of nr so that a later stray write to the ring's own nr
 * word cannot make the reaper index outside the mapping.
 */
void aioreap_registry_add(io_context_t ctx)
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
		VALGRIND_MAKE_MEM_DEFINED(r, AIO_RING_HEADER_LEN +
					  (size_t)nr * 32);
#endif

	/*
	 * No lock: claiming a slot is a compare-and-swap on its state, and
	 * no other thread can be adding this key (the kernel hands an
	 * address to one new context at a time), so the lookup below and
	 * the claim cannot be raced by another entry for it.  So io_setup
	 * never waits, not even in a fork child whose parent was adding.
	 */
	atomic_store_explicit(&table_used, 1, memory_order_relaxed);
	/* The home slot's page is about to be written: write it first (a
	 * no-op on the state word), so that a page nobody touched yet costs
	 * one page fault, not a read fault and then a write fault. */
	atomic_fetch_or_explicit(&aioreap_registry_table[s].state, 0,
				 memory_order_relaxed);
	if (refresh_stale(key, nr))
		return;
	for (i = 0; i < REGISTRY_MAX_PROBE; i++) {
		struct ctx_entry *e =
			&aioreap_registry_table[(s + i) & (REGISTRY_SIZE - 1)];
		uintptr_t k =
			atomic_load_explicit(&e->key, memory_order_relaxed);
		unsigned expected = 0;

		if (k != KEY_EMPTY && k != KEY_TOMBSTONE)
			continue;
		/* Claim it; fails while a stale thread still counts on it. */
		if (!atomic_compare_exchange_strong_explicit(
			    &e->state, &expected, ST_FILLING,
			    memory_order_acquire, memory_order_relaxed))
			continue;
		fill(e, r, nr);
		atomic_store_explicit(&e->key, key, memory_order_relaxed);
		publish_filled(e, key);
		break;
	}
}

/*
 * Slow path of reap_excl_try.  Another user-space reaper holds the ring
 * only for the length of a copy, so wait for it; kernel reapers in flight,
 * a dying context or a slot being filled send the caller to the kernel.
 */
bool aioreap_reap_excl_contended(struct ctx_entry *e, uintptr_t key)
{
	for (;;) {
		unsigned s =
			atomic_load_explicit(&e->state, memory_order_relaxed);

		if (s & (ST_DEAD | ST_FILLING | ST_COUNT | ST_FOREIGN))
			return false;
		/* Kernel-only while ghosts may be inside (nothing else can be
		 * set with it here: ST_EXCL is only ever taken from a word
		 * without it).  Acquire on the ghosts: pairs with their
		 * release as they leave, so their kernel reaps are over.  No
		 * new ghost can start for this key: its lookup finds us. */
		if (s == ST_KONLY &&
		    atomic_load_explicit(ghosts_of(key), memory_order_acquire))
			return false;
		if (s & ST_EXCL) {
			wait_for_copy(e, s);
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(
			    &e->state, &s, ST_EXCL, memory_order_acquire,
			    memory_order_relaxed)) {
			if (atomic_load_explicit(&e->key,
						 memory_order_relaxed) != key) {
				reap_excl_release(e);
				return false;
			}
			/* The ghosts' reaps moved head without counting on
			 * the entry: its head is the library's again. */
			if (s == ST_KONLY)
				atomic_store_explicit(
					&e->head_seen,
					ring_load_head((struct aio_ring *)key),
					memory_order_relaxed);
			return true;
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
	unsigned s = atomic_load_explicit(&e->state, memory_order_relaxed);

	/* Acquire: every counted reaper's exit happens before the reuse. */
	if ((s & ~(ST_KONLY | ST_FOREIGN)) != (ST_DEAD | ST_DESTROYED) ||
	    !atomic_compare_exchange_strong_explicit(&e->state, &s, ST_FILLING,
						     memory_order_acquire,
						     memory_order_relaxed))
		return;
	atomic_store_explicit(&e->key, KEY_TOMBSTONE, memory_order_relaxed);
	/* Release: a stale thread that finds the slot free sees the
	 * tombstone, and the slot is reusable only after it. */
	atomic_fetch_and_explicit(&e->state, ~ST_FILLING, memory_order_release);
}

/*
 * Before a kernel reap: join the count of ctx's entry, or, when ctx has
 * none, become a ghost.  Acquire: pairs with the release of the last
 * user-space reaper, so the head it stored is in memory before the kernel
 * reads it.  The count is joined even on a dying entry: while anyone
 * counts on it, it keeps its key, and a new context at the same address
 * stays unregistered (see the top of registry.h).  A slot being filled is
 * waited for like a copy (a few stores, no system call); one that now
 * holds another key is not ctx's: look ctx up again.  A ghost is a kernel
 * reap with no entry to count on; aioreap_registry_add sees ghosts (see
 * publish_filled), so a context registered meanwhile at this address
 * keeps user-space reapers away until they are gone.
 */
struct ctx_entry *aioreap_reap_shared_enter(struct ctx_entry *e, uintptr_t key,
					    int *ghost)
{
	*ghost = 0;
	for (;;) {
		while (e) {
			unsigned s = atomic_load_explicit(&e->state,
							  memory_order_relaxed);

			if (s & (ST_EXCL | ST_FILLING)) {
				wait_for_copy(e, s);
				continue;
			}
			if (!atomic_compare_exchange_weak_explicit(
				    &e->state, &s, s + 1, memory_order_acquire,
				    memory_order_relaxed))
				continue;
			if (atomic_load_explicit(&e->key,
						 memory_order_relaxed) == key)
				return e;
			aioreap_reap_shared_exit(e);
			e = aioreap_registry_lookup((io_context_t)key);
		}
		/* Announce, then look once more (the other half of the
		 * fence pairing in publish_filled). */
		atomic_fetch_add_explicit(ghosts_of(key), 1,
					  memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		e = aioreap_registry_lookup((io_context_t)key);
		if (!e) {
			*ghost = 1;
			return NULL;
		}
		atomic_fetch_sub_explicit(ghosts_of(key), 1,
					  memory_order_relaxed);
	}
}

/* Release: the ghost's kernel reap is over before the count says so. */
void aioreap_reap_ghost_exit(uintptr_t key)
{
	atomic_fetch_sub_explicit(ghosts_of(key), 1, memory_order_release);
}

/* Release: the kernel reap is finished before the count says so. */
void aioreap_reap_shared_exit(struct ctx_entry *e)
{
	unsigned old = atomic_fetch_sub_explicit(&e->state, 1,
						 memory_order_release);

	if ((old & (ST_DESTROYED | ST_COUNT)) == (ST_DESTROYED | 1))
		retire(e);
}

/*
 * A counted kernel reap returned n events, so it moved head by n (the
 * kernel stores head only after a copy that did not fault).  Called
 * before aioreap_reap_shared_exit, whose release then publishes it to
 * the next holder of the exclusive lock.  Several kernel reapers may be
 * here at once, hence the loop; nr does not change while anyone counts.
 */
void aioreap_reap_shared_moved(struct ctx_entry *e, long n)
{
	unsigned nr = e->nr, step, seen, moved;

	if (nr == 0)
		return;
	step = (unsigned)((unsigned long)n % nr);
	seen = atomic_load_explicit(&e->head_seen, memory_order_relaxed);
	do {
		moved = seen + step;	/* both below nr <= 2^24: no wrap */
		if (moved >= nr)
			moved -= nr;
	} while (!atomic_compare_exchange_weak_explicit(
			 &e->head_seen, &seen, moved, memory_order_relaxed,
			 memory_order_relaxed));
}

struct ctx_entry *aioreap_registry_begin_destroy(io_context_t ctx)
{
	struct ctx_entry *e = aioreap_registry_lookup(ctx);

	if (!e)
		return NULL;
	for (;;) {
		unsigned s =
			atomic_load_explicit(&e->state, memory_order_relaxed);

		/* Freed meanwhile, or another destroyer. */
		if (atomic_load_explicit(&e->key, memory_order_relaxed) !=
		    (uintptr_t)ctx || (s & (ST_DEAD | ST_FILLING)))
			return NULL;
		if (s & ST_EXCL) {
			wait_for_copy(e, s);
			continue;
		}
		/* Acquire: the last reaper's ring accesses come before ours. */
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
void aioreap_registry_end_destroy(struct ctx_entry *e)
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

int aioreap_registry_live(io_context_t ctx)
{
	struct ctx_entry *e = aioreap_registry_lookup(ctx);

	return e && !(atomic_load_explicit(&e->state, memory_order_relaxed) &
		      (ST_DEAD | ST_FILLING | ST_FOREIGN));
}

/*
 * A forked child shares the parent's ring pages but not its contexts: the
 * kernel answers -EINVAL for them, and a child that moved head would steal
 * the parent's completions.  Forget every context, so the child's calls go
 * to the kernel and never touch the ring.  Only the forking thread exists
 * in the child, so nothing races the wipe, and an entry whose reap lock
 * a thread that did not survive the fork held is wiped with the rest.
 */
static void registry_forget_all(void)
{
	/* A process that never registered a context has an untouched table
	 * (zero pages never faulted in): leave it so, instead of writing
	 * 256 KiB in every child; the kernel may have wiped it already. */
	if (table_wipes_on_fork ||
	    !atomic_load_explicit(&table_used, memory_order_relaxed))
		return;
	memset((void *)aioreap_registry_table, 0,
	       sizeof(aioreap_registry_table));
	memset((void *)ghosts, 0, sizeof(ghosts));
}

__attribute__((constructor)) static void registry_init(void)
{
	/* One madvise at load time, never inside a call of the program's;
	 * without it (kernels before 4.14) the atfork handler clears the
	 * table in children made by fork, but not by _Fork. */
	table_wipes_on_fork =
		sys_madvise(aioreap_registry_table,
			    sizeof(aioreap_registry_table),
			    MADV_WIPEONFORK) == 0 &&
		sys_madvise(ghosts, sizeof(ghosts), MADV_WIPEONFORK) == 0;
	pthread_atfork(NULL, NULL, registry_forget_all);
}
