/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * io_submit and io_cancel.  The kernel takes every batch first; only a
 * poll it refuses with EINVAL (every poll on a kernel without aio poll;
 * terminals on any) goes to the emulation, or every poll when
 * LIBAIO_DISABLE=poll says so.  Contexts with async submission on
 * (async_submit.c) have their reads and writes copied first.
 */
#include "config.h"

#include "async.h"
#include "compiler.h"
#include "export.h"
#include "feature_flags.h"
#include "poll_emul.h"
#include "raw_syscall.h"
#include "versioned.h"

AIO_PUBLIC int io_submit(io_context_t ctx, long nr, struct iocb *ios[])
{
	if (unlikely((features_disabled() & ASYNC_ENV) ||
		     atomic_load_explicit(&aioreap_async_set_any,
					  memory_order_relaxed)) &&
	    aioreap_async_on(ctx))
		return aioreap_async_submit(ctx, nr, ios);
	return aioreap_poll_submit(ctx, nr, ios);
}

AIO_PUBLIC int aioreap_io_cancel_0_4(io_context_t ctx, struct iocb *iocb,
				     struct io_event *evt)
{
	int ret;

	if (unlikely(atomic_load_explicit(&aioreap_poll_emul_used,
					  memory_order_relaxed)) &&
	    (aioreap_async_cancel(ctx, iocb, evt, &ret) ||
	     aioreap_poll_emul_cancel(ctx, iocb, &ret)))
		return ret;
	return (int)aio_sys_cancel(ctx, iocb, evt);
}
AIO_SYMVER(aioreap_io_cancel_0_4, "io_cancel@@LIBAIO_0.4");
