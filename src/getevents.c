/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * io_getevents, io_pgetevents and io_reap: ring first, kernel second.
 *
 * Every call first takes what is already in the ring, with no system call
 * (see registry.h for why that cannot lose or duplicate an event beside
 * kernel reapers in other threads), when the ring holds at least min_nr
 * events.  Otherwise the kernel does the whole call, timeout and all:
 * only the kernel can read a timeout the program passed without risking
 * a fault (it answers EFAULT for a bad one).  Calls with arguments the
 * kernel would refuse, contexts this process did not create, rings that
 * fail their checks and contexts that another reaper has touched go
 * straight to the kernel, which gives the kernel's answer.
 *
 * Two paths do this: fast_getevents, inlined into the public functions,
 * takes the common case (events waiting, nothing unusual) with no call
 * and no locals on the stack; aioreap_getevents_core does every case, and
 * fast_getevents hands it anything else before touching the ring.
 */
#include "config.h"

#ifdef HAVE_VALGRIND_HINTS
# include <valgrind/memcheck.h>
#endif
#include <sys/uio.h>

#include "async.h"
#include "compiler.h"
#include "event_array.h"
#include "export.h"
#include "feature_flags.h"
#include "kernel_wait.h"
#include "poll_emul.h"
#include "raw_syscall.h"
#include "reap.h"
#include "user_ptr.h"
#include "versioned.h"

#ifdef HAVE_VALGRIND_HINTS
static int on_valgrind;

__attribute__((constructor)) static void detect_valgrind(void)
{
	on_valgrind = RUNNING_ON_VALGRIND;
}

/*
 * Memcheck learns that the kernel filled a read buffer from its own
 * io_getevents wrapper.  Completions taken from the ring bypass it, so say
 * it here: bytes a completed read stored are defined.
 */
__attribute__((noinline)) static void
tell_valgrind(const struct io_event *ev, long n)
{
	long i;

	for (i = 0; i < n; i++) {
		const struct iocb *cb = ev[i].obj;
		long res = (long)ev[i].res;

		if (res <= 0 || !cb)
			continue;
		if (cb->aio_lio_opcode == IO_CMD_PREAD) {
			VALGRIND_MAKE_MEM_DEFINED(cb->u.c.buf, res);
		} else if (cb->aio_lio_opcode == IO_CMD_PREADV) {
			const struct iovec *iov = cb->u.v.vec;
			unsigned long k;

			for (k = 0; k < cb->u.v.nr && res > 0; k++) {
				long len = (long)iov[k].iov_len < res ?
						   (long)iov[k].iov_len : res;

				VALGRIND_MAKE_MEM_DEFINED(iov[k].iov_base, len);
				res -= len;
			}
		}
	}
}
#endif

/* The library's events rewritten into the program's; an async read or
 * write that would have blocked is taken out and handed to a worker,
 * here, before the caller goes back to waiting for it. */
static long translate(struct io_event *ev, long n)
{
	n = aioreap_poll_emul_translate(ev, n);
	if (unlikely(atomic_load_explicit(&aioreap_async_redrive_head,
					  memory_order_relaxed) != NULL))
		aioreap_async_kick();
	return n;
}

/* Returns how many events remain: the poll emulation drops the doorbells
 * of polls that a concurrent io_destroy took away, and async submission
 * the completions that say a worker must redo them. */
static inline long after_reap(struct io_event *ev, long n, int from_ring)
{
	int emul = atomic_load_explicit(&aioreap_poll_emul_used,
					memory_order_relaxed);

#ifdef HAVE_VALGRIND_HINTS
	if (likely(!(emul | (from_ring & on_valgrind))))
		return n;
	if (from_ring && on_valgrind)
		tell_valgrind(ev, n);
	if (emul)
		n = translate(ev, n);
#else
	(void)from_ring;
	if (unlikely(emul))
		n = translate(ev, n);
#endif
	return n;
}

/* Everything after the ring: enter the kernel (or the pgetevents
 * emulation) for the rest. */
__attribute__((noinline)) static int
kernel_part(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
	    const struct wait_spec *w, struct ctx_entry *e, long got, int track)
{
	long ret;

	/* got is 0 unless ev was usable: never offset a NULL pointer (UB). */
	if (got)
		ev += got;
	for (;;) {
		struct ctx_entry *counted = NULL;
		int ghost = 0;

		if (track)
			counted = aioreap_reap_shared_enter(e, (uintptr_t)ctx,
							    &ghost);
		if (w->pget)
			ret = aioreap_kernel_pgetevents(ctx, min_nr - got,
							nr - got, ev, w);
		else
			ret = aioreap_kernel_getevents(ctx, min_nr - got,
						       nr - got, ev, w);
		if (counted) {
			/* Before leaving: the next user-space reaper must find
			 * head where this reap left it (registry.h). */
			if (ret > 0)
				aioreap_reap_shared_moved(counted, ret);
			aioreap_reap_shared_exit(counted);
		}
		if (ghost)
			aioreap_reap_ghost_exit((uintptr_t)ctx);
		if (ret <= 0)
			break;
		if ((ret = after_reap(ev, ret, 0)) > 0) {
			got += ret;
			ev += ret;
		}
		/* Events were taken out (doorbells of polls that an
		 * io_destroy took away, async reads and writes handed to a
		 * worker).  With none left, ask again, so that a blocking
		 * call never returns 0 and a dead context answers -EINVAL;
		 * with fewer than min_nr, wait for the rest unless a timeout
		 * bounds the wait. */
		if (got > 0 && (got >= min_nr || w->ts))
			break;
	}
	if (ret < 0)
		return got ? (int)got : (int)ret;
	return (int)got;
}

/* Let go of the ring after a look that found look. */
static inline void release_after(struct ctx_entry *e, enum ring_look look)
{
	if (look == RING_FOREIGN)
		reap_excl_release_foreign(e);
	else
		reap_excl_release(e);
}

/*
 * The ring's part of a call: takes the events if the ring holds at least
 * min_nr (at least one when need_one), and returns how many; -1 when the
 * kernel must do the call instead, with nothing taken.  Every page of ev
 * it writes under the lock was written outside it first (event_array.h).
 */
static long ring_part(struct ctx_entry *e, uintptr_t key, long min_nr,
		      long nr, struct io_event *ev, bool need_one)
{
	struct ring_pos p;
	enum ring_look look;
	size_t proved = 0;

	if (nr > 0)
		events_touch_first(ev);
	for (;;) {
		if (!reap_excl_try(e, key))
			return -1;
		look = ring_peek(e, (struct aio_ring *)key,
				 proved ? (long)proved : nr, &p);
		if (look != RING_READY || (long)p.n < min_nr ||
		    (need_one && p.n == 0)) {
			release_after(e, look);
			return -1;
		}
		if (proved || events_fit_first(ev, p.n))
			break;
		/* Past the first byte's page: let go, prove what this reap
		 * would take, and look again for at most that many. */
		proved = p.n;
		reap_excl_release(e);
		events_prove(ev, proved);
	}
	if (p.n) {
		ring_copy(&p, ev);
		if (!ring_publish(e, &p)) {
			reap_excl_release_foreign(e);
			return -1;
		}
	}
	reap_excl_release(e);
	return (long)p.n;
}

/* The whole call, every case: the ring first, then the kernel. */
int aioreap_getevents_core(io_context_t ctx, long min_nr, long nr,
			   struct io_event *ev, const struct wait_spec *w)
{
	struct ctx_entry *e = NULL;
	long got = 0;
	/* Whether the kernel reap must be announced in the registry: always
	 * unless the ring reaper is off (then nothing is registered).  Even
	 * a call with no events array reaches the kernel's reap when nr is 0
	 * (nothing to copy, so nothing faults), and the kernel then stores
	 * back the head it read: uncounted, it could undo a ring reap. */
	int track = !(features_disabled() & DISABLE_RING);

	/* The kernel reads the timeout and the mask before anything else:
	 * with an obviously bad one it must answer (EFAULT), not the ring. */
	if (likely(min_nr >= 0 && min_nr <= nr) &&
	    likely(!obviously_bad_pointer(ev)) &&
	    likely(!w->ts || !obviously_bad_pointer(w->ts)) &&
	    likely(!w->mask || !obviously_bad_pointer(w->mask))) {
		e = aioreap_registry_lookup(ctx);
		/* With a mask, an empty ring is the kernel's to answer, so
		 * that pending signals get through. */
		got = e ? ring_part(e, (uintptr_t)ctx, min_nr, nr, ev,
				    w->mask != NULL) : -1;
		if (got == 0)
			return 0;
		if (got > 0) {
			got = after_reap(ev, got, 1);
			/* Fewer than min_nr left once the poll emulation's
			 * doorbells were dropped: the kernel waits for the
			 * rest. */
			if (got >= min_nr && (got || !w->mask))
				return (int)got;
		} else
			got = 0;
	}
	return kernel_part(ctx, min_nr, nr, ev, w, e, got, track);
}

/* Everything the fast path below leaves: out of line, and with at most
 * six arguments, so that the fast path reaches them by a tail call. */
__attribute__((noinline)) static int
getevents_slow(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
	       const void *ts)
{
	struct wait_spec w = { ts, 0, 0, NULL };

	return aioreap_getevents_core(ctx, min_nr, nr, ev, &w);
}

__attribute__((noinline)) static int
pgetevents_slow(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
		const void *ts, const sigset_t *mask)
{
	struct wait_spec w = { ts, 0, 1, mask };

	return aioreap_getevents_core(ctx, min_nr, nr, ev, &w);
}

/*
 * The fast path's copy of more than one event, with the lock held and n
 * events seen, all in the page of the array's first byte: memcpy is the quickest copy,
 * but a call on the fast path itself would cost every call a stack frame,
 * so this is reached by a tail call (one function per entry point, as a
 * seventh argument would not pass in registers).  The look found head
 * where the entry says the library left it, and under the lock only a
 * reap outside the library can have moved it since: the publish then
 * fails and the copy is dropped.
 */
static inline __attribute__((always_inline)) int
take_many(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
	  const void *ts, size_t n, int pget)
{
	/* The home slot: the fast path found ctx there and holds its lock,
	 * so the key needs no second look. */
	struct ctx_entry *e =
		&aioreap_registry_table[registry_slot((uintptr_t)ctx)];
	struct ring_pos p = {
		(struct aio_ring *)ctx, e->nr,
		atomic_load_explicit(&e->head_seen, memory_order_relaxed), n
	};

	ring_copy(&p, ev);
	if (likely(ring_publish(e, &p))) {
		reap_excl_release(e);
		return (int)n;
	}
	reap_excl_release_foreign(e);
	if (pget)
		return pgetevents_slow(ctx, min_nr, nr, ev, ts, NULL);
	return getevents_slow(ctx, min_nr, nr, ev, ts);
}

__attribute__((noinline)) static int
take_many_get(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
	      const void *ts, size_t n)
{
	return take_many(ctx, min_nr, nr, ev, ts, n, 0);
}

__attribute__((noinline)) static int
take_many_pget(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
	       const void *ts, size_t n)
{
	return take_many(ctx, min_nr, nr, ev, ts, n, 1);
}

/* Set when every reaped batch must pass through after_reap. */
static inline int reaps_need_core(void)
{
	int flags = atomic_load_explicit(&aioreap_poll_emul_used,
					 memory_order_relaxed);

#ifdef HAVE_VALGRIND_HINTS
	flags |= on_valgrind;
#endif
	return flags;
}

/*
 * io_getevents' fast path, with no call in it but tail calls, so that the
 * common case keeps nothing on the stack but a few saved registers, where
 * a call would cost a frame (tests/fastpath-frame.sh checks it).  The
 * common case: arguments the kernel would accept, no signal mask, a
 * context in its home registry slot whose lock is free, at least min_nr
 * events already in the ring, all within the page of the events array's
 * first byte (event_array.h), and neither poll emulation nor valgrind to
 * tell.
 * Anything else goes to aioreap_getevents_core (through getevents_slow or
 * pgetevents_slow) having taken nothing.  The two flags are read again
 * after the tail, as after_reap reads them after the copy: a doorbell
 * among these events was submitted after its flag was set.
 */
static inline __attribute__((always_inline)) int
fast_getevents(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
	       const void *ts, int pget)
{
	struct ctx_entry *e;
	struct ring_pos p;
	enum ring_look look;

	/* The flags first as well: once set they stay set, and taking the
	 * lock only to give it back would double every reap's locking
	 * (under valgrind's one-thread-at-a-time scheduler, enough to make
	 * io_destroy wait for seconds behind spinning reapers). */
	if (unlikely(min_nr < 0 || min_nr > nr || obviously_bad_pointer(ev) ||
		     (ts && obviously_bad_pointer(ts)) || reaps_need_core()))
		goto slow;
	e = registry_home(ctx);
	if (unlikely(!e) || unlikely(nr <= 0))
		goto slow;
	events_touch_first(ev);
	if (unlikely(reap_excl_try_once(e, (uintptr_t)ctx) != EXCL_TAKEN))
		goto slow;
	look = ring_peek(e, (struct aio_ring *)ctx, nr, &p);
	if (unlikely(look != RING_READY) || unlikely((long)p.n < min_nr) ||
	    unlikely(reaps_need_core()) ||
	    unlikely(!events_fit_first(ev, p.n))) {
		release_after(e, look);
		goto slow;
	}
	if (p.n > 1) {
		if (pget)
			return take_many_pget(ctx, min_nr, nr, ev, ts, p.n);
		return take_many_get(ctx, min_nr, nr, ev, ts, p.n);
	}
	if (p.n == 1) {
		ev[0] = p.r->events[p.head];
		if (unlikely(!ring_publish(e, &p))) {
			reap_excl_release_foreign(e);
			goto slow;
		}
	}
	reap_excl_release(e);
	return (int)p.n;
slow:
	if (pget)
		return pgetevents_slow(ctx, min_nr, nr, ev, ts, NULL);
	return getevents_slow(ctx, min_nr, nr, ev, ts);
}

AIO_PUBLIC int aioreap_io_getevents_0_4(io_context_t ctx, long min_nr,
					long nr, struct io_event *events,
					struct timespec *timeout)
{
	return fast_getevents(ctx, min_nr, nr, events, timeout, 0);
}
AIO_SYMVER(aioreap_io_getevents_0_4, "io_getevents@@LIBAIO_0.4");

AIO_PUBLIC int io_pgetevents(io_context_t ctx, long min_nr, long nr,
			     struct io_event *events, struct timespec *timeout,
			     sigset_t *sigmask)
{
	/* With a mask, the core decides: the kernel must see the call
	 * whenever the ring alone cannot answer, so pending signals get
	 * through. */
	if (sigmask)
		return pgetevents_slow(ctx, min_nr, nr, events, timeout,
				       sigmask);
	return fast_getevents(ctx, min_nr, nr, events, timeout, 1);
}

AIO_PUBLIC int io_reap(io_context_t ctx, long nr, struct io_event *events)
{
	static const struct timespec zero = { 0, 0 };

	if (nr < 0)
		return -EINVAL;
	if (nr == 0)
		return 0;
	if (obviously_bad_pointer(events))
		return -EFAULT;
	return fast_getevents(ctx, 0, nr, events, &zero, 0);
}

AIO_PUBLIC int io_reaper_active(io_context_t ctx)
{
	return aioreap_registry_live(ctx);
}
