# tests: what the library asks the kernel on its own (nothing: features
# are learnt from the program's calls), under strict seccomp filters, at
# fs.aio-max-nr, and across fork() during the first calls.
if HAVE_CHECK
check_PROGRAMS += tests/test-features
TESTS += tests/test-features
tests_test_features_SOURCES = tests/test-features.c $(test_common_sources)
tests_test_features_CFLAGS = $(test_cflags)
tests_test_features_LDADD = $(test_ldadd)
endif
# tests: LIBAIO_DISABLE is ignored by programs with raised privileges.
TESTS += tests/secure-env.sh
EXTRA_DIST += tests/secure-env.sh
