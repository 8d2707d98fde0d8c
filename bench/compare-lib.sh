# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh disable=SC2154 # name, tool: set by the caller
# Sourced by bench/fio-compare.sh and bench/qemu-io-compare.sh, after they
# set name (for messages) and tool (the program they run with each
# library); reads the build directory from their $1.  Gives die, builddir,
# ours (the build's libaio.so.1), STOCK_LIBAIO (found when not set) and a
# scratch $work holding stock/ and ours/, each with one library as
# libaio.so.1 for LD_LIBRARY_PATH, with proof that the tool loads it; skips
# (77) without the tool.  On exit, or when interrupted, the caller's
# cleanup (when it defines one) runs, then $work goes.

die() { echo "$name: $*" >&2; exit 1; }

command -v "$tool" >/dev/null 2>&1 || { echo "$name: $tool not installed: skipped"; exit 77; }
builddir=${1:-${AIO_BUILDDIR:-.}}
ours=$builddir/.libs/libaio.so.1
[ -e "$ours" ] || die "$ours not found (give the build directory)"
if [ -z "${STOCK_LIBAIO:-}" ]; then
	for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
		[ -e "$d/libaio.so.1" ] && STOCK_LIBAIO=$d/libaio.so.1 && break
	done
fi
[ -e "${STOCK_LIBAIO:-}" ] || die "no stock libaio.so.1 (set STOCK_LIBAIO)"

work=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX") || die "mktemp failed"
cleanup() { :; }
trap 'cleanup; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
mkdir "$work/stock" "$work/ours"
ln -s "$(readlink -f "$STOCK_LIBAIO")" "$work/stock/libaio.so.1"
ln -s "$(readlink -f "$ours")" "$work/ours/libaio.so.1"
for lib in stock ours; do
	got=$(LD_LIBRARY_PATH=$work/$lib ldd "$(command -v "$tool")" | awk '/libaio\.so\.1/ {print $3}')
	[ "$(readlink -f "$got")" = "$(readlink -f "$work/$lib/libaio.so.1")" ] ||
		die "$tool would load $got, not the $lib library"
	echo "$lib: $(readlink -f "$work/$lib/libaio.so.1")"
done
