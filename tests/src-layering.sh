#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The library's files call one another one way only: no circle of calls
# between two or more of src/*.c (a file may call down, never back up).
# Read from the objects libtool built: which file defines each global
# symbol, and which other files' symbols each one uses; tsort(1) then
# finds any circle among those file-to-file edges.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_cmd nm binutils
need_cmd tsort coreutils
objs=$(ls "$top_builddir"/src/.libs/libaio_la-*.o 2>/dev/null)
[ -n "$objs" ] || objs=$(ls "$top_builddir"/src/libaio_la-*.o 2>/dev/null)
[ -n "$objs" ] || skip "no libtool objects under src/ (a non-libtool build)"
for o in $objs; do
	f=${o##*libaio_la-}; f=${f%.o}
	[ -f "$top_srcdir/src/$f.c" ] || continue	# stale, from a removed file
	nm "$o" | awk -v f="$f" '$2 ~ /^[TDBRC]$/ { print "D", f, $3 } $1 == "U" { print "U", f, $2 }'
done | awk '$1 == "D" { def[$3] = $2; next } { use[$2 " " $3] = 1 }
	END { for (u in use) { split(u, p, " ")
		if ((p[2] in def) && def[p[2]] != p[1]) print p[1], def[p[2]] } }' |
	sort -u > "$tmp/edges"
sed 's/^/calls: /' "$tmp/edges"
if ! tsort "$tmp/edges" > /dev/null 2> "$tmp/loop"; then
	sed -e 's/.*input contains a loop:$/circle:/' -e 's/^tsort: /  /' "$tmp/loop"
	fail "a circle of calls among src/*.c (each circle above)"
fi
echo "no circle among $(wc -l < "$tmp/edges") file-to-file call edges"
