/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The io_queue_* helpers: a context plus callbacks stored in iocb->data.
 */
#include "config.h"

#include <errno.h>

#include "export.h"
#include "user_ptr.h"
#include "versioned.h"

AIO_PUBLIC int io_queue_init(int maxevents, io_context_t *ctxp)
{
	if (maxevents <= 0)
		return -EINVAL;
	if (obviously_bad_pointer(ctxp))
		return -EFAULT;
	*ctxp = NULL;
	return io_setup(maxevents, ctxp);
}

AIO_PUBLIC int io_queue_release(io_context_t ctx)
{
	return io_destroy(ctx);
}

/*
 * Runs the callback of every completion that is ready, without waiting.
 * Returns 0 once none is left, or the first error of the reap.  Batches
 * of events are reaped at once; each callback still runs in order.
 */
AIO_PUBLIC int io_queue_run(io_context_t ctx)
{
	struct timespec zero = { 0, 0 };
	struct io_event ev[16];
	int n, i;

	for (;;) {
		n = aioreap_io_getevents_0_4(ctx, 0, 16, ev, &zero);
		if (n <= 0)
			return n;
		for (i = 0; i < n; i++) {
			io_callback_t cb = (io_callback_t)ev[i].data;

			cb(ctx, ev[i].obj, (long)ev[i].res, (long)ev[i].res2);
		}
	}
}

/*
 * Kept as the stock library has it: min_nr and nr are 0, so the kernel
 * returns at once whatever the timeout; it only reports a bad context.
 */
AIO_PUBLIC int aioreap_io_queue_wait_0_4(io_context_t ctx,
				 const struct timespec *timeout)
{
	return aioreap_io_getevents_0_4(ctx, 0, 0, NULL, (struct timespec *)timeout);
}
AIO_SYMVER(aioreap_io_queue_wait_0_4, "io_queue_wait@@LIBAIO_0.4");
