#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs, on Debian 12, everything the build, the tests, the benchmark and
# the packaging need.  Safe to run again: apt-get skips what is there.
#   install-deps.sh [--with-i386]   the list below (with --with-i386, the
#                                   i386 parts for gcc -m32 by hand instead
#                                   of i386's cross compiler; the m32 job
#                                   asks itself)
# i386's cross compiler (crossbuild-essential-i386) compiles the check
# job's 32-bit header checks; gcc-multilib would too, but Debian 12 cannot
# install it beside any crossbuild-essential, which the cross and kernels
# jobs need: with one of them in the list, each run of every job would
# remove the other and install it back.
#   install-deps.sh --only PKG...   just these packages (what one CI job needs)
set -e
pkgs="build-essential autoconf automake libtool autoconf-archive pkg-config
check libsubunit-dev valgrind clang libclang-rt-dev liburing-dev libaio-dev
libaio1 fio qemu-utils strace abigail-tools mandoc groff man-db crossbuild-essential-i386
g++ dpkg-dev debhelper fakeroot rpm python3"
export DEBIAN_FRONTEND=noninteractive
case ${1:-} in
--only) shift; pkgs="$*" ;;
--with-i386)
	dpkg --print-foreign-architectures | grep -qx i386 || dpkg --add-architecture i386
	pkgs="$(echo "$pkgs" | sed 's/crossbuild-essential-i386/gcc-multilib/') check:i386 libsubunit-dev:i386 libaio1:i386 libc6-dev:i386" ;;
esac
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
[ -n "$missing" ] || exit 0
echo "=== installing on the host:$missing"
# Another install on the same machine may hold the dpkg lock (and apt's
# list lock during an update): wait for it, up to ten minutes, instead of
# failing at once.  apt-get (>= 1.9.11) does the waiting itself.
lock_wait="-o DPkg::Lock::Timeout=${APT_LOCK_TIMEOUT:-600}"
# A mirror caught mid-sync fails the update ("File has unexpected size"):
# try again after a pause, and if it still fails, go on with the lists
# there are; the install below says if they cannot serve.
# shellcheck disable=SC2086
apt-get $lock_wait update -qq || { sleep 30; apt-get $lock_wait update -qq; } ||
	echo "install-deps: apt-get update failed twice; using the package lists there are" >&2
# shellcheck disable=SC2086
apt-get $lock_wait install -y -qq --no-install-recommends $missing
