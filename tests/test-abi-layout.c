/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The public structures, pinned at compile time.
 *
 * Two references: the kernel's <linux/aio_abi.h> (what io_submit and
 * io_getevents actually read and write), and the offsets the stock
 * libaio 0.3.113 header gives on x86_64 and i386 (the table below).
 * The kernel header declares its own struct iocb and struct io_event, so
 * it is included with those two tags renamed.  The program is built for
 * the native ABI and, by .ci/m32.sh, for i386; if it compiles, it passes.
 * main() adds a few run-time checks that the inline helpers fill the
 * fields the kernel reads.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include <libaio.h>

#define iocb kernel_iocb
#define io_event kernel_io_event
#include <linux/aio_abi.h>
#undef iocb
#undef io_event

#define FSIZE(type, field) sizeof(((type *)0)->field)

/* Same offset and same size as the kernel's field.  A 32-bit pointer or
 * long sits in the low half of the kernel's 64-bit slot: at the same
 * offset on little-endian, 4 bytes further on big-endian.  A field that
 * is 4 bytes on both sides (key, aio_fildes, ...) is not such a half. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
# define LOW_HALF(ours, kern)                                                 \
	(FSIZE(struct iocb, ours) == 4 && FSIZE(struct kernel_iocb, kern) == 8 ? 4 : 0)
#else
# define LOW_HALF(ours, kern) 0
#endif

#define SAME_AS_KERNEL(ours, kern)                                           \
	static_assert(offsetof(struct iocb, ours) ==                          \
			      offsetof(struct kernel_iocb, kern) +            \
				      LOW_HALF(ours, kern),                   \
		      "offset of iocb." #ours " != kernel " #kern);           \
	static_assert(FSIZE(struct iocb, ours) <=                             \
			      FSIZE(struct kernel_iocb, kern),                \
		      "iocb." #ours " wider than kernel " #kern)

/* Fields whose width is the same on every ABI must match exactly. */
#define EXACT_AS_KERNEL(ours, kern)                                          \
	SAME_AS_KERNEL(ours, kern);                                           \
	static_assert(FSIZE(struct iocb, ours) ==                             \
			      FSIZE(struct kernel_iocb, kern),                \
		      "size of iocb." #ours " != kernel " #kern)

static_assert(sizeof(struct iocb) == sizeof(struct kernel_iocb),
	      "struct iocb size");
static_assert(sizeof(struct iocb) == 64, "struct iocb is 64 bytes");
static_assert(sizeof(struct io_event) == sizeof(struct kernel_io_event),
	      "struct io_event size");
static_assert(sizeof(struct io_event) == 32, "struct io_event is 32 bytes");

EXACT_AS_KERNEL(key, aio_key);
EXACT_AS_KERNEL(aio_rw_flags, aio_rw_flags);
EXACT_AS_KERNEL(aio_lio_opcode, aio_lio_opcode);
EXACT_AS_KERNEL(aio_reqprio, aio_reqprio);
EXACT_AS_KERNEL(aio_fildes, aio_fildes);
EXACT_AS_KERNEL(u.c.offset, aio_offset);
EXACT_AS_KERNEL(u.c.__pad3, aio_reserved2);
EXACT_AS_KERNEL(u.c.flags, aio_flags);
EXACT_AS_KERNEL(u.c.resfd, aio_resfd);
EXACT_AS_KERNEL(u.v.offset, aio_offset);
SAME_AS_KERNEL(data, aio_data);
SAME_AS_KERNEL(u.c.buf, aio_buf);
SAME_AS_KERNEL(u.c.nbytes, aio_nbytes);
SAME_AS_KERNEL(u.v.vec, aio_buf);
SAME_AS_KERNEL(u.v.nr, aio_nbytes);
SAME_AS_KERNEL(u.saddr.addr, aio_buf);
SAME_AS_KERNEL(u.saddr.len, aio_nbytes);
/* The poll mask is the low 32 bits of aio_buf. */
static_assert(offsetof(struct iocb, u.poll.events) ==
		      offsetof(struct kernel_iocb, aio_buf) +
			      (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0),
	      "u.poll.events must be the low half of aio_buf");
static_assert(FSIZE(struct iocb, u.poll.events) == 4, "poll events width");

/* struct io_aio_limits (AIOREAP_1.1): the same bytes on every ABI, i386's
 * 4-byte alignment of 64-bit fields included.  Only our header has it. */
#ifdef AIOREAP_LIMITS
static_assert(offsetof(struct io_aio_limits, ring_bytes) == 40, "limits");
static_assert(offsetof(struct io_aio_limits, possible_cpus) == 48, "limits");
static_assert(offsetof(struct io_aio_limits, page_size) == 52, "limits");
static_assert(offsetof(struct io_aio_limits, reserved) == 56, "limits");
static_assert(sizeof(struct io_aio_limits) == 88, "struct io_aio_limits");
#endif
/* struct io_async_stats (AIOREAP_1.1): five 64-bit counters, no padding
 * on any ABI. */
#ifdef AIOREAP_ASYNC
static_assert(offsetof(struct io_async_stats, failed) == 32, "async stats");
static_assert(sizeof(struct io_async_stats) == 40, "struct io_async_stats");
#endif

static_assert(offsetof(struct io_event, data) ==
		      offsetof(struct kernel_io_event, data) +
			      (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ &&
					       sizeof(void *) == 4 ? 4 : 0),
	      "io_event.data");
static_assert(offsetof(struct io_event, obj) ==
		      offsetof(struct kernel_io_event, obj) +
			      (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ &&
					       sizeof(void *) == 4 ? 4 : 0),
	      "io_event.obj");
static_assert(offsetof(struct io_event, res) ==
		      offsetof(struct kernel_io_event, res) +
			      (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ &&
					       sizeof(long) == 4 ? 4 : 0),
	      "io_event.res");
static_assert(offsetof(struct io_event, res2) ==
		      offsetof(struct kernel_io_event, res2) +
			      (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ &&
					       sizeof(long) == 4 ? 4 : 0),
	      "io_event.res2");
static_assert(FSIZE(struct io_event, data) == sizeof(void *), "data width");
static_assert(FSIZE(struct io_event, res) == sizeof(long), "res width");

/* Debian's io_sigset types: two longs; the compat one keeps ss_len at 8
 * on 32-bit (12 bytes on i386, 16 on 64-bit). */
static_assert(sizeof(struct io_sigset) == 2 * sizeof(long), "io_sigset size");
static_assert(offsetof(struct io_sigset, ss_len) == sizeof(long), "io_sigset.ss_len");
static_assert(offsetof(struct io_sigset_compat, ss_len) == 8,
	      "io_sigset_compat.ss_len");
static_assert(sizeof(struct io_sigset_compat) == (sizeof(long) == 4 ? 12 : 16),
	      "io_sigset_compat size");

/* Opcodes are the kernel's (compared as int: they are different enums). */
#define SAME_CMD(ours, kern) static_assert((int)(ours) == (int)(kern), #ours)
SAME_CMD(IO_CMD_PREAD, IOCB_CMD_PREAD);
SAME_CMD(IO_CMD_PWRITE, IOCB_CMD_PWRITE);
SAME_CMD(IO_CMD_FSYNC, IOCB_CMD_FSYNC);
SAME_CMD(IO_CMD_FDSYNC, IOCB_CMD_FDSYNC);
SAME_CMD(IO_CMD_POLL, IOCB_CMD_POLL);
SAME_CMD(IO_CMD_NOOP, IOCB_CMD_NOOP);
SAME_CMD(IO_CMD_PREADV, IOCB_CMD_PREADV);
SAME_CMD(IO_CMD_PWRITEV, IOCB_CMD_PWRITEV);
static_assert(sizeof(io_iocb_cmd_t) == 4, "enum io_iocb_cmd is an int");

/* The stock header's numbers: its offsets and sizes on x86_64 and i386. */
#define AT(type, field, off, size)                                           \
	static_assert(offsetof(type, field) == (off),                         \
		      "offset of " #type "." #field);                         \
	static_assert(FSIZE(type, field) == (size), "size of " #type "." #field)

#if defined(__x86_64__) && !defined(__ILP32__)
AT(struct iocb, data, 0, 8);
AT(struct iocb, key, 8, 4);
AT(struct iocb, aio_rw_flags, 12, 4);
AT(struct iocb, aio_lio_opcode, 16, 2);
AT(struct iocb, aio_reqprio, 18, 2);
AT(struct iocb, aio_fildes, 20, 4);
AT(struct iocb, u, 24, 40);
AT(struct iocb, u.c.buf, 24, 8);
AT(struct iocb, u.c.nbytes, 32, 8);
AT(struct iocb, u.c.offset, 40, 8);
AT(struct iocb, u.c.__pad3, 48, 8);
AT(struct iocb, u.c.flags, 56, 4);
AT(struct iocb, u.c.resfd, 60, 4);
AT(struct iocb, u.v.vec, 24, 8);
AT(struct iocb, u.v.nr, 32, 8);
AT(struct iocb, u.v.offset, 40, 8);
AT(struct iocb, u.poll.events, 24, 4);
AT(struct iocb, u.poll.__pad1, 28, 4);
AT(struct iocb, u.saddr.addr, 24, 8);
AT(struct iocb, u.saddr.len, 32, 8);
AT(struct io_event, data, 0, 8);
AT(struct io_event, obj, 8, 8);
AT(struct io_event, res, 16, 8);
AT(struct io_event, res2, 24, 8);
static_assert(_Alignof(struct iocb) == 8, "iocb alignment");
static_assert(_Alignof(struct io_event) == 8, "io_event alignment");
static_assert(_Alignof(struct io_iocb_common) == 8, "common alignment");
static_assert(_Alignof(struct io_iocb_poll) == 4, "poll alignment");
#define LAYOUT_TABLE "x86_64"
#elif defined(__i386__)
AT(struct iocb, data, 0, 4);
AT(struct iocb, __pad1, 4, 4);
AT(struct iocb, key, 8, 4);
AT(struct iocb, aio_rw_flags, 12, 4);
AT(struct iocb, aio_lio_opcode, 16, 2);
AT(struct iocb, aio_reqprio, 18, 2);
AT(struct iocb, aio_fildes, 20, 4);
AT(struct iocb, u, 24, 40);
AT(struct iocb, u.c.buf, 24, 4);
AT(struct iocb, u.c.__pad1, 28, 4);
AT(struct iocb, u.c.nbytes, 32, 4);
AT(struct iocb, u.c.__pad2, 36, 4);
AT(struct iocb, u.c.offset, 40, 8);
AT(struct iocb, u.c.__pad3, 48, 8);
AT(struct iocb, u.c.flags, 56, 4);
AT(struct iocb, u.c.resfd, 60, 4);
AT(struct iocb, u.v.vec, 24, 4);
AT(struct iocb, u.v.__pad1, 28, 4);
AT(struct iocb, u.v.nr, 32, 4);
AT(struct iocb, u.v.__pad2, 36, 4);
AT(struct iocb, u.v.offset, 40, 8);
AT(struct iocb, u.poll.events, 24, 4);
AT(struct iocb, u.poll.__pad1, 28, 4);
AT(struct iocb, u.saddr.addr, 24, 4);
AT(struct iocb, u.saddr.__pad1, 28, 4);
AT(struct iocb, u.saddr.len, 32, 4);
AT(struct iocb, u.saddr.__pad2, 36, 4);
AT(struct io_event, data, 0, 4);
AT(struct io_event, __pad1, 4, 4);
AT(struct io_event, obj, 8, 4);
AT(struct io_event, __pad2, 12, 4);
AT(struct io_event, res, 16, 4);
AT(struct io_event, __pad3, 20, 4);
AT(struct io_event, res2, 24, 4);
AT(struct io_event, __pad4, 28, 4);
static_assert(_Alignof(struct iocb) == 4, "iocb alignment");
static_assert(_Alignof(struct io_event) == 4, "io_event alignment");
static_assert(_Alignof(struct io_iocb_poll) == 4, "poll alignment");
#define LAYOUT_TABLE "i386"
#else
#define LAYOUT_TABLE "kernel only"
#endif

/* Union member sizes: the same on x86_64 and i386 (and every other ABI,
 * since each pointer or long is padded to 64 bits). */
static_assert(sizeof(struct io_iocb_common) == 40, "io_iocb_common");
static_assert(sizeof(struct io_iocb_vector) == 24, "io_iocb_vector");
static_assert(sizeof(struct io_iocb_poll) == 8, "io_iocb_poll");
static_assert(sizeof(struct io_iocb_sockaddr) == 16, "io_iocb_sockaddr");
static_assert(FSIZE(struct iocb, u) == 40, "iocb.u");

/* Run time: what the helpers store is what the kernel will read. */
static int failures;

#define EXPECT(cond)                                                         \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,    \
				#cond);                                       \
			failures++;                                           \
		}                                                             \
	} while (0)

static void as_kernel(const struct iocb *cb, struct kernel_iocb *k)
{
	memcpy(k, cb, sizeof(*k));
}

int main(void)
{
	static char buf[16];
	struct iovec iov[3];
	struct iocb cb;
	struct kernel_iocb k;

	memset(iov, 0, sizeof(iov));
	memset(&cb, 0xa5, sizeof(cb));
	io_prep_pread(&cb, 7, buf, sizeof(buf), 1234567890123LL);
	as_kernel(&cb, &k);
	EXPECT(k.aio_lio_opcode == IOCB_CMD_PREAD);
	EXPECT(k.aio_fildes == 7);
	EXPECT(k.aio_buf == (uintptr_t)buf);
	EXPECT(k.aio_nbytes == sizeof(buf));
	EXPECT(k.aio_offset == 1234567890123LL);
	EXPECT(k.aio_key == 0 && k.aio_rw_flags == 0 && k.aio_reqprio == 0);
	EXPECT(k.aio_reserved2 == 0 && k.aio_flags == 0 && k.aio_resfd == 0);
	EXPECT(k.aio_data == 0);

	io_set_eventfd(&cb, 9);
	as_kernel(&cb, &k);
	EXPECT(k.aio_flags == IOCB_FLAG_RESFD && k.aio_resfd == 9);

	memset(&cb, 0xa5, sizeof(cb));
	io_prep_pwritev2(&cb, 3, iov, 3, 4096, 0x2);
	as_kernel(&cb, &k);
	EXPECT(k.aio_lio_opcode == IOCB_CMD_PWRITEV);
	EXPECT(k.aio_buf == (uintptr_t)iov && k.aio_nbytes == 3);
	EXPECT(k.aio_offset == 4096 && k.aio_rw_flags == 0x2);
	EXPECT(k.aio_key == 0 && k.aio_reserved2 == 0 && k.aio_flags == 0);

	memset(&cb, 0xa5, sizeof(cb));
	io_prep_poll(&cb, 5, 0x41);
	as_kernel(&cb, &k);
	EXPECT(k.aio_lio_opcode == IOCB_CMD_POLL);
	EXPECT(k.aio_buf == 0x41 && k.aio_nbytes == 0 && k.aio_offset == 0);
	EXPECT(k.aio_rw_flags == 0);

	memset(&cb, 0xa5, sizeof(cb));
	io_prep_fdsync(&cb, 4);
	as_kernel(&cb, &k);
	EXPECT(k.aio_lio_opcode == IOCB_CMD_FDSYNC && k.aio_fildes == 4);
	EXPECT(k.aio_buf == 0 && k.aio_nbytes == 0 && k.aio_offset == 0);

	printf("layout checked against <linux/aio_abi.h> and the %s table; "
	       "%d run-time failure(s)\n", LAYOUT_TABLE, failures);
	return failures ? 1 : 0;
}
