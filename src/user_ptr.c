/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stores into the program's memory that fail as the kernel's own do. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "raw_syscall.h"
#include "user_ptr.h"

/*
 * process_vm_writev on the calling thread checks the target as the
 * kernel's stores to user memory do (no ptrace check within one thread
 * group), so a read-only or unmapped one answers EFAULT instead of
 * faulting.  Any other failure means the call itself is refused (a
 * seccomp filter, a kernel built without it): then a plain store, as a
 * library without the check would do.
 */
int aioreap_user_store(void *to, const void *from, size_t len)
{
	struct iovec local = { (void *)from, len };
	struct iovec remote = { to, len };
	long got;

	if (obviously_bad_pointer(to))
		return -EFAULT;
	got = sys_vm_write(&local, &remote);
	if (got == (long)len)
		return 0;
	if (got >= 0 || got == -EFAULT)
		return -EFAULT;		/* a part, or none, was writable */
	memcpy(to, from, len);
	return 0;
}
