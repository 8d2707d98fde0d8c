/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The helper's epoll set, its polls and doorbells (poll_helper.c), and the
 * emulation's lock and helper thread (poll_thread.c); see poll_emul.c. */
#ifndef LIBAIO_POLL_HELPER_H
#define LIBAIO_POLL_HELPER_H

#include <signal.h>
#include <sys/epoll.h>

#include "compiler.h"
#include "libaio.h"
#include "poll_rec.h"

/* --- poll_thread.c ---------------------------------------------------- */

/*
 * The lock covers every record but a CLAIMED one, the hash, the backlog,
 * the set and the helper, and is held across each doorbell io_submit.
 * Taken with all signals blocked (the old mask in *old), so a handler
 * never finds it held by the thread it interrupted; enter and leave also
 * recycle claimed records, and leave starts or winds down the helper as
 * the armed and queued polls require.
 */
void aioreap_pe_enter(sigset_t *old);
void aioreap_pe_leave(const sigset_t *old);
/* The same for a thread that blocks every signal for good. */
void aioreap_pe_enter_blocked(void);
void aioreap_pe_leave_blocked(void);
/* Under the lock: a helper serves the set (0), or -errno. */
int aioreap_thread_ensure(void);
/* fork: prepare (lock held) and the child's side. */
void aioreap_thread_fork_prepare(void);
void aioreap_thread_reset_in_child(void);

/* --- poll_helper.c, all under the lock -------------------------------- */

/* Free r, its fd out of the set and our duplicate closed. */
void aioreap_rec_free(struct poll_rec *r);
/* Make sure the doorbell file, the set and its pipe exist and are ours;
 * after a lost set, re-arm: 0 or -errno. */
int aioreap_helper_ensure(void);
/* If the epoll set is no longer ours, replace it and re-arm. */
void aioreap_helper_check(void);
/* Add r's fd to the epoll set (one-shot): 0, or -errno from epoll_ctl. */
int aioreap_helper_arm(struct poll_rec *r);
/* Take r out of the epoll set and close our duplicate of its fd. */
void aioreap_helper_disarm(struct poll_rec *r);
/* r is complete with r->res: ring its doorbell now or queue it. */
void aioreap_helper_complete(struct poll_rec *r);
/* Ring what the rings have room for: 1 when some remain queued. */
int aioreap_helper_flush(void);
/* Completions queued behind a full ring? */
int aioreap_helper_queued(void);
/* Take ctx's records out of the queue; free them if asked. */
void aioreap_helper_unqueue(io_context_t ctx, int free_them);
/* The helper's side: events from the set, the set to wait on and its
 * generation, and a wake-up through the set's pipe. */
void aioreap_helper_handle(const struct epoll_event *ev, long n);
int aioreap_helper_wait_fd(void);
unsigned aioreap_helper_set_gen(void);
void aioreap_helper_kick(void);
/* Is obj one of the library's doorbell iocbs?  (No lock needed.) */
int aioreap_helper_is_doorbell(const struct iocb *obj);
/* fork child: the set is the parent's. */
void aioreap_helper_reset_in_child(void);

#endif /* LIBAIO_POLL_HELPER_H */
