/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: the three ways an AIO series reaches the kernel (our library,
 * our library on a context it does not know, the stock library loaded
 * beside it), each counting its system calls, and io_uring's count.
 * Apart so the workloads see only struct aio_ops and never how the stock
 * library was found or counted.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench-util.h"

/* ---- back ends ---------------------------------------------------------- */

static int ours_getevents(io_context_t ctx, long min_nr, long nr,
			  struct io_event *ev, struct timespec *ts)
{
	return io_getevents(ctx, min_nr, nr, ev, ts);
}

const struct aio_ops ops_ours = {
	"ours", io_setup, io_destroy, io_submit, ours_getevents,
	io_syscall_count,
};

/*
 * Async submission (io_set_async) set for each context as it is made, so
 * that the two series differ in that alone whatever LIBAIO_ASYNC says:
 * ours-ring turns it off when LIBAIO_ASYNC=1 turned it on for every new
 * context, ours-async turns it on.
 */
static int setup_async(int nr, io_context_t *ctx, int on)
{
	int ret = io_setup(nr, ctx);

	if (ret < 0 || (!on && !(io_features() & IO_FEATURE_ASYNC)))
		return ret;
	ret = io_set_async(*ctx, on);
	if (ret < 0) {
		io_destroy(*ctx);
		*ctx = NULL;
		return ret;
	}
	return 0;
}

static int setup_off(int nr, io_context_t *ctx)
{
	return setup_async(nr, ctx, 0);
}

static int setup_on(int nr, io_context_t *ctx)
{
	return setup_async(nr, ctx, 1);
}

const struct aio_ops ops_ours_off = {
	"ours-ring", setup_off, io_destroy, io_submit, ours_getevents,
	io_syscall_count,
};

const struct aio_ops ops_async = {
	"ours-async", setup_on, io_destroy, io_submit, ours_getevents,
	io_syscall_count,
};

/* A context made behind the library's back: the registry does not know
 * it, so our io_getevents hands every reap to the kernel. */
static int raw_setup(int nr, io_context_t *ctx)
{
	*ctx = NULL;
	return syscall(SYS_io_setup, nr, ctx) < 0 ? -errno : 0;
}

static int raw_destroy(io_context_t ctx)
{
	return syscall(SYS_io_destroy, ctx) < 0 ? -errno : 0;
}

/* Our io_submit and io_getevents count their own calls; the raw setup
 * and destroy happen outside every measured window. */
const struct aio_ops ops_sys = {
	"ours-syscall", raw_setup, raw_destroy, io_submit, ours_getevents,
	io_syscall_count,
};

/*
 * The stock library keeps no count, so the tool counts its calls: each
 * one is one system call, except io_getevents with a zero timeout on a
 * ring whose head equals its tail, which the stock library answers
 * itself (it checks the ring's magic number first).  Relaxed: the count
 * is read only after the threads that call these have been joined, or
 * by the thread that made the calls.
 */
static _Atomic unsigned long long stock_calls;
_Atomic unsigned long long uring_calls;
static int (*stock_setup_fn)(int, io_context_t *);
static int (*stock_destroy_fn)(io_context_t);
static int (*stock_submit_fn)(io_context_t, long, struct iocb **);
static int (*stock_getevents_fn)(io_context_t, long, long, struct io_event *,
				 struct timespec *);

static void stock_count(void)
{
	atomic_fetch_add_explicit(&stock_calls, 1, memory_order_relaxed);
}

static int stock_setup(int nr, io_context_t *ctx)
{
	stock_count();
	return stock_setup_fn(nr, ctx);
}

static int stock_destroy(io_context_t ctx)
{
	stock_count();
	return stock_destroy_fn(ctx);
}

static int stock_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	stock_count();
	return stock_submit_fn(ctx, nr, ios);
}

struct ring_head {
	unsigned id, nr, head, tail, magic;
};

static int stock_getevents(io_context_t ctx, long min_nr, long nr,
			   struct io_event *ev, struct timespec *ts)
{
	const volatile struct ring_head *r = (const void *)ctx;

	if (!(ts && !ts->tv_sec && !ts->tv_nsec && r &&
	      r->magic == 0xa10a10a1u && r->head == r->tail))
		stock_count();
	return stock_getevents_fn(ctx, min_nr, nr, ev, ts);
}

static unsigned long long stock_calls_now(void)
{
	return atomic_load_explicit(&stock_calls, memory_order_relaxed);
}

struct aio_ops ops_stock = { "stock", NULL, NULL, NULL, NULL, stock_calls_now };
int stock_loaded;
char stock_error[256] = "not loaded";

/*
 * The stock library goes into a namespace of its own, so its io_setup and
 * ours coexist in one process without one interposing on the other.
 */
int stock_load(const char *path)
{
	void *h;

	if (!path || !*path) {
		snprintf(stock_error, sizeof(stock_error),
			 "no stock libaio configured (--stock PATH)");
		return -1;
	}
	h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(stock_error, sizeof(stock_error), "%s", dlerror());
		return -1;
	}
	*(void **)&stock_setup_fn = dlsym(h, "io_setup");
	*(void **)&stock_destroy_fn = dlsym(h, "io_destroy");
	*(void **)&stock_submit_fn = dlsym(h, "io_submit");
	*(void **)&stock_getevents_fn = dlsym(h, "io_getevents");
	if (!stock_setup_fn || !stock_destroy_fn || !stock_submit_fn ||
	    !stock_getevents_fn) {
		snprintf(stock_error, sizeof(stock_error),
			 "%s lacks an io_* symbol", path);
		return -1;
	}
	ops_stock.setup = stock_setup;
	ops_stock.destroy = stock_destroy;
	ops_stock.submit = stock_submit;
	ops_stock.getevents = stock_getevents;
	stock_loaded = 1;
	return 0;
}
