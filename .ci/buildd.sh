#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "buildd": build the Debian packages as a Debian buildd does, with
# the test suite on (no nocheck), each flavour where it ships: the default
# one (libaio1) in a fresh minimal Debian 12 (bookworm) root, the t64 one
# (libaio1t64) in a fresh minimal Debian 13 (trixie) root, with that
# release's toolchain.  Each root is `mmdebstrap --variant=buildd` plus
# only the declared Build-Depends (apt-get build-dep on the flavour's
# control file), /tmp on tmpfs, the build as an unprivileged user, with no
# gcc-multilib, valgrind, abidiff, clang or stock libaio in sight.  Beside
# them, in a second root of each release that also has the i386 cross
# toolchain (kept out of the first, whose tests must see a plain amd64
# buildd), each flavour is cross-built for i386 with nocheck (this host's
# kernel runs no i386 program), so that every architecture's packages come
# from one place.  lintian checks them, each flavour with its release's
# lintian (the host's for Debian 12, one in a trixie root for Debian 13;
# doc/packaging.md says how strictly), and .ci/deb.sh installs and uses
# them in throw-away roots.
#
#   .ci/buildd.sh [OUTDIR]
#
# OUTDIR (default: a temporary directory) receives the packages and, for
# each flavour, the build's output and test logs in OUTDIR/FLAVOUR/
# (build.log, test-suite.log, tests/*.log).  Prints each build's test
# summary and each skipped test with its reason.  The roots' tarballs are
# cached (.ci/chroot-lib.sh), so a rerun downloads nothing; a changed
# Build-Depends makes new ones.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "buildd.sh: must run as root (chroot, mounts)"; exit 1; }
# shellcheck source=.ci/lib.sh
. .ci/lib.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-ci-buildd.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=${1:-$work/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ci_need mmdebstrap lintian
arch=$(dpkg --print-architecture)
# Each flavour is built where it ships: its packaging directory's
# changelog names the release (~deb12, ~deb13).
flavours="default t64"
pkgdir() { [ "$1" = default ] && echo debian || echo "debian-$1"; }
declare -A suite=([default]=bookworm [t64]=trixie) version
for f in $flavours; do
	version[$f]=$(dpkg-parsechangelog -l "packaging/$(pkgdir "$f")/changelog" -S Version)
done

# buildd_root FLAVOUR NAME MMDEBSTRAP-ARGS...: a root of the flavour's
# release with the flavour's Build-Depends.  A changed Build-Depends makes
# a new root (the hooks read the control file, so its text is not among
# mmdebstrap's arguments); the control file goes in through a fixed path,
# so that the tarball's key (its mmdebstrap arguments and CI_KEY_EXTRA)
# stays the same between runs.
buildd_root() {
	local flavour=$1 name=$2 control bd_key
	shift 2
	control=packaging/$(pkgdir "$flavour")/control
	bd_key=$(sed -n '/^Build-Depends/,/^[^ ]/p' "$control" | sha256sum | cut -c1-12)
	mkdir -p "$ci_cache"
	cp "$control" "$ci_cache/buildd-$flavour.control"
	ci_suite=${suite[$flavour]} CI_KEY_EXTRA=$bd_key ci_tarball "$name" --variant=buildd "$@" \
		--customize-hook="mkdir -p \"\$1/root/bd/debian\"" \
		--customize-hook="upload $ci_cache/buildd-$flavour.control /root/bd/debian/control" \
		--customize-hook='chroot "$1" apt-get build-dep -y -q --no-install-recommends /root/bd' \
		--customize-hook='chroot "$1" sh -c "dpkg --print-foreign-architectures | grep -q . || exit 0;
			apt-get build-dep -y -q --no-install-recommends -a i386 -P cross,nocheck /root/bd"' \
		--customize-hook='rm -rf "$1/root/bd"' \
		--customize-hook='chroot "$1" useradd -m -s /bin/sh builder'
}
# root[F] builds flavour F with its tests, xroot[F] cross-builds it.
declare -A root xroot
for f in $flavours; do
	tar=$(buildd_root "$f" "buildd-$f")
	xtar=$(buildd_root "$f" "buildd-cross-$f" --architectures="$arch,i386" \
		--include=crossbuild-essential-i386,libc6-dev:i386)
	root[$f]=$work/root-$f xroot[$f]=$work/xroot-$f
	ci_unpack "$tar" "${root[$f]}"
	ci_unpack "$xtar" "${xroot[$f]}"
	# The source, owned by the build user.
	for r in "${root[$f]}" "${xroot[$f]}"; do
		ci_copy_source "$r/home/builder/src"
		chroot "$r" chown -R builder:builder /home/builder
	done
done

echo "=== what the roots of the builds with the tests have (and lack)"
printf '  %-10s %-10s %s\n' '' "${suite[default]}" "${suite[t64]}"
has() { # ROOT TOOL
	case $2 in
	libaio1*) chroot "$1" dpkg-query -W -f='${Version}' "$2" 2>/dev/null || echo no ;;
	gcc-m32) echo '#include <sys/types.h>' | chroot "$1" gcc -m32 -x c -c -o /dev/null - >/dev/null 2>&1 &&
		echo yes || echo no ;;
	*) chroot "$1" sh -c "command -v $2" >/dev/null 2>&1 && echo yes || echo no ;;
	esac
}
for tool in gcc g++ make autoreconf dh pkg-config mandoc groff valgrind strace abidiff clang \
	i686-linux-gnu-gcc gcc-m32 libaio1 libaio1t64; do
	printf '  %-10s %-10s %s\n' "$tool" "$(has "${root[default]}" "$tool")" "$(has "${root[t64]}" "$tool")"
done
printf '  %-10s %-10s %s\n' gcc-version "$(chroot "${root[default]}" gcc -dumpfullversion)" \
	"$(chroot "${root[t64]}" gcc -dumpfullversion)"

# parallel=N as Debian's build daemons set it, one job per CPU.  The
# builds with the tests run in the background: their suites spend most of
# their time asleep (the kernel retiring destroyed contexts), and the two
# builds without tests, in the cross roots, one after the other, fill
# that time.  The two builds with the tests run one after the other, never
# together: fs.aio-nr and fs.aio-max-nr are the kernel's, shared by every
# root, and a suite's limits tests count on no one else opening and
# closing contexts meanwhile.
echo "=== dpkg-buildpackage with the tests on, /tmp on tmpfs, parallel=$(nproc): flavour default" \
	"in ${suite[default]}, then flavour t64 in ${suite[t64]}; beside them, nocheck, both for i386 (cross)"
t0=$SECONDS
for f in $flavours; do
	frc=0
	ci_in_root "${root[$f]}" "exec su builder -c 'cd /home/builder/src &&
		DEB_BUILD_OPTIONS=parallel=$(nproc) \
		LIBAIO_DEB_KEEP=/home/builder/kept bash packaging/build-deb.sh --check \
		--flavour $f /home/builder/debs' > /home/builder/build.log 2>&1" || frc=$?
	echo "build with the tests, flavour $f (${suite[$f]}): exit $frc at $((SECONDS - t0)) s" >"$work/rc-$f"
	[ "$frc" = 0 ] || break
done &
pid=$!
xrc=0
for f in $flavours; do
	echo "build-deb.sh --flavour $f --arch i386 (${suite[$f]})"
	ci_in_root "${xroot[$f]}" "exec su builder -c 'cd /home/builder/src &&
		bash packaging/build-deb.sh --flavour $f --arch i386 /home/builder/debs' \
		> /home/builder/build.log 2>&1" ||
		{ xrc=1; tail -n 40 "${xroot[$f]}/home/builder/build.log"; echo "build-deb.sh --flavour $f --arch i386: FAILED"; }
done
echo "builds without tests: exit $xrc in $((SECONDS - t0)) s"
wait "$pid" || true
rc=0
for f in $flavours; do
	cat "$work/rc-$f" 2>/dev/null || { echo "build with the tests, flavour $f: not run"; rc=1; continue; }
	grep -q ': exit 0 at' "$work/rc-$f" || rc=1
	log=$out/$f
	mkdir -p "$log"
	cp "${root[$f]}/home/builder/build.log" "$log/"
	kept=${root[$f]}/home/builder/kept
	if [ -d "$kept" ]; then
		mkdir -p "$log/tests"
		cp "$kept"/test-suite.log "$log/" 2>/dev/null || true
		cp "$kept"/tests/*.log "$log/tests/" 2>/dev/null || true
		echo "=== test summary, flavour $f, ${suite[$f]}'s toolchain ($(chroot "${root[$f]}" gcc -dumpfullversion))"
		grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$kept/test-suite.log" 2>/dev/null ||
			sed -n '/^# TOTAL/,/^# ERROR/p' "$log/build.log" | head -7
		ci_skips "$kept"
	fi
	grep -q ': exit 0 at' "$work/rc-$f" || tail -n 80 "$log/build.log"
done
[ "$rc" = 0 ] && [ "$xrc" = 0 ] || exit 1
for f in $flavours; do
	cp "${root[$f]}"/home/builder/debs/* "${xroot[$f]}"/home/builder/debs/* "$out/"
	rm -rf "${root[$f]}" "${xroot[$f]}"
done
ls -l "$out"/*.deb

# lintian (doc/packaging.md: no -dbgsym packages, any tag fails, every
# override has a reason), each flavour by its release's lintian, beside
# the install tests: the default flavour's packages by the host's
# (Debian 12), the t64 flavour's in a trixie root with Debian 13's.
lint_flags="--fail-on error,warning,info,pedantic,experimental -I -E --pedantic --tag-display-limit 0"
lint_files() { # VERSION: the flavour's source and binary packages, no -dbgsym
	local f
	for f in "$out"/*_"$1".dsc "$out"/*_"$1"_*.deb; do
		case $f in *-dbgsym_*) ;; *) echo "$f" ;; esac
	done
}
mapfile -t lint12 < <(lint_files "${version[default]}")
mapfile -t lint13 < <(lint_files "${version[t64]}")
ltar=$(ci_suite=${suite[t64]} ci_tarball lintian --variant=apt --include=lintian)
lroot=$work/lintian-root
echo "=== lintian $(dpkg-query -W -f='${Version}' lintian) (host) and Debian 13's (in the background)"
# shellcheck disable=SC2086 # lint_flags: words
lintian $lint_flags "${lint12[@]}" >"$work/lintian12.log" 2>&1 &
lint_pid=$!
(
	ci_unpack "$ltar" "$lroot"
	mkdir -p "$lroot/ci"
	cp "${lint13[@]}" "$out"/*_"${version[t64]}".tar.* "$lroot/ci/"
	echo "lintian $(chroot "$lroot" dpkg-query -W -f='${Version}' lintian)"
	ci_in_root "$lroot" 'cd /ci && exec lintian '"$lint_flags"' ./*.dsc ./*.deb'
) >"$work/lintian13.log" 2>&1 &
lint13_pid=$!
rc=0
if [ "${BUILDD_INSTALL_TEST:-1}" = 1 ]; then
	echo "=== installing what the buildd made into throw-away roots (.ci/deb.sh)"
	bash .ci/deb.sh "$out" || rc=$?
fi
lint_rc=0 lint13_rc=0
wait "$lint_pid" || lint_rc=$?
wait "$lint13_pid" || lint13_rc=$?
echo "=== lintian $(dpkg-query -W -f='${Version}' lintian) (Debian 12, host) over the default flavour's ${#lint12[@]} packages: exit $lint_rc"
grep -v '^running with root privileges' "$work/lintian12.log" || true
echo "=== $(head -n 1 "$work/lintian13.log") (Debian 13) over the t64 flavour's ${#lint13[@]} packages: exit $lint13_rc"
sed 1d "$work/lintian13.log" | grep -v '^running with root privileges' || true
awk 'FNR == 1 || /^$/ { why = 0 } /^#/ { why = 1; next }
	/./ && !why { print FILENAME ": override without a reason: " $0; bad = 1 }
	END { exit bad }' packaging/debian*/*lintian-overrides packaging/debian/source/lintian-overrides ||
	lint_rc=1
[ "$rc" = 0 ] && [ "$lint_rc" = 0 ] && [ "$lint13_rc" = 0 ] || exit 1
echo "=== buildd job passed"
