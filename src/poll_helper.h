/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The poll emulation's lock and helper (poll_helper.c); see poll_emul.c. */
#ifndef LIBAIO_POLL_HELPER_H
#define LIBAIO_POLL_HELPER_H

#include <pthread.h>
#include <signal.h>

#include "compiler.h"
#include "libaio.h"
#include "poll_rec.h"

/*
 * The lock covers every record but a CLAIMED one, the hash, the backlog
 * and the helper, and is held across each doorbell io_submit.  Taken with
 * all signals blocked (the old mask in *old), so a handler never finds it
 * held by the thread it interrupted; enter also recycles claimed records.
 */
void aioreap_pe_enter(sigset_t *old);	/* poll_helper.c */
void aioreap_pe_leave(const sigset_t *old);

/* Free r, its fd out of the set and our duplicates closed. */
void aioreap_rec_free(struct poll_rec *r);

/* All under the lock unless said otherwise. */
int aioreap_helper_ensure(void);
/* If the epoll set is no longer ours, replace it and re-arm. */
void aioreap_helper_check(void);
/* Add r's fd to the epoll set (one-shot): 0, or -errno from epoll_ctl. */
int aioreap_helper_arm(struct poll_rec *r);
/* Take r out of the epoll set and close our duplicate of its fd. */
void aioreap_helper_disarm(struct poll_rec *r);
/* r is complete with r->res: ring its doorbell now or queue it. */
void aioreap_helper_complete(struct poll_rec *r);
/* Take ctx's records out of the queue; free them if asked. */
void aioreap_helper_unqueue(io_context_t ctx, int free_them);
/* Is obj one of the library's doorbell iocbs?  (No lock needed.) */
int aioreap_helper_is_doorbell(const struct iocb *obj);
/* fork: wait until a just-created helper thread runs our code. */
void aioreap_helper_fork_prepare(void);
/* fork child: the helper and the set are the parent's. */
void aioreap_helper_reset_in_child(void);

#endif /* LIBAIO_POLL_HELPER_H */
