/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The helper's epoll set, the polls armed in it and the doorbells that
 * carry their completions into the rings; all under the emulation's lock
 * (poll_thread.c), which the helper thread takes too.  Every function
 * here may run in the helper, which is no C library thread: helper_code,
 * raw system calls only, nothing under /proc.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>

#include "compiler.h"
#include "poll_bits.h"
#include "poll_emul.h"
#include "poll_helper.h"
#include "poll_rec.h"
#include "poll_syscall.h"
#include "registry.h"

/* epoll data of the wake-up pipe; no record token is ever this. */
#define WAKE_TOKEN	UINT64_MAX
/* Doorbells rung in one io_submit. */
#define BELL_BATCH	64

helper_code void aioreap_rec_free(struct poll_rec *r)
{
	aioreap_helper_disarm(r);
	aioreap_rec_release(r);
}

static int epfd = -1;		/* the process-wide epoll set */
static int wake_rd = -1;	/* pipe in that set: "look again" */
static int wake_wr = -1;
static int bellfd = -1;		/* memfd (or /dev/zero) the doorbells read */
static struct fd_id wake_id, bell_id;
static int kicked;		/* a byte is in the pipe: no second one */
/* Bumped with each new set: the helper started for an older one leaves
 * when it wakes (poll_thread.c). */
static unsigned set_gen;
/* The set was lost: re-arm every ARMED record in the next one. */
static int need_rearm;
/* Records linked through qnext, in order. */
struct rec_list {
	struct poll_rec *head, *tail;
};
static struct rec_list queue;	/* completions awaiting a bell */

/* The doorbell iocbs: a reap knows a doorbell event by its obj, an
 * address no application iocb can have.  Filled under the lock; the
 * kernel copies them at submission, so the next batch may reuse them. */
static struct iocb bells[BELL_BATCH];
static char bell_byte;

helper_code int aioreap_helper_is_doorbell(const struct iocb *obj)
{
	uintptr_t a = (uintptr_t)obj, b = (uintptr_t)bells;

	return a - b < sizeof(bells);
}

/* Is epfd still our set?  Our pipe (a unique inode) must be registered in
 * it under wake_rd (kcmp); without kcmp, trust a close-on-exec epfd. */
helper_code static int set_is_ours(void)
{
	long r;

	if (epfd < 0 || !aioreap_fd_is(wake_rd, &wake_id) ||
	    !aioreap_fd_is(wake_wr, &wake_id))
		return 0;
	r = aioreap_fd_in_epoll(epfd, wake_rd);
	if (r < 0) {
		r = sys_fcntl(epfd, F_GETFD, 0);
		return r >= 0 && (r & FD_CLOEXEC);
	}
	return (int)r;
}

/* Forget the set and the pipe (closing what is still ours), and let the
 * next ensure make new ones and re-arm. */
helper_code static void set_drop(void)
{
	/* Wake the helper waiting on this set, if the pipe is still ours:
	 * it finds a new generation and leaves. */
	kicked = 0;
	if (aioreap_fd_is(wake_wr, &wake_id))
		aioreap_helper_kick();
	if (set_is_ours())
		sys_close(epfd);
	if (aioreap_fd_is(wake_rd, &wake_id))
		sys_close(wake_rd);
	if (aioreap_fd_is(wake_wr, &wake_id))
		sys_close(wake_wr);
	epfd = wake_rd = wake_wr = -1;
	kicked = 0;
	set_gen++;
	need_rearm = 1;
}

helper_code void aioreap_helper_kick(void)
{
	static const char one = 1;

	if (wake_wr >= 0 && !kicked && sys_write(wake_wr, &one, 1) == 1)
		kicked = 1;
}

helper_code static void list_append(struct rec_list *l, struct poll_rec *r)
{
	r->qnext = NULL;
	if (l->tail)
		l->tail->qnext = r;
	else
		l->head = r;
	l->tail = r;
}

/* Move up to max of ctx's queued records, in order, to the end of to. */
helper_code static long take_ctx(io_context_t ctx, long max, struct rec_list *to)
{
	struct poll_rec *r, *prev = NULL, *next;
	long n = 0;

	for (r = queue.head; r && n < max; r = next) {
		next = r->qnext;
		if (r->ctx != ctx) {
			prev = r;
			continue;
		}
		if (prev)
			prev->qnext = next;
		else
			queue.head = next;
		if (queue.tail == r)
			queue.tail = prev;
		list_append(to, r);
		n++;
	}
	return n;
}

helper_code static void prep_bell(struct iocb *b, struct poll_rec *r)
{
	struct kernel_iocb k;
	uint64_t token = aioreap_rec_token(r);
	int resfd = r->user_resfd;

	memset(&k, 0, sizeof(k));
	k.aio_data = token;
	k.aio_lio_opcode = IO_CMD_PREAD;
	k.aio_fildes = (uint32_t)bellfd;
	k.aio_buf = (uintptr_t)&bell_byte;
	if (resfd >= 0) {
		k.aio_flags = KIOCB_FLAG_RESFD;
		k.aio_resfd = (uint32_t)resfd;
	}
	memcpy(b, &k, sizeof(k));
}

/* The doorbell file: a memfd (its inode is unique), or /dev/zero. */
helper_code static int bell_ensure(void)
{
	long fd;

	if (bellfd >= 0 && aioreap_fd_is(bellfd, &bell_id))
		return 0;
	bellfd = -1;		/* not ours any more (if it ever was) */
	fd = sys_memfd_create("libaio-doorbell", MFD_CLOEXEC);
	if (fd < 0)
		fd = sys_openat(AT_FDCWD, "/dev/zero", O_RDONLY | O_CLOEXEC);
	fd = aioreap_fd_above_stdio(fd);
	if (fd < 0)
		return (int)fd;
	bellfd = (int)fd;
	aioreap_fd_identify(bellfd, &bell_id);
	return 0;
}

helper_code void aioreap_helper_unqueue(io_context_t ctx, int free_them)
{
	struct rec_list l = { NULL, NULL };
	struct poll_rec *r, *next;

	take_ctx(ctx, LONG_MAX, &l);
	for (r = free_them ? l.head : NULL; r; r = next) {
		next = r->qnext;
		aioreap_rec_free(r);
	}
}

/*
 * The kernel refused the doorbells of grp[0..n), one context's, and not
 * for a full ring.  Our doorbell file closed under us: make another.  An
 * eventfd the program closed or replaced since the poll was submitted:
 * ring without it.  A context destroyed by a raw system call: drop its
 * records.  Else drop the first.  Returns how many of grp, from the
 * front, are gone.
 */
helper_code static long refused(io_context_t ctx, struct poll_rec **grp,
				long n)
{
	long i;

	if (!aioreap_fd_is(bellfd, &bell_id)) {
		bellfd = -1;	/* not ours to close */
		bell_ensure();
		return 0;
	}
	if (grp[0]->user_resfd >= 0) {
		grp[0]->user_resfd = -1;
		return 0;
	}
	if (aio_sys_submit(ctx, 0, NULL) < 0) {
		for (i = 0; i < n; i++)
			aioreap_rec_free(grp[i]);
		aioreap_helper_unqueue(ctx, 1);
		return n;
	}
	aioreap_rec_free(grp[0]);
	return 1;
}

/* Ring up to BELL_BATCH of ctx's queued records (into grp, *n of them)
 * in one io_submit.  Returns how many from the front are rung or
 * dropped; *full when the ring had no room for the rest. */
helper_code static long ring(io_context_t ctx, struct poll_rec **grp,
			     long *n, int *full)
{
	struct rec_list l = { NULL, NULL };
	struct iocb *list[BELL_BATCH];
	struct poll_rec *r;
	long i, ret;

	take_ctx(ctx, BELL_BATCH, &l);
	/* DELIVERED first: a reaper may claim it once the kernel posts it. */
	for (i = 0, r = l.head; r; r = r->qnext, i++) {
		prep_bell(&bells[i], r);
		list[i] = &bells[i];
		grp[i] = r;
		rec_set(r, REC_DELIVERED);
	}
	*n = i;
	ret = aio_sys_submit(ctx, i, list);
	/* No event for the others: nobody can claim them. */
	for (i = ret > 0 ? ret : 0; i < *n; i++)
		rec_set(grp[i], REC_FIRED);
	*full = ret == -EAGAIN || ret == -ENOMEM || (ret >= 0 && ret < *n);
	if (ret < 0 && !*full)
		return refused(ctx, grp, *n);
	return ret < 0 ? 0 : ret;
}

/* Ring what the rings have room for, one io_submit per context; what a
 * full ring refuses stays queued, in order.  1 when some remain. */
helper_code int aioreap_helper_flush(void)
{
	struct rec_list keep = { NULL, NULL };

	if (queue.head && bell_ensure() < 0)
		return 1;
	while (queue.head) {
		struct poll_rec *grp[BELL_BATCH];
		io_context_t ctx = queue.head->ctx;
		long i, n;
		int full;

		for (i = ring(ctx, grp, &n, &full); i < n; i++)
			list_append(&keep, grp[i]);
		/* ctx is full: set all its other records aside too. */
		if (full)
			take_ctx(ctx, LONG_MAX, &keep);
	}
	queue = keep;
	return queue.head != NULL;
}

helper_code void aioreap_helper_complete(struct poll_rec *r)
{
	list_append(&queue, r);
	aioreap_helper_flush();	/* what stays queued is the helper's */
}

helper_code int aioreap_helper_queued(void)
{
	return queue.head != NULL;
}

helper_code int aioreap_helper_arm(struct poll_rec *r)
{
	struct epoll_event ev;
	long ret, dup;
	int first = r->fd;

	memset(&ev, 0, sizeof(ev));
	ev.events = poll_bits_translate(poll_bits_woken_by(r->events), 1) |
		    EPOLLONESHOT;
	ev.data.u64 = aioreap_rec_token(r);
	/* EEXIST: the set holds this file under this number already, left
	 * by a duplicate of ours that the program closed while the file
	 * stayed open.  It may still serve an armed poll: leave it, and arm
	 * a new duplicate at a higher number. */
	while ((ret = sys_epoll_ctl(epfd, EPOLL_CTL_ADD, r->fd, &ev)) ==
	       -EEXIST) {
		dup = sys_fcntl(r->fd, F_DUPFD_CLOEXEC, r->fd + 1);
		if (r->fd != first)
			sys_close(r->fd);
		r->fd = dup < 0 ? first : (int)dup;
		if (dup < 0)	/* EINVAL: no number left under the limit */
			return dup == -EINVAL ? -EMFILE : (int)dup;
	}
	if (r->fd != first) {
		/* On failure the caller closes first, as it took it. */
		sys_close(ret < 0 ? r->fd : first);
		if (ret < 0)
			r->fd = first;
	}
	return (int)ret;
}

/* Is r->fd still our duplicate?  kcmp against its registration in our
 * set, then the inode and close-on-exec checks. */
helper_code static int dup_is_ours(struct poll_rec *r)
{
	if (r->fd_programs)	/* the program's own descriptor, armed */
		return 0;
	if (epfd >= 0 && aioreap_fd_in_epoll(epfd, r->fd) == 0)
		return 0;
	return aioreap_fd_is(r->fd, &r->fd_id);
}

helper_code void aioreap_helper_disarm(struct poll_rec *r)
{
	if (r->fd < 0)
		return;
	if (r->fd_programs) {
		/* Out of the set while the number still names the file;
		 * the descriptor itself is the program's. */
		if (epfd >= 0 && aioreap_fd_names(r->fd, &r->fd_id))
			sys_epoll_ctl(epfd, EPOLL_CTL_DEL, r->fd, NULL);
		r->fd_programs = 0;
	} else if (dup_is_ours(r)) {
		if (epfd >= 0)
			sys_epoll_ctl(epfd, EPOLL_CTL_DEL, r->fd, NULL);
		sys_close(r->fd);
	}
	r->fd = -1;
}

/* A new duplicate for r of the program's own descriptor, if that still
 * names the polled file (the program closed ours, not its own); or -1. */
helper_code static int redup(struct poll_rec *r)
{
	long d;

	if (!aioreap_fd_names(r->user_fd, &r->fd_id))
		return -1;
	d = sys_fcntl(r->user_fd, F_DUPFD_CLOEXEC, 3);
	if (d == -EMFILE || d == -EINVAL) {
		r->fd_programs = 1;	/* at the limit: arm the program's */
		return r->user_fd;
	}
	return d < 0 ? -1 : (int)d;
}

/* After a lost set: re-arm each ARMED record, through a new duplicate if
 * the program closed ours; complete it with POLLNVAL only when the
 * program's own descriptor no longer names the file either. */
helper_code static void rearm_all(void)
{
	struct poll_rec *r;
	unsigned pos = 0;

	while ((r = aioreap_rec_each(&pos))) {
		if (rec_state(r) != REC_ARMED)
			continue;
		if (r->fd >= 0 && (r->fd_programs ||
				   !aioreap_fd_is(r->fd, &r->fd_id)))
			r->fd = -1;	/* the program's: never closed */
		r->fd_programs = 0;
		if (r->fd < 0)
			r->fd = redup(r);
		if (r->fd >= 0) {
			if (aioreap_helper_arm(r) == 0)
				continue;
			if (!r->fd_programs)
				sys_close(r->fd);
			r->fd_programs = 0;
		}
		r->fd = -1;
		r->res = POLLNVAL;
		rec_set(r, REC_FIRED);
		list_append(&queue, r);
	}
}

/* The helper saw r ready: whoever moves it out of ARMED completes it. */
helper_code static void fire(uint64_t token, unsigned revents)
{
	struct poll_rec *r = aioreap_rec_by_token(token);

	if (!r || !rec_move(r, REC_ARMED, REC_FIRED))
		return;		/* cancelled or forgotten meanwhile */
	r->res = poll_bits_translate(revents, 0) &
		(poll_bits_woken_by(r->events) | POLLNVAL);
	aioreap_helper_disarm(r);
	list_append(&queue, r);
}

helper_code void aioreap_helper_handle(const struct epoll_event *ev, long n)
{
	long i;

	for (i = 0; i < n; i++) {
		if (ev[i].data.u64 == WAKE_TOKEN) {
			char buf[64];

			while (sys_read(wake_rd, buf, sizeof(buf)) > 0)
				;
			kicked = 0;
			continue;
		}
		fire(ev[i].data.u64, ev[i].events);
	}
}

helper_code int aioreap_helper_wait_fd(void)
{
	return epfd;
}

helper_code unsigned aioreap_helper_set_gen(void)
{
	return set_gen;
}

/* The epoll set and its wake-up pipe (both ends non-blocking). */
helper_code static int set_create(void)
{
	long e = aioreap_fd_above_stdio(sys_epoll_create1(EPOLL_CLOEXEC)), r;
	struct epoll_event ev;
	int p[2];

	if (e < 0)
		return (int)e;
	r = sys_pipe2(p, O_CLOEXEC | O_NONBLOCK);
	if (r == 0) {
		long wr = aioreap_fd_above_stdio(p[1]), rd = aioreap_fd_above_stdio(p[0]);

		if (wr < 0 || rd < 0) {
			if (wr >= 0)
				sys_close((int)wr);
			if (rd >= 0)
				sys_close((int)rd);
			r = wr < 0 ? wr : rd;
		}
		p[0] = (int)rd;
		p[1] = (int)wr;
	}
	if (r < 0) {
		sys_close((int)e);
		return (int)r;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = WAKE_TOKEN;
	if (sys_epoll_ctl((int)e, EPOLL_CTL_ADD, p[0], &ev) < 0) {
		sys_close(p[0]);
		sys_close(p[1]);
		sys_close((int)e);
		return -ENOMEM;
	}
	epfd = (int)e;
	wake_rd = p[0];
	wake_wr = p[1];
	aioreap_fd_identify(wake_rd, &wake_id);
	return 0;
}

/* After a set that could not be rebuilt: every armed poll completes with
 * POLLNVAL rather than wait for a set that is not there. */
helper_code static void fail_armed(void)
{
	struct poll_rec *r;
	unsigned pos = 0;

	while ((r = aioreap_rec_each(&pos))) {
		if (rec_state(r) != REC_ARMED)
			continue;
		aioreap_helper_disarm(r);
		r->res = POLLNVAL;
		rec_set(r, REC_FIRED);
		list_append(&queue, r);
	}
}

/* Make sure the doorbell file, the set and its pipe exist and are ours;
 * after a lost set, re-arm every poll.  0 or -errno. */
helper_code int aioreap_helper_ensure(void)
{
	int ret;

	if (epfd >= 0 && !set_is_ours())
		set_drop();
	ret = bell_ensure();
	if (ret < 0)
		return ret;
	if (epfd < 0 && (ret = set_create()) < 0) {
		if (need_rearm && aioreap_rec_armed)
			fail_armed();
		need_rearm = 0;
		aioreap_helper_flush();
		return ret;
	}
	if (need_rearm) {
		need_rearm = 0;
		rearm_all();
		aioreap_helper_flush();
	}
	return 0;
}

helper_code void aioreap_helper_check(void)
{
	if (epfd >= 0 && !set_is_ours())
		aioreap_helper_ensure();
}

void aioreap_helper_reset_in_child(void)
{
	/* The set is shared with the parent (a DEL would remove its
	 * registrations): drop it, re-arm nothing. */
	set_drop();
	need_rearm = 0;
	queue.head = queue.tail = NULL;
}
