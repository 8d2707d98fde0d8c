#!/bin/sh
# 32-bit CI job: build the whole project for i386 (gcc -m32, gcc-multilib)
# out of tree and run the whole `make check` there.  On a 32-bit build the
# library also exports the LIBAIO_0.6 time64 entry points, and
# tests/test-time64 (built with -D_TIME_BITS=64) runs.
# Where this kernel runs no i386 binaries, only the build and the export
# checks can be done: the job then exits 77 (skipped); the kernels job
# (not a default yet) runs the 32-bit suite under Debian's i386 kernel.
#
# Needs: gcc-multilib, check:i386 (pkg-config data in
# /usr/lib/i386-linux-gnu/pkgconfig), libaio1:i386 for the ABI comparisons,
# libc6-dbg:i386 for valgrind on i386; installed here when missing and
# running as root with apt-get.
# Environment: BUILD_DIR (default /tmp/build-m32), JOBS, CONFIGURE_FLAGS.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-/tmp/build-m32}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

# Install what is missing when we can (CI runs as root on Debian/Ubuntu).
deps="gcc-multilib check:i386 libaio1:i386 libc6-dbg:i386"
missing=
for p in $deps; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
# (install-deps.sh retries an update that meets a mirror mid-sync.)
if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	dpkg --print-foreign-architectures | grep -qx i386 || dpkg --add-architecture i386
	# shellcheck disable=SC2086
	sh "$src/scripts/install-deps.sh" --only $missing
fi

if ! printf 'int main(void){return 0;}\n' |
	gcc -m32 -x c -o /dev/null - 2>/dev/null; then
	echo "m32: gcc -m32 cannot link (install gcc-multilib)" >&2
	exit 1
fi

# pkg-config must see the i386 .pc files only (check, liburing...).
PKG_CONFIG_LIBDIR=/usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig
PKG_CONFIG_PATH=
export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH

if [ ! -x "$src/configure" ]; then
	(cd "$src" && autoreconf -fi)
fi
rm -rf "$build"
mkdir -p "$build"
cd "$build"
# --host names the target so libtool and the multiarch lookups pick i386;
# CC/CXX carry -m32 because there is no i686-linux-gnu-gcc.
"$src/configure" --host=i686-linux-gnu CC='gcc -m32' CXX='g++ -m32' \
	PKG_CONFIG=pkg-config --enable-werror ${CONFIGURE_FLAGS:-}
make -j"$jobs"

# The library really is 32-bit and has the time64 node.
lib=.libs/libaio.so.1
od -An -tx1 -j4 -N1 "$lib" | grep -q 01 || { echo "m32: $lib is not ELF32" >&2; exit 1; }
for s in io_getevents_time64@@LIBAIO_0.6 io_pgetevents_time64@@LIBAIO_0.6; do
	readelf --dyn-syms -W "$lib" | grep -q " $s\$" ||
		{ echo "m32: $lib does not export $s" >&2; exit 1; }
done

# Some kernels run no i386 binaries (IA32 emulation off, as on some VMs):
# then the build above, with -Werror, is all this job can prove.
printf 'int main(void){return 0;}\n' | gcc -m32 -x c -o ./m32-probe - 2>/dev/null
if ! ./m32-probe 2>/dev/null; then
	echo "m32: the build and the export checks passed; make check cannot run:" \
		"this kernel runs no i386 binaries ($(./m32-probe 2>&1 | head -1 || true))"
	echo "m32: 0 tests run, the whole suite skipped (JOBS=kernels runs it on the i386 kernel)"
	exit 77
fi
make -j"$jobs" check || {
	for f in $(find . -name '*.log' ! -name config.log ! -name test-suite.log); do
		if grep -q '^FAIL\|^ERROR' "${f%.log}.trs" 2>/dev/null; then
			echo "==== $f"
			tail -n 60 "$f"
		fi
	done
	exit 1
}
echo "m32: make check passed: $(sed -n 's/^# TOTAL: *//p' test-suite.log) tests run," \
	"$(sed -n 's/^# SKIP: *//p' test-suite.log) skipped"
