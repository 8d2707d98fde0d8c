/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IOCB_CMD_POLL done by the library; the design is in poll_emul.c. */
#ifndef LIBAIO_POLL_EMUL_H
#define LIBAIO_POLL_EMUL_H

#include <stdatomic.h>

#include "compiler.h"
#include "libaio.h"

/* Set by the first emulated poll, before its doorbell can reach a ring
 * and before io_submit returns (so io_cancel looks for it). */
extern hidden _Atomic int aioreap_poll_emul_used;

/* Rewrite doorbell events in a reaped batch into the completions they
 * carry, dropping those a concurrent io_destroy took away; returns how
 * many events remain, in order at the front of ev. */
long aioreap_poll_emul_translate(struct io_event *ev, long n);

/* Before the first record of the process: the fork handlers, and the
 * used flag that makes every reap rewrite library events. */
void aioreap_poll_note_used(void);

/* io_submit, polls and all (but async submission's copies). */
int aioreap_poll_submit(io_context_t ctx, long nr, struct iocb **ios);

/* io_submit when emulation may be involved: same return convention. */
int aioreap_poll_emul_submit(io_context_t ctx, long nr, struct iocb **ios);

/* The kernel took done < nr iocbs (or said -EINVAL): emulate the poll it
 * refused, if that is why, and go on.  Returns io_submit's answer. */
int aioreap_poll_emul_resume(io_context_t ctx, long nr, struct iocb **ios,
			     long done);

/* io_cancel for an emulated poll: 1 and *ret set when iocb was ours. */
int aioreap_poll_emul_cancel(io_context_t ctx, struct iocb *iocb, int *ret);

/* io_destroy brackets its system call with begin and end (state in its
 * frame): meanwhile no poll is added to ctx or rings into it, and those
 * pending are cancelled.  io_setup calls setup_done with its address. */
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
/* Is ctx being destroyed?  Under the lock, after the used flag is set. */
int aioreap_poll_ctx_dying(io_context_t ctx);

#endif /* LIBAIO_POLL_EMUL_H */
