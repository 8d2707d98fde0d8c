#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The static archive defines no global name a program could collide with:
# `nm -g --defined-only libaio.a` shows only the names src/libaio.map
# exports (a versioned alias name@VERSION counts as its name) and names
# with the reserved prefix aioreap_.  The shared library hides the rest
# with its version script; a static link sees every global of every
# object, so the prefix is the only protection there.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_static
need_cmd nm binutils
map=$top_srcdir/src/libaio.map
awk '{ sub(/#.*/, "") } { for (i = 1; i <= NF; i++) if ($i ~ /^[A-Za-z_][A-Za-z0-9_]*;$/)
	print substr($i, 1, length($i) - 1) }' "$map" | sort -u > "$tmp/public"
[ -s "$tmp/public" ] || fail "no public names parsed from $map"
nm -g --defined-only "$archive" | awk 'NF == 3 { print $3 }' | sort -u > "$tmp/defined"
[ -s "$tmp/defined" ] || fail "nm shows no global in $archive"
for sym in $(sed 's/@.*//' "$tmp/defined" | grep -v '^aioreap_' | sort -u | comm -23 - "$tmp/public"); do
	bad "$sym: neither public (src/libaio.map) nor aioreap_*"
done
echo "checked $(wc -l < "$tmp/defined") global names of libaio.a"
finish
