# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh disable=SC2154 # name, tool, builddir: set by the caller
# Sourced by bench/fio-compare.sh and bench/qemu-io-compare.sh, after they
# set name (for messages), tool (the program they run with each library)
# and builddir.  Gives die, ours (the build's libaio.so.1), STOCK_LIBAIO
# (found when not set) and compare_dirs; skips (77) without the tool.

die() { echo "$name: $*" >&2; exit 1; }

command -v "$tool" >/dev/null 2>&1 || { echo "$name: $tool not installed: skipped"; exit 77; }
ours=$builddir/.libs/libaio.so.1
[ -e "$ours" ] || die "$ours not found (give the build directory)"
if [ -z "${STOCK_LIBAIO:-}" ]; then
	for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
		[ -e "$d/libaio.so.1" ] && STOCK_LIBAIO=$d/libaio.so.1 && break
	done
fi
[ -e "${STOCK_LIBAIO:-}" ] || die "no stock libaio.so.1 (set STOCK_LIBAIO)"

# compare_dirs WORK: WORK/stock and WORK/ours, each holding one library
# as libaio.so.1 for LD_LIBRARY_PATH, and proof that the tool loads it.
compare_dirs() {
	mkdir "$1/stock" "$1/ours"
	ln -s "$(readlink -f "$STOCK_LIBAIO")" "$1/stock/libaio.so.1"
	ln -s "$(readlink -f "$ours")" "$1/ours/libaio.so.1"
	for lib in stock ours; do
		got=$(LD_LIBRARY_PATH=$1/$lib ldd "$(command -v "$tool")" | awk '/libaio\.so\.1/ {print $3}')
		[ "$(readlink -f "$got")" = "$(readlink -f "$1/$lib/libaio.so.1")" ] ||
			die "$tool would load $got, not the $lib library"
		echo "$lib: $(readlink -f "$1/$lib/libaio.so.1")"
	done
}
