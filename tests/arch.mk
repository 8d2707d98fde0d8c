# tests: what differs by architecture (page size, byte order, weak memory
# ordering), against the running kernel; CI also runs it under each
# architecture's own kernel (.ci/kernels.sh).
if HAVE_CHECK
check_PROGRAMS += tests/test-arch
TESTS += tests/test-arch
tests_test_arch_SOURCES = tests/test-arch.c $(test_common_sources)
tests_test_arch_CFLAGS = $(test_cflags)
tests_test_arch_LDADD = $(test_ldadd)
endif
