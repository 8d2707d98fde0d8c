/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel wait (kernel_wait.c): what a reap asks of the kernel once
 * the ring has been tried.
 */
#ifndef LIBAIO_KERNEL_WAIT_H
#define LIBAIO_KERNEL_WAIT_H

#include <signal.h>

#include "compiler.h"
#include "libaio.h"

/* The C library's struct timespec under _TIME_BITS=64 on a 32-bit ABI
 * (on 64-bit ABIs, the same layout as its struct timespec): the one
 * decoder of the timeouts the time64 entry points are given. */
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

/* How a reap may block in the kernel, once the ring has been tried. */
struct wait_spec {
	const void *ts;		/* timeout as the caller passed it, or NULL */
	int ts64;		/* ts is a 64-bit-time timespec (32-bit ABIs) */
	int pget;		/* io_pgetevents semantics (mask may be NULL) */
	const sigset_t *mask;
};

/* kernel_wait.c: io_pgetevents in the kernel, or its emulation. */
long aioreap_kernel_pgetevents(io_context_t ctx, long min_nr, long nr,
			       struct io_event *ev, const struct wait_spec *w);
/* io_getevents in the kernel with the wait spec's timeout, no mask. */
long aioreap_kernel_getevents(io_context_t ctx, long min_nr, long nr,
			      struct io_event *ev, const struct wait_spec *w);

#endif /* LIBAIO_KERNEL_WAIT_H */
