#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# 32-bit CI job: build the whole project for i386 (gcc -m32, gcc-multilib)
# out of tree and run the whole `make check` there.  On a 32-bit build the
# library also exports the LIBAIO_0.6 time64 entry points, and
# tests/test-time64 (built with -D_TIME_BITS=64) runs.  Where this kernel
# runs no i386 binaries, only the build and the export checks can be done:
# the job then exits 77 (skipped); the kernels job runs the 32-bit suite
# under Debian's i386 kernel.  libaio1:i386 is for the ABI comparisons,
# libc6-dbg:i386 for valgrind on i386.
# Environment: BUILD_DIR (default $AIOREAP_CI_SCRATCH/build-m32), CONFIGURE_FLAGS.
set -euo pipefail
# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/lib.sh"
build=${BUILD_DIR:-$ci_scratch/build-m32}

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	dpkg --print-foreign-architectures | grep -qx i386 || dpkg --add-architecture i386
	ci_need gcc-multilib check:i386 libaio1:i386 libc6-dbg:i386
fi

printf 'int main(void){return 0;}\n' | gcc -m32 -x c -o /dev/null - 2>/dev/null ||
	{ echo "m32: gcc -m32 cannot link (install gcc-multilib)" >&2; exit 1; }

# pkg-config must see the i386 .pc files only (check, liburing...).
PKG_CONFIG_LIBDIR=/usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig
PKG_CONFIG_PATH=
export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH

# --host names the target so libtool and the multiarch lookups pick i386;
# CC/CXX carry -m32 because there is no i686-linux-gnu-gcc.
ci_arch i386
# shellcheck disable=SC2086
ci_build "$build" --host="$arch_triplet" CC='gcc -m32' CXX='g++ -m32' \
	PKG_CONFIG=pkg-config --enable-werror ${CONFIGURE_FLAGS:-}

# The library really is 32-bit and has the time64 node.
lib=.libs/libaio.so.1
od -An -tx1 -j4 -N1 "$lib" | grep -q 01 || { echo "m32: $lib is not ELF32" >&2; exit 1; }
ci_exports "$lib"

# Some kernels run no i386 binaries (IA32 emulation off, as on some VMs):
# then the build above, with -Werror, is all this job can prove.
printf 'int main(void){return 0;}\n' | gcc -m32 -x c -o ./m32-probe - 2>/dev/null
if ! ./m32-probe 2>/dev/null; then
	echo "m32: the build and the export checks passed; make check cannot run:" \
		"this kernel runs no i386 binaries ($(./m32-probe 2>&1 | head -1 || true))"
	echo "m32: 0 tests run, the whole suite skipped (JOBS=kernels runs it on the i386 kernel)"
	exit 77
fi
make -j"$ci_jobs" check || { ci_failed_logs; exit 1; }
# shellcheck disable=SC2046
ci_counts m32 $(ci_suite_counts test-suite.log)
