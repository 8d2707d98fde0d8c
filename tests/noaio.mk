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
