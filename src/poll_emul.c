/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PLACEHOLDER: replaced by the poll emulation (issue 4).  Until then every
 * poll goes to the kernel unchanged. */
#include "config.h"

#include "internal.h"
#include "poll_emul.h"
#include "syscall.h"

_Atomic int poll_emul_used;

void poll_emul_translate(struct io_event *ev, long n)
{
	(void)ev;
	(void)n;
}

int poll_emul_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	return (int)aio_sys_submit(ctx, nr, ios);
}

int poll_emul_resume(io_context_t ctx, long nr, struct iocb **ios, long done)
{
	(void)ctx;
	(void)nr;
	(void)ios;
	return (int)done;
}

int poll_emul_cancel(io_context_t ctx, struct iocb *iocb, int *ret)
{
	(void)ctx;
	(void)iocb;
	(void)ret;
	return 0;
}

void poll_emul_forget(io_context_t ctx)
{
	(void)ctx;
}
