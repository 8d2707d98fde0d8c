/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LIBAIO_INTERNAL_H
#define LIBAIO_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "libaio.h"
#include "registry.h"

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* How a reap may block in the kernel, once the ring has been tried. */
struct wait_spec {
	const void *ts;		/* timeout as the caller passed it; NULL: none */
	int ts64;		/* ts is a 64-bit-time timespec (32-bit ABIs) */
	int pget;		/* io_pgetevents semantics (mask may be NULL) */
	const sigset_t *mask;
};

/* getevents.c */
int aioreap_getevents_core(io_context_t ctx, long min_nr, long nr,
		   struct io_event *ev, const struct wait_spec *w);

/* kernel_wait.c: io_pgetevents in the kernel, or its emulation. */
long aioreap_kernel_pgetevents(io_context_t ctx, long min_nr, long nr,
		       struct io_event *ev, const struct wait_spec *w);
/* io_getevents in the kernel with the wait spec's timeout, no mask. */
long aioreap_kernel_getevents(io_context_t ctx, long min_nr, long nr,
		      struct io_event *ev, const struct wait_spec *w);

/*
 * A user pointer the kernel would refuse with EFAULT without looking: the
 * first page, or anything at or above USER_TOP.  No user mapping lives
 * above 2^56 on x86_64 (even with 5-level paging) or aarch64: that is
 * kernel space; nothing above 0xffffe000 is user memory for a 32-bit
 * process (the i386 compat limit on x86_64; native splits end lower).
 * One unsigned compare covers both ends: below 4096 wraps around.
 */
#if UINTPTR_MAX > 0xffffffffu
# define USER_TOP	((uintptr_t)1 << 56)
#else
# define USER_TOP	((uintptr_t)0xffffe000u)
#endif

static inline int obviously_bad_pointer(const void *p)
{
	return (uintptr_t)p - 4096 >= USER_TOP - 4096;
}

#endif /* LIBAIO_INTERNAL_H */
