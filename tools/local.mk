# SPDX-License-Identifier: LGPL-2.1-or-later
# aio-bench: the feature report and side-by-side benchmarks (man/aio-bench.1).
bin_PROGRAMS += aio-bench
aio_bench_SOURCES = \
	tools/aio-bench.c \
	tools/bench-backend.c \
	tools/bench-buffered.c \
	tools/bench-file.c \
	tools/bench-grid.c \
	tools/bench-loop.c \
	tools/bench-reap.c \
	tools/bench-report.c \
	tools/bench-stats.c \
	tools/bench-stats.h \
	tools/bench-targets.c \
	tools/bench-threads.c \
	tools/bench-util.c \
	tools/bench-util.h \
	# EOL
aio_bench_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
aio_bench_LDADD = libaio.la -ldl -lm $(PTHREAD_LIBS)
if HAVE_LIBURING
aio_bench_CFLAGS += $(LIBURING_CFLAGS)
aio_bench_LDADD += $(LIBURING_LIBS)
endif

EXTRA_DIST += bench/fio-compare.sh bench/qemu-io-compare.sh \
	bench/compare-lib.sh

# aio-race: completions counted while another reaper works around the
# library (bench/race.c); not installed.
noinst_PROGRAMS += aio-race
aio_race_SOURCES = bench/race.c
aio_race_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
aio_race_LDADD = libaio.la -ldl $(PTHREAD_LIBS)

# make bench: a longer aio-bench run (with the loop device when root, and
# the project's targets), then
# fio and qemu-io with each library, then aio-race with each way of
# reaping.  BENCH_ARGS adds or overrides aio-bench options.
BENCH_ARGS =
bench: aio-bench$(EXEEXT) aio-race$(EXEEXT) libaio.la
	$(builddir)/aio-bench --time 0.3 --reps 7 --procs 1,2 --loop --targets \
	  $(BENCH_ARGS)
	$(SHELL) $(srcdir)/bench/fio-compare.sh $(abs_builddir)
	$(SHELL) $(srcdir)/bench/qemu-io-compare.sh $(abs_builddir)
	for reap in getevents reap queue-run; do \
	  for around in syscall dlmopen; do \
	    for work in read poll; do \
	      $(builddir)/aio-race 1000000 $$reap $$around $$work || exit 1; \
	    done; \
	  done; \
	done
.PHONY: bench
