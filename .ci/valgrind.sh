#!/bin/bash
# Valgrind job: `make check-valgrind` (AX_VALGRIND_CHECK, memcheck) over
# the Check programs, out of tree in $BUILD, twice: with the reaper and
# poll native (LIBAIO_DISABLE=pgetevents, see below), and with every
# fallback forced (LIBAIO_DISABLE=poll,pgetevents,ring).
#  - Each program runs under libtool --mode=execute valgrind
#    --error-exitcode=1 --leak-check=full, and fails on any memcheck error
#    or definite leak (flags in Makefile.am).
#  - CK_FORK=no: Check runs the tests in the one process valgrind watches
#    (valgrind follows fork too, but one process gives one report).
#  - Valgrind 3.19 does not know io_pgetevents (x86_64 syscall 333): it
#    prints "WARNING: unhandled amd64-linux syscall: 333" and answers
#    ENOSYS.  The library treats ENOSYS as a kernel without io_pgetevents
#    and uses its emulation (sigprocmask around io_getevents), so under
#    valgrind io_pgetevents is always the emulation; the raw-syscall
#    comparisons of test-badinput accept ENOSYS for it.  So the first
#    pass says so (LIBAIO_DISABLE=pgetevents), and the tests that check
#    io_features() against the mode agree.  The native io_pgetevents path
#    is covered by the plain and sanitizer jobs.
#    Valgrind also warns "unhandled io_submit opcode: 5" (IOCB_CMD_POLL):
#    it does not check poll iocbs, which have no buffers.  Both are
#    warnings, not errors, and do not change the exit code.
#  - Suppressions: tests/valgrind.supp, one entry, for the deliberate bad
#    pointers of the bad-input table only.
#  - tests/test-reaper runs in a second step, with CK_FORK=yes (below).
#  - Left out (VALGRIND_SKIP): tests/test-api, whose error cases hand
#    deliberately bad pointers straight to the system calls (memcheck
#    reports each as a "Syscall param" error); the same inputs run under
#    memcheck in tests/test-badinput, whose suppressions are limited to its
#    own table.  Its cases that would crash valgrind's own aio wrappers
#    skip themselves under RUNNING_ON_VALGRIND.
# The suite runs sequentially here.
set -euo pipefail
# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-/tmp/build-vg}
export LIBAIO_SOAK_SECONDS=${LIBAIO_SOAK_SECONDS:-5}
command -v valgrind >/dev/null || { echo "valgrind: not installed"; exit 77; }
ci_build "$BUILD" --enable-valgrind CFLAGS="-g -O1"
progs=$(ci_check_programs)
# shellcheck disable=SC2086
ci_make $progs
for s in ${VALGRIND_SKIP-tests/test-api tests/test-reaper}; do
	progs=$(echo " $progs " | sed "s| $s | |")
done
rc=0
for mode in pgetevents poll,pgetevents,ring; do
	echo "=== memcheck, mode $mode: $progs"
	export LIBAIO_DISABLE=$mode
	if ! CK_FORK=no make check-valgrind TESTS="$progs" >"vg-$mode.log" 2>&1; then
		rc=1
		grep -E '^(FAIL|ERROR)' "vg-$mode.log" || true
	fi
	grep -E '^# (TOTAL|PASS|FAIL|ERROR)' "vg-$mode.log" || true
	# Keep each mode's per-test logs.
	mkdir -p "logs-$mode"
	cp tests/*.log "logs-$mode/" 2>/dev/null || true
	grep -h -E 'ERROR SUMMARY|definitely lost' tests/*.log | sort | uniq -c
	if [ $rc != 0 ]; then
		grep -l -E 'ERROR SUMMARY: [1-9]|impossible' tests/*.log | head -3 |
			xargs -r grep -A30 -m1 -E '(Invalid|uninitialised|definitely|Syscall param|Mismatched|impossible)' | head -120 || true
		break
	fi
done
# test-reaper with Check forking each test (valgrind follows the fork):
# its mremap case leaves a registry entry behind that a later test in the
# same process would inherit, which CK_FORK=no would share.  A smaller
# stress count keeps it to a minute under memcheck.
if [ $rc = 0 ]; then
	for mode in pgetevents poll,pgetevents,ring; do
		echo "=== memcheck, forked, mode $mode: tests/test-reaper"
		if ! LIBAIO_DISABLE=$mode CK_FORK=yes LIBAIO_STRESS_N=20000 \
			make check-valgrind TESTS=tests/test-reaper >"vg-reaper-$mode.log" 2>&1; then
			rc=1
			grep -A30 -m1 -E '(Invalid|uninitialised|definitely|Syscall param|impossible|F:)' \
				tests/test-reaper.log | head -60 || true
			break
		fi
		grep -h -E 'Checks:|ERROR SUMMARY: [1-9]' tests/test-reaper.log | sort | uniq -c
	done
fi
unset LIBAIO_DISABLE
[ $rc = 0 ] || exit 1
# shellcheck disable=SC2046
ci_counts valgrind $(ci_suite_counts vg-*.log) "(memcheck)"
