/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system-call trap on s390x (raw_syscall.h picks this file). */
#ifndef LIBAIO_ARCH_S390X_H
#define LIBAIO_ARCH_S390X_H

/* svc 0: the number in r1, the arguments in r2-r7, the result (or
 * -errno) back in r2; every other register survives. */
static inline long arch_syscall6(long n, long a, long b, long c, long d, long e,
				long f)
{
	register long r1 __asm__("r1") = n;
	register long r2 __asm__("r2") = a;
	register long r3 __asm__("r3") = b;
	register long r4 __asm__("r4") = c;
	register long r5 __asm__("r5") = d;
	register long r6 __asm__("r6") = e;
	register long r7 __asm__("r7") = f;

	__asm__ volatile("svc 0"
			 : "+d"(r2)
			 : "d"(r1), "d"(r3), "d"(r4), "d"(r5), "d"(r6), "d"(r7)
			 : "memory", "cc");
	return r2;
}

#endif /* LIBAIO_ARCH_S390X_H */
