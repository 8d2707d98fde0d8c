#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every name exported by src/libaio.map and every static inline helper of
# include/libaio.h has a page in man/; every section 3 and 7 page follows
# the fixed skeleton; every page in man/ is listed in man/local.mk, so
# that it is installed and distributed.
: "${top_srcdir:=.}"
map=$top_srcdir/src/libaio.map
hdr=$top_srcdir/include/libaio.h
mk=$top_srcdir/man/local.mk
for f in "$map" "$hdr" "$mk"; do
	[ -f "$f" ] || { echo "FAIL: $f missing"; exit 1; }
done

# Names from the version script: identifiers ending in ';' that are not
# "global:"/"local:" labels or the "*" wildcard; comments removed.
exported=$(sed -e 's/#.*//' "$map" | tr -s ' \t' '\n\n' |
	sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' | sort -u)
# Helpers: "static inline <type> name(" in the public header.
helpers=$(tr '\n' ' ' < "$hdr" | grep -o 'static inline [^(]*(' |
	sed -e 's/($//' -e 's/.*[ *]//' | sort -u)
[ -n "$exported" ] || { echo "FAIL: no names parsed from $map"; exit 1; }
[ -n "$helpers" ] || { echo "FAIL: no helpers parsed from $hdr"; exit 1; }

fail=0
n=0
for name in $exported $helpers; do
	n=$((n + 1))
	[ -f "$top_srcdir/man/$name.3" ] ||
		{ echo "FAIL: $name has no page man/$name.3"; fail=1; }
done
[ -f "$top_srcdir/man/libaio.7" ] || { echo "FAIL: man/libaio.7 missing"; fail=1; }

skeleton="NAME SYNOPSIS DESCRIPTION RETURN_VALUE ERRORS NOTES EXAMPLE SEE_ALSO"
for page in "$top_srcdir"/man/*.[1-9]; do
	base=${page##*/}
	grep -q "man/$base" "$mk" || { echo "FAIL: $base not listed in man/local.mk"; fail=1; }
	case $base in *.[37]) ;; *) continue ;; esac	# the C API pages
	head -n 1 "$page" | grep -q '^\.so ' && continue
	have=$(sed -n 's/^\.SH "*\([^"]*\)"*$/\1/p' "$page" | tr ' ' '_' | tr '\n' ' ')
	if [ "$have" != "$skeleton " ]; then
		echo "FAIL: $base sections are: $have"
		echo "      expected:         $skeleton"
		fail=1
	fi
	grep -q '^\.B #include <libaio.h>' "$page" ||
		{ echo "FAIL: $base: no #include <libaio.h> in SYNOPSIS"; fail=1; }
	grep -q -- '-laio' "$page" || { echo "FAIL: $base: no link flag"; fail=1; }
done
echo "checked $n names"
exit $fail
