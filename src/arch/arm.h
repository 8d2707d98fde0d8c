/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system-call trap on 32-bit arm, EABI (raw_syscall.h picks this). */
#ifndef LIBAIO_ARCH_ARM_H
#define LIBAIO_ARCH_ARM_H

/*
 * svc 0 (EABI): the number in r7, the arguments in r0-r5, the result (or
 * -errno) back in r0.  Thumb code may keep its frame pointer in r7, which
 * the compiler then refuses to hand out as an operand: the number goes in
 * through any register and r7 is saved around the trap in another.  If
 * the compiler does give r7 to one of the two operands, it holds nothing
 * live there, and the sequence still traps with the number in r7.
 */
static inline long arch_syscall6(long n, long a, long b, long c, long d, long e,
				long f)
{
	register long r0 __asm__("r0") = a;
	register long r1 __asm__("r1") = b;
	register long r2 __asm__("r2") = c;
	register long r3 __asm__("r3") = d;
	register long r4 __asm__("r4") = e;
	register long r5 __asm__("r5") = f;
	long saved;

	__asm__ volatile("mov %[saved], r7\n\t"
			 "mov r7, %[n]\n\t"
			 "svc 0\n\t"
			 "mov r7, %[saved]"
			 : "+r"(r0), [saved] "=&r"(saved)
			 : [n] "r"(n), "r"(r1), "r"(r2), "r"(r3), "r"(r4),
			   "r"(r5)
			 : "memory", "cc");	/* Thumb-1's mov sets the flags */
	return r0;
}

#endif /* LIBAIO_ARCH_ARM_H */
