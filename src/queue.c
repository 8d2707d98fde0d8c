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
 * Returns 0 once none is left, or the first error of the reap.  One event
 * is taken per callback, as the stock library does: a callback that never
 * returns (longjmp, a C++ exception, exit of the thread) then leaves every
 * other completion in the ring.  From the ring, each take costs a few
 * nanoseconds, not a system call.
 */
AIO_PUBLIC int io_queue_run(io_context_t ctx)
{
	static const struct timespec zero = { 0, 0 };
	struct io_event ev;
	int n;

	while ((n = aioreap_io_getevents_0_4(ctx, 0, 1, &ev,
					     (struct timespec *)&zero)) == 1) {
		io_callback_t cb = (io_callback_t)ev.data;

		cb(ctx, ev.obj, (long)ev.res, (long)ev.res2);
	}
	return n;
}

/*
 * Kept as the stock library has it: min_nr and nr are 0, so the kernel
 * returns at once whatever the timeout; it only reports a bad context.
 */
AIO_PUBLIC int aioreap_io_queue_wait_0_4(io_context_t ctx,
					 const struct timespec *timeout)
{
	return aioreap_io_getevents_0_4(ctx, 0, 0, NULL,
					(struct timespec *)timeout);
}
AIO_SYMVER(aioreap_io_queue_wait_0_4, "io_queue_wait@@LIBAIO_0.4");
