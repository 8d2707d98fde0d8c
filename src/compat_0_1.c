/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LIBAIO_0.1 entry points, for binaries linked against the pre-0.4
 * interface: io_cancel without a result argument, io_getevents without
 * min_nr (it waits for one event), and io_queue_wait.  Each copies a
 * const timeout before passing it on, as the old interface promised.
 */
#include "config.h"

#include <errno.h>

#include "export.h"
#include "user_ptr.h"
#include "versioned.h"

static int copy_timeout(const struct timespec *in, struct timespec *out,
			struct timespec **use)
{
	*use = NULL;
	if (!in)
		return 0;
	if (obviously_bad_pointer(in))
		return -EFAULT;
	*out = *in;
	*use = out;
	return 0;
}

AIO_PUBLIC int aioreap_io_cancel_0_1(io_context_t ctx, struct iocb *iocb)
{
	struct io_event unused;

	return aioreap_io_cancel_0_4(ctx, iocb, &unused);
}
AIO_SYMVER(aioreap_io_cancel_0_1, "io_cancel@LIBAIO_0.1");

AIO_PUBLIC int aioreap_io_getevents_0_1(io_context_t ctx, long nr,
					struct io_event *events,
					const struct timespec *timeout)
{
	struct timespec copy, *use;
	int ret = copy_timeout(timeout, &copy, &use);

	return ret ? ret : aioreap_io_getevents_0_4(ctx, 1, nr, events, use);
}
AIO_SYMVER(aioreap_io_getevents_0_1, "io_getevents@LIBAIO_0.1");

AIO_PUBLIC int aioreap_io_queue_wait_0_1(io_context_t ctx,
					 const struct timespec *timeout)
{
	struct timespec copy, *use;
	int ret = copy_timeout(timeout, &copy, &use);

	return ret ? ret : aioreap_io_getevents_0_4(ctx, 0, 0, NULL, use);
}
AIO_SYMVER(aioreap_io_queue_wait_0_1, "io_queue_wait@LIBAIO_0.1");
