/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Functions behind more than one public name: the versioned definitions
 * (bound to their nodes with AIO_SYMVER, see export.h) and the core of
 * every reap, declared once for the files that call one another's.
 */
#ifndef LIBAIO_VERSIONED_H
#define LIBAIO_VERSIONED_H

#include <time.h>

#include "compiler.h"
#include "kernel_wait.h"
#include "libaio.h"

/* getevents.c */
int aioreap_getevents_core(io_context_t ctx, long min_nr, long nr,
			   struct io_event *ev, const struct wait_spec *w);

/* LIBAIO_0.4: the default io_getevents, io_cancel and io_queue_wait. */
int aioreap_io_getevents_0_4(io_context_t ctx, long min_nr, long nr,
			     struct io_event *events, struct timespec *timeout);
int aioreap_io_cancel_0_4(io_context_t ctx, struct iocb *iocb,
			  struct io_event *evt);
int aioreap_io_queue_wait_0_4(io_context_t ctx,
			      const struct timespec *timeout);

/* LIBAIO_0.1: the old io_getevents, io_cancel and io_queue_wait. */
int aioreap_io_getevents_0_1(io_context_t ctx, long nr,
			     struct io_event *events,
			     const struct timespec *timeout);
int aioreap_io_cancel_0_1(io_context_t ctx, struct iocb *iocb);
int aioreap_io_queue_wait_0_1(io_context_t ctx,
			      const struct timespec *timeout);

#endif /* LIBAIO_VERSIONED_H */
