/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of contexts this process created, and the per-context reap
 * lock that keeps every completion delivered exactly once.
 *
 * Why a lock is needed at all: the kernel's io_getevents serialises its
 * own readers with a mutex that user space cannot take, and it reads head,
 * copies events and stores head as three separate steps.  A user-space
 * reaper running beside it reads the same head, copies the same events,
 * and one of the two head stores moves head backwards: those events are
 * delivered twice.  (Measured: two threads, one reaping the ring and one
 * in io_getevents, 2,000,000 completions: 4,515 delivered twice, none
 * lost; either reaper alone: none twice.)
 *
 * The rule: for a registered context, the library never lets a user-space
 * reap overlap a kernel reap that the library itself started.
 *  - A user-space reaper takes the lock exclusively (ST_EXCL), copies,
 *    publishes head, and releases.  Nothing else runs while it holds it,
 *    and it holds it only for a copy of at most nr events, with no system
 *    call: the one thing anybody ever waits for (bounded spin, then a
 *    short futex sleep, so that a higher real-time priority never starves
 *    the holder).
 *  - A thread about to call io_getevents/io_pgetevents joins the shared
 *    count (ST_COUNT) and leaves after the call returns.  Kernel reapers
 *    exclude each other through the kernel's own mutex, so any number may
 *    be in at once.
 *  - A thread that finds kernel reapers in flight does not wait for them
 *    (they may sleep for the whole timeout): it reaps through the kernel
 *    too.  So a zero-timeout call never waits behind a blocking one.
 * Exactly once follows: at any instant the ring has either one user-space
 * consumer or only kernel consumers, and each kind is single-consumer by
 * construction.
 *
 * Reaps the library did not start.  The rule above cannot see a kernel
 * reap that the program makes itself (a raw io_getevents system call, a
 * second copy of the library in another link-map namespace) or a head
 * that it moves by hand.  No user-space design can exclude those: the
 * kernel's reap reads head, copies and stores head under a mutex that
 * user space cannot take, and its store is a plain one.  So the library
 * notices them instead, and then leaves the ring to the kernel for good:
 *  - The entry remembers where head should be (head_seen): the holder of
 *    the exclusive lock sets it when it publishes, and every counted
 *    kernel reaper adds what its call returned before it leaves the
 *    count (a kernel reap moves head by exactly the events it returns).
 *    A user-space reaper that finds head anywhere else knows that
 *    somebody outside the library reaped, marks the entry ST_FOREIGN and
 *    reaps through the kernel, as every later call on the context does.
 *  - The new head is stored only if head still holds the value the copy
 *    started at, read again just before the store.  A foreign reap that
 *    stored its head after our first read makes the re-read differ: the
 *    copy is dropped (those events were taken by the foreign reaper or
 *    are still in the ring) and the entry turns foreign.
 *  - What remains is the overlap the re-read cannot see: a foreign reap
 *    that read head before our store and stores its own after our
 *    re-read.  Both copies hold the same first events.  The next reap
 *    turns the entry foreign only if the foreign head differs from
 *    head_seen by then; when both reapers took every event there was, or
 *    a foreign reap slowed down in the kernel spans several of ours that
 *    together took as many, it does not, and nothing in the ring shows
 *    that it happened.  (A head the kernel could never store would show
 *    it, but programs that read the ring themselves index it with head.)
 *    So duplicates are possible, repeatedly, until the library notices;
 *    a program that reaps one context both through this library and
 *    around it must make the two never run at the same time, or set
 *    LIBAIO_DISABLE=ring.
 *
 * Nobody waits for the count.  A thread may never come back from a kernel
 * reap (a signal handler that longjmps out, cancellation): its count then
 * stays, which only keeps user-space reapers away from that context (the
 * kernel serves them instead).  io_destroy marks the entry ST_DEAD once no
 * user-space copy is running, makes the system call, and marks it
 * ST_DESTROYED; whoever then sees the count at zero, io_destroy itself or
 * the last kernel reaper to leave, retires the entry (key becomes a
 * tombstone, state 0).  Until then the dead entry keeps its key, so an
 * io_setup that the kernel hands the same address registers nothing: the
 * new context is served by the kernel, never by a user-space reaper that
 * could race a kernel reap still counted on the old entry.
 *
 * A kernel reap of a context with no entry (the library never registered
 * it, or its entry was just retired) cannot be counted anywhere, yet the
 * kernel may hand its address to a new context that io_setup registers
 * while that reap is still inside the kernel.  Such a reaper announces
 * itself as a "ghost" before its last lookup; io_setup counts ghosts after
 * publishing the key, and an entry published while any ghost is inside
 * starts kernel-only (ST_KONLY) until they are gone.
 *
 * Entries are never freed, so a stale pointer to one is always safe to
 * touch: after locking or counting, a thread re-checks the key.  At most
 * one entry holds a given key: io_setup refreshes a stale entry in place
 * (a ring moved away with mremap leaves one behind) instead of adding a
 * second.
 */
#ifndef LIBAIO_REGISTRY_H
#define LIBAIO_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#ifdef HAVE_SYS_SINGLE_THREADED_H
# include <sys/single_threaded.h>
#endif

#include "compiler.h"
#include "libaio.h"

#define ST_EXCL		0x80000000u	/* a user-space reaper owns the ring */
#define ST_DEAD		0x40000000u	/* io_destroy began: ring off limits */
#define ST_DESTROYED	0x20000000u	/* io_destroy returned: retire at 0 */
#define ST_FILLING	0x10000000u	/* key and nr being (re)written */
#define ST_KONLY	0x08000000u	/* kernel only: ghosts may be inside */
#define ST_FOREIGN	0x04000000u	/* kernel only for good: head moved by
					   a reap the library did not make */
#define ST_COUNT	0x03ffffffu	/* library threads in a kernel reap */

#define KEY_EMPTY	((uintptr_t)0)	/* never used: ends a probe chain */
#define KEY_TOMBSTONE	((uintptr_t)1)	/* freed: probe chains continue past */

struct ctx_entry {
	_Atomic uintptr_t key;	/* the context address */
	_Atomic unsigned state;	/* ST_* bits */
	unsigned nr;		/* ring slots, read at io_setup */
	/* Where the library's own reaps have left head (0..nr-1).  Written
	 * by the exclusive lock's holder, and by counted kernel reapers
	 * (atomically, as several may be in at once); both kinds never run
	 * at the same time, so the lock's holder reads a settled value. */
	_Atomic unsigned head_seen;
} __attribute__((aligned(64)));

#define REGISTRY_SIZE		4096u	/* slots; a power of two */
#define REGISTRY_MAX_PROBE	32u

extern hidden struct ctx_entry aioreap_registry_table[REGISTRY_SIZE];

/*
 * Rings are page aligned: drop the page offset and keep the page number's
 * low bits, unmixed.  The kernel maps a process's rings next to each
 * other, so its contexts get neighbouring slots and share a page or two of
 * the table: each page of it costs io_setup a page fault the first time it
 * is touched, a mixing hash would pay one for almost every new context
 * (tens of microseconds on a virtual machine), and the stock library pays
 * none.  Rings 16 MiB apart share a home slot and take the next free one.
 */
static inline unsigned registry_slot(uintptr_t key)
{
	return (unsigned)(key >> 12) & (REGISTRY_SIZE - 1);
}

/* The home slot's entry if it holds ctx, else NULL (ctx may still be
 * further along the probe chain): a lookup with no call in it. */
static inline struct ctx_entry *registry_home(io_context_t ctx)
{
	uintptr_t key = (uintptr_t)ctx;
	struct ctx_entry *e = &aioreap_registry_table[registry_slot(key)];

	/* Relaxed: confirmed again under the reap lock's acquire.  Keys 0
	 * and 1 mark empty and freed slots, never a context. */
	if (likely(key > KEY_TOMBSTONE &&
		   atomic_load_explicit(&e->key, memory_order_relaxed) == key))
		return e;
	return NULL;
}

/* The entry for a context this process created, or NULL: the whole
 * probe chain, out of line (the reap fast path uses registry_home). */
struct ctx_entry *aioreap_registry_lookup(io_context_t ctx);
void aioreap_registry_add(io_context_t ctx);
/* io_destroy's part: shut out user-space reapers before the system call,
 * retire the entry after it (whatever the kernel answered). */
struct ctx_entry *aioreap_registry_begin_destroy(io_context_t ctx);
void aioreap_registry_end_destroy(struct ctx_entry *e);
/* Is ctx registered, not being destroyed, and still the ring reaper's
 * (not left to the kernel after a reap the library did not make)? */
int aioreap_registry_live(io_context_t ctx);

/* io_submit's nr as the kernel clamps it, to the ring's size: the
 * emulations read no iocb past the ones the kernel would.  A context we
 * did not create, or an entry with nr 0 (not filled yet), keeps nr. */
static inline long registry_clamp_nr(io_context_t ctx, long nr)
{
	struct ctx_entry *e = aioreap_registry_lookup(ctx);

	if (e && e->nr && nr > (long)e->nr)
		return (long)e->nr;
	return nr;
}

bool aioreap_reap_excl_contended(struct ctx_entry *e, uintptr_t key);
/* Before a kernel reap of key (e: its entry as last seen, or NULL):
 * returns the entry counted on (pass it to aioreap_reap_shared_exit), or NULL
 * with *ghost set when key has none (then call aioreap_reap_ghost_exit). */
struct ctx_entry *aioreap_reap_shared_enter(struct ctx_entry *e, uintptr_t key,
					    int *ghost);
void aioreap_reap_shared_exit(struct ctx_entry *e);
/* A counted kernel reap returned n > 0 events: head moved by n. */
void aioreap_reap_shared_moved(struct ctx_entry *e, long n);
void aioreap_reap_ghost_exit(uintptr_t key);

/* What one attempt at taking the ring for a user-space reap found. */
enum excl_try {
	EXCL_TAKEN,	/* the caller owns it and must call reap_excl_release */
	EXCL_GONE,	/* the entry no longer belongs to the key */
	EXCL_BUSY,	/* held, counted on, dying or being filled */
};

/*
 * One attempt at taking the ring for a user-space reap, never waiting.
 *
 * While the C library says the process has one thread, two plain stores
 * (here and in reap_excl_release) replace the compare-and-swap, which is
 * most of the cost of a batch-1 reap.  The C library's own contract
 * makes that exact, and nothing here is stricter than it: glibc's
 * __libc_single_threaded means "definitely single-threaded", and
 * libstdc++ already takes it to make shared_ptr's counts plain
 * increments.  The flag goes from 1 to 0 inside pthread_create, which
 * orders our earlier stores before the new thread's first access, and
 * is read again on every reap (a plain char load), never cached, so a
 * reap that starts after a thread was created uses the compare-and-swap.
 * Tasks the C library does not count can share this memory all the
 * same: a raw clone(CLONE_VM) without CLONE_VFORK, or a helper a library
 * starts with a raw clone of its own.  Such a task must not reap a
 * context through this library while another one does (libaio(7),
 * Threads): they already share errno and every other thread-local
 * object, so they cannot call the C library's thread-aware functions
 * at once either.  Tasks that only submit, wait in epoll or otherwise
 * never reap never touch this word.
 *
 * The one other thing that runs beside us in such a process is a signal
 * handler on this very thread, between the load and the store.  It runs
 * to its end before we store (or leaves the call for good), so whatever
 * it did with the context is over: a reap it made published head and
 * head_seen, which our look reads after the store; a mark it left on the
 * word is overwritten, and none matters then: a count or a ghost only
 * fences off kernel reaps still in flight, and this thread has none; a
 * foreign mark is found again by our own look, since head still differs
 * from head_seen (a copy is dropped without moving either); a context it
 * destroyed has a tombstone key, which the check below sees.  The signal
 * fence keeps the compiler from moving our look before the store, where
 * such a handler's head would be missed.  A handler that interrupts the
 * copy itself finds the lock held and waits for ever, as with the
 * compare-and-swap (libaio(7), Threads).
 *
 * Otherwise one compare-and-swap: acquire, pairing with the release in
 * reap_excl_release or with the store that filled the slot.  Where the
 * C library has no such flag (before glibc 2.32, other C libraries), the
 * compare-and-swap always.
 */
static inline enum excl_try reap_excl_try_once(struct ctx_entry *e,
					       uintptr_t key)
{
	unsigned expected = 0;

#ifdef HAVE_SYS_SINGLE_THREADED_H
	if (likely(__libc_single_threaded)) {
		/* Relaxed: only this thread (and its handlers) use it. */
		if (unlikely(atomic_load_explicit(&e->state,
						  memory_order_relaxed) != 0))
			return EXCL_BUSY;
		atomic_store_explicit(&e->state, ST_EXCL, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
	} else
#endif
	if (unlikely(!atomic_compare_exchange_strong_explicit(
			     &e->state, &expected, ST_EXCL,
			     memory_order_acquire, memory_order_relaxed)))
		return EXCL_BUSY;
	/* Relaxed: the acquire above orders it after the key's store (or,
	 * with one thread, program order does). */
	if (likely(atomic_load_explicit(&e->key, memory_order_relaxed) == key))
		return EXCL_TAKEN;
	/* We took it from exactly 0 and nobody changes a held word, so 0
	 * is what it was. */
	atomic_store_explicit(&e->state, 0, memory_order_release);
	return EXCL_GONE;
}

/* Take the ring, waiting only for another user-space reaper's copy:
 * true when the caller owns it, false when it must reap via the kernel. */
static inline bool reap_excl_try(struct ctx_entry *e, uintptr_t key)
{
	enum excl_try got = reap_excl_try_once(e, key);

	if (likely(got != EXCL_BUSY))
		return got == EXCL_TAKEN;
	return aioreap_reap_excl_contended(e, key);
}

/*
 * Release: nobody else changes the state word while ST_EXCL is held
 * (everyone who would waits for it to clear, polling, without marking
 * the word), so a plain store suffices; release publishes our head store
 * to the next owner.
 */
static inline void reap_excl_release(struct ctx_entry *e)
{
	atomic_store_explicit(&e->state, 0, memory_order_release);
}

/* Release, leaving the context to the kernel for good: the holder found
 * head moved by a reap the library did not make (see the top). */
static inline void reap_excl_release_foreign(struct ctx_entry *e)
{
	atomic_store_explicit(&e->state, ST_FOREIGN, memory_order_release);
}

#endif /* LIBAIO_REGISTRY_H */
