/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel wait: everything a reap asks of the kernel once the ring has
 * been tried, down to the system-call layer and nothing above it.
 *
 * io_pgetevents: the kernel's call where it exists, else an emulation.
 *
 * The kernel call (Linux 4.18) installs the mask, waits, and restores the
 * mask atomically.  Where it answers ENOSYS (older kernels) or EPERM (a
 * seccomp profile that does not list it), the library swaps the thread's
 * mask around an io_getevents wait instead.  What that cannot do exactly:
 *
 *  - A signal the mask unblocks that arrives after the mask is installed
 *    but before the wait begins runs its handler at once, and the wait
 *    that follows is not interrupted by it: the call then returns only on
 *    events, timeout or another signal.  The window is the return path of
 *    one rt_sigprocmask system call and the entry of io_getevents; nothing
 *    else runs in between.
 *  - A signal that is already pending when the call starts is handled
 *    exactly: it is delivered as the mask is installed, and the call then
 *    reaps what is ready without waiting and returns the events or
 *    -EINTR, as the kernel would.
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

static uint64_t first_word(const void *set)
{
	uint64_t w;

	memcpy(&w, set, sizeof(w));
	return w;
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

static long emulate(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
		    const struct wait_spec *w)
{
	sigset_t old, now, pending;
	long ret;

	if (!w->mask)
		return aioreap_kernel_getevents(ctx, min_nr, nr, ev, w);
	if (obviously_bad_pointer(w->mask))
		return -EFAULT;

	/*
	 * The caller's mask is never read here: the kernel copies it while
	 * installing it (-EFAULT for a bad pointer, as io_pgetevents would
	 * say), and we read back what it installed.  A signal pending before
	 * and unblocked now has been delivered on the way back from that
	 * call, before any wait.
	 */
	memset(&pending, 0, sizeof(pending));
	memset(&now, 0, sizeof(now));
	sys_sigpending(&pending);
	ret = sys_sigprocmask(SIG_SETMASK, w->mask, &old);
	if (ret < 0)
		return ret;
	sys_sigprocmask(SIG_SETMASK, NULL, &now);
	if (first_word(&pending) & ~first_word(&now)) {
		static const struct timespec zero = { 0, 0 };

		ret = aio_sys_getevents(ctx, 0, nr, ev, &zero);
		sys_sigprocmask(SIG_SETMASK, &old, NULL);
		/* The kernel says EINTR whenever nothing was reaped, even
		 * with min_nr 0 (probe on 6.18). */
		return ret != 0 ? ret : -EINTR;
	}
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
