/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Y2038 entry points for 32-bit ABIs (LIBAIO_0.6, the names Debian's
 * libaio1t64 exports).  A program built with _TIME_BITS=64 reaches these
 * through the header's asm names; its struct timespec has a 64-bit
 * tv_sec.  They take the same path as the 32-bit ones; kernel_wait.c
 * hands the kernel the 64-bit timeout, or narrows it where the kernel
 * lacks io_pgetevents_time64.
 */
#include "config.h"

#include "export.h"
#include "versioned.h"

#if __SIZEOF_LONG__ == 4

/* config.h undoes a distribution's _TIME_BITS=64 for the library's own
 * files; without that, io_getevents would be defined under this file's
 * name (the header's asm labels) and take a 64-bit timespec. */
#ifdef __USE_TIME_BITS64
# error "_TIME_BITS=64 reached the library's own files (see config.h)"
#endif

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
