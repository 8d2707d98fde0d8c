/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What differs from one architecture to the next, checked against the
 * running kernel: the ring's size and the reaper's bounds on whatever page
 * size the kernel uses (64 KiB on Debian's ppc64el), the iocb and io_event
 * fields on either byte order (aio_key and aio_rw_flags swap places on
 * big-endian, and 32-bit ABIs pad pointers and longs on the side that
 * depends on it), and exactly-once reaping with threads pinned to two
 * CPUs on a weakly ordered machine.  The sizes come from the page size
 * at run time, so the same cases mean the same thing on 4 KiB pages.
 * CI runs this program under each architecture's own Debian kernel in
 * qemu-system (.ci/kernels.sh) as well as on the build machine.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "test-common.h"

#define RING_HEADER	32u	/* the ring's header, and one io_event */


static size_t page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	ck_assert_int_gt(ps, 0);
	return (size_t)ps;
}

/* --- the ring on this page size ---------------------------------------- */

/*
 * The kernel sizes a ring for twice the request plus two (more with many
 * CPUs) and rounds it up to whole pages, so the last slot always ends
 * where the mapping ends.  io_setup(k * P / 64 - 2) (P: the page size)
 * asks for exactly as many slots as fill k pages but one, and one more
 * event needs another page: both sides of each boundary are tried, for
 * one to three pages, plus the smallest request.
 */
static unsigned boundary_request(size_t pages)
{
	return (unsigned)(pages * page_size() / (2 * RING_HEADER)) - 2;
}

/* A PROT_NONE page right after the ring, so that a read one slot past
 * its end faults instead of reading a neighbour; false when something
 * is mapped there already (then the checks below still run). */
static bool guard_after(io_context_t ctx, size_t ring_bytes)
{
	void *want = (char *)ctx + ring_bytes;
	void *p = mmap(want, page_size(), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return false;
	if (p != want) {	/* a kernel without MAP_FIXED_NOREPLACE */
		munmap(p, page_size());
		return false;
	}
	return true;
}

/* Submit n one-byte reads tagged tag0, tag0 + 1, ... and take them back
 * in one reap, in order; in ring mode, unless the ring was left to the
 * kernel for good, that reap is no system call. */
static void round_trip(io_context_t ctx, int fd, struct iocb *cbs,
		       struct io_event *ev, unsigned char *buf, long n,
		       uintptr_t tag0, bool from_ring)
{
	unsigned long long before;
	long i;

	for (i = 0; i < n; i++) {
		struct iocb *p = &cbs[i];

		io_prep_pread(p, fd, buf + i, 1, (long long)((tag0 + i) % 4096));
		p->data = (void *)(tag0 + i);
		ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	}
	before = io_syscall_count();
	ck_assert_int_eq(io_getevents(ctx, n, n, ev, NULL), n);
	if (from_ring && ring_mode())
		ck_assert_msg(io_syscall_count() == before,
			      "a reap of ready events entered the kernel");
	for (i = 0; i < n; i++) {
		ck_assert_ptr_eq(ev[i].data, (void *)(tag0 + i));
		ck_assert_ptr_eq(ev[i].obj, &cbs[i]);
		ck_assert_int_eq((long)ev[i].res, 1);
		ck_assert_int_eq(buf[i], test_pattern((long long)((tag0 + i) % 4096)));
	}
}

/* The index at pos set to a value one past the last slot: the reaper
 * must leave the ring to the kernel (a system call) and read nothing
 * outside it; then the indexes are put back as they were. */
static void index_at_end(io_context_t ctx, unsigned nr, int pos,
			 struct io_event *ev)
{
	unsigned *w = (unsigned *)ctx, saved = w[pos], other = w[5 - pos];
	struct timespec zero = { 0, 0 };
	unsigned long long before = io_syscall_count();
	int r;

	w[pos] = nr;
	r = io_getevents(ctx, 0, 4, ev, &zero);
	ck_assert_msg(r >= -EINVAL && r <= 4, "index %d at nr: %d", pos, r);
	ck_assert_msg(io_syscall_count() > before,
		      "index %d at nr was not left to the kernel", pos);
	w[pos] = saved;
	w[5 - pos] = other;
	/* Whatever the kernel consumed, the ring is empty again. */
	w[2] = w[3];
}

START_TEST(ring_size_and_bounds_on_this_page_size)
{
	const size_t ps = page_size();
	unsigned sizes[7];
	int fd = test_tmpfile(4096), n = 0, i;
	char line[256];
	int len = 0;

	sizes[n++] = 1;
	for (i = 1; i <= 3; i++) {
		sizes[n++] = boundary_request((size_t)i);
		sizes[n++] = boundary_request((size_t)i) + 1;
	}
	len += snprintf(line + len, sizeof(line) - len, "page %zu:", ps);
	for (i = 0; i < n; i++) {
		io_context_t ctx = NULL;
		unsigned nr, req = sizes[i];
		size_t bytes;
		long done = 0, batch = req < 256 ? (long)req : 256;
		struct iocb *cbs = calloc((size_t)batch, sizeof(*cbs));
		struct io_event *ev = calloc((size_t)batch + 4, sizeof(*ev));
		unsigned char *buf = malloc((size_t)batch);
		bool guarded;

		ck_assert(cbs && ev && buf);
		ck_assert_int_eq(io_setup((int)req, &ctx), 0);
		nr = hdr(ctx)->nr;
		bytes = (size_t)(nr + 1) * RING_HEADER;
		ck_assert_msg(bytes % ps == 0, "io_setup(%u): nr %u does not fill "
			      "whole %zu-byte pages", req, nr, ps);
		ck_assert_uint_ge(nr, 2 * req);
		ck_assert_int_eq(io_reaper_active(ctx), ring_mode());
		guarded = guard_after(ctx, bytes);
		len += snprintf(line + len, sizeof(line) - len, " %u->%u", req, nr);

		/* Every slot, the last one included, and the wrap to slot 0. */
		while (done < (long)nr + batch + 1) {
			round_trip(ctx, fd, cbs, ev, buf, batch,
				   (uintptr_t)done + 1, true);
			done += batch;
		}
		if (!test_under_valgrind()) {
			/* valgrind's own io_getevents wrapper dereferences the
			 * stale events the kernel then returns. */
			/* Either leaves the library a head it did not store
			 * (the kernel's or ours), which it takes for a reap
			 * from outside: the ring is the kernel's for good,
			 * and the events still come back whole. */
			index_at_end(ctx, nr, 2, ev);	/* head */
			index_at_end(ctx, nr, 3, ev);	/* tail */
			round_trip(ctx, fd, cbs, ev, buf, batch, 1, false);
		}
		ck_assert_int_eq(io_destroy(ctx), 0);
		if (guarded)
			munmap((char *)ctx + bytes, ps);
		free(cbs);
		free(ev);
		free(buf);
	}
	fprintf(stderr, "ring sizes (request->nr): %s\n", line);
	close(fd);
}
END_TEST

/* --- every field in its place, on either byte order -------------------- */

/* A value with a different byte in each position that fits a pointer. */
#define TAG_BYTES ((uintptr_t)0x0123456789abcdefull)

/* On 32-bit ABIs, the pad beside each pointer and long in io_event. */
static void check_pads(const struct io_event *ev, unsigned res_high)
{
#if __SIZEOF_LONG__ == 4
	ck_assert_uint_eq(ev->__pad1, 0);
	ck_assert_uint_eq(ev->__pad2, 0);
	ck_assert_uint_eq(ev->__pad3, res_high);
	ck_assert_uint_eq(ev->__pad4, 0);
#else
	(void)ev;
	(void)res_high;
#endif
}

static void one_event(io_context_t ctx, struct iocb *cb, struct io_event *ev)
{
	struct timespec sec = { 20, 0 };

	ck_assert_int_eq(io_getevents(ctx, 1, 1, ev, &sec), 1);
	ck_assert_ptr_eq(ev->obj, cb);
	ck_assert_ptr_eq(ev->data, (void *)TAG_BYTES);
	ck_assert_uint_eq(ev->res2, 0);
}

/* A read: data, obj and res come back whole. */
static void round_trip_read(io_context_t ctx, struct iocb *cb, int fd)
{
	struct iocb *p = cb;
	struct io_event ev;
	unsigned char in[100];
	unsigned i;

	io_prep_pread(cb, fd, in, sizeof(in), 7);
	cb->data = (void *)TAG_BYTES;
	cb->key = 0x5aa5c33cu;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	/* With async submission on, the kernel gets the library's copy of a
	 * read and writes the key there: the program's iocb is never
	 * written. */
	ck_assert_uint_eq(cb->key, test_mode_async() ? 0x5aa5c33cu : 0);
	ck_assert_uint_eq(cb->aio_rw_flags, 0);
	one_event(ctx, cb, &ev);
	ck_assert_int_eq((long)ev.res, (long)sizeof(in));
	check_pads(&ev, 0);
	for (i = 0; i < sizeof(in); i++)
		ck_assert_int_eq(in[i], test_pattern(7 + i));
}

/* A negative result: reading 4 bytes of an eventfd is EINVAL, in the
 * event (kernels before 5.12 refuse it in io_submit instead). */
static void round_trip_negative(io_context_t ctx, struct iocb *cb, int efd)
{
	struct iocb *p = cb;
	struct io_event ev;
	unsigned char in[4];
	int r;

	io_prep_pread(cb, efd, in, 4, 0);
	cb->data = (void *)TAG_BYTES;
	r = io_submit(ctx, 1, &p);
	if (r != -EINVAL) {
		ck_assert_int_eq(r, 1);
		one_event(ctx, cb, &ev);
		ck_assert_int_eq((long)ev.res, -EINVAL);
		check_pads(&ev, 0xffffffffu);
	}
}

/* RWF_APPEND where the kernel looks for it: written at the end.  Then a
 * flag no kernel knows is refused, not ignored: the kernel reads this
 * word as the flags. */
static void round_trip_rw_flags(io_context_t ctx, struct iocb *cb, int fd)
{
	struct iocb *p = cb;
	struct io_event ev;
	unsigned char in[1], out[40];
	struct iovec iov = { out, sizeof(out) };
	struct stat st;

	memset(out, 0xa5, sizeof(out));
	io_prep_pwritev2(cb, fd, &iov, 1, 0, RWF_APPEND);
	cb->data = (void *)TAG_BYTES;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	ck_assert_int_eq(cb->aio_rw_flags, RWF_APPEND);
	ck_assert_uint_eq(cb->key, 0);
	one_event(ctx, cb, &ev);
	ck_assert_int_eq((long)ev.res, (long)sizeof(out));
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, 4096 + (long)sizeof(out));
	ck_assert_int_eq(pread(fd, in, 1, 0), 1);
	ck_assert_int_eq(in[0], test_pattern(0));
	ck_assert_int_eq(pread(fd, in, 1, 4096), 1);
	ck_assert_int_eq(in[0], 0xa5);

	io_prep_pread(cb, fd, in, 1, 0);
	cb->aio_rw_flags = 0x40000000;
	ck_assert_int_eq(io_submit(ctx, 1, &p), -EOPNOTSUPP);
}

/* A poll with a key left in place: the mask in the low half of its
 * slot, the result a mask, the key overwritten with 0. */
static void round_trip_poll(io_context_t ctx, struct iocb *cb, int wfd)
{
	struct iocb *p = cb;
	struct io_event ev;

	io_prep_poll(cb, wfd, POLLOUT);
	cb->data = (void *)TAG_BYTES;
	cb->key = 0x5aa5c33cu;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	ck_assert_uint_eq(cb->key, 0);
	ck_assert_uint_eq(cb->aio_rw_flags, 0);
	ck_assert_int_eq(cb->u.poll.events, POLLOUT);
	one_event(ctx, cb, &ev);
	ck_assert_uint_ne(ev.res & POLLOUT, 0);
	ck_assert_uint_eq(ev.res & POLLIN, 0);
	check_pads(&ev, 0);
}

/*
 * The kernel finds each field of our iocb where the program put it and
 * the program finds each field of the event where the kernel put it:
 * aio_data (all bytes different) comes back in data; the kernel's key
 * (0) lands on key, not on aio_rw_flags (a nonzero key left there would
 * be an unknown RWF_* flag, refused); RWF_APPEND in aio_rw_flags takes
 * effect; the poll mask is read from the low half of its 64-bit slot; res
 * carries a byte count, a negative errno and a poll mask.
 */
START_TEST(iocb_and_event_fields_round_trip)
{
	io_context_t ctx = NULL;
	struct iocb cb;
	int fd = test_tmpfile(4096), efd = eventfd(0, EFD_CLOEXEC), pfd[2];

	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_eq(io_setup(8, &ctx), 0);

	round_trip_read(ctx, &cb, fd);
	round_trip_negative(ctx, &cb, efd);
	round_trip_rw_flags(ctx, &cb, fd);
	round_trip_poll(ctx, &cb, pfd[1]);

	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
	close(efd);
	close(pfd[0]);
	close(pfd[1]);
}
END_TEST

/* --- exactly once, threads on two CPUs --------------------------------- */

/*
 * A submitter and two user-space reapers pinned to different CPUs, and a
 * reaper that asks for more than is usually ready, so that it waits in
 * the kernel: the ring has one user-space consumer at a time or only
 * kernel consumers, and the tail, head, reap lock and kernel-reaper count
 * are all crossed between CPUs.  Every event is checked whole (tag, iocb
 * and a result that depends on the tag), so a slot copied before the
 * kernel's write of it is visible shows up as well as a duplicate.
 */
#define PINNED_EVENTS	20000L

struct pinned {
	io_context_t ctx;
	int fd, efd, ncpu;
	struct iocb *cbs;
	unsigned char *buf;
	_Atomic unsigned char *seen;
	_Atomic long reaped, dupes, bad;
};

/* Reads are 1-64 bytes long, by tag; polls (odd tags) are always ready. */
static long expected_res(uintptr_t tag)
{
	return tag % 2 ? POLLOUT : (long)(1 + tag % 64);
}

static void pin(int cpu, int ncpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % ncpu, &set);
	/* A CPU that went offline: the threads still race, unpinned. */
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *pinned_submit(void *arg)
{
	struct pinned *s = arg;
	long i;

	pin(0, s->ncpu);
	for (i = 0; i < PINNED_EVENTS; i++) {
		struct iocb *cb = &s->cbs[i];
		uintptr_t tag = (uintptr_t)i + 1;
		int r;

		if (tag % 2)
			io_prep_poll(cb, s->efd, POLLOUT);
		else
			io_prep_pread(cb, s->fd, s->buf + 64 * i,
				      (size_t)expected_res(tag), 0);
		cb->data = (void *)tag;
		while ((r = io_submit(s->ctx, 1, &cb)) == -EAGAIN)
			sched_yield();
		if (r != 1) {
			atomic_fetch_add(&s->bad, 1);
			break;
		}
	}
	return NULL;
}

static void pinned_count(struct pinned *s, const struct io_event *ev, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uintptr_t tag = (uintptr_t)ev[i].data;
		long res = (long)ev[i].res;

		if (tag < 1 || tag > (uintptr_t)PINNED_EVENTS ||
		    ev[i].obj != &s->cbs[tag - 1] || ev[i].res2 != 0 ||
		    (tag % 2 ? !(res & POLLOUT) : res != expected_res(tag))) {
			atomic_fetch_add(&s->bad, 1);
			continue;
		}
		if (atomic_fetch_add(&s->seen[tag - 1], 1) != 0)
			atomic_fetch_add(&s->dupes, 1);
	}
	atomic_fetch_add(&s->reaped, n);
}

struct pinned_reaper {
	struct pinned *s;
	int cpu, kernel;
};

static void *pinned_reap(void *arg)
{
	struct pinned_reaper *a = arg;
	struct pinned *s = a->s;
	struct io_event ev[16];
	struct timespec ms = { 0, 2000000 }, nap = { 0, 50000 };

	pin(a->cpu, s->ncpu);
	while (atomic_load(&s->reaped) < PINNED_EVENTS &&
	       atomic_load(&s->bad) == 0) {
		int r;

		if (a->kernel)
			r = io_getevents(s->ctx, 8, 16, ev, &ms);
		else
			r = io_reap(s->ctx, 16, ev);
		if (r < 0) {
			atomic_fetch_add(&s->bad, 1);
			break;
		}
		pinned_count(s, ev, r);
		/* Nothing ready: a short sleep rather than a spin, so that the
		 * submitter gets its CPU (make check runs this test in several
		 * modes at once, on two emulated CPUs in CI). */
		if (r == 0 && !a->kernel)
			nanosleep(&nap, NULL);
	}
	return NULL;
}

START_TEST(exactly_once_with_threads_on_two_cpus)
{
	struct pinned s;
	struct pinned_reaper ra[3] = { { &s, 0, 0 }, { &s, 1, 0 }, { &s, 1, 1 } };
	pthread_t sub, rp[3];
	struct iocb *p;
	struct io_event ev;
	struct timespec zero = { 0, 0 };
	unsigned long long before;
	unsigned char byte;
	long i, bad, dupes, reaped;
	int j;

	memset(&s, 0, sizeof(s));
	s.ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (s.ncpu < 1)
		s.ncpu = 1;
	s.fd = test_tmpfile(4096);
	s.efd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(s.efd, 0);
	s.cbs = calloc(PINNED_EVENTS, sizeof(*s.cbs));
	s.buf = calloc(PINNED_EVENTS, 64);
	s.seen = calloc(PINNED_EVENTS, 1);
	ck_assert(s.cbs && s.buf && s.seen);
	ck_assert_int_eq(io_setup(64, &s.ctx), 0);
	test_hang_guard("exactly_once_with_threads_on_two_cpus", 100);

	for (j = 0; j < 3; j++)
		ck_assert_int_eq(pthread_create(&rp[j], NULL, pinned_reap, &ra[j]), 0);
	ck_assert_int_eq(pthread_create(&sub, NULL, pinned_submit, &s), 0);
	pthread_join(sub, NULL);
	for (j = 0; j < 3; j++)
		pthread_join(rp[j], NULL);

	bad = atomic_load(&s.bad);
	dupes = atomic_load(&s.dupes);
	reaped = atomic_load(&s.reaped);
	ck_assert_msg(bad == 0, "%ld wrong events or failed calls", bad);
	ck_assert_msg(dupes == 0, "%ld events delivered twice", dupes);
	ck_assert_msg(reaped == PINNED_EVENTS, "%ld events reaped of %ld",
		      reaped, PINNED_EVENTS);
	for (i = 0; i < PINNED_EVENTS; i++)
		ck_assert_int_eq(atomic_load(&s.seen[i]), 1);
	for (i = 1; i < PINNED_EVENTS; i += 2)
		ck_assert_int_eq(s.buf[64 * i], test_pattern(0));
	ck_assert_int_eq(io_getevents(s.ctx, 0, 1, &ev, &zero), 0);

	/* Every kernel reaper has left its count: a ready event is taken
	 * from the ring again, with no system call. */
	io_prep_pread(&s.cbs[0], s.fd, &byte, 1, 0);
	p = &s.cbs[0];
	ck_assert_int_eq(io_submit(s.ctx, 1, &p), 1);
	before = io_syscall_count();
	ck_assert_int_eq(io_getevents(s.ctx, 1, 1, &ev, &zero), 1);
	if (ring_mode())
		ck_assert_msg(io_syscall_count() == before,
			      "the ring was left to the kernel after the threads");
	test_hang_guard(NULL, 0);
	ck_assert_int_eq(io_destroy(s.ctx), 0);
	close(s.fd);
	close(s.efd);
	free(s.cbs);
	free(s.buf);
	free((void *)s.seen);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("arch");
	TCase *t = tcase_create("arch");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, ring_size_and_bounds_on_this_page_size);
	tcase_add_test(t, iocb_and_event_fields_round_trip);
	tcase_add_test(t, exactly_once_with_threads_on_two_cpus);
	suite_add_tcase(s, t);
	return s;
}
