#!/bin/bash
# The README's second command, and what CI runs (.ci/run): install what is
# missing, then build and run every test job from a clean build directory.
# Jobs (JOBS="..." picks any set):
#   check, distcheck, sanitizers (ASan+UBSan, TSan), valgrind, fuzz
#   buildd  the .deb built with the tests on in a fresh minimal Debian 12
#           root (mmdebstrap --variant=buildd, /tmp on tmpfs), then the
#           deb job's install tests (fio, qemu-io, t64 relations) on what
#           it built, in throw-away roots, never on this machine
#   cross   the riscv64 cross build (no Debian 12 kernel to boot) and the
#           Debian 13 flavour for armhf with _TIME_BITS=64, --enable-werror,
#           the layout test against each <linux/aio_abi.h>
#   kernels the Check suite, natively and with LIBAIO_DISABLE=all, on
#           Debian 12's own kernels for i386 (the 32-bit suite, time64
#           entry points included), arm64, armhf (built with
#           _TIME_BITS=64), ppc64el (64 KiB pages) and s390x (big endian),
#           under qemu-system with two emulated CPUs; fails on any skip,
#           failure or unexpected kernel (.ci/kernels.sh)
#   rpm     the RPM build with %check, its content checks and rpmlint
# Not in the default set:
#   deb     the deb job alone, on packages built on the host (buildd
#           already runs it on its own packages)
#   m32     the i386 build with gcc -m32: its make check runs only where
#           this kernel runs i386 binaries, otherwise the job reports itself
#           skipped (kernels runs the 32-bit suite on an i386 kernel)
# The host's libaio packages (libaio1, libaio1:i386, libaio-dev) must have
# byte-identical files before and after the run, or the run fails.
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
results=()
failed=0
skipped=0
joblog=$(mktemp)
trap 'rm -f "$joblog"' EXIT

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
	make -j"$ci_jobs" check || { ci_failed_logs; return 1; }
	# shellcheck disable=SC2046
	ci_counts check $(ci_suite_counts test-suite.log)
}

job_distcheck() {
	if [ ! -f "$top/build-ci/Makefile" ]; then
		rm -rf "$top/build-ci" && mkdir "$top/build-ci"
		(cd "$top/build-ci" && "$top/configure" --quiet)
	fi
	cd "$top/build-ci"
	LIBAIO_TEST_MODES="native poll" LIBAIO_SOAK_SECONDS=2 \
		make -j"$ci_jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror >/tmp/distcheck.log 2>&1 ||
		{ tail -100 /tmp/distcheck.log; return 1; }
	grep -A1 'archives ready' /tmp/distcheck.log
}

# The tarball of the build-ci tree (job check) through rpmbuild, or of a
# fresh configure when that job did not run.
# %check (the whole test suite, as a Fedora builder runs it) is on.
job_rpm() {
	ci_need rpm rpmlint
	if [ -f "$top/build-ci/Makefile" ]; then
		LIBAIO_RPM_CHECK=1 bash packaging/build-rpm.sh "$top/build-ci"
	else
		LIBAIO_RPM_CHECK=1 bash packaging/build-rpm.sh
	fi
}

for j in $JOBS; do
	case $j in
	check) run_job check job_check ;;
	distcheck) run_job distcheck job_distcheck ;;
	m32) run_job m32 bash .ci/m32.sh ;;
	sanitizers) run_job sanitizers bash .ci/sanitizers.sh ;;
	valgrind) run_job valgrind bash .ci/valgrind.sh ;;
	fuzz) run_job fuzz bash .ci/fuzz.sh ;;
	deb) run_job deb bash .ci/deb.sh ;;
	buildd) run_job buildd bash .ci/buildd.sh ;;
	cross) run_job cross bash .ci/cross.sh ;;
	kernels) run_job kernels bash .ci/kernels.sh ;;
	rpm) run_job rpm job_rpm ;;
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
