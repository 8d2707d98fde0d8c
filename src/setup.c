/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* io_setup and io_destroy: the kernel's calls plus registry bookkeeping. */
#include "config.h"

#include "async.h"
#include "compiler.h"
#include "export.h"
#include "poll_emul.h"
#include "raw_syscall.h"
#include "registry.h"

AIO_PUBLIC int io_setup(int maxevents, io_context_t *ctxp)
{
	long ret = aio_sys_setup((unsigned)maxevents, ctxp);

	if (ret == 0) {
		aioreap_registry_add(*ctxp);
		aioreap_poll_emul_setup_done(*ctxp);
		aioreap_async_setup_done(*ctxp);
		if (atomic_load_explicit(&aioreap_poll_emul_used,
					 memory_order_relaxed))
			aioreap_async_forget(*ctxp);
	}
	return (int)ret;
}

/*
 * The kernel unmaps the ring inside io_destroy, so no user-space reaper
 * may be inside it then: the registry's begin_destroy waits for the one
 * that may be copying (a bounded copy, never a system call) and shuts out
 * later ones.  Threads blocked in io_getevents are woken by the kernel with
 * -EINVAL; nothing here waits for them to leave.
 */
AIO_PUBLIC int io_destroy(io_context_t ctx)
{
	struct ctx_entry *e = aioreap_registry_begin_destroy(ctx);
	struct pe_destroy pd;
	long ret;

	aioreap_poll_emul_destroy_begin(ctx, &pd);
	/* After the dying mark: no worker takes ctx's records from here. */
	if (atomic_load(&aioreap_poll_emul_used))
		aioreap_async_forget(ctx);
	/* Its setting goes with it, before the address can be given out
	 * again: after, it could erase the setting of a new context. */
	aioreap_async_setup_done(ctx);
	ret = aio_sys_destroy(ctx);
	aioreap_poll_emul_destroy_end(&pd);
	aioreap_registry_end_destroy(e);
	return (int)ret;
}
