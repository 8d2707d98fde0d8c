/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LIBAIO_USER_PTR_H
#define LIBAIO_USER_PTR_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/*
 * A user pointer the kernel would refuse with EFAULT without looking: the
 * first page, or anything at or above USER_TOP.  No user mapping lives
 * above 2^56 on x86_64 (even with 5-level paging) or aarch64: that is
 * kernel space; nothing above 0xffffe000 is user memory for a 32-bit
 * process (the i386 compat limit on x86_64; native splits end lower).
 * One unsigned compare covers both ends: below 4096 wraps around.
 */
#if UINTPTR_MAX > 0xffffffffu
# define USER_TOP	((uintptr_t)1 << 56)
#else
# define USER_TOP	((uintptr_t)0xffffe000u)
#endif

static inline int obviously_bad_pointer(const void *p)
{
	return (uintptr_t)p - 4096 >= USER_TOP - 4096;
}

/* Copy len bytes from from to the program's to: 0, or -EFAULT (nothing
 * or only a part stored) where the kernel's own store would fail. */
int aioreap_user_store(void *to, const void *from, size_t len);

#endif /* LIBAIO_USER_PTR_H */
