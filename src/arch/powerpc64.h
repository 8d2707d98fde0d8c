/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system-call trap on 64-bit powerpc (raw_syscall.h picks this file). */
#ifndef LIBAIO_ARCH_POWERPC64_H
#define LIBAIO_ARCH_POWERPC64_H

/* sc: the number in r0, the arguments in r3-r8.  The kernel answers a
 * positive errno in r3 with the summary-overflow bit of cr0 set, so the
 * result is negated when that bit is set; it may change r0 and r4-r12,
 * ctr, xer and cr0. */
static inline long arch_syscall6(long n, long a, long b, long c, long d, long e,
				long f)
{
	register long r0 __asm__("r0") = n;
	register long r3 __asm__("r3") = a;
	register long r4 __asm__("r4") = b;
	register long r5 __asm__("r5") = c;
	register long r6 __asm__("r6") = d;
	register long r7 __asm__("r7") = e;
	register long r8 __asm__("r8") = f;

	__asm__ volatile("sc\n\t"
			 "bns+ 1f\n\t"
			 "neg %1, %1\n"
			 "1:"
			 : "+r"(r0), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6),
			   "+r"(r7), "+r"(r8)
			 :
			 : "memory", "cr0", "r9", "r10", "r11", "r12", "ctr",
			   "xer");
	return r3;
}

#endif /* LIBAIO_ARCH_POWERPC64_H */
