/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: the result rows, shared by the statistics that fill them and
 * the report that prints them; the workloads reach them only through
 * row_get() and row_find().
 */
#ifndef AIO_BENCH_STATS_H
#define AIO_BENCH_STATS_H

#include "bench-util.h"

extern struct row rows[];
extern int nrows;

#endif /* AIO_BENCH_STATS_H */
