# tests: reliability (bad input table, soak under load and faults)
if HAVE_CHECK
check_PROGRAMS += tests/test-badinput tests/test-soak
TESTS += tests/test-badinput tests/test-soak
tests_test_badinput_SOURCES = tests/test-badinput.c $(test_common_sources)
tests_test_badinput_CFLAGS = $(test_cflags)
tests_test_badinput_LDADD = $(test_ldadd)
tests_test_soak_SOURCES = tests/test-soak.c $(test_common_sources)
tests_test_soak_CFLAGS = $(test_cflags)
tests_test_soak_LDADD = $(test_ldadd)
endif
EXTRA_DIST += tests/valgrind.supp .ci/sanitizers.sh .ci/valgrind.sh \
	.ci/tsan.supp
