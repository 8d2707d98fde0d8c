#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "kernels": the Check suite on Debian 12's own kernel for each
# architecture, booted under qemu-system (TCG: no KVM needed) with two
# emulated CPUs.  For each architecture:
#  - a root with the kernel package, busybox-static, check and the C
#    library comes from `mmdebstrap --variant=extract --architectures=ARCH`
#    (cached as a tarball by .ci/chroot-lib.sh; kernel modules, docs and
#    locales are left out: the initramfs needs none);
#  - the library and the Check programs are cross-built with Debian's
#    cross toolchain and --enable-werror (armhf with -D_TIME_BITS=64
#    -D_FILE_OFFSET_BITS=64, Debian 13's default flags there; i386 plain);
#  - one uncompressed initramfs holds busybox, the dynamic loader and the
#    libraries the programs need, our libaio.so.1, the programs and
#    tests/all-modes.sh; its /init prints uname -m, the kernel release,
#    the page size, the byte order and the CPU count, runs every program in
#    the library's modes and powers off;
#  - the console log comes back on the serial line (a hard timeout ends a
#    guest that hangs).
# The job fails if a guest is not the expected machine (uname -m, page
# size, byte order, the kernel release of the package booted), if any
# program fails, or if anything skips: every test can run on these kernels
# (AIO, aio poll, io_pgetevents and seccomp are all there), so a skip
# means a missing kernel feature or a broken build.
#
#   .ci/kernels.sh [ARCH...]      (default: i386 arm64 armhf ppc64el s390x)
#
# Environment: KERNELS_MODES replaces every architecture's mode list;
# KERNELS_TIMEOUT (seconds, default 900) bounds each guest;
# LIBAIO_STRESS_N (default 20000 here) sizes test-reaper's exactly-once
# stress, which test-arch repeats with threads pinned to both CPUs;
# BUILD_BASE (default $TMPDIR/aioreap-kernels) holds the builds.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
[ "$(id -u)" = 0 ] || { echo "kernels.sh: must run as root (apt-get, mmdebstrap)"; exit 1; }
# shellcheck source=.ci/lib.sh
. .ci/lib.sh
archs=${*:-"i386 arm64 armhf ppc64el s390x"}
base=${BUILD_BASE:-${TMPDIR:-/tmp}/aioreap-kernels}
jobs=$(nproc 2>/dev/null || echo 2)
# Two of the library's six modes: natively, and with every fallback forced
# (LIBAIO_DISABLE=all); all six would take three times as long under TCG.
# KERNELS_MODES="native poll pgetevents ring all seccomp-pgetevents" runs
# them all.
default_modes="native all"

# The GNU triplet of a Debian architecture: its cross toolchain's prefix.
arch_triplet() {
	case $1 in
	arm64) echo aarch64-linux-gnu ;;
	armhf) echo arm-linux-gnueabihf ;;
	ppc64el) echo powerpc64le-linux-gnu ;;
	s390x) echo s390x-linux-gnu ;;
	i386) echo i686-linux-gnu ;;
	*) echo "arch_triplet: unknown architecture $1" >&2; return 1 ;;
	esac
}

# The one table: kernel package flavour, qemu command line, console,
# uname -m, page size, byte order, extra configure arguments, modes.
arch_row() {
	kflav='' qemu='' con='' mach='' page=4096 endian=little conf='' modes=$default_modes
	case $1 in
	i386) kflav=686-pae con=ttyS0 mach=i686
		qemu="qemu-system-i386 -M pc -cpu max" ;;
	arm64) kflav=arm64 con=ttyAMA0 mach=aarch64
		qemu="qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on" ;;
	armhf) kflav=armmp-lpae con=ttyAMA0 mach=armv7l
		qemu="qemu-system-arm -M virt -cpu cortex-a15"
		conf="CPPFLAGS=-D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64" ;;
	ppc64el) kflav=powerpc64le con=hvc0 mach=ppc64le page=65536
		# No USB, display or firmware-side mitigations TCG lacks.
		qemu="qemu-system-ppc64 -M pseries,usb=off,cap-cfpc=broken,cap-sbbc=broken,cap-ibs=broken,cap-ccf-assist=off -vga none" ;;
	s390x) kflav=s390x con=ttysclp0 mach=s390x endian=big
		qemu="qemu-system-s390x -M s390-ccw-virtio -cpu max" ;;
	*) echo "kernels.sh: no recipe for $1" >&2; return 1 ;;
	esac
	modes=${KERNELS_MODES:-$modes}
}

need=(mmdebstrap cpio)
for a in $archs; do
	arch_row "$a"
	# Each of these removes gcc-multilib (Debian 12's cross compilers
	# conflict with it): the m32 job, which needs it, runs first.
	need+=("crossbuild-essential-$a")
	case $a in
	i386) need+=(qemu-system-x86) ;;
	arm64|armhf) need+=(qemu-system-arm) ;;
	ppc64el) need+=(qemu-system-ppc) ;;
	s390x) need+=(qemu-system-misc) ;;
	esac
done
ci_need $(printf '%s\n' "${need[@]}" | sort -u)
[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)

# The guest's /init (busybox sh).  /t/env names the programs and modes.
guest_init() {
	cat <<'EOF'
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/ TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o size=512m tmpfs /tmp
. /t/env
case $(printf '\001\000' | od -An -tu2 | tr -d ' ') in
1) endian=little ;; *) endian=big ;;
esac
kib=$(sed -n 's/^KernelPageSize: *\([0-9]*\) kB/\1/p' /proc/self/smaps | head -n 1)
echo "@@ machine $(uname -m) release $(uname -r) page $((${kib:-0} * 1024)) endian $endian cpus $(grep -c ^processor /proc/cpuinfo)"
echo "@@ version $(cat /proc/version)"
for p in $PROGS; do
	t0=$(date +%s)
	sh /t/all-modes.sh "/t/$p" >/tmp/out 2>&1
	rc=$?
	echo "@@ begin $p"
	cat /tmp/out
	echo "@@ end $p rc $rc secs $(($(date +%s) - t0))"
done
echo "@@ done"
poweroff -f
EOF
}

# copy_libs ROOT DEST MULTIARCH FILE...: the shared libraries FILE needs,
# recursively, from ROOT's library directories into DEST/lib/MULTIARCH.
copy_libs() {
	local root=$1 dest=$2 ma=$3 f lib
	shift 3
	for f in "$@"; do
		for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			[ -e "$dest/lib/$ma/$lib" ] && continue
			for d in "$root/lib/$ma" "$root/usr/lib/$ma"; do
				[ -e "$d/$lib" ] || continue
				cp -L "$d/$lib" "$dest/lib/$ma/"
				copy_libs "$root" "$dest" "$ma" "$dest/lib/$ma/$lib"
				break
			done
		done
	done
}

# report ARCH LOG: check the guest's identity and count what ran.  Prints
# one summary line; returns 1 when anything failed or skipped.
report() {
	local a=$1 raw=$2 log=$2.txt bad=0 id ran skipped failed
	arch_row "$a"
	# The kernel may write to the console in the middle of a line of ours:
	# every "@@ " marker starts a line of its own here.
	tr -d '\r' <"$raw" | sed 's/.*@@ /@@ /' >"$log"
	id=$(sed -n 's/^@@ machine //p' "$log" | tr -d '\r')
	echo "  booted: $(sed -n 's/^@@ version //p' "$log" | tr -d '\r')"
	# shellcheck disable=SC2086
	set -- $id
	# MACHINE release RELEASE page BYTES endian ORDER cpus N
	[ "${1:-}" = "$mach" ] || { echo "  FAILED: uname -m is '${1:-?}', not $mach"; bad=1; }
	[ "${3:-}" = "$release" ] || { echo "  FAILED: kernel '${3:-?}' is not the package's $release"; bad=1; }
	[ "${5:-}" = "$page" ] || { echo "  FAILED: page size ${5:-?}, not $page"; bad=1; }
	[ "${7:-}" = "$endian" ] || { echo "  FAILED: ${7:-?}-endian, not $endian"; bad=1; }
	[ "${9:-}" = 2 ] || { echo "  FAILED: ${9:-?} CPUs, not 2"; bad=1; }
	grep -q '^@@ done' "$log" || { echo "  FAILED: the guest did not finish"; tail -n 40 "$log"; bad=1; }
	# Tests: each Check test in each mode, and each plain program's run.
	# A mode of a plain program, or of a Check program that died before
	# its summary, counts as one test.
	read -r ran failed <<<"$(tr -d '\r' <"$log" | awk '
		/^[0-9]+%: Checks: / { gsub(/,/, ""); r += $3; f += $5 + $7; sum = 1; next }
		/^== mode .*: exit / { if (!sum) { r++; if ($NF != 0 && $NF != 77) f++ } sum = 0 }
		END { print r + 0, f + 0 }')"
	# Whole programs (exit 77) and the tests that skip themselves, in the
	# programs' output only (ppc64el's boot says "prom_hold_cpus: skipped").
	skips=$(tr -d '\r' <"$log" | sed -n '/^@@ begin /,/^@@ end /p' | grep -E '^SKIP|: exit 77$|skipped|no seccomp filter' |
		grep -v ' 0 skipped under valgrind$' || true)
	skipped=$(printf '%s' "$skips" | grep -c . || true)
	if [ "$skipped" != 0 ]; then
		echo "  FAILED: skips (every test must run on this kernel):"
		printf '%s\n' "$skips" | sort | uniq -c | sed 's/^/    /'
		bad=1
	fi
	local p rc
	while read -r p rc; do
		[ "$rc" = 0 ] && continue
		echo "==== $a: $p exited $rc"
		tr -d '\r' <"$log" | sed -n "/^@@ begin $p\$/,/^@@ end $p /p" | tail -n 60
		bad=1
	done < <(tr -d '\r' <"$log" | sed -n 's/^@@ end \([^ ]*\) rc \([0-9]*\) .*/\1 \2/p')
	summary="$a: kernel $release, page $((page / 1024)) KiB, $endian-endian, $(echo "$modes" | wc -w) modes: $ran tests run, $skipped skipped, $failed failed"
	return $bad
}

run_arch() {
	local a=$1 t ma root b st tar k prog p
	arch_row "$a"
	t=$(arch_triplet "$a")
	ma=$("$t-gcc" -print-multiarch)
	tar=$(ci_tarball "kernel-$a" --variant=extract --architectures="$a" \
		--include="linux-image-$kflav,busybox-static,check,libsubunit0,libc6,libgcc-s1" \
		--extract-hook='rm -rf "$1/lib/modules" "$1/usr/lib/modules" "$1/usr/lib/linux-image-"* "$1/usr/share/doc" "$1/usr/share/man" "$1/usr/share/locale"')
	root=$base/root-$a
	ci_unpack "$tar" "$root"
	k=$(ls "$root"/boot/vmlinu[xz]-* | head -n 1)
	release=${k##*/vmlinu?-}

	b=$base/build-$a
	rm -rf "$b" && mkdir -p "$b/checkinc"
	cp "$root/usr/include/check.h" "$b/checkinc/"
	cp "$root/usr/include/check_stdint.h" "$b/checkinc/" 2>/dev/null ||
		cp "$root/usr/include/$ma/check_stdint.h" "$b/checkinc/"
	(
		cd "$b"
		# shellcheck disable=SC2086
		"$src/configure" --quiet --build="$(gcc -dumpmachine)" --host="$t" \
			--enable-werror PKG_CONFIG_LIBDIR=/nonexistent \
			CHECK_CFLAGS="-I$b/checkinc -pthread" \
			CHECK_LIBS="-L$root/usr/lib/$ma -lcheck_pic -lsubunit -lrt -lm" \
			LDFLAGS="-Wl,-rpath-link,$root/usr/lib/$ma -Wl,-rpath-link,$root/lib/$ma" \
			${conf:+"$conf"} >configure.log 2>&1 || { tail -30 configure.log; exit 1; }
		grep -q 'S\["HAVE_CHECK_TRUE"\]=""' config.status ||
			{ echo "Check not usable for $a"; exit 1; }
		make -j"$jobs" --quiet >make.log 2>&1 && make -j"$jobs" --quiet check TESTS= >>make.log 2>&1 ||
			{ tail -40 make.log; exit 1; }
		readelf --dyn-syms -W .libs/libaio.so.1 | awk '$0 !~ / UND / && $NF ~ /@/ { print $NF }' |
			sort >exports.txt
		echo "  built ${conf:-with the default flags}: $(readelf -h .libs/libaio.so.1 |
			sed -n 's/^ *Machine: *//p'), $(wc -l <exports.txt) versioned exports"
		# 32-bit: the time64 node beside the native-time_t entry points.
		if [ "$(echo __SIZEOF_LONG__ | "$t-gcc" -E -P -x c -)" = 4 ]; then
			for s in io_getevents@@LIBAIO_0.4 io_getevents_time64@@LIBAIO_0.6 io_pgetevents_time64@@LIBAIO_0.6; do
				grep -qx "$s" exports.txt || { echo "  $s is not exported"; exit 1; }
			done
		fi
	) || return 1

	# The initramfs.
	st=$b/initramfs
	mkdir -p "$st/bin" "$st/lib/$ma" "$st/t"
	cp "$root/bin/busybox" "$st/bin/"
	guest_init >"$st/init" && chmod 755 "$st/init"
	cp -L "$b/.libs/libaio.so.1" "$st/lib/$ma/"
	prog=''
	for p in "$b"/tests/test-*; do
		case ${p##*/} in *.*) continue ;; esac
		p=${p##*/}
		# The program itself, not libtool's wrapper script.
		if [ -e "$b/tests/.libs/$p" ]; then cp "$b/tests/.libs/$p" "$st/t/"; else cp "$b/tests/$p" "$st/t/"; fi
		prog="$prog $p"
	done
	cp "$src/tests/all-modes.sh" "$st/t/"
	"$t-strip" "$st"/t/test-* "$st/lib/$ma/libaio.so.1"
	copy_libs "$root" "$st" "$ma" "$st"/t/test-* "$st/lib/$ma/libaio.so.1"
	# Loaded by the C library itself, for thread cancellation and exit.
	cp -L "$root/lib/$ma/libgcc_s.so.1" "$st/lib/$ma/"
	p=$(readelf -l "$st/t/test-api" | sed -n 's/.*interpreter: \(.*\)]/\1/p')
	[ -e "$st/lib/$ma/${p##*/}" ] || cp -L "$root/lib/$ma/${p##*/}" "$st/lib/$ma/"
	mkdir -p "$st${p%/*}"
	[ -e "$st$p" ] || ln -s "/lib/$ma/${p##*/}" "$st$p"
	cat >"$st/t/env" <<EOF
PROGS='$prog'
export LIBAIO_TEST_MODES='$modes' CK_TIMEOUT_MULTIPLIER=4
export LIBAIO_SOAK_SECONDS=${LIBAIO_SOAK_SECONDS:-2} LIBAIO_STRESS_N=${LIBAIO_STRESS_N:-20000}
EOF
	(cd "$st" && find . | cpio -o -H newc --quiet) >"$b/initramfs.cpio"

	echo "  booting $release ($(du -k "$b/initramfs.cpio" | cut -f1) KiB initramfs; modes: $modes)"
	# shellcheck disable=SC2086
	timeout "${KERNELS_TIMEOUT:-900}" $qemu -smp 2 -m 1024 -nodefaults -nographic \
		-serial stdio -no-reboot -kernel "$k" -initrd "$b/initramfs.cpio" \
		-append "console=$con quiet panic=-1" >"$b/console.log" 2>&1 </dev/null ||
		echo "  qemu exited with $? (124: timeout)"
	report "$a" "$b/console.log"
}

failed=0
results=()
total_ran=0 total_skipped=0 total_failed=0
for a in $archs; do
	t0=$SECONDS
	echo "=== $a"
	summary="$a: not run"
	rc=0
	run_arch "$a" || rc=$?
	results+=("$summary, $([ $rc = 0 ] && echo passed || echo FAILED) in $(((SECONDS - t0 + 30) / 60)) min ($((SECONDS - t0)) s)")
	set -- $(echo "$summary" | sed -n 's/.*: \([0-9]*\) tests run, \([0-9]*\) skipped, \([0-9]*\) failed/\1 \2 \3/p') 0 0 0
	total_ran=$((total_ran + $1)) total_skipped=$((total_skipped + $2)) total_failed=$((total_failed + $3))
	[ $rc = 0 ] || failed=$((failed + 1))
done
echo "=== kernels summary"
printf '  %s\n' "${results[@]}"
echo "kernels: $total_ran tests run, $total_skipped skipped, $total_failed failed on $(echo "$archs" | wc -w) architectures ($failed failed)"
[ $failed = 0 ]
