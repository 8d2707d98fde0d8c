# Tests.  Every Check program is tests/test-AREA.c + the shared runner,
# run by tests/all-modes.sh in each library mode.  Shell tests (*.sh) run
# as they are.  Each area keeps its rules in its own tests/*.mk fragment.
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

include tests/api.mk
include tests/arch.mk
include tests/reaper.mk
include tests/poll.mk
include tests/reliability.mk
include tests/features.mk
include tests/man.mk
include tests/bench.mk
include tests/noaio.mk
include tests/static.mk
# tests: the CI driver's job runner (scripts/test-all.sh)
TESTS += tests/ci-run-job.sh
EXTRA_DIST += tests/ci-run-job.sh
