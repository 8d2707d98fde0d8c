#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the Debian binary packages (libaio1, libaio-dev; libaio1t64 in the
# t64 flavour) from a copy of this source tree, with packaging/debian
# copied to debian/, and leave the .deb files (plus .buildinfo and
# .changes) in OUTDIR.
#
#   packaging/build-deb.sh [--check] [--flavour t64] OUTDIR
#
# --flavour t64: packaging/debian-t64 is put over debian/ (runtime package
#   libaio1t64, also installing libaio.so.1t64; see packaging/debian-t64/README).
# --check (or LIBAIO_DEB_CHECK=1): run the test suite, as a buildd does;
#   otherwise DEB_BUILD_OPTIONS=nocheck.  LIBAIO_DEB_KEEP=DIR keeps the
#   unpacked, built source tree (test logs included) in DIR.
#
# The copy holds the files git tracks plus untracked files that are not
# ignored (the working tree as a fresh clone would see it, with local
# edits), so generated files and build directories stay out.  Outside a
# git checkout the whole tree is copied, minus build directories.
set -euo pipefail
flavour=default
check=${LIBAIO_DEB_CHECK:-0}
while [ $# -gt 1 ]; do
	case $1 in
	--check) check=1 ;;
	--flavour) flavour=$2; shift ;;
	--flavour=*) flavour=${1#--flavour=} ;;
	*) break ;;
	esac
	shift
done
out=${1:?usage: $0 [--check] [--flavour t64] OUTDIR}
case $flavour in
default | t64) ;;
*) echo "build-deb.sh: unknown flavour $flavour (default, t64)" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
for tool in dpkg-buildpackage dpkg-parsechangelog dh; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "build-deb.sh: $tool not found (apt-get install dpkg-dev debhelper)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
version=$(dpkg-parsechangelog -l "$src/packaging/debian/changelog" -S Version)
tree=$tmp/aioreap-$version
mkdir "$tree"

if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$src" ls-files -z --cached --others --exclude-standard |
		(cd "$src" && while IFS= read -r -d '' f; do
			[ -e "$f" ] || [ -L "$f" ] || continue	# deleted, not committed
			cp -P --parents -- "$f" "$tree/"
		done)
else
	(cd "$src" && tar -cf - --exclude='./build*' --exclude='./.git' \
		--exclude='./autom4te.cache' --exclude='./debian' .) |
		(cd "$tree" && tar -xf -)
fi
rm -rf "$tree/debian"
cp -R "$tree/packaging/debian" "$tree/debian"
if [ "$flavour" = t64 ]; then
	rm -f "$tree/debian/libaio1.install" "$tree/debian/libaio1.symbols"
	cp "$tree"/packaging/debian-t64/control "$tree"/packaging/debian-t64/libaio1t64.* \
		"$tree/debian/"
fi
mkdir -p "$tree/m4"	# a tarball or an old checkout may lack it
chmod +x "$tree/debian/rules"

if [ "$check" = 1 ]; then
	opts=${DEB_BUILD_OPTIONS:-}
	profiles=${DEB_BUILD_PROFILES:-}
else
	opts="nocheck ${DEB_BUILD_OPTIONS:-}"
	profiles="nocheck ${DEB_BUILD_PROFILES:-}"
fi
rc=0
(cd "$tree" && DEB_BUILD_OPTIONS="$opts" DEB_BUILD_PROFILES="$profiles" \
	dpkg-buildpackage -us -uc -b) || rc=$?
if [ -n "${LIBAIO_DEB_KEEP:-}" ]; then
	rm -rf "$LIBAIO_DEB_KEEP"
	mkdir -p "$(dirname "$LIBAIO_DEB_KEEP")"
	cp -a "$tree" "$LIBAIO_DEB_KEEP"
fi
[ "$rc" = 0 ] || exit "$rc"

found=0
for f in "$tmp"/*.deb "$tmp"/*.buildinfo "$tmp"/*.changes; do
	[ -e "$f" ] || continue
	cp "$f" "$out/"
	found=1
done
[ "$found" = 1 ] || { echo "build-deb.sh: no packages produced" >&2; exit 1; }
ls -l "$out"/*.deb
