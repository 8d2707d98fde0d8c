#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "buildd": build the Debian packages as a Debian buildd does, with
# the test suite on (no nocheck), in a fresh minimal Debian 12 root:
# `mmdebstrap --variant=buildd` plus only the declared Build-Depends
# (apt-get build-dep on packaging/debian/control), /tmp on tmpfs, as an
# unprivileged user, with no gcc-multilib, valgrind, abidiff, clang or
# stock libaio in sight.  Beside it, in a second buildd root that also
# has the i386 cross toolchain (kept out of the first, whose tests must
# see a plain amd64 buildd), the other flavour and both flavours for i386
# are built with nocheck (i386 cross-built: this host's kernel runs no
# i386 program), so that every architecture's packages come from one
# place.  lintian checks them (doc/packaging.md says which and how
# strictly), and .ci/deb.sh installs and uses them in throw-away roots.
#
#   .ci/buildd.sh [OUTDIR]
#
# OUTDIR (default: a temporary directory) receives the packages and the
# test logs (tests/*.log, test-suite.log).  Prints each skipped test with
# its reason.  The roots' tarballs are cached (.ci/chroot-lib.sh), so a
# rerun downloads nothing; a changed Build-Depends makes new ones.
# BUILDD_FLAVOUR=t64 runs the tests in the t64 flavour's build instead.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "buildd.sh: must run as root (chroot, mounts)"; exit 1; }
# shellcheck source=.ci/lib.sh
. .ci/lib.sh
flavour=${BUILDD_FLAVOUR:-default}

work=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-ci-buildd.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=${1:-$work/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ci_need mmdebstrap lintian
arch=$(dpkg --print-architecture)
other=t64
[ "$flavour" = default ] || other=default

control=packaging/debian/control
[ "$flavour" = default ] || control=packaging/debian-$flavour/control
# A changed Build-Depends makes a new root (the hooks read the control
# file, so its text is not among mmdebstrap's arguments).
bd_key=$(sed -n '/^Build-Depends/,/^[^ ]/p' "$control" | sha256sum | cut -c1-12)
# The control file goes in through a fixed path, so that the tarball's key
# (its mmdebstrap arguments and CI_KEY_EXTRA) stays the same between runs.
mkdir -p "$ci_cache"
cp "$control" "$ci_cache/buildd-$flavour.control"
buildd_root() { # NAME MMDEBSTRAP-ARGS...: a buildd root with the Build-Depends
	local name=$1
	shift
	CI_KEY_EXTRA=$bd_key ci_tarball "$name" --variant=buildd "$@" \
		--customize-hook="mkdir -p \"\$1/root/bd/debian\"" \
		--customize-hook="upload $ci_cache/buildd-$flavour.control /root/bd/debian/control" \
		--customize-hook='chroot "$1" apt-get build-dep -y -q --no-install-recommends /root/bd' \
		--customize-hook='chroot "$1" sh -c "dpkg --print-foreign-architectures | grep -q . || exit 0;
			apt-get build-dep -y -q --no-install-recommends -a i386 -P cross,nocheck /root/bd"' \
		--customize-hook='rm -rf "$1/root/bd"' \
		--customize-hook='chroot "$1" useradd -m -s /bin/sh builder'
}
tar=$(buildd_root "buildd-$flavour")
xtar=$(buildd_root "buildd-cross-$flavour" --architectures="$arch,i386" \
	--include=crossbuild-essential-i386,libc6-dev:i386)
root=$work/root xroot=$work/xroot
ci_unpack "$tar" "$root"
ci_unpack "$xtar" "$xroot"

echo "=== what the root of the build with the tests has (and lacks)"
for tool in gcc g++ make autoreconf dh pkg-config mandoc groff valgrind strace abidiff clang i686-linux-gnu-gcc; do
	printf '  %-10s %s\n' "$tool" "$(chroot "$root" sh -c "command -v $tool" >/dev/null 2>&1 && echo yes || echo no)"
done
printf '  %-10s %s\n' "libaio1" "$(chroot "$root" dpkg-query -W -f='${Version}' libaio1 2>/dev/null || echo no)"
printf '  %-10s %s\n' "gcc -m32" "$(echo '#include <sys/types.h>' | chroot "$root" gcc -m32 -x c -c -o /dev/null - >/dev/null 2>&1 && echo yes || echo no)"

# The source, owned by the build user.
for r in "$root" "$xroot"; do
	ci_copy_source "$r/home/builder/src"
	chroot "$r" chown -R builder:builder /home/builder
done

# parallel=N as Debian's build daemons set it, one job per CPU.  The
# build with the tests runs in the background: its suite spends most of
# its time asleep (the kernel retiring destroyed contexts), and the three
# builds without tests, in the other root, fill that time.
cat > "$xroot/home/builder/builds.sh" <<EOF
cd /home/builder/src
for b in "--flavour $other" "--flavour default --arch i386" "--flavour t64 --arch i386"; do
	echo "build-deb.sh \$b"
	bash packaging/build-deb.sh \$b /home/builder/debs >/home/builder/build.log 2>&1 ||
		{ tail -n 40 /home/builder/build.log; echo "build-deb.sh \$b: FAILED"; exit 1; }
done
EOF
echo "=== dpkg-buildpackage with the tests on (flavour $flavour), /tmp on tmpfs, parallel=$(nproc);" \
	"beside it, nocheck: flavour $other, and both flavours for i386 (cross)"
t0=$SECONDS
rc=0 xrc=0
ci_in_root "$root" "mount | grep ' /tmp ' ; exec su builder -c 'cd /home/builder/src &&
	DEB_BUILD_OPTIONS=parallel=$(nproc) \
	LIBAIO_DEB_KEEP=/home/builder/kept bash packaging/build-deb.sh --check \
	--flavour $flavour /home/builder/debs' > /home/builder/build.log 2>&1" &
pid=$!
ci_in_root "$xroot" "exec su builder -c 'sh /home/builder/builds.sh'" || xrc=$?
echo "builds without tests: exit $xrc in $((SECONDS - t0)) s"
wait "$pid" || rc=$?
echo "build with the tests: exit $rc in $((SECONDS - t0)) s"
cp "$root/home/builder/build.log" "$out/"
kept=$root/home/builder/kept
if [ -d "$kept" ]; then
	mkdir -p "$out/tests"
	cp "$kept"/test-suite.log "$out/" 2>/dev/null || true
	cp "$kept"/tests/*.log "$out/tests/" 2>/dev/null || true
	echo "=== test summary"
	grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$kept/test-suite.log" 2>/dev/null ||
		sed -n '/^# TOTAL/,/^# ERROR/p' "$out/build.log" | head -7
	ci_skips "$kept"
fi
if [ "$rc" != 0 ] || [ "$xrc" != 0 ]; then
	[ "$rc" = 0 ] || tail -n 80 "$out/build.log"
	exit 1
fi
cp "$root"/home/builder/debs/* "$xroot"/home/builder/debs/* "$out/"
ls -l "$out"/*.deb
rm -rf "$root" "$xroot"
# lintian (doc/packaging.md: no -dbgsym packages, any tag fails, every
# override has a reason), beside the install tests.
echo "=== lintian $(dpkg-query -W -f='${Version}' lintian) (in the background)"
lint=("$out"/*.dsc)
for f in "$out"/*.deb; do
	case $f in *-dbgsym_*) ;; *) lint+=("$f") ;; esac
done
lintian --fail-on error,warning,info,pedantic,experimental -I -E --pedantic \
	--tag-display-limit 0 "${lint[@]}" >"$work/lintian.log" 2>&1 &
lint_pid=$!
rc=0
if [ "${BUILDD_INSTALL_TEST:-1}" = 1 ]; then
	echo "=== installing what the buildd made into throw-away roots (.ci/deb.sh)"
	bash .ci/deb.sh "$out" || rc=$?
fi
lint_rc=0
wait "$lint_pid" || lint_rc=$?
echo "=== lintian over ${#lint[@]} packages: exit $lint_rc"
grep -v '^running with root privileges' "$work/lintian.log" || true
awk 'FNR == 1 || /^$/ { why = 0 } /^#/ { why = 1; next }
	/./ && !why { print FILENAME ": override without a reason: " $0; bad = 1 }
	END { exit bad }' packaging/debian*/*lintian-overrides packaging/debian/source/lintian-overrides ||
	lint_rc=1
[ "$rc" = 0 ] && [ "$lint_rc" = 0 ] || exit 1
echo "=== buildd job passed"
