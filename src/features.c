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

/*
 * The probe's answer is kept once it is known.  It is not known when the
 * probe's own io_setup fails for a passing reason (EAGAIN at fs.aio-max-nr,
 * ENOMEM): then nothing is kept, the next caller probes again, and polls
 * meanwhile go to the kernel, whose -EINVAL for an unsupported poll still
 * sends that iocb to the emulation.
 */
#define PROBE_DONE 0x80000000u

static _Atomic unsigned probed;
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned probe_kernel(void)
{
	io_context_t ctx = NULL;
	struct io_event ev;
	struct timespec zero = { 0, 0 };
	struct aio_sigset_arg sig = { NULL, KERNEL_SIGSET_SIZE };
	unsigned v = PROBE_DONE | IO_FEATURE_AIO;
	long ret;
	int efd;

	ret = aio_sys_setup(1, &ctx);
	if (ret == -ENOSYS || ret == -EPERM)
		return PROBE_DONE;	/* no AIO here at all */
	if (ret < 0)
		return 0;		/* try again later */
	if (ring_header_ok((const struct aio_ring *)ctx))
		v |= IO_FEATURE_RING;

	ret = aio_sys_pgetevents(ctx, 0, 1, &ev, &zero, &sig);
	if (ret == -ENOSYS || ret == -EPERM)
		features_pgetevents_missing();
	else
		v |= IO_FEATURE_PGETEVENTS;

	/* LIBAIO_DISABLE=poll: no poll iocb may reach the kernel, not even
	 * this probe (the report then shows the feature as disabled). */
	efd = features_disabled() & DISABLE_POLL ?
		      -1 : (int)raw_syscall2(SYS_eventfd2, 0, EFD_CLOEXEC);
	if (efd >= 0) {
		struct iocb cb, *cbs[1] = { &cb };

		io_prep_poll(&cb, efd, POLLIN | POLLOUT);
		if (aio_sys_submit(ctx, 1, cbs) == 1) {
			ret = aio_sys_getevents(ctx, 1, 1, &ev, NULL);
			if (ret == 1 && ev.obj == &cb && (ev.res & POLLOUT))
				v |= IO_FEATURE_POLL;
		}
		sys_close(efd);
	}
	aio_sys_destroy(ctx);
	return v;
}

static unsigned probe_result(void)
{
	/* Acquire: pairs with the release below, so a reader that sees
	 * PROBE_DONE sees the bits that came with it. */
	unsigned v = atomic_load_explicit(&probed, memory_order_acquire);

	if (__builtin_expect(v & PROBE_DONE, 1))
		return v;
	pthread_mutex_lock(&probe_lock);
	v = atomic_load_explicit(&probed, memory_order_relaxed);
	if (!(v & PROBE_DONE)) {
		v = probe_kernel();
		if (v & PROBE_DONE)
			atomic_store_explicit(&probed, v, memory_order_release);
	}
	pthread_mutex_unlock(&probe_lock);
	return v;
}

int features_poll_native(void)
{
	unsigned v;

	if (features_disabled() & DISABLE_POLL)
		return 0;
	v = probe_result();
	return !(v & PROBE_DONE) || (v & IO_FEATURE_POLL);
}

AIO_PUBLIC unsigned int io_features(void)
{
	unsigned v = probe_result() & ~PROBE_DONE, dis = features_disabled();

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
