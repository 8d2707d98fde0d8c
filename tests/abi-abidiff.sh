#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# ABI check 3: abidiff (abigail-tools) of the stock libaio.so.1 against
# ours finds no removed or changed function or variable; added ones (the
# LIBAIO_0.6 and AIOREAP_1.x nodes) are allowed.
#
# The stock library carries no debug information, so the comparison that
# counts is symbol against symbol: ours is compared with its debug info
# stripped (objcopy --strip-debug), which puts both sides on the same
# footing: abidiff then compares the ELF symbol tables, versions included.
# It must exit 0 with --no-added-syms (exit bits: 1 error, 2 usage, 4 ABI
# change, 8 incompatible change; additions alone give 4).  The comparison
# with our debug info left in is run too, and its summary must show no
# "Removed" and no "Changed" entry.  A reverse comparison (ours -> stock)
# must see our additions as removals: proof that abidiff looked at all.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_ours
need_stock
need_cmd abidiff abigail-tools
need_cmd objcopy binutils
need_cmd readelf binutils

objcopy --strip-debug "$ours" "$tmp/ours.so" || fail "objcopy"
# Built with --enable-t64-name, our soname is libaio.so.1t64 by design
# (tests/abi-symbols.sh checks it): compare the interfaces, not the names.
[ "$(dyn SONAME "$STOCK_LIBAIO")" = "$(dyn SONAME "$ours")" ] || set -- --ignore-soname

# run LABEL ARGS...: abidiff ARGS, its output (also kept in $tmp/out) and
# exit status (also in $rc) shown under LABEL.
run() {
	echo "== abidiff $1"
	shift
	abidiff "$@" > "$tmp/out"
	rc=$?
	cat "$tmp/out"
	echo "exit $rc"
}
# No error, no incompatible change, and every summary line of $tmp/out
# says 0 Removed, 0 Changed.
stat_clean() {
	[ $((rc & 11)) -eq 0 ] && grep 'changes summary' "$tmp/out" >/dev/null &&
		! grep 'changes summary' "$tmp/out" |
		grep -E '[1-9][0-9]* Removed|[1-9][0-9]* Changed' >/dev/null
}

run "--no-added-syms stock ours(stripped)" "$@" --no-added-syms --no-corpus-path \
	"$STOCK_LIBAIO" "$tmp/ours.so"
[ $rc -eq 0 ] || bad "symbol-level ABI difference"
run "--stat stock ours(stripped)" "$@" --stat "$STOCK_LIBAIO" "$tmp/ours.so"
stat_clean || bad "removed/changed symbols or an incompatible change"
run "--stat stock ours(with debug info)" "$@" --stat "$STOCK_LIBAIO" "$ours"
stat_clean || bad "removed/changed functions or variables"

# Reverse direction: our extra symbols must show up as removed (exit has
# bit 8).  Only meaningful when we do export extra symbols.
extra=$(readelf --dyn-syms -W "$ours" | grep -Ec '(LIBAIO_0\.6|AIOREAP_1\.0)$' || true)
if [ "$extra" -gt 0 ]; then
	run "--stat ours(stripped) stock (must see removals)" "$@" --stat "$tmp/ours.so" "$STOCK_LIBAIO"
	[ $((rc & 8)) -ne 0 ] || bad "abidiff did not notice our extra symbols"
fi

finish
