/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The system-call counter behind io_syscall_count() (see raw_syscall.h for
 * where it is incremented and why relaxed ordering suffices).
 */
#include "config.h"

#include "export.h"
#include "raw_syscall.h"

_Atomic unsigned long long aioreap_aio_syscalls;

AIO_PUBLIC unsigned long long io_syscall_count(void)
{
	return atomic_load_explicit(&aioreap_aio_syscalls,
				    memory_order_relaxed);
}
