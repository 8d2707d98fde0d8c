# tests: IOCB_CMD_POLL (native and emulated) and io_pgetevents (native and
# emulated), plus a check under strace that LIBAIO_DISABLE=poll keeps every
# poll iocb away from the kernel.
if HAVE_CHECK
check_PROGRAMS += tests/test-poll tests/test-pgetevents
TESTS += tests/test-poll tests/test-pgetevents
tests_test_poll_SOURCES = tests/test-poll.c $(test_common_sources)
tests_test_poll_CFLAGS = $(test_cflags)
tests_test_poll_LDADD = $(test_ldadd)
tests_test_pgetevents_SOURCES = tests/test-pgetevents.c $(test_common_sources)
tests_test_pgetevents_CFLAGS = $(test_cflags)
tests_test_pgetevents_LDADD = $(test_ldadd)
TESTS += tests/poll-strace.sh
endif
EXTRA_DIST += tests/poll-strace.sh
