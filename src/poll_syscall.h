/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The system calls only the poll emulation makes (poll_*.c and fd_id.c),
 * beside that code, through the trap in raw_syscall.h: each returns the
 * kernel's result or -errno and leaves errno alone, as those there do.
 */
#ifndef LIBAIO_POLL_SYSCALL_H
#define LIBAIO_POLL_SYSCALL_H

#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/capability.h>

#include "raw_syscall.h"

#ifndef AT_EMPTY_PATH
# define AT_EMPTY_PATH		0x1000	/* Linux 2.6.39 */
#endif

/* FUTEX_WAIT on a word the kernel wakes with a shared FUTEX_WAKE (a
 * thread id it clears at the thread's exit). */
static inline long sys_futex_wait_shared(int *addr, int val)
{
	return raw_syscall4(NR_futex, addr, FUTEX_WAIT, val, NULL);
}

static inline long sys_write(int fd, const void *buf, size_t n)
{
	return raw_syscall3(SYS_write, fd, buf, n);
}

static inline long sys_readlinkat(int dirfd, const char *path, char *buf,
				  size_t n)
{
	return raw_syscall4(SYS_readlinkat, dirfd, path, buf, n);
}

static inline long sys_epoll_create1(int flags)
{
	return raw_syscall1(SYS_epoll_create1, flags);
}

static inline long sys_epoll_ctl(int epfd, int op, int fd, void *ev)
{
	return raw_syscall4(SYS_epoll_ctl, epfd, op, fd, ev);
}

/* Identity checks of the emulation's own descriptors: statx of the fd
 * itself (AT_EMPTY_PATH with ""), and kcmp between two descriptors. */
static inline long sys_statx_fd_flags(int fd, int flags, unsigned mask,
				      void *stx)
{
	return raw_syscall5(NR_statx, fd, "", AT_EMPTY_PATH | flags, mask, stx);
}

static inline long sys_statx_fd(int fd, unsigned mask, void *stx)
{
	return sys_statx_fd_flags(fd, 0, mask, stx);
}

/* A C library call's answer (ret: its 0 or -1) as 0 or -errno.  The C
 * library leaves errno alone on success; on failure it sets errno, and
 * only then is it put back to saved, so that a task sharing this
 * thread's errno (a raw clone) is touched at most in that case. */
static inline long libc_answer(int ret, int saved)
{
	long r;

	if (ret == 0)
		return 0;
	r = -errno;
	errno = saved;
	return r;
}

/* fstat, for kernels without statx (before 4.11) or a filter refusing
 * it, and fstatfs.  Through the C library, the two calls here that are:
 * struct stat's and struct statfs's layouts, and which system call
 * fills them, differ between architectures and word sizes, and the C
 * library knows them.  Both are async-signal-safe.  On
 * 32-bit targets glibc's fstat tries statx first and goes on to fstat64
 * only when statx answers ENOSYS. */
static inline long sys_fstat(int fd, struct stat *st)
{
	int saved = errno;

	return libc_answer(fstat(fd, st), saved);
}

/* glibc's fstatfs on a 32-bit target without large-file flags fails
 * with EOVERFLOW on a file system with more than 2^32 blocks: its
 * fstatfs64 always answers (on 64-bit targets it is fstatfs).  Other C
 * libraries have a 64-bit struct statfs. */
#ifdef __GLIBC__
typedef struct statfs64 sys_statfs_t;
# define SYS_FSTATFS fstatfs64
#else
typedef struct statfs sys_statfs_t;
# define SYS_FSTATFS fstatfs
#endif
static inline long sys_fstatfs(int fd, sys_statfs_t *st)
{
	int saved = errno;

	return libc_answer(SYS_FSTATFS(fd, st), saved);
}

static inline long sys_kcmp(long pid, int type, long idx1, long idx2)
{
	return raw_syscall5(NR_kcmp, pid, pid, type, idx1, idx2);
}

static inline long sys_pipe2(int fds[2], int flags)
{
	return raw_syscall2(SYS_pipe2, fds, flags);
}

/* The calling thread's real, effective and saved ids (NR_getresuid and
 * NR_getresgid are the 32-bit calls where a 16-bit one has the plain
 * name). */
static inline long sys_getresuid(unsigned ids[3])
{
	return raw_syscall3(NR_getresuid, &ids[0], &ids[1], &ids[2]);
}

static inline long sys_getresgid(unsigned ids[3])
{
	return raw_syscall3(NR_getresgid, &ids[0], &ids[1], &ids[2]);
}

/* Give up every capability of the calling thread, for good. */
static inline long sys_drop_capabilities(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3];

	memset(none, 0, sizeof(none));
	return raw_syscall2(SYS_capset, &h, none);
}

static inline long sys_mprotect(void *addr, size_t len, int prot)
{
	return raw_syscall3(SYS_mprotect, addr, len, prot);
}

/*
 * A thread of the process that the C library does not know (the poll
 * helper, poll_helper.c): it shares memory, descriptors and signal
 * handlers, keeps the creator's thread pointer, and runs fn on the stack
 * below stack_top.  *tid is set before fn runs and cleared by the kernel
 * (with a futex wake) once the thread is gone.  The C library's clone
 * wrapper does what only assembly can (fn on the new stack, then the
 * exit system call).  The thread id, or -errno; errno kept.
 */
static inline long sys_clone_thread(int (*fn)(void *), void *stack_top,
				    void *arg, int *tid)
{
	int saved = errno;
	long ret = clone(fn, stack_top,
			 CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			 CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID |
			 CLONE_CHILD_CLEARTID, arg, tid, NULL, tid);

	if (ret < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

/* epoll_pwait with no mask: the one epoll wait every architecture has. */
static inline long sys_epoll_wait(int epfd, void *ev, int max, int ms)
{
	return raw_syscall6(SYS_epoll_pwait, epfd, SC_ARG(ev), max, ms, 0,
			    KERNEL_SIGSET_SIZE);
}

/* ppoll with a zero timeout (a check, never a wait); its timespec is two
 * __kernel_long_t, as for sys_futex_wait_for (raw_syscall.h). */
static inline long sys_ppoll_now(void *fds, unsigned n)
{
	static const __kernel_long_t zero[2] = { 0, 0 };

	return raw_syscall5(SYS_ppoll, fds, n, zero, NULL, KERNEL_SIGSET_SIZE);
}

#endif /* LIBAIO_POLL_SYSCALL_H */
