#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# qemu-io --aio native (QEMU's linux-aio code, which reaps the ring itself)
# with the stock libaio.so.1 and with ours, swapped with LD_LIBRARY_PATH:
# pattern writes, then pattern-verified reads, on a raw image opened with
# O_DIRECT (--nocache).  Each library also reads what the other wrote.
# Fails if any verification fails.  Timings are shown, not judged.
#
# Usage: bench/qemu-io-compare.sh [BUILDDIR]
#   BUILDDIR (or $AIO_BUILDDIR): a build tree holding .libs/libaio.so.1
# Environment: STOCK_LIBAIO, QEMU_IO_DIR (default /var/tmp: it must support
#   O_DIRECT, which tmpfs before Linux 6.6 does not).
set -u

dir=${QEMU_IO_DIR:-/var/tmp}
name=qemu-io-compare tool=qemu-io
# shellcheck source=bench/compare-lib.sh disable=SC2034 # read there
. "$(dirname "$0")/compare-lib.sh"

img=$dir/qemu-io-compare.$$.raw
cleanup() { rm -f "$img"; }

# O_DIRECT check: --aio native needs it (qemu-io refuses otherwise).
dd if=/dev/zero of="$img" bs=1M count=64 oflag=direct status=none 2>/dev/null ||
	die "$dir does not support O_DIRECT; set QEMU_IO_DIR"
echo "qemu-io: $(qemu-io --version | head -n 1), image $img (64 MiB raw, O_DIRECT)"

# check LABEL LIB <commands: run qemu-io with LIB, commands on stdin (one a
# line); a non-zero exit or any failure message fails.  check runs at the
# end of a pipeline, in a subshell: a failure is kept as $work/failed.
check() {
	printf '%-50s ' "$1"
	cat >"$work/cmds"
	start=$(date +%s%N)
	LD_LIBRARY_PATH=$work/$2 qemu-io -f raw --nocache --aio native "$img" \
		<"$work/cmds" >"$work/out" 2>&1
	st=$?
	end=$(date +%s%N)
	if [ $st -ne 0 ] || grep -qiE "fail|error|mismatch" "$work/out"; then
		echo "FAILED (exit $st)"
		grep -iE "fail|error|mismatch" "$work/out" | head -n 5 | sed 's/^/    /'
		: >"$work/failed"
	else
		echo "ok ($(( (end - start) / 1000000 )) ms)"
	fi
}

# many CMD N BASE STEP PAT LEN: N lines "CMD PAT<offset> LEN", the offsets
# BASE, BASE+STEP, ...
many() {
	awk -v n="$2" -v base="$3" -v step="$4" -v pat="$5" -v len="$6" -v cmd="$1" \
		'BEGIN { for (i = 0; i < n; i++) printf "%s %s%d %s\n", cmd, pat, base + i * step, len }'
}

for lib in stock ours; do
	case $lib in stock) other=ours p=0xab ;; ours) other=stock p=0xcd ;; esac
	echo "== $lib library"
	printf 'write -P %s 0 1M\nread -P %s 0 1M\n' "$p" "$p" |
		check "$lib: write+read 1M, pattern $p" $lib
	{ many aio_write 256 8388608 65536 "-P 0x5a " 64k; echo aio_flush;
	  echo "read -P 0x5a 8M 16M"; } |
		check "$lib: 256 x 64k aio_write, flush, read back" $lib
	printf 'writev -P 0x33 32M 4k 8k 64k\nreadv -P 0x33 32M 4k 8k 64k\n' |
		check "$lib: writev/readv 4k+8k+64k" $lib
	{ echo "write -P 0x77 40M 128k"; many aio_read 32 41943040 4096 "-P 0x77 " 4k;
	  echo aio_flush; } |
		check "$lib: 32 x 4k aio_read, pattern-verified" $lib
	printf 'write -z 48M 1M\nread -P 0 48M 1M\n' |
		check "$lib: zeroed range reads as zero" $lib
	# What the other library wrote must read back the same.
	{ many aio_write 32 58720256 65536 "-P 0x9c " 64k; echo aio_flush; } |
		check "$other: 32 x 64k aio_write at 56M" "$other"
	echo "read -P 0x9c 56M 2M" |
		check "$lib: verify what $other wrote" $lib
done

echo "== timing (for reference, not judged): 4096 x 4k aio_read, then flush"
for lib in stock ours stock ours; do
	{ awk 'BEGIN { for (i = 0; i < 4096; i++) printf "aio_read %d 4k\n", (i * 7919 % 16384) * 4096 }';
	  echo aio_flush; } | check "$lib: 4096 x 4k aio_read" $lib
done

if [ ! -e "$work/failed" ]; then
	echo "qemu-io-compare: all verifications passed"
else
	echo "qemu-io-compare: VERIFICATION FAILED"
	exit 1
fi
