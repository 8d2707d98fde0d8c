/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Our own copy of the AIO system-call numbers, so that the library does not
 * depend on how new the build machine's kernel headers are.  Where the C
 * library's headers know a number too, a static assertion checks that the
 * two agree.  Below them, the numbers of the other calls that some targets
 * lack or name differently, and -1 for every call a target lacks.
 */
#ifndef LIBAIO_SYSCALL_NR_H
#define LIBAIO_SYSCALL_NR_H

#include <sys/syscall.h>

#include "compiler.h"

#if defined(__x86_64__) && defined(__ILP32__)
/* x32: the x86_64 numbers with the x32 bit set. */
# define NR_X32_BIT 0x40000000
# define NR_io_setup		(NR_X32_BIT + 543)
# define NR_io_destroy		(NR_X32_BIT + 207)
# define NR_io_getevents	(NR_X32_BIT + 208)
# define NR_io_submit		(NR_X32_BIT + 544)
# define NR_io_cancel		(NR_X32_BIT + 210)
# define NR_io_pgetevents	(NR_X32_BIT + 333)
#elif defined(__x86_64__)
# define NR_io_setup		206
# define NR_io_destroy		207
# define NR_io_getevents	208
# define NR_io_submit		209
# define NR_io_cancel		210
# define NR_io_pgetevents	333
#elif defined(__i386__)
# define NR_io_setup		245
# define NR_io_destroy		246
# define NR_io_getevents	247
# define NR_io_submit		248
# define NR_io_cancel		249
# define NR_io_pgetevents	385
# define NR_io_pgetevents_time64 416
#elif defined(__aarch64__) || defined(__riscv) || defined(__loongarch__)
/* The generic table (asm-generic/unistd.h). */
# define NR_io_setup		0
# define NR_io_destroy		1
# define NR_io_submit		2
# define NR_io_cancel		3
# if !defined(__riscv) || __riscv_xlen == 64
#  define NR_io_getevents	4
# endif
# define NR_io_pgetevents	292
# if defined(__riscv) && __riscv_xlen == 32
#  define NR_io_pgetevents_time64 416
# endif
#else
/* Anything else: trust the C library's headers. */
# define NR_io_setup		__NR_io_setup
# define NR_io_destroy		__NR_io_destroy
# define NR_io_submit		__NR_io_submit
# define NR_io_cancel		__NR_io_cancel
# ifdef __NR_io_getevents
#  define NR_io_getevents	__NR_io_getevents
# endif
# ifdef __NR_io_pgetevents
#  define NR_io_pgetevents	__NR_io_pgetevents
# endif
# ifdef __NR_io_pgetevents_time64
#  define NR_io_pgetevents_time64 __NR_io_pgetevents_time64
# endif
#endif

/*
 * A call this target lacks has the number -1: raw_syscall6 answers it
 * -ENOSYS without a trap, and the AIO wrappers do not count it.  Code calls
 * it all the same, with no conditional compilation of its own: the
 * number is a constant, so the compiler keeps only one of the two.
 */
#ifndef NR_io_getevents
# define NR_io_getevents	(-1)
#endif
#ifndef NR_io_pgetevents
# define NR_io_pgetevents	(-1)
#endif
#ifndef NR_io_pgetevents_time64
# define NR_io_pgetevents_time64 (-1)
#endif

/* The other calls some targets lack, by the C library's numbers. */
#ifdef SYS_futex
# define NR_futex		SYS_futex
#else
# define NR_futex		(-1)	/* 32-bit ABIs born with 64-bit time */
#endif
#ifdef SYS_memfd_create
# define NR_memfd_create	SYS_memfd_create
#else
# define NR_memfd_create	(-1)
#endif
#ifdef SYS_statx
# define NR_statx		SYS_statx
#else
# define NR_statx		(-1)
#endif
#ifdef SYS_kcmp
# define NR_kcmp		SYS_kcmp
#else
# define NR_kcmp		(-1)
#endif

/* Calls under another name on some targets: mmap2 (an offset in pages,
 * which at offset 0 is the same call) where 32-bit ABIs have it, and the
 * 32-bit-id getresuid and getresgid where the plain names take 16-bit
 * ids. */
#ifdef SYS_mmap2
# define NR_mmap0		SYS_mmap2
#else
# define NR_mmap0		SYS_mmap
#endif
#ifdef SYS_getresuid32
# define NR_getresuid		SYS_getresuid32
# define NR_getresgid		SYS_getresgid32
#else
# define NR_getresuid		SYS_getresuid
# define NR_getresgid		SYS_getresgid
#endif

#if defined(__NR_io_setup)
_Static_assert(NR_io_setup == __NR_io_setup, "io_setup number");
_Static_assert(NR_io_destroy == __NR_io_destroy, "io_destroy number");
_Static_assert(NR_io_submit == __NR_io_submit, "io_submit number");
_Static_assert(NR_io_cancel == __NR_io_cancel, "io_cancel number");
#endif
#if defined(__NR_io_getevents)
_Static_assert(NR_io_getevents == __NR_io_getevents, "io_getevents number");
#endif
#if defined(__NR_io_pgetevents)
_Static_assert(NR_io_pgetevents == __NR_io_pgetevents, "io_pgetevents number");
#endif
#if defined(__NR_io_pgetevents_time64)
_Static_assert(NR_io_pgetevents_time64 == __NR_io_pgetevents_time64,
	       "io_pgetevents_time64 number");
#endif

#endif /* LIBAIO_SYSCALL_NR_H */
