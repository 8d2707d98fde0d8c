/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one Check runner: every tests/test-*.c area file provides
 * test_suite(), and each is linked with this main into its own program.
 * LIBAIO_TEST_SECCOMP=pgetevents installs, before any test runs, a seccomp
 * filter that makes io_pgetevents answer ENOSYS (a pre-4.18 kernel).
 * Where io_setup itself answers ENOSYS (a kernel built without AIO, or
 * qemu-user, which does not pass the AIO system calls on), the program is
 * skipped with that reason: there is nothing for it to test.  An area
 * file made for that situation defines test_runs_without_aio = 1.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-common.h"

/* Overridden (to 1) by an area file that tests a system without AIO. */
__attribute__((weak)) extern const int test_runs_without_aio;
/* Overridden (to 1) by an area file that measures its own charge to
 * fs.aio-nr: it runs alone among the test programs (test_aio_nr_lock). */
__attribute__((weak)) extern const int test_counts_aio_nr;

int main(void)
{
	const char *sc = getenv("LIBAIO_TEST_SECCOMP");
	io_context_t probe = NULL;
	SRunner *sr;
	int failed;

	/* Check writes each case's TAP line to stdout after the case; a
	 * case's skip line (test_skip(), on unbuffered stderr) must come out
	 * after the line of the case before it, not ahead of it. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Before the probe below, which makes a context too. */
	test_aio_nr_lock(&test_counts_aio_nr && test_counts_aio_nr);
	if (!(&test_runs_without_aio && test_runs_without_aio) &&
	    test_sys_io_setup(1, &probe) == -ENOSYS) {
		/* TAP's plan for a program that cannot run (tests/run-mode.sh
		 * takes its exit status 77 as a skip). */
		printf("1..0 # SKIP io_setup answers ENOSYS (a kernel without AIO,"
		       " or qemu-user, which does not pass the AIO system calls on)\n");
		return 77;
	}
	if (probe)
		test_sys_io_destroy(probe);
	if (sc && *sc && test_install_seccomp(sc) != 0) {
		/* No seccomp here (qemu-user has none), but the filter is not
		 * needed where io_pgetevents already answers ENOSYS. */
		if (strcmp(sc, "pgetevents") != 0 ||
		    test_sys_io_pgetevents(NULL, 0, 0, NULL, NULL, NULL) != -ENOSYS) {
			fprintf(stderr, "cannot install seccomp filter for '%s'\n", sc);
			return 99;
		}
		printf("note: no seccomp filter, but io_pgetevents already answers ENOSYS\n");
	}
	sr = srunner_create(test_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
