/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to the poll emulation (poll_emul.c, poll_helper.c): one record
 * per emulated poll iocb, the process-wide lock, and the helper's calls.
 * The design is explained at the top of poll_emul.c.
 */
#ifndef LIBAIO_POLL_REC_H
#define LIBAIO_POLL_REC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "libaio.h"

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

/* A record's life: FREE -> ARMED -> FIRED -> DELIVERED -> FREE. */
enum {
	REC_FREE = 0,
	REC_ARMED,	/* in the epoll set, nobody has completed it */
	REC_FIRED,	/* completed (ready or cancelled); doorbell not rung */
	REC_DELIVERED,	/* doorbell event in the ring, awaiting the reaper */
};

struct poll_rec {
	/* Decides who completes an armed poll: the helper or io_cancel. */
	_Atomic int state;
	uint32_t idx;		/* position in the record store */
	uint32_t gen;		/* bumped at each reuse: stale tokens miss */
	int fd;			/* our duplicate of the polled fd, or -1 */
	int resfd;		/* our duplicate of the RESFD eventfd, or -1 */
	unsigned events;	/* the POLL* bits asked for */
	unsigned long res;	/* the mask the completion reports */
	io_context_t ctx;
	struct iocb *user;	/* the application's iocb */
	uint64_t user_data;	/* its aio_data as submitted */
	struct poll_rec *hnext;	/* chain in the by-iocb hash */
	struct poll_rec *qnext;	/* backlog or free list */
};

/* Protects every record, the hash, the backlog and the helper state.  It
 * is held across each doorbell io_submit (see poll_emul_forget). */
extern pthread_mutex_t pe_lock;

/* Records (poll_emul.c); all under pe_lock. */
uint64_t rec_token(const struct poll_rec *r);
struct poll_rec *rec_by_token(uint64_t token);
void rec_free(struct poll_rec *r);

/* poll_helper.c; all under pe_lock unless said otherwise. */
int helper_ensure(void);
/* Add r's fd to the epoll set (one-shot): 0, or -errno from epoll_ctl. */
int helper_arm(struct poll_rec *r);
/* Take r out of the epoll set and close our duplicate of its fd. */
void helper_disarm(struct poll_rec *r);
/* r is complete with r->res: ring its doorbell now or queue it. */
void helper_complete(struct poll_rec *r);
/* Drop ctx's queued doorbells (records are freed by the caller). */
void helper_forget_ctx(io_context_t ctx);
/* Is obj one of the library's doorbell iocbs?  (No lock needed.) */
int helper_is_doorbell(const struct iocb *obj);
/* fork child: the helper thread and epoll set are the parent's. */
void helper_reset_in_child(void);

#endif /* LIBAIO_POLL_REC_H */
