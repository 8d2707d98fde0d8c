#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the RPM packages (libaio, libaio-devel, libaio-static; source
# package aioreap) from packaging/aioreap.spec, check what they ship,
# provide and require, and lint them with rpmlint (packaging/aioreap.rpmlintrc
# holds the filters, each with its reason).
#
#   packaging/build-rpm.sh [BUILDDIR | TARBALL] [OUTDIR]
#
# BUILDDIR: a configured build directory; `make dist` is run there (the
#   tarball it makes stays there, as with any `make dist`).
# TARBALL:  an aioreap-VERSION.tar.xz made by `make dist`.
# Neither:  the source tree is configured out of tree in a temporary
#   directory and `make dist` is run there (autoreconf -fi first in a git
#   checkout without configure).
# OUTDIR:   if given, the .rpm files are copied there.
#
# Everything else happens in one temporary directory, used as rpm's
# %_topdir and %_tmppath, so neither ~/rpmbuild nor the source tree is
# written.  One PASS or FAIL line is printed per check; the exit status is
# 1 if the build or any check failed, 77 (skip) if rpmbuild is missing.
# The test suite (%check) runs only with LIBAIO_RPM_CHECK=1 (CI's rpm
# job sets it), as build-deb.sh's runs only with --check, since it takes
# minutes.  LIBAIO_RPM_KEEP=1 keeps the temporary directory (build log,
# unpacked tree) for inspection.
set -euo pipefail
# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/../.ci/lib.sh"
arg=${1:-}
out=${2:-}

if ! command -v rpmbuild >/dev/null 2>&1; then
	echo "build-rpm.sh: rpmbuild not found (apt-get install rpm / dnf install rpm-build): SKIP"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-rpm.XXXXXX")
if [ "${LIBAIO_RPM_KEEP:-0}" = 1 ]; then
	trap 'echo "build-rpm.sh: kept $tmp"' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi
trap 'exit 1' INT TERM	# so that the EXIT trap runs on ^C as well
mkdir -p "$tmp/SOURCES" "$tmp/tmp"

# --- 1. the dist tarball -------------------------------------------------
# rpmbuild -ta wants what a user gets: the tarball from `make dist`, whose
# top directory is aioreap-VERSION and which carries packaging/aioreap.spec.
if [ -z "$arg" ]; then
	echo "=== configuring a fresh out-of-tree build in $tmp/obj for make dist"
	(ci_configure "$tmp/obj") || exit 1
	arg=$tmp/obj
fi
if [ -d "$arg" ]; then
	[ -f "$arg/Makefile" ] || { echo "build-rpm.sh: $arg is not a configured build directory" >&2; exit 1; }
	echo "=== make dist in $arg"
	make -C "$arg" dist >"$tmp/dist.log" 2>&1 || { tail -n 30 "$tmp/dist.log"; exit 1; }
	# The version the tree builds now, not an older tarball lying there.
	version=$(sed -n 's/^PACKAGE_VERSION = //p' "$arg/Makefile")
	dist=$arg/aioreap-$version.tar.xz
else
	dist=$arg
fi
[ -f "$dist" ] || { echo "build-rpm.sh: no single dist tarball found ($dist)" >&2; exit 1; }
# A copy, so that rpmbuild -ta's %_sourcedir (the tarball's folder) is ours.
cp "$dist" "$tmp/SOURCES/"
tarball=$tmp/SOURCES/$(basename "$dist")
echo "=== tarball: $(basename "$tarball")"

# --- 2. rpmbuild ---------------------------------------------------------
opts=(--define "_topdir $tmp" --define "_tmppath $tmp/tmp")
# No -debuginfo/-debugsource packages: on Debian, find-debuginfo needs
# eu-strip (elfutils) and rpm there does not enable them anyway; this also
# keeps a Fedora host's build to the three packages checked below.
opts+=(--define 'debug_package %{nil}')
# The BuildRequires are Fedora package names.  Where rpm's database does
# not know the compiler (Debian: build tools come from dpkg), skip the
# dependency check; on an RPM distribution keep it.
if ! rpm -q --quiet --whatprovides gcc 2>/dev/null; then
	opts+=(--nodeps)
fi
# rpm's brp-compress (gzips the man pages) uses bash's `read -d` but
# starts with #!/bin/sh; where /bin/sh is not bash (Debian's dash) it
# compresses nothing.  Run it with bash so the pages end up as on Fedora.
case $(readlink -f /bin/sh) in
*/bash) ;;
*)
	if [ -n "$(rpm --eval '%{?__brp_compress}')" ] && command -v bash >/dev/null; then
		opts+=(--define "__brp_compress $(command -v bash) %{_rpmconfigdir}/brp-compress %{?_prefix}")
	fi
	;;
esac
with=without
[ "${LIBAIO_RPM_CHECK:-0}" != 1 ] || with=with
opts+=(--"$with" check)

echo "=== rpmbuild -ta (log: $tmp/rpmbuild.log)"
if ! rpmbuild -ta "${opts[@]}" "$tarball" >"$tmp/rpmbuild.log" 2>&1; then
	tail -n 50 "$tmp/rpmbuild.log"
	echo "FAIL: rpmbuild -ta $(basename "$tarball")"
	exit 1
fi
grep '^Wrote: ' "$tmp/rpmbuild.log"

# --- 3. checks -----------------------------------------------------------
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
# check DESCRIPTION COMMAND...: one PASS/FAIL line from a command's status.
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
not() { ! "$@"; }
has_line() { grep -qxF -- "$1" "$2"; }		# exact line in a file
has_match() { grep -qE -- "$1" "$2"; }		# extended regex in a file
# has P VERB LINE: the check "NAME VERB LINE" on package P's (runtime,
# devel, static) file list (VERB ships), --provides or --requires.
declare -A name=([runtime]=libaio [devel]=libaio-devel [static]=libaio-static)
has() { check "${name[$1]} $2 $3" has_line "$3" "$q/$1.${2/ships/files}"; }

libdir=$(rpm --eval '%{_libdir}')
includedir=$(rpm --eval '%{_includedir}')
mandir=$(rpm --eval '%{_mandir}')
isa=$(rpm --eval '%{?_isa}')
# ELF dependencies carry "(64bit)" on 64-bit targets only.
bits=''
[ "$(rpm --eval '%{?__isa_bits}')" != 64 ] || bits='(64bit)'

rpms=("$tmp"/RPMS/*/*.rpm)
runtime='' devel='' static=''
for f in "${rpms[@]}"; do
	[ -e "$f" ] || continue
	case $(rpm -qp --qf '%{NAME}' "$f") in
	libaio) runtime=$f ;;
	libaio-devel) devel=$f ;;
	libaio-static) static=$f ;;
	*) fail "unexpected package $(basename "$f")" ;;
	esac
done
srpms=("$tmp"/SRPMS/aioreap-*.src.rpm)
check "source package built" test -f "${srpms[0]}"
for p in runtime devel static; do
	check "$p package ${name[$p]} built" test -n "${!p}"
done
[ -n "$runtime" ] && [ -n "$devel" ] && [ -n "$static" ] || exit 1
vr=$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$runtime")
tarversion=$(basename "$tarball" .tar.xz)
check "package version $vr matches the tarball ($tarversion)" test "aioreap-${vr%-*}" = "$tarversion"

q=$tmp/query
mkdir "$q"
for p in runtime devel static; do
	f=${!p}
	rpm -qlp "$f" >"$q/$p.files"
	rpm -qp --provides "$f" | sed 's/[[:space:]]*$//' >"$q/$p.provides"
	rpm -qp --requires "$f" | sed 's/[[:space:]]*$//' >"$q/$p.requires"
	# path and symlink target, one file a line
	rpm -qp --qf '[%{FILENAMES} -> %{FILELINKTOS}\n]' "$f" >"$q/$p.links"
done

echo "=== $(basename "$runtime")"
has runtime ships "$libdir/libaio.so.1.1.0"
has runtime ships "$libdir/libaio.so.1"
check "libaio.so.1 is a symlink to libaio.so.1.1.0" \
	has_line "$libdir/libaio.so.1 -> libaio.so.1.1.0" "$q/runtime.links"
check "libaio does not ship libaio.so (devel link)" \
	not has_line "$libdir/libaio.so" "$q/runtime.files"
check "libaio does not ship libaio.h" not has_line "$includedir/libaio.h" "$q/runtime.files"
for v in '' LIBAIO_0.1 LIBAIO_0.4 LIBAIO_0.5 AIOREAP_1.0 AIOREAP_1.1; do
	has runtime provides "libaio.so.1($v)$bits"
done
check "libaio does not provide LIBAIO_0.7 (upstream's next node)" \
	not has_match '^libaio\.so\.1\(LIBAIO_0\.7\)' "$q/runtime.provides"
# LIBAIO_0.6 holds the time64 entry points, which exist on 32-bit only.
if [ -n "$bits" ]; then
	check "libaio does not provide LIBAIO_0.6 (32-bit only)" \
		not has_match '^libaio\.so\.1\(LIBAIO_0\.6\)' "$q/runtime.provides"
else
	has runtime provides "libaio.so.1(LIBAIO_0.6)"
fi
has runtime provides "libaio$isa = $vr"
has runtime requires "libc.so.6()$bits"
# The library links only against libc (and, on old glibc, its split-out
# parts): anything else, e.g. liburing or libcheck, would be a leak from
# the tools or the tests.
check "libaio requires nothing beyond libc, the loader and rpmlib" \
	not grep -qvE '^(libc\.so\.6|libpthread\.so\.0|libdl\.so\.2|ld-linux[^ ]*|rtld\(GNU_HASH\)|rpmlib\()' \
	"$q/runtime.requires"

echo "=== $(basename "$devel")"
has devel ships "$includedir/libaio.h"
has devel ships "$libdir/libaio.so"
# libtool points it at the real file; the soname link would do as well.
check "libaio.so is a symlink to the runtime library" \
	has_match "^$libdir/libaio\.so -> (libaio\.so\.1|libaio\.so\.1\.1\.0)\$" "$q/devel.links"
check "libaio-devel does not ship libaio.a (libaio-static does)" \
	not has_line "$libdir/libaio.a" "$q/devel.files"
check "libaio-devel ships NEWS" has_match '/NEWS$' "$q/devel.files"
check "libaio-devel ships io.3 (a link page to libaio.7)" \
	has_match "^$mandir/man3/io\.3(\.[a-z]+)?\$" "$q/devel.files"
has devel ships "$libdir/pkgconfig/libaio.pc"
check "libaio-devel does not ship the shared library itself" \
	not has_match '/libaio\.so\.1' "$q/devel.files"
# Every section-3 and section-7 page of the tarball (the time64 names
# included), compressed or not.
pages=$(tar -tJf "$tarball" | sed -n "s|^$tarversion/man/\([A-Za-z0-9_]*\.[37]\)\$|\1|p" | sort)
declare -A n=([3]=0 [7]=0) missing=([3]='' [7]='')
for page in $pages; do
	sec=${page##*.}
	if has_match "^$mandir/man$sec/${page//./\\.}(\.(gz|bz2|xz|zst))?\$" "$q/devel.files"; then
		n[$sec]=$((n[$sec] + 1))
	else
		missing[$sec]+=" $page"
	fi
done
check "libaio-devel ships all $(echo "$pages" | grep -c '\.3$') section-3 pages of the tarball (${n[3]} found)${missing[3]:+, missing:${missing[3]}}" \
	test -z "${missing[3]}" -a "${n[3]}" -gt 0
check "libaio-devel ships the section-7 page libaio.7 (${n[7]} found)${missing[7]:+, missing:${missing[7]}}" \
	test -z "${missing[7]}" -a "${n[7]}" = 1
for page in io_getevents_time64 io_pgetevents_time64; do
	check "libaio-devel ships $page.3" has_match "^$mandir/man3/$page\.3(\.[a-z]+)?\$" "$q/devel.files"
done
has devel provides "pkgconfig(libaio) = ${vr%-*}"
has devel requires "libaio$isa = $vr"

echo "=== $(basename "$static")"
has static ships "$libdir/libaio.a"
check "libaio-static ships nothing else" test "$(grep -vc '/libaio\.a$' "$q/static.files")" = 0
has static requires "libaio-devel$isa = $vr"

echo "=== all packages"
cat "$q/runtime.files" "$q/devel.files" "$q/static.files" >"$q/all.files"
check "aio-bench and aio-bench.1 are in neither package" not has_match '/aio-bench(\.1)?' "$q/all.files"
check "no libtool .la file is shipped" not has_match '\.la$' "$q/all.files"
check "no file is in two packages" test -z "$(sort "$q/all.files" | uniq -d)"

echo "=== rpmlint (each filter's reason: packaging/aioreap.rpmlintrc)"
if command -v rpmlint >/dev/null 2>&1; then
	rpmlint -r "$src/packaging/aioreap.rpmlintrc" "${srpms[@]}" "${rpms[@]}" \
		>"$q/rpmlint" 2>&1 || true
	grep -E '^[^ ]+: [EW]: |packages and .* checked' "$q/rpmlint" || cat "$q/rpmlint"
	check "rpmlint: no error or warning that packaging/aioreap.rpmlintrc does not explain" \
		grep -q ' 0 errors, 0 warnings' "$q/rpmlint"
else
	echo "SKIP (part): rpmlint not installed (apt-get install rpmlint): the packages are not linted"
fi

if [ -n "$out" ]; then
	mkdir -p "$out"
	cp "${rpms[@]}" "$out/"
	[ ! -f "${srpms[0]}" ] || cp "${srpms[@]}" "$out/"
	ls -l "$out"/*.rpm
fi
# The closing count: the package checks, and %check's suite when it ran,
# with the tests it skipped by name (rpmbuild removes its build tree,
# and the tests' logs with their reasons, when it succeeds).
read -r ran skipped suite_failed <<<"$(ci_suite_counts "$tmp/rpmbuild.log")"
grep '^SKIP: ' "$tmp/rpmbuild.log" | sed 's/^/  skipped in %check: /' || true
ci_counts rpm $((passed + failed + ran)) "$skipped" $((failed + suite_failed)) \
	"($((passed + failed)) package checks, $ran in %check)"
[ "$failed" = 0 ] || { echo "build-rpm.sh: FAILED"; exit 1; }
echo "build-rpm.sh: all checks passed"
