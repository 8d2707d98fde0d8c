#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "cross": build the library and aio-bench with Debian's cross
# toolchains and --enable-werror, and build tests/test-abi-layout against
# the architecture's own <linux/aio_abi.h> (linux-libc-dev-ARCH-cross, the
# same headers as linux-libc-dev:ARCH): its static assertions pin every
# offset and size of struct iocb and struct io_event to the kernel's.  The
# layout program is then also run under qemu-user where it is installed.
# ARCH-t64 builds the Debian 13 flavour (--enable-t64-name) with
# -D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64, Debian 13's default flags on
# armhf (not on i386, which kept a 32-bit time_t).
#
#   .ci/cross.sh [ARCH[-t64]...]  (ARCH: arm64 armhf ppc64el s390x riscv64
#                                  i386; default: riscv64 armhf-t64)
#
# By default only what the kernels job does not build: riscv64 (no Debian
# 12 kernel to boot) and the t64 flavour; the kernels job builds arm64,
# armhf (with the same flags), ppc64el, s390x and i386 and runs the suite
# on each one's own kernel.
#
# Needs (installed when missing, waiting for the dpkg lock):
# crossbuild-essential-{arm64,armhf,ppc64el,s390x,i386}, and for riscv64
# (not a Debian 12 release architecture, so no crossbuild-essential)
# gcc-riscv64-linux-gnu and libc6-dev-riscv64-cross; qemu-user-static.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
# shellcheck source=.ci/lib.sh
. .ci/lib.sh
archs=${*:-"riscv64 armhf-t64"}
base=${BUILD_BASE:-${TMPDIR:-/tmp}/aioreap-cross}
jobs=$(nproc 2>/dev/null || echo 2)

triplet() {
	case $1 in
	arm64) echo aarch64-linux-gnu ;;
	armhf) echo arm-linux-gnueabihf ;;
	ppc64el) echo powerpc64le-linux-gnu ;;
	s390x) echo s390x-linux-gnu ;;
	riscv64) echo riscv64-linux-gnu ;;
	i386) echo i686-linux-gnu ;;
	*) echo "cross.sh: unknown architecture $1" >&2; return 1 ;;
	esac
}
qemu_of() {
	case $1 in
	arm64) echo qemu-aarch64-static ;;
	armhf) echo qemu-arm-static ;;
	ppc64el) echo qemu-ppc64le-static ;;
	s390x) echo qemu-s390x-static ;;
	riscv64) echo qemu-riscv64-static ;;
	i386) echo qemu-i386-static ;;
	esac
}

need=(qemu-user-static)
for a in $archs; do
	case ${a%-t64} in
	riscv64) need+=(gcc-riscv64-linux-gnu libc6-dev-riscv64-cross) ;;
	*) need+=("crossbuild-essential-${a%-t64}") ;;
	esac
done
ci_need "${need[@]}"
[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)

failed=0
results=()
for flav in $archs; do
	a=${flav%-t64} conf=()
	[ "$a" = "$flav" ] || conf=(--enable-t64-name "CPPFLAGS=-D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64")
	t=$(triplet "$a")
	b=$base/$flav
	t0=$SECONDS
	echo "=== $flav ($t${conf[*]:+, ${conf[*]}})"
	rm -rf "$b" && mkdir -p "$b"
	rc=0
	(
		cd "$b"
		# No pkg-config data for the target: Check and liburing are
		# not found, so only the library, aio-bench and the programs
		# that need neither are built.
		PKG_CONFIG_LIBDIR=/nonexistent "$src/configure" --quiet \
			--build="$(gcc -dumpmachine)" --host="$t" --enable-werror \
			${conf[@]+"${conf[@]}"} >configure.log 2>&1 || { tail -30 configure.log; exit 1; }
		make -j"$jobs" --quiet >make.log 2>&1 || { tail -40 make.log; exit 1; }
		make -j"$jobs" --quiet tests/test-abi-layout tests/aio-probe >>make.log 2>&1 ||
			{ tail -40 make.log; exit 1; }
		hdr=$(echo '#include <linux/aio_abi.h>' | "$t-gcc" -H -fsyntax-only -x c - 2>&1 |
			grep -m1 'aio_abi\.h' | sed 's/^\.* *//')
		echo "  <linux/aio_abi.h>: $hdr ($(dpkg -S "$hdr" 2>/dev/null | cut -d: -f1))"
		echo "  library: $(file -b -L .libs/libaio.so.1 | cut -d, -f1-2), soname $(readelf -d .libs/libaio.so.1 |
			sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
		readelf -h tests/test-abi-layout | awk -F: '/Machine|Data/ { gsub(/^ +/, "", $2); printf "  test-abi-layout: %s\n", $2 }'
		readelf --dyn-syms -W .libs/libaio.so.1 | awk '$0 !~ / UND / && $NF ~ /@/ { print $NF }' |
			sort > exports.txt
		echo "  exports: $(wc -l < exports.txt) versioned symbols, $(grep -c 'AIOREAP_1\.0' exports.txt) in AIOREAP_1.0, $(grep -c '@@LIBAIO_0\.6' exports.txt) in LIBAIO_0.6"
		q=$(qemu_of "$a")
		if command -v "$q" >/dev/null 2>&1; then
			out=$("$q" -L "/usr/$t" tests/test-abi-layout 2>&1) ||
				{ echo "$out"; echo "  test-abi-layout FAILED under $q"; exit 1; }
			echo "  test-abi-layout under $q: $(echo "$out" | tail -n 1)"
		fi
	) || rc=$?
	results+=("$flav: $([ $rc = 0 ] && echo passed || echo FAILED) in $((SECONDS - t0)) s")
	[ $rc = 0 ] || failed=$((failed + 1))
done
echo "=== cross summary"
printf '  %s\n' "${results[@]}"
[ $failed = 0 ]
