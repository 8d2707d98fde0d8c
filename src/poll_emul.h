/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * IOCB_CMD_POLL done by the library, for kernels without aio poll, with
 * LIBAIO_DISABLE=poll, and for file types the kernel's aio poll refuses
 * (ttys and ptys: two wait queues).  See poll_emul.c for the design.
 */
#ifndef LIBAIO_POLL_EMUL_H
#define LIBAIO_POLL_EMUL_H

#include <stdatomic.h>

#include "compiler.h"
#include "libaio.h"

/* The used flag: set when the first poll is emulated, before its
 * doorbell can reach any ring (the io_submit system call that posts it
 * orders the two) and before io_submit returns, so io_cancel then looks
 * for it. */
extern hidden _Atomic int aioreap_poll_emul_used;

/* Rewrite the library's own wake-up events into the completions they
 * carry, dropping those of polls a concurrent io_destroy took away.
 * Runs on every batch reaped while the used flag is set; returns how
 * many events remain (in order, at the front of ev). */
long aioreap_poll_emul_translate(struct io_event *ev, long n);

/* io_submit when emulation may be involved: same return convention. */
int aioreap_poll_emul_submit(io_context_t ctx, long nr, struct iocb **ios);

/* After the kernel accepted fewer than nr iocbs (or failed the first with
 * -EINVAL): emulate the poll it refused, if that is why, and go on.
 * Returns what io_submit must return. */
int aioreap_poll_emul_resume(io_context_t ctx, long nr, struct iocb **ios,
			     long done);

/* io_cancel for an emulated poll: 1 and *ret set when iocb was ours. */
int aioreap_poll_emul_cancel(io_context_t ctx, struct iocb *iocb, int *ret);

/*
 * io_destroy brackets the system call with these two; io_setup calls
 * setup_done with the address it got.  Between begin and end no
 * emulated poll can be added to ctx or ring a doorbell into it, and those
 * pending are cancelled (their descriptors closed), so after io_destroy
 * nothing of ctx remains; the kernel may then give the address to a new
 * context.  The state lives in the caller's frame.
 */
struct pe_destroy {
	io_context_t ctx;
	int slot;	/* dying-slot index, PE_LISTED or PE_UNPUBLISHED */
	struct pe_destroy *next;
};
#define PE_LISTED	(-1)	/* on the overflow list (until io_setup) */
#define PE_UNPUBLISHED	(-2)	/* not a context address: nothing to do */
void aioreap_poll_emul_destroy_begin(io_context_t ctx, struct pe_destroy *d);
void aioreap_poll_emul_destroy_end(struct pe_destroy *d);
void aioreap_poll_emul_setup_done(io_context_t ctx);
/* Is ctx being destroyed?  Under the lock, after the used flag was set
 * (poll_destroy.c, for poll_emul.c). */
int aioreap_poll_ctx_dying(io_context_t ctx);

#endif /* LIBAIO_POLL_EMUL_H */
