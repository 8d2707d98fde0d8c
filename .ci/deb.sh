#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "deb": the Debian packages of both flavours installed into
# throw-away roots (never into the host), used there, and the
# distribution's own packages put back.
#
#   .ci/deb.sh [DIR]
#
# DIR holds the packages as the buildd job leaves them: libaio1 and
# libaio-dev 1.0.0~deb12, libaio1t64 and libaio-dev 1.0.0~deb13, for amd64
# and i386.  Without DIR the amd64 ones are built here (nocheck) and parts
# 4 and 5, which need the i386 ones, report themselves skipped.
#
# Each root is a cached mmdebstrap tarball (.ci/chroot-lib.sh).
#  1. bookworm with Debian's fio, qemu-utils and so libaio1 0.3.113: ours
#     installed over them with dpkg -i; pkg-config, the pages, fio
#     --direct=1 and qemu-io --aio native on our library; the autopkgtest
#     tests (debian/tests) through autopkgtest's chroot backend; then a
#     program built against our libaio-dev, Debian 12's libaio1 and
#     libaio-dev put back (a downgrade), and the program and fio run on
#     Debian's library.
#  2. bookworm again: libaio1t64 replaces Debian's libaio1 (apt removes it;
#     fio stays through our Provides).
#  3. trixie with Debian 13's own libaio1t64, libaio-dev and fio: ours
#     installed over them, the autopkgtest tests, a program built against
#     our libaio-dev; then Debian 13's packages put back, and the program
#     (which needs libaio.so.1t64) and fio run on Debian's library.
#  4. bookworm for amd64 and i386 with Debian's libaio1 of both and a
#     program built against each: apt will not replace one architecture
#     alone (shown), so ours of both replace them in one apt call; both
#     programs then run in a VM, Debian 12's own kernel booted under
#     qemu-system-x86_64 (TCG) on that root as its initramfs, since this
#     host's kernel runs no i386 program; then Debian's put back.
#  5. the same in trixie with Debian 13's libaio1t64 of both
#     architectures and our libaio1t64 (in the VM, Debian 12's kernel
#     still: Debian 13 has no i386 kernel, and the amd64 one runs both).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "deb.sh: must run as root (chroot, mounts)"; exit 1; }
# shellcheck source=.ci/lib.sh
. .ci/lib.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-ci-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
ci_need mmdebstrap dpkg-dev debhelper autopkgtest qemu-system-x86 cpio libaio-dev
t_part=$SECONDS
took() { echo "=== $1 passed in $((SECONDS - t_part)) s"; t_part=$SECONDS; }

v12=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
v13=$(dpkg-parsechangelog -l packaging/debian-t64/changelog -S Version)
arch=$(dpkg --print-architecture)
debs=${1:-}
if [ -z "$debs" ]; then
	debs=$work/debs
	for flavour in default t64; do
		echo "=== building the $flavour-flavour packages (nocheck)"
		bash packaging/build-deb.sh --flavour "$flavour" "$debs" >"$work/build.log" 2>&1 ||
			{ tail -50 "$work/build.log"; exit 1; }
	done
fi
debs=$(cd "$debs" && pwd)
plain=("$debs/libaio1_${v12}_$arch.deb" "$debs/libaio-dev_${v12}_$arch.deb")
t64=("$debs/libaio1t64_${v13}_$arch.deb" "$debs/libaio-dev_${v13}_$arch.deb")
for f in "${plain[@]}" "${t64[@]}"; do
	[ -f "$f" ] || { echo "deb.sh: $f missing"; exit 1; }
done

# A program that uses only stock libaio calls (so it runs on the
# distribution's library too): it reads a file through AIO and prints
# which libaio file it has mapped.
cat > "$work/prog.c" <<'EOF'
#include <libaio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[] = "/tmp/progXXXXXX", buf[8] = "", line[512], *lib = NULL;
	struct iocb cb, *list[1] = { &cb };
	struct io_event ev;
	io_context_t ctx = 0;
	int fd = mkstemp(path), ok;
	FILE *maps = fopen("/proc/self/maps", "r");

	if (fd < 0 || write(fd, "data", 4) != 4 || io_setup(2, &ctx) != 0)
		return 2;
	unlink(path);
	io_prep_pread(&cb, fd, buf, 4, 0);
	ok = io_submit(ctx, 1, list) == 1 && io_getevents(ctx, 1, 1, &ev, NULL) == 1 &&
	     ev.res == 4 && memcmp(buf, "data", 4) == 0;
	io_destroy(ctx);
	while (!lib && maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "/libaio.so"))
			lib = strchr(line, '/');
	printf("%s: %zu-bit, libaio %s", argc ? argv[0] : "prog", 8 * sizeof(long),
	       lib ? lib : "not mapped\n");
	printf("%s: %s\n", argc ? argv[0] : "prog", ok ? "OK" : "FAILED");
	return !ok;
}
EOF

# The check after a package swap, in a root: build prog against the
# installed libaio-dev (ours), show what the binary package holding it
# would depend on, put the distribution's packages from /dist back, and
# run prog and fio on them.  $1: the runtime package, libaio1 or libaio1t64.
cat > "$work/downgrade.sh" <<'EOF'
runtime=$1
dist=$(dpkg-deb -f /dist/${runtime}_*.deb Version)
gcc -Wall -Werror -o prog prog.c $(pkg-config --cflags --libs libaio)
echo "prog records: $(readelf -d prog | sed -n 's/.*NEEDED.*\[\(libaio[^]]*\)\]/\1/p')"
mkdir -p shl/debian
printf 'Source: prog\n\nPackage: prog\nArchitecture: any\n' > shl/debian/control
dep=$(cd shl && dpkg-shlibdeps -O ../prog 2>/dev/null | grep -o "$runtime ([^)]*)")
echo "prog's package would depend on $dep; the distribution's $runtime is $dist"
min=${dep#*>= }
dpkg --compare-versions "$dist" ge "${min%)}" ||
	{ echo "the distribution's $runtime does not satisfy $dep"; exit 1; }
./prog | tee out
grep -q AIOREAP_1.0 "$(sed -n 's/.*libaio \(\/[^ ]*\)$/\1/p' out)"
echo "=== putting back the distribution's $(cd /dist && echo *.deb)"
dpkg -i /dist/*.deb 2>&1 | grep -iE 'downgrad|setting up'
[ -z "$(dpkg --audit)" ] || { dpkg --audit; exit 1; }
for p in $runtime libaio-dev; do
	[ "$(dpkg-query -W -f='${Version} ${db:Status-Abbrev}' $p)" = "$dist ii " ] ||
		{ dpkg-query -W $p; exit 1; }
done
./prog | tee out
lib=$(sed -n 's/.*libaio \(\/[^ ]*\)$/\1/p' out)
dpkg -S "$lib" | grep -q "^$runtime:" && ! grep -q AIOREAP_1.0 "$lib" ||
	{ echo "$lib is not the distribution's"; exit 1; }
fio --name=back --filename=/var/tmp/fio.dat --size=8M --rw=randrw --bs=4k \
	--ioengine=libaio --iodepth=8 --verify=crc32c --verify_fatal=1 \
	--output-format=terse --terse-version=3 | cut -d';' -f5 | grep -qx 0
echo "fio on the distribution's $runtime $dist: verify passed"
EOF

# fio on the installed library with async submission on for every
# context (LIBAIO_ASYNC=1), crc32c on every block: buffered random writes
# at iodepth 32 and their verify, then a random read of the whole file on
# a cold cache (fio drops its pages first) checked block by block; O_DIRECT
# random writes and their verify.
cat > "$work/fio-async.sh" <<'EOF'
f=/var/tmp/fio-async.dat
for job in "buffered-write --direct=0 --rw=randwrite --do_verify=1 --end_fsync=1" \
	"buffered-read --direct=0 --rw=randread --invalidate=1" \
	"direct-write --direct=1 --rw=randwrite --do_verify=1"; do
	# shellcheck disable=SC2086 # the job's name and options are words
	set -- $job
	name=$1
	shift
	LIBAIO_ASYNC=1 fio --name="$name" --filename=$f --size=32M --bs=4k \
		--ioengine=libaio --iodepth=32 --verify=crc32c --verify_fatal=1 "$@" \
		--output-format=terse --terse-version=3 > fio.out || { cat fio.out; exit 1; }
	awk -F';' -v n="$name" '{ printf "%s: error=%s read_kb=%s write_kb=%s\n", n, $5, $6, $47 }' fio.out
	[ "$(cut -d';' -f5 fio.out)" = 0 ] || { cat fio.out; exit 1; }
done
rm -f $f
echo "fio with LIBAIO_ASYNC=1: verify passed"
EOF

# run_autopkgtest DIR DEB...: debian/tests against DEB... in $root, with
# DIR's (packaging/debian or packaging/debian-t64) control and changelog,
# through autopkgtest's chroot backend (its unshare backend needs
# subordinate id ranges for root in /etc/subuid).  The tests'
# dependencies are all in the root, so its apt sources are emptied:
# nothing is downloaded.
run_autopkgtest() {
	local src=$work/autopkgtest-src rc=0
	echo "=== $part. autopkgtest (chroot backend)"
	rm -rf "$src" && mkdir -p "$src/debian"
	cp -R packaging/debian/tests packaging/debian/source "$1/control" "$1/changelog" "$src/debian/"
	shift
	: >"$root/etc/apt/sources.list"
	rm -f "$root"/etc/apt/sources.list.d/*
	ci_mounted "$root" autopkgtest --no-built-binaries --summary-file="$work/summary" \
		"$src/" "$@" -- chroot "$root" >"$work/autopkgtest.log" 2>&1 || rc=$?
	# The tests' own output, then the summary.
	sed -n '/: \[-----------------------$/,/: -----------------------\]$/p' \
		"$work/autopkgtest.log" | grep -v -- '-----------------------'
	sed 's/^/autopkgtest: /' "$work/summary"
	[ "$rc" = 0 ] || { tail -n 40 "$work/autopkgtest.log"; echo "autopkgtest: exit $rc"; return 1; }
}

# fresh_root TARBALL FILE...: $root unpacked anew, with FILE... in its /ci.
fresh_root() {
	ci_unpack "$1" "$root"
	shift
	mkdir -p "$root/ci"
	cp "$@" "$root/ci/"
}
# in_root TITLE SCRIPT [ARG...]: "=== PART. TITLE", then the root's
# /ci/SCRIPT, run from /ci with set -eu and with apt asking nothing.
# new_in_root TITLE SCRIPT: the same, SCRIPT written from standard input.
in_root() {
	echo "=== $part. $1"
	shift
	ci_in_root "$root" "cd /ci && export DEBIAN_FRONTEND=noninteractive && sh -eu /ci/$*"
}
new_in_root() {
	cat >"$root/ci/$2"
	in_root "$@"
}

# Hooks shared by the roots: Debian's own libaio packages saved in /dist
# (to put back later), and no man-db index rebuild at every install.
dist_hook() { # package...
	echo "--customize-hook=mkdir -p \"\$1/dist\" && chroot \"\$1\" sh -c 'cd /dist && apt-get download -q $*'"
}
nomandb='--customize-hook=rm -f "$1/var/lib/man-db/auto-update"'

part=1
tar=$(ci_tarball run --variant=apt \
	--include=fio,qemu-utils,gcc,libc6-dev,pkgconf,man-db,dpkg-dev,apt-utils \
	"$(dist_hook libaio1 libaio-dev)" "$nomandb")
root=$work/root
fresh_root "$tar" "${plain[@]}" "$work/prog.c" "$work/downgrade.sh" "$work/fio-async.sh"
new_in_root "libaio1 $v12 over Debian 12's libaio1" test1.sh <<'EOF'
echo "=== before: $(dpkg-query -W libaio1)"
dpkg -i ./libaio1_*.deb ./libaio-dev_*.deb
echo "=== after:  $(dpkg-query -W libaio1 libaio-dev | tr '\n' ' ')"
[ "$(dpkg-query -W -f='${Version}' libaio1)" = "$(dpkg-deb -f libaio1_*.deb Version)" ]
dpkg -s fio qemu-utils | grep -E '^(Package|Status)'

echo "=== pkg-config and pages"
pkg-config --modversion libaio
[ "$(pkg-config --modversion libaio)" = "$(dpkg-query -W -f='${Version}' libaio-dev | sed 's/[~-].*//')" ]
pkg-config --cflags --libs libaio
pkg-config --static --cflags --libs libaio
for f in man/man3/io_setup.3 man/man3/io.3 man/man3/io_getevents_time64.3 man/man7/libaio.7 doc/libaio-dev/NEWS; do
	[ -e /usr/share/$f.gz ] || { echo "/usr/share/$f.gz not installed"; exit 1; }
done
man -w io 2>/dev/null | grep -q 'man7/libaio.7' || man -w io

echo "=== the library fio and qemu-io load"
lib=$(ldd /usr/bin/fio | awk '$1 == "libaio.so.1" { print $3 }')
real=$(readlink -f "$lib")
echo "fio: $lib -> $real"
dpkg -S "$real" | grep -q '^libaio1:' || { echo "not from libaio1"; exit 1; }
grep -q AIOREAP_1.0 "$real" || { echo "$real is not ours (no AIOREAP_1.0)"; exit 1; }
qlib=$(ldd /usr/bin/qemu-io | awk '$1 == "libaio.so.1" { print $3 }')
[ "$(readlink -f "$qlib")" = "$real" ]

echo "=== fio, libaio engine, O_DIRECT, crc32c verify"
fio --name=verify-direct --filename=/var/tmp/fio.dat --size=32M \
	--rw=randrw --bs=4k --ioengine=libaio --iodepth=32 --direct=1 \
	--verify=crc32c --do_verify=1 --verify_fatal=1 --numjobs=1 \
	--output-format=terse --terse-version=3 > fio.out
awk -F';' '{ printf "error=%s read_kb=%s write_kb=%s\n", $5, $6, $47 }' fio.out
[ "$(cut -d';' -f5 fio.out)" = 0 ] || { cat fio.out; exit 1; }
rm -f /var/tmp/fio.dat

echo "=== fio, libaio engine, async submission (LIBAIO_ASYNC=1), crc32c verify"
sh -eu ./fio-async.sh

echo "=== qemu-io --aio native"
qemu-img create -q -f raw /var/tmp/q.img 64M
qemu-io -f raw -t none --aio native \
	-c 'write -P 0x5a 0 4M' -c 'aio_write -P 0x33 8M 1M' -c 'aio_flush' \
	-c 'read -P 0x5a 0 4M' -c 'aio_read -P 0x33 8M 1M' -c 'aio_flush' \
	-c 'read -P 0 16M 1M' /var/tmp/q.img > qemu-io.out 2>&1
cat qemu-io.out
! grep -qi 'fail\|error\|mismatch' qemu-io.out
rm -f /var/tmp/q.img
EOF
run_autopkgtest packaging/debian "${plain[@]}"
in_root "a program built against ours; Debian 12's packages put back" downgrade.sh libaio1
took "part 1"

part=2
fresh_root "$tar" "${t64[@]}" "$work/fio-async.sh"
new_in_root "libaio1t64 $v13 replaces Debian 12's libaio1" test2.sh <<'EOF'
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
sh -eu ./fio-async.sh
EOF
took "part 2"

part=3
tar13=$(ci_suite=trixie ci_tarball run --variant=apt \
	--include=fio,gcc,libc6-dev,pkgconf,libaio-dev,dpkg-dev,apt-utils \
	"$(dist_hook libaio1t64 libaio-dev)" "$nomandb")
fresh_root "$tar13" "${t64[@]}" "$work/prog.c" "$work/downgrade.sh"
# Debian 13's header, for part 5's programs.
dpkg-deb --fsys-tarfile "$root"/dist/libaio-dev_*.deb | tar -xOf - ./usr/include/libaio.h >"$work/libaio-13.h"
new_in_root "libaio1t64 $v13 over Debian 13's libaio1t64" test3.sh <<'EOF'
echo "=== before: $(dpkg-query -W libaio1t64 libaio-dev fio | tr '\n' ' ')"
apt-get install -y -q /ci/libaio1t64_*.deb /ci/libaio-dev_*.deb
echo "=== after: $(dpkg-query -W libaio1t64 libaio-dev fio | tr '\n' ' ')"
for p in libaio1t64 libaio-dev fio; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" | grep -q '^ii' || { echo "$p not installed"; exit 1; }
done
[ "$(dpkg-query -W -f='${Version}' libaio1t64)" = "$(dpkg-deb -f libaio1t64_*.deb Version)" ]
ls -l /usr/lib/*/libaio.so*
lib=$(ldd /usr/bin/fio | awk '$1 == "libaio.so.1t64" { print $3 }')
echo "fio: $lib -> $(readlink -f "$lib")"
grep -q AIOREAP_1.0 "$(readlink -f "$lib")"
EOF
run_autopkgtest packaging/debian-t64 "${t64[@]}"
in_root "a program built against ours; Debian 13's packages put back" downgrade.sh libaio1t64
took "part 3"

# multiarch_part SUITE RUNTIME VERSION HEADER OURS DISTS: the Debian
# release SUITE for amd64 and i386 with its own RUNTIME package (libaio1,
# libaio1t64) of both architectures and a program built against each, with
# HEADER (that release's libaio.h) as any program built there: apt will not
# replace one architecture alone (shown), so ours (VERSION) of both replace
# them in one apt call; both programs then run in a VM, Debian 12's own
# kernel booted under qemu-system-x86_64 (TCG) on that root as its
# initramfs, since this host's kernel runs no i386 program.  OURS and DISTS
# are the file names our RUNTIME and the release's give the library.
multiarch_part() {
	local suite=$1 runtime=$2 ver=$3 header=$4 ours=$5 dists=$6
	local so=libaio.so.${runtime#libaio} tar ktar ma64 ma32 want
	local own=("$debs/${runtime}_${ver}_$arch.deb" "$debs/libaio-dev_${ver}_$arch.deb"
		"$debs/${runtime}_${ver}_i386.deb" "$debs/libaio-dev_${ver}_i386.deb")
	# mount: the VM's /init mounts /proc (the apt variant has only what
	# is Essential).  gcc-multilib builds the programs in the root: on the
	# host it would conflict with the cross job's toolchains (each removes
	# the other), so the host's own gcc builds nothing here.
	tar=$(ci_suite=$suite ci_tarball multiarch --variant=apt --architectures="$arch,i386" \
		--include="$runtime:$arch,$runtime:i386,mount,gcc-multilib" \
		"$(dist_hook "$runtime:$arch" "$runtime:i386")")
	fresh_root "$tar" "${own[@]}" "$work/prog.c"
	cp "$header" "$root/ci/libaio.h"
	ma64=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH)
	ma32=$(dpkg-architecture -ai386 -qDEB_HOST_MULTIARCH)
	# Programs built against the release's library of each architecture
	# and its header.
	ci_in_root "$root" "cd /ci &&
		gcc -O2 -Wall -Werror -I. -o prog-$arch prog.c /usr/lib/$ma64/$so &&
		gcc -m32 -O2 -Wall -Werror -I. -o prog-i386 prog.c /usr/lib/$ma32/$so"
	new_in_root "$runtime $ver for amd64 and i386 over $suite's, in one apt call" swap.sh "$runtime" "$so" <<'EOF'
runtime=$1 so=$2
echo "=== before: $(dpkg-query -W "$runtime:*" | tr '\n' ' ')"
echo "=== apt, asked for the amd64 package alone, would remove the other:"
apt-get -s install ./"$runtime"_*_amd64.deb 2>&1 | grep -E "^(Inst|Remv) $runtime" | tee apt-one.out
grep -q "^Remv $runtime:i386" apt-one.out
apt-get install -y -q ./"$runtime"_*.deb ./libaio-dev_*.deb
echo "=== after:"
dpkg-query -W -f='${binary:Package} ${Version} ${db:Status-Abbrev}\n' "$runtime:*" 'libaio-dev:*' | tee after.out
[ "$(grep -c " $(dpkg-deb -f ./"$runtime"_*_amd64.deb Version) ii" after.out)" = 4 ]
[ -z "$(dpkg --audit)" ] || { dpkg --audit; exit 1; }
for f in /usr/lib/*/"$so"; do
	echo "$f -> $(readlink -f "$f")"
	grep -q AIOREAP_1.0 "$(readlink -f "$f")"
done
EOF
	# The VM: Debian 12's kernel (IA32 emulation on), this root unpacked
	# from an initramfs, /init running both programs and powering off.
	# Debian 13 ships no i386 kernel at all, and Debian 12's amd64 one
	# runs a Debian 13 root's programs of both architectures as well
	# (its C library asks for no newer kernel), so one kernel serves both
	# releases.
	ktar=$(ci_tarball kernel --variant=extract --include=linux-image-amd64 \
		--extract-hook='mv "$1"/boot/vmlinuz-* "$1/vmlinuz" && rm -rf "$1/lib" "$1/usr" "$1/boot" "$1/bin" "$1/sbin"')
	tar -xOf "$ktar" ./vmlinuz >"$work/vmlinuz"
	cat > "$root/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t tmpfs tmpfs /tmp
echo "vm: $(cat /proc/version)"
for p in /ci/prog-*; do
	if "$p"; then echo "vm: $p passed"; else echo "vm: $p FAILED"; fi
done
echo o >/proc/sysrq-trigger
sleep 60
EOF
	chmod +x "$root/init"
	# Less to load: what the programs and /init never touch stays out.
	(cd "$root" && find . -xdev \( -path ./usr/share -o -path ./var/cache -o -path ./var/lib/apt \
		-o -path ./usr/include -o -path './usr/lib/*/perl*' -o -path './usr/lib/*/gconv' \
		-o -path ./usr/lib/gcc -o -path ./usr/libexec \) -prune \
		-o -print | cpio -o -H newc --quiet) >"$work/root.cpio"
	echo "=== $part. booting $(du -h "$work/vmlinuz" | cut -f1) kernel, $(du -h "$work/root.cpio" | cut -f1) initramfs under qemu-system-x86_64 (TCG)"
	ci_boot amd64 1024 900 "$work/vmlinuz" "$work/root.cpio" "$work/vm.log"
	tr -d '\r' <"$work/vm.log" | grep -E '^(vm|/ci/prog-)' | tee "$work/vm.out" || true
	for want in "vm: /ci/prog-$arch passed" "vm: /ci/prog-i386 passed" \
		"/ci/prog-$arch: 64-bit, libaio /usr/lib/$ma64/$ours" \
		"/ci/prog-i386: 32-bit, libaio /usr/lib/$ma32/$ours"; do
		grep -qxF "$want" "$work/vm.out" || { tail -n 30 "$work/vm.log"; echo "VM: no line '$want'"; return 1; }
	done
	# Going back is the same: both architectures in one call (apt removes
	# our libaio-dev, which needs our runtime package); the amd64 program
	# runs here, on the release's library again.
	new_in_root "$suite's $runtime for amd64 and i386 put back, in one apt call" back.sh \
		"$runtime" "$arch" "/usr/lib/$ma64/$dists" <<'EOF'
runtime=$1 arch=$2 lib=$3
apt-get install -y -q --allow-downgrades /dist/"$runtime"_*_"$arch".deb /dist/"$runtime"_*_i386.deb |
	grep -E '^(Remv|Removing|Setting up)'
dpkg-query -W -f='${binary:Package} ${Version} ${db:Status-Abbrev}\n' "$runtime:*" | tee back.out
[ "$(grep -c " $(dpkg-deb -f /dist/"$runtime"_*_i386.deb Version) ii" back.out)" = 2 ]
[ -z "$(dpkg --audit)" ] || { dpkg --audit; exit 1; }
./prog-"$arch"
./prog-"$arch" | grep -q "libaio $lib\$"
EOF
}

for f in "$debs/libaio1_${v12}_i386.deb" "$debs/libaio-dev_${v12}_i386.deb" \
	"$debs/libaio1t64_${v13}_i386.deb" "$debs/libaio-dev_${v13}_i386.deb"; do
	[ -f "$f" ] && continue
	echo "=== 4, 5. SKIP: no $(basename "$f") in $debs (the buildd job cross-builds the i386 packages)"
	echo "=== deb job passed, parts 4 and 5 skipped"
	exit 0
done
part=4
# The header: the host's Debian 12 libaio-dev's.
multiarch_part bookworm libaio1 "$v12" /usr/include/libaio.h libaio.so.1.1.0 libaio.so.1.0.2
took "part 4"
part=5
multiarch_part trixie libaio1t64 "$v13" "$work/libaio-13.h" libaio.so.1t64 libaio.so.1t64.0.2
took "part 5"
echo "=== deb job passed"
