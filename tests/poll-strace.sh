#!/bin/sh
# With LIBAIO_DISABLE=poll no IOCB_CMD_POLL iocb may reach the kernel: run
# the poll tests under strace and look at every io_submit.  The native run
# is the control: there the same tests must show poll iocbs, which proves
# that strace decodes them and that the grep would see one.
prog="${top_builddir:-.}/tests/test-poll"
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace not installed"; exit 77; }
[ -x "$prog" ] || { echo "missing $prog"; exit 99; }
"${top_builddir:-.}/tests/aio-probe" || exit $?	# skips where AIO answers ENOSYS
out=$(mktemp "${TMPDIR:-/tmp}/libaio-strace-XXXXXX") || exit 99
log=$(mktemp "${TMPDIR:-/tmp}/libaio-strace-log-XXXXXX") || exit 99
trap 'rm -f "$out" "$log"' EXIT

# The program's own output is kept, and shown when the run fails, so that
# a failure says which test failed and why.
run() {
	env -u LIBAIO_TEST_SECCOMP "$@" strace -f -qq -e trace=io_submit \
		-e signal=none -o "$out" "$prog" >"$log" 2>&1 && return 0
	tail -n 30 "$log"
	return 1
}

if ! env -u LIBAIO_DISABLE strace -f -qq -o /dev/null true 2>/dev/null; then
	echo "strace cannot trace here"; exit 77
fi

run env -u LIBAIO_DISABLE || { echo "native run failed"; exit 1; }
native=$(grep -c 'IOCB_CMD_POLL' "$out")
echo "native: $native io_submit lines with IOCB_CMD_POLL"
[ "$native" -gt 0 ] || { echo "control failed: strace shows no poll iocb"; exit 99; }

run env LIBAIO_DISABLE=poll || { echo "LIBAIO_DISABLE=poll run failed"; exit 1; }
# Polls tagged 0x6b726e6c are test-poll's own raw system calls (it compares
# the emulation with the kernel), not the library's.
sed -i '/aio_data=0x6b726e6c/d' "$out"
disabled=$(grep -c 'IOCB_CMD_POLL' "$out")
echo "LIBAIO_DISABLE=poll: $disabled io_submit lines with IOCB_CMD_POLL"
if [ "$disabled" -ne 0 ]; then
	grep 'IOCB_CMD_POLL' "$out" | head -5
	exit 1
fi
# The emulation rang doorbells (0-byte reads) instead.
grep -q 'IOCB_CMD_PREAD' "$out" || { echo "no doorbell seen"; exit 1; }
exit 0
