/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The poll emulation's moving parts: the epoll set, the helper thread that
 * waits on it, and the doorbells that carry completions into a context's
 * ring.  Everything here runs under pe_lock except the helper's wait.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

#include "internal.h"
#include "poll_emul.h"
#include "poll_rec.h"
#include "syscall.h"

/* epoll data of the wake-up eventfd; no record token is ever this. */
#define WAKE_TOKEN	UINT64_MAX
/* How long the helper sleeps before retrying doorbells refused with
 * EAGAIN (a full ring): only while some are waiting. */
#define RETRY_MS	5
/* Doorbells rung in one io_submit. */
#define BELL_BATCH	64

static int epfd = -1;		/* the process-wide epoll set */
static int wakefd = -1;		/* eventfd in that set: "look again" */
static int bellfd = -1;		/* memfd (or /dev/zero) the doorbells read */
static int helper_running;
static struct poll_rec *q_head, *q_tail;	/* completions awaiting a bell */

/*
 * The doorbell iocbs.  Their addresses are how poll_emul_translate tells
 * a doorbell event from the application's: the kernel reports them in
 * io_event.obj and no application iocb can live here.  They are filled
 * and submitted only under pe_lock; the kernel copies each at submission,
 * so reusing them for the next batch is safe.
 */
static struct iocb bells[BELL_BATCH];
static char bell_byte;

int helper_is_doorbell(const struct iocb *obj)
{
	uintptr_t a = (uintptr_t)obj, b = (uintptr_t)bells;

	return a - b < sizeof(bells);
}

/* POLL* and EPOLL* bits agree on most ABIs but not all (POLLWRNORM and
 * POLLWRBAND differ on MIPS and SPARC, for one), so translate by name. */
static const struct {
	unsigned short p;
	unsigned e;
} poll_epoll_map[] = {
	{ POLLIN, EPOLLIN },		{ POLLPRI, EPOLLPRI },
	{ POLLOUT, EPOLLOUT },		{ POLLERR, EPOLLERR },
	{ POLLHUP, EPOLLHUP },		{ POLLRDNORM, EPOLLRDNORM },
	{ POLLRDBAND, EPOLLRDBAND },	{ POLLWRNORM, EPOLLWRNORM },
	{ POLLWRBAND, EPOLLWRBAND },	{ POLLMSG, EPOLLMSG },
	{ POLLRDHUP, EPOLLRDHUP },
};

static unsigned translate_bits(unsigned ev, int to_epoll)
{
	unsigned i, out = 0;

	for (i = 0; i < sizeof(poll_epoll_map) / sizeof(poll_epoll_map[0]); i++) {
		unsigned from = to_epoll ? poll_epoll_map[i].p : poll_epoll_map[i].e;
		unsigned to = to_epoll ? poll_epoll_map[i].e : poll_epoll_map[i].p;

		if (ev & from)
			out |= to;
	}
	return out;
}

static unsigned epoll_bits(unsigned ev)
{
	return translate_bits(ev, 1);
}

static unsigned poll_bits(unsigned ev)
{
	return translate_bits(ev, 0);
}

static void kick(void)
{
	uint64_t one = 1;

	if (wakefd >= 0)
		sys_write(wakefd, &one, sizeof(one));
}

static void list_append(struct poll_rec **head, struct poll_rec **tail,
			struct poll_rec *r)
{
	r->qnext = NULL;
	if (*tail)
		(*tail)->qnext = r;
	else
		*head = r;
	*tail = r;
}

static void queue_push(struct poll_rec *r)
{
	list_append(&q_head, &q_tail, r);
}

/* Move up to max of ctx's queued records, in order, from the queue to the
 * end of the list head/tail.  Returns how many moved. */
static long take_ctx(io_context_t ctx, long max, struct poll_rec **head,
		     struct poll_rec **tail)
{
	struct poll_rec *r, *prev = NULL, *next;
	long n = 0;

	for (r = q_head; r && n < max; r = next) {
		next = r->qnext;
		if (r->ctx != ctx) {
			prev = r;
			continue;
		}
		if (prev)
			prev->qnext = next;
		else
			q_head = next;
		if (q_tail == r)
			q_tail = prev;
		list_append(head, tail, r);
		n++;
	}
	return n;
}

static void prep_bell(struct iocb *b, struct poll_rec *r)
{
	struct kernel_iocb k;
	uint64_t token = rec_token(r);

	memset(&k, 0, sizeof(k));
	k.aio_data = token;
	k.aio_lio_opcode = IO_CMD_PREAD;
	k.aio_fildes = (uint32_t)bellfd;
	k.aio_buf = (uintptr_t)&bell_byte;
	if (r->resfd >= 0) {
		k.aio_flags = KIOCB_FLAG_RESFD;
		k.aio_resfd = (uint32_t)r->resfd;
	}
	memcpy(b, &k, sizeof(k));
}

static void delivered(struct poll_rec *r)
{
	/* Relaxed: pe_lock orders it for poll_emul_translate. */
	atomic_store_explicit(&r->state, REC_DELIVERED, memory_order_relaxed);
	if (r->resfd >= 0) {
		sys_close(r->resfd);
		r->resfd = -1;
	}
}

static int open_bellfd(void);

/* Take ctx's records out of the queue; free them if asked. */
static void unqueue_ctx(io_context_t ctx, int free_them)
{
	struct poll_rec *head = NULL, *tail = NULL, *r, *next;

	take_ctx(ctx, LONG_MAX, &head, &tail);
	for (r = head; r; r = next) {
		next = r->qnext;
		r->qnext = NULL;
		if (free_them)
			rec_free(r);
	}
}

static void drop_ctx(io_context_t ctx)
{
	unqueue_ctx(ctx, 1);
}

/*
 * Ring every queued doorbell the rings have room for, grouping those of
 * one context into one io_submit.  Whatever a full ring refuses stays
 * queued.  Returns 1 when some remain.
 */
static int flush(void)
{
	struct poll_rec *keep_head = NULL, *keep_tail = NULL;

	while (q_head) {
		struct iocb *list[BELL_BATCH];
		struct poll_rec *grp[BELL_BATCH], *r, *bh = NULL, *bt = NULL;
		io_context_t ctx = q_head->ctx;
		long n = 0, i, ret;

		/* Take up to BELL_BATCH records of ctx out of the queue. */
		take_ctx(ctx, BELL_BATCH, &bh, &bt);
		for (r = bh; r; r = r->qnext) {
			prep_bell(&bells[n], r);
			list[n] = &bells[n];
			grp[n++] = r;
		}

		/* Relaxed: the io_submit below orders it before the event
		 * any reaper can see (usually already set at submission). */
		atomic_store_explicit(&poll_emul_used, 1, memory_order_relaxed);
		ret = aio_sys_submit(ctx, n, list);
		i = 0;
		if (ret > 0)
			for (; i < ret; i++)
				delivered(grp[i]);
		if (ret == -EBADF) {
			/* The application closed our doorbell file (a
			 * close-everything loop): open another, retry. */
			bellfd = open_bellfd();
		} else if (ret < 0 && ret != -EAGAIN && ret != -ENOMEM) {
			/* Not a full ring.  An eventfd the kernel will not
			 * take: ring without it.  A context that is gone
			 * behind our back (destroyed by a raw system call):
			 * nowhere to deliver, drop its records.  Anything
			 * else: drop the first record and go on. */
			r = grp[0];
			if (r->resfd >= 0) {
				sys_close(r->resfd);
				r->resfd = -1;
			} else if (aio_sys_submit(ctx, 0, NULL) < 0) {
				for (; i < n; i++)
					rec_free(grp[i]);
				drop_ctx(ctx);
			} else {
				rec_free(r);
				i = 1;
			}
		}
		/* The rest wait for the next round, in order. */
		for (; i < n; i++)
			list_append(&keep_head, &keep_tail, grp[i]);
		/* ctx is full: set all its other records aside too. */
		if (ret == -EAGAIN || ret == -ENOMEM || (ret >= 0 && ret < n))
			take_ctx(ctx, LONG_MAX, &keep_head, &keep_tail);
	}
	q_head = keep_head;
	q_tail = keep_tail;
	return q_head != NULL;
}

void helper_complete(struct poll_rec *r)
{
	queue_push(r);
	if (flush()) {
		/* A full ring: the helper retries until there is room. */
		if (helper_ensure() == 0)
			kick();
	}
}

void helper_forget_ctx(io_context_t ctx)
{
	unqueue_ctx(ctx, 0);
}

int helper_arm(struct poll_rec *r)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = epoll_bits(r->events) | EPOLLONESHOT;
	ev.data.u64 = rec_token(r);
	return (int)sys_epoll_ctl(epfd, EPOLL_CTL_ADD, r->fd, &ev);
}

void helper_disarm(struct poll_rec *r)
{
	if (r->fd < 0)
		return;
	if (epfd >= 0)
		sys_epoll_ctl(epfd, EPOLL_CTL_DEL, r->fd, NULL);
	sys_close(r->fd);
	r->fd = -1;
}

/* The helper saw r ready: whoever moves it out of ARMED completes it. */
static void fire(uint64_t token, unsigned revents)
{
	struct poll_rec *r = rec_by_token(token);
	int armed = REC_ARMED;

	if (!r)
		return;		/* cancelled or forgotten meanwhile */
	/* Relaxed: pe_lock orders the record; the CAS only picks a winner. */
	if (!atomic_compare_exchange_strong_explicit(&r->state, &armed,
						     REC_FIRED,
						     memory_order_relaxed,
						     memory_order_relaxed))
		return;
	r->res = poll_bits(revents) & (r->events | POLLERR | POLLHUP | POLLNVAL);
	helper_disarm(r);
	queue_push(r);
}

static void *helper_main(void *arg)
{
	struct epoll_event ev[64];
	int my_epfd = (int)(intptr_t)arg;

	for (;;) {
		int ms, i;
		long n;

		pthread_mutex_lock(&pe_lock);
		ms = q_head ? RETRY_MS : -1;
		pthread_mutex_unlock(&pe_lock);

		n = sys_epoll_wait(my_epfd, ev, 64, ms);
		if (n < 0 && n != -EINTR)
			n = 0;

		pthread_mutex_lock(&pe_lock);
		if (epfd != my_epfd) {
			/* Cannot happen in this process: only a fork child
			 * resets the set, and it has no helper thread. */
			pthread_mutex_unlock(&pe_lock);
			return NULL;
		}
		for (i = 0; i < n; i++) {
			if (ev[i].data.u64 == WAKE_TOKEN) {
				uint64_t v;

				sys_read(wakefd, &v, sizeof(v));
				continue;
			}
			fire(ev[i].data.u64, ev[i].events);
		}
		flush();
		pthread_mutex_unlock(&pe_lock);
	}
	return NULL;
}

static int open_bellfd(void)
{
	long fd = sys_memfd_create("libaio-doorbell", MFD_CLOEXEC);

	if (fd < 0)
		fd = sys_openat(AT_FDCWD, "/dev/zero", O_RDONLY | O_CLOEXEC);
	return (int)fd;
}

/*
 * Create the epoll set, the wake-up eventfd, the doorbell file and the
 * helper thread, whichever do not exist yet.  Returns 0 or -errno.
 */
int helper_ensure(void)
{
	if (bellfd < 0) {
		int fd = open_bellfd();

		if (fd < 0)
			return fd;
		bellfd = fd;
	}
	if (epfd < 0) {
		long e = sys_epoll_create1(EPOLL_CLOEXEC), w;
		struct epoll_event ev;

		if (e < 0)
			return (int)e;
		w = sys_eventfd2(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (w < 0) {
			sys_close((int)e);
			return (int)w;
		}
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u64 = WAKE_TOKEN;
		if (sys_epoll_ctl((int)e, EPOLL_CTL_ADD, (int)w, &ev) < 0) {
			sys_close((int)w);
			sys_close((int)e);
			return -ENOMEM;
		}
		epfd = (int)e;
		wakefd = (int)w;
	}
	if (!helper_running) {
		pthread_attr_t attr;
		pthread_t tid;
		sigset_t all, old;
		int saved = errno, err;

		/* The helper must never take the application's signals:
		 * it inherits this thread's mask, so block everything
		 * while creating it (pthread_sigmask keeps the C library's
		 * internal signals usable). */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		err = pthread_create(&tid, &attr, helper_main,
				     (void *)(intptr_t)epfd);
		pthread_attr_destroy(&attr);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		errno = saved;
		if (err)
			return -err;
		helper_running = 1;
	}
	return 0;
}

void helper_reset_in_child(void)
{
	/* The parent's helper thread does not exist here, and the epoll set
	 * is shared with the parent: never touch it again (EPOLL_CTL_DEL
	 * would remove the parent's registrations).  Start afresh. */
	if (wakefd >= 0)
		sys_close(wakefd);
	if (epfd >= 0)
		sys_close(epfd);
	epfd = wakefd = -1;
	helper_running = 0;
	q_head = q_tail = NULL;
}
