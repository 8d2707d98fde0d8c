/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system-call trap on aarch64 (raw_syscall.h picks this file). */
#ifndef LIBAIO_ARCH_AARCH64_H
#define LIBAIO_ARCH_AARCH64_H

static inline long arch_syscall6(long n, long a, long b, long c, long d, long e,
				long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}

#endif /* LIBAIO_ARCH_AARCH64_H */
