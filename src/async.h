/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Async submission: the library's side of io_set_async(3); the design is
 * in async_submit.c, the workers in async_worker.c. */
#ifndef LIBAIO_ASYNC_H
#define LIBAIO_ASYNC_H

#include <stdatomic.h>

#include "compiler.h"
#include "libaio.h"
#include "poll_rec.h"

/* Set by the first io_set_async: from then on io_submit asks which
 * contexts have it on (LIBAIO_ASYNC=1 is in the features word). */
extern hidden _Atomic int aioreap_async_set_any;

/* Is async submission on for ctx? */
int aioreap_async_on(io_context_t ctx);
/* io_submit for a context that has it on: same return convention. */
int aioreap_async_submit(io_context_t ctx, long nr, struct iocb **ios);
/* io_cancel of an iocb async submission holds: 1 and *ret set if it is
 * one, else 0 (the kernel answers). */
int aioreap_async_cancel(io_context_t ctx, struct iocb *iocb,
			 struct io_event *evt, int *ret);
/* io_setup gave out ctx: a setting for an older context there goes. */
void aioreap_async_setup_done(io_context_t ctx);

/* --- async_worker.c ---------------------------------------------------- */

/* Counters for io_async_stats (relaxed: they order nothing). */
enum async_count {
	ASYNC_INLINE, ASYNC_TO_WORKERS, ASYNC_REDRIVEN, ASYNC_CANCELLED,
	ASYNC_FAILED, ASYNC_COUNTS
};
void aioreap_async_count(enum async_count which);

/* Is a try without blocking worth making for an opcode on the
 * program's fd (not where tries keep failing)?  And
 * what such a try came to (res: -EAGAIN or -EOPNOTSUPP when the file
 * refused it, anything else when it completed without blocking).  No
 * lock. */
int aioreap_async_try_pays(int fd, unsigned opcode);
void aioreap_async_note_try(int fd, unsigned opcode, long res);
/* The key that puts r's write in line behind the other writes to its
 * file on its context (0: none; see async_worker.c). */
uint64_t aioreap_async_write_key(const struct poll_rec *r);
/* Under the lock: r no longer tried without blocking. */
void aioreap_async_unmark(struct poll_rec *r);
/* r's event, claimed by a reaper, from in to out (which may be the same
 * event): 1 once written, 0 when it is taken out (handed to a worker). */
int aioreap_async_complete(struct poll_rec *r, const struct io_event *in,
			   struct io_event *out);

/* A reap took r's event, which says the kernel would have blocked: no
 * lock (a reaper may be a signal handler).  The record waits on a list
 * until aioreap_async_kick hands it to a worker. */
void aioreap_async_redrive(struct poll_rec *r);
/* Re-drives are waiting: hand them to the workers (takes the lock). */
extern hidden struct poll_rec *_Atomic aioreap_async_redrive_head;
void aioreap_async_kick(void);

/* Under the lock: r (not in the kernel) goes to a worker. */
void aioreap_async_queue(struct poll_rec *r);
/* Under the lock: the re-drive list into the queue. */
void aioreap_async_drain_locked(void);
/* Under the lock: take a queued record for iocb of ctx, or NULL. */
struct poll_rec *aioreap_async_unqueue_one(io_context_t ctx,
					   const struct iocb *iocb);
/* io_destroy (after the context is marked dying) and io_setup (a new
 * context at an old one's address): drop ctx's queued records, wait for
 * a worker inside a submission on it, and free its records. */
void aioreap_async_forget(io_context_t ctx);
/* fork child: no queue, no worker. */
void aioreap_async_reset_in_child(void);

#endif /* LIBAIO_ASYNC_H */
