/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system-call trap on 64-bit RISC-V (raw_syscall.h picks this file). */
#ifndef LIBAIO_ARCH_RISCV64_H
#define LIBAIO_ARCH_RISCV64_H

/* ecall: the number in a7, the arguments in a0-a5, the result (or
 * -errno) back in a0. */
static inline long arch_syscall6(long n, long a, long b, long c, long d, long e,
				long f)
{
	register long a7 __asm__("a7") = n;
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a3 __asm__("a3") = d;
	register long a4 __asm__("a4") = e;
	register long a5 __asm__("a5") = f;

	__asm__ volatile("ecall"
			 : "+r"(a0)
			 : "r"(a7), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5)
			 : "memory");
	return a0;
}

#endif /* LIBAIO_ARCH_RISCV64_H */
