/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loop: an echo event loop over K socket pairs, driven by each readiness
 * mechanism in turn.
 *
 * The loop owns one end of each pair; the peer owns the other.  The peer
 * writes one small message on each of its K ends, the loop waits for
 * readiness, reads each message and writes it back, and the peer reads
 * and checks every echo.  With one process the peer and the loop take
 * turns in one thread (a round is K messages); with --procs 2 the peer is
 * a child process pinned to another CPU and both run at once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
# include <liburing.h>
#endif

#include "bench-util.h"

#define MSG	64
#define BATCH	256
#define AIO_SLACK 256

static const char *const WL = "loop";

struct loop {
	long k;
	int *lfd, *pfd;
	char err[96];
	/* driver state */
	int ep;
	const struct aio_ops *ops;
	io_context_t ctx;
	struct iocb *cbs;
	struct iocb **subs;
#ifdef HAVE_LIBURING
	struct io_uring ring;
	unsigned ring_flags;
	int multishot;
#endif
};

struct driver {
	const char *name;
	int (*init)(struct loop *L);
	long (*run)(struct loop *L, long want);
	void (*fini)(struct loop *L);
	const char *note;
	const struct aio_ops *ops;
	unsigned flags;
	int multishot;
	int aio;
};

/* Read one message and send it back.  1: echoed, 0: nothing there. */
static int echo(struct loop *L, int fd)
{
	char buf[MSG];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n <= 0) {
		snprintf(L->err, sizeof(L->err), "loop read: %s",
			 n ? strerror(errno) : "EOF");
		return -1;
	}
	if (send(fd, buf, n, MSG_NOSIGNAL) != n) {
		snprintf(L->err, sizeof(L->err), "loop write: %s",
			 strerror(errno));
		return -1;
	}
	return 1;
}

/* ---- epoll ---------------------------------------------------------------- */

static int ep_add(struct loop *L, unsigned events)
{
	struct epoll_event ev;
	long i;

	L->ep = epoll_create1(EPOLL_CLOEXEC);
	if (L->ep < 0)
		goto fail;
	for (i = 0; i < L->k; i++) {
		ev.events = events;
		ev.data.u64 = (uint64_t)i;
		if (epoll_ctl(L->ep, EPOLL_CTL_ADD, L->lfd[i], &ev))
			goto fail;
	}
	return 0;
fail:
	snprintf(L->err, sizeof(L->err), "epoll: %s", strerror(errno));
	return -1;
}

static int lt_init(struct loop *L)
{
	return ep_add(L, EPOLLIN);
}

static int os_init(struct loop *L)
{
	return ep_add(L, EPOLLIN | EPOLLONESHOT);
}

static long ep_run(struct loop *L, long want, int oneshot)
{
	struct epoll_event evs[BATCH], ev;
	long done = 0;
	int n, i, r;

	while (done < want) {
		n = epoll_wait(L->ep, evs, BATCH, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(L->err, sizeof(L->err), "epoll_wait: %s",
				 strerror(errno));
			return -1;
		}
		for (i = 0; i < n; i++) {
			int idx = (int)evs[i].data.u64;

			r = echo(L, L->lfd[idx]);
			if (r < 0)
				return -1;
			done += r;
			if (oneshot) {
				ev.events = EPOLLIN | EPOLLONESHOT;
				ev.data.u64 = (uint64_t)idx;
				if (epoll_ctl(L->ep, EPOLL_CTL_MOD, L->lfd[idx],
					      &ev)) {
					snprintf(L->err, sizeof(L->err),
						 "epoll_ctl MOD: %s",
						 strerror(errno));
					return -1;
				}
			}
		}
	}
	return done;
}

static long lt_run(struct loop *L, long want)
{
	return ep_run(L, want, 0);
}

static long os_run(struct loop *L, long want)
{
	return ep_run(L, want, 1);
}

static void ep_fini(struct loop *L)
{
	if (L->ep >= 0)
		close(L->ep);
	L->ep = -1;
}

/* ---- AIO poll ----------------------------------------------------------------- */

static int aio_init(struct loop *L)
{
	long i, n;
	int ret;

	L->cbs = calloc(L->k, sizeof(*L->cbs));
	L->subs = calloc(L->k > BATCH ? L->k : BATCH, sizeof(*L->subs));
	if (!L->cbs || !L->subs)
		die("out of memory");
	/* Each armed poll holds a ring slot until it fires. */
	ret = L->ops->setup((int)L->k + AIO_SLACK, &L->ctx);
	if (ret < 0) {
		L->ctx = NULL;
		snprintf(L->err, sizeof(L->err), "io_setup(%ld): %s",
			 L->k + AIO_SLACK, strerror(-ret));
		return -1;
	}
	for (i = 0; i < L->k; i++) {
		io_prep_poll(&L->cbs[i], L->lfd[i], POLLIN);
		L->cbs[i].data = (void *)(uintptr_t)i;
		L->subs[i] = &L->cbs[i];
	}
	for (i = 0; i < L->k; i += n) {
		n = L->k - i < BATCH ? L->k - i : BATCH;
		ret = L->ops->submit(L->ctx, n, L->subs + i);
		if (ret != n) {
			snprintf(L->err, sizeof(L->err), "io_submit: %s",
				 ret < 0 ? strerror(-ret) : "short");
			return -1;
		}
	}
	return 0;
}

static long aio_run(struct loop *L, long want)
{
	struct io_event evs[BATCH];
	long done = 0;
	int n, i, r, nsub, ret;

	while (done < want) {
		n = L->ops->getevents(L->ctx, 1, BATCH, evs, NULL);
		if (n < 0) {
			if (n == -EINTR)
				continue;
			snprintf(L->err, sizeof(L->err), "io_getevents: %s",
				 strerror(-n));
			return -1;
		}
		nsub = 0;
		for (i = 0; i < n; i++) {
			uintptr_t idx = (uintptr_t)evs[i].data;

			r = echo(L, L->lfd[idx]);
			if (r < 0)
				return -1;
			done += r;
			io_prep_poll(&L->cbs[idx], L->lfd[idx], POLLIN);
			L->cbs[idx].data = (void *)idx;
			L->subs[nsub++] = &L->cbs[idx];
		}
		if (nsub) {
			ret = L->ops->submit(L->ctx, nsub, L->subs);
			if (ret != nsub) {
				snprintf(L->err, sizeof(L->err), "io_submit: %s",
					 ret < 0 ? strerror(-ret) : "short");
				return -1;
			}
		}
	}
	return done;
}

static void aio_fini(struct loop *L)
{
	if (L->ctx)
		L->ops->destroy(L->ctx);
	L->ctx = NULL;
	free(L->cbs);
	free(L->subs);
	L->cbs = NULL;
	L->subs = NULL;
}

/* ---- io_uring poll --------------------------------------------------------- */

#ifdef HAVE_LIBURING
static int ur_arm(struct loop *L, long idx)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&L->ring);

	if (!sqe) {
		io_uring_submit(&L->ring);
		sqe = io_uring_get_sqe(&L->ring);
		if (!sqe)
			return -1;
	}
	if (L->multishot)
		io_uring_prep_poll_multishot(sqe, L->lfd[idx], POLLIN);
	else
		io_uring_prep_poll_add(sqe, L->lfd[idx], POLLIN);
	io_uring_sqe_set_data64(sqe, (uint64_t)idx);
	return 0;
}

static int ur_init(struct loop *L)
{
	struct io_uring_params p;
	unsigned entries = 64;
	long i;
	int ret;

	while (entries < (unsigned)L->k && entries < 4096)
		entries *= 2;
	memset(&p, 0, sizeof(p));
	p.flags = L->ring_flags;
	ret = io_uring_queue_init_params(entries, &L->ring, &p);
	if (ret < 0) {
		snprintf(L->err, sizeof(L->err), "%s: %s",
			 L->ring_flags ? "kernel refuses SINGLE_ISSUER|DEFER_TASKRUN"
				       : "io_uring_queue_init",
			 strerror(-ret));
		return -2;
	}
	for (i = 0; i < L->k; i++)
		if (ur_arm(L, i)) {
			snprintf(L->err, sizeof(L->err), "no SQE");
			return -1;
		}
	ret = io_uring_submit(&L->ring);
	if (ret < 0) {
		snprintf(L->err, sizeof(L->err), "io_uring_submit: %s",
			 strerror(-ret));
		return -1;
	}
	return 0;
}

static long ur_run(struct loop *L, long want)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen;
	long done = 0;
	int ret, r;

	while (done < want) {
		ret = io_uring_submit_and_wait(&L->ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN &&
		    ret != -EBUSY) {
			snprintf(L->err, sizeof(L->err),
				 "io_uring_submit_and_wait: %s", strerror(-ret));
			return -1;
		}
		seen = 0;
		io_uring_for_each_cqe(&L->ring, head, cqe) {
			long idx = (long)cqe->user_data;

			seen++;
			if (cqe->res < 0 && cqe->res != -ECANCELED) {
				snprintf(L->err, sizeof(L->err), "poll: %s",
					 strerror(-cqe->res));
				return -1;
			}
			r = echo(L, L->lfd[idx]);
			if (r < 0)
				return -1;
			done += r;
			if (!L->multishot || !(cqe->flags & IORING_CQE_F_MORE))
				if (ur_arm(L, idx)) {
					snprintf(L->err, sizeof(L->err), "no SQE");
					return -1;
				}
		}
		io_uring_cq_advance(&L->ring, seen);
	}
	return done;
}

static void ur_fini(struct loop *L)
{
	io_uring_queue_exit(&L->ring);
}
#endif

static struct driver drivers[] = {
	{ "epoll-lt", lt_init, lt_run, ep_fini, "level-triggered", NULL, 0, 0, 0 },
	{ "epoll-oneshot", os_init, os_run, ep_fini, "EPOLLONESHOT + MOD re-arm",
	  NULL, 0, 0, 0 },
	{ "aio-poll-syscall", aio_init, aio_run, aio_fini,
	  "raw io_setup ctx: kernel reaps", &ops_sys, 0, 0, 1 },
	{ "aio-poll-ours", aio_init, aio_run, aio_fini, "ring reaper",
	  &ops_ours, 0, 0, 1 },
	{ "aio-poll-stock", aio_init, aio_run, aio_fini, "stock libaio (dlmopen)",
	  &ops_stock, 0, 0, 1 },
#ifdef HAVE_LIBURING
	{ "uring-poll", ur_init, ur_run, ur_fini, "one-shot POLL_ADD", NULL, 0, 0, 0 },
	{ "uring-multishot", ur_init, ur_run, ur_fini, "multishot POLL_ADD",
	  NULL, 0, 1, 0 },
	{ "uring-multishot-defer", ur_init, ur_run, ur_fini,
	  "multishot, SINGLE_ISSUER|DEFER_TASKRUN", NULL,
	  IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, 1, 0 },
#endif
};
#define NDRIVERS ((int)(sizeof(drivers) / sizeof(drivers[0])))

/* ---- the peer ----------------------------------------------------------------- */

static void fill_msg(char *m, long i, uint64_t seq)
{
	memset(m, 'a' + (int)(seq % 26), MSG);
	memcpy(m, &i, sizeof(i));
	memcpy(m + sizeof(i), &seq, sizeof(seq));
}

static int peer_send(struct loop *L, uint64_t seq)
{
	char m[MSG];
	long i;

	for (i = 0; i < L->k; i++) {
		fill_msg(m, i, seq);
		if (send(L->pfd[i], m, MSG, MSG_NOSIGNAL) != MSG)
			return -1;
	}
	return 0;
}

/* 0: all K echoes came back intact, 1: EOF, -1: error or mismatch. */
static int peer_check(struct loop *L, uint64_t seq)
{
	char m[MSG], got[MSG];
	ssize_t n, off;
	long i;

	for (i = 0; i < L->k; i++) {
		fill_msg(m, i, seq);
		for (off = 0; off < MSG; off += n) {
			n = read(L->pfd[i], got + off, MSG - off);
			if (n == 0)
				return 1;
			if (n < 0) {
				if (errno == EINTR) {
					n = 0;
					continue;
				}
				return errno == ECONNRESET ? 1 : -1;
			}
		}
		if (memcmp(m, got, MSG)) {
			snprintf(L->err, sizeof(L->err),
				 "echo mismatch on pair %ld", i);
			return -1;
		}
	}
	return 0;
}

static _Noreturn void peer_child(struct loop *L, int cpu)
{
	uint64_t seq;
	int r;

	pin_cpu(cpu);
	for (seq = 1;; seq++) {
		if (peer_send(L, seq))
			_exit(0);	/* the loop closed its ends */
		r = peer_check(L, seq);
		if (r > 0)
			_exit(0);
		if (r < 0)
			_exit(3);
	}
}

/* ---- cells ------------------------------------------------------------------- */

static int fcntl_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}

static int make_pairs(struct loop *L, long k)
{
	int sv[2];
	long i;

	L->k = k;
	L->lfd = malloc(k * sizeof(int));
	L->pfd = malloc(k * sizeof(int));
	if (!L->lfd || !L->pfd)
		die("out of memory");
	for (i = 0; i < k; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			snprintf(L->err, sizeof(L->err), "socketpair #%ld: %s",
				 i, strerror(errno));
			L->k = i;
			return -1;
		}
		L->lfd[i] = sv[0];
		L->pfd[i] = sv[1];
		if (fcntl_nonblock(sv[0]))
			return -1;
	}
	return 0;
}

static void close_pairs(struct loop *L, int loop_side, int peer_side)
{
	long i;

	for (i = 0; i < L->k; i++) {
		if (loop_side && L->lfd[i] >= 0)
			close(L->lfd[i]);
		if (peer_side && L->pfd[i] >= 0)
			close(L->pfd[i]);
	}
	if (loop_side) {
		free(L->lfd);
		L->lfd = NULL;
	}
	if (peer_side) {
		free(L->pfd);
		L->pfd = NULL;
	}
}

/* One process: the peers send message seq on every pair, the loop echoes
 * them, the peers check the echo.  Messages echoed, or -1 (L->err). */
static long one_round(const struct driver *d, struct loop *L, long k,
		      uint64_t seq)
{
	long r;

	if (peer_send(L, seq)) {
		snprintf(L->err, sizeof(L->err), "peer write: %s", strerror(errno));
		return -1;
	}
	r = d->run(L, k);
	if (r < 0)
		return -1;
	if (peer_check(L, seq)) {
		if (!L->err[0])
			snprintf(L->err, sizeof(L->err), "peer read failed");
		return -1;
	}
	return r;
}

/*
 * One measured cell: messages per second, or -1 with L->err set (-2 when
 * the driver is simply unavailable here).
 */
static double cell(const struct driver *d, long k, int procs, int loop_cpu,
		   int peer_cpu, char *err, size_t errlen)
{
	struct loop L;
	uint64_t t0, t1, budget, done = 0, seq = 0;
	pid_t child = -1;
	double v = -1;
	long r;
	int ret, status;

	memset(&L, 0, sizeof(L));
	L.ep = -1;
	L.ops = d->ops;
#ifdef HAVE_LIBURING
	L.ring_flags = d->flags;
	L.multishot = d->multishot;
#endif
	if (make_pairs(&L, k))
		goto out;
	if (procs == 2) {
		fflush(NULL);
		child = fork();
		if (child < 0) {
			snprintf(L.err, sizeof(L.err), "fork: %s", strerror(errno));
			goto out;
		}
		if (child == 0) {
			close_pairs(&L, 1, 0);
			peer_child(&L, peer_cpu);
		}
		close_pairs(&L, 0, 1);
	}
	(void)loop_cpu;
	ret = d->init(&L);
	if (ret < 0) {
		if (ret == -2)
			v = -2;
		goto fini;
	}

	budget = (uint64_t)(opt.cell_time * 1e9);
	t0 = now_ns();
	do {
		r = procs == 1 ? one_round(d, &L, k, ++seq) :
				 d->run(&L, k < 64 ? k : 64);
		if (r < 0)
			goto fini;
		done += r;
		t1 = now_ns();
	} while (t1 - t0 < budget && !interrupted);
	v = (double)done * 1e9 / (double)(t1 - t0);
fini:
	d->fini(&L);
out:
	close_pairs(&L, 1, child < 0);
	if (child > 0) {
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
		if (v >= 0 && (!WIFEXITED(status) || WEXITSTATUS(status))) {
			snprintf(L.err, sizeof(L.err),
				 "peer process failed (echo mismatch?)");
			v = -1;
		}
	}
	if (v < 0)
		snprintf(err, errlen, "%s", L.err[0] ? L.err : "failed");
	return v;
}

static const char *loop_names[NDRIVERS];
static struct rlimit loop_rl;
static cpu_set_t loop_saved;	/* the affinity before the 2p rows */
static int loop_cpu, peer_cpu, loop_pinned, loop_dead[NDRIVERS];

/* Params: process count by process count, K by K. */
static struct row *loop_row(int s, int p)
{
	char param[24];

	snprintf(param, sizeof(param), "K=%ld %dp", opt.conns[p % opt.nconns],
		 opt.procs[p / opt.nconns]);
	return row_get(WL, drivers[s].name, param, "msg/s", 0, "epoll-lt",
		       drivers[s].aio ? "epoll-oneshot" : NULL);
}

static void loop_note(int s, int p, struct row *r)
{
	(void)p;
	if (drivers[s].ops == &ops_stock && !stock_loaded)
		row_note(r, stock_error);
	else
		row_note(r, drivers[s].note);
}

/* The 2p rows run pinned to loop_cpu, their peers on peer_cpu. */
static void loop_pin(int procs)
{
	if (procs == 2 && !loop_pinned)
		pin_cpu(loop_cpu);
	else if (procs != 2 && loop_pinned)
		sched_setaffinity(0, sizeof(loop_saved), &loop_saved);
	loop_pinned = procs == 2;
}

static int loop_cell(int s, int p, struct row *r, char *why, size_t len)
{
	const struct driver *d = &drivers[s];
	long k = opt.conns[p % opt.nconns];
	int procs = opt.procs[p / opt.nconns];
	double v;

	if (loop_dead[s] || (d->ops == &ops_stock && !stock_loaded))
		return GRID_SKIP;
	if (2 * k + 64 > (long)loop_rl.rlim_cur) {
		snprintf(why, len, "needs %ld fds", 2 * k + 64);
		return GRID_NOTE;
	}
	loop_pin(procs);
	v = cell(d, k, procs, loop_cpu, peer_cpu, why, len);
	if (v < 0) {
		/* -2: the series cannot run here at all */
		loop_dead[s] |= v == -2;
		return GRID_NOTE;
	}
	row_add(r, v);
	return GRID_DONE;
}

/* Enough descriptors for the widest K, no SIGPIPE, the CPUs. */
static void loop_setup(void)
{
	long maxk = 0;
	int ki, s;

	for (s = 0; s < NDRIVERS; s++)
		loop_names[s] = drivers[s].name;
	memset(loop_dead, 0, sizeof(loop_dead));
	for (ki = 0; ki < opt.nconns; ki++)
		if (opt.conns[ki] > maxk)
			maxk = opt.conns[ki];
	if (!getrlimit(RLIMIT_NOFILE, &loop_rl) &&
	    loop_rl.rlim_cur < loop_rl.rlim_max &&
	    loop_rl.rlim_cur < (rlim_t)(2 * maxk + 64)) {
		loop_rl.rlim_cur = loop_rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &loop_rl);
	}
	signal(SIGPIPE, SIG_IGN);

	loop_cpu = opt.ncpus > 0 ? opt.cpus[0] : sched_getcpu();
	peer_cpu = opt.ncpus > 1 ? opt.cpus[1] : other_cpu(loop_cpu);
	sched_getaffinity(0, sizeof(loop_saved), &loop_saved);
}

void bench_loop(void)
{
	static const struct grid grid = {
		.workload = "loop", .series = loop_names, .nseries = NDRIVERS,
		.row = loop_row, .note = loop_note, .cell = loop_cell,
	};
	struct grid run = grid;

	loop_setup();
	run.nparams = opt.nprocs * opt.nconns;
	run.group = opt.nconns;
	grid_run(&run);
	loop_pin(1);
	if (peer_cpu >= 0 && (opt.procs[0] == 2 || opt.procs[1] == 2))
		report_line(WL, "2p rows: the peers run in a child process on CPU %d, "
				"the loop on CPU %d.", peer_cpu, loop_cpu);
	report_line(WL, "aio-poll-syscall: raw io_setup context (kernel reaps); "
			"aio-poll-ours: our io_getevents reaping the ring.");
}
