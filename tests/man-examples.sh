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
extract=$(cd "$top_srcdir/tests" && pwd)/man-extract.sh
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

fail=0
n=0
for page in "$top_srcdir"/man/*.[37]; do	# the C API pages
	base=${page##*/}
	src=$tmp/${base%.*}_${base##*.}.c
	if ! sh "$extract" "$page" > "$src"; then
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
