#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The log compiler of the .mode tests: tests/test-AREA.MODE.mode is the
# Check program tests/test-AREA run in the library mode MODE, its result
# read by automake's tap-driver.sh (Check writes TAP to standard output).
#   native               nothing forced
#   poll, pgetevents, ring
#                        that fallback forced (LIBAIO_DISABLE)
#   all                  every fallback at once (LIBAIO_DISABLE=poll,pgetevents,ring)
#   seccomp-pgetevents   io_pgetevents answers ENOSYS from a seccomp filter
#                        (a kernel before 4.18)
#   async                async submission on for every context (LIBAIO_ASYNC=1)
# The program is $top_builddir/tests/test-AREA (make check exports
# top_builddir), else test-AREA beside the .mode name (the kernels job's
# guest).  The .mode name is the last argument; words before it wrap the
# program (make check-valgrind's valgrind: MODE_LOG_COMPILER passes
# LOG_COMPILER on), and so would MODE_LOG_FLAGS' words.
#
# A case that cannot hold in this mode or on this machine says so with a
# line "aioreap-skip: REASON" (test_skip()) before its result line, whose
# "ok" becomes "ok N - ... # SKIP REASON": the driver counts a skip, not a
# pass.  A program that cannot run at all prints the plan "1..0 # SKIP
# REASON" and exits 77, which is a skip here, not an error.

# The wrapper's words are appended after all the arguments, which are
# then shifted away: what is left is the wrapper.
argc=$# n=$#
for a; do
	if [ "$n" -eq 1 ]; then test=$a; else set -- "$@" "$a"; fi
	n=$((n - 1))
done
shift "$argc"
name=${test##*/}
name=${name%.mode}
mode=${name##*.}
name=${name%.*}
dir=${test%/*}
[ "$dir" != "$test" ] || dir=.
[ -z "${top_builddir:-}" ] || dir=$top_builddir/tests
prog=$dir/$name

unset LIBAIO_DISABLE LIBAIO_TEST_SECCOMP LIBAIO_ASYNC
case $mode in
native) ;;
poll|pgetevents|ring) LIBAIO_DISABLE=$mode; export LIBAIO_DISABLE ;;
all) LIBAIO_DISABLE=poll,pgetevents,ring; export LIBAIO_DISABLE ;;
seccomp-*) LIBAIO_TEST_SECCOMP=${mode#seccomp-}; export LIBAIO_TEST_SECCOMP ;;
async) LIBAIO_ASYNC=1; export LIBAIO_ASYNC ;;
*) echo "run-mode.sh: unknown mode '$mode' in $test" >&2; exit 99 ;;
esac
CK_TAP_LOG_FILE_NAME=-
export CK_TAP_LOG_FILE_NAME

out=$(mktemp "${TMPDIR:-/tmp}/run-mode.XXXXXX") || exit 99
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$@" "$prog" >"$out" 2>&1
rc=$?
[ "$rc" != 77 ] || grep -q '^1\.\.0 # SKIP' "$out" || rc=99
[ "$rc" != 77 ] || rc=0
# A program whose cases failed exits 1: its "not ok" lines count them
# already, once each, when the plan is there too.  (A wrapper's own
# exit 1 beside them, valgrind's, is not counted again; its report stays
# in the log.)
[ "$rc" != 1 ] || ! grep -q '^not ok ' "$out" || ! grep -q '^1\.\.[0-9]' "$out" || rc=0
# Check's result lines are "ok N - FILE:TCASE:TEST: Passed" and "not ok N
# - FILE:TCASE:TEST: MESSAGE": a skip line holds for the next of them (a
# failure stays one).  A "#" in a failure's message becomes "%": "# TODO"
# there would make the driver count an expected failure.
awk '
	/^aioreap-skip: / { skip = 1; why = substr($0, 15); print; next }
	/^ok [0-9]+ - / && skip {
		sub(/: Passed$/, "")
		print $0 " # SKIP " why
		skip = 0; next
	}
	/^not ok / { skip = 0; gsub(/#/, "%") }
	{ print }
	END {
		if (skip) { print "Bail out! a skip line after the last result: " why; exit 1 }
	}' "$out" || rc=99
exit "$rc"
