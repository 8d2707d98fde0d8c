/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A refused poll carried by the kernel through an epoll set of one; the
 * design is in poll_carry.c. */
#ifndef LIBAIO_POLL_CARRY_H
#define LIBAIO_POLL_CARRY_H

#include "kernel_abi.h"
#include "libaio.h"
#include "poll_rec.h"

/* aioreap_poll_carry's answer when this kernel cannot carry it: the
 * helper thread's emulation must serve the poll instead. */
#define CARRY_UNAVAILABLE	1

/* Carry cb (k: its copy, fields already checked) into ctx: 0 once the
 * kernel holds it, CARRY_UNAVAILABLE, or io_submit's -errno.  The caller
 * has set the emulation's used flag. */
int aioreap_poll_carry(io_context_t ctx, struct iocb *cb,
		       const struct kernel_iocb *k);

/* The program's res for a carried poll's event whose own res is set_res
 * (a system call; after the claim, so r is the reaper's). */
unsigned long aioreap_poll_carry_res(const struct poll_rec *r,
				     unsigned long set_res);

#endif /* LIBAIO_POLL_CARRY_H */
