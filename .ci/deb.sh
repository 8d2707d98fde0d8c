#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "deb": install the Debian packages into a throw-away Debian 12
# root (never into the host) and use them there.
#
#   .ci/deb.sh [--debs DIR] [--t64 DIR]
#
# --debs DIR: the default-flavour packages (libaio1, libaio-dev) to test;
#   without it they are built here with packaging/build-deb.sh (nocheck:
#   job "buildd" builds them with the tests on).
# --t64 DIR: the t64-flavour packages (libaio1t64, libaio-dev); without it
#   they are built here too.
#
# The root is a cached mmdebstrap tarball (.ci/chroot-lib.sh) of bookworm
# with the distribution's fio and qemu-utils, hence its libaio1 0.3.113,
# and a compiler.  In it:
#  1. our libaio1 and libaio-dev are installed over Debian's (an upgrade by
#     version); pkg-config, the pages, a client linked dynamically and
#     statically; fio (--ioengine=libaio --verify=crc32c, buffered and
#     --direct=1) and qemu-io --aio native run on our library, which is
#     checked to be the one they load.
#  2. in a fresh root, our libaio1t64 replaces Debian's libaio1 (apt
#     removes libaio1; fio, which depends on libaio1, stays through our
#     Provides).
#  3. in a fresh root, a stand-in for Debian 13's libaio1t64 0.3.113-8
#     (made here with dpkg-deb: same name, Provides libaio1, Breaks libaio1
#     (<< 0.3.113-6), Replaces libaio1, ships libaio.so.1t64) and a package
#     that depends on libaio1t64 are installed; ours upgrades it, the
#     dependent package stays, and a program whose DT_NEEDED is
#     libaio.so.1t64 runs on our library.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
[ "$(id -u)" = 0 ] || { echo "deb.sh: must run as root (chroot, mounts)"; exit 1; }
# shellcheck source=.ci/chroot-lib.sh
. .ci/chroot-lib.sh

debs='' t64=''
while [ $# -gt 0 ]; do
	case $1 in
	--debs) debs=$2; shift ;;
	--t64) t64=$2; shift ;;
	*) echo "deb.sh: unknown argument $1"; exit 2 ;;
	esac
	shift
done

work=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-ci-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
ci_need mmdebstrap dpkg-dev debhelper

if [ -z "$debs" ]; then
	echo "=== building the packages (nocheck)"
	debs=$work/debs
	bash packaging/build-deb.sh "$debs" >"$work/build.log" 2>&1 ||
		{ tail -50 "$work/build.log"; exit 1; }
fi
if [ -z "$t64" ]; then
	echo "=== building the t64-flavour packages (nocheck)"
	t64=$work/debs-t64
	bash packaging/build-deb.sh --flavour t64 "$t64" >"$work/build-t64.log" 2>&1 ||
		{ tail -50 "$work/build-t64.log"; exit 1; }
fi
ls "$debs"/*.deb "$t64"/*.deb

tar=$(ci_tarball run --variant=apt \
	--include=fio,qemu-utils,gcc,libc6-dev,pkgconf,man-db)
root=$work/root

# --- 1. libaio1 + libaio-dev over Debian's libaio1 -----------------------
ci_unpack "$tar" "$root"
mkdir -p "$root/ci"
cp "$debs"/libaio1_*.deb "$debs"/libaio-dev_*.deb "$root/ci/"
cat > "$root/ci/client.c" <<'CEOF'
#include <libaio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char path[] = "/var/tmp/aioreap-ci-clientXXXXXX", buf[16] = "";
	struct iocb cb, *list[1] = { &cb };
	struct io_event ev;
	io_context_t ctx = 0;
	int fd = mkstemp(path), ret;

	if (fd < 0 || write(fd, "hello", 5) != 5)
		return 1;
	unlink(path);
	if ((ret = io_setup(4, &ctx)) < 0) {
		fprintf(stderr, "io_setup: %s\n", strerror(-ret));
		return 1;
	}
	io_prep_pread(&cb, fd, buf, sizeof(buf) - 1, 0);
	if (io_submit(ctx, 1, list) != 1 || io_getevents(ctx, 1, 1, &ev, NULL) != 1)
		return 1;
	if ((long)ev.res != 5 || strcmp(buf, "hello") != 0)
		return 1;
	printf("features %#x, reaper %d\n", io_features(), io_reaper_active(ctx));
	io_destroy(ctx);
	printf("OK\n");
	return 0;
}
CEOF
cat > "$root/ci/test1.sh" <<'EOF'
set -eu
cd /ci
echo "=== before: $(dpkg-query -W libaio1)"
dpkg -i ./libaio1_*.deb ./libaio-dev_*.deb
echo "=== after:  $(dpkg-query -W libaio1 libaio-dev | tr '\n' ' ')"
[ "$(dpkg-query -W -f='${Version}' libaio1)" = "$(dpkg-deb -f libaio1_*.deb Version)" ]
dpkg -s fio qemu-utils | grep -E '^(Package|Status)'

echo "=== pkg-config"
pkg-config --modversion libaio
[ "$(pkg-config --modversion libaio)" = "$(dpkg-query -W -f='${Version}' libaio-dev | sed 's/[~-].*//')" ]
pkg-config --cflags --libs libaio
pkg-config --static --cflags --libs libaio
for page in io_setup.3 io.3 io_getevents_time64.3; do
	[ -e /usr/share/man/man3/$page.gz ] || { echo "$page not installed"; exit 1; }
done
[ -e /usr/share/man/man7/libaio.7.gz ]
[ -e /usr/share/doc/libaio-dev/NEWS.gz ]
man -w io 2>/dev/null | grep -q 'man7/libaio.7' || man -w io

echo "=== the library fio and qemu-io load"
lib=$(ldd /usr/bin/fio | awk '$1 == "libaio.so.1" { print $3 }')
real=$(readlink -f "$lib")
echo "fio: $lib -> $real"
dpkg -S "$real" | grep -q '^libaio1:' || { echo "not from libaio1"; exit 1; }
grep -q AIOREAP_1.0 "$real" || { echo "$real is not ours (no AIOREAP_1.0)"; exit 1; }
qlib=$(ldd /usr/bin/qemu-io | awk '$1 == "libaio.so.1" { print $3 }')
[ "$(readlink -f "$qlib")" = "$real" ]

echo "=== client (dynamic and static)"
gcc -Wall -Werror -o client client.c $(pkg-config --cflags --libs libaio)
./client | tail -n 1 | grep -qx OK
gcc -static -o client-static client.c $(pkg-config --static --cflags --libs libaio)
./client-static | tail -n 1 | grep -qx OK

echo "=== fio, libaio engine, crc32c verify"
for direct in 0 1; do
	fio --name=verify-direct$direct --filename=/var/tmp/fio.dat --size=32M \
		--rw=randrw --bs=4k --ioengine=libaio --iodepth=32 --direct=$direct \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --numjobs=1 \
		--output-format=terse --terse-version=3 > fio-$direct.out
	awk -F';' '{ printf "direct=%s: error=%s read_kb=%s write_kb=%s\n", '"$direct"', $5, $6, $47 }' fio-$direct.out
	[ "$(cut -d';' -f5 fio-$direct.out)" = 0 ] || { cat fio-$direct.out; exit 1; }
done
rm -f /var/tmp/fio.dat

echo "=== qemu-io --aio native"
qemu-img create -q -f raw /var/tmp/q.img 64M
qemu-io -f raw -t none --aio native \
	-c 'write -P 0x5a 0 4M' -c 'aio_write -P 0x33 8M 1M' -c 'aio_flush' \
	-c 'read -P 0x5a 0 4M' -c 'aio_read -P 0x33 8M 1M' -c 'aio_flush' \
	-c 'read -P 0 16M 1M' /var/tmp/q.img > qemu-io.out 2>&1
cat qemu-io.out
! grep -qi 'fail\|error\|mismatch' qemu-io.out
rm -f /var/tmp/q.img
echo "=== part 1 passed"
EOF
echo "=== 1. libaio1 $(dpkg-deb -f "$debs"/libaio1_*.deb Version) over Debian's libaio1"
ci_in_root "$root" "sh /ci/test1.sh"

# --- 2. libaio1t64 replaces Debian's libaio1 -----------------------------
ci_unpack "$tar" "$root"
mkdir -p "$root/ci"
cp "$t64"/libaio1t64_*.deb "$t64"/libaio-dev_*.deb "$root/ci/"
cat > "$root/ci/test2.sh" <<'EOF'
set -eu
cd /ci
echo "=== before: $(dpkg-query -W libaio1 fio | tr '\n' ' ')"
apt-get install -y -q /ci/libaio1t64_*.deb /ci/libaio-dev_*.deb
dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' libaio1t64 libaio-dev fio libaio1 2>&1 || true
dpkg-query -W -f='${db:Status-Abbrev}' libaio1 2>/dev/null | grep -q '^ii' && { echo "libaio1 still installed"; exit 1; }
dpkg-query -W -f='${db:Status-Abbrev}' fio | grep -q '^ii'
dpkg-query -W -f='${db:Status-Abbrev}' qemu-utils | grep -q '^ii'
dpkg -L libaio1t64 | grep -E 'libaio\.so\.1(t64)?$'
lib=$(ldd /usr/bin/fio | awk '$1 == "libaio.so.1" { print $3 }')
grep -q AIOREAP_1.0 "$(readlink -f "$lib")"
fio --name=t64 --filename=/var/tmp/fio.dat --size=8M --rw=randrw --bs=4k \
	--ioengine=libaio --iodepth=8 --direct=1 --verify=crc32c --verify_fatal=1 \
	--output-format=terse --terse-version=3 | cut -d';' -f5 | grep -qx 0
echo "=== part 2 passed"
EOF
echo "=== 2. libaio1t64 $(dpkg-deb -f "$t64"/libaio1t64_*.deb Version) replaces Debian's libaio1"
ci_in_root "$root" "sh /ci/test2.sh"

# --- 3. over a stand-in for Debian 13's libaio1t64 -----------------------
ci_unpack "$tar" "$root"
mkdir -p "$root/ci"
cp "$t64"/libaio1t64_*.deb "$t64"/libaio-dev_*.deb "$root/ci/"
arch=$(dpkg-deb -f "$t64"/libaio1t64_*.deb Architecture)
multiarch=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH)
# The stand-in's library: the same file Debian 13 ships, libaio.so.1t64,
# with that soname; a stub defining the LIBAIO_0.4 io_setup is enough to
# link a program against it and to see which library it ends up using.
mk=$work/standin
mkdir -p "$mk/lib" "$mk/pkg/DEBIAN" "$mk/pkg/usr/lib/$multiarch" "$mk/dep/DEBIAN"
printf 'LIBAIO_0.1 { local: *; };\nLIBAIO_0.4 { global: io_setup; io_destroy; } LIBAIO_0.1;\n' >"$mk/lib/map"
printf 'int io_setup(int n, void *c) { (void)n; (void)c; return -38; }\nint io_destroy(void *c) { (void)c; return -38; }\n' >"$mk/lib/stub.c"
gcc -shared -fPIC -o "$mk/pkg/usr/lib/$multiarch/libaio.so.1t64.0.2" \
	-Wl,-soname,libaio.so.1t64 -Wl,--version-script="$mk/lib/map" "$mk/lib/stub.c"
ln -s libaio.so.1t64.0.2 "$mk/pkg/usr/lib/$multiarch/libaio.so.1t64"
cat > "$mk/pkg/DEBIAN/control" <<EOF
Package: libaio1t64
Source: libaio
Version: 0.3.113-8
Architecture: $arch
Multi-Arch: same
Maintainer: stand-in <ci@localhost>
Provides: libaio1 (= 0.3.113-8)
Breaks: libaio1 (<< 0.3.113-6)
Replaces: libaio1
Description: stand-in for Debian 13's libaio1t64 (CI only)
EOF
dpkg-deb -Zgzip --root-owner-group --build "$mk/pkg" "$root/ci/standin-libaio1t64.deb" >/dev/null
cat > "$mk/dep/DEBIAN/control" <<EOF
Package: needs-libaio1t64
Version: 1.0
Architecture: all
Maintainer: stand-in <ci@localhost>
Depends: libaio1t64 (>= 0.3.113-6)
Description: a package built on Debian 13 against libaio1t64 (CI only)
EOF
dpkg-deb -Zgzip --root-owner-group --build "$mk/dep" "$root/ci/needs-libaio1t64.deb" >/dev/null
# A program whose DT_NEEDED is libaio.so.1t64, as on Debian 13.
cat > "$mk/lib/prog.c" <<'EOF'
#include <stdio.h>
#include <string.h>
int io_setup(int n, void *c);
int io_destroy(void *c);
int main(void)
{
	void *ctx = 0;
	int r = io_setup(4, &ctx);
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "libaio"))
			printf("maps: %s", strchr(line, '/'));
	printf("io_setup: %d\n", r);
	if (r == 0)
		io_destroy(ctx);
	return r;
}
EOF
gcc -o "$root/ci/prog-t64" "$mk/lib/prog.c" "$mk/pkg/usr/lib/$multiarch/libaio.so.1t64"
readelf -d "$root/ci/prog-t64" | grep -q 'NEEDED.*\[libaio\.so\.1t64\]'
cat > "$root/ci/test3.sh" <<'EOF'
set -eu
cd /ci
apt-get install -y -q /ci/standin-libaio1t64.deb
apt-get install -y -q /ci/needs-libaio1t64.deb
echo "=== with the stand-in: $(dpkg-query -W libaio1t64 needs-libaio1t64 fio | tr '\n' ' ')"
./prog-t64 && { echo "the stand-in should answer -ENOSYS"; exit 1; } || true
apt-get install -y -q /ci/libaio1t64_*.deb /ci/libaio-dev_*.deb
echo "=== with ours: $(dpkg-query -W libaio1t64 libaio-dev needs-libaio1t64 fio | tr '\n' ' ')"
for p in libaio1t64 libaio-dev needs-libaio1t64 fio; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" | grep -q '^ii' || { echo "$p not installed"; exit 1; }
done
[ "$(dpkg-query -W -f='${Version}' libaio1t64)" = "$(dpkg-deb -f libaio1t64_*.deb Version)" ]
out=$(./prog-t64)
echo "$out"
echo "$out" | grep -q '^io_setup: 0$'
echo "$out" | grep -q 'libaio\.so\.1t64$'
echo "=== part 3 passed"
EOF
echo "=== 3. libaio1t64 over a stand-in for Debian 13's libaio1t64 0.3.113-8"
ci_in_root "$root" "sh /ci/test3.sh"
rm -rf "$root"
echo "=== deb job passed"
