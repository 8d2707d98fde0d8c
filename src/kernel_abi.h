/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's copies of the kernel's AIO structures, all in one place:
 * the completion ring mapped at the context address, the iocb as the
 * kernel reads it, and the extra arguments of io_pgetevents and
 * io_pgetevents_time64.  The ring header, io_event and the iocb are
 * pinned by the static assertions below; the two argument structures
 * follow the kernel's definitions field for field (two pointer-sized
 * words; two 64-bit words).
 */
#ifndef LIBAIO_KERNEL_ABI_H
#define LIBAIO_KERNEL_ABI_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "libaio.h"

/*
 * The completion ring (the kernel's, not in any uapi header): eight
 * 32-bit words, then nr 32-byte struct io_event slots.
 */
#define AIO_RING_MAGIC		0xa10a10a1u
#define AIO_RING_HEADER_LEN	32u
#define AIO_RING_COMPAT		1u

struct aio_ring {
	unsigned id;		/* the kernel's table index: never written */
	unsigned nr;		/* slots; cached at io_setup, then ignored */
	_Atomic unsigned head;	/* consumer index */
	_Atomic unsigned tail;	/* producer index (kernel only) */
	unsigned magic;
	unsigned compat_features;
	unsigned incompat_features;
	unsigned header_length;
	struct io_event events[];
};

_Static_assert(sizeof(struct aio_ring) == AIO_RING_HEADER_LEN, "ring header");
_Static_assert(sizeof(struct io_event) == 32, "io_event size");

/*
 * The kernel's struct iocb (linux/aio_abi.h), 64 bytes on every ABI.  The
 * emulation reads the fields the kernel checks through this copy, so the
 * 32-bit pads of the libaio layout are seen exactly as the kernel sees
 * them.  aio_key and aio_rw_flags swap places on big-endian.
 */
struct kernel_iocb {
	uint64_t aio_data;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	uint32_t aio_rw_flags;
	uint32_t aio_key;
#else
	uint32_t aio_key;
	uint32_t aio_rw_flags;
#endif
	uint16_t aio_lio_opcode;
	int16_t aio_reqprio;
	uint32_t aio_fildes;
	uint64_t aio_buf;
	uint64_t aio_nbytes;
	int64_t aio_offset;
	uint64_t aio_reserved2;
	uint32_t aio_flags;
	uint32_t aio_resfd;
};
_Static_assert(sizeof(struct kernel_iocb) == 64, "kernel iocb size");
_Static_assert(sizeof(struct kernel_iocb) == sizeof(struct iocb), "iocb size");

#define KIOCB_FLAG_RESFD	0x1u

/*
 * The kernel's struct __aio_sigset: the sixth io_pgetevents argument, with
 * the mask size inside because a seventh argument was not possible.  On
 * 32-bit ABIs both fields are 32 bits wide, as the compat entry expects.
 */
struct aio_sigset_arg {
	const void *sigmask;
	size_t sigsetsize;
};

/* The kernel's signal-set size (8 bytes here), not glibc's sigset_t (128). */
#define KERNEL_SIGSET_SIZE (_NSIG / 8)

/* The kernel's struct __kernel_timespec: 64-bit fields on every ABI. */
struct kernel_timespec64 {
	long long tv_sec;
	long long tv_nsec;
};

#endif /* LIBAIO_KERNEL_ABI_H */
