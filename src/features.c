/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Feature probing.
 *
 * poll: io_submit answers -EINVAL both for an unknown opcode (kernels
 * before 4.19) and for a malformed iocb, so the only trustworthy test is a
 * poll that must succeed: POLLIN|POLLOUT on a fresh eventfd, which is
 * always writable and so completes at once.
 * pgetevents: the first call that answers ENOSYS (old kernel) or EPERM (a
 * seccomp profile) marks it missing; the probe makes one such call.
 * ring: the probe context's header must be one the reaper understands.
 */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "export.h"
#include "features.h"
#include "ring.h"
#include "syscall.h"

_Atomic unsigned features_disabled_word;

unsigned features_parse_env(void)
{
	const char *s = getenv("LIBAIO_DISABLE");
	unsigned v = DISABLE_PARSED;

	while (s && *s) {
		size_t n = strcspn(s, ",");

		if (n == 4 && !strncmp(s, "poll", 4))
			v |= DISABLE_POLL;
		else if (n == 10 && !strncmp(s, "pgetevents", 10))
			v |= DISABLE_PGETEVENTS;
		else if (n == 4 && !strncmp(s, "ring", 4))
			v |= DISABLE_RING;
		else if (n == 3 && !strncmp(s, "all", 3))
			v |= DISABLE_POLL | DISABLE_PGETEVENTS | DISABLE_RING;
		s += n;
		if (*s == ',')
			s++;
	}
	atomic_store_explicit(&features_disabled_word, v, memory_order_relaxed);
	return v;
}

static _Atomic int pgetevents_missing;

int features_pgetevents_native(void)
{
	if (features_disabled() & DISABLE_PGETEVENTS)
		return 0;
	return !atomic_load_explicit(&pgetevents_missing, memory_order_relaxed);
}

void features_pgetevents_missing(void)
{
	atomic_store_explicit(&pgetevents_missing, 1, memory_order_relaxed);
}

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static unsigned probed;

static void probe_kernel(void)
{
	io_context_t ctx = NULL;
	struct io_event ev;
	struct timespec zero = { 0, 0 };
	struct aio_sigset_arg sig = { NULL, KERNEL_SIGSET_SIZE };
	long ret;
	int efd;

	if (aio_sys_setup(1, &ctx) < 0)
		return;
	probed |= IO_FEATURE_AIO;
	if (ring_header_ok((const struct aio_ring *)ctx))
		probed |= IO_FEATURE_RING;

	ret = aio_sys_pgetevents(ctx, 0, 1, &ev, &zero, &sig);
	if (ret == -ENOSYS || ret == -EPERM)
		features_pgetevents_missing();
	else
		probed |= IO_FEATURE_PGETEVENTS;

	efd = (int)raw_syscall2(SYS_eventfd2, 0, EFD_CLOEXEC);
	if (efd >= 0) {
		struct iocb cb, *cbs[1] = { &cb };

		io_prep_poll(&cb, efd, POLLIN | POLLOUT);
		if (aio_sys_submit(ctx, 1, cbs) == 1) {
			ret = aio_sys_getevents(ctx, 1, 1, &ev, NULL);
			if (ret == 1 && ev.obj == &cb && (ev.res & POLLOUT))
				probed |= IO_FEATURE_POLL;
		}
		sys_close(efd);
	}
	aio_sys_destroy(ctx);
}

static unsigned probe_result(void)
{
	pthread_once(&probe_once, probe_kernel);
	return probed;
}

int features_poll_native(void)
{
	if (features_disabled() & DISABLE_POLL)
		return 0;
	return (probe_result() & IO_FEATURE_POLL) != 0;
}

AIO_PUBLIC unsigned int io_features(void)
{
	unsigned v = probe_result(), dis = features_disabled();

	if (dis & DISABLE_POLL)
		v = (v & ~IO_FEATURE_POLL) | IO_FEATURE_POLL_DISABLED;
	if (dis & DISABLE_PGETEVENTS)
		v = (v & ~IO_FEATURE_PGETEVENTS) | IO_FEATURE_PGETEVENTS_DISABLED;
	else if (!features_pgetevents_native())
		v &= ~IO_FEATURE_PGETEVENTS;
	if (dis & DISABLE_RING)
		v = (v & ~IO_FEATURE_RING) | IO_FEATURE_RING_DISABLED;
	return v;
}
