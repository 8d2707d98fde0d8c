/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * IOCB_CMD_POLL done by the library.
 *
 * When: the kernel has no aio poll (before 4.19), LIBAIO_DISABLE=poll
 * asks for the emulation, or the kernel refuses a well-formed poll iocb
 * with EINVAL (ttys and ptys: files with two wait queues).
 *
 * The problem is the wake-up, not the readiness.  Readiness is easy: the
 * fd goes into a process-wide epoll set, one-shot, and a helper thread
 * waits on that set.  But the completion must then reach a thread that
 * may already be asleep inside the io_getevents system call, and only a
 * real AIO completion (or a signal, a timeout, io_destroy) ends that
 * sleep.  User space also may not write events into the kernel's ring.
 *
 * Two designs were weighed:
 *  - A library queue of emulated completions, merged with ring events by
 *    the library's getevents.  It needs a way to interrupt a thread
 *    blocked in the kernel (signals, which the application owns, or
 *    bounded sleeps, which cost latency and CPU) and a second source of
 *    events that every reaper -- io_getevents, io_pgetevents,
 *    io_queue_run, the user-space ring reaper, several threads at once --
 *    must merge without losing or doubling anything.
 *  - A doorbell through the kernel's own completion path (chosen).  When
 *    an emulated poll completes, the helper submits to the user's context
 *    one iocb of its own that completes inside io_submit: a 0-byte read
 *    of a memfd (or /dev/zero).  The kernel puts its event in the ring
 *    and wakes the threads sleeping in io_getevents, exactly as for any
 *    completion.  Its io_event.obj is one of our static doorbell iocbs
 *    and its data is a token naming the record; poll_emul_translate,
 *    which every library reap path runs on what it reaped, rewrites it in
 *    place into the application's completion (data and obj of the user's
 *    iocb, res = ready mask, res2 = 0).  One doorbell is one completion,
 *    so exactly-once delivery is the kernel's (and the ring reaper's), a
 *    blocked thread wakes with no extra machinery, and IOCB_FLAG_RESFD is
 *    honoured by putting the user's eventfd on the doorbell.
 *
 * Limits of the chosen design:
 *  - Capacity differs.  A kernel poll holds a ring slot from submission
 *    until it is reaped, so too many armed polls make io_submit fail
 *    with EAGAIN.  An emulated poll holds no slot while armed; its
 *    doorbell needs one only when it fires.  If the ring is full then,
 *    the doorbell waits in a backlog and the helper retries every few
 *    milliseconds until the application reaps enough to make room.
 *  - Reaping the ring without this library (raw system calls, one's own
 *    ring reader) shows the raw doorbell events.
 *  - A ready fd completes inside io_submit, as in the kernel; one that
 *    becomes ready later completes after a hop through the helper thread
 *    (a context switch or two), where the kernel completes from the
 *    waking context.
 *  - The result is the epoll mask limited to the bits asked for plus
 *    POLLERR|POLLHUP|POLLNVAL; the kernel sometimes reports the whole
 *    wake-up key.  Callers must mask res either way.
 *  - Each armed poll holds a duplicate of its fd (the kernel holds a file
 *    reference too), so the file stays open until the poll completes or
 *    is cancelled.  The emulation also keeps three descriptors of its own
 *    (epoll set, eventfd, memfd), created on first use, close-on-exec.
 *  - A fork child has no helper thread and none of the parent's
 *    contexts: its copies of the parent's pending polls are forgotten.
 *
 * Locking: one mutex (pe_lock) covers records, hash, backlog and helper
 * state, and is held across every doorbell io_submit, so io_destroy's
 * poll_emul_forget can guarantee that no doorbell for the context is in
 * flight or will ever be rung (a new context may reuse the address).
 * The per-record atomic state decides who completes an armed poll when
 * the helper and io_cancel race: whoever moves it out of ARMED.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "features.h"
#include "internal.h"
#include "poll_emul.h"
#include "poll_rec.h"
#include "syscall.h"

_Atomic int poll_emul_used;
pthread_mutex_t pe_lock = PTHREAD_MUTEX_INITIALIZER;

/* --- the record store ------------------------------------------------ */

/*
 * Records live in chunks that are never freed, so a stale token or a
 * pointer read without the lock always points at a record; the generation
 * in the token says whether it is still the same poll.
 */
#define CHUNK_SHIFT	8
#define CHUNK_RECS	(1u << CHUNK_SHIFT)
#define MAX_CHUNKS	4096u		/* a million polls armed at once */
#define HASH_SIZE	256u

static struct poll_rec *chunks[MAX_CHUNKS];
static unsigned nchunks;
static struct poll_rec *free_list;
static struct poll_rec *hash[HASH_SIZE];
static unsigned long live;		/* records not free */

static unsigned hash_of(const struct iocb *cb)
{
	uint64_t h = (uint64_t)((uintptr_t)cb >> 6) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 56) & (HASH_SIZE - 1);
}

uint64_t rec_token(const struct poll_rec *r)
{
	return (uint64_t)r->gen << 32 | r->idx;
}

struct poll_rec *rec_by_token(uint64_t token)
{
	uint32_t idx = (uint32_t)token;
	struct poll_rec *r;

	if (idx >= nchunks * CHUNK_RECS)
		return NULL;
	r = &chunks[idx >> CHUNK_SHIFT][idx & (CHUNK_RECS - 1)];
	/* Relaxed: every writer of state holds pe_lock, as we do. */
	if (r->gen != (uint32_t)(token >> 32) ||
	    atomic_load_explicit(&r->state, memory_order_relaxed) == REC_FREE)
		return NULL;
	return r;
}

static struct poll_rec *rec_alloc(void)
{
	struct poll_rec *r;

	if (!free_list) {
		struct poll_rec *c;
		int saved = errno;
		unsigned i;

		if (nchunks == MAX_CHUNKS)
			return NULL;
		c = calloc(CHUNK_RECS, sizeof(*c));
		errno = saved;
		if (!c)
			return NULL;
		for (i = CHUNK_RECS; i-- > 0;) {
			c[i].idx = nchunks * CHUNK_RECS + i;
			c[i].fd = c[i].resfd = -1;
			c[i].qnext = free_list;
			free_list = &c[i];
		}
		chunks[nchunks++] = c;
	}
	r = free_list;
	free_list = r->qnext;
	r->qnext = NULL;
	r->gen++;
	r->fd = r->resfd = -1;
	live++;
	return r;
}

static void hash_insert(struct poll_rec *r)
{
	unsigned h = hash_of(r->user);

	r->hnext = hash[h];
	hash[h] = r;
}

static void hash_remove(struct poll_rec *r)
{
	struct poll_rec **p = &hash[hash_of(r->user)];

	while (*p && *p != r)
		p = &(*p)->hnext;
	if (*p)
		*p = r->hnext;
	r->hnext = NULL;
}

void rec_free(struct poll_rec *r)
{
	helper_disarm(r);
	if (r->resfd >= 0) {
		sys_close(r->resfd);
		r->resfd = -1;
	}
	hash_remove(r);
	/* Relaxed: under pe_lock, like every other writer. */
	atomic_store_explicit(&r->state, REC_FREE, memory_order_relaxed);
	r->qnext = free_list;
	free_list = r;
	live--;
}

/* --- fork ------------------------------------------------------------ */

static void fork_prepare(void)
{
	pthread_mutex_lock(&pe_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&pe_lock);
}

/* The parent's contexts are not ours: forget every record, closing the
 * duplicates this process inherited, and let a new helper start later. */
static void fork_child(void)
{
	unsigned c, i;

	helper_reset_in_child();	/* first: disarm must not touch epoll */
	for (c = 0; c < nchunks; c++)
		for (i = 0; i < CHUNK_RECS; i++) {
			struct poll_rec *r = &chunks[c][i];

			/* Relaxed: the child has one thread. */
			if (atomic_load_explicit(&r->state,
						 memory_order_relaxed) != REC_FREE)
				rec_free(r);
		}
	pthread_mutex_unlock(&pe_lock);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* --- submission ------------------------------------------------------ */

static int is_poll(const struct iocb *cb)
{
	return !obviously_bad_pointer(cb) && cb->aio_lio_opcode == IO_CMD_POLL;
}

/* Is ctx a live context?  The kernel answers io_submit(ctx, 0) with 0 or
 * EINVAL and does nothing else. */
static int ctx_check(io_context_t ctx)
{
	return (int)aio_sys_submit(ctx, 0, NULL);
}

/* A duplicate that leaves 0-2 alone, close-on-exec. */
static int dup_fd(int fd)
{
	long r = sys_fcntl(fd, F_DUPFD_CLOEXEC, 3);

	if (r == -EINVAL)	/* RLIMIT_NOFILE at 3 or below */
		r = sys_fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return (int)r;
}

/* Does fd name an eventfd?  Only /proc can tell without changing it; if
 * /proc is not mounted, accept and let the doorbell find out. */
static int is_eventfd(int fd)
{
	static const char want[] = "anon_inode:[eventfd]";
	char path[32] = "/proc/self/fd/", num[12], link[sizeof(want)];
	int n = 0, p = 14;
	long len;

	do
		num[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	while (n > 0)
		path[p++] = num[--n];
	path[p] = '\0';
	len = sys_readlinkat(AT_FDCWD, path, link, sizeof(link));
	if (len < 0)
		return 1;
	return len == (long)sizeof(want) - 1 && !memcmp(link, want, len);
}

/*
 * Emulate one poll iocb: check it as the kernel would (same errors, same
 * order), then complete it at once or arm it.  0 or -errno.
 */
static int emulate_one(io_context_t ctx, struct iocb *cb, int ctx_known_ok)
{
	struct kernel_iocb k;
	struct poll_rec *r;
	struct pollfd pfd;
	int fd, resfd = -1, ret;
	long fl;

	memcpy(&k, cb, sizeof(k));
	if (!ctx_known_ok && (ret = ctx_check(ctx)) < 0)
		return ret;
	if (k.aio_reserved2 || (int64_t)k.aio_nbytes < 0)
		return -EINVAL;
	fd = dup_fd((int)k.aio_fildes);
	if (fd < 0)
		return fd == -EINVAL ? -EBADF : fd;
	/* The kernel does not look up O_PATH descriptors for I/O. */
	fl = sys_fcntl(fd, F_GETFL, 0);
	if (fl < 0 || (fl & O_PATH)) {
		ret = -EBADF;
		goto fail;
	}
	if (k.aio_flags & KIOCB_FLAG_RESFD) {
		resfd = dup_fd((int)k.aio_resfd);
		if (resfd < 0) {
			ret = resfd == -EINVAL ? -EBADF : resfd;
			goto fail;
		}
		fl = sys_fcntl(resfd, F_GETFL, 0);
		if (fl < 0 || (fl & O_PATH)) {
			ret = -EBADF;
			goto fail;
		}
		if (!is_eventfd(resfd)) {
			ret = -EINVAL;
			goto fail;
		}
	}
	cb->key = 0;		/* the kernel stores KIOCB_KEY (0) here */
	if (k.aio_buf > 0xffff || k.aio_offset || k.aio_nbytes ||
	    k.aio_rw_flags) {
		ret = -EINVAL;
		goto fail;
	}

	/* Ready now?  The kernel completes those inside io_submit too. */
	pfd.fd = fd;
	pfd.events = (short)k.aio_buf;
	pfd.revents = 0;
	if (sys_ppoll_now(&pfd, 1) < 0)
		pfd.revents = 0;

	pthread_once(&init_once, init);
	/* Relaxed: io_cancel only needs to see it after the application
	 * learnt of this submission, which orders the two; doorbell events
	 * are ordered by the io_submit system call that posts them. */
	atomic_store_explicit(&poll_emul_used, 1, memory_order_relaxed);

	pthread_mutex_lock(&pe_lock);
	ret = helper_ensure();
	r = ret < 0 ? NULL : rec_alloc();
	if (!r) {
		pthread_mutex_unlock(&pe_lock);
		ret = ret < 0 ? ret : -EAGAIN;
		goto fail;
	}
	r->ctx = ctx;
	r->user = cb;
	r->user_data = k.aio_data;
	r->events = (unsigned)k.aio_buf;
	r->fd = fd;
	r->resfd = resfd;
	hash_insert(r);

	r->res = (unsigned short)pfd.revents &
		 (r->events | POLLERR | POLLHUP | POLLNVAL);
	if (!r->res) {
		/* Relaxed: under pe_lock, which the helper takes too. */
		atomic_store_explicit(&r->state, REC_ARMED,
				      memory_order_relaxed);
		ret = helper_arm(r);
		if (ret == 0) {
			pthread_mutex_unlock(&pe_lock);
			return 0;
		}
		/* EPERM: no poll method (regular files, /dev/null); such
		 * files are always ready for reading and writing. */
		r->res = r->events & (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
		if (ret != -EPERM || !r->res) {
			r->fd = -1;		/* never armed */
			r->resfd = -1;		/* the caller closes both */
			rec_free(r);
			pthread_mutex_unlock(&pe_lock);
			if (ret == -EPERM || ret == -ELOOP)
				ret = -EINVAL;
			else if (ret == -ENOSPC)
				ret = -EAGAIN;
			goto fail;
		}
	}
	/* Complete at once; fd was never (or is no longer) in the set.
	 * Relaxed: still under pe_lock. */
	atomic_store_explicit(&r->state, REC_FIRED, memory_order_relaxed);
	sys_close(r->fd);
	r->fd = -1;
	helper_complete(r);
	pthread_mutex_unlock(&pe_lock);
	return 0;

fail:
	if (resfd >= 0)
		sys_close(resfd);
	sys_close(fd);
	return ret;
}

/* nr as the kernel would clamp it: to the ring's size. */
static long clamp_nr(io_context_t ctx, long nr)
{
	struct ctx_entry *e = registry_lookup(ctx);

	if (e && e->nr && nr > (long)e->nr)
		return (long)e->nr;
	return nr;
}

int poll_emul_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	long done = 0;

	if (nr <= 0 || obviously_bad_pointer(ios))
		return (int)aio_sys_submit(ctx, nr, ios);
	/* A context we did not create may be garbage: the kernel would say
	 * EINVAL before reading the array, so ask it before we read. */
	if (!registry_lookup(ctx)) {
		long ret = aio_sys_submit(ctx, 0, NULL);

		if (ret < 0)
			return (int)ret;
	}
	nr = clamp_nr(ctx, nr);
	while (done < nr) {
		long ret, run = 0;

		if (is_poll(ios[done])) {
			ret = emulate_one(ctx, ios[done], done > 0);
			if (ret < 0)
				return done ? (int)done : (int)ret;
			done++;
			continue;
		}
		while (done + run < nr && !is_poll(ios[done + run]))
			run++;
		ret = aio_sys_submit(ctx, run, ios + done);
		if (ret < 0)
			return done ? (int)done : (int)ret;
		done += ret;
		if (ret < run)
			break;
	}
	return (int)done;
}

int poll_emul_resume(io_context_t ctx, long nr, struct iocb **ios, long done)
{
	long err = done < 0 ? done : 0;

	if (done < 0)
		done = 0;
	nr = clamp_nr(ctx, nr);	/* never past the kernel's own clamp */
	if (done >= nr)
		return (int)done;
	/*
	 * Read no entry the kernel has not shown to be readable.  Its EINVAL
	 * for a whole batch means a bad context (an empty submit tells) or a
	 * bad first iocb, which it had copied to judge; an entry it stopped
	 * at without saying why is asked about alone first (an unreadable
	 * one then gives EFAULT, and we stop there).
	 */
	if (err == -EINVAL && aio_sys_submit(ctx, 0, NULL) != 0)
		return (int)err;
	for (;;) {
		struct iocb *cb;
		long ret;

		if (err == 0) {
			ret = aio_sys_submit(ctx, 1, ios + done);
			if (ret == 1)
				goto next;
			if (ret != -EINVAL) {
				err = ret;
				break;
			}
			err = ret;
		}
		cb = ios[done];
		if (!is_poll(cb))
			break;
		/* A poll the kernel refuses with EINVAL: ours if it is
		 * well-formed (emulate_one gives the kernel's errors). */
		ret = emulate_one(ctx, cb, done > 0);
		if (ret < 0) {
			err = ret;
			break;
		}
next:
		done++;
		err = 0;
		if (done == nr)
			break;
		ret = aio_sys_submit(ctx, nr - done, ios + done);
		if (ret == nr - done)
			return (int)nr;
		if (ret < 0 && ret != -EINVAL) {
			err = ret;
			break;
		}
		if (ret < 0)
			err = ret;
		else
			done += ret;
	}
	return done ? (int)done : (int)err;
}

/* --- completion, cancel, destroy --------------------------------------- */

void poll_emul_translate(struct io_event *ev, long n)
{
	long i;
	int locked = 0;

	for (i = 0; i < n; i++) {
		struct poll_rec *r;
		uint64_t token;

		if (!helper_is_doorbell(ev[i].obj))
			continue;
		if (!locked) {
			pthread_mutex_lock(&pe_lock);
			locked = 1;
		}
		memcpy(&token, &ev[i], sizeof(token));	/* the kernel's u64 */
		r = rec_by_token(token);
		/* Relaxed: pe_lock orders it after the helper's store. */
		if (r && atomic_load_explicit(&r->state, memory_order_relaxed) ==
				 REC_DELIVERED) {
			memcpy(&ev[i], &r->user_data, sizeof(r->user_data));
			ev[i].obj = r->user;
			ev[i].res = r->res;
			ev[i].res2 = 0;
			rec_free(r);
		} else {
			/* Only when the context was destroyed while this
			 * thread was reaping it: the poll is gone. */
			memset(&ev[i], 0, sizeof(ev[i]));
			ev[i].res = (unsigned long)-ECANCELED;
		}
	}
	if (locked)
		pthread_mutex_unlock(&pe_lock);
}

int poll_emul_cancel(io_context_t ctx, struct iocb *iocb, int *ret)
{
	struct poll_rec *r, *found = NULL;
	int armed = REC_ARMED;

	if (obviously_bad_pointer(iocb))
		return 0;
	pthread_mutex_lock(&pe_lock);
	for (r = hash[hash_of(iocb)]; r; r = r->hnext) {
		if (r->user != iocb || r->ctx != ctx)
			continue;
		found = r;
		/* Relaxed: under pe_lock, as are all its writers. */
		if (atomic_load_explicit(&r->state, memory_order_relaxed) ==
		    REC_ARMED)
			break;
	}
	if (!found) {
		pthread_mutex_unlock(&pe_lock);
		return 0;	/* not ours: the kernel answers */
	}
	if (iocb->key != 0) {
		*ret = -EINVAL;
	} else if (atomic_compare_exchange_strong_explicit(
			   &found->state, &armed, REC_FIRED,
			   memory_order_relaxed, memory_order_relaxed)) {
		/* Relaxed: pe_lock orders the record; the CAS picks the
		 * winner against a helper that saw the fd ready. */
		found->res = 0;
		helper_disarm(found);
		helper_complete(found);
		*ret = -EINPROGRESS;
	} else {
		*ret = -EINVAL;		/* already fired */
	}
	pthread_mutex_unlock(&pe_lock);
	return 1;
}

void poll_emul_forget(io_context_t ctx)
{
	unsigned c, i;

	/* Relaxed: a record for ctx exists only after a submission on ctx,
	 * which the thread destroying ctx must already be ordered after. */
	if (!atomic_load_explicit(&poll_emul_used, memory_order_relaxed))
		return;
	pthread_mutex_lock(&pe_lock);
	helper_forget_ctx(ctx);
	for (c = 0; c < nchunks && live; c++)
		for (i = 0; i < CHUNK_RECS; i++) {
			struct poll_rec *r = &chunks[c][i];

			/* Relaxed: under pe_lock. */
			if (r->ctx == ctx &&
			    atomic_load_explicit(&r->state,
						 memory_order_relaxed) != REC_FREE)
				rec_free(r);
		}
	pthread_mutex_unlock(&pe_lock);
}
