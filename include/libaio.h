/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libaio.h - Linux native asynchronous I/O: the libaio interface.
 *
 * A drop-in replacement for the interface of libaio 0.3.113: every type,
 * field, constant, inline helper and prototype keeps its name, layout and
 * meaning, so programs built against either header run on either library.
 * Additions are marked "extension" and live in the AIOREAP_1.0 symbol node.
 */
#ifndef __LIBAIO_H
#define __LIBAIO_H

#include <sys/types.h>
#include <string.h>
#include <signal.h>

/* Strict ISO C (-std=c99 with no POSIX feature macro) leaves sigset_t out
 * of glibc's <signal.h>; io_pgetevents() needs it. */
#if defined(__GLIBC__) && !defined(__USE_POSIX) && \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 26))
# include <bits/types/sigset_t.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct timespec;
struct sockaddr;
struct iovec;

/* The value of a context is the address at which the kernel mapped its
 * completion ring; the structure itself is never defined. */
typedef struct io_context *io_context_t;

/* Opcodes; each value is the kernel's IOCB_CMD_* number (4 was never used). */
typedef enum io_iocb_cmd {
	IO_CMD_PREAD = 0,
	IO_CMD_PWRITE = 1,
	IO_CMD_FSYNC = 2,
	IO_CMD_FDSYNC = 3,
	IO_CMD_POLL = 5,
	IO_CMD_NOOP = 6,
	IO_CMD_PREADV = 7,
	IO_CMD_PWRITEV = 8
} io_iocb_cmd_t;

/*
 * The kernel's iocb and io_event use 64-bit slots for pointers and longs.
 * On 32-bit ABIs each such field is paired with a 32-bit pad, placed after
 * the field on little-endian machines and before it on big-endian ones, so
 * that the value lands in the low half of the slot.  The pad names
 * (__pad1 ... __pad4) are part of the source interface.
 */
#if defined(__BYTE_ORDER__) && defined(__SIZEOF_LONG__)
# if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && __SIZEOF_LONG__ == 4
#  define __LIBAIO_LE32 1
# elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && __SIZEOF_LONG__ == 8
#  define __LIBAIO_LE64 1
# elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ && __SIZEOF_LONG__ == 8
#  define __LIBAIO_BE64 1
# elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ && __SIZEOF_LONG__ == 4
#  define __LIBAIO_BE32 1
# endif
#elif defined(__x86_64__) || defined(__aarch64__) || defined(__ia64__) || \
	defined(__alpha__)
# define __LIBAIO_LE64 1
#elif defined(__i386__) || defined(__arm__)
# define __LIBAIO_LE32 1
#elif defined(__powerpc64__) || defined(__s390x__) || defined(__sparc_v9__)
# define __LIBAIO_BE64 1
#elif defined(__powerpc__) || defined(__s390__) || defined(__m68k__) || \
	defined(__hppa__)
# define __LIBAIO_BE32 1
#endif

/* __LIBAIO_W32(type name, padname): a 32-bit field sharing a 64-bit slot.
 * __LIBAIO_WPTR / __LIBAIO_WUL: a pointer / unsigned long in a 64-bit slot. */
#if defined(__LIBAIO_LE32)
# define __LIBAIO_W32(f, p)	f; unsigned p
# define __LIBAIO_WPTR(f, p)	f; unsigned p
# define __LIBAIO_WUL(f, p)	unsigned long f; unsigned p
#elif defined(__LIBAIO_LE64)
# define __LIBAIO_W32(f, p)	f, p
# define __LIBAIO_WPTR(f, p)	f
# define __LIBAIO_WUL(f, p)	unsigned long f
#elif defined(__LIBAIO_BE64)
# define __LIBAIO_W32(f, p)	unsigned p; f
# define __LIBAIO_WPTR(f, p)	f
# define __LIBAIO_WUL(f, p)	unsigned long f
#elif defined(__LIBAIO_BE32)
# define __LIBAIO_W32(f, p)	unsigned p; f
# define __LIBAIO_WPTR(f, p)	unsigned p; f
# define __LIBAIO_WUL(f, p)	unsigned p; unsigned long f
#else
# error "libaio.h: cannot tell this ABI's byte order and long size"
#endif

struct io_iocb_poll {
	__LIBAIO_W32(int events, __pad1);
};

struct io_iocb_sockaddr {
	__LIBAIO_WPTR(struct sockaddr *addr, __pad1);
	__LIBAIO_WUL(len, __pad2);
};

struct io_iocb_common {
	__LIBAIO_WPTR(void *buf, __pad1);
	__LIBAIO_WUL(nbytes, __pad2);
	long long offset;
	long long __pad3;
	unsigned flags;
	unsigned resfd;
};

struct io_iocb_vector {
	__LIBAIO_WPTR(const struct iovec *vec, __pad1);
	__LIBAIO_WUL(nr, __pad2);
	long long offset;
};

struct iocb {
	__LIBAIO_WPTR(void *data, __pad1);
	__LIBAIO_W32(unsigned key, aio_rw_flags);
	short aio_lio_opcode;
	short aio_reqprio;
	int aio_fildes;
	union {
		struct io_iocb_common c;
		struct io_iocb_vector v;
		struct io_iocb_poll poll;
		struct io_iocb_sockaddr saddr;
	} u;
};

struct io_event {
	__LIBAIO_WPTR(void *data, __pad1);
	__LIBAIO_WPTR(struct iocb *obj, __pad2);
	__LIBAIO_WUL(res, __pad3);
	__LIBAIO_WUL(res2, __pad4);
};

/* Debian's libaio.h (0.3.112-5 and later) declares these two for programs
 * that call the io_pgetevents system call themselves: the kernel's last
 * argument, a signal mask and its size.  The _compat form is the layout a
 * 64-bit kernel reads from a 32-bit process. */
struct io_sigset {
	unsigned long ss;
	unsigned long ss_len;
};

struct io_sigset_compat {
	__LIBAIO_WPTR(unsigned long ss, __ss_pad);
	unsigned long ss_len;
};

#undef __LIBAIO_W32
#undef __LIBAIO_WPTR
#undef __LIBAIO_WUL
#undef __LIBAIO_LE32
#undef __LIBAIO_LE64
#undef __LIBAIO_BE32
#undef __LIBAIO_BE64

/* io_queue_run() calls this with the event's fields; res is signed here. */
typedef void (*io_callback_t)(io_context_t ctx, struct iocb *iocb, long res,
			      long res2);

/*
 * Y2038: a 32-bit program built with _TIME_BITS=64 passes a 64-bit
 * struct timespec; route it to the entry points that expect one.
 */
#if defined(__USE_TIME_BITS64) && defined(__TIMESIZE) && __TIMESIZE == 32
# define __LIBAIO_TIME64_NAME(name) __asm__(#name "_time64")
#else
# define __LIBAIO_TIME64_NAME(name)
#endif

/* Library calls: each returns a negative errno value on failure and leaves
 * errno untouched. */
extern int io_queue_init(int maxevents, io_context_t *ctxp);
extern int io_queue_release(io_context_t ctx);
extern int io_queue_run(io_context_t ctx);
extern int io_queue_wait(io_context_t ctx, const struct timespec *timeout);
extern int io_setup(int maxevents, io_context_t *ctxp);
extern int io_destroy(io_context_t ctx);
extern int io_submit(io_context_t ctx, long nr, struct iocb *ios[]);
extern int io_cancel(io_context_t ctx, struct iocb *iocb, struct io_event *evt);
extern int io_getevents(io_context_t ctx, long min_nr, long nr,
			struct io_event *events, struct timespec *timeout)
	__LIBAIO_TIME64_NAME(io_getevents);
extern int io_pgetevents(io_context_t ctx, long min_nr, long nr,
			 struct io_event *events, struct timespec *timeout,
			 sigset_t *sigmask)
	__LIBAIO_TIME64_NAME(io_pgetevents);

/*
 * Extensions (AIOREAP_1.0).
 *
 * io_reap() takes up to nr completions that are already available and
 * never waits.  io_reaper_active() tells whether io_getevents() on ctx
 * reads completions from the ring in user space (1) or asks the kernel
 * (0).  io_features() reports what the running kernel offers and which
 * paths the library takes.
 * io_syscall_count() is the number of AIO system calls the library has
 * made in this process.
 * AIOREAP_EXTENSIONS tells a program at build time that these four are
 * declared; the name is in this project's namespace, since upstream
 * libaio owns LIBAIO_*.
 */
#define AIOREAP_EXTENSIONS	1

#define IO_FEATURE_POLL			0x0001u /* polls go to the kernel first */
#define IO_FEATURE_PGETEVENTS		0x0002u /* kernel io_pgetevents in use */
#define IO_FEATURE_RING			0x0004u /* user-space ring reaper in use */
#define IO_FEATURE_POLL_DISABLED	0x0010u /* LIBAIO_DISABLE=poll */
#define IO_FEATURE_PGETEVENTS_DISABLED	0x0020u /* LIBAIO_DISABLE=pgetevents */
#define IO_FEATURE_RING_DISABLED	0x0040u /* LIBAIO_DISABLE=ring */
#define IO_FEATURE_AIO			0x0100u /* the kernel has AIO at all */

extern int io_reap(io_context_t ctx, long nr, struct io_event *events);
extern int io_reaper_active(io_context_t ctx);
extern unsigned int io_features(void);
extern unsigned long long io_syscall_count(void);

/*
 * Extension (AIOREAP_1.1).  io_aio_limits() reports the system-wide AIO
 * budget (fs.aio-nr, fs.aio-max-nr), shared by every process and
 * container on the machine, and what io_setup(nr_events) would take from
 * it and map; nr_events 0 asks for the counters only.  Returns 0 or
 * -errno.  AIOREAP_LIMITS tells a program at build time that it is
 * declared.
 */
#define AIOREAP_LIMITS	1

struct io_aio_limits {
	unsigned long long aio_nr;	/* charged now, every context */
	unsigned long long aio_max_nr;	/* the limit */
	unsigned long long available;	/* aio_max_nr - aio_nr, or 0 */
	unsigned long long charge;	/* io_setup(nr_events) adds this */
	unsigned long long ring_events;	/* slots of the ring it maps */
	unsigned long long ring_bytes;	/* that ring's size, whole pages */
	unsigned int possible_cpus;	/* what the ring size depends on */
	unsigned int page_size;
	unsigned long long reserved[4];	/* zero */
};

extern int io_aio_limits(unsigned int nr_events, struct io_aio_limits *limits);

/*
 * Extension (AIOREAP_1.1): asynchronous submission, off unless asked for
 * (io_set_async() for one context, LIBAIO_ASYNC=1 for every context the
 * process creates).  With it on, io_submit tries each read and write
 * without blocking and hands the ones that would block to worker threads
 * of the library, which submit them on the same context; io_set_async(3)
 * says what that changes.  io_set_async() returns the previous setting
 * (0 or 1) or -errno.  io_async_stats() copies the process's counters
 * (at most size bytes of them): 0 or -errno.  AIOREAP_ASYNC tells a
 * program at build time that these are declared.
 */
#define AIOREAP_ASYNC	1
#define IO_FEATURE_ASYNC		0x0200u /* LIBAIO_ASYNC=1 */

struct io_async_stats {
	unsigned long long inline_done;	/* completed without a worker */
	unsigned long long to_workers;	/* handed to a worker at submission */
	unsigned long long redriven;	/* would have blocked: handed over */
	unsigned long long cancelled;	/* taken from the queue by io_cancel */
	unsigned long long failed;	/* a worker's submission was refused */
};

extern int io_set_async(io_context_t ctx, int on);
extern int io_async_stats(struct io_async_stats *stats, size_t size);

/* Inline helpers: each prep zeroes the whole iocb first, key included. */
static inline void io_set_callback(struct iocb *iocb, io_callback_t cb)
{
#ifdef __GNUC__
	/* ISO C has no function-to-object pointer conversion; -pedantic
	 * would warn about one in every file that includes this header. */
	iocb->data = __extension__ (void *)cb;
#else
	iocb->data = (void *)cb;
#endif
}

static inline void io_prep_pread(struct iocb *iocb, int fd, void *buf,
				 size_t count, long long offset)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_PREAD;
	iocb->aio_reqprio = 0;
	iocb->u.c.buf = buf;
	iocb->u.c.nbytes = count;
	iocb->u.c.offset = offset;
}

static inline void io_prep_pwrite(struct iocb *iocb, int fd, void *buf,
				  size_t count, long long offset)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_PWRITE;
	iocb->aio_reqprio = 0;
	iocb->u.c.buf = buf;
	iocb->u.c.nbytes = count;
	iocb->u.c.offset = offset;
}

static inline void io_prep_preadv(struct iocb *iocb, int fd,
				  const struct iovec *iov, int iovcnt,
				  long long offset)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_PREADV;
	iocb->aio_reqprio = 0;
	iocb->u.c.buf = (void *)iov;
	iocb->u.c.nbytes = iovcnt;
	iocb->u.c.offset = offset;
}

static inline void io_prep_pwritev(struct iocb *iocb, int fd,
				   const struct iovec *iov, int iovcnt,
				   long long offset)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_PWRITEV;
	iocb->aio_reqprio = 0;
	iocb->u.c.buf = (void *)iov;
	iocb->u.c.nbytes = iovcnt;
	iocb->u.c.offset = offset;
}

static inline void io_prep_preadv2(struct iocb *iocb, int fd,
				   const struct iovec *iov, int iovcnt,
				   long long offset, int flags)
{
	io_prep_preadv(iocb, fd, iov, iovcnt, offset);
	iocb->aio_rw_flags = flags;
}

static inline void io_prep_pwritev2(struct iocb *iocb, int fd,
				    const struct iovec *iov, int iovcnt,
				    long long offset, int flags)
{
	io_prep_pwritev(iocb, fd, iov, iovcnt, offset);
	iocb->aio_rw_flags = flags;
}

static inline void io_prep_poll(struct iocb *iocb, int fd, int events)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_POLL;
	iocb->aio_reqprio = 0;
	iocb->u.poll.events = events;
}

static inline int io_poll(io_context_t ctx, struct iocb *iocb,
			  io_callback_t cb, int fd, int events)
{
	io_prep_poll(iocb, fd, events);
	io_set_callback(iocb, cb);
	return io_submit(ctx, 1, &iocb);
}

static inline void io_prep_fsync(struct iocb *iocb, int fd)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_FSYNC;
	iocb->aio_reqprio = 0;
}

static inline int io_fsync(io_context_t ctx, struct iocb *iocb,
			   io_callback_t cb, int fd)
{
	io_prep_fsync(iocb, fd);
	io_set_callback(iocb, cb);
	return io_submit(ctx, 1, &iocb);
}

static inline void io_prep_fdsync(struct iocb *iocb, int fd)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_FDSYNC;
	iocb->aio_reqprio = 0;
}

static inline int io_fdsync(io_context_t ctx, struct iocb *iocb,
			    io_callback_t cb, int fd)
{
	io_prep_fdsync(iocb, fd);
	io_set_callback(iocb, cb);
	return io_submit(ctx, 1, &iocb);
}

/* Must follow the prep call, which clears the flags. */
static inline void io_set_eventfd(struct iocb *iocb, int eventfd)
{
	iocb->u.c.flags |= (1u << 0); /* IOCB_FLAG_RESFD */
	iocb->u.c.resfd = eventfd;
}

#ifdef __cplusplus
}
#endif

#endif /* __LIBAIO_H */
