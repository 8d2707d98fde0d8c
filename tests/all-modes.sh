#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs one test program in every mode the library has: natively, with each
# fallback forced through LIBAIO_DISABLE, with all of them at once, with
# io_pgetevents answering ENOSYS from a seccomp filter (a pre-4.18 kernel),
# and with async submission on for every context (LIBAIO_ASYNC=1).  A check
# that cannot hold with async on by design says why and skips itself in
# that mode only (test_mode_async()).
# LIBAIO_TEST_MODES narrows the list (e.g. "native ring").
#
# The modes run side by side, LIBAIO_TEST_MODE_JOBS at a time (default:
# all of them).  Most of a mode's time is spent asleep in the kernel, not
# on a CPU: every io_destroy waits for the kernel to retire the context
# (an RCU grace period, tens of milliseconds), and the race tests create
# and destroy hundreds of contexts.  Each mode is its own process, so the
# modes share nothing but the machine; no test has a timing threshold.
# Set LIBAIO_TEST_MODE_JOBS=1 to run them one after another.
#
# Each mode's output is kept apart and printed whole, in mode order,
# followed by "== mode M: exit N".
# Exit: 0 all passed, 77 only if every mode skipped, else the first
# failure's status, in mode order.
prog="$1"; shift
# The async mode (LIBAIO_ASYNC=1) is not in the default list: on a file
# system without non-blocking reads (the package builders' overlay and
# tmpfs roots) every request goes to a worker and test-badinput's
# bad-input rows are answered in events, not by io_submit.  The check and
# sanitizer jobs add it (scripts/test-all.sh, .ci/sanitizers.sh).
modes=${LIBAIO_TEST_MODES:-"native poll pgetevents ring poll,pgetevents,ring seccomp-pgetevents"}
jobs=${LIBAIO_TEST_MODE_JOBS:-0}
case $jobs in
''|*[!0-9]*) echo "all-modes.sh: LIBAIO_TEST_MODE_JOBS must be a number" >&2; exit 99 ;;
esac

out=$(mktemp -d "${TMPDIR:-/tmp}/all-modes.XXXXXX") || exit 99
trap 'rm -rf "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Runs in a subshell of its own (it is started with &).
run_mode() {	# index, mode, the program's arguments
	idx=$1 mode=$2
	shift 2
	case $mode in
	native) env -u LIBAIO_DISABLE -u LIBAIO_TEST_SECCOMP -u LIBAIO_ASYNC "$prog" "$@" ;;
	async) env -u LIBAIO_DISABLE -u LIBAIO_TEST_SECCOMP LIBAIO_ASYNC=1 "$prog" "$@" ;;
	seccomp-*) env -u LIBAIO_DISABLE -u LIBAIO_ASYNC LIBAIO_TEST_SECCOMP="${mode#seccomp-}" "$prog" "$@" ;;
	*) env -u LIBAIO_TEST_SECCOMP -u LIBAIO_ASYNC LIBAIO_DISABLE="$mode" "$prog" "$@" ;;
	esac >"$out/$idx.log" 2>&1
	echo $? >"$out/$idx.rc"
}

# Start the modes, at most $jobs at once (0: no limit).
i=0
running=0
for m in $modes; do
	i=$((i + 1))
	run_mode "$i" "$m" "$@" &
	running=$((running + 1))
	if [ "$jobs" -gt 0 ] && [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

rc_all=77
first_fail=
i=0
for m in $modes; do
	i=$((i + 1))
	cat "$out/$i.log"
	rc=$(cat "$out/$i.rc" 2>/dev/null) || rc=99
	echo "== mode $m: exit $rc"
	case $rc in
	0) rc_all=0 ;;
	77) ;;
	*) [ -n "$first_fail" ] || first_fail=$rc ;;
	esac
done
exit "${first_fail:-$rc_all}"
