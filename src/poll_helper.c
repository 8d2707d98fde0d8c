/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The poll emulation's epoll set, the helper thread that waits on it and
 * the doorbells; all under the emulation's lock but the helper's wait. */
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

#include "compiler.h"
#include "poll_bits.h"
#include "poll_emul.h"
#include "poll_helper.h"
#include "poll_rec.h"
#include "raw_syscall.h"
#include "registry.h"

/* epoll data of the wake-up pipe; no record token is ever this. */
#define WAKE_TOKEN	UINT64_MAX
/* The helper's retry period while a full ring holds doorbells back. */
#define RETRY_MS	5
/* Doorbells rung in one io_submit. */
#define BELL_BATCH	64
/* How long the helper waits with nothing queued before it checks
 * whether it is the process's last thread (helper_main). */
#define IDLE_MS		1000

static pthread_mutex_t pe_lock = PTHREAD_MUTEX_INITIALIZER;

static void rec_recycle(void);

/* --- the lock ---------------------------------------------------------- */

void aioreap_pe_enter(sigset_t *old)
{
	sigset_t all;

	/* Leaves the C library's internal signals alone; errno untouched. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	pthread_mutex_lock(&pe_lock);
	rec_recycle();
}

void aioreap_pe_leave(const sigset_t *old)
{
	pthread_mutex_unlock(&pe_lock);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void close_resfd(struct poll_rec *r)
{
	if (r->resfd >= 0 && aioreap_fd_is(r->resfd, &r->resfd_id))
		sys_close(r->resfd);
	r->resfd = -1;
}

void aioreap_rec_free(struct poll_rec *r)
{
	aioreap_helper_disarm(r);
	close_resfd(r);
	aioreap_rec_release(r);
}

/* Free what reapers claimed. */
static void rec_recycle(void)
{
	struct poll_rec *r, *next;

	for (r = aioreap_rec_recycle_take(); r; r = next) {
		next = r->rnext;
		aioreap_rec_free(r);
	}
}

static int epfd = -1;		/* the process-wide epoll set */
static int wake_rd = -1;	/* pipe in that set: "look again" */
static int wake_wr = -1;
static int bellfd = -1;		/* memfd (or /dev/zero) the doorbells read */
static struct fd_id wake_id, bell_id;
static int helper_running;
/* Bumped when the set is replaced: an older helper leaves on waking. */
static unsigned helper_gen;
/* Set once a new helper runs our code (fork waits for it). */
static _Atomic int helper_started;
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

int aioreap_helper_is_doorbell(const struct iocb *obj)
{
	uintptr_t a = (uintptr_t)obj, b = (uintptr_t)bells;

	return a - b < sizeof(bells);
}

/* Is epfd still our set?  Our pipe (a unique inode) must be registered in
 * it under wake_rd (kcmp); without kcmp, trust a close-on-exec epfd. */
static int set_is_ours(void)
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

/* Forget the set and the pipe (closing what is still ours), retire the
 * helper, and let the next ensure make new ones. */
static void set_drop(void)
{
	if (set_is_ours())
		sys_close(epfd);
	if (aioreap_fd_is(wake_rd, &wake_id))
		sys_close(wake_rd);
	if (aioreap_fd_is(wake_wr, &wake_id))
		sys_close(wake_wr);
	epfd = wake_rd = wake_wr = -1;
	helper_running = 0;
	helper_gen++;
	need_rearm = 1;
}

static void kick(void)
{
	static const char one = 1;

	if (wake_wr >= 0)
		sys_write(wake_wr, &one, 1);
}

static void list_append(struct rec_list *l, struct poll_rec *r)
{
	r->qnext = NULL;
	if (l->tail)
		l->tail->qnext = r;
	else
		l->head = r;
	l->tail = r;
}

/* Move up to max of ctx's queued records, in order, to the end of to. */
static long take_ctx(io_context_t ctx, long max, struct rec_list *to)
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

static void prep_bell(struct iocb *b, struct poll_rec *r)
{
	struct kernel_iocb k;
	uint64_t token = aioreap_rec_token(r);

	int resfd;

	/* Never hand the kernel an eventfd number no longer ours; if the
	 * program closed ours, its own number for the eventfd serves (the
	 * kernel takes its reference within this io_submit). */
	if (r->resfd >= 0 && !aioreap_fd_is(r->resfd, &r->resfd_id))
		r->resfd = -1;
	resfd = r->resfd;
	if (resfd < 0 && r->user_resfd >= 0 &&
	    aioreap_fd_names(r->user_resfd, &r->resfd_id))
		resfd = r->user_resfd;
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

/*
 * fd moved above 2 (close-on-exec), or -errno with fd closed.  A daemon
 * that closed its standard descriptors opens /dev/null next and expects
 * 0, 1 and 2: none of them may be the library's, even for a while.
 */
static long above_stdio(long fd)
{
	long moved;

	if (fd < 0 || fd > 2)
		return fd;
	moved = sys_fcntl((int)fd, F_DUPFD_CLOEXEC, 3);
	sys_close((int)fd);
	return moved == -EINVAL ? -EMFILE : moved;	/* EINVAL: limit <= 3 */
}

/* The doorbell file: a memfd (its inode is unique), or /dev/zero. */
static int bell_ensure(void)
{
	long fd;

	if (bellfd >= 0 && aioreap_fd_is(bellfd, &bell_id))
		return 0;
	bellfd = -1;		/* not ours any more (if it ever was) */
	fd = sys_memfd_create("libaio-doorbell", MFD_CLOEXEC);
	if (fd < 0)
		fd = sys_openat(AT_FDCWD, "/dev/zero", O_RDONLY | O_CLOEXEC);
	fd = above_stdio(fd);
	if (fd < 0)
		return (int)fd;
	bellfd = (int)fd;
	aioreap_fd_identify(bellfd, &bell_id);
	return 0;
}

void aioreap_helper_unqueue(io_context_t ctx, int free_them)
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
 * eventfd it will not take: ring without it.  A context destroyed by a
 * raw system call: drop its records.  Else drop the first.  Returns how
 * many of grp, from the front, are gone.
 */
static long refused(io_context_t ctx, struct poll_rec **grp, long n)
{
	long i;

	if (!aioreap_fd_is(bellfd, &bell_id)) {
		bell_ensure();
		return 0;
	}
	if (grp[0]->resfd >= 0) {
		close_resfd(grp[0]);
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
static long ring(io_context_t ctx, struct poll_rec **grp, long *n, int *full)
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
	/* Rung: the reapers' now, but for the eventfd no reaper reads. */
	for (i = 0; i < ret; i++)
		close_resfd(grp[i]);
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
static int flush(void)
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

void aioreap_helper_complete(struct poll_rec *r)
{
	list_append(&queue, r);
	if (flush()) {
		/* A full ring: the helper retries until there is room. */
		if (aioreap_helper_ensure() == 0)
			kick();
	}
}

int aioreap_helper_arm(struct poll_rec *r)
{
	struct epoll_event ev;
	long ret, dup;
	int first = r->fd;

	memset(&ev, 0, sizeof(ev));
	ev.events = poll_bits_translate(r->events, 1) | EPOLLONESHOT;
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
static int dup_is_ours(struct poll_rec *r)
{
	if (epfd >= 0 && aioreap_fd_in_epoll(epfd, r->fd) == 0)
		return 0;
	return aioreap_fd_is(r->fd, &r->fd_id);
}

void aioreap_helper_disarm(struct poll_rec *r)
{
	if (r->fd < 0)
		return;
	if (dup_is_ours(r)) {
		if (epfd >= 0)
			sys_epoll_ctl(epfd, EPOLL_CTL_DEL, r->fd, NULL);
		sys_close(r->fd);
	}
	r->fd = -1;
}

/* A new duplicate for r of the program's own descriptor, if that still
 * names the polled file (the program closed ours, not its own); or -1. */
static int redup(const struct poll_rec *r)
{
	long d;

	if (!aioreap_fd_names(r->user_fd, &r->fd_id))
		return -1;
	d = sys_fcntl(r->user_fd, F_DUPFD_CLOEXEC, 3);
	return d < 0 ? -1 : (int)d;
}

/* After a lost set: re-arm each ARMED record, through a new duplicate if
 * the program closed ours; complete it with POLLNVAL only when the
 * program's own descriptor no longer names the file either. */
static void rearm_all(void)
{
	struct poll_rec *r;
	unsigned pos = 0;

	while ((r = aioreap_rec_each(&pos))) {
		if (rec_state(r) != REC_ARMED)
			continue;
		if (r->fd >= 0 && !aioreap_fd_is(r->fd, &r->fd_id))
			r->fd = -1;	/* the program's now: never closed */
		if (r->fd < 0)
			r->fd = redup(r);
		if (r->fd >= 0) {
			if (aioreap_helper_arm(r) == 0)
				continue;
			sys_close(r->fd);
		}
		r->fd = -1;
		r->res = POLLNVAL;
		rec_set(r, REC_FIRED);
		list_append(&queue, r);
	}
}

/* The helper saw r ready: whoever moves it out of ARMED completes it. */
static void fire(uint64_t token, unsigned revents)
{
	struct poll_rec *r = aioreap_rec_by_token(token);

	if (!r || !rec_move(r, REC_ARMED, REC_FIRED))
		return;		/* cancelled or forgotten meanwhile */
	r->res = poll_bits_translate(revents, 0) &
		(r->events | POLLERR | POLLHUP | POLLNVAL);
	aioreap_helper_disarm(r);
	list_append(&queue, r);
}

/* Under the lock: is this helper still the one, with a set still ours?
 * A lost set is replaced (new set, new helper, polls re-armed). */
static int helper_still_valid(unsigned my_gen)
{
	if (helper_gen == my_gen)
		aioreap_helper_check();
	return helper_gen == my_gen;
}

/* Is this the process's last live thread: the main thread a zombie, and
 * no thread but the two of us?  0 when /proc cannot tell. */
static int last_thread(void)
{
	char buf[512], *p;
	long f = sys_openat(AT_FDCWD, "/proc/self/stat", O_RDONLY | O_CLOEXEC);
	long len, field;

	if (f < 0)
		return 0;
	len = sys_read((int)f, buf, sizeof(buf) - 1);
	sys_close((int)f);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	/* "pid (comm) STATE ..." with num_threads the 20th field; comm may
	 * hold spaces and parentheses, so count from the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] != 'Z')
		return 0;
	for (field = 3, p += 2; field < 20 && (p = strchr(p, ' ')); field++)
		p++;
	return p && strtol(p, NULL, 10) == 2;
}

static void *helper_main(void *arg)
{
	struct epoll_event ev[64];
	unsigned my_gen = (unsigned)(uintptr_t)arg;
	long i, n = 0;
	int idle = 0;

	/* Release: a fork may now go on (see the fork's preparation). */
	atomic_store_explicit(&helper_started, 1, memory_order_release);
	sys_futex_wake((int *)&helper_started, INT_MAX);
	for (;;) {
		int ms, my_epfd;

		pthread_mutex_lock(&pe_lock);
		rec_recycle();
		/* A replaced set's events are dropped: all is re-armed. */
		if (!helper_still_valid(my_gen))
			break;
		for (i = 0; i < n; i++) {
			if (ev[i].data.u64 == WAKE_TOKEN) {
				char buf[64];

				sys_read(wake_rd, buf, sizeof(buf));
				continue;
			}
			fire(ev[i].data.u64, ev[i].events);
		}
		flush();
		ms = queue.head ? RETRY_MS : IDLE_MS;
		my_epfd = epfd;
		pthread_mutex_unlock(&pe_lock);
		/* Every thread of the program gone (pthread_exit): end the
		 * process, as the C library does when the last thread leaves,
		 * armed polls or not (a kernel poll keeps no process alive).
		 * A raw clone(CLONE_VM) task may outlive it, sharing this
		 * memory: its next poll call starts a new helper (and a new
		 * set, re-armed, if this one is not in its file table).
		 * The helper stays, not retiring when idle: starting it again
		 * could fall to a signal handler's io_submit. */
		if (idle && last_thread()) {
			pthread_mutex_lock(&pe_lock);
			helper_running = 0;
			pthread_mutex_unlock(&pe_lock);
			exit(0);
		}

		n = sys_epoll_wait(my_epfd, ev, 64, ms);
		idle = n == 0 && ms == IDLE_MS;
		if (n < 0)
			n = 0;
	}
	pthread_mutex_unlock(&pe_lock);
	return NULL;
}

/* The epoll set and its wake-up pipe (both ends non-blocking). */
static int set_create(void)
{
	long e = above_stdio(sys_epoll_create1(EPOLL_CLOEXEC)), r;
	struct epoll_event ev;
	int p[2];

	if (e < 0)
		return (int)e;
	r = sys_pipe2(p, O_CLOEXEC | O_NONBLOCK);
	if (r == 0) {
		long wr = above_stdio(p[1]), rd = above_stdio(p[0]);

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

/* Start this generation's helper: 0 or -errno, errno kept.  It inherits
 * a mask blocking every signal: the application's are not its to take. */
static int helper_start(void)
{
	pthread_attr_t attr;
	pthread_t tid;
	sigset_t all, old;
	int saved = errno, err;

	atomic_store_explicit(&helper_started, 0, memory_order_relaxed);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&tid, &attr, helper_main,
			     (void *)(uintptr_t)helper_gen);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	if (err)
		return -err;
	helper_running = 1;
	return 0;
}

/* Make sure the doorbell file, the set, its pipe and the helper exist and
 * are ours; after a lost set, re-arm every poll.  0 or -errno. */
int aioreap_helper_ensure(void)
{
	int ret;

	if (epfd >= 0 && !set_is_ours())
		set_drop();
	ret = bell_ensure();
	if (ret < 0)
		return ret;
	if (epfd < 0 && (ret = set_create()) < 0)
		return ret;
	if (!helper_running && (ret = helper_start()) < 0)
		return ret;
	if (need_rearm) {
		need_rearm = 0;
		rearm_all();
		if (flush())
			kick();
	}
	return 0;
}

void aioreap_helper_check(void)
{
	if (epfd >= 0 && !set_is_ours())
		aioreap_helper_ensure();
}

/* A helper created just before a fork may still hold the C library's or
 * a sanitizer's internal locks, which the child would inherit held: wait
 * (futex, lock held) until it runs our code, which allocates nothing. */
void aioreap_helper_fork_prepare(void)
{
	while (helper_running &&
	       !atomic_load_explicit(&helper_started, memory_order_acquire))
		sys_futex_wait((int *)&helper_started, 0);
}

void aioreap_helper_reset_in_child(void)
{
	/* No helper here, and the set is shared with the parent (a DEL
	 * would remove its registrations): drop it, re-arm nothing. */
	set_drop();
	need_rearm = 0;
	queue.head = queue.tail = NULL;
}
