# SPDX-License-Identifier: LGPL-2.1-or-later
# Tests.  Every Check program is tests/test-AREA.c + the shared runner,
# and runs once per library mode: the test tests/test-AREA.MODE.mode,
# whose log compiler (tests/run-mode.sh) sets the mode from the name and
# whose driver is automake's tap-driver.sh (Check writes TAP), so each
# case counts in test-suite.log.  Shell tests (*.sh) and the two plain
# programs (abi-layout, time64) run as they are.
#
# TEST_MODES: the modes, on make's command line to change them (make
# check TEST_MODES="native ring").  async (LIBAIO_ASYNC=1) is not in the
# default list: on a file system without non-blocking reads (the package
# builders' overlay and tmpfs roots) every request goes to a worker and
# test-badinput's bad-input rows are answered in events, not by
# io_submit; the check and sanitizer jobs add it.
TEST_MODES = native poll pgetevents ring all seccomp-pgetevents
mode_programs =
# tests/modes.mk adds them to TESTS: each program of mode_programs times
# each mode, by GNU make's $(foreach), which automake must not read (it
# takes the function for a variable's name, and rewrites what TESTS
# names).
-include $(top_srcdir)/tests/modes.mk
# The logs of every mode's tests, those outside TEST_MODES too.
clean-local: clean-mode-logs
TEST_EXTENSIONS = .sh .mode
MODE_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
# LOG_COMPILER and LOG_FLAGS, empty here, are what make check-valgrind
# sets to run each test under valgrind: run-mode.sh wraps the program in
# them.
MODE_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/run-mode.sh $(LOG_COMPILER) $(LOG_FLAGS)
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(top_srcdir)'; top_builddir='$(top_builddir)'; \
	CC='$(CC)'; CXX='$(CXX)'; STOCK_LIBAIO='$(STOCK_LIBAIO)'; \
	STOCK_LIBAIO_H='$(STOCK_LIBAIO_H)'; MANDOC='$(MANDOC)'; GROFF='$(GROFF)'; \
	LIBTOOL='$(LIBTOOL)'; TEST_CFLAGS='$(CFLAGS)'; TEST_LDFLAGS='$(LDFLAGS)'; \
	LIBAIO_SONAME='$(LIBAIO_SONAME)'; \
	export top_srcdir top_builddir CC CXX STOCK_LIBAIO \
	STOCK_LIBAIO_H MANDOC GROFF LIBTOOL TEST_CFLAGS TEST_LDFLAGS LIBAIO_SONAME;
EXTRA_DIST += tests/run-mode.sh tests/modes.mk

# The shared runner and helpers, and the flags every Check program takes.
test_common_sources = tests/test-main.c tests/test-common.c tests/test-common.h
test_cflags = $(AM_CFLAGS) $(CHECK_CFLAGS) $(PTHREAD_CFLAGS)
test_ldadd = libaio.la $(CHECK_LIBS) $(PTHREAD_LIBS)

# api: every public call and helper; errors as the kernel gives them
if HAVE_CHECK
check_PROGRAMS += tests/test-api
mode_programs += tests/test-api
tests_test_api_SOURCES = tests/test-api.c $(test_common_sources)
tests_test_api_CFLAGS = $(test_cflags)
tests_test_api_LDADD = $(test_ldadd)
endif

# ABI: the struct layout, time64, the distribution's libaio compared
# The layout is checked at compile time, for whatever ABI CC targets
# (.ci/m32.sh: i386), so it needs neither Check nor the library.
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
EXTRA_DIST += $(abi_tests) tests/abi-prog.c tests/abi-lib.sh .ci/m32.sh

# arch: page size, byte order and memory ordering on the running kernel
if HAVE_CHECK
check_PROGRAMS += tests/test-arch
mode_programs += tests/test-arch
tests_test_arch_SOURCES = tests/test-arch.c $(test_common_sources)
tests_test_arch_CFLAGS = $(test_cflags)
tests_test_arch_LDADD = $(test_ldadd)
endif

# reaper: the ring reaper, reaps it did not start, the reap lock's edges
if HAVE_CHECK
check_PROGRAMS += tests/test-reaper tests/test-foreign tests/test-edges
mode_programs += tests/test-reaper tests/test-foreign tests/test-edges
TESTS += tests/reaper-valgrind.sh
tests_test_reaper_SOURCES = tests/test-reaper.c $(test_common_sources)
tests_test_reaper_CFLAGS = $(test_cflags)
tests_test_reaper_LDADD = $(test_ldadd)
tests_test_foreign_SOURCES = tests/test-foreign.c $(test_common_sources)
tests_test_foreign_CFLAGS = $(test_cflags)
tests_test_foreign_LDADD = $(test_ldadd)
tests_test_edges_SOURCES = tests/test-edges.c $(test_common_sources)
tests_test_edges_CFLAGS = $(test_cflags)
tests_test_edges_LDADD = $(test_ldadd)
endif
TESTS += tests/fastpath-frame.sh
EXTRA_DIST += tests/reaper-valgrind.sh tests/fastpath-frame.sh

# poll: IOCB_CMD_POLL and io_pgetevents, native and emulated
if HAVE_CHECK
check_PROGRAMS += tests/test-poll tests/test-poll-life tests/test-pgetevents
mode_programs += tests/test-poll tests/test-poll-life tests/test-pgetevents
TESTS += tests/poll-strace.sh
tests_test_poll_SOURCES = tests/test-poll.c $(test_common_sources)
tests_test_poll_CFLAGS = $(test_cflags)
tests_test_poll_LDADD = $(test_ldadd)
tests_test_poll_life_SOURCES = tests/test-poll-life.c $(test_common_sources)
tests_test_poll_life_CFLAGS = $(test_cflags)
tests_test_poll_life_LDADD = $(test_ldadd)
tests_test_pgetevents_SOURCES = tests/test-pgetevents.c $(test_common_sources)
tests_test_pgetevents_CFLAGS = $(test_cflags)
tests_test_pgetevents_LDADD = $(test_ldadd)
endif
EXTRA_DIST += tests/poll-strace.sh

# reliability: the bad input table, a soak under load and faults
if HAVE_CHECK
check_PROGRAMS += tests/test-badinput tests/test-soak
mode_programs += tests/test-badinput tests/test-soak
tests_test_badinput_SOURCES = tests/test-badinput.c $(test_common_sources)
tests_test_badinput_CFLAGS = $(test_cflags)
tests_test_badinput_LDADD = $(test_ldadd)
tests_test_soak_SOURCES = tests/test-soak.c $(test_common_sources)
tests_test_soak_CFLAGS = $(test_cflags)
tests_test_soak_LDADD = $(test_ldadd)
endif
EXTRA_DIST += tests/valgrind.supp .ci/sanitizers.sh .ci/valgrind.sh \
	.ci/tsan.supp

# features: learnt from the program's calls; LIBAIO_DISABLE and setuid
if HAVE_CHECK
check_PROGRAMS += tests/test-features
mode_programs += tests/test-features
tests_test_features_SOURCES = tests/test-features.c $(test_common_sources)
tests_test_features_CFLAGS = $(test_cflags)
tests_test_features_LDADD = $(test_ldadd)

check_PROGRAMS += tests/test-limits
mode_programs += tests/test-limits
tests_test_limits_SOURCES = tests/test-limits.c $(test_common_sources)
tests_test_limits_CFLAGS = $(test_cflags)
tests_test_limits_LDADD = $(test_ldadd)
endif
TESTS += tests/secure-env.sh
EXTRA_DIST += tests/secure-env.sh

# async: async submission, its workers, its counters, LIBAIO_ASYNC
if HAVE_CHECK
check_PROGRAMS += tests/test-async
mode_programs += tests/test-async
tests_test_async_SOURCES = tests/test-async.c $(test_common_sources)
tests_test_async_CFLAGS = $(test_cflags)
tests_test_async_LDADD = $(test_ldadd)
endif

# man: the pages linted, every exported name covered, the EXAMPLEs run
man_tests = tests/man-lint.sh tests/man-coverage.sh tests/man-examples.sh
TESTS += $(man_tests)
EXTRA_DIST += $(man_tests)

# bench: aio-bench's options and output formats (never its timings)
if BUILD_TOOLS
TESTS += tests/bench-args.sh
endif
EXTRA_DIST += tests/bench-args.sh

# fio: the system's fio on the library built here, async submission on,
# every block checked
TESTS += tests/fio-async.sh
EXTRA_DIST += tests/fio-async.sh

# noaio: a kernel without AIO (every io_* call answers ENOSYS)
if HAVE_CHECK
check_PROGRAMS += tests/test-noaio
mode_programs += tests/test-noaio
tests_test_noaio_SOURCES = tests/test-noaio.c $(test_common_sources)
tests_test_noaio_CFLAGS = $(test_cflags)
tests_test_noaio_LDADD = $(test_ldadd)
endif
# aio-probe: how the shell tests skip where the AIO calls do not exist.
check_PROGRAMS += tests/aio-probe
tests_aio_probe_SOURCES = tests/aio-probe.c
# noaio-exec: runs a program (aio-bench, in tests/bench-args.sh) without
# AIO; it links neither the runner nor the library.
if HAVE_CHECK
check_PROGRAMS += tests/noaio-exec
tests_noaio_exec_SOURCES = tests/noaio-exec.c tests/test-common.c tests/test-common.h
tests_noaio_exec_CFLAGS = $(test_cflags)
tests_noaio_exec_LDADD = $(CHECK_LIBS)
endif

# static: libaio.a's names, and a static link beside old internal names
static_tests = tests/static-names.sh tests/static-link.sh
TESTS += $(static_tests)
EXTRA_DIST += $(static_tests)

# layering: src/*.c call one another one way, never in a circle
TESTS += tests/src-layering.sh
EXTRA_DIST += tests/src-layering.sh

# ci: the CI driver's job runner (scripts/test-all.sh)
TESTS += tests/ci-run-job.sh
EXTRA_DIST += tests/ci-run-job.sh
