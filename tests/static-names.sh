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
public=$(sed -e 's/#.*//' "$map" | tr -s ' \t' '\n\n' |
	sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' | sort -u)
[ -n "$public" ] || fail "no public names parsed from $map"
defined=$(nm -g --defined-only "$archive" | awk 'NF == 3 { print $3 }' | sort -u)
[ -n "$defined" ] || fail "nm shows no global in $archive"
n=0
for sym in $defined; do
	n=$((n + 1))
	base=${sym%%@*}
	case $base in aioreap_*) continue ;; esac
	echo "$public" | grep -qx "$base" && continue
	bad "$sym: neither public (src/libaio.map) nor aioreap_*"
done
echo "checked $n global names of libaio.a"
finish
