#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Tripwire for io_getevents' fast path: the exported io_getevents (the
# LIBAIO_0.4 default) must reach everything but the common case through
# tail calls, so that it makes no call and sets up no stack frame beyond
# saved registers.  An edit that brings a call back (an out-of-line
# helper, a memcpy that is not a tail call) costs every reap a frame and
# shows here as a failure.  Checked on x86_64 optimised builds; other
# targets and instrumented builds (sanitizers, coverage) skip.
set -u
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_cmd objdump binutils
need_ours
cflags=$(sed -n 's/^CFLAGS = //p' "$top_builddir/Makefile" 2>/dev/null)
case " $cflags " in
*" -O2 "* | *" -O3 "*) ;;
*) skip "the frameless fast path is a property of -O2/-O3 builds (CFLAGS: $cflags)" ;;
esac
fmt=$(objdump -f "$ours" | sed -n 's/.*file format //p')
[ "$fmt" = elf64-x86-64 ] || skip "the check knows x86_64 code only (library is $fmt)"
body=$(objdump -d --no-show-raw-insn "$ours" |
	awk '/<io_getevents@@LIBAIO_0\.4>:$/ { p = 1; next } p && /^$/ { exit } p')
[ -n "$body" ] || fail "io_getevents@@LIBAIO_0.4 not found in $ours"
! echo "$body" | grep -q '__asan\|__tsan\|__ubsan\|__gcov\|__sanitizer' ||
	skip "instrumented build (sanitizer or coverage calls in the fast path)"
# shellcheck disable=SC2016 # $0x is objdump's, not the shell's
calls=$(echo "$body" | grep -E '[[:space:]]call[a-z]*[[:space:]]|[[:space:]]sub[a-z]*[[:space:]]+\$0x[0-9a-f]+,%rsp')
[ -z "$calls" ] || fail "io_getevents' fast path makes a call or a stack frame:
$calls"
n=$(echo "$body" | grep -c '[[:space:]]jmp[[:space:]].*<\(getevents_slow\|take_many\)')
[ "$n" -gt 0 ] || fail "no tail call to getevents_slow or take_many found"
echo "io_getevents fast path: no call, no frame, $n tail calls"
