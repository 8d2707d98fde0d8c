/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: argument checking of the public calls.
 *
 * Each input is a short program: a sequence of 24-byte records, each one
 * call (io_getevents, io_pgetevents, io_reap, io_submit, io_cancel,
 * io_queue_*, io_setup, io_destroy, the LIBAIO_0.1 variants) with
 * arbitrary counts and pointers drawn from classes: valid, NULL, small
 * (first page), kernel range, a PROT_NONE page, and contexts that are
 * live, destroyed, munmapped, garbage or plain random 64-bit values.
 *
 * Invariants: no crash, no hang; every result is a count or a negative
 * errno; and for a context the library did not create, every call answers
 * exactly what the raw system call answers with the same arguments.
 *
 * Limits, by design of the library (not fuzzed): buffers that the fast
 * path itself reads or writes on a live context (the events array and
 * the timeout) are only given "obviously bad" values there (NULL, first
 * page, kernel range), which the library rejects like the kernel;
 * a PROT_NONE page there would fault in user space, as it does with the
 * stock libaio.  The same holds for the timeout of the LIBAIO_0.1 calls,
 * which copy it before anything else (compat_0_1.c, like the stock one),
 * and for io_queue_init's ctxp, which it zeroes before io_setup.  A NULL or negative timeout that would wait forever on a
 * live context is replaced by a zero one.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "libaio.h"

/* The LIBAIO_0.1 entry points, reachable by their internal names. */
int aioreap_io_getevents_0_1(io_context_t ctx, long nr, struct io_event *events,
		     const struct timespec *timeout);
int aioreap_io_cancel_0_1(io_context_t ctx, struct iocb *iocb);
int aioreap_io_queue_wait_0_1(io_context_t ctx, const struct timespec *timeout);

#define KERNEL_PTR ((void *)0xffff888000000000ull)
#define NIOCB 8
#define NPTR 300		/* > the context's ring nr: the kernel clamps */

static io_context_t live, dead, unmapped;
static void *noaccess;
static int fds[8];
static int pipefd[2];
static unsigned char buf[NIOCB][4096];
static struct iovec iov[NIOCB][2];
static struct iocb cbs[NIOCB];
static struct iocb *ptrs[NPTR];
static struct io_event evs[512];
static int compare_raw;

#define CHECK(cond) do {						\
		if (!(cond)) {						\
			fprintf(stderr, "invariant failed: %s (line %d)\n", \
				#cond, __LINE__);			\
			abort();					\
		}							\
	} while (0)

static long sys_ret(long r)
{
	return r < 0 ? -errno : r;
}

static void callback(io_context_t ctx, struct iocb *cb, long res, long res2)
{
	(void)ctx; (void)cb; (void)res; (void)res2;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[] = "/tmp/fuzz-args-XXXXXX";
	io_context_t c = NULL;
	void *p;

	(void)argc; (void)argv;
	CHECK(io_setup(64, &live) == 0);
	CHECK(io_setup(1, &dead) == 0);
	CHECK(io_destroy(dead) == 0);
	/* A context made with the raw system call whose ring was then
	 * unmapped: the kernel answers EINVAL for it (and it leaks until
	 * exit).  Made raw because the library does not expect a program to
	 * unmap rings that it registered. */
	CHECK(syscall(SYS_io_setup, 1, &c) == 0);
	CHECK(munmap(c, 4096) == 0);
	unmapped = c;
	p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	noaccess = p;

	fds[0] = -1;
	fds[1] = 1000;
	fds[2] = mkstemp(path);
	CHECK(fds[2] >= 0);
	unlink(path);
	CHECK(ftruncate(fds[2], 1 << 20) == 0);
	fds[3] = open("/dev/null", O_RDWR);
	fds[4] = eventfd(1, EFD_NONBLOCK);
	CHECK(pipe2(pipefd, O_NONBLOCK) == 0);
	fds[5] = pipefd[0];
	fds[6] = pipefd[1];
	fds[7] = open("/tmp", O_RDONLY | O_DIRECTORY);
	compare_raw = getenv("LIBAIO_DISABLE") == NULL;
	return 0;
}

struct rec {
	uint8_t op, ctx_kind, p1, p2;
	int32_t a, b;
	uint64_t x;
	uint32_t y;
};

static io_context_t pick_ctx(const struct rec *r)
{
	switch (r->ctx_kind % 10) {
	case 0: case 1: case 2: return live;
	case 3: return dead;
	case 4: return unmapped;
	case 5: return NULL;
	case 6: return (io_context_t)-1;
	case 7: return (io_context_t)0x1000;
	case 8: return (io_context_t)noaccess;
	default: return (io_context_t)(uintptr_t)r->x;
	}
}

/* Pointer classes.  allow_noaccess: whether a PROT_NONE page may be given
 * (only where the library must not dereference it). */
static void *pick_ptr(unsigned k, void *valid, int allow_noaccess)
{
	switch (k % 6) {
	case 0: case 1: return valid;
	case 2: return NULL;
	case 3: return (void *)(uintptr_t)(8 + (k >> 3) * 8);	/* first page */
	case 4: return KERNEL_PTR;
	default: return allow_noaccess ? noaccess : valid;
	}
}

static void fill_iocbs(const uint8_t *d, size_t size, unsigned n)
{
	unsigned i;

	for (i = 0; i < NIOCB; i++) {
		struct iocb *cb = &cbs[i];
		uint8_t b[16] = { 0 };
		size_t off = (size_t)i * 16, j;

		for (j = 0; j < 16 && off + j < size; j++)
			b[j] = d[off + j];
		memset(cb, 0, sizeof(*cb));
		cb->aio_fildes = fds[b[0] % 8];
		cb->aio_lio_opcode = (b[1] & 0x80) ? b[1] : b[1] % 9;
		cb->aio_reqprio = (b[2] & 0xf0) ? 0 : b[2];
		iov[i][0].iov_base = buf[i];
		iov[i][0].iov_len = b[3] * 8;
		iov[i][1].iov_base = buf[i] + 2048;
		iov[i][1].iov_len = 2048;
		switch (cb->aio_lio_opcode) {
		case IO_CMD_PREADV:
		case IO_CMD_PWRITEV:
			cb->u.v.vec = iov[i];
			cb->u.v.nr = b[4] % 3;
			cb->u.v.offset = (long long)b[5] << 9;
			break;
		case IO_CMD_POLL:
			cb->u.poll.events = (b[4] & 0x80) ? (int)((unsigned)b[4] << 10) : b[4];
			break;
		default:
			cb->u.c.buf = buf[i];
			cb->u.c.nbytes = b[4] * 16u;
			cb->u.c.offset = (b[5] & 0x80) ? -1 : (long long)b[5] << 9;
			break;
		}
		if (b[6] & 1) {
			cb->u.c.flags |= 1;	/* IOCB_FLAG_RESFD */
			cb->u.c.resfd = (unsigned)fds[b[7] % 8];
		}
		if (b[6] & 2)
			cb->aio_rw_flags = (int)(b[8] | ((unsigned)b[9] << 24));
		if (b[6] & 4)
			cb->u.c.__pad3 = b[10];	/* the kernel's aio_reserved2 */
		/* Every live completion must carry a callable callback, since
		 * io_queue_run calls whatever data holds. */
		io_set_callback(cb, callback);
	}
	for (i = 0; i < NPTR; i++)
		ptrs[i] = i < n ? &cbs[i % NIOCB] : NULL;
}

/* Take back what the live context still has pending, without waiting. */
static void drain(void)
{
	struct timespec zero = { 0, 0 };
	unsigned i;

	for (i = 0; i < NIOCB; i++)
		io_cancel(live, &cbs[i], &evs[0]);
	while (io_getevents(live, 0, 512, evs, &zero) > 0)
		;
}

/* One record, decoded, and what the library and the kernel answered. */
struct call {
	struct rec r;
	io_context_t ctx;
	int is_live;
	long min_nr, nr;
	struct timespec ts_val, *ts;
	struct io_event *ev;
	long ret, raw;
	int have_raw;
};

/* The record at pos: its context, counts, timeout and events array. */
static void decode_call(struct call *c, const uint8_t *data, size_t pos)
{
	const struct rec *r = &c->r;

	memcpy(&c->r, data + pos, sizeof(c->r));
	c->ctx = pick_ctx(r);
	c->is_live = c->ctx == live;
	c->min_nr = (r->a & 0x40000000) ? r->a : r->a % 600;
	c->nr = (r->b & 0x40000000) ? r->b : r->b % 600;
	if (c->nr > 512 && c->nr < 0x40000000)
		c->nr = 512;	/* evs holds 512 */

	c->ts_val.tv_sec = (r->y & 1) ? -1 : 0;
	c->ts_val.tv_nsec = (r->y & 2) ? (long)(r->y >> 2) : 0;
	/* The LIBAIO_0.1 calls copy the timeout first (as the stock
	 * library does), whatever the context: no PROT_NONE there. */
	c->ts = pick_ptr(r->p2, &c->ts_val,
			 !c->is_live && r->op % 16 != 6 && r->op % 16 != 9);
	c->ev = pick_ptr(r->p1, evs, !c->is_live);
	/* Never wait forever on a live context. */
	if (c->is_live && (!c->ts || c->ts_val.tv_sec < 0 || c->ts_val.tv_nsec < 0 ||
			   c->ts_val.tv_nsec >= 1000000000L)) {
		c->ts_val.tv_sec = 0;
		c->ts_val.tv_nsec = 0;
		c->ts = &c->ts_val;
	}
	if (c->is_live && c->ts_val.tv_nsec > 1000000)
		c->ts_val.tv_nsec = 1000000;
}

/* Ops 0 and 1: io_getevents and io_pgetevents, beside the raw calls. */
static void call_getevents(struct call *c)
{
	io_context_t ctx = c->ctx;

	if (c->r.op % 16 == 0) {
		c->ret = io_getevents(ctx, c->min_nr, c->nr, c->ev, c->ts);
		c->raw = sys_ret(syscall(SYS_io_getevents, ctx, c->min_nr, c->nr,
					 c->ev, c->ts));
	} else {
		sigset_t mask;
		void *m = pick_ptr(c->r.p1 >> 3, &mask, 1);
		struct { void *set; size_t size; } arg = { m, _NSIG / 8 };

		sigemptyset(&mask);
		c->ret = io_pgetevents(ctx, c->min_nr, c->nr, c->ev, c->ts, m);
		c->raw = sys_ret(syscall(SYS_io_pgetevents, ctx, c->min_nr, c->nr,
					 c->ev, c->ts, &arg));
	}
	c->have_raw = !c->is_live;
}

/* Ops 3 and 4: io_submit of iocbs refilled from the input at pos. */
static void call_submit(struct call *c, const uint8_t *data, size_t size,
			size_t pos)
{
	struct iocb **ios = pick_ptr(c->r.p1, ptrs, 1);
	unsigned n = c->r.p2 % (NIOCB + 1);
	long nr;

	fill_iocbs(data + pos, size - pos, n);
	nr = (c->r.b & 0x40000000) ? c->r.b : c->r.b % (NPTR + 20);
	if (!c->is_live) {
		c->ret = io_submit(c->ctx, nr, ios);
		c->raw = sys_ret(syscall(SYS_io_submit, c->ctx, nr, ios));
		c->have_raw = 1;
	} else {
		if (nr > NPTR)
			nr = NPTR;
		c->ret = io_submit(c->ctx, nr, ios);
		CHECK(c->ret < 0 || c->ret <= nr);
		drain();
	}
}

/* Ops 11 and 12: io_queue_init and io_setup. */
static void call_setup(struct call *c)
{
	const struct rec *r = &c->r;
	io_context_t out = (r->y & 4) ? (io_context_t)1 : NULL;
	/* io_queue_init stores NULL in *ctxp itself (as the stock library
	 * does): no PROT_NONE page for it. */
	io_context_t *ctxp = pick_ptr(r->p1, &out, r->op % 16 == 12);
	int maxev = (r->a & 0x40000000) ? r->a : r->a % 300;

	c->ret = (r->op % 16) == 11 ? io_queue_init(maxev, ctxp)
				    : io_setup(maxev, ctxp);
	if (c->ret == 0) {
		CHECK(ctxp == &out && out != NULL);
		CHECK(io_destroy(out) == 0);
	}
}

/* Op 13: io_queue_release, or on the live context destroy and re-create
 * it (the old one joins the destroyed contexts). */
static void call_release(struct call *c)
{
	if (c->is_live) {
		drain();
		CHECK(io_destroy(live) == 0);
		dead = live;
		live = NULL;
		CHECK(io_setup(64, &live) == 0);
		c->ret = 0;
	} else {
		c->ret = io_queue_release(c->ctx);
		c->raw = sys_ret(syscall(SYS_io_destroy, c->ctx));
		c->have_raw = 1;
	}
}

/* The call the record names, by op modulo 16. */
static void make_call(struct call *c, const uint8_t *data, size_t size,
		      size_t pos)
{
	const struct rec *r = &c->r;
	io_context_t ctx = c->ctx;

	switch (r->op % 16) {
	case 0: case 1:
		call_getevents(c);
		break;
	case 2:
		c->ret = io_reap(ctx, r->b, c->ev);
		CHECK(c->ret < 0 || c->ret <= r->b);
		if (r->b < 0)
			CHECK(c->ret == -EINVAL);
		break;
	case 3: case 4:
		call_submit(c, data, size, pos);
		break;
	case 5: {
		struct iocb *cb = pick_ptr(r->p1, &cbs[r->p2 % NIOCB], 1);
		struct io_event *res = pick_ptr(r->p2 >> 3, &evs[0], 1);

		c->ret = io_cancel(ctx, cb, res);
		c->raw = sys_ret(syscall(SYS_io_cancel, ctx, cb, res));
		c->have_raw = !c->is_live;
		break;
	}
	case 6:
		c->ret = aioreap_io_getevents_0_1(ctx, c->nr, c->ev, c->ts);
		break;
	case 7:
		c->ret = aioreap_io_cancel_0_1(ctx, pick_ptr(r->p1, &cbs[0], 1));
		break;
	case 8:
		c->ret = io_queue_wait(ctx, c->ts);
		c->raw = sys_ret(syscall(SYS_io_getevents, ctx, 0, 0, NULL, c->ts));
		c->have_raw = !c->is_live;
		break;
	case 9:
		c->ret = aioreap_io_queue_wait_0_1(ctx, c->ts);
		break;
	case 10:
		c->ret = io_queue_run(ctx);
		break;
	case 11: case 12:
		call_setup(c);
		break;
	case 13:
		call_release(c);
		break;
	case 14:
		c->ret = io_reaper_active(ctx);
		CHECK(c->ret == 0 || c->ret == 1);
		if (!c->is_live)
			CHECK(c->ret == 0);
		break;
	default:
		(void)io_features();
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pos;

	fill_iocbs(data, size, NIOCB);
	for (pos = 0; pos + sizeof(struct rec) <= size && pos < 24 * 16;
	     pos += sizeof(struct rec)) {
		struct call c = { .ret = 0, .raw = 0, .have_raw = 0 };

		decode_call(&c, data, pos);
		make_call(&c, data, size, pos);
		CHECK(c.ret >= -4095);
		if (c.have_raw && compare_raw) {
			if (c.ret != c.raw)
				fprintf(stderr, "op %d ctx %p: library %ld, kernel %ld\n",
					c.r.op % 16, (void *)c.ctx, c.ret, c.raw);
			CHECK(c.ret == c.raw);
		}
	}
	drain();
	return 0;
}
