#!/bin/sh
# With LIBAIO_DISABLE=poll no IOCB_CMD_POLL iocb may reach the kernel: run
# the poll tests under strace and look at every io_submit.  The native run
# is the control: there the same tests must show poll iocbs, which proves
# that strace decodes them and that the grep would see one.
prog="${top_builddir:-.}/tests/test-poll"
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace not installed"; exit 77; }
[ -x "$prog" ] || { echo "missing $prog"; exit 99; }
"${top_builddir:-.}/tests/aio-probe" || exit $?	# skips where AIO answers ENOSYS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libaio-strace-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

if ! env -u LIBAIO_DISABLE strace -f -qq -o /dev/null true 2>/dev/null; then
	echo "strace cannot trace here"; exit 77
fi

# run NAME ENV...: the traced io_submit calls go to $tmp/NAME.trace, the
# program's own output to $tmp/NAME.log (shown when the run fails, so that
# a failure says which test failed and why), the exit status to
# $tmp/NAME.rc.  The two runs go side by side: each spends most of its
# time asleep, waiting for the kernel to retire destroyed contexts.
run() {
	name=$1; shift
	env -u LIBAIO_TEST_SECCOMP "$@" strace -f -qq -e trace=io_submit \
		-e signal=none -o "$tmp/$name.trace" "$prog" >"$tmp/$name.log" 2>&1
	echo $? >"$tmp/$name.rc"
}
ok() {	# NAME: 0 if that run passed, else its output's end and 1
	[ "$(cat "$tmp/$1.rc")" = 0 ] && return 0
	tail -n 30 "$tmp/$1.log"
	return 1
}
run native env -u LIBAIO_DISABLE &
run disabled env LIBAIO_DISABLE=poll &
wait

ok native || { echo "native run failed"; exit 1; }
native=$(grep -c 'IOCB_CMD_POLL' "$tmp/native.trace")
echo "native: $native io_submit lines with IOCB_CMD_POLL"
[ "$native" -gt 0 ] || { echo "control failed: strace shows no poll iocb"; exit 99; }

ok disabled || { echo "LIBAIO_DISABLE=poll run failed"; exit 1; }
# Polls tagged 0x6b726e6c are test-poll's own raw system calls (it compares
# the emulation with the kernel), not the library's.
sed -i '/aio_data=0x6b726e6c/d' "$tmp/disabled.trace"
disabled=$(grep -c 'IOCB_CMD_POLL' "$tmp/disabled.trace")
echo "LIBAIO_DISABLE=poll: $disabled io_submit lines with IOCB_CMD_POLL"
if [ "$disabled" -ne 0 ]; then
	grep 'IOCB_CMD_POLL' "$tmp/disabled.trace" | head -5
	exit 1
fi
# The emulation rang doorbells (0-byte reads) instead.
grep -q 'IOCB_CMD_PREAD' "$tmp/disabled.trace" || { echo "no doorbell seen"; exit 1; }
exit 0
