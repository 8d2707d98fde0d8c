/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * io_aio_limits: the system-wide AIO budget and what one io_setup takes
 * from it.
 *
 * Every context charges the count its io_setup asked for against
 * fs.aio-max-nr, which one kernel shares between every process and every
 * container on the machine (the counters are not namespaced); io_setup
 * answers EAGAIN once the charges would pass it.  The ring the kernel
 * maps is sized otherwise: at least four slots per possible CPU, doubled
 * (completions may sit in per-CPU caches), two more, then rounded up to
 * whole pages, the 32-byte header included.  Both rules are Linux's since
 * the fix that stopped charging the doubled count (4.13, backported to
 * many older trees); before it, the doubled count was charged against
 * twice the limit.
 *
 * Everything is read from /proc and /sys, through the syscall layer; no
 * context is made, so the call never changes the counters it reports.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>

#include "export.h"
#include "raw_syscall.h"

/* The kernel refuses a request whose doubled count of 32-byte events
 * needs more than 256 MiB (EINVAL). */
#define MAX_EVENTS_DOUBLED	(0x10000000u / 32u)
#define RING_HEADER		32u
#define EVENT_SIZE		32u

/* read_small PATH BUF SIZE: the start of a small file, NUL-terminated;
 * its length or -errno. */
static long read_small(const char *path, char *buf, size_t size)
{
	long fd = sys_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	long n;

	if (fd < 0)
		return fd;
	n = sys_read((int)fd, buf, size - 1);
	sys_close((int)fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

/* A decimal number at *s, which moves past it; -1 if there is none. */
static long long parse_dec(const char **s)
{
	unsigned long long v = 0;
	const char *p = *s;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9' && v < (1ull << 60))
		v = v * 10 + (unsigned)(*p++ - '0');
	*s = p;
	return (long long)v;
}

/* One counter of /proc/sys/fs; 0 or -errno. */
static int read_counter(const char *path, unsigned long long *out)
{
	char buf[32];
	const char *p = buf;
	long n = read_small(path, buf, sizeof(buf));
	long long v;

	if (n < 0)
		return (int)n;
	v = parse_dec(&p);
	if (v < 0)
		return -EIO;
	*out = (unsigned long long)v;
	return 0;
}

/* The count of possible CPUs, from the kernel's list of them ("0-3",
 * "0,2-5"): the kernel sizes every ring from this count, not from the
 * CPUs online.  The count or -errno. */
static long possible_cpus(void)
{
	char buf[256];
	const char *p = buf;
	long n = read_small("/sys/devices/system/cpu/possible", buf, sizeof(buf));
	long count = 0;

	if (n < 0)
		return n;
	for (;;) {
		long long lo = parse_dec(&p), hi = lo;

		if (lo < 0)
			return -EIO;
		if (*p == '-') {
			p++;
			hi = parse_dec(&p);
			if (hi < lo)
				return -EIO;
		}
		count += (long)(hi - lo + 1);
		if (*p != ',')
			break;
		p++;
	}
	return count;
}

AIO_PUBLIC int io_aio_limits(unsigned int nr_events, struct io_aio_limits *lim)
{
	struct io_aio_limits l;
	unsigned long long n, bytes;
	unsigned long page;
	long cpus;
	int r;

	if (!lim)
		return -EFAULT;
	memset(&l, 0, sizeof(l));
	r = read_counter("/proc/sys/fs/aio-nr", &l.aio_nr);
	if (r == 0)
		r = read_counter("/proc/sys/fs/aio-max-nr", &l.aio_max_nr);
	if (r)
		return r;
	/* An administrator may lower the limit below what contexts already
	 * hold: nothing is left then, rather than a wrapped difference. */
	l.available = l.aio_nr < l.aio_max_nr ? l.aio_max_nr - l.aio_nr : 0;
	cpus = possible_cpus();
	if (cpus < 0)
		return (int)cpus;
	page = getauxval(AT_PAGESZ);
	if (!page)
		return -EIO;
	l.possible_cpus = (unsigned)cpus;
	l.page_size = (unsigned)page;

	if (nr_events) {
		n = nr_events;
		if (n < 4ull * (unsigned long)cpus)
			n = 4ull * (unsigned long)cpus;
		n *= 2;
		if (n > MAX_EVENTS_DOUBLED)
			return -EINVAL;
		n += 2;
		bytes = (RING_HEADER + EVENT_SIZE * n + page - 1) / page * page;
		l.charge = nr_events;
		l.ring_events = (bytes - RING_HEADER) / EVENT_SIZE;
		l.ring_bytes = bytes;
	}
	*lim = l;
	return 0;
}
