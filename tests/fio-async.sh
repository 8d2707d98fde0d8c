#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The system's fio, libaio engine, on the library built here (through
# LD_LIBRARY_PATH; nothing is installed) with async submission on for
# every context (LIBAIO_ASYNC=1), every block checked with crc32c:
#   buffered: random writes at iodepth 32, then fio's verify pass; then a
#     random read of the whole file on a cold cache (fio drops the file's
#     pages first), each block checked against its header;
#   direct: the same writes and verify with O_DIRECT.
# Fails when fio exits non-zero or reports an error or a bad block.  A
# block overwritten behind fio's back must then fail the read: proof that
# the read really checks.  Prints fio's summary lines, and, where strace
# runs, how many io_submit calls the library made with RWF_NOWAIT (its
# first tries) and without (its workers' re-submissions).
# Skips (77) without fio, or when this fio does not load the library's
# soname.
set -u
: "${top_builddir:=.}"
soname=${LIBAIO_SONAME:-libaio.so.1}
fio=$(command -v fio) || { echo "SKIP: fio is not installed"; exit 77; }
lib=$(cd "$top_builddir/.libs" 2>/dev/null && pwd)
if [ -z "$lib" ] || [ ! -e "$lib/$soname" ]; then
	echo "no $top_builddir/.libs/$soname: build the library first"
	exit 99
fi
"$top_builddir/tests/aio-probe" || exit $?	# skips where AIO answers ENOSYS
got=$(LD_LIBRARY_PATH=$lib ldd "$fio" 2>/dev/null | awk -v s="$soname" '$1 == s { print $3 }')
if [ -z "$got" ]; then
	echo "SKIP: $fio does not load $soname (built without the libaio engine?)"
	exit 77
fi
[ "$got" = "$lib/$soname" ] ||
	{ echo "$fio loads $got, not $lib/$soname, with LD_LIBRARY_PATH set"; exit 1; }
echo "fio: $("$fio" --version), $soname from $lib, LIBAIO_ASYNC=1"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fio-async.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0

# run NAME FIO-ARGS...: fio on our library with async submission on,
# output in $tmp/NAME.out; its exit status.
run() {
	name=$1
	shift
	# From $tmp: fio saves its verify state in the current directory,
	# which distcheck wants empty after distclean.
	(cd "$tmp" && LIBAIO_ASYNC=1 LD_LIBRARY_PATH=$lib "$fio" \
		--name="$name" --filename="$tmp/data" --size=16M --bs=4k \
		--ioengine=libaio --iodepth=32 --verify=crc32c \
		--verify_fatal=1 "$@" >"$tmp/$name.out" 2>&1)
}

# job NAME FIO-ARGS...: run, print fio's summary lines; a failure unless
# fio exits 0 and its job line says err= 0.
job() {
	name=$1
	run "$@"
	rc=$?
	grep -E "err=|READ:|WRITE:|verify|fio: " "$tmp/$name.out" | sed "s/^/  $name| /"
	if [ $rc -eq 0 ] && grep -q "^$name: .*err= 0:" "$tmp/$name.out" &&
	   ! grep -Eq "err= *[1-9]|verify: bad" "$tmp/$name.out"; then
		echo "ok: $name"
	else
		echo "FAIL: $name (fio exit $rc)"
		fails=$((fails + 1))
	fi
}

job buffered-write --direct=0 --rw=randwrite --do_verify=1 --end_fsync=1
job buffered-read --direct=0 --rw=randread --invalidate=1
job direct-write --direct=1 --rw=randwrite --do_verify=1

# The check can fail: a block changed behind fio's back is a bad block.
job buffered-rewrite --direct=0 --rw=randwrite --do_verify=1 --end_fsync=1
dd if=/dev/zero of="$tmp/data" bs=4096 seek=2048 count=1 conv=notrunc,fsync 2>/dev/null ||
	{ echo "cannot overwrite a block of $tmp/data"; exit 99; }
run corrupted --direct=0 --rw=randread --invalidate=1
rc=$?
if [ $rc -ne 0 ] && grep -q "verify: bad" "$tmp/corrupted.out"; then
	echo "ok: the overwritten block fails the read's check (fio exit $rc)"
else
	echo "FAIL: the overwritten block went unnoticed (fio exit $rc)"
	sed 's/^/  | /' "$tmp/corrupted.out" | head -n 20
	fails=$((fails + 1))
fi

# What the library did with fio's reads: its first tries carry RWF_NOWAIT;
# a read that would wait is submitted again, without it, by a worker.
if command -v strace >/dev/null 2>&1; then
	if LIBAIO_ASYNC=1 LD_LIBRARY_PATH=$lib strace -f -qq -e trace=io_submit \
		-o "$tmp/strace" "$fio" --name=traced --filename="$tmp/data" --size=16M \
		--bs=4k --ioengine=libaio --iodepth=32 --direct=0 --rw=randread \
		--invalidate=1 >"$tmp/traced.out" 2>&1; then
		all=$(grep -c 'io_submit(' "$tmp/strace")
		nowait=$(grep -c 'io_submit(.*RWF_NOWAIT' "$tmp/strace")
		echo "strace: $all io_submit calls for 4096 cold reads: $nowait with RWF_NOWAIT," \
			"$((all - nowait)) without (workers' re-submissions)"
		if [ "$nowait" -gt 0 ]; then echo "ok: LIBAIO_ASYNC=1 reached fio's context"
		else echo "FAIL: no io_submit with RWF_NOWAIT under LIBAIO_ASYNC=1"
			fails=$((fails + 1)); fi
	else
		echo "note: fio under strace failed (ptrace not allowed here?): not counted"
		head -n 5 "$tmp/traced.out"
	fi
else
	echo "note: no strace: the RWF_NOWAIT count is not shown"
fi

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
exit 0
