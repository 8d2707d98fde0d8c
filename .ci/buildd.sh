#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "buildd": build the Debian packages as a Debian buildd does, with
# the test suite on (no nocheck), in a fresh minimal Debian 12 root:
# `mmdebstrap --variant=buildd` plus only the declared Build-Depends
# (apt-get build-dep on packaging/debian/control), /tmp on tmpfs, as an
# unprivileged user, with no gcc-multilib, valgrind, strace, abidiff,
# clang or stock libaio in sight.  Then the packages it made go through
# .ci/deb.sh (installed in a throw-away root, fio and qemu-io on them).
#
#   .ci/buildd.sh [OUTDIR]
#
# OUTDIR (default: a temporary directory) receives the .debs and the test
# logs (tests/*.log, test-suite.log).  Prints each skipped test with its
# reason.  The root's tarball is cached (.ci/chroot-lib.sh), so a rerun
# downloads nothing; a changed Build-Depends makes a new one.
# BUILDD_FLAVOUR=t64 builds the t64 flavour instead.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
[ "$(id -u)" = 0 ] || { echo "buildd.sh: must run as root (chroot, mounts)"; exit 1; }
# shellcheck source=.ci/chroot-lib.sh
. .ci/chroot-lib.sh
flavour=${BUILDD_FLAVOUR:-default}

work=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-ci-buildd.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=${1:-$work/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ci_need mmdebstrap

control=packaging/debian/control
[ "$flavour" = default ] || control=packaging/debian-$flavour/control
# A changed Build-Depends makes a new root (the hooks read the control
# file, so its text is not among mmdebstrap's arguments).
bd_key=$(sed -n '/^Build-Depends/,/^[^ ]/p' "$control" | sha256sum | cut -c1-12)
# The control file goes in through a fixed path, so that the tarball's key
# (its mmdebstrap arguments and CI_KEY_EXTRA) stays the same between runs.
mkdir -p "$ci_cache"
cp "$control" "$ci_cache/buildd-$flavour.control"
tar=$(CI_KEY_EXTRA=$bd_key ci_tarball "buildd-$flavour" --variant=buildd \
	--customize-hook="mkdir -p \"\$1/root/bd/debian\"" \
	--customize-hook="upload $ci_cache/buildd-$flavour.control /root/bd/debian/control" \
	--customize-hook='chroot "$1" apt-get build-dep -y -q --no-install-recommends /root/bd' \
	--customize-hook='rm -rf "$1/root/bd"' \
	--customize-hook='chroot "$1" useradd -m -s /bin/sh builder')
root=$work/root
ci_unpack "$tar" "$root"

echo "=== what the root has (and lacks)"
for tool in gcc g++ make autoreconf dh pkg-config mandoc groff valgrind strace abidiff clang; do
	if chroot "$root" sh -c "command -v $tool" >/dev/null 2>&1; then
		printf '  %-10s yes\n' "$tool"
	else
		printf '  %-10s no\n' "$tool"
	fi
done
printf '  %-10s %s\n' "libaio1" "$(chroot "$root" dpkg-query -W -f='${Version}' libaio1 2>/dev/null || echo no)"
printf '  %-10s %s\n' "gcc -m32" "$(echo '#include <sys/types.h>' | chroot "$root" gcc -m32 -x c -c -o /dev/null - >/dev/null 2>&1 && echo yes || echo no)"

# The source as a fresh clone would have it (tracked and untracked-but-
# not-ignored files), owned by the build user.
mkdir -p "$root/home/builder/src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] || [ -L "$f" ] || continue
			cp -P --parents -- "$f" "$root/home/builder/src/"
		done
else
	tar -cf - --exclude='./build*' --exclude='./.git' . | tar -C "$root/home/builder/src" -xf -
fi
chroot "$root" chown -R builder:builder /home/builder

# parallel=N as Debian's build daemons set it, one job per CPU.
echo "=== dpkg-buildpackage with the tests on (flavour $flavour), /tmp on tmpfs, parallel=$(nproc)"
t0=$SECONDS
rc=0
ci_in_root "$root" "mount | grep ' /tmp ' ; exec su builder -c 'cd /home/builder/src &&
	DEB_BUILD_OPTIONS=parallel=$(nproc) \
	LIBAIO_DEB_KEEP=/home/builder/kept bash packaging/build-deb.sh --check \
	--flavour $flavour /home/builder/debs' > /home/builder/build.log 2>&1" || rc=$?
echo "build: exit $rc in $((SECONDS - t0)) s"
cp "$root/home/builder/build.log" "$out/"
kept=$root/home/builder/kept
if [ -d "$kept" ]; then
	mkdir -p "$out/tests"
	cp "$kept"/test-suite.log "$out/" 2>/dev/null || true
	cp "$kept"/tests/*.log "$out/tests/" 2>/dev/null || true
	echo "=== test summary"
	grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$kept/test-suite.log" 2>/dev/null ||
		sed -n '/^# TOTAL/,/^# ERROR/p' "$out/build.log" | head -7
	echo "=== skipped tests and why"
	for trs in "$kept"/tests/*.trs; do
		[ -f "$trs" ] || continue
		grep -q ':test-result: SKIP' "$trs" || continue
		log=${trs%.trs}.log
		echo "  $(basename "${trs%.trs}"): $(grep -m1 '^SKIP' "$log" || echo '(no reason printed)')"
	done
	echo "=== tests that ran in part (the rest skipped, with the reason)"
	grep -H '^SKIP (part)' "$kept"/tests/*.log 2>/dev/null | sed "s|^$kept/tests/|  |" || echo "  none"
	echo "=== Check programs: modes that skipped"
	grep -H '== mode .*: exit 77' "$kept"/tests/*.log 2>/dev/null | sed "s|^$kept/tests/|  |" || echo "  none"
fi
if [ "$rc" != 0 ]; then
	tail -n 80 "$out/build.log"
	exit "$rc"
fi
cp "$root"/home/builder/debs/*.deb "$out/"
ls -l "$out"/*.deb
rm -rf "$root"

if [ "${BUILDD_INSTALL_TEST:-1}" = 1 ]; then
	echo "=== installing what the buildd made into throw-away roots (.ci/deb.sh)"
	if [ "$flavour" = t64 ]; then
		bash .ci/deb.sh --t64 "$out"
	else
		bash .ci/deb.sh --debs "$out"
	fi
fi
echo "=== buildd job passed"
