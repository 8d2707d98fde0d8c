/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Y2038 entry points for 32-bit ABIs (LIBAIO_0.6, the names Debian's
 * libaio1t64 exports).  A program built with _TIME_BITS=64 reaches these
 * through the header's asm names; its struct timespec has a 64-bit
 * tv_sec.  The kernel's io_pgetevents_time64 (Linux 5.1) takes that range
 * whole; on older kernels the timeout is narrowed to the 32-bit calls
 * (a relative timeout beyond 2^31 s, 68 years, is clamped).
 */
#include "config.h"

#include <limits.h>

#include "export.h"
#include "internal.h"
#include "syscall.h"

#if __SIZEOF_LONG__ == 4

/* The C library's struct timespec under _TIME_BITS=64 on a 32-bit ABI. */
struct timespec_time64 {
	long long tv_sec;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	int __pad;
	int tv_nsec;
#else
	int tv_nsec;
	int __pad;
#endif
};

static _Atomic int time64_missing;

long aioreap_kernel_getevents_ts64(io_context_t ctx, long min_nr, long nr,
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
	if (!atomic_load_explicit(&time64_missing, memory_order_relaxed)) {
		ret = aio_sys_pgetevents_time64(ctx, min_nr, nr, ev, u ? &k : NULL,
						with_mask ? &sig : NULL);
		if (ret != -ENOSYS && ret != -EPERM)
			return ret;
		atomic_store_explicit(&time64_missing, 1, memory_order_relaxed);
	}
	if (u) {
		t32.tv_sec = k.tv_sec > INT_MAX ? INT_MAX :
			     k.tv_sec < INT_MIN ? INT_MIN : (time_t)k.tv_sec;
		t32.tv_nsec = (long)k.tv_nsec;
	}
	if (with_mask)
		return aio_sys_pgetevents(ctx, min_nr, nr, ev, u ? &t32 : NULL, &sig);
	return aio_sys_getevents(ctx, min_nr, nr, ev, u ? &t32 : NULL);
}

int io_getevents_time64(io_context_t ctx, long min_nr, long nr,
			struct io_event *events, void *timeout);
int io_pgetevents_time64(io_context_t ctx, long min_nr, long nr,
			 struct io_event *events, void *timeout,
			 sigset_t *sigmask);

AIO_PUBLIC int io_getevents_time64(io_context_t ctx, long min_nr, long nr,
				   struct io_event *events, void *timeout)
{
	struct wait_spec w = { timeout, 1, 0, NULL };

	return aioreap_getevents_core(ctx, min_nr, nr, events, &w);
}

AIO_PUBLIC int io_pgetevents_time64(io_context_t ctx, long min_nr, long nr,
				    struct io_event *events, void *timeout,
				    sigset_t *sigmask)
{
	struct wait_spec w = { timeout, 1, 1, sigmask };

	return aioreap_getevents_core(ctx, min_nr, nr, events, &w);
}

#endif
