/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * io_aio_limits against the kernel's own figures: the counters in
 * /proc/sys/fs read here independently, the charge an io_setup really
 * adds to fs.aio-nr (and gives back at io_destroy), and the slot count
 * the kernel writes into the ring header it maps.
 *
 * fs.aio-nr belongs to the whole machine.  The other Check programs, and
 * this one's other modes, hold still while this one runs: it holds the
 * test programs' lock exclusive (test_counts_aio_nr).  The shell tests'
 * programs and programs outside the suite may still make and destroy
 * contexts while a case looks, so a charge is measured in rounds, and a
 * round counts only when nothing else moved the counter (it came back to
 * where it started).
 * The ring's slot count is the kernel's answer for this context alone,
 * and is checked in every round.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test-common.h"

const int test_counts_aio_nr = 1;

static unsigned long long proc_counter(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v = 0;

	ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
	ck_assert_int_eq(fscanf(f, "%llu", &v), 1);
	fclose(f);
	return v;
}

#define AIO_NR		"/proc/sys/fs/aio-nr"
#define AIO_MAX_NR	"/proc/sys/fs/aio-max-nr"

START_TEST(the_counters_are_the_kernels)
{
	struct io_aio_limits l;
	unsigned i;

	memset(&l, 0xa5, sizeof(l));
	ck_assert_errno_kept(io_aio_limits(0, &l));
	ck_assert_int_eq(io_aio_limits(0, &l), 0);
	ck_assert_uint_eq(l.aio_max_nr, proc_counter(AIO_MAX_NR));
	ck_assert_uint_eq(l.available,
			  l.aio_nr < l.aio_max_nr ? l.aio_max_nr - l.aio_nr : 0);
	/* Nothing asked for, nothing charged or mapped. */
	ck_assert_uint_eq(l.charge, 0);
	ck_assert_uint_eq(l.ring_events, 0);
	ck_assert_uint_eq(l.ring_bytes, 0);
	ck_assert_uint_eq(l.page_size, (unsigned long)sysconf(_SC_PAGESIZE));
	ck_assert_uint_ge(l.possible_cpus, (unsigned long)sysconf(_SC_NPROCESSORS_ONLN));
	for (i = 0; i < sizeof(l.reserved) / sizeof(l.reserved[0]); i++)
		ck_assert_uint_eq(l.reserved[i], 0);
}
END_TEST

/* Requests on both sides of the smallest ring and of page boundaries:
 * the smallest ring holds 8 slots per possible CPU, the rest is
 * rounding to whole pages. */
static const unsigned sizes[] = { 1, 64, 100, 127, 128, 1000, 4096, 10000 };

START_TEST(one_io_setup_charges_and_maps_what_was_said)
{
	unsigned n = sizes[_i];
	struct io_aio_limits l;
	unsigned long long before = 0, during = 0, after = 0;
	int round, clean = 0;

	ck_assert_int_eq(io_aio_limits(n, &l), 0);
	ck_assert_uint_eq(l.charge, n);
	ck_assert_uint_eq(l.ring_bytes % l.page_size, 0);
	ck_assert_uint_ge(l.ring_events, 2ull * n);
	/* The ring fills its pages: one slot more would need another. */
	ck_assert_uint_le(32 + 32 * l.ring_events, l.ring_bytes);
	ck_assert_uint_gt(32 + 32 * (l.ring_events + 1), l.ring_bytes);
	if (l.charge > l.available) {
		/* This machine has no room for the request now: it must fail
		 * the way the figures say. */
		io_context_t ctx = 0;
		int r = io_setup(n, &ctx);

		if (r == 0) {
			io_destroy(ctx);
			ck_abort_msg("io_setup(%u) succeeded with %llu of %llu left",
				     n, l.available, l.aio_max_nr);
		}
		ck_assert_int_eq(r, -EAGAIN);
		return;
	}
	for (round = 0; round < 50 && clean < 3; round++) {
		io_context_t ctx = 0;
		int r;

		before = proc_counter(AIO_NR);
		r = io_setup(n, &ctx);
		during = proc_counter(AIO_NR);
		if (r == -EAGAIN)
			continue;	/* others took the room meanwhile */
		ck_assert_int_eq(r, 0);
		/* The kernel's own count of this ring's slots. */
		ck_assert_uint_eq(hdr(ctx)->nr, l.ring_events);
		ck_assert_int_eq(io_destroy(ctx), 0);
		after = proc_counter(AIO_NR);
		if (after == before && during - before == l.charge)
			clean++;
	}
	ck_assert_msg(clean > 0,
		      "io_setup(%u): in no round of %d did fs.aio-nr rise by %llu "
		      "and come back (last: %llu, %llu, %llu)",
		      n, round, l.charge, before, during, after);
}
END_TEST

START_TEST(too_many_events_is_einval_as_for_io_setup)
{
	struct io_aio_limits l;
	io_context_t ctx = 0;

	/* Doubled, 4194305 events of 32 bytes pass the kernel's 256 MiB. */
	ck_assert_int_eq(io_aio_limits(4194305, &l), -EINVAL);
	ck_assert_int_eq(io_setup(4194305, &ctx), -EINVAL);
	ck_assert_int_eq(io_aio_limits(4194304, &l), 0);
	ck_assert_uint_eq(l.charge, 4194304);
}
END_TEST

START_TEST(over_the_limit_is_eagain_as_foreseen)
{
	struct io_aio_limits l;
	io_context_t ctx = 0;
	unsigned long long n;
	int r;

	ck_assert_int_eq(io_aio_limits(0, &l), 0);
	n = l.aio_max_nr + 1;
	if (n > 4194304)
		n = 4194304;	/* more would be EINVAL first */
	ck_assert_int_eq(io_aio_limits((unsigned)n, &l), 0);
	if (l.charge <= l.available) {
		/* A limit raised past what one context may ask: nothing to
		 * show here, but the case must not pass silently. */
		test_skip("fs.aio-max-nr %llu leaves room for the largest "
			  "io_setup", l.aio_max_nr);
		return;
	}
	r = io_setup((int)n, &ctx);
	if (r == 0)
		io_destroy(ctx);
	ck_assert_int_eq(r, -EAGAIN);
}
END_TEST

START_TEST(a_null_result_is_efault)
{
	ck_assert_errno_kept(io_aio_limits(1, NULL));
	ck_assert_int_eq(io_aio_limits(1, NULL), -EFAULT);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *t = tcase_create("limits");

	tcase_add_test(t, the_counters_are_the_kernels);
	tcase_add_loop_test(t, one_io_setup_charges_and_maps_what_was_said, 0,
			    (int)(sizeof(sizes) / sizeof(sizes[0])));
	tcase_add_test(t, too_many_events_is_einval_as_for_io_setup);
	tcase_add_test(t, over_the_limit_is_eagain_as_foreseen);
	tcase_add_test(t, a_null_result_is_efault);
	suite_add_tcase(s, t);
	return s;
}
