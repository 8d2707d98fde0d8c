#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "qemu": cross-build the whole project with the test suite for
# arm64 and s390x (big endian) and run `make check` under qemu-user
# (Debian's qemu-user-static, through binfmt_misc).  qemu-user does not
# pass the AIO system calls on to the kernel (io_setup answers ENOSYS), so
# the tests that need AIO skip with that reason (tests/test-main.c,
# tests/aio-probe); the rest (layout, header, man pages, and
# tests/test-noaio, which is about exactly that situation) must pass.
#
#   .ci/qemu-user.sh [ARCH...]      (default: arm64 s390x)
#
# The target's Check library (check, libsubunit-dev and their runtime
# dependencies for ARCH) comes from a cached `mmdebstrap --variant=extract
# --architectures=ARCH` tarball (.ci/chroot-lib.sh), used as qemu's
# library prefix (QEMU_LD_PREFIX).  binfmt_misc is mounted and the
# qemu-ARCH entries of /usr/lib/binfmt.d registered if they are not yet
# (what installing qemu-user-static does on a host running systemd).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
[ "$(id -u)" = 0 ] || { echo "qemu-user.sh: must run as root (binfmt_misc)"; exit 1; }
# shellcheck source=.ci/chroot-lib.sh
. .ci/chroot-lib.sh
archs=${*:-"arm64 s390x"}
base=${BUILD_BASE:-${TMPDIR:-/tmp}/aioreap-qemu}
jobs=$(nproc 2>/dev/null || echo 2)

need=(qemu-user-static mmdebstrap)
for a in $archs; do need+=("crossbuild-essential-$a"); done
ci_need "${need[@]}"
[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)

binfmt=/proc/sys/fs/binfmt_misc
[ -e $binfmt/register ] || mount -t binfmt_misc binfmt_misc $binfmt

failed=0
results=()
counts=$(mktemp)
trap 'rm -f "$counts"' EXIT
for a in $archs; do
	case $a in
	arm64) t=aarch64-linux-gnu q=aarch64 ;;
	s390x) t=s390x-linux-gnu q=s390x ;;
	armhf) t=arm-linux-gnueabihf q=arm ;;
	ppc64el) t=powerpc64le-linux-gnu q=ppc64le ;;
	*) echo "qemu-user.sh: no recipe for $a"; exit 2 ;;
	esac
	t0=$SECONDS
	echo "=== $a ($t) under qemu-$q"
	if [ ! -e "$binfmt/qemu-$q" ]; then
		grep '^:' "/usr/lib/binfmt.d/qemu-$q.conf" > "$binfmt/register"
		echo "  registered binfmt qemu-$q"
	fi
	tar=$(ci_tarball "sysroot-$a" --variant=extract --architectures="$a" \
		--include=check,libsubunit-dev,libsubunit0,libc6,libgcc-s1)
	sysroot=$base/sysroot-$a
	ci_unpack "$tar" "$sysroot"
	inc=$base/checkinc-$a
	rm -rf "$inc" && mkdir -p "$inc"
	cp "$sysroot/usr/include/check.h" "$sysroot/usr/include/check_stdint.h" "$inc/" 2>/dev/null ||
		cp "$sysroot"/usr/include/"$t"/check_stdint.h "$sysroot/usr/include/check.h" "$inc/"
	b=$base/build-$a
	rm -rf "$b" && mkdir -p "$b"
	rc=0
	(
		cd "$b"
		export QEMU_LD_PREFIX=$sysroot
		"$src/configure" --quiet --build="$(gcc -dumpmachine)" --host="$t" \
			--enable-werror PKG_CONFIG_LIBDIR=/nonexistent \
			CHECK_CFLAGS="-I$inc -pthread" \
			CHECK_LIBS="-L$sysroot/usr/lib/$t -lcheck_pic -lsubunit -lrt -lm" \
			LDFLAGS="-Wl,-rpath-link,$sysroot/usr/lib/$t -Wl,-rpath-link,$sysroot/lib/$t" \
			>configure.log 2>&1 || { tail -30 configure.log; exit 1; }
		grep -q 'S\["HAVE_CHECK_TRUE"\]=""' config.status ||
			{ echo "Check not usable for $a"; exit 1; }
		make -j"$jobs" --quiet >make.log 2>&1 || { tail -40 make.log; exit 1; }
		make --quiet tests/aio-probe >>make.log 2>&1
		echo "  library: $(file -b .libs/libaio.so.1.1.0 | cut -d, -f1-2)"
		echo "  probe under qemu-$q: $(tests/aio-probe 2>&1; echo "exit $?")"
		mrc=0
		LIBAIO_SOAK_SECONDS=${LIBAIO_SOAK_SECONDS:-2} make -j"$jobs" check >check.log 2>&1 || mrc=$?
		sed -n '/^# TOTAL/,/^# ERROR/p' check.log | sed 's/^/  /'
		sed -n 's/^# \(TOTAL\|SKIP\): *\([0-9]*\)$/\1 \2/p' check.log >>"$counts"
		echo "  skipped, and why:"
		for trs in tests/*.trs; do
			grep -q ':test-result: SKIP' "$trs" || continue
			log=${trs%.trs}.log
			echo "    $(basename "${trs%.trs}"): $(grep -m1 '^SKIP' "$log" || echo '(no reason printed)')"
		done
		if [ $mrc != 0 ]; then
			for trs in tests/*.trs; do
				grep -q ':test-result: \(FAIL\|ERROR\)' "$trs" || continue
				echo "==== ${trs%.trs}.log"
				tail -n 40 "${trs%.trs}.log"
			done
			exit 1
		fi
	) || rc=$?
	results+=("$a: $([ $rc = 0 ] && echo passed || echo FAILED) in $((SECONDS - t0)) s")
	[ $rc = 0 ] || failed=$((failed + 1))
done
echo "=== qemu-user summary"
printf '  %s\n' "${results[@]}"
[ $failed = 0 ] || exit 1
# Under qemu-user every AIO system call answers ENOSYS, so the tests that
# enter the kernel skip: the job then reports itself skipped.
total=$(awk '$1 == "TOTAL" { n += $2 } END { print n + 0 }' "$counts")
skip=$(awk '$1 == "SKIP" { n += $2 } END { print n + 0 }' "$counts")
echo "qemu: $total tests run, $skip skipped"
[ "$skip" = 0 ] || exit 77
