#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the Debian packages (source aioreap; binaries libaio1, libaio-dev;
# libaio1t64 in the t64 flavour) from a copy of this source tree, with
# packaging/debian copied to debian/, and leave the .deb files (plus the
# .dsc and tarball, .buildinfo and .changes) in OUTDIR.
#
#   packaging/build-deb.sh [--check] [--flavour t64] [--arch ARCH | --source] OUTDIR
#
# --flavour t64: packaging/debian-t64 is put over debian/ (runtime package
#   libaio1t64, soname libaio.so.1t64, version ~deb13; see
#   packaging/debian-t64/README).
# --check (or LIBAIO_DEB_CHECK=1): run the test suite, as a buildd does;
#   otherwise DEB_BUILD_OPTIONS=nocheck.  LIBAIO_DEB_KEEP=DIR keeps the
#   unpacked, built source tree (test logs included) in DIR.
# --arch ARCH: cross-build for ARCH (dpkg-buildpackage -a, profiles cross
#   and nocheck: the build machine cannot be assumed to run ARCH's
#   programs); needs ARCH's build dependencies and cross compiler.
# --source: the source package alone (.dsc and tarball, dpkg-source -b,
#   no build dependencies needed), for a builder such as sbuild.
# The copy is the tree a fresh clone would see, with local edits
# (.ci/chroot-lib.sh's ci_copy_source).
set -euo pipefail
# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/../.ci/lib.sh"
flavour=default
check=${LIBAIO_DEB_CHECK:-0}
arch='' source=0
while [ $# -gt 1 ]; do
	case $1 in
	--check) check=1 ;;
	--flavour) flavour=$2; shift ;;
	--flavour=*) flavour=${1#--flavour=} ;;
	--arch) arch=$2; shift ;;
	--source) source=1 ;;
	*) break ;;
	esac
	shift
done
out=${1:?usage: $0 [--check] [--flavour t64] [--arch ARCH | --source] OUTDIR}
case $flavour in
default | t64) ;;
*) echo "build-deb.sh: unknown flavour $flavour (default, t64)" >&2; exit 2 ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
# A source package needs dpkg-source alone; a build needs debhelper too.
tools="dpkg-source dpkg-parsechangelog"
[ "${source:-0}" = 1 ] || tools="$tools dpkg-buildpackage dh"
for tool in $tools; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "build-deb.sh: $tool not found (apt-get install dpkg-dev debhelper)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
changelog=$src/packaging/debian/changelog
[ "$flavour" = default ] || changelog=$src/packaging/debian-$flavour/changelog
version=$(dpkg-parsechangelog -l "$changelog" -S Version)
tree=$tmp/aioreap-$version
ci_copy_source "$tree"
rm -rf "$tree/debian"
cp -R "$tree/packaging/debian" "$tree/debian"
if [ "$flavour" = t64 ]; then
	rm -f "$tree"/debian/libaio1.*
	cp "$tree"/packaging/debian-t64/control "$tree"/packaging/debian-t64/changelog \
		"$tree"/packaging/debian-t64/libaio1t64.* "$tree/debian/"
fi
mkdir -p "$tree/m4"	# a tarball or an old checkout may lack it
chmod +x "$tree/debian/rules"
if [ "$source" = 1 ]; then
	(cd "$tmp" && dpkg-source -b "aioreap-$version" >/dev/null)
	cp "$tmp"/*.dsc "$tmp"/*.tar.xz "$out/"
	ls -l "$out"/*.dsc
	exit 0
fi

# A native build makes the source package too (what a distribution
# takes, and what lintian checks); a cross build adds only its binaries.
set -- -us -uc -F
profiles=${DEB_BUILD_PROFILES:-} opts=${DEB_BUILD_OPTIONS:-}
if [ -n "$arch" ]; then
	set -- -us -uc -B -a"$arch"
	check=0 profiles="cross $profiles"
fi
[ "$check" = 1 ] || opts="nocheck $opts" profiles="nocheck $profiles"
rc=0
(cd "$tree" && DEB_BUILD_OPTIONS="$opts" DEB_BUILD_PROFILES="$profiles" \
	dpkg-buildpackage "$@") || rc=$?
if [ -n "${LIBAIO_DEB_KEEP:-}" ]; then
	rm -rf "$LIBAIO_DEB_KEEP"
	mkdir -p "$(dirname "$LIBAIO_DEB_KEEP")"
	cp -a "$tree" "$LIBAIO_DEB_KEEP"
fi
[ "$rc" = 0 ] || exit "$rc"

shopt -s nullglob
made=("$tmp"/*.deb "$tmp"/*.buildinfo "$tmp"/*.changes "$tmp"/*.dsc "$tmp"/*.tar.xz)
shopt -u nullglob
[ ${#made[@]} -gt 0 ] || { echo "build-deb.sh: no packages produced" >&2; exit 1; }
cp "${made[@]}" "$out/"
ls -l "$out"/*.deb
