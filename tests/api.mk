# tests: api (every public call and helper, errors against the kernel),
# the struct layout pinned at compile time, and the ABI checks against the
# distribution's libaio (tests/abi-*.sh).
if HAVE_CHECK
check_PROGRAMS += tests/test-api
TESTS += tests/test-api
tests_test_api_SOURCES = tests/test-api.c $(test_common_sources)
tests_test_api_CFLAGS = $(test_cflags)
tests_test_api_LDADD = $(test_ldadd)
endif

# Compile-time layout check against <linux/aio_abi.h> and the stock
# numbers; built for whatever ABI CC targets (.ci/m32.sh: i386).
check_PROGRAMS += tests/test-abi-layout
TESTS += tests/test-abi-layout
tests_test_abi_layout_SOURCES = tests/test-abi-layout.c

if TIME64_ENTRY_POINTS
# 32-bit only: a program built with 64-bit time_t reaches the LIBAIO_0.6
# entry points through the header.  It must not see config.h, which
# undoes _TIME_BITS for the library's own files.
check_PROGRAMS += tests/test-time64
TESTS += tests/test-time64
tests_test_time64_SOURCES = tests/test-time64.c
tests_test_time64_CPPFLAGS = -I$(top_srcdir)/include \
	-D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64
tests_test_time64_LDADD = libaio.la
endif
EXTRA_DIST += tests/test-time64.c

abi_tests = \
	tests/abi-header.sh \
	tests/abi-stock-header.sh \
	tests/abi-our-header.sh \
	tests/abi-abidiff.sh \
	tests/abi-symbols.sh \
	# EOL
TESTS += $(abi_tests)
EXTRA_DIST += $(abi_tests) tests/abi-prog.c tests/abi-lib.sh
EXTRA_DIST += .ci/m32.sh
