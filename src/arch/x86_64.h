/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system-call trap on x86_64, not x32 (raw_syscall.h picks this). */
#ifndef LIBAIO_ARCH_X86_64_H
#define LIBAIO_ARCH_X86_64_H

static inline long arch_syscall6(long n, long a, long b, long c, long d, long e,
				long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif /* LIBAIO_ARCH_X86_64_H */
