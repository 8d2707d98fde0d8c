#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/test-all.sh's run_job: a job that fails, or leaves the shell in
# another directory, does not change where the next job starts; set -e
# holds inside a job; exit 77 counts as skipped; a job's "tests run" line
# reaches the summary, without the job's own name in front.  And
# .ci/lib.sh's ci_part, the same inside a job for its parts: set -e holds,
# a cd stays in the part, ci_note and ci_tally come back and are summed.
set -euo pipefail
: "${top_srcdir:=.}"
script=$top_srcdir/scripts/test-all.sh
[ -f "$script" ] || { echo "SKIP: no $script"; exit 77; }
top=$(mktemp -d "${TMPDIR:-/tmp}/run-job.XXXXXX")
# shellcheck disable=SC2034 # read by the run_job taken from test-all.sh
joblog=$top/log
trap 'rm -rf "$top"' EXIT
results=() failed=0 skipped=0
eval "$(sed -n '/^run_job() {/,/^}/p' "$script")"
[ "$(type -t run_job)" = function ] || { echo "FAIL: run_job not found in $script"; exit 1; }
leaves_and_fails() { mkdir -p sub; cd sub; false; echo "set -e did not hold"; }
where() { pwd >"$top/where"; echo "probe: 3 tests run, 1 skipped"; }
skips() { exit 77; }
named() { echo "fourth: 2 tests run, 0 skipped, 0 failed"; }
run_job first leaves_and_fails >/dev/null
run_job second where >/dev/null
run_job third skips >/dev/null
run_job fourth named >/dev/null
fail() { echo "FAIL: $*"; printf '  %s\n' "${results[@]}"; exit 1; }
[ "$(cat "$top/where")" = "$top" ] || fail "the second job started in $(cat "$top/where")"
case ${results[0]} in "first: FAILED (1)"*) ;; *) fail "first: ${results[0]}" ;; esac
case ${results[1]} in "second: passed"*"(probe: 3 tests run, 1 skipped)") ;; *) fail "second: ${results[1]}" ;; esac
case ${results[2]} in "third: skipped"*) ;; *) fail "third: ${results[2]}" ;; esac
case ${results[3]} in "fourth: passed in "*" s (2 tests run, 0 skipped, 0 failed)") ;; *) fail "fourth: ${results[3]}" ;; esac
[ "$failed/$skipped" = 1/1 ] || fail "counted $failed failed, $skipped skipped"
echo "PASS: run_job isolates jobs and counts skips"

# shellcheck source=.ci/lib.sh
. "$top_srcdir/.ci/lib.sh"
here=$PWD
part_fails() { cd /; ci_note='got this far'; false; ci_note='set -e did not hold'; }
part_counts() { ci_tally='3 1 0'; ci_note='three run'; }
ci_part one part_fails >/dev/null
ci_part two part_counts >/dev/null
[ "$PWD" = "$here" ] || fail "a part left the job in $PWD"
case ${ci_results[0]} in "one: FAILED in "*" s: got this far") ;; *) fail "part one: ${ci_results[0]}" ;; esac
case ${ci_results[1]} in "two: passed in "*" s: three run") ;; *) fail "part two: ${ci_results[1]}" ;; esac
[ "$ci_failed/$ci_totals" = "1/3 1 0" ] || fail "parts: $ci_failed failed, totals $ci_totals"
# shellcheck disable=SC2086 # RAN SKIPPED FAILED
! ci_parts_done job $ci_totals >/dev/null || fail "ci_parts_done passed with a failed part"
echo "PASS: ci_part isolates parts, keeps set -e and sums their tallies"
