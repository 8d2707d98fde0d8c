/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Async submission's workers (the design is in async_submit.c): threads
 * that submit, blocking, the reads and writes the kernel would have held
 * io_submit for, each on the context the program chose.
 *
 * Records wait in one queue (under the emulation's lock, linked through
 * qnext, in state REC_FIRED: not in the kernel).  A worker takes the
 * first, marks it REC_DELIVERED and its context busy, lets go of the lock
 * and submits; the event then arrives in the program's ring like any
 * other.  A submission the kernel refuses for a full ring is tried again
 * a millisecond later; any other refusal completes the iocb with that
 * error, through a bell: a 0-byte read of a new memfd, submitted in the
 * record's name, whose event the reap rewrites into the error.
 *
 * Workers start when something is queued and none is idle (at most
 * MAX_WORKERS; the program's thread starts only the first, and each
 * worker that leaves work queued behind it the next), and leave after
 * IDLE_MS with nothing queued: a process
 * with nothing queued keeps no thread and no timer.  They are the C
 * library's threads (pthreads): what they run is the program's own I/O,
 * so the process may well wait for them, and they call into the C
 * library.  They block every signal.
 *
 * io_destroy marks its context dying (poll_destroy.c), then, under the
 * lock, drops the context's queued records and waits until no worker is
 * inside a submission on it: after that no worker can submit on it, so a
 * context io_setup makes later at the same address gets nothing of the
 * old one's.  fork: the child has neither queue nor workers.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "async.h"
#include "export.h"
#include "fd_id.h"
#include "poll_emul.h"
#include "poll_helper.h"
#include "poll_rec.h"
#include "raw_syscall.h"
#include "user_ptr.h"

#ifndef RWF_NOWAIT
# define RWF_NOWAIT	0x00000008
#endif
#define MAX_WORKERS	32
#define IDLE_MS		50
#define FULL_RETRY_MS	1

static struct {
	struct poll_rec *head, *tail;	/* the queue */
	unsigned idle;
	/* The context each worker is submitting on, or NULL. */
	io_context_t busy[MAX_WORKERS];
	unsigned used_slots;		/* bit i: busy[i] has a worker */
	/* Each worker's line (write_key): the key of the write in its
	 * hands (0: none), and the records of that key queued meanwhile,
	 * in order, which it takes before anything else. */
	struct line {
		uint64_t key;
		struct poll_rec *head, *tail;
	} line[MAX_WORKERS];
} pool;

_Static_assert(MAX_WORKERS <= sizeof(pool.used_slots) * CHAR_BIT,
	       "a bit of used_slots for each worker");

/* Under the lock: how many workers there are, from the slots they hold,
 * so that no separate count can disagree with them. */
static unsigned worker_count(void)
{
	return (unsigned)__builtin_popcount(pool.used_slots);
}

/* Futex words: bumped (under the lock) when work is queued, and when a
 * worker leaves a submission. */
static _Atomic unsigned work_seq, busy_seq;

struct poll_rec *_Atomic aioreap_async_redrive_head;

static _Atomic unsigned long long counts[ASYNC_COUNTS];

void aioreap_async_count(enum async_count which)
{
	atomic_fetch_add_explicit(&counts[which], 1, memory_order_relaxed);
}

AIO_PUBLIC int io_async_stats(struct io_async_stats *stats, size_t size)
{
	struct io_async_stats s;

	if (!stats || !size)
		return -EINVAL;
	if (size > sizeof(s))
		size = sizeof(s);
	memset(&s, 0, sizeof(s));
	s.inline_done = atomic_load_explicit(&counts[ASYNC_INLINE],
					     memory_order_relaxed);
	s.to_workers = atomic_load_explicit(&counts[ASYNC_TO_WORKERS],
					    memory_order_relaxed);
	s.redriven = atomic_load_explicit(&counts[ASYNC_REDRIVEN],
					  memory_order_relaxed);
	s.cancelled = atomic_load_explicit(&counts[ASYNC_CANCELLED],
					   memory_order_relaxed);
	s.failed = atomic_load_explicit(&counts[ASYNC_FAILED],
					memory_order_relaxed);
	/* EFAULT where stats is not writable, as from a system call. */
	return aioreap_user_store(stats, &s, size);
}

/* Under the lock: r no longer tried without blocking. */
void aioreap_async_unmark(struct poll_rec *r)
{
	if (r->nowait)
		r->carry.aio_rw_flags &= ~(uint32_t)RWF_NOWAIT;
	r->nowait = 0;
}

/* The reap's side (poll_emul.c's rewrite calls it for each claimed async
 * record). */
int aioreap_async_complete(struct poll_rec *r, const struct io_event *in,
			   struct io_event *out)
{
	long res = r->err ? r->err : (long)in->res;
	unsigned long res2 = in->res2;

	if (r->nowait && (res == -EAGAIN || res == -EOPNOTSUPP)) {
		aioreap_async_note_try(r->user_fd, r->carry.aio_lio_opcode,
				       res);
		aioreap_async_redrive(r);
		return 0;
	}
	if (r->nowait) {
		aioreap_async_note_try(r->user_fd, r->carry.aio_lio_opcode,
				       res);
		aioreap_async_count(ASYNC_INLINE);
	}
	memcpy(out, &r->user_data, sizeof(r->user_data));
	out->obj = r->user;
	out->res = (unsigned long)res;
	out->res2 = res2;
	/* Done with: no descriptor of the library's outlives its event. */
	aioreap_rec_close_dups(r);
	aioreap_rec_recycle_push(r);
	return 1;
}

/*
 * Tries that keep failing, by descriptor number and direction.  Writes:
 * ext4 and tmpfs on Linux 6.18 have no non-blocking buffered write
 * (EOPNOTSUPP, as the completion or at submission), so each try costs a
 * system call and a reap for nothing.  Reads: a file read at random on a
 * cold cache fails nearly every try (-EAGAIN), and each failure adds the
 * try's system call and a hand-over to the request's time.  After
 * memo_after refusals in a row (a long run for reads, which hit the
 * cache now and then), that direction of the descriptor goes straight
 * to a worker, but for one try in MEMO_PROBE (the cache may have warmed,
 * the number may name another file by now); a try that completes
 * without blocking forgets the refusals.  Relaxed: a stale count only
 * costs a try, or saves one.
 */
#define MEMO_FDS	1024
#define MEMO_PROBE	64
static const unsigned char memo_after[2] = { 16, 4 };	/* read, write */
static _Atomic unsigned char refusals[2][MEMO_FDS];
/* 1: the last write tried on the descriptor was refused with -EOPNOTSUPP
 * (no non-blocking write on that file at all). */
static _Atomic unsigned char writes_unsupported[MEMO_FDS];
static _Atomic unsigned memo_tries;

static int is_write(unsigned opcode)
{
	return opcode == IO_CMD_PWRITE || opcode == IO_CMD_PWRITEV;
}

int aioreap_async_try_pays(int fd, unsigned opcode)
{
	int w = is_write(opcode);

	if (fd < 0 || fd >= MEMO_FDS ||
	    atomic_load_explicit(&refusals[w][fd], memory_order_relaxed) <
		    memo_after[w])
		return 1;
	return atomic_fetch_add_explicit(&memo_tries, 1,
					 memory_order_relaxed) %
		       MEMO_PROBE == 0;
}

void aioreap_async_note_try(int fd, unsigned opcode, long res)
{
	int w = is_write(opcode);
	int done = res != -EAGAIN && res != -EOPNOTSUPP;
	_Atomic unsigned char *c;
	unsigned char n;

	if (fd < 0 || fd >= MEMO_FDS)
		return;
	if (w)
		atomic_store_explicit(&writes_unsupported[fd],
				      res == -EOPNOTSUPP,
				      memory_order_relaxed);
	c = &refusals[w][fd];
	n = atomic_load_explicit(c, memory_order_relaxed);
	if (done)
		n = 0;
	else if (n < memo_after[w])
		n++;
	atomic_store_explicit(c, n, memory_order_relaxed);
}

/*
 * Buffered writes to one file from one context go to the workers one at
 * a time.  ext4 and tmpfs (Linux 6.18) refuse RWF_NOWAIT buffered writes
 * with -EOPNOTSUPP and hold the file's inode lock through each buffered
 * write: with up to MAX_WORKERS threads writing one file, the workers
 * spent their time waiting for that lock, not writing (random 4 KiB
 * writes at queue depth 32 on ext4: 20 to 25 us of CPU a write, against
 * 10 to 12 with one worker at a time on the file).  A worker that takes
 * such a write keeps its key until the writes queued behind it (its
 * line) are done.
 * Regular files of those two file systems only, as the library's
 * duplicate names them (the file the write goes to, whatever the
 * program's number names now): a FIFO or a terminal also answers
 * -EOPNOTSUPP, and each of its writes may wait for a reader; a FUSE
 * server may run writes to one file side by side; neither must have one
 * write hold the next back.  By context as well: a worker whose
 * submission finds the ring full keeps the write in hand and waits for
 * room, and writes on other contexts must not wait with it.  The key mixes the
 * context's address with the file's device and inode numbers; two
 * files that share a key only share a line.  0: not put in line.
 */
uint64_t aioreap_async_write_key(const struct poll_rec *r)
{
	struct fd_id id;
	uint64_t key;
	int fd = r->user_fd;

	if (!is_write(r->carry.aio_lio_opcode) || fd < 0 || fd >= MEMO_FDS ||
	    r->kfd < 0 ||
	    !atomic_load_explicit(&writes_unsupported[fd],
				  memory_order_relaxed) ||
	    !aioreap_fd_write_locked(r->kfd, &id))
		return 0;
	key = (uint64_t)(uintptr_t)r->ctx * 0x9e3779b97f4a7c15ull;
	key ^= id.ino * 0xc2b2ae3d27d4eb4full;
	key ^= id.dev * 0x165667b19e3779f9ull;
	return key | 1;
}

/* --- the queue, under the lock ----------------------------------------- */

static void *worker_main(void *arg);
static int serve(struct poll_rec *r, int worker, unsigned slot);

/* Start a worker: 1 if it started. */
static int start_worker(void)
{
	pthread_attr_t attr;
	pthread_t t;
	unsigned slot;
	int ok;

	if (worker_count() >= MAX_WORKERS)
		return 0;
	for (slot = 0; pool.used_slots & (1u << slot); slot++)
		;
	/* Called with every signal blocked (the lock's rule, and a
	 * worker's own mask): the worker starts with them all blocked. */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	ok = pthread_create(&t, &attr, worker_main,
			    (void *)(uintptr_t)slot) == 0;
	pthread_attr_destroy(&attr);
	if (ok)
		pool.used_slots |= 1u << slot;
	return ok;
}

/* Under the lock: is every worker inside a submission (busy[] holds
 * its context meanwhile)? */
static int all_submitting(void)
{
	unsigned i, n = 0;

	for (i = 0; i < MAX_WORKERS; i++)
		n += pool.busy[i] != NULL;
	return n == worker_count();
}

/*
 * A worker for what is queued: wake an idle one, or start one.  Further
 * workers are mostly started by the busy ones (worker_main), not here:
 * starting a thread takes tens of microseconds, and here that would be
 * inside the program's io_submit.  But where every worker is inside a
 * submission, which may last for ever (a read of a FIFO nobody writes),
 * none of them will come back to start one: then here.
 */
static void wake_worker(void)
{
	atomic_fetch_add_explicit(&work_seq, 1, memory_order_relaxed);
	if (pool.idle)
		sys_futex_wake((int *)&work_seq, 1);
	else if (all_submitting())
		start_worker();
}

/* Take the first record of a list that matches (ctx NULL: any), or
 * NULL. */
static struct poll_rec *take_from(struct poll_rec **head,
				  struct poll_rec **tail, io_context_t ctx,
				  const struct iocb *iocb)
{
	struct poll_rec **p = head, *prev = NULL, *r;

	for (; (r = *p); prev = r, p = &r->qnext) {
		if (ctx && (r->ctx != ctx || (iocb && r->user != iocb)))
			continue;
		*p = r->qnext;
		if (*tail == r)
			*tail = prev;
		r->qnext = NULL;
		return r;
	}
	return NULL;
}

static void append(struct poll_rec **head, struct poll_rec **tail,
		   struct poll_rec *r)
{
	r->qnext = NULL;
	if (*tail)
		(*tail)->qnext = r;
	else
		*head = r;
	*tail = r;
}

static void prepend(struct poll_rec **head, struct poll_rec **tail,
		    struct poll_rec *r)
{
	r->qnext = *head;
	*head = r;
	if (!*tail)
		*tail = r;
}

/* The line of the worker that holds key, or NULL. */
static struct line *line_of(uint64_t key)
{
	unsigned i;

	if (key)
		for (i = 0; i < MAX_WORKERS; i++)
			if (pool.line[i].key == key)
				return &pool.line[i];
	return NULL;
}

/* Take the first queued record that matches, from the queue or from a
 * worker's line (io_cancel, io_destroy), or NULL. */
static struct poll_rec *take(io_context_t ctx, const struct iocb *iocb)
{
	struct poll_rec *r = take_from(&pool.head, &pool.tail, ctx, iocb);
	unsigned i;

	for (i = 0; !r && ctx && i < MAX_WORKERS; i++)
		r = take_from(&pool.line[i].head, &pool.line[i].tail, ctx,
			      iocb);
	return r;
}

/* What the worker in slot takes next: the first of its line, else the
 * first queued record whose key no other worker holds (one that another
 * holds joins that one's line: each record moves at most once), which
 * it then holds the key of; NULL when there is nothing. */
static struct poll_rec *worker_take(unsigned slot)
{
	struct line *mine = &pool.line[slot], *other;
	struct poll_rec *r;

	if ((r = take_from(&mine->head, &mine->tail, NULL, NULL)))
		return r;
	mine->key = 0;
	while ((r = take_from(&pool.head, &pool.tail, NULL, NULL))) {
		if (!(other = line_of(r->wkey))) {
			mine->key = r->wkey;
			return r;
		}
		append(&other->head, &other->tail, r);
	}
	return NULL;
}

void aioreap_async_queue(struct poll_rec *r)
{
	struct line *line;

	aioreap_async_unmark(r);
	rec_set(r, REC_FIRED);
	/* Behind a write to the same file in a worker's hands: that
	 * worker takes it next, and nobody else may. */
	if ((line = line_of(r->wkey))) {
		append(&line->head, &line->tail, r);
		return;
	}
	append(&pool.head, &pool.tail, r);
	wake_worker();
	/* No worker, and none could start (a limit on threads, a sandbox
	 * that refuses clone): the caller does what stock libaio does,
	 * blocking, rather than leave the request unserved.  A full ring
	 * leaves the rest queued for the next call that queues. */
	while (!worker_count() && (r = take(NULL, NULL)) && serve(r, 0, 0))
		;
}

void aioreap_async_redrive(struct poll_rec *r)
{
	struct poll_rec *old = atomic_load_explicit(
		&aioreap_async_redrive_head, memory_order_relaxed);

	aioreap_async_count(ASYNC_REDRIVEN);
	/* Release: the link is visible to whoever takes the list. */
	do
		r->dnext = old;
	while (!atomic_compare_exchange_weak_explicit(
		&aioreap_async_redrive_head, &old, r, memory_order_release,
		memory_order_relaxed));
}

void aioreap_async_drain_locked(void)
{
	struct poll_rec *r, *rev = NULL, *next;

	if (!atomic_load_explicit(&aioreap_async_redrive_head,
				  memory_order_relaxed))
		return;
	/* Acquire: pairs with each push's release. */
	r = atomic_exchange_explicit(&aioreap_async_redrive_head, NULL,
				     memory_order_acquire);
	for (; r; r = next) {	/* oldest first */
		next = r->dnext;
		r->dnext = rev;
		rev = r;
	}
	for (r = rev; r; r = next) {
		next = r->dnext;
		aioreap_async_queue(r);
	}
}

void aioreap_async_kick(void)
{
	sigset_t old;

	aioreap_pe_enter(&old);
	aioreap_async_drain_locked();
	aioreap_pe_leave(&old);
}

struct poll_rec *aioreap_async_unqueue_one(io_context_t ctx,
					   const struct iocb *iocb)
{
	return take(ctx, iocb);
}

static int ctx_busy(io_context_t ctx)
{
	unsigned i;

	for (i = 0; i < MAX_WORKERS; i++)
		if (pool.busy[i] == ctx)
			return 1;
	return 0;
}

/* Under the lock (old: the caller's mask): ctx's queued records freed,
 * and none is in a worker's hands; the lock is let go meanwhile. */
static void quiesce(io_context_t ctx, sigset_t *old)
{
	struct poll_rec *r;
	unsigned seq;

	for (;;) {
		/* Re-drives a reap of the dying context queued: dropped
		 * (workers also skip a dying context's). */
		aioreap_async_drain_locked();
		while ((r = take(ctx, NULL)))
			aioreap_rec_free(r);
		if (!ctx_busy(ctx))
			return;
		seq = atomic_load_explicit(&busy_seq, memory_order_relaxed);

		aioreap_pe_leave(old);
		sys_futex_wait((int *)&busy_seq, seq);
		aioreap_pe_enter(old);
	}
}

void aioreap_async_forget(io_context_t ctx)
{
	struct poll_rec *r;
	unsigned pos = 0;
	sigset_t old;

	/* Not a context address: the kernel refuses it, no record has it. */
	if (!ctx || ((uintptr_t)ctx & 0xfff))
		return;
	aioreap_pe_enter(&old);
	quiesce(ctx, &old);
	while ((r = aioreap_rec_each(&pos))) {
		if (r->ctx != ctx || !r->async)
			continue;
		/* In the kernel, unless a reaper claimed it (then it is
		 * the reaper's): the kernel drops its event with ctx. */
		if (rec_state(r) == REC_DELIVERED &&
		    rec_move(r, REC_DELIVERED, REC_FIRED))
			aioreap_rec_free(r);
	}
	aioreap_pe_leave(&old);
}

void aioreap_async_reset_in_child(void)
{
	unsigned i;

	memset(&pool, 0, sizeof(pool));
	for (i = 0; i < ASYNC_COUNTS; i++)	/* the child's own, from 0 */
		atomic_store_explicit(&counts[i], 0, memory_order_relaxed);
	atomic_store_explicit(&aioreap_async_redrive_head, NULL,
			      memory_order_relaxed);
}

/* --- the worker ---------------------------------------------------------- */

/* Under the lock: r's submission was refused with err: its completion
 * says so, through a bell in r's name.  0, or -errno when even that is
 * refused (the context is gone, and r's event with it). */
static long ring_error(struct poll_rec *r, long err)
{
	struct iocb *one = (struct iocb *)&r->carry;
	long fd = aioreap_fd_above_stdio(
		sys_memfd_create("libaio-async-bell", MFD_CLOEXEC)), ret;

	if (fd < 0)
		fd = aioreap_fd_above_stdio(sys_openat(
			AT_FDCWD, "/dev/zero", O_RDONLY | O_CLOEXEC));
	r->err = err;
	r->carry.aio_lio_opcode = IO_CMD_PREAD;
	if (fd < 0 && r->kfd >= 0) {
		/* No number left for a bell: a 0-byte op on the request's
		 * own file, which completes at once (a write where the
		 * file is not open for reading). */
		long fl = sys_fcntl(r->kfd, F_GETFL, 0);

		if (fl >= 0 && (fl & O_ACCMODE) == O_WRONLY)
			r->carry.aio_lio_opcode = IO_CMD_PWRITE;
		r->carry.aio_fildes = (uint32_t)r->kfd;
	} else if (fd < 0) {
		return fd;
	} else {
		r->carry.aio_fildes = (uint32_t)fd;
	}
	r->carry.aio_buf = 0;
	r->carry.aio_nbytes = 0;
	r->carry.aio_offset = 0;
	r->carry.aio_rw_flags = 0;
	/* Nothing that could have been the refusal's reason, so that the
	 * bell itself is taken: only the program's eventfd stays. */
	r->carry.aio_reserved2 = 0;
	r->carry.aio_reqprio = 0;
	r->carry.aio_flags &= KIOCB_FLAG_RESFD;
	rec_set(r, REC_DELIVERED);
	ret = aio_sys_submit(r->ctx, 1, &one);
	if (ret != 1 && (r->carry.aio_flags & KIOCB_FLAG_RESFD)) {
		/* The program's eventfd is gone: the event all the same. */
		r->carry.aio_flags &= ~KIOCB_FLAG_RESFD;
		ret = aio_sys_submit(r->ctx, 1, &one);
	}
	if (fd >= 0)
		sys_close((int)fd);	/* the kernel holds it, or never will */
	if (ret == 1)
		return 0;
	rec_move(r, REC_DELIVERED, REC_FIRED);
	return ret;
}

/* Wait, with the lock let go, for work queued after seq: 0, or 1 when
 * IDLE_MS passed with none. */
static int idle_wait(unsigned seq)
{
	const __kernel_long_t ts[2] = { 0, (__kernel_long_t)IDLE_MS * 1000000 };
	long ret;

	pool.idle++;
	aioreap_pe_leave_blocked();
	ret = sys_futex_wait_for((int *)&work_seq, seq, ts);
	aioreap_pe_enter_blocked();
	pool.idle--;
	return ret == -ETIMEDOUT || ret == -ENOSYS;
}

static void nap_ms(int ms)
{
	static int never;
	const __kernel_long_t ts[2] = { 0, (__kernel_long_t)ms * 1000000 };

	sys_futex_wait_for(&never, 0, ts);
}

/*
 * Under the lock: submit r, blocking, on its context.  A worker (slot
 * its own) lets go of the lock meanwhile and marks the context busy; the
 * program thread that serves the queue itself when no worker could
 * start keeps it.  0 when the ring is full and r is
 * back at the queue's head, else 1 (in the kernel, its error on its way
 * to the ring, or dropped with its context).
 */
static int serve(struct poll_rec *r, int worker, unsigned slot)
{
	io_context_t ctx = r->ctx;
	struct iocb *one = (struct iocb *)&r->carry;
	long ret;

	if (aioreap_poll_ctx_dying(ctx)) {
		aioreap_rec_free(r);	/* as the kernel drops it */
		return 1;
	}
	/* Before the submission: its event may be reaped first. */
	rec_set(r, REC_DELIVERED);
	if (worker) {
		pool.busy[slot] = ctx;
		aioreap_pe_leave_blocked();
	}
	ret = aio_sys_submit(ctx, 1, &one);
	if (worker) {
		aioreap_pe_enter_blocked();
		pool.busy[slot] = NULL;
		atomic_fetch_add_explicit(&busy_seq, 1, memory_order_relaxed);
		sys_futex_wake((int *)&busy_seq, INT_MAX);
	}
	if (ret == 1)
		return 1;
	/* Not in the kernel, so no event names it: still ours. */
	rec_move(r, REC_DELIVERED, REC_FIRED);
	if (ret == -EAGAIN) {
		/* A full ring: a reap makes room, and tells nobody.  Back
		 * at the head of the worker's line while it holds r's key
		 * (worker_take), else of the queue. */
		if (worker && r->wkey)
			prepend(&pool.line[slot].head, &pool.line[slot].tail,
				r);
		else
			prepend(&pool.head, &pool.tail, r);
		return 0;
	}
	aioreap_async_count(ASYNC_FAILED);
	if (ring_error(r, ret) < 0)
		aioreap_rec_free(r);
	return 1;
}

static void *worker_main(void *arg)
{
	unsigned slot = (unsigned)(uintptr_t)arg;

	/* Started with every signal blocked (wake_worker), for good. */
	aioreap_pe_enter_blocked();
	for (;;) {
		struct poll_rec *r = worker_take(slot);

		if (r) {
			/* More queued and nobody idle: one more worker, up to
			 * MAX_WORKERS (each new one does the same). */
			if (pool.head && !pool.idle)
				start_worker();
			if (!serve(r, 1, slot)) {
				aioreap_pe_leave_blocked();
				nap_ms(FULL_RETRY_MS);
				aioreap_pe_enter_blocked();
			}
			continue;
		}
		/* Woken for work another worker took: wait again. */
		if (idle_wait(atomic_load_explicit(&work_seq,
						   memory_order_relaxed)) &&
		    !pool.head)
			break;	/* IDLE_MS with nothing queued */
	}
	pool.used_slots &= ~(1u << slot);
	aioreap_pe_leave_blocked();
	return NULL;
}
