# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash disable=SC2034 # arch_*: read by the jobs
# Sourced by every CI job (.ci/*.sh, scripts/test-all.sh): the one
# configure-and-build, the architecture table, the closing count and the
# failed tests' logs.  Sets src, the source tree's top directory.  The
# part for throw-away Debian roots is .ci/chroot-lib.sh, sourced from here.

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ci_jobs=$(nproc 2>/dev/null || echo 2)
# make -j for make check: each Check program runs once per library mode
# (a .mode test), and a mode spends most of its time asleep in the kernel,
# not on a CPU (every io_destroy waits for the context to be retired, an
# RCU grace period, and the race tests destroy hundreds): six tests per
# CPU keep the CPUs busy.  No test has a timing threshold.
ci_test_jobs=$((ci_jobs * 6))
# Where the jobs put their build directories: AIOREAP_CI_SCRATCH, which
# scripts/test-all.sh makes new for each run, or else $TMPDIR or /tmp.
ci_scratch=${AIOREAP_CI_SCRATCH:-${TMPDIR:-/tmp}}
# Debian 13's default flags on armhf (not on i386, which kept a 32-bit
# time_t): the t64 flavour is built with them.
ci_time64="CPPFLAGS=-D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64"

# ci_need PACKAGE...: install the host tools a job needs (never anything
# the tests compare against) through scripts/install-deps.sh, which skips
# what is there and waits for the dpkg lock.
ci_need() {
	sh "$src/scripts/install-deps.sh" --only "$@"
}

# ci_configure DIR [CONFIGURE-ARG...]: a fresh out-of-tree configure in
# DIR, which stays the current directory; its output goes to configure.log
# there, whose end is shown on a failure.  ci_build also builds (ci_make).
ci_configure() {
	local dir=$1
	shift
	[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi >/dev/null 2>&1)
	rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || return 1
	"$src/configure" --quiet "$@" >configure.log 2>&1 || { tail -n 40 configure.log; return 1; }
}
ci_build() {
	ci_configure "$@" && ci_make all
}

# ci_make [TARGET...]: make in the current build directory, its output
# added to build.log.
ci_make() {
	make -j"$ci_jobs" --quiet "$@" >>build.log 2>&1 || { tail -n 40 build.log; return 1; }
}

# ci_check_programs: the Check programs of the current build directory,
# each of which runs once per library mode as a .mode test (mode_programs
# in tests/local.mk; check_PROGRAMS also holds helpers that only the
# shell tests run, such as tests/aio-probe).
ci_check_programs() {
	# shellcheck disable=SC2016
	printf 'print:\n\t@echo $(mode_programs)\n' | make -s -f Makefile -f - print
}

# ci_plain_programs: the test programs of the current build directory
# that are not Check programs (they run once, as they are).
ci_plain_programs() {
	# shellcheck disable=SC2016
	printf 'print:\n\t@echo $(TESTS)\n' | make -s -f Makefile -f - print TEST_MODES= |
		tr ' ' '\n' | grep -v -E '\.(sh|mode)$' | sed 's/\$(EXEEXT)//g' | tr '\n' ' '
}

# ci_failed_logs: the last 60 lines of the log of each failed test of the
# current build directory (its .trs says FAIL, ERROR or XPASS).
ci_failed_logs() {
	local trs
	find . -name '*.trs' | sort | while read -r trs; do
		grep -qE '^:test-result: (FAIL|ERROR|XPASS)' "$trs" || continue
		echo "==== ${trs%.trs}.log"
		tail -n 60 "${trs%.trs}.log"
	done
}

# ci_skips DIR: the tests of the build directory DIR that skipped, each
# with the reason its log gives (a .mode test's log has a "SKIP: tests/"
# line per case that skipped, with its reason; a shell test's, its own
# "SKIP" line), and the tests that ran only in part.
ci_skips() {
	local trs log
	echo "=== skipped tests and why"
	for trs in "$1"/tests/*.trs; do
		grep -qs ':test-result: SKIP' "$trs" || continue
		log=${trs%.trs}.log
		if grep -q '^SKIP: tests/.*\.mode ' "$log"; then
			sed -n 's|^SKIP: tests/|  |p' "$log"
		else
			echo "  $(basename "${trs%.trs}"): $(grep -m1 '^SKIP' "$log" || echo '(no reason printed)')"
		fi
	done
	echo "=== tests that ran in part (the rest skipped, with the reason)"
	grep -H '^SKIP (part)' "$1"/tests/*.log 2>/dev/null | sed "s|^$1/tests/|  |" || echo "  none"
}

# ci_counts NAME RAN SKIPPED FAILED [WHERE]: a job's closing line, the one
# scripts/test-all.sh copies into its summary.
ci_counts() {
	echo "$1: $2 tests run, $3 skipped, $4 failed${5:+ $5}"
}

# ci_suite_counts LOG...: "RAN SKIPPED FAILED", all the "# TOTAL:" blocks
# of automake's test harness (a test-suite.log, make check's output) added.
ci_suite_counts() {
	awk '/^# TOTAL:/ { r += $3 } /^# SKIP:/ { s += $3 } /^# (FAIL|XPASS|ERROR):/ { f += $3 }
		END { print r + 0, s + 0, f + 0 }' "$@"
}

# ci_part NAME COMMAND...: one part of a job (an architecture, a flavour),
# timed, in a subshell of its own with set -e in force, so a failing step
# stops the part and a cd stays inside it.  Call it from the job's top
# level, never as the left side of || or &&, where bash switches set -e
# off even inside the subshell.  COMMAND may set ci_note (added to the
# part's line in ci_results) and ci_tally ("RAN SKIPPED FAILED", added to
# ci_totals); both survive the subshell through a file written on its
# exit.  A failed part adds to ci_failed and does not stop the job.
ci_results=() ci_failed=0 ci_totals="0 0 0"
ci_part() {
	local name=$1 t0=$SECONDS rc back
	shift
	echo "=== $name"
	back=$(mktemp)
	set +e
	ci_part_body "$back" "$@"
	rc=$?
	set -e
	ci_part_end "$name" "$t0" "$back" "$rc"
	ci_results+=("$ci_line")
}

# ci_part_body BACK COMMAND...: COMMAND in the part's subshell; its
# ci_tally and ci_note go to the file BACK when the subshell exits.
ci_part_body() {
	local back=$1
	shift
	(
		set -e
		# A global: bash drops the functions' locals before an EXIT trap.
		ci_note='' ci_tally='0 0 0' ci_back=$back
		trap 'printf "%s\n%s\n" "$ci_tally" "$ci_note" >"$ci_back"' EXIT
		"$@"
	)
}

# ci_part_end NAME T0 BACK RC: a part that started at SECONDS T0 ended
# with RC; its tally (from the file BACK, removed) goes to ci_totals, a
# failure to ci_failed, and its summary line to ci_line.
ci_part_end() {
	local r=0 s=0 f=0 sum_r sum_s sum_f
	ci_note=''
	{ read -r r s f && IFS= read -r ci_note; } <"$3" || true
	rm -f "$3"
	read -r sum_r sum_s sum_f <<<"$ci_totals"
	ci_totals="$((sum_r + r)) $((sum_s + s)) $((sum_f + f))"
	[ "$4" = 0 ] || ci_failed=$((ci_failed + 1))
	ci_line="$1: $([ "$4" = 0 ] && echo passed || echo FAILED) in $((SECONDS - $2)) s${ci_note:+: $ci_note}"
}

# ci_parts N COMMAND NAME...: the parts "COMMAND NAME" (ci_part), at most
# N at a time, started in the order given: a job whose parts spend much
# of their time waiting (an emulated machine's idle CPUs) ends sooner.
# A part's output is held in a file and shown whole when it ends, so two
# parts' lines never mix; the lines in ci_results keep the order given,
# and each part's time is its own, overlapping the others'.  With N of
# 1, or one NAME, it is ci_part for each NAME, the output shown as it
# comes.
ci_parts() {
	local n=$1 cmd=$2 dir pid rc i=0 k running=0
	local -a names=("${@:3}") start=() lines=()
	local -A slot=()
	if [ "$n" -le 1 ] || [ "${#names[@]}" -le 1 ]; then
		for k in "${names[@]}"; do
			ci_part "$k" "$cmd" "$k"
		done
		return 0
	fi
	dir=$(mktemp -d)
	while [ "$i" -lt "${#names[@]}" ] || [ "$running" -gt 0 ]; do
		if [ "$i" -lt "${#names[@]}" ] && [ "$running" -lt "$n" ]; then
			echo "--- $(date +%T) ${names[i]} started"
			ci_part_body "$dir/$i" "$cmd" "${names[i]}" >"$dir/$i.out" 2>&1 &
			slot[$!]=$i start[i]=$SECONDS
			i=$((i + 1)) running=$((running + 1))
			continue
		fi
		set +e
		wait -n -p pid "${!slot[@]}"
		rc=$?
		set -e
		k=${slot[$pid]}
		unset "slot[$pid]"
		running=$((running - 1))
		echo "=== ${names[k]} (ended $(date +%T))"
		cat "$dir/$k.out"
		ci_part_end "${names[k]}" "${start[k]}" "$dir/$k" "$rc"
		lines[k]=$ci_line
	done
	ci_results+=("${lines[@]}")
	rm -rf "$dir"
}

# ci_parts_done NAME RAN SKIPPED FAILED [WHERE]: the parts' lines, then
# the job's closing line (ci_counts); fails if a part failed.
ci_parts_done() {
	echo "=== $1 summary"
	printf '  %s\n' "${ci_results[@]}"
	ci_counts "$@"
	[ "$ci_failed" = 0 ]
}

# ci_arch ARCH: the one table of the Debian architectures the jobs build
# for.  Sets arch_triplet (the cross toolchain's prefix, configure's
# --host), arch_cross (that toolchain's packages), arch_qemu_user
# (qemu-user-static's binary) and, for the kernels job, the guest:
# arch_kflav (linux-image-FLAVOUR), arch_ksuite (the Debian suite whose
# kernel it boots by default: Debian 12's where it is a release
# architecture, Debian 13's for riscv64, unstable's for loong64),
# arch_qemu_pkg and arch_qemu (qemu-system's packages and command line),
# arch_con (the console), arch_mach (uname -m), arch_page, arch_endian,
# arch_conf (an extra configure argument) and arch_tools (the Debian suite
# whose root supplies the cross compiler, qemu and firmware, where Debian
# 12's lack them).
ci_arch() {
	arch_cross=crossbuild-essential-$1 arch_qemu_user=qemu-$1-static
	arch_kflav='' arch_qemu_pkg='' arch_qemu='' arch_con='' arch_mach=''
	arch_page=4096 arch_endian=little arch_conf='' arch_ksuite=bookworm arch_tools=''
	case $1 in
	# The host's own: .ci/deb.sh boots its kernel to run i386 programs.
	amd64) arch_triplet=x86_64-linux-gnu arch_qemu_user='' arch_kflav=amd64 arch_con=ttyS0
		arch_mach=x86_64 arch_qemu_pkg=qemu-system-x86 arch_qemu="qemu-system-x86_64 -M pc" ;;
	i386) arch_triplet=i686-linux-gnu arch_kflav=686-pae arch_con=ttyS0 arch_mach=i686
		arch_qemu_pkg=qemu-system-x86 arch_qemu="qemu-system-i386 -M pc -cpu max" ;;
	arm64) arch_triplet=aarch64-linux-gnu arch_qemu_user=qemu-aarch64-static
		arch_kflav=arm64 arch_con=ttyAMA0 arch_mach=aarch64 arch_qemu_pkg=qemu-system-arm
		arch_qemu="qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on" ;;
	armhf) arch_triplet=arm-linux-gnueabihf arch_qemu_user=qemu-arm-static
		arch_kflav=armmp-lpae arch_con=ttyAMA0 arch_mach=armv7l arch_conf=$ci_time64
		arch_qemu_pkg=qemu-system-arm arch_qemu="qemu-system-arm -M virt -cpu cortex-a15" ;;
	ppc64el) arch_triplet=powerpc64le-linux-gnu arch_qemu_user=qemu-ppc64le-static
		arch_kflav=powerpc64le arch_con=hvc0 arch_mach=ppc64le arch_page=65536
		arch_qemu_pkg=qemu-system-ppc
		# No USB, display or firmware-side mitigations TCG lacks.
		arch_qemu="qemu-system-ppc64 -M pseries,usb=off,cap-cfpc=broken,cap-sbbc=broken,cap-ibs=broken,cap-ccf-assist=off -vga none" ;;
	s390x) arch_triplet=s390x-linux-gnu arch_kflav=s390x arch_con=ttysclp0 arch_mach=s390x
		arch_endian=big arch_qemu_pkg=qemu-system-misc
		arch_qemu="qemu-system-s390x -M s390-ccw-virtio -cpu max" ;;
	# Not a Debian 12 release architecture: no crossbuild-essential, and
	# the kernel is Debian 13's.  The virt machine's firmware is the
	# OpenSBI build qemu ships, which starts the kernel in supervisor mode.
	riscv64) arch_triplet=riscv64-linux-gnu
		arch_cross="gcc-riscv64-linux-gnu libc6-dev-riscv64-cross"
		arch_kflav=riscv64 arch_ksuite=trixie arch_con=ttyS0 arch_mach=riscv64
		arch_qemu_pkg=qemu-system-misc arch_qemu="qemu-system-riscv64 -M virt" ;;
	# In unstable only (Debian 14's kernel).  Debian 12 has no cross
	# compiler for it, and its qemu (7.2) loads only ELF kernels here,
	# while Debian's is an EFI image (zboot), which needs the EFI firmware
	# Debian 12 does not ship: all three come from a Debian 13 root.
	# 16 KiB pages.
	loong64) arch_triplet=loongarch64-linux-gnu arch_cross=gcc-loongarch64-linux-gnu
		arch_kflav=loong64 arch_ksuite=sid arch_tools=trixie arch_con=ttyS0
		arch_mach=loongarch64 arch_page=16384
		arch_qemu_pkg="qemu-system-misc qemu-efi-loongarch64"
		arch_qemu="qemu-system-loongarch64 -M virt -cpu la464 -bios /usr/share/qemu-efi-loongarch64/QEMU_EFI.fd" ;;
	*) echo "ci_arch: unknown architecture $1" >&2; return 1 ;;
	esac
}

# ci_boot ARCH MEM TIMEOUT KERNEL INITRAMFS LOG [QEMU-ARG...]: KERNEL
# booted under ARCH's qemu-system (ci_arch's arch_qemu) with TCG, so no
# KVM is needed, MEM MiB of memory and INITRAMFS, whose /init is the first
# process and powers the guest off; the console (arch_con) comes back on
# the serial line into LOG, which the caller reads.  QEMU-ARG: more CPUs,
# drives.  A guest still running after TIMEOUT seconds is stopped; qemu's
# exit status is reported, not returned: only the log says whether the
# guest did its work.
ci_boot() {
	local mem=$2 secs=$3 kernel=$4 initrd=$5 log=$6 rc=0
	ci_arch "$1"
	shift 6
	# shellcheck disable=SC2086 # arch_qemu: the command and its words
	timeout "$secs" $arch_qemu -accel tcg -m "$mem" "$@" -nodefaults -display none \
		-serial stdio -no-reboot -kernel "$kernel" -initrd "$initrd" \
		-append "console=$arch_con quiet panic=-1" >"$log" 2>&1 </dev/null || rc=$?
	[ "$rc" = 0 ] || echo "  qemu exited with $rc (124: timeout)"
}

# ci_exports LIB: LIB's versioned exports, one name@NODE or name@@NODE a
# line, into exports.txt.  Fails when a 32-bit LIB lacks the time64 node
# (LIBAIO_0.6) beside the native-time_t entry points.
ci_exports() {
	local s
	readelf --dyn-syms -W "$1" | awk '$0 !~ / UND / && $NF ~ /@/ { print $NF }' | sort >exports.txt
	[ "$(od -An -tx1 -j4 -N1 "$1" | tr -d ' ')" = 01 ] || return 0
	for s in io_getevents@@LIBAIO_0.4 io_getevents_time64@@LIBAIO_0.6 io_pgetevents_time64@@LIBAIO_0.6; do
		grep -qx "$s" exports.txt || { echo "$1 (32-bit) does not export $s"; return 1; }
	done
}

# shellcheck source=.ci/chroot-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/chroot-lib.sh"
