#!/bin/sh
# The library's files call one another one way only: no circle of calls
# between two or more of src/*.c (a file may call down, never back up).
# Read from the objects libtool built: which file defines each global
# symbol, and which other files' symbols each one uses.
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm not installed"; exit 77; }
objs=$(ls "$top_builddir"/src/.libs/libaio_la-*.o 2>/dev/null)
[ -n "$objs" ] || objs=$(ls "$top_builddir"/src/libaio_la-*.o 2>/dev/null)
[ -n "$objs" ] || { echo "SKIP: no libtool objects under src/ (a non-libtool build)"; exit 77; }
for o in $objs; do
	f=${o##*libaio_la-}; f=${f%.o}
	[ -f "$top_srcdir/src/$f.c" ] || continue	# stale, from a removed file
	nm "$o" | awk -v f="$f" '$2 ~ /^[TDBRC]$/ { print "D", f, $3 } $1 == "U" { print "U", f, $2 }'
done | awk '
	$1 == "D" { def[$3] = $2; next }
	{ use[NR] = $2 " " $3 }
	END {
		for (i in use) {
			split(use[i], p, " ")
			if ((p[2] in def) && def[p[2]] != p[1]) {
				e = p[1] " " def[p[2]]
				if (!(e in edge)) { edge[e] = 1; files[p[1]] = 1; files[def[p[2]]] = 1 }
			}
		}
		# Transitive closure (a handful of files).
		for (e in edge) reach[e] = 1
		changed = 1
		while (changed) {
			changed = 0
			for (a in files) for (b in files) if ((a " " b) in reach)
				for (c in files) if ((b " " c) in reach && !((a " " c) in reach)) {
					reach[a " " c] = 1; changed = 1
				}
		}
		bad = 0
		for (e in edge) print "calls:", e
		for (a in files) if ((a " " a) in reach) {
			print "FAIL: " a ".c is on a circle of calls"; bad = 1
		}
		n = 0; for (e in edge) n++
		if (!bad) print "no circle among", n, "file-to-file call edges"
		exit bad
	}'
