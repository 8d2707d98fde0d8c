#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Sanitizer job, out of tree, with clang (CC=gcc works too):
#  asan  ASan+UBSan, `make check` of every Check program (each in the seven
#        library modes: the .mode tests of tests/local.mk) in $ASAN_BUILD;
#  tsan  ThreadSanitizer on the threaded tests, every mode, in $TSAN_BUILD.
# SAN_JOBS="asan" or "tsan" runs one half.  The library is built shared,
# as shipped: the test programs' .libs/lt-* are instrumented and linked to
# the instrumented libaio.so, so no LD_PRELOAD of a runtime is needed.
# UBSan is fatal (-fno-sanitize-recover), so that a report fails the test
# that triggered it; LeakSanitizer is on.
set -euo pipefail
# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/lib.sh"
CC=${CC:-clang}
ASAN_BUILD=${ASAN_BUILD:-$ci_scratch/build-asan}
TSAN_BUILD=${TSAN_BUILD:-$ci_scratch/build-tsan}
SAN_JOBS=${SAN_JOBS:-"asan tsan"}
export LIBAIO_SOAK_SECONDS=${LIBAIO_SOAK_SECONDS:-5}
ran=0 skipped=0 failed=0
# The six library modes and async submission's (tests/local.mk).
all_modes="native poll pgetevents ring all seccomp-pgetevents async"

build() {	# dir, flags
	ci_build "$1" CC="$CC" CFLAGS="$2" LDFLAGS="$2" --disable-valgrind
}

job_asan() {
	local f="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
	echo "=== ASan+UBSan: make check ($CC)"
	build "$ASAN_BUILD" "$f"
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	# Every Check program (each in all seven modes).  The shell tests are
	# left out: they link uninstrumented programs against the library
	# (abi-*, man-examples: undefined __asan_* symbols), list its imports
	# (abi-symbols: the sanitizer runtime's), or run valgrind or strace
	# on it (reaper-valgrind, poll-strace); they run in the plain job.
	echo "programs: $(ci_check_programs)"
	# shellcheck disable=SC2016 # expanded by make
	make -j"$ci_test_jobs" check TESTS='$(mode_tests)' TEST_MODES="$all_modes" >check.log 2>&1 ||
		{ grep -E '^(FAIL|ERROR|XPASS)' check.log; ci_failed_logs; return 1; }
	grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' check.log
	# A report in a test that passed anyway fails the job too.
	if grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' tests/*.log; then return 1; fi
	read -r ran skipped failed <<<"$(ci_suite_counts check.log)"
}

job_tsan() {
	echo "=== TSan: threaded tests ($CC)"
	build "$TSAN_BUILD" "-fsanitize=thread -g -O1"
	# The kernel writes the ring and the read buffers; TSan cannot see those
	# writes, and that alone produces no false report (nothing it sees
	# conflicts).  The suppression file is for genuinely invisible
	# orderings only; see .ci/tsan.supp for what is in it and why.
	export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$src/.ci/tsan.supp"
	local progs="tests/test-reaper tests/test-soak tests/test-edges tests/test-poll tests/test-async"
	local rc=0 r s f
	# shellcheck disable=SC2086 # the programs, split on purpose
	ci_make $progs
	echo "programs: $progs"
	# check-TESTS: these programs' .mode tests only; check_PROGRAMS, on
	# which it depends, narrowed to them too.
	# shellcheck disable=SC2016 # expanded by make
	make -j"$ci_test_jobs" check-TESTS TESTS='$(mode_tests)' mode_programs="$progs" \
		check_PROGRAMS="$progs" \
		TEST_MODES="$all_modes" >check.log 2>&1 || rc=1
	grep -E '^(FAIL|ERROR|XPASS)|^# (TOTAL|PASS|SKIP|FAIL|ERROR)|soak:' check.log || true
	if grep -l 'WARNING: ThreadSanitizer' tests/*.log; then
		grep -h -A30 'WARNING: ThreadSanitizer' tests/*.log | head -60
		rc=1
	fi
	read -r r s f <<<"$(ci_suite_counts check.log)"
	ran=$((ran + r)) skipped=$((skipped + s)) failed=$((failed + f))
	return $rc
}

for j in $SAN_JOBS; do
	"job_$j"
done
ci_counts sanitizers "$ran" "$skipped" "$failed" "($SAN_JOBS)"
