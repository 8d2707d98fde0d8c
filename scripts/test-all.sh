#!/bin/bash
# The README's second command, and what CI runs (.ci/run): install what is
# missing, then build and run every test job from a clean build directory.
# Jobs: the suite in all six library modes, distcheck, the -m32 build,
# ASan+UBSan, TSan, valgrind memcheck, a short fuzz run, the .deb build and
# install test, the RPM build and its content checks.  JOBS="check
# distcheck ..." runs a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
sh scripts/install-deps.sh --with-i386
autoreconf -fi >/dev/null 2>&1

JOBS=${JOBS:-"check distcheck m32 sanitizers valgrind fuzz deb rpm"}
export LIBAIO_SOAK_SECONDS=${LIBAIO_SOAK_SECONDS:-5}
results=()
failed=0

run_job() {
	local name=$1; shift
	local t0=$SECONDS rc=0
	echo "=== job $name: $*"
	"$@" || rc=$?
	results+=("$name: $([ $rc = 0 ] && echo passed || echo "FAILED ($rc)") in $((SECONDS - t0)) s")
	[ $rc = 0 ] || failed=$((failed + 1))
}

job_check() {
	rm -rf "$top/build-ci" && mkdir "$top/build-ci" && cd "$top/build-ci"
	"$top/configure" --enable-werror --quiet
	make -j2 --quiet
	make -j2 check || { cat tests/*.log | tail -200; return 1; }
	cd "$top"
}

job_distcheck() {
	cd "$top/build-ci"
	LIBAIO_TEST_MODES="native poll" LIBAIO_SOAK_SECONDS=2 \
		make -j2 distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror >/tmp/distcheck.log 2>&1 ||
		{ tail -100 /tmp/distcheck.log; return 1; }
	grep -A1 'archives ready' /tmp/distcheck.log
	cd "$top"
}

# The tarball of the build-ci tree (job check) through rpmbuild, or of a
# fresh configure when that job did not run.
job_rpm() {
	if [ -f "$top/build-ci/Makefile" ]; then
		bash packaging/build-rpm.sh "$top/build-ci"
	else
		bash packaging/build-rpm.sh
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
	rpm) run_job rpm job_rpm ;;
	*) echo "unknown job $j"; exit 2 ;;
	esac
done

echo "=== summary"
printf '%s\n' "${results[@]}"
total=${#results[@]}
echo "$((total - failed)) passed, $failed failed"
[ $failed = 0 ]
