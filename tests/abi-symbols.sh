#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# ABI check 4: the dynamic symbols.  Ours exports every symbol@version of
# the stock libaio.so.1, with the same default (@@) markings and the same
# version-node tree, and beyond them only its own: AIOREAP_1.0's four
# extensions, AIOREAP_1.1's io_aio_limits, io_set_async and io_async_stats
# and, on 32-bit targets, LIBAIO_0.6's io_getevents_time64 and
# io_pgetevents_time64 (no internal name leaks, no LIBAIO_0.x node after
# 0.6: that numbering is upstream's).  Every import is a versioned C
# library symbol or a weak toolchain hook, the soname is libaio.so.1
# (libaio.so.1t64 when configured with --enable-t64-name) and the only
# DT_NEEDED is libc.so.6.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_ours
need_stock
need_cmd readelf binutils

# dynsyms FILE def: the defined dynamic symbols, one "name@version" or
# "name@@version" a line (version-node symbols appear as their bare name);
# dynsyms FILE und: the imports as "binding name@version".  ppc64's
# "[<localentry>: 8]" column and the "(N)" version index some readelf
# versions print after the name are removed first.
dynsyms() {
	readelf --dyn-syms -W "$1" |
		awk -v und="$2" '{ sub(/ \([0-9]+\)$/, ""); gsub(/\[[^]]*\]/, ""); $0 = $0 }
			$1 ~ /^[0-9]+:$/ && $8 != "" && ($7 == "UND") == (und == "und") {
				print (und == "und" ? $5 " " : "") $8 }' |
		sort -u
}
# Version definitions as "node<parent" (or just "node").
vtree() {
	readelf -V -W "$1" | awk '
		/Version definition/ { d = 1; next }
		/Version needs/ { d = 0 }
		d && /Name:/ && !/BASE/ { if (n != "") print n; n = $NF }
		d && /Parent 1:/ { print n "<" $NF; n = "" }
		END { if (n != "") print n }' | sort
}
# keep NAME LABEL: standard input, kept in $tmp/NAME and shown under LABEL.
keep() { cat > "$tmp/$1"; echo "== $2"; cat "$tmp/$1"; }

dynsyms "$STOCK_LIBAIO" def | keep stock.def "stock exports"
dynsyms "$ours" def | keep ours.def "our exports"
[ -s "$tmp/stock.def" ] || fail "could not read the stock symbol table"

# Ours: the stock exports and our own, nothing else.  Our own are the
# AIOREAP_1.0 and 1.1 nodes and their names, and on 32-bit targets the LIBAIO_0.6
# node and its two, which a 32-bit stock library may export too (Debian's
# does); a 64-bit library has no LIBAIO_0.6.
own="AIOREAP_1.0 io_features@@AIOREAP_1.0 io_reap@@AIOREAP_1.0
io_reaper_active@@AIOREAP_1.0 io_syscall_count@@AIOREAP_1.0
AIOREAP_1.1 io_aio_limits@@AIOREAP_1.1 io_set_async@@AIOREAP_1.1
io_async_stats@@AIOREAP_1.1"
if [ "$(elf_class "$ours")" = 32 ]; then
	own="$own LIBAIO_0.6 io_getevents_time64@@LIBAIO_0.6 io_pgetevents_time64@@LIBAIO_0.6"
else
	! grep -q 'LIBAIO_0\.6' "$tmp/ours.def" ||
		bad "LIBAIO_0.6 exported by a 64-bit library"
fi
# shellcheck disable=SC2086
printf '%s\n' $own | sort -u - "$tmp/stock.def" > "$tmp/want.def"
missing=$(comm -23 "$tmp/want.def" "$tmp/ours.def" | tr '\n' ' ')
[ -z "$missing" ] || bad "missing from ours: $missing"
extra=$(comm -13 "$tmp/want.def" "$tmp/ours.def" | tr '\n' ' ')
[ -z "$extra" ] || bad "unexpected exports: $extra"

# The version tree: the stock nodes with the stock parents.
vtree "$STOCK_LIBAIO" | keep stock.vt "version nodes (stock)"
vtree "$ours" | keep ours.vt "version nodes (ours)"
[ -s "$tmp/stock.vt" ] || bad "could not read the stock version nodes"
missing=$(comm -23 "$tmp/stock.vt" "$tmp/ours.vt")
[ -z "$missing" ] || bad "version nodes differ from stock: $missing"

dynsyms "$ours" und | keep ours.und "our imports"
while read -r bind name; do
	case $name in
	*@GLIBC_*) ;;
	*) [ "$bind" = WEAK ] || bad "unversioned import: $name" ;;
	esac
done < "$tmp/ours.und"

soname=$(dyn SONAME "$ours")
[ "$soname" = "${LIBAIO_SONAME:-libaio.so.1}" ] ||
	bad "soname is '$soname', want ${LIBAIO_SONAME:-libaio.so.1}"
needed=$(dyn NEEDED "$ours" | tr '\n' ' ')
[ "$needed" = "libc.so.6 " ] || bad "DT_NEEDED is '$needed', want libc.so.6 only"

# objdump -T gives the same list.
if command -v objdump >/dev/null 2>&1; then
	objdump -T "$ours" | awk '$4 != "*UND*" && $6 ~ /(LIBAIO_|AIOREAP_)/ {
		if ($4 == "*ABS*") print $7
		else if ($6 ~ /^\(/) { v = $6; gsub(/[()]/, "", v); print $7 "@" v }
		else print $7 "@@" $6 }' | sort -u > "$tmp/ours.objdump"
	cmp -s "$tmp/ours.objdump" "$tmp/ours.def" ||
		bad "objdump -T and readelf disagree: $(diff "$tmp/ours.objdump" "$tmp/ours.def")"
fi

finish
