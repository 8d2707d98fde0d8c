#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# With LIBAIO_DISABLE=poll no IOCB_CMD_POLL iocb of the library's may reach
# the kernel: run the poll tests under strace and look at every io_submit.
# The native run is the control: there the library's own poll iocbs must
# show, which proves that strace decodes them and that the grep would see
# one.  Polls tagged 0x6b726e6c are test-poll's own raw system calls (it
# compares the emulation with the kernel): neither count has them.
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
run native env -u LIBAIO_DISABLE &
run LIBAIO_DISABLE=poll env LIBAIO_DISABLE=poll &
wait

for name in native LIBAIO_DISABLE=poll; do
	[ "$(cat "$tmp/$name.rc")" = 0 ] ||
		{ tail -n 30 "$tmp/$name.log"; echo "$name run failed"; exit 1; }
	grep 'IOCB_CMD_POLL' "$tmp/$name.trace" | grep -v 'aio_data=0x6b726e6c' >"$tmp/$name.polls"
	echo "$name: $(wc -l <"$tmp/$name.polls") io_submit lines with the library's IOCB_CMD_POLL"
done
[ -s "$tmp/native.polls" ] ||
	{ echo "control failed: strace shows no poll iocb of the library's"; exit 99; }
[ ! -s "$tmp/LIBAIO_DISABLE=poll.polls" ] || { head -n 5 "$tmp/LIBAIO_DISABLE=poll.polls"; exit 1; }
# The emulation rang doorbells (0-byte reads) instead.
grep -q 'IOCB_CMD_PREAD' "$tmp/LIBAIO_DISABLE=poll.trace" || { echo "no doorbell seen"; exit 1; }
exit 0
