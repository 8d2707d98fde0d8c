/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel features, found out from the calls the program makes.
 *
 * The library makes no system call of its own to learn what the kernel
 * offers; it tries the real call and falls back on the answer:
 *  poll: every poll goes to the kernel with the rest of its batch.  A
 *    kernel without aio poll (before 4.19) refuses it with EINVAL, as it
 *    refuses a terminal's, and io_submit then hands it to the emulation.
 *    Telling the two apart would take a poll of the library's own on a
 *    context of its own.  On those kernels only, each batch that holds a
 *    poll costs the refused io_submit and the empty ones that check the
 *    context, before the emulation takes the poll.
 *  pgetevents: the first real call that answers ENOSYS (old kernel) or
 *    EPERM (a seccomp profile) marks it missing for the process.
 *  ring: io_setup checks each new context's header before registering it.
 * io_features() is asked for, so it may ask the kernel itself, but only
 * with calls on the NULL context, which create nothing.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#ifndef HAVE_SECURE_GETENV
# include <sys/auxv.h>
#endif

#include "export.h"
#include "feature_flags.h"
#include "raw_syscall.h"

_Atomic unsigned aioreap_features_disabled_word;

/* A program run with raised privileges (set-user-ID, file capabilities)
 * takes no orders from the environment of whoever started it. */
static const char *trusted_env(const char *name)
{
#ifdef HAVE_SECURE_GETENV
	return secure_getenv(name);
#else
	return getauxval(AT_SECURE) ? NULL : getenv(name);
#endif
}

unsigned aioreap_features_parse_env(void)
{
	const char *s = trusted_env("LIBAIO_DISABLE");
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
	s = trusted_env("LIBAIO_ASYNC");
	if (s && !strcmp(s, "1"))
		v |= ASYNC_ENV;
	atomic_store_explicit(&aioreap_features_disabled_word, v,
			      memory_order_relaxed);
	return v;
}

static _Atomic int pgetevents_missing;

int aioreap_features_pgetevents_native(void)
{
	if (features_disabled() & DISABLE_PGETEVENTS)
		return 0;
	return !atomic_load_explicit(&pgetevents_missing, memory_order_relaxed);
}

void aioreap_features_pgetevents_missing(void)
{
	atomic_store_explicit(&pgetevents_missing, 1, memory_order_relaxed);
}

#if __SIZEOF_LONG__ == 4
/* io_pgetevents_time64 (Linux 5.1, 32-bit ABIs only): missing from its
 * first ENOSYS or EPERM on, like io_pgetevents. */
static _Atomic int time64_missing;

int aioreap_features_time64_native(void)
{
	return !atomic_load_explicit(&time64_missing, memory_order_relaxed);
}

void aioreap_features_time64_missing(void)
{
	atomic_store_explicit(&time64_missing, 1, memory_order_relaxed);
}
#endif

/*
 * What io_features() has asked the kernel, kept so that it asks once.
 * Nothing here creates a context: a call on the NULL context reaches the
 * kernel's context lookup, which answers EINVAL, while a kernel built
 * without the call (or a seccomp profile that refuses it) answers ENOSYS
 * or EPERM first.  No lock: threads that race ask the same questions and
 * store the same answers, and asking twice does no harm.
 */
#define ASKED_AIO	0x1u	/* io_submit(NULL, 0, NULL) was asked */
#define HAS_AIO		0x2u	/* ... and answered anything but ENOSYS/EPERM */
#define ASKED_PGET	0x4u	/* io_pgetevents was asked (or is known) */

static _Atomic unsigned asked;

static int refused(long ret)
{
	return ret == -ENOSYS || ret == -EPERM;
}

static unsigned ask_kernel(void)
{
	/* Relaxed: each bit is a complete answer on its own, and a thread
	 * that misses another's store only asks again. */
	unsigned v = atomic_load_explicit(&asked, memory_order_relaxed);

	if (!(v & ASKED_AIO)) {
		v |= ASKED_AIO;
		if (!refused(aio_sys_submit(NULL, 0, NULL)))
			v |= HAS_AIO;
		atomic_fetch_or_explicit(&asked, v, memory_order_relaxed);
	}
	if ((v & HAS_AIO) && !(v & ASKED_PGET) &&
	    aioreap_features_pgetevents_native()) {
		/* The same question a real io_pgetevents would settle:
		 * its first ENOSYS or EPERM marks the call missing. */
		if (refused(aio_sys_pgetevents(NULL, 0, 0, NULL, NULL, NULL)))
			aioreap_features_pgetevents_missing();
		v |= ASKED_PGET;
		atomic_fetch_or_explicit(&asked, ASKED_PGET,
					 memory_order_relaxed);
	}
	return v;
}

AIO_PUBLIC unsigned int io_features(void)
{
	unsigned dis = features_disabled(), v = 0;

	if (ask_kernel() & HAS_AIO) {
		v |= IO_FEATURE_AIO;
		if (!(dis & DISABLE_POLL))
			v |= IO_FEATURE_POLL;
		if (aioreap_features_pgetevents_native())
			v |= IO_FEATURE_PGETEVENTS;
		if (!(dis & DISABLE_RING))
			v |= IO_FEATURE_RING;
	}
	if (dis & DISABLE_POLL)
		v |= IO_FEATURE_POLL_DISABLED;
	if (dis & DISABLE_PGETEVENTS)
		v |= IO_FEATURE_PGETEVENTS_DISABLED;
	if (dis & DISABLE_RING)
		v |= IO_FEATURE_RING_DISABLED;
	if (dis & ASYNC_ENV)
		v |= IO_FEATURE_ASYNC;
	return v;
}
