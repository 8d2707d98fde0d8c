# Tests.  Every Check program is tests/test-AREA.c + the shared runner,
# run by tests/all-modes.sh in each library mode.  Shell tests (*.sh) run
# as they are.
TEST_EXTENSIONS = .sh
LOG_COMPILER = $(top_srcdir)/tests/all-modes.sh
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(top_srcdir)'; top_builddir='$(top_builddir)'; \
	CC='$(CC)'; CXX='$(CXX)'; STOCK_LIBAIO='$(STOCK_LIBAIO)'; \
	STOCK_LIBAIO_H='$(STOCK_LIBAIO_H)'; MANDOC='$(MANDOC)'; GROFF='$(GROFF)'; \
	LIBTOOL='$(LIBTOOL)'; TEST_CFLAGS='$(CFLAGS)'; TEST_LDFLAGS='$(LDFLAGS)'; \
	LIBAIO_SONAME='$(LIBAIO_SONAME)'; \
	export top_srcdir top_builddir CC CXX STOCK_LIBAIO \
	STOCK_LIBAIO_H MANDOC GROFF LIBTOOL TEST_CFLAGS TEST_LDFLAGS LIBAIO_SONAME;
EXTRA_DIST += tests/all-modes.sh

test_common_sources = tests/test-main.c tests/test-common.c tests/test-common.h
test_cflags = $(AM_CFLAGS) $(CHECK_CFLAGS) $(PTHREAD_CFLAGS)
test_ldadd = libaio.la $(CHECK_LIBS) $(PTHREAD_LIBS)

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
# tests: the user-space ring reaper (exactly once, fork, destroy, corruption)
if HAVE_CHECK
check_PROGRAMS += tests/test-reaper
TESTS += tests/test-reaper
tests_test_reaper_SOURCES = tests/test-reaper.c $(test_common_sources)
tests_test_reaper_CFLAGS = $(test_cflags)
tests_test_reaper_LDADD = $(test_ldadd)
endif
# tests: reaps the library did not start (raw system calls, raw clones)
if HAVE_CHECK
check_PROGRAMS += tests/test-foreign
TESTS += tests/test-foreign
tests_test_foreign_SOURCES = tests/test-foreign.c $(test_common_sources)
tests_test_foreign_CFLAGS = $(test_cflags)
tests_test_foreign_LDADD = $(test_ldadd)
endif
if HAVE_CHECK
TESTS += tests/reaper-valgrind.sh
endif
EXTRA_DIST += tests/reaper-valgrind.sh
# tests: the reap lock and registry at the edges (abnormal exits, destroy
# races, real-time priorities)
if HAVE_CHECK
check_PROGRAMS += tests/test-edges
TESTS += tests/test-edges
tests_test_edges_SOURCES = tests/test-edges.c $(test_common_sources)
tests_test_edges_CFLAGS = $(test_cflags)
tests_test_edges_LDADD = $(test_ldadd)
endif
TESTS += tests/fastpath-frame.sh
EXTRA_DIST += tests/fastpath-frame.sh
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
# tests: man
# The manual pages: lint (mandoc, groff), coverage of every exported name
# and inline helper plus the page skeleton, and the EXAMPLE programs
# compiled against the built library and run.
man_tests = tests/man-lint.sh tests/man-coverage.sh tests/man-examples.sh
TESTS += $(man_tests)
EXTRA_DIST += $(man_tests) tests/man-extract.sh
# tests: bench
# aio-bench's argument handling and output formats (never its timings).
if BUILD_TOOLS
TESTS += tests/bench-args.sh
endif
EXTRA_DIST += tests/bench-args.sh
# tests: a kernel without AIO (every io_* system call answers ENOSYS under
# a seccomp filter), and the probe the shell tests use to skip where the
# AIO system calls do not exist at all.
if HAVE_CHECK
check_PROGRAMS += tests/test-noaio
TESTS += tests/test-noaio
tests_test_noaio_SOURCES = tests/test-noaio.c $(test_common_sources)
tests_test_noaio_CFLAGS = $(test_cflags)
tests_test_noaio_LDADD = $(test_ldadd)
endif
check_PROGRAMS += tests/aio-probe
tests_aio_probe_SOURCES = tests/aio-probe.c
# noaio-exec: run a program (aio-bench, in tests/bench-args.sh) that way.
if HAVE_CHECK
check_PROGRAMS += tests/noaio-exec
tests_noaio_exec_SOURCES = tests/noaio-exec.c tests/test-common.c tests/test-common.h
tests_noaio_exec_CFLAGS = $(test_cflags)
tests_noaio_exec_LDADD = $(CHECK_LIBS)
endif
# tests: the static archive.  libaio.a defines only the public names and
# names with the reserved prefix aioreap_, and a program that defines the
# old unprefixed internal names links with it statically.
static_tests = tests/static-names.sh tests/static-link.sh
TESTS += $(static_tests)
EXTRA_DIST += $(static_tests)

# tests: the library's files call one another one way (no circle of calls
# between src/*.c), read from the objects libtool built.
TESTS += tests/src-layering.sh
EXTRA_DIST += tests/src-layering.sh
# tests: the CI driver's job runner (scripts/test-all.sh)
TESTS += tests/ci-run-job.sh
EXTRA_DIST += tests/ci-run-job.sh
