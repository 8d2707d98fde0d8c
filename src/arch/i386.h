/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system-call trap on i386 (raw_syscall.h picks this file). */
#ifndef LIBAIO_ARCH_I386_H
#define LIBAIO_ARCH_I386_H

/*
 * int $0x80 takes the sixth argument in %ebp, which may be the frame
 * pointer: push the argument first (its address is computed before %esp
 * moves), save %ebp, load it from the stack, and undo both afterwards.
 */
static inline long arch_syscall6(long n, long a, long b, long c, long d, long e,
				long f)
{
	long ret;

	__asm__ volatile("pushl %[f]\n\t"
			 "pushl %%ebp\n\t"
			 "movl 4(%%esp), %%ebp\n\t"
			 "int $0x80\n\t"
			 "popl %%ebp\n\t"
			 "addl $4, %%esp"
			 : "=a"(ret)
			 : "a"(n), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e),
			   [f] "g"(f)
			 : "memory");
	return ret;
}

#endif /* LIBAIO_ARCH_I386_H */
