#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "kernels": the Check suite on Debian 12's own kernel for each
# architecture, under qemu-system (TCG: no KVM needed) with two emulated
# CPUs.  The root with the kernel, busybox and the libraries comes from
# mmdebstrap (a cached tarball, .ci/chroot-lib.sh; modules, docs and
# locales left out: the initramfs needs none); the library and the Check
# programs are cross-built with -Werror (armhf with Debian 13's time64
# flags); an uncompressed initramfs runs every program in the library's
# modes and powers off; the console log comes back on the serial line.
# The job fails if a guest is not the expected machine (uname -m, page
# size, byte order, CPU count, the kernel release of the package booted),
# if any program fails, or if anything skips: every test can run on these
# kernels (AIO, aio poll, io_pgetevents and seccomp are all there), so a
# skip means a missing kernel feature or a broken build.
#
#   .ci/kernels.sh [ARCH...]      (default: i386 arm64 armhf ppc64el s390x)
#
# Environment: KERNELS_MODES replaces the mode list; KERNELS_PROGS names
# the test programs to run (default: every one); KERNELS_TIMEOUT
# (seconds, default 900) bounds each guest; LIBAIO_STRESS_N (default 20000
# here) sizes test-reaper's exactly-once stress, which test-arch repeats
# with threads pinned to both CPUs; BUILD_BASE (default
# $AIOREAP_CI_SCRATCH/aioreap-kernels) holds the builds.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "kernels.sh: must run as root (apt-get, mmdebstrap)"; exit 1; }
# shellcheck source=.ci/lib.sh
. .ci/lib.sh
archs=${*:-"i386 arm64 armhf ppc64el s390x"}
base=${BUILD_BASE:-$ci_scratch/aioreap-kernels}
# Two of the library's seven modes, natively and with every fallback forced:
# all seven ("native poll pgetevents ring all seccomp-pgetevents async")
# would take more than three times as long under TCG.
modes=${KERNELS_MODES:-"native all"}

need="mmdebstrap cpio"
for a in $archs; do
	ci_arch "$a"
	[ -n "$arch_kflav" ] || { echo "kernels.sh: no Debian 12 kernel for $a"; exit 1; }
	# Each crossbuild-essential removes gcc-multilib (Debian 12's cross
	# compilers conflict with it); the m32 job installs it back.
	need="$need $arch_cross $arch_qemu_pkg"
done
# shellcheck disable=SC2046,SC2086
ci_need $(printf '%s\n' $need | sort -u)

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

# report ARCH LOG: check the guest's identity and count what ran (into
# ci_note and ci_tally); returns 1 when anything failed or skipped.
report() {
	local a=$1 raw=$2 log=$2.txt bad=0 id want ran skipped failed skips p rc
	# The kernel may write to the console in the middle of a line of ours:
	# every "@@ " marker starts a line of its own here.
	tr -d '\r' <"$raw" | sed 's/.*@@ /@@ /' >"$log"
	# MACHINE release RELEASE page BYTES endian ORDER cpus N
	id=$(sed -n 's/^@@ machine //p' "$log" | cut -d' ' -f1-9)
	want="$arch_mach release $release page $arch_page endian $arch_endian cpus 2"
	echo "  booted: $(sed -n 's/^@@ version //p' "$log")"
	[ "$id" = "$want" ] || { echo "  FAILED: the guest is '$id', not '$want'"; bad=1; }
	grep -q '^@@ done' "$log" || { echo "  FAILED: the guest did not finish"; tail -n 40 "$log"; bad=1; }
	read -r ran skipped failed <<<"$(ci_mode_counts "$log")"
	# Whole programs (exit 77) and the tests that skip themselves, in the
	# programs' output only (ppc64el's boot says "prom_hold_cpus: skipped").
	skips=$(sed -n '/^@@ begin /,/^@@ end /p' "$log" | grep -E '^SKIP|: exit 77$|skipped|no seccomp filter' |
		grep -v -E ' 0 skipped under valgrind(,|$)' || true)
	skipped=$(printf '%s' "$skips" | grep -c . || true)
	if [ "$skipped" != 0 ]; then
		echo "  FAILED: skips (every test must run on this kernel):"
		printf '%s\n' "$skips" | sort | uniq -c | sed 's/^/    /'
		bad=1
	fi
	while read -r p rc; do
		[ "$rc" = 0 ] && continue
		echo "==== $a: $p exited $rc"
		sed -n "/^@@ begin $p\$/,/^@@ end $p /p" "$log" | tail -n 60
		bad=1
	done < <(sed -n 's/^@@ end \([^ ]*\) rc \([0-9]*\) .*/\1 \2/p' "$log")
	ci_note="kernel $release, page $((arch_page / 1024)) KiB, $arch_endian-endian, $(echo "$modes" | wc -w) modes: $ran tests run, $skipped skipped, $failed failed"
	ci_tally="$ran $skipped $failed"
	return $bad
}

# run_arch ARCH, a part (ci_part): a failure before the guest's report
# counts as one failed test.
run_arch() {
	local a=$1 t ma root b st tar k prog p inc=$base/checkinc-$1
	ci_tally='0 0 1'
	ci_arch "$a"
	t=$arch_triplet
	ma=$("$t-gcc" -print-multiarch)
	# shellcheck disable=SC2016 # $1 is the root, in mmdebstrap's hook
	tar=$(ci_tarball "kernel-$a" --variant=extract --architectures="$a" \
		--include="linux-image-$arch_kflav,busybox-static,check,libsubunit0,libc6,libgcc-s1" \
		--extract-hook='rm -rf "$1/lib/modules" "$1/usr/lib/modules" "$1/usr/lib/linux-image-"* "$1/usr/share/doc" "$1/usr/share/man" "$1/usr/share/locale"')
	root=$base/root-$a
	ci_unpack "$tar" "$root"
	# shellcheck disable=SC2012 # one plain name, vmlinuz-RELEASE
	k=$(ls "$root"/boot/vmlinu[xz]-* | head -n 1)
	release=${k##*/vmlinu?-}

	b=$base/build-$a
	rm -rf "$inc" && mkdir -p "$inc"
	cp "$root/usr/include/check.h" "$inc/"
	cp "$root/usr/include/check_stdint.h" "$inc/" 2>/dev/null ||
		cp "$root/usr/include/$ma/check_stdint.h" "$inc/"
	(
		ci_build "$b" --build="$(gcc -dumpmachine)" --host="$t" \
			--enable-werror PKG_CONFIG_LIBDIR=/nonexistent \
			CHECK_CFLAGS="-I$inc -pthread" \
			CHECK_LIBS="-L$root/usr/lib/$ma -lcheck_pic -lsubunit -lrt -lm" \
			LDFLAGS="-Wl,-rpath-link,$root/usr/lib/$ma -Wl,-rpath-link,$root/lib/$ma" \
			${arch_conf:+"$arch_conf"}
		grep -q 'S\["HAVE_CHECK_TRUE"\]=""' config.status ||
			{ echo "Check not usable for $a"; exit 1; }
		ci_make check TESTS=
		ci_exports .libs/libaio.so.1
		echo "  built ${arch_conf:-with the default flags}: $(readelf -h .libs/libaio.so.1 |
			sed -n 's/^ *Machine: *//p'), $(wc -l <exports.txt) versioned exports"
	)

	# The initramfs.
	st=$b/initramfs
	mkdir -p "$st/bin" "$st/lib/$ma" "$st/t"
	cp "$root/bin/busybox" "$st/bin/"
	guest_init >"$st/init" && chmod 755 "$st/init"
	cp -L "$b/.libs/libaio.so.1" "$st/lib/$ma/"
	prog=''
	for p in "$b"/tests/test-*; do
		p=${p##*/}
		case $p in *.*) continue ;; esac
		# KERNELS_PROGS (names, blank-separated): a part of the suite.
		case " ${KERNELS_PROGS:-$p} " in *" $p "*) ;; *) continue ;; esac
		# The program itself, not libtool's wrapper script.
		cp "$b/tests/.libs/$p" "$st/t/" 2>/dev/null || cp "$b/tests/$p" "$st/t/"
		prog="$prog $p"
	done
	cp "$src/tests/all-modes.sh" "$st/t/"
	"$t-strip" "$st"/t/test-* "$st/lib/$ma/libaio.so.1"
	copy_libs "$root" "$st" "$ma" "$st"/t/test-* "$st/lib/$ma/libaio.so.1"
	# Loaded by the C library itself, for thread cancellation and exit.
	cp -L "$root/lib/$ma/libgcc_s.so.1" "$st/lib/$ma/"
	p=$(readelf -l "$st/t/${prog##* }" | sed -n 's/.*interpreter: \(.*\)]/\1/p')
	[ -e "$st/lib/$ma/${p##*/}" ] || cp -L "$root/lib/$ma/${p##*/}" "$st/lib/$ma/"
	mkdir -p "$st${p%/*}"
	[ -e "$st$p" ] || ln -s "/lib/$ma/${p##*/}" "$st$p"
	cat >"$st/t/env" <<EOF
PROGS='$prog'
export LIBAIO_TEST_MODES='$modes' CK_TIMEOUT_MULTIPLIER=4
export LIBAIO_SOAK_SECONDS=${LIBAIO_SOAK_SECONDS:-2} LIBAIO_STRESS_N=${LIBAIO_STRESS_N:-20000}
export AIOREAP_TEST_NO_STEP=1
EOF
	(cd "$st" && find . | cpio -o -H newc --quiet) >"$b/initramfs.cpio"

	echo "  booting $release ($(du -k "$b/initramfs.cpio" | cut -f1) KiB initramfs; modes: $modes)"
	# shellcheck disable=SC2086
	timeout "${KERNELS_TIMEOUT:-900}" $arch_qemu -smp 2 -m 1024 -nodefaults -nographic \
		-serial stdio -no-reboot -kernel "$k" -initrd "$b/initramfs.cpio" \
		-append "console=$arch_con quiet panic=-1" >"$b/console.log" 2>&1 </dev/null ||
		echo "  qemu exited with $? (124: timeout)"
	report "$a" "$b/console.log"
}

for a in $archs; do
	ci_part "$a" run_arch "$a"
done
# shellcheck disable=SC2086 # RAN SKIPPED FAILED
ci_parts_done kernels $ci_totals "on $archs"
