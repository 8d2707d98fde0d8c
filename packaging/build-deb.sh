#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the Debian binary packages (libaio1, libaio-dev) from a copy of
# this source tree, with packaging/debian copied to debian/, and leave the
# .deb files (plus .buildinfo and .changes) in OUTDIR.
#
#   packaging/build-deb.sh OUTDIR
#
# The copy holds the files git tracks plus untracked files that are not
# ignored (the working tree as a fresh clone would see it, with local
# edits), so generated files and build directories stay out.  Outside a
# git checkout the whole tree is copied, minus build directories.
# The test suite is skipped (DEB_BUILD_OPTIONS=nocheck) unless
# LIBAIO_DEB_CHECK=1: CI runs it in its own job.
set -euo pipefail
out=${1:?usage: $0 OUTDIR}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
for tool in dpkg-buildpackage dpkg-parsechangelog dh; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "build-deb.sh: $tool not found (apt-get install dpkg-dev debhelper)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libaio-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
version=$(dpkg-parsechangelog -l "$src/packaging/debian/changelog" -S Version)
tree=$tmp/libaio-$version
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
mkdir -p "$tree/m4"	# holds only generated files, so git does not list it
chmod +x "$tree/debian/rules"

if [ "${LIBAIO_DEB_CHECK:-0}" = 1 ]; then
	opts=${DEB_BUILD_OPTIONS:-}
	profiles=${DEB_BUILD_PROFILES:-}
else
	opts="nocheck ${DEB_BUILD_OPTIONS:-}"
	profiles="nocheck ${DEB_BUILD_PROFILES:-}"
fi
(cd "$tree" && DEB_BUILD_OPTIONS="$opts" DEB_BUILD_PROFILES="$profiles" \
	dpkg-buildpackage -us -uc -b)

found=0
for f in "$tmp"/*.deb "$tmp"/*.buildinfo "$tmp"/*.changes; do
	[ -e "$f" ] || continue
	cp "$f" "$out/"
	found=1
done
[ "$found" = 1 ] || { echo "build-deb.sh: no packages produced" >&2; exit 1; }
ls -l "$out"/*.deb
