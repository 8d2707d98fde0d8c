/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aio-bench: what every part of the tool uses while it runs: the options,
 * the interrupt and failure flags, messages on stderr (which first clear
 * the progress line), the --series filter and CPU pinning.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"

struct options opt;
volatile int interrupted;
int run_failed;

/* ---- messages ----------------------------------------------------------- */

static int progress_on = -1;
static int progress_dirty;

void progress(const char *workload, int done, int total)
{
	if (progress_on < 0)
		progress_on = opt.progress || isatty(2);
	if (!progress_on)
		return;
	fprintf(stderr, "\raio-bench: %s %d/%d ", workload, done, total);
	progress_dirty = 1;
}

void progress_end(void)
{
	if (progress_dirty) {
		fprintf(stderr, "\r%40s\r", "");
		progress_dirty = 0;
	}
}

void die(const char *fmt, ...)
{
	va_list ap;

	progress_end();
	fputs("aio-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	file_cleanup();
	exit(1);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	progress_end();
	fputs("aio-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int series_on(const char *name)
{
	const char *s = opt.series;
	size_t len = strlen(name), n;

	if (!s)
		return 1;
	while (*s) {
		n = strcspn(s, ",");
		if (n == len && !strncmp(s, name, n))
			return 1;
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

/* The deepest of --depths: what the file and buffered workloads need
 * room for. */
long deepest_depth(void)
{
	long d = 1;
	int q;

	for (q = 0; q < opt.ndepths; q++)
		if (opt.depths[q] > d)
			d = opt.depths[q];
	return d;
}

int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Another CPU this process may run on, or -1. */
int other_cpu(int cpu)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (i != cpu && CPU_ISSET(i, &set))
			return i;
	return -1;
}
