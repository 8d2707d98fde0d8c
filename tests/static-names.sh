#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The static archive defines no global name a program could collide with:
# `nm -g --defined-only libaio.a` shows only the names src/libaio.map
# exports (a versioned alias name@VERSION counts as its name) and names
# with the reserved prefix aioreap_.  The shared library hides the rest
# with its version script; a static link sees every global of every
# object, so the prefix is the only protection there.
: "${top_srcdir:=.}" "${top_builddir:=.}"
lib=$top_builddir/.libs/libaio.a
map=$top_srcdir/src/libaio.map
[ -f "$lib" ] || { echo "SKIP: no static archive $lib (configure --disable-static)"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm not installed (binutils)"; exit 77; }
public=$(sed -e 's/#.*//' "$map" | tr -s ' \t' '\n\n' |
	sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' | sort -u)
[ -n "$public" ] || { echo "FAIL: no public names parsed from $map"; exit 1; }
defined=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u)
[ -n "$defined" ] || { echo "FAIL: nm shows no global in $lib"; exit 1; }
bad=0 n=0
for sym in $defined; do
	n=$((n + 1))
	base=${sym%%@*}
	case $base in aioreap_*) continue ;; esac
	echo "$public" | grep -qx "$base" && continue
	echo "FAIL: $sym: neither public (src/libaio.map) nor aioreap_*"
	bad=1
done
echo "checked $n global names of libaio.a"
exit $bad
