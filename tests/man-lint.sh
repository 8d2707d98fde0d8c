#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Lint every manual page in man/: mandoc -Tlint -Wwarning must print
# nothing, groff -man -ww -z must print nothing, the .TH section must equal
# the file's suffix, and a .so link page must name an existing page.
# Skips (77) only when neither mandoc nor groff is installed.
: "${top_srcdir:=.}"
MANDOC=${MANDOC:-$(command -v mandoc)}
GROFF=${GROFF:-$(command -v groff)}
# What configure found may be gone by the time the tests run (a build
# chroot, a changed PATH): only a runnable tool counts.
command -v "${MANDOC:-none-such}" >/dev/null 2>&1 || MANDOC=
command -v "${GROFF:-none-such}" >/dev/null 2>&1 || GROFF=
if [ -z "$MANDOC" ] && [ -z "$GROFF" ]; then
	echo "SKIP: neither mandoc nor groff is installed"
	exit 77
fi
[ -n "$MANDOC" ] || echo "note: mandoc missing, checking with groff only"
[ -n "$GROFF" ] || echo "note: groff missing, checking with mandoc only"

# silent TOOL COMMAND...: COMMAND must print nothing, else $base fails.
silent() {
	tool=$1
	shift
	out=$("$@" 2>&1) || true
	[ -z "$out" ] || { echo "FAIL $base: $tool:"; echo "$out"; fail=1; }
}

fail=0
n=0
for page in "$top_srcdir"/man/*.[1-9]; do
	[ -f "$page" ] || continue
	n=$((n + 1))
	base=${page##*/}
	suffix=${base##*.}
	first=$(sed -n 1p "$page")
	case $first in
	.so\ *)
		target=${first#.so }
		[ -f "$top_srcdir/man/${target##*/}" ] ||
			{ echo "FAIL $base: .so target $target not in man/"; fail=1; }
		case $target in
		man[1-9]/*) ;;
		*) echo "FAIL $base: .so target must be manN/page.N"; fail=1 ;;
		esac
		continue ;;
	esac
	th=$(grep -m1 '^\.TH ' "$page" | awk '{ print $3 }')
	[ "$th" = "$suffix" ] ||
		{ echo "FAIL $base: .TH section '$th' differs from the suffix '$suffix'"; fail=1; }
	[ -z "$MANDOC" ] || silent mandoc "$MANDOC" -Tlint -Wwarning "$page"
	[ -z "$GROFF" ] || silent groff "$GROFF" -man -ww -z "$page"
done
echo "linted $n pages"
[ "$n" -gt 0 ] || { echo "FAIL: no pages found in $top_srcdir/man"; exit 1; }
exit $fail
