#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The library's files call one another one way only: no circle of calls
# between two or more of src/*.c (a file may call down, never back up).
# Read from the objects libtool built: which file defines each global
# symbol, and which other files' symbols each one uses; tsort(1) then
# finds any circle among those file-to-file edges.
# And the syscall layer is the only place that enters the kernel: outside
# its files (raw_syscall.h, poll_syscall.h, syscall_nr.h, syscall.c and
# arch/*.h), the sources, comments left out, name no trap, no system-call
# number and no inline assembly other than export.h's symbol versions.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"

layer="raw_syscall.h poll_syscall.h syscall_nr.h syscall.c"
outside=
for f in "$top_srcdir"/src/*.c "$top_srcdir"/src/*.h; do
	case " $layer " in *" ${f##*/} "*) continue ;; esac
	outside="$outside $f"
done
# shellcheck disable=SC2086
awk 'FNR == 1 { inc = 0 }
	{ line = $0; out = ""
	  while (line != "") {
		if (inc) {
			i = index(line, "*/"); if (!i) break
			line = substr(line, i + 2); inc = 0
		} else {
			i = index(line, "/*")
			if (!i) { out = out line; break }
			out = out substr(line, 1, i - 1)
			line = substr(line, i + 2); inc = 1
		}
	  }
	  sub(/\/\/.*/, "", out)
	  n = split(FILENAME, p, "/")
	  print p[n] ":" FNR ": " out }' $outside |
	grep -E '(raw|arch)_syscall[0-9]|(^|[^_[:alnum:]])syscall *\(|(^|[^_[:alnum:]])(SYS|__NR)_[a-z]|(^|[^_[:alnum:]])NR_[a-z]|(^|[^_[:alnum:]])(__)?asm(__)?([^_[:alnum:]]|$)' |
	grep -v '^export\.h:.*__asm__("\.symver ' > "$tmp/traps" || true
if [ -s "$tmp/traps" ]; then
	sed 's/^/outside the syscall layer: /' "$tmp/traps"
	fail "a system call or a trap outside the syscall layer (above)"
fi
echo "no trap, system-call number or assembly outside the syscall layer"
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
