/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the running kernel offers, and what LIBAIO_DISABLE switches off.
 * Both are found out lazily, from the program's own calls; every reader
 * may see an answer with relaxed ordering because every thread computes
 * the same answer.
 */
#ifndef LIBAIO_FEATURE_FLAGS_H
#define LIBAIO_FEATURE_FLAGS_H

#include <stdatomic.h>

#include "compiler.h"

#define DISABLE_POLL		0x1u
#define DISABLE_PGETEVENTS	0x2u
#define DISABLE_RING		0x4u
#define ASYNC_ENV		0x8u	/* LIBAIO_ASYNC=1: not a switch-off */
#define DISABLE_PARSED		0x100u

extern hidden _Atomic unsigned aioreap_features_disabled_word;
unsigned aioreap_features_parse_env(void);

/* LIBAIO_DISABLE, read from the environment on first use. */
static inline unsigned features_disabled(void)
{
	unsigned v = atomic_load_explicit(&aioreap_features_disabled_word,
					  memory_order_relaxed);

	if (unlikely(!(v & DISABLE_PARSED)))
		v = aioreap_features_parse_env();
	return v;
}

/* io_pgetevents: 1 usable, 0 missing (ENOSYS/EPERM seen or disabled). */
int aioreap_features_pgetevents_native(void);
void aioreap_features_pgetevents_missing(void);
/* io_pgetevents_time64: 1 usable (or not yet refused), 0 missing. */
int aioreap_features_time64_native(void);
void aioreap_features_time64_missing(void);

#endif /* LIBAIO_FEATURE_FLAGS_H */
