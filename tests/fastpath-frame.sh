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
lib="${top_builddir:-.}/.libs/libaio.so.1"
command -v objdump >/dev/null 2>&1 || { echo "skip: objdump (binutils) not installed"; exit 77; }
[ -f "$lib" ] || { echo "skip: $lib not built (static-only build)"; exit 77; }
cflags=$(sed -n 's/^CFLAGS = //p' "${top_builddir:-.}/Makefile" 2>/dev/null)
case " $cflags " in
*" -O2 "* | *" -O3 "*) ;;
*) echo "skip: the frameless fast path is a property of -O2/-O3 builds (CFLAGS: $cflags)"; exit 77 ;;
esac
fmt=$(objdump -f "$lib" | sed -n 's/.*file format //p')
[ "$fmt" = elf64-x86-64 ] || { echo "skip: the check knows x86_64 code only (library is $fmt)"; exit 77; }
body=$(objdump -d --no-show-raw-insn "$lib" |
	awk '/<io_getevents@@LIBAIO_0\.4>:$/ { p = 1; next } p && /^$/ { exit } p')
[ -n "$body" ] || { echo "FAIL: io_getevents@@LIBAIO_0.4 not found in $lib"; exit 1; }
if echo "$body" | grep -q '__asan\|__tsan\|__ubsan\|__gcov\|__sanitizer'; then
	echo "skip: instrumented build (sanitizer or coverage calls in the fast path)"
	exit 77
fi
bad=$(echo "$body" | grep -E '[[:space:]]call[a-z]*[[:space:]]|[[:space:]]sub[a-z]*[[:space:]]+\$0x[0-9a-f]+,%rsp')
if [ -n "$bad" ]; then
	echo "FAIL: io_getevents' fast path makes a call or a stack frame:"
	echo "$bad"
	exit 1
fi
n=$(echo "$body" | grep -c '[[:space:]]jmp[[:space:]].*<\(getevents_slow\|take_many\)')
[ "$n" -gt 0 ] || { echo "FAIL: no tail call to getevents_slow or take_many found"; exit 1; }
echo "io_getevents fast path: no call, no frame, $n tail calls"
