/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system-call trap for every other target, x32 among them: the C
 * library's syscall() (raw_syscall.h picks this file). */
#ifndef LIBAIO_ARCH_GENERIC_H
#define LIBAIO_ARCH_GENERIC_H

#include <errno.h>
#include <unistd.h>

/*
 * Elsewhere (the rarer architectures) the C library's syscall() does the
 * trap and reports a failure in errno.  A task made by a raw
 * clone(CLONE_VM) shares that errno, so it can overwrite the value
 * between the call and the read below.
 */
static inline long arch_syscall6(long n, long a, long b, long c, long d, long e,
				long f)
{
	int saved = errno;
	long ret = syscall(n, a, b, c, d, e, f);

	if (ret == -1) {
		ret = -errno;
		errno = saved;
	}
	return ret;
}

#endif /* LIBAIO_ARCH_GENERIC_H */
