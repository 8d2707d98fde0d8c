#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Valgrind job: `make check-valgrind` (AX_VALGRIND_CHECK, memcheck: any
# error or definite leak fails, flags in Makefile.am) over the Check
# programs' .mode tests, out of tree in $BUILD, sequentially, in two
# modes: the reaper and poll native (pgetevents: LIBAIO_DISABLE=pgetevents),
# and every fallback forced (all).
#  - CK_FORK=no: Check runs the tests in the one process valgrind watches
#    (valgrind follows fork too, but one process gives one report).
#  - Valgrind 3.19 does not know io_pgetevents (x86_64 syscall 333): it
#    warns and answers ENOSYS, which the library takes for a kernel
#    without io_pgetevents, so under valgrind io_pgetevents is always the
#    emulation; the first mode says so, for the tests that check
#    io_features() against the mode, and test-badinput's raw-syscall
#    comparisons accept ENOSYS for it.  The plain and sanitizer jobs cover
#    the native path.  Valgrind also warns "unhandled io_submit opcode: 5"
#    (IOCB_CMD_POLL: poll iocbs have no buffers to check).  Warnings do not
#    change the exit code.
#  - tests/valgrind.supp: one entry, for the bad-input table's deliberate
#    bad pointers only.
#  - Left out (VALGRIND_SKIP): tests/test-api, whose error cases hand bad
#    pointers straight to the system calls (each a "Syscall param" error);
#    the same inputs run in tests/test-badinput, whose cases that would
#    crash valgrind's own aio wrappers skip themselves under
#    RUNNING_ON_VALGRIND.  tests/test-reaper runs in a second step.
#    tests/test-async: up to 32 worker threads blocked in the kernel,
#    which valgrind's one-thread-at-a-time scheduler serves so slowly
#    that one run did not end in 19 minutes; its memory checking is the
#    ASan and ThreadSanitizer jobs'.
set -euo pipefail
# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-$ci_scratch/build-vg}
export LIBAIO_SOAK_SECONDS=${LIBAIO_SOAK_SECONDS:-5}
modes="pgetevents all"
command -v valgrind >/dev/null || { echo "valgrind: not installed"; exit 77; }
ci_build "$BUILD" --enable-valgrind CFLAGS="-g -O1"
progs=$(ci_check_programs)
# shellcheck disable=SC2086
ci_make $progs
for s in ${VALGRIND_SKIP-tests/test-api tests/test-reaper tests/test-async}; do
	progs=$(echo " $progs " | sed "s| $s | |")
done
for mode in $modes; do
	echo "=== memcheck, mode $mode: $progs"
	rc=0
	# The names themselves: AX_VALGRIND_CHECK's rule tests whether TESTS
	# is empty before tests/modes.mk is read.
	# shellcheck disable=SC2086 # the programs, split on purpose
	CK_FORK=no make check-valgrind TESTS="$(printf '%s.'"$mode"'.mode ' $progs)" \
		>"vg-$mode.log" 2>&1 || rc=1
	[ $rc = 0 ] || grep -E '^(FAIL|ERROR)' "vg-$mode.log" || true
	grep -E '^# (TOTAL|PASS|FAIL|ERROR)' "vg-$mode.log" || true
	# Keep each mode's per-test logs.
	mkdir -p "logs-$mode"
	cp tests/*.log "logs-$mode/" 2>/dev/null || true
	grep -h -E 'ERROR SUMMARY|definitely lost' tests/*.log | sort | uniq -c
	[ $rc = 0 ] || {
		grep -l -E 'ERROR SUMMARY: [1-9]|impossible' tests/*.log | head -3 |
			xargs -r grep -A30 -m1 -E '(Invalid|uninitialised|definitely|Syscall param|Mismatched|impossible)' | head -120 || true
		exit 1
	}
done
# test-reaper with Check forking each test (valgrind follows the fork):
# its mremap case leaves a registry entry behind that a later test in the
# same process would inherit, which CK_FORK=no would share.  A smaller
# stress count keeps it to a minute under memcheck.
for mode in $modes; do
	echo "=== memcheck, forked, mode $mode: tests/test-reaper"
	CK_FORK=yes LIBAIO_STRESS_N=20000 make check-valgrind TESTS="tests/test-reaper.$mode.mode" \
		>"vg-reaper-$mode.log" 2>&1 || {
		grep -A30 -m1 -E '(Invalid|uninitialised|definitely|Syscall param|impossible|^not ok)' \
			"tests/test-reaper.$mode.log" | head -60 || true
		exit 1
	}
	grep -h -E 'Checks:|ERROR SUMMARY: [1-9]' "tests/test-reaper.$mode.log" | sort | uniq -c
done
# shellcheck disable=SC2046
ci_counts valgrind $(ci_suite_counts vg-*.log) "(memcheck)"
