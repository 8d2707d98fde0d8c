/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The poll emulation's lock, and the life of its helper thread: the
 * thread that waits on the epoll set and rings the doorbells where the
 * kernel has no aio poll (before 4.19) or LIBAIO_DISABLE=poll says so.
 *
 * The helper is needed only while a poll is armed in the set or a
 * completion waits behind a full ring, and exists only then.  Its life is
 * one struct (life, below):
 *  - state: HELPER_RUNNING while a helper serves the current set, else
 *    HELPER_NONE.  Program threads move NONE -> RUNNING, under the lock,
 *    when they leave it with polls armed or completions queued (settle),
 *    and after arming a poll (aioreap_thread_ensure, which can fail the
 *    submission).  The helper moves RUNNING -> NONE, under the lock, when
 *    it finds neither, and returns; a program thread that leaves nothing
 *    armed wakes it through the set's pipe so that it finds out.
 *  - id: which helper is the current one; any other leaves, touching
 *    nothing, whenever it wakes.  A new one starts (and the old one is
 *    woken if it can be) when a program thread had to replace the set
 *    (the program closed the library's descriptors, and the helper may
 *    sleep on the old set where nothing can wake it), and when the
 *    program's user or group ids are no longer those the helper started
 *    with (setuid and its kin reach only the C library's threads).
 *  - gen: the generation of the set (poll_helper.c) the helper serves;
 *    uid, gid: the ids it runs with.
 *  - slot: each helper's stack and the kernel's word for its thread id,
 *    which the kernel clears when the thread is gone; only then may a
 *    later helper take that stack.
 *  - fork: the child has no helper (NONE, no thread ids); the copied
 *    stacks serve its own helpers.
 *
 * The helper is made with clone and not pthread_create, so the C library
 * does not count it among the program's threads: when the program's last
 * thread ends, exit() runs in that thread, with its signal mask and its
 * atexit handlers, and exit_group ends the helper with the process, as a
 * kernel poll keeps no process alive.  The helper blocks every signal,
 * makes only raw system calls and runs only helper_code functions (it
 * shares its creator's thread pointer, so it must not read thread-local
 * storage), and gives up every capability first: it needs none, and it
 * may hold ids the program has given up until the program's next call.  Under ThreadSanitizer, whose runtime must see every thread,
 * it is a pthread instead, and the process then does not end by itself
 * while a poll is armed.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compiler.h"
#include "poll_helper.h"
#include "poll_rec.h"
#include "poll_syscall.h"

#if defined(__SANITIZE_THREAD__)
# define HELPER_IS_PTHREAD 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define HELPER_IS_PTHREAD 1
# endif
#endif
#ifndef HELPER_IS_PTHREAD
# define HELPER_IS_PTHREAD 0
#endif

/* The helper's retry period while a full ring holds doorbells back: the
 * kernel tells nobody when a reap makes room. */
#define RETRY_MS	5
/* Each helper's stack (sanitizer builds need the room), and how many
 * helpers may be in flight: one serving, the rest leaving. */
#define STACK_SIZE	(256 * 1024)
#define STACK_SLOTS	16

enum helper_state { HELPER_NONE, HELPER_RUNNING };

struct helper_slot {
	_Atomic int tid;	/* set by clone; 0 once the thread is gone */
	char *stack;		/* its lowest page a guard; kept for reuse */
};

static struct {
	enum helper_state state;
	/* Written under the lock; read by helpers without it as well
	 * (relaxed: a stale value only delays a leave to the next look). */
	_Atomic unsigned id;
	unsigned gen;
	unsigned uid[3], gid[3];
	struct helper_slot slot[STACK_SLOTS];
	struct helper_slot *current;	/* the current helper's, if any */
	_Atomic int started;	/* pthread builds: fork waits for it */
} life;

/* --- the lock ---------------------------------------------------------- */

/* 0 free, 1 held, 2 held with a waiter.  A futex word and not a C library
 * mutex, which would store its owner read from thread-local storage. */
static _Atomic int lock_word;

helper_code static void lock(void)
{
	int c = 0;

	/* Acquire: pairs with unlock's release, so the holder sees all that
	 * the previous holder wrote. */
	if (atomic_compare_exchange_strong_explicit(&lock_word, &c, 1,
						    memory_order_acquire,
						    memory_order_relaxed))
		return;
	if (c != 2)
		c = atomic_exchange_explicit(&lock_word, 2,
					     memory_order_acquire);
	while (c != 0) {
		sys_futex_wait((int *)&lock_word, 2);
		c = atomic_exchange_explicit(&lock_word, 2,
					     memory_order_acquire);
	}
}

/* The lock for helper my_id: 1 once held, 0 (not held) when a newer
 * helper is current and this one must leave. */
helper_code static int helper_lock(unsigned my_id)
{
	int c = 0;

	/* Acquire: as in lock. */
	if (!atomic_compare_exchange_strong_explicit(&lock_word, &c, 1,
						     memory_order_acquire,
						     memory_order_relaxed)) {
		if (c != 2)
			c = atomic_exchange_explicit(&lock_word, 2,
						     memory_order_acquire);
		while (c != 0) {
			if (atomic_load_explicit(&life.id,
						 memory_order_relaxed) != my_id)
				return 0;
			sys_futex_wait((int *)&lock_word, 2);
			c = atomic_exchange_explicit(&lock_word, 2,
						     memory_order_acquire);
		}
	}
	return 1;
}

helper_code static void unlock(void)
{
	/* Release: the next holder sees what this one wrote. */
	if (atomic_exchange_explicit(&lock_word, 0, memory_order_release) == 2)
		sys_futex_wake((int *)&lock_word, 1);
}

/* Free what reapers claimed. */
helper_code static void recycle(void)
{
	struct poll_rec *r, *next;

	for (r = aioreap_rec_recycle_take(); r; r = next) {
		next = r->rnext;
		aioreap_rec_free(r);
	}
}

/* --- the helper -------------------------------------------------------- */

/* Is there work for a helper: a poll armed, a completion queued? */
helper_code static int busy(void)
{
	return aioreap_rec_armed || aioreap_helper_queued();
}

/* Sleep ms without a set (none could be made): the queue's retry. */
helper_code static void nap(int ms)
{
	static int never;
	const __kernel_long_t ts[2] = { 0, (__kernel_long_t)ms * 1000000 };

	sys_futex_wait_for(&never, 0, ts);
}

helper_code static int helper_main(void *arg)
{
	/* The kernel's sigset: every signal blocked, the C library's own
	 * too (none is ever meant for this thread). */
	static const unsigned long all[KERNEL_SIGSET_SIZE /
				       sizeof(unsigned long)] = { ~0ul };
	struct epoll_event ev[64];
	unsigned my_id = (unsigned)(uintptr_t)arg;
	long n = 0;

	sys_sigprocmask(SIG_SETMASK, all, NULL);
	sys_drop_capabilities();
	/* Release: a fork may now go on (aioreap_thread_fork_prepare). */
	atomic_store_explicit(&life.started, 1, memory_order_release);
	sys_futex_wake((int *)&life.started, 1);
	for (;;) {
		int fd, ms;

		if (!helper_lock(my_id))
			return 0;	/* a newer helper serves */
		if (my_id != life.id)
			break;
		/* A lost set is replaced here, and this helper serves the
		 * new one. */
		aioreap_helper_check();
		life.gen = aioreap_helper_set_gen();
		aioreap_helper_handle(ev, n);
		recycle();
		aioreap_helper_flush();
		if (!busy()) {
			life.state = HELPER_NONE;
			break;
		}
		ms = aioreap_helper_queued() ? RETRY_MS : -1;
		fd = aioreap_helper_wait_fd();
		unlock();
		n = 0;
		if (fd < 0)
			nap(RETRY_MS);
		else if ((n = sys_epoll_wait(fd, ev, 64, ms)) < 0)
			n = 0;	/* EBADF: the check above finds out */
		if (atomic_load_explicit(&life.id, memory_order_relaxed) !=
		    my_id)
			return 0;	/* retired while it slept */
	}
	unlock();
	return 0;
}

#if HELPER_IS_PTHREAD
static void *helper_pthread_main(void *arg)
{
	helper_main(arg);
	return NULL;
}

static int helper_start(unsigned id)
{
	pthread_attr_t attr;
	pthread_t t;
	int saved = errno, err;

	atomic_store_explicit(&life.started, 0, memory_order_relaxed);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, helper_pthread_main,
			     (void *)(uintptr_t)id);
	pthread_attr_destroy(&attr);
	errno = saved;
	return -err;
}
#else
/* A slot whose thread is gone, its stack mapped: NULL if every slot
 * still has a helper in flight, or no memory. */
static struct helper_slot *free_slot(void)
{
	unsigned i;

	for (i = 0; i < STACK_SLOTS; i++) {
		struct helper_slot *s = &life.slot[i];
		long page = sysconf(_SC_PAGESIZE), a;

		/* Acquire: the kernel's clearing of the id comes after the
		 * thread's last use of its stack. */
		if (atomic_load_explicit(&s->tid, memory_order_acquire))
			continue;
		if (s->stack)
			return s;
		a = sys_mmap0((size_t)STACK_SIZE + (size_t)page,
			      PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1);
		if (a < 0 && a > -4096)
			return NULL;
		sys_mprotect((void *)a, (size_t)page, PROT_NONE);
		s->stack = (char *)a + page;
		return s;
	}
	return NULL;
}

static int helper_start(unsigned id)
{
	struct helper_slot *s = free_slot();
	long ret;

	if (!s)
		return -EAGAIN;
	atomic_store_explicit(&life.started, 0, memory_order_relaxed);
	ret = sys_clone_thread(helper_main, s->stack + STACK_SIZE,
			       (void *)(uintptr_t)id, (int *)&s->tid);
	if (ret < 0)
		return (int)ret;
	life.current = s;
	return 0;
}

/*
 * The current helper, which serves the current set (so the set's pipe
 * wakes it, the only thread waiting there), is to leave before another
 * starts: it may hold ids the program has since given up.  Under the
 * lock: the helper sees the new id without it, wherever it waits.
 */
static void retire_current(void)
{
	struct helper_slot *s = life.current;
	int t;

	atomic_store_explicit(&life.id, life.id + 1, memory_order_relaxed);
	life.state = HELPER_NONE;
	aioreap_helper_kick();
	sys_futex_wake((int *)&lock_word, INT_MAX);
	/* Acquire: the kernel's clearing of the id comes after the
	 * thread's last use of its stack. */
	while (s && (t = atomic_load_explicit(&s->tid, memory_order_acquire)))
		sys_futex_wait_shared((int *)&s->tid, t);
}
#endif

/* The calling thread's ids; 1 if they are the helper's. */
static int ids_now(unsigned uid[3], unsigned gid[3])
{
	sys_getresuid(uid);
	sys_getresgid(gid);
	return !memcmp(uid, life.uid, sizeof(life.uid)) &&
	       !memcmp(gid, life.gid, sizeof(life.gid));
}

int aioreap_thread_ensure(void)
{
	unsigned gen = aioreap_helper_set_gen(), uid[3], gid[3];
	int same = ids_now(uid, gid), ret;

	if (life.state == HELPER_RUNNING && life.gen == gen && same)
		return 0;
#if !HELPER_IS_PTHREAD
	/* The program changed ids (a pthread helper follows such changes
	 * with the C library's other threads). */
	if (life.state == HELPER_RUNNING && life.gen == gen)
		retire_current();
#endif
	if (life.state == HELPER_RUNNING)
		aioreap_helper_kick();	/* the old one leaves, if it wakes */
	/* Called with every signal blocked (the lock's rule), which the
	 * helper inherits until it blocks them all itself. */
	/* The new id first: the new helper looks at it from its start, and
	 * any older one leaves on seeing it. */
	atomic_store_explicit(&life.id, life.id + 1, memory_order_relaxed);
	ret = helper_start(life.id);
	if (ret < 0)
		return ret;
	life.state = HELPER_RUNNING;
	life.gen = gen;
	memcpy(life.uid, uid, sizeof(uid));
	memcpy(life.gid, gid, sizeof(gid));
	return 0;
}

/* Leaving the lock: a helper while there is work, none once there is
 * not (the idle helper is woken to find that out). */
static void settle(void)
{
	if (busy())
		aioreap_thread_ensure();	/* failing: the next call */
	else if (life.state == HELPER_RUNNING)
		aioreap_helper_kick();
}

/* --- the lock for program threads -------------------------------------- */

void aioreap_pe_enter(sigset_t *old)
{
	sigset_t all;

	/* Leaves the C library's internal signals alone; errno untouched. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	lock();
	recycle();
}

void aioreap_pe_leave(const sigset_t *old)
{
	recycle();
	settle();
	unlock();
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* For threads that keep every signal blocked for good (async submission's
 * workers): the same lock, without the mask's two system calls. */
void aioreap_pe_enter_blocked(void)
{
	lock();
	recycle();
}

void aioreap_pe_leave_blocked(void)
{
	recycle();
	settle();
	unlock();
}

/* --- fork ---------------------------------------------------------------- */

/* A pthread helper created just before a fork may still hold the C
 * library's or a sanitizer's internal locks, which the child would
 * inherit held: wait (lock held) until it runs our code.  A clone helper
 * never enters the C library. */
void aioreap_thread_fork_prepare(void)
{
	while (HELPER_IS_PTHREAD && life.state == HELPER_RUNNING &&
	       !atomic_load_explicit(&life.started, memory_order_acquire))
		sys_futex_wait((int *)&life.started, 0);
}

void aioreap_thread_reset_in_child(void)
{
	unsigned i;

	life.state = HELPER_NONE;
	life.current = NULL;
	for (i = 0; i < STACK_SLOTS; i++)
		atomic_store_explicit(&life.slot[i].tid, 0,
				      memory_order_relaxed);
}
