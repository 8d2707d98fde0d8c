#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Extract the program in each page's EXAMPLE section, compile it against
# the header in the source tree and the library just built, and run it.
# A page whose example does not compile, or exits non-zero, fails.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${CC:=cc}"
command -v "${CC%% *}" >/dev/null 2>&1 || { echo "SKIP: no C compiler '$CC'"; exit 77; }
libdir=$(cd "$top_builddir/.libs" 2>/dev/null && pwd) ||
	{ echo "FAIL: $top_builddir/.libs missing: build the library first"; exit 1; }
"$top_builddir/tests/aio-probe" || exit $?	# skips where AIO answers ENOSYS
incdir=$(cd "$top_srcdir/include" && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# extract PAGE: print the lines between .EX and .EE in the EXAMPLE section,
# with the roff escapes the pages use turned back into C (\e backslash,
# \- minus, \(aq quote, \(dq double quote, \& nothing); nothing for a page
# without one (a .so link).  An unknown escape fails.
extract() {
	awk '
	/^\.SH[ \t]/ { in_ex = ($0 ~ /^\.SH[ \t]+"?EXAMPLES?"?[ \t]*$/); next }
	in_ex && /^\.EX/ { code = 1; next }
	in_ex && /^\.EE/ { code = 0; next }
	code {
		line = $0
		out = ""
		while ((i = index(line, "\\")) > 0) {
			out = out substr(line, 1, i - 1)
			c = substr(line, i + 1, 1)
			if (c == "e") { out = out "\\"; line = substr(line, i + 2) }
			else if (c == "-") { out = out "-"; line = substr(line, i + 2) }
			else if (c == "&") { line = substr(line, i + 2) }
			else if (substr(line, i + 1, 3) == "(aq") { out = out "\047"; line = substr(line, i + 4) }
			else if (substr(line, i + 1, 3) == "(dq") { out = out "\""; line = substr(line, i + 4) }
			else { printf "unknown escape in example: %s\n", $0 > "/dev/stderr"; exit 2 }
		}
		print out line
	}' "$1"
}

fail=0
n=0
for page in "$top_srcdir"/man/*.[37]; do	# the C API pages
	base=${page##*/}
	src=$tmp/${base%.*}_${base##*.}.c
	if ! extract "$page" > "$src"; then
		echo "FAIL $base: cannot extract the example"; fail=1; continue
	fi
	[ -s "$src" ] || continue		# .so links
	n=$((n + 1))
	if ! $CC -std=gnu11 -Wall -Wextra -Werror -I"$incdir" -o "${src%.c}" "$src" \
		-L"$libdir" -laio -lpthread > "$tmp/cc.log" 2>&1; then
		echo "FAIL $base: example does not compile:"; cat "$tmp/cc.log"
		fail=1; continue
	fi
	if ! (cd "$tmp" && LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		timeout 30 "${src%.c}") > "$tmp/run.log" 2>&1; then
		echo "FAIL $base: example exits non-zero:"; cat "$tmp/run.log"
		fail=1; continue
	fi
	echo "ok $base"
done
echo "built and ran $n examples"
[ "$n" -gt 0 ] || { echo "FAIL: no examples found"; exit 1; }
exit $fail
