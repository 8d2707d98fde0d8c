/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one place where the library enters the kernel: this header, with
 * the trap it picks below from arch/ (one file per architecture).
 *
 * Every wrapper returns the kernel's raw result: a non-negative value on
 * success or -errno on failure.  None of them touches errno, which is how
 * the public calls keep errno intact (the stock library's convention).
 * x86_64, i386, aarch64, 32-bit arm (EABI), s390x, powerpc64, riscv64 and
 * loongarch64 trap directly; other targets go through libc's syscall(2)
 * with errno saved and restored (arch/generic.h).  The calls only the
 * poll emulation makes are in poll_syscall.h, beside that code, and go
 * through the same trap.  One exception on every target: sys_fstat
 * (there) goes through libc's fstat, and errno is put back only when that
 * fails, the one time libc writes it.
 */
#ifndef LIBAIO_RAW_SYSCALL_H
#define LIBAIO_RAW_SYSCALL_H

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <linux/posix_types.h>

#include "compiler.h"
#include "kernel_abi.h"
#include "libaio.h"
#include "syscall_nr.h"

/* Where the build machine's headers are older than the calls the library
 * makes, the values fixed by the kernel's ABI. */
#ifndef FUTEX_WAIT
# define FUTEX_WAIT		0
#endif
#ifndef FUTEX_WAKE
# define FUTEX_WAKE		1
#endif
#ifndef FUTEX_PRIVATE_FLAG
# define FUTEX_PRIVATE_FLAG	128
#endif
#ifndef FUTEX_WAIT_PRIVATE
# define FUTEX_WAIT_PRIVATE	(FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#endif
#ifndef FUTEX_WAKE_PRIVATE
# define FUTEX_WAKE_PRIVATE	(FUTEX_WAKE | FUTEX_PRIVATE_FLAG)
#endif
#ifndef MADV_WIPEONFORK
# define MADV_WIPEONFORK	18	/* Linux 4.14 */
#endif

#if defined(__x86_64__) && !defined(__ILP32__)
# include "arch/x86_64.h"
#elif defined(__i386__)
# include "arch/i386.h"
#elif defined(__aarch64__)
# include "arch/aarch64.h"
#elif defined(__s390x__)
# include "arch/s390x.h"
#elif defined(__powerpc64__)
# include "arch/powerpc64.h"
#elif defined(__riscv) && __riscv_xlen == 64
# include "arch/riscv64.h"
#elif defined(__loongarch64)
# include "arch/loongarch64.h"
#elif defined(__arm__) && defined(__ARM_EABI__)
# include "arch/arm.h"
#else
# include "arch/generic.h"
#endif

/* The trap, or -ENOSYS without one for a call this target lacks: its
 * number is then negative (syscall_nr.h).  Every number is a constant,
 * so the test folds away and leaves either the trap or the answer. */
static inline long raw_syscall6(long n, long a, long b, long c, long d, long e,
				long f)
{
	if (n < 0)
		return -ENOSYS;
	return arch_syscall6(n, a, b, c, d, e, f);
}

#define SC_ARG(x) ((long)(x))
#define raw_syscall0(n) raw_syscall6((n), 0, 0, 0, 0, 0, 0)
#define raw_syscall1(n, a) raw_syscall6((n), SC_ARG(a), 0, 0, 0, 0, 0)
#define raw_syscall2(n, a, b) \
	raw_syscall6((n), SC_ARG(a), SC_ARG(b), 0, 0, 0, 0)
#define raw_syscall3(n, a, b, c) \
	raw_syscall6((n), SC_ARG(a), SC_ARG(b), SC_ARG(c), 0, 0, 0)
#define raw_syscall4(n, a, b, c, d) \
	raw_syscall6((n), SC_ARG(a), SC_ARG(b), SC_ARG(c), SC_ARG(d), 0, 0)
#define raw_syscall5(n, a, b, c, d, e) \
	raw_syscall6((n), SC_ARG(a), SC_ARG(b), SC_ARG(c), SC_ARG(d), \
		     SC_ARG(e), 0)

/*
 * Every AIO system call the library makes, from any thread, for
 * io_syscall_count().  Each aio_sys_* wrapper adds one just before it
 * enters the kernel (a call this target lacks, numbered -1, adds
 * nothing).  Relaxed suffices: the count orders nothing else, each
 * increment is atomic on its own so none is lost, and a reader wants only
 * a total that already holds every call its own thread made (program
 * order gives that) and every call of another thread it has synchronized
 * with by other means.  An uncontended locked add costs a few nanoseconds
 * beside a system call's microsecond; the ring fast path, which makes no
 * system call, pays nothing.
 */
extern hidden _Atomic unsigned long long aioreap_aio_syscalls;

static inline void aio_sys_count(void)
{
	atomic_fetch_add_explicit(&aioreap_aio_syscalls, 1,
				  memory_order_relaxed);
}

static inline long aio_sys_setup(unsigned nr, io_context_t *ctxp)
{
	aio_sys_count();
	return raw_syscall2(NR_io_setup, nr, ctxp);
}

static inline long aio_sys_destroy(io_context_t ctx)
{
	aio_sys_count();
	return raw_syscall1(NR_io_destroy, ctx);
}

static inline long aio_sys_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	aio_sys_count();
	return raw_syscall3(NR_io_submit, ctx, nr, ios);
}

static inline long aio_sys_cancel(io_context_t ctx, struct iocb *iocb,
				  struct io_event *ev)
{
	aio_sys_count();
	return raw_syscall3(NR_io_cancel, ctx, iocb, ev);
}

/*
 * The timeout type is whatever the native io_getevents entry takes: the
 * C library's struct timespec on 64-bit ABIs and on 32-bit ones built
 * with 32-bit time_t (this library itself is built that way).
 */
static inline long aio_sys_getevents(io_context_t ctx, long min_nr, long nr,
				     struct io_event *ev,
				     const struct timespec *ts)
{
	if (NR_io_getevents < 0)
		return -ENOSYS;	/* no call, so nothing to count */
	aio_sys_count();
	return raw_syscall5(NR_io_getevents, ctx, min_nr, nr, ev, ts);
}

static inline long aio_sys_pgetevents(io_context_t ctx, long min_nr, long nr,
				      struct io_event *ev,
				      const struct timespec *ts,
				      const struct aio_sigset_arg *sig)
{
	if (NR_io_pgetevents < 0)
		return -ENOSYS;	/* no call, so nothing to count */
	aio_sys_count();
	return raw_syscall6(NR_io_pgetevents, SC_ARG(ctx), min_nr, nr,
			    SC_ARG(ev), SC_ARG(ts), SC_ARG(sig));
}

static inline long aio_sys_pgetevents_time64(io_context_t ctx, long min_nr,
					     long nr, struct io_event *ev,
					     const struct kernel_timespec64 *ts,
					     const struct aio_sigset_arg *sig)
{
	if (NR_io_pgetevents_time64 < 0)
		return -ENOSYS;	/* no call, so nothing to count */
	aio_sys_count();
	return raw_syscall6(NR_io_pgetevents_time64, SC_ARG(ctx), min_nr, nr,
			    SC_ARG(ev), SC_ARG(ts), SC_ARG(sig));
}

/* Non-AIO calls the library needs, kept here so they leave errno alone. */
static inline long sys_sigprocmask(int how, const void *set, void *old)
{
	return raw_syscall4(SYS_rt_sigprocmask, how, set, old,
			    KERNEL_SIGSET_SIZE);
}

static inline long sys_sigpending(void *set)
{
	return raw_syscall2(SYS_rt_sigpending, set, KERNEL_SIGSET_SIZE);
}

static inline long sys_futex_wait(int *addr, int val)
{
	return raw_syscall4(NR_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL);
}

/* FUTEX_WAIT_PRIVATE with a relative timeout.  The native futex call's
 * timespec is two __kernel_long_t: long, but 64 bits on x32. */
static inline long sys_futex_wait_for(int *addr, int val,
				      const __kernel_long_t ts[2])
{
	return raw_syscall4(NR_futex, addr, FUTEX_WAIT_PRIVATE, val, ts);
}

static inline long sys_futex_wake(int *addr, int n)
{
	return raw_syscall3(NR_futex, addr, FUTEX_WAKE_PRIVATE, n);
}

static inline long sys_madvise(void *addr, size_t len, int advice)
{
	return raw_syscall3(SYS_madvise, addr, len, advice);
}

static inline long sys_close(int fd)
{
	return raw_syscall1(SYS_close, fd);
}

/* The calling thread's id.  Calls that name a task name this one, never
 * the process id: once the main thread has exited, the process id names
 * a zombie, with no memory or file table left to look at. */
static inline long sys_gettid(void)
{
	return raw_syscall0(SYS_gettid);
}

/* Files and memory, for the poll emulation, the async workers and
 * io_aio_limits.  The poll emulation's own calls are in poll_syscall.h. */
static inline long sys_read(int fd, void *buf, size_t n)
{
	return raw_syscall3(SYS_read, fd, buf, n);
}

static inline long sys_openat(int dirfd, const char *path, int flags)
{
	return raw_syscall4(SYS_openat, dirfd, path, flags, 0);
}

static inline long sys_fcntl(int fd, int cmd, long arg)
{
	return raw_syscall3(SYS_fcntl, fd, cmd, arg);
}

static inline long sys_memfd_create(const char *name, unsigned flags)
{
	return raw_syscall2(NR_memfd_create, name, flags);
}

/* mmap at offset 0 (where mmap2 and mmap agree): the address or -errno. */
static inline long sys_mmap0(size_t len, int prot, int flags, int fd)
{
#if defined(__s390__)
	/* s390 (31- and 64-bit) takes mmap's six arguments in memory, the
	 * address of the block being the only argument: called the usual
	 * way, every mapping failed there. */
	unsigned long args[6] = { 0, len, (unsigned long)prot,
				  (unsigned long)flags, (unsigned long)fd, 0 };

	return raw_syscall1(NR_mmap0, args);
#else
	return raw_syscall6(NR_mmap0, 0, (long)len, prot, flags, fd, 0);
#endif
}

static inline long sys_munmap(void *addr, size_t len)
{
	return raw_syscall2(SYS_munmap, addr, len);
}

/*
 * Write to this process's own memory with a check, as the kernel's own
 * stores to user memory do: the bytes written, or -EFAULT where the
 * mapping at remote is not writable.  The target is the calling thread
 * (sys_gettid: the process id may name a zombie, and the call fail with
 * ESRCH).  struct iovec is the kernel's layout too.
 */
static inline long sys_vm_write(const struct iovec *local,
				const struct iovec *remote)
{
	return raw_syscall6(SYS_process_vm_writev, sys_gettid(),
			    SC_ARG(local), 1, SC_ARG(remote), 1, 0);
}

/* process_vm_readv on the calling thread: a read of memory the kernel
 * checks (-EFAULT where it is not readable), as the store above. */
static inline long sys_vm_read(const struct iovec *local,
			       const struct iovec *remote)
{
	return raw_syscall6(SYS_process_vm_readv, sys_gettid(),
			    SC_ARG(local), 1, SC_ARG(remote), 1, 0);
}
/* n remote pieces into n local ones: bytes read, which stop at the first
 * piece that cannot be read whole. */
static inline long sys_vm_readv(const struct iovec *local,
				const struct iovec *remote, unsigned long n)
{
	return raw_syscall6(SYS_process_vm_readv, sys_gettid(),
			    SC_ARG(local), n, SC_ARG(remote), n, 0);
}

#endif /* LIBAIO_RAW_SYSCALL_H */
