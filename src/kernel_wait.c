/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel wait: everything a reap asks of the kernel once the ring has
 * been tried, down to the system-call layer and nothing above it.
 *
 * io_pgetevents: the kernel's call where it exists, else an emulation.
 *
 * The kernel call (Linux 4.18) installs the mask, waits, and restores the
 * mask atomically.  Where it answers ENOSYS (older kernels) or EPERM (a
 * seccomp profile that does not list it), the library waits in
 * io_getevents with the signals the mask would let in still blocked, in
 * bounded slices, and lets such a signal in between slices (emulate_sliced
 * argues it): no wake-up is lost, and one comes at most a slice late.
 *
 * 64-bit timeouts on 32-bit ABIs (the time64 entry points): the kernel's
 * io_pgetevents_time64 (Linux 5.1) takes that range whole; on older
 * kernels the timeout is narrowed to the 32-bit calls (a relative timeout
 * beyond 2^31 s, 68 years, is clamped).
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "feature_flags.h"
#include "kernel_wait.h"
#include "raw_syscall.h"
#include "user_ptr.h"

#if __SIZEOF_LONG__ == 4

static long
kernel_getevents_ts64(io_context_t ctx, long min_nr, long nr,
		      struct io_event *ev, const void *ts,
		      const sigset_t *mask, int with_mask)
{
	const struct timespec_time64 *u = ts;
	struct aio_sigset_arg sig = { mask, KERNEL_SIGSET_SIZE };
	struct kernel_timespec64 k;
	struct timespec t32;
	long ret;

	if (u) {
		if (obviously_bad_pointer(u))
			return -EFAULT;
		k.tv_sec = u->tv_sec;
		k.tv_nsec = u->tv_nsec;
	}
	if (aioreap_features_time64_native()) {
		ret = aio_sys_pgetevents_time64(ctx, min_nr, nr, ev,
						u ? &k : NULL,
						with_mask ? &sig : NULL);
		if (ret != -ENOSYS && ret != -EPERM)
			return ret;
		aioreap_features_time64_missing();
	}
	if (u) {
		t32.tv_sec = k.tv_sec > INT_MAX ? INT_MAX :
			     k.tv_sec < INT_MIN ? INT_MIN : (time_t)k.tv_sec;
		t32.tv_nsec = (long)k.tv_nsec;
	}
	if (with_mask)
		return aio_sys_pgetevents(ctx, min_nr, nr, ev,
					  u ? &t32 : NULL, &sig);
	return aio_sys_getevents(ctx, min_nr, nr, ev, u ? &t32 : NULL);
}

#endif

long aioreap_kernel_getevents(io_context_t ctx, long min_nr, long nr,
			      struct io_event *ev, const struct wait_spec *w)
{
#if __SIZEOF_LONG__ == 4
	if (w->ts64)
		return kernel_getevents_ts64(ctx, min_nr, nr, ev,
					     w->ts, NULL, 0);
#endif
	return aio_sys_getevents(ctx, min_nr, nr, ev, w->ts);
}

static long native(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
		   const struct wait_spec *w)
{
	struct aio_sigset_arg sig = { w->mask, KERNEL_SIGSET_SIZE };

#if __SIZEOF_LONG__ == 4
	if (w->ts64)
		return kernel_getevents_ts64(ctx, min_nr, nr, ev,
					     w->ts, w->mask, 1);
#endif
	return aio_sys_pgetevents(ctx, min_nr, nr, ev, w->ts, &sig);
}

/*
 * The emulation's wait slice: the longest it sleeps in io_getevents
 * without looking for a signal that the caller's mask lets in, and so the
 * bound on how late such a signal ends the call.  Each slice costs two
 * system calls (io_getevents, rt_sigpending) and a timer wake-up, a few
 * microseconds, paid only while a thread waits with a mask on a kernel
 * without io_pgetevents: 100 wake-ups a second, about 0.05% of one CPU.
 * 10 ms is the scheduler tick of a HZ=100 kernel, a delay programs
 * already meet whenever a signal finds its thread queued behind another.
 */
#define EMUL_SLICE_NS (10 * 1000 * 1000LL)

#define NS_PER_S 1000000000LL
/* The kernel's KTIME_SEC_MAX: seconds it can hold in signed nanoseconds. */
#define KTIME_SEC_MAX (INT64_MAX / NS_PER_S)
#define NO_TIMEOUT (-1LL)

/* A signal set of the kernel's size (glibc's sigset_t is 128 bytes). */
struct ksigset {
	unsigned long w[KERNEL_SIGSET_SIZE / sizeof(unsigned long)];
};

/*
 * The caller's timeout in nanoseconds as io_getevents reads it: seconds
 * beyond what signed 64-bit nanoseconds hold mean no timeout; otherwise
 * tv_sec * 10^9 + tv_nsec in wrapping arithmetic, tv_nsec unchecked, and
 * a total at or below zero means no wait.  NO_TIMEOUT for none.
 */
static long read_timeout(const struct wait_spec *w, long long *ns)
{
	union {
		struct timespec t;
#if __SIZEOF_LONG__ == 4
		struct timespec_time64 t64;
#endif
	} u;
	size_t size = sizeof(u.t);
	struct iovec local = { &u, 0 }, remote = { (void *)w->ts, 0 };
	long long sec;
	long nsec, got;

	if (!w->ts) {
		*ns = NO_TIMEOUT;
		return 0;
	}
	if (obviously_bad_pointer(w->ts))
		return -EFAULT;
#if __SIZEOF_LONG__ == 4
	if (w->ts64)
		size = sizeof(u.t64);
#endif
	/* Read as the kernel reads it: EFAULT, not a crash, for memory that
	 * is not readable.  Where a seccomp filter refuses the checked read,
	 * a plain one. */
	local.iov_len = remote.iov_len = size;
	got = sys_vm_read(&local, &remote);
	if (got == -EFAULT || (got >= 0 && got != (long)size))
		return -EFAULT;
	if (got < 0)
		memcpy(&u, w->ts, size);
#if __SIZEOF_LONG__ == 4
	if (w->ts64) {
		sec = u.t64.tv_sec;
		nsec = u.t64.tv_nsec;
	} else
#endif
	{
		sec = u.t.tv_sec;
		nsec = u.t.tv_nsec;
	}
	if (sec >= KTIME_SEC_MAX) {
		*ns = NO_TIMEOUT;
		return 0;
	}
	sec = (long long)((unsigned long long)sec * NS_PER_S +
			  (unsigned long long)(long long)nsec);
	/* A total below zero is no timeout at all for the kernel (it
	 * waits until events or a signal: measured on 6.18). */
	*ns = sec >= 0 ? sec : NO_TIMEOUT;
	return 0;
}

/* One io_getevents of at most ns nanoseconds (under a second), in the
 * time format the caller's entry point uses, so that a 32-bit ABI takes
 * the same system call as a plain io_getevents would. */
static long slice_wait(io_context_t ctx, long min_nr, long nr,
		       struct io_event *ev, long long ns, int ts64)
{
	struct timespec t = { 0, (long)ns };
	struct wait_spec s = { &t, 0, 0, NULL };
#if __SIZEOF_LONG__ == 4
	struct timespec_time64 t64;

	if (ts64) {
		memset(&t64, 0, sizeof(t64));
		t64.tv_nsec = (int)ns;
		s.ts = &t64;
		s.ts64 = 1;
	}
#else
	(void)ts64;
#endif
	return aioreap_kernel_getevents(ctx, min_nr, nr, ev, &s);
}

/* Is a signal of open pending?  rt_sigpending reports the blocked ones
 * only, thread- and process-directed alike: open is blocked here. */
static int open_pending(const struct ksigset *open)
{
	struct ksigset p;
	size_t i;

	memset(&p, 0, sizeof(p));
	sys_sigpending(&p);
	for (i = 0; i < sizeof(p.w) / sizeof(p.w[0]); i++)
		if (p.w[i] & open->w[i])
			return 1;
	return 0;
}

/*
 * The emulation, with the caller's mask and the thread's old one both in
 * force (their union blocked).  Installing the caller's mask and then
 * sleeping in io_getevents cannot be made safe: a signal it lets in that
 * arrives between the two runs its handler before the sleep, which it
 * does not interrupt, and the wake-up is lost.  So the signals that mask
 * would let in (open: blocked in the old mask, not in the caller's) stay
 * blocked while the thread sleeps, in slices of EMUL_SLICE_NS; before the
 * first and after each, rt_sigpending tells whether one has come.  If
 * so, the caller's mask is installed: the kernel delivers the signal on
 * the way back from that rt_sigprocmask (its handler runs) and the call
 * ends as the kernel's would: with the events reaped, else -EINTR.  A
 * signal that arrives after the last look stays pending and blocked, as
 * if it had come after the call.  Signals unblocked in both masks stay
 * unblocked and interrupt io_getevents itself (-EINTR, handler run);
 * those only the caller's mask blocks are held until the old mask is back.
 *
 * Differences that remain, each a spurious -EINTR or a later handler,
 * never a lost wake-up: a process-directed signal may be taken by another
 * thread that has it unblocked between the look and the mask change (the
 * call then says -EINTR with no handler run here); one the program
 * ignores is held pending while blocked, so it ends the call with -EINTR
 * where the kernel would have discarded it; and the last slice may end
 * later than the timeout by the scheduler's delay, as any wait does.
 */
/* CLOCK_MONOTONIC in nanoseconds (the C library's, through the vDSO
 * where there is one: no system call, and it cannot fail). */
static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * NS_PER_S + t.tv_nsec;
}

static long emulate_sliced(io_context_t ctx, long min_nr, long nr,
			   struct io_event *ev, const struct ksigset *open,
			   const sigset_t *mask, long long left, int ts64)
{
	/* The timeout ends at a time, not after a count of slices, each of
	 * which may wake late on a busy machine. */
	long long end = left == NO_TIMEOUT ? 0 : now_ns() + left;
	long got = 0, r = 0;
	int waited = 0;

	for (;;) {
		long long step;

		if (open_pending(open)) {
			/* Reap what is ready first, as the kernel does
			 * before it notices the signal; a look that ended a
			 * wait already reaped, unless min_nr is not met. */
			if (!waited || got < min_nr) {
				r = slice_wait(ctx, min_nr - got, nr - got,
					       got ? ev + got : ev, 0, ts64);
				if (r > 0)
					got += r;
			}
			sys_sigprocmask(SIG_SETMASK, mask, NULL);
			/* The kernel says EINTR whenever nothing was
			 * reaped, even with min_nr 0 (probe on 6.18). */
			return got ? got : r < 0 ? r : -EINTR;
		}
		if (waited && (got >= min_nr || left == 0))
			return got;
		step = left == NO_TIMEOUT || left > EMUL_SLICE_NS ?
		       EMUL_SLICE_NS : left;
		r = slice_wait(ctx, min_nr - got, nr - got,
			       got ? ev + got : ev, step, ts64);
		waited = 1;
		if (r < 0)
			return got ? got : r;
		got += r;
		if (left != NO_TIMEOUT) {
			left = end - now_ns();
			if (left < 0)
				left = 0;
		}
	}
}

static long emulate(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
		    const struct wait_spec *w)
{
	struct ksigset old, open;
	long long left;
	size_t i;
	long ret;
	int any = 0;

	if (!w->mask)
		return aioreap_kernel_getevents(ctx, min_nr, nr, ev, w);
	ret = read_timeout(w, &left);
	if (ret < 0)
		return ret;
	if (obviously_bad_pointer(w->mask))
		return -EFAULT;

	/*
	 * Block what the caller's mask blocks, on top of the old mask: the
	 * kernel copies the mask (-EFAULT for a bad pointer, as io_pgetevents
	 * would say) and delivers nothing, since nothing is unblocked.  Once
	 * it has read the mask, so can we.
	 */
	memset(&old, 0, sizeof(old));
	ret = sys_sigprocmask(SIG_BLOCK, w->mask, &old);
	if (ret < 0)
		return ret;
	memcpy(&open, w->mask, sizeof(open));
	for (i = 0; i < sizeof(open.w) / sizeof(open.w[0]); i++) {
		open.w[i] = old.w[i] & ~open.w[i];
		any |= open.w[i] != 0;
	}
	if (any)
		ret = emulate_sliced(ctx, min_nr, nr, ev, &open, w->mask, left,
				     w->ts64);
	else
		/* The mask lets nothing in that was blocked, so the mask in
		 * force now is exactly the caller's: one plain wait, with
		 * the caller's own timeout, is the kernel's call. */
		ret = aioreap_kernel_getevents(ctx, min_nr, nr, ev, w);
	sys_sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

long aioreap_kernel_pgetevents(io_context_t ctx, long min_nr, long nr,
			       struct io_event *ev, const struct wait_spec *w)
{
	if (aioreap_features_pgetevents_native()) {
		long ret = native(ctx, min_nr, nr, ev, w);

		if (ret != -ENOSYS && ret != -EPERM)
			return ret;
		aioreap_features_pgetevents_missing();
	}
	return emulate(ctx, min_nr, nr, ev, w);
}
