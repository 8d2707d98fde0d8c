#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's second command, and what CI runs (.ci/run): install what is
# missing, then run each test job from a clean build directory.  The jobs
# (README.md says what each checks): check distcheck sanitizers valgrind
# fuzz buildd cross kernels rpm; JOBS="..." picks any set, JOBS=all adds
# deb (buildd already runs it on its own packages) and m32 (skipped where
# this kernel runs no i386 binaries).  The host's libaio packages must
# have byte-identical files before and after the run, or the run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
sh scripts/install-deps.sh
autoreconf -fi >/dev/null 2>&1

default_jobs="check distcheck sanitizers valgrind fuzz buildd cross kernels rpm"
JOBS=${JOBS:-$default_jobs}
[ "$JOBS" != all ] || JOBS="$default_jobs deb m32"
# shellcheck source=.ci/lib.sh
. .ci/lib.sh
host_before=$(ci_host_libaio_sums)
export LIBAIO_SOAK_SECONDS=${LIBAIO_SOAK_SECONDS:-5}
results=() failed=0 skipped=0
# One scratch directory per run for the jobs' build directories
# (.ci/lib.sh's ci_scratch): two runs at once, from two clones, share
# none.  Removed when the run passes (never across a mount left behind);
# kept, and named, when it fails.
AIOREAP_CI_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-run.XXXXXX")
export AIOREAP_CI_SCRATCH
joblog=$AIOREAP_CI_SCRATCH/job.log
trap 'echo "=== scratch directory kept: $AIOREAP_CI_SCRATCH"' EXIT

# Each job runs in its own subshell, from the top directory, with set -e in
# force: a job that fails (or leaves the shell in a build directory) cannot
# change where the next one starts.  The subshell is not the left side of
# || or &&, because bash would then switch set -e off inside it.  A job
# exits 77 when what it exists for could not run here: it is counted as
# skipped, not passed.  A job's last line with "tests run" goes into the
# summary, without the job's name in front (.ci/lib.sh's ci_counts).
run_job() {
	local name=$1; shift
	local t0=$SECONDS rc status counts
	echo "=== job $name: $*"
	set +e
	(set -e; cd "$top"; "$@") 2>&1 | tee "$joblog"
	rc=${PIPESTATUS[0]}
	set -e
	case $rc in
	0) status=passed ;;
	77) status=skipped; skipped=$((skipped + 1)) ;;
	*) status="FAILED ($rc)"; failed=$((failed + 1)) ;;
	esac
	counts=$(grep -E '[0-9]+ tests run' "$joblog" | tail -n 1 || true)
	counts=${counts#"$name: "}
	results+=("$name: $status in $((SECONDS - t0)) s${counts:+ ($counts)}")
}

job_check() {
	ci_build "$top/build-ci" --enable-werror
	# The six modes and async submission's (tests/local.mk's TEST_MODES).
	make -j"$ci_test_jobs" check \
		TEST_MODES="native poll pgetevents ring all seccomp-pgetevents async" ||
		{ ci_failed_logs; return 1; }
	# shellcheck disable=SC2046
	ci_counts check $(ci_suite_counts test-suite.log)
}

job_distcheck() {
	[ -f "$top/build-ci/Makefile" ] || ci_configure "$top/build-ci"
	cd "$top/build-ci"
	LIBAIO_SOAK_SECONDS=2 make -j"$ci_test_jobs" distcheck TEST_MODES="native poll" \
		DISTCHECK_CONFIGURE_FLAGS=--enable-werror >"$AIOREAP_CI_SCRATCH/distcheck.log" 2>&1 ||
		{ tail -100 "$AIOREAP_CI_SCRATCH/distcheck.log"; return 1; }
	grep -A1 'archives ready' "$AIOREAP_CI_SCRATCH/distcheck.log"
}

# The tarball of the build-ci tree (job check), or of a fresh configure
# when that job did not run, through rpmbuild with %check (the whole test
# suite, as a Fedora builder runs it) on.
job_rpm() {
	local from=()
	[ ! -f "$top/build-ci/Makefile" ] || from=("$top/build-ci")
	ci_need rpm rpmlint
	LIBAIO_RPM_CHECK=1 bash packaging/build-rpm.sh ${from[@]+"${from[@]}"}
}

for j in $JOBS; do
	case $j in
	check | distcheck | rpm) run_job "$j" "job_$j" ;;
	m32 | sanitizers | valgrind | fuzz | deb | buildd | cross | kernels) run_job "$j" bash ".ci/$j.sh" ;;
	*) echo "unknown job $j"; exit 2 ;;
	esac
done

# Nothing may have changed the host's own libaio files.
host_check() {
	local after
	after=$(ci_host_libaio_sums)
	echo "$host_before" | grep -c . | sed 's/^/host libaio files and links checked: /'
	[ "$after" = "$host_before" ] || { diff <(echo "$host_before") <(echo "$after"); return 1; }
}
run_job host-libaio-unchanged host_check

echo "=== summary"
printf '%s\n' "${results[@]}"
total=${#results[@]}
echo "$((total - failed - skipped)) passed, $skipped skipped, $failed failed"
[ $failed = 0 ]
trap - EXIT
rm -rf --one-file-system "$AIOREAP_CI_SCRATCH"
