/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one Check runner: every tests/test-*.c area file provides
 * test_suite(), and each is linked with this main into its own program.
 * LIBAIO_TEST_SECCOMP=pgetevents installs, before any test runs, a seccomp
 * filter that makes io_pgetevents answer ENOSYS (a pre-4.18 kernel).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-common.h"

int main(void)
{
	const char *sc = getenv("LIBAIO_TEST_SECCOMP");
	SRunner *sr;
	int failed;

	if (sc && *sc && test_install_seccomp(sc) != 0) {
		fprintf(stderr, "cannot install seccomp filter for '%s'\n", sc);
		return 99;
	}
	sr = srunner_create(test_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
