#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "cross": the library and aio-bench built with Debian's cross
# toolchains and -Werror, and tests/test-abi-layout built against the
# architecture's own <linux/aio_abi.h> (linux-libc-dev-ARCH-cross): its
# static assertions pin every offset and size of struct iocb and struct
# io_event to the kernel's; it also runs under qemu-user where installed.
# ARCH-t64 is the Debian 13 flavour (--enable-t64-name, $ci_time64).
#
#   .ci/cross.sh [ARCH[-t64]...]  (ARCH: arm64 armhf ppc64el s390x riscv64
#                                  i386; default: armhf-t64)
#
# The default is what the kernels job does not build: the t64 flavour
# (riscv64, once built here, is built and run there on its own kernel).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=.ci/lib.sh
. .ci/lib.sh
archs=${*:-"armhf-t64"}
base=${BUILD_BASE:-$ci_scratch/aioreap-cross}

need=qemu-user-static
for flav in $archs; do
	ci_arch "${flav%-t64}"
	need="$need $arch_cross"
done
# shellcheck disable=SC2086
ci_need $need

# cross_one FLAVOUR, a part (ci_part): one test, the flavour's build and
# its layout program, skipped where qemu-user cannot run that program.
cross_one() {
	local flav=$1 conf=() t hdr q out
	ci_tally='1 0 1'
	ci_arch "${flav%-t64}"
	[ "$flav" = "${flav%-t64}" ] || conf=(--enable-t64-name "$ci_time64")
	t=$arch_triplet
	echo "  $t${conf[*]:+, ${conf[*]}}"
	# No pkg-config data for the target: Check and liburing are not
	# found, so only the library, aio-bench and the programs that need
	# neither are built.
	ci_build "$base/$flav" --build="$(gcc -dumpmachine)" --host="$t" --enable-werror \
		PKG_CONFIG_LIBDIR=/nonexistent ${conf[@]+"${conf[@]}"}
	ci_make tests/test-abi-layout tests/aio-probe
	# awk reads to the end: gcc must not die of SIGPIPE (pipefail).
	hdr=$(echo '#include <linux/aio_abi.h>' | "$t-gcc" -H -fsyntax-only -x c - 2>&1 |
		awk '/aio_abi\.h/ && !n++ { sub(/^\.* */, ""); print }')
	echo "  <linux/aio_abi.h>: $hdr ($(dpkg -S "$hdr" 2>/dev/null | cut -d: -f1))"
	echo "  library: $(file -b -L .libs/libaio.so.1 | cut -d, -f1-2), soname $(readelf -d .libs/libaio.so.1 |
		sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
	readelf -h tests/test-abi-layout | awk -F: '/Machine|Data/ { gsub(/^ +/, "", $2); printf "  test-abi-layout: %s\n", $2 }'
	ci_exports .libs/libaio.so.1
	echo "  exports: $(wc -l < exports.txt) versioned symbols, $(grep -c 'AIOREAP_1\.0' exports.txt) in AIOREAP_1.0, $(grep -c '@@LIBAIO_0\.6' exports.txt) in LIBAIO_0.6"
	q=$arch_qemu_user
	if command -v "$q" >/dev/null 2>&1; then
		out=$("$q" -L "/usr/$t" tests/test-abi-layout 2>&1) ||
			{ echo "$out"; echo "  test-abi-layout FAILED under $q"; exit 1; }
		echo "  test-abi-layout under $q: $(echo "$out" | tail -n 1)"
		ci_tally='1 0 0'
	else
		echo "  test-abi-layout not run: no $q"
		ci_tally='1 1 0'
	fi
}

for flav in $archs; do
	ci_part "$flav" cross_one "$flav"
done
# shellcheck disable=SC2086 # RAN SKIPPED FAILED
ci_parts_done cross $ci_totals "($archs)"
