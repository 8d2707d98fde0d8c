#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "kernels": the Check suite on Debian's own kernel for each
# architecture (Debian 12's, Debian 13's for arm64 and riscv64, unstable's
# for loong64, whose cross compiler, qemu and firmware come from a Debian
# 13 root: in_tools_root), under qemu-system (TCG: no KVM needed) with
# two emulated CPUs.  The root with the kernel, busybox and the libraries
# comes from mmdebstrap (a cached tarball, .ci/chroot-lib.sh; modules,
# docs and locales left out: the initramfs needs none); the library and
# the Check programs are cross-built with -Werror (armhf with Debian 13's
# time64 flags); an uncompressed initramfs runs every program in the
# library's modes and powers off; the console log comes back on the
# serial line.
# The job fails if a guest is not the expected machine (uname -m, page
# size, byte order, CPU count, the kernel release of the package booted),
# if any program fails, or if anything skips: every test can run on these
# kernels (AIO, aio poll, io_pgetevents and seccomp are all there), so a
# skip means a missing kernel feature or a broken build.
#
#   .ci/kernels.sh [ARCH[@SUITE]...]
#       default: riscv64 loong64 arm64@trixie s390x armhf i386 ppc64el
#       SUITE: the Debian suite whose kernel and libraries the guest gets
#       (bookworm, trixie, sid); without it, the architecture's own
#       (ci_arch's arch_ksuite): trixie for riscv64, sid for loong64,
#       bookworm for the rest.
#
# Environment: KERNELS_PARALLEL (default 2) is how many architectures
# build and boot at once: a guest spends much of its time asleep while
# its kernel retires destroyed contexts, so two guests of two emulated
# CPUs each share the 2-core machine well; the default list starts the
# slowest first.  KERNELS_MODES replaces the mode list; KERNELS_PROGS
# names the test programs to run (default: every one); KERNELS_TIMEOUT
# (seconds, default 1800: riscv64's guest took 15 minutes beside another
# guest on the 2-core machine under a load near 20) bounds each guest;
# LIBAIO_STRESS_N (default 20000 here) sizes test-reaper's exactly-once
# stress, which test-arch repeats with threads pinned to both CPUs;
# BUILD_BASE (default $AIOREAP_CI_SCRATCH/aioreap-kernels) holds the
# builds.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "kernels.sh: must run as root (apt-get, mmdebstrap)"; exit 1; }
# shellcheck source=.ci/lib.sh
. .ci/lib.sh
archs=${*:-"riscv64 loong64 arm64@trixie s390x armhf i386 ppc64el"}
base=${BUILD_BASE:-$ci_scratch/aioreap-kernels}
# Two of the library's seven modes, natively and with every fallback forced:
# all seven ("native poll pgetevents ring all seccomp-pgetevents async")
# would take more than three times as long under TCG.
modes=${KERNELS_MODES:-"native all"}
parallel=${KERNELS_PARALLEL:-2}
# shellcheck disable=SC2086 # the architectures, counted
[ "$(printf '%s\n' $archs | wc -l)" -gt 1 ] || parallel=1

need="mmdebstrap cpio"
for a in $archs; do
	ci_arch "${a%@*}"
	[ -n "$arch_kflav" ] || { echo "kernels.sh: no Debian kernel to boot for $a"; exit 1; }
	# Each crossbuild-essential removes gcc-multilib (Debian 12's cross
	# compilers conflict with it): scripts/install-deps.sh takes i386's
	# cross compiler instead, and only the m32 job, not in the default
	# list, installs gcc-multilib back.  An architecture built in a tools
	# root needs nothing more here.
	[ -n "$arch_tools" ] || need="$need $arch_cross $arch_qemu_pkg"
done
# Inside a tools root (in_tools_root), everything is there already.
# shellcheck disable=SC2046,SC2086
[ -n "${KERNELS_IN_ROOT:-}" ] || ci_need $(printf '%s\n' $need | sort -u)

# The guest's /init (busybox sh).  /t/env names the programs and modes;
# each program runs once per mode through tests/run-mode.sh, as in make
# check, and its output and exit status come back on the console, for
# the host's make check to read as the .mode tests' (replay).
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
# A program's modes run side by side, as make check runs them: most of a
# mode's time is spent asleep while the kernel retires contexts.
for p in $PROGS; do
	t0=$(date +%s)
	for m in $MODES; do
		rm -f "/tmp/$m.out" "/tmp/$m.rc"
		(sh /t/run-mode.sh "/t/$p.$m.mode" >"/tmp/$m.out" 2>&1; echo $? >"/tmp/$m.rc") &
	done
	wait
	for m in $MODES; do
		echo "@@ begin $p.$m"
		cat "/tmp/$m.out"
		echo "@@ end $p.$m rc $(cat "/tmp/$m.rc") secs $(($(date +%s) - t0))"
	done
done
for p in $PLAIN; do
	t0=$(date +%s)
	"/t/$p" >/tmp/out 2>&1
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

# replay B LOG: the guest's runs in LOG read back by make check in the
# build directory B, as the .mode tests they are: automake's TAP driver
# counts them into B/test-suite.log, as on the host.  A run the guest
# did not finish is an error there.
replay() {
	local b=$1 log=$2 out=$1/guest p m tests=''
	rm -rf "$out" && mkdir -p "$out"
	awk -v d="$out" '
		/^@@ begin / { f = d "/" $3 ".out"; printf "" >f; next }
		/^@@ end / { print $5 >(d "/" $3 ".rc"); close(f); f = ""; next }
		f != "" { print >>f }' "$log"
	for p in $prog; do
		for m in $modes; do
			tests="$tests tests/$p.$m.mode"
		done
	done
	for p in $plain; do
		tests="$tests tests/$p"
	done
	(cd "$b" && rm -f test-suite.log && GUEST_OUT=$out make check-TESTS TESTS="$tests" \
		MODE_LOG_COMPILER="sh $src/.ci/guest-replay.sh" LOG_COMPILER="sh $src/.ci/guest-replay.sh" \
		>"$b/replay.log" 2>&1) || true
}

# report ARCH LOG: check the guest's identity and count what ran (into
# ci_note and ci_tally); returns 1 when anything failed or skipped.
report() {
	local a=$1 raw=$2 log=$2.txt bad=0 id want ran skipped failed
	# The kernel may write to the console in the middle of a line of ours:
	# every "@@ " marker starts a line of its own here.
	tr -d '\r' <"$raw" | sed 's/.*@@ /@@ /' >"$log"
	# MACHINE release RELEASE page BYTES endian ORDER cpus N
	id=$(sed -n 's/^@@ machine //p' "$log" | cut -d' ' -f1-9)
	want="$arch_mach release $release page $arch_page endian $arch_endian cpus 2"
	echo "  booted: $(sed -n 's/^@@ version //p' "$log")"
	[ "$id" = "$want" ] || { echo "  FAILED: the guest is '$id', not '$want'"; bad=1; }
	grep -q '^@@ done' "$log" || { echo "  FAILED: the guest did not finish"; tail -n 40 "$log"; bad=1; }
	replay "$b" "$log"
	[ -f "$b/test-suite.log" ] || { echo "  FAILED: make check could not read the guest's runs"; tail -n 40 "$b/replay.log"; bad=1; }
	read -r ran skipped failed <<<"$(ci_suite_counts "$b/test-suite.log" 2>/dev/null || echo '0 0 1')"
	if [ "$skipped" != 0 ]; then
		echo "  FAILED: skips (every test must run on this kernel):"
		grep -h '^SKIP: ' "$b"/tests/*.log | sed 's/^/    /'
		bad=1
	fi
	if [ "$failed" != 0 ]; then
		(cd "$b" && ci_failed_logs) | sed "s|^==== |==== $a: |"
		bad=1
	fi
	ci_note="kernel $release ($ci_suite), page $((arch_page / 1024)) KiB, $arch_endian-endian, $(echo "$modes" | wc -w) modes: $ran tests run, $skipped skipped, $failed failed"
	ci_tally="$ran $skipped $failed"
	return $bad
}

# kernel_root SPEC: the cached tarball of SPEC's guest root (kernel,
# busybox, C library, Check), made by mmdebstrap the first time, in ktar.
# Sets ci_suite (the kernel's suite) and dev (what a newer suite adds).
kernel_root() {
	local a=${1%@*} hook opt=()
	ci_suite=$arch_ksuite
	[ "$1" = "$a" ] || ci_suite=${1#*@}
	# A newer suite's Check was built against its own C library (Debian
	# 13's libcheck_pic.a calls glibc 2.38's __isoc23_strtoul), which
	# Debian 12's cross C library lacks: there the programs are built
	# against the root itself (its libc6-dev as the compiler's sysroot),
	# and take the root's libatomic (riscv64's compiler calls it for
	# atomics on one and two bytes).
	dev=''
	[ "$ci_suite" = bookworm ] || dev=,libc6-dev,libatomic1
	# shellcheck disable=SC2016 # $1 is the root, in mmdebstrap's hook
	hook='rm -rf "$1/lib/modules" "$1/usr/lib/modules" "$1/usr/lib/linux-image-"* "$1/usr/share/doc" "$1/usr/share/man" "$1/usr/share/locale"'
	# Unstable's kernel packages ship the image in the modules directory
	# (/usr/lib/modules/RELEASE/vmlinuz) and copy it to /boot from a
	# script; the hook does that copy.
	if [ "$ci_suite" = sid ]; then
		# shellcheck disable=SC2016
		hook='mkdir -p "$1/boot"; for m in "$1"/usr/lib/modules/*; do [ ! -e "$m/vmlinuz" ] || mv "$m/vmlinuz" "$1/boot/vmlinuz-${m##*/}"; done; '$hook
		# A snapshot of unstable may be older than its Release file
		# allows.
		opt=(--aptopt='Acquire::Check-Valid-Until "false"')
	fi
	ktar=$(ci_tarball "kernel-$a" --variant=extract --architectures="$a" ${opt[@]+"${opt[@]}"} \
		--include="linux-image-$arch_kflav,busybox-static,check,libsubunit0,libc6,libgcc-s1$dev" \
		--extract-hook="$hook")
}

# in_tools_root SPEC: run this job for SPEC inside a root of Debian
# ARCH_TOOLS (ci_arch's arch_tools) that holds the cross compiler, qemu
# and firmware Debian 12 lacks for it: the source, the build directory
# and the tarball cache are mounted there at the same paths, nothing is
# installed on the host.  Its parts' lines become this part's.
in_tools_root() {
	local spec=$1 a=${1%@*} tar troot=$base/tools-${1/@/-} pk log=$base/tools-${1/@/-}.log rc line
	# shellcheck disable=SC2086 # package lists, split on purpose
	pk=$(printf '%s\n' $arch_cross $arch_qemu_pkg gcc make cpio binutils | sort -u | paste -sd, -)
	tar=$(ci_suite=$arch_tools ci_tarball "kernel-tools-$a" --variant=apt --include="$pk")
	kernel_root "$spec"
	[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi >/dev/null 2>&1)
	ci_unpack "$tar" "$troot"
	echo "  in a Debian root of $arch_tools: $(sed -n 's/^PRETTY_NAME=//p' "$troot/etc/os-release")"
	export SRC=$src BASE=$base CACHE=$ci_cache MIRROR=$ci_mirror KEY_EXTRA=${CI_KEY_EXTRA:-}
	set +e
	# shellcheck disable=SC2016 # expanded by the inner shell
	ci_mounted "$troot" sh -ec '
		t=$1; shift
		for d in "$SRC" "$BASE" "$CACHE"; do
			mkdir -p "$t$d" && mount --bind "$d" "$t$d"
		done
		exec chroot "$t" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LANG=C.UTF-8 KERNELS_IN_ROOT=1 BUILD_BASE="$BASE" AIOREAP_CI_CACHE="$CACHE" \
			AIOREAP_CI_MIRROR="$MIRROR" CI_KEY_EXTRA="$KEY_EXTRA" \
			${KERNELS_MODES+KERNELS_MODES="$KERNELS_MODES"} \
			${KERNELS_PROGS+KERNELS_PROGS="$KERNELS_PROGS"} \
			${KERNELS_TIMEOUT+KERNELS_TIMEOUT="$KERNELS_TIMEOUT"} \
			${LIBAIO_SOAK_SECONDS+LIBAIO_SOAK_SECONDS="$LIBAIO_SOAK_SECONDS"} \
			${LIBAIO_STRESS_N+LIBAIO_STRESS_N="$LIBAIO_STRESS_N"} \
			bash "$SRC/.ci/kernels.sh" "$@"
	' in_tools_root "$troot" "$spec" 2>&1 | tee "$log" | sed -e 1d -e '/^=== kernels summary/,$d'
	rc=${PIPESTATUS[0]}
	set -e
	read -r ci_tally <<<"$(sed -n 's/^kernels: \([0-9]*\) tests run, \([0-9]*\) skipped, \([0-9]*\) failed.*/\1 \2 \3/p' "$log")"
	[ -n "$ci_tally" ] || ci_tally='0 0 1'
	line=$(sed -n "s/^  $spec: [a-zA-Z]* in [0-9]* s: //p" "$log" | head -n 1)
	ci_note="${line:+$line, }built and run in Debian $arch_tools's root"
	return "$rc"
}

# run_arch ARCH[@SUITE], a part (ci_part): a failure before the guest's
# report counts as one failed test.
run_arch() {
	local spec=$1 a=${1%@*} t ma cc dev root b st tar k prog plain checkp p inc=$base/checkinc-${1/@/-}
	ci_tally='0 0 1'
	ci_arch "$a"
	if [ -n "$arch_tools" ] && [ -z "${KERNELS_IN_ROOT:-}" ]; then
		in_tools_root "$spec"
		return
	fi
	t=$arch_triplet
	ma=$("$t-gcc" -print-multiarch)
	# The kernel and the guest's libraries (C library, Check) come from
	# one suite; ci_tarball reads ci_suite (a part runs in a subshell).
	kernel_root "$spec"
	tar=$ktar
	cc=()
	[ -z "$dev" ] || cc=("CC=$t-gcc --sysroot=$base/root-${spec/@/-}")
	root=$base/root-${spec/@/-}
	ci_unpack "$tar" "$root"
	# Debian 13's packages put everything under /usr and leave the links
	# /bin, /lib, /lib64 and /sbin to base-files' scripts, which an
	# extracted root never runs; the linker scripts (which name the
	# dynamic loader, /lib64/... on loong64) and the copies below need them.
	for d in bin lib lib64 sbin; do
		[ -e "$root/$d" ] || [ ! -d "$root/usr/$d" ] || ln -s "usr/$d" "$root/$d"
	done
	# shellcheck disable=SC2012 # one plain name, vmlinuz-RELEASE
	k=$(ls "$root"/boot/vmlinu[xz]-* | head -n 1)
	release=${k##*/vmlinu?-}

	b=$base/build-${spec/@/-}
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
			${arch_conf:+"$arch_conf"} ${cc[@]+"${cc[@]}"}
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
	# The Check programs (run in each mode) and the plain ones (once);
	# KERNELS_PROGS (names, blank-separated): a part of them.
	prog='' plain=''
	checkp=" $(cd "$b" && ci_check_programs) "
	for p in $checkp $(cd "$b" && ci_plain_programs); do
		p=${p##*/}
		case " ${KERNELS_PROGS:-$p} " in *" $p "*) ;; *) continue ;; esac
		# The program itself, not libtool's wrapper script.
		cp "$b/tests/.libs/$p" "$st/t/" 2>/dev/null || cp "$b/tests/$p" "$st/t/"
		case $checkp in
		*" tests/$p "*) prog="$prog $p" ;;
		*) plain="$plain $p" ;;
		esac
	done
	cp "$src/tests/run-mode.sh" "$st/t/"
	"$t-strip" "$st"/t/test-* "$st/lib/$ma/libaio.so.1"
	copy_libs "$root" "$st" "$ma" "$st"/t/test-* "$st/lib/$ma/libaio.so.1"
	# Loaded by the C library itself, for thread cancellation and exit.
	cp -L "$root/lib/$ma/libgcc_s.so.1" "$st/lib/$ma/"
	p=$(readelf -l "$st/t/${prog##* }" | sed -n 's/.*interpreter: \(.*\)]/\1/p')
	[ -e "$st/lib/$ma/${p##*/}" ] || cp -L "$root/lib/$ma/${p##*/}" "$st/lib/$ma/"
	mkdir -p "$st${p%/*}"
	[ -e "$st$p" ] || ln -s "/lib/$ma/${p##*/}" "$st$p"
	cat >"$st/t/env" <<EOF
PROGS='$prog' PLAIN='$plain' MODES='$modes'
export CK_TIMEOUT_MULTIPLIER=4
export LIBAIO_SOAK_SECONDS=${LIBAIO_SOAK_SECONDS:-2} LIBAIO_STRESS_N=${LIBAIO_STRESS_N:-20000}
export AIOREAP_TEST_NO_STEP=1
EOF
	(cd "$st" && find . | cpio -o -H newc --quiet) >"$b/initramfs.cpio"

	echo "  booting $release ($(du -k "$b/initramfs.cpio" | cut -f1) KiB initramfs; modes: $modes)"
	ci_boot "$a" 1024 "${KERNELS_TIMEOUT:-1800}" "$k" "$b/initramfs.cpio" "$b/console.log" -smp 2
	report "$a" "$b/console.log"
}

# Every part configures from the one source tree: made once, before any
# part starts.
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
# shellcheck disable=SC2086 # the architectures, split on purpose
ci_parts "$parallel" run_arch $archs
# shellcheck disable=SC2086 # RAN SKIPPED FAILED
ci_parts_done kernels $ci_totals "on $archs, $parallel at a time, in $SECONDS s"
