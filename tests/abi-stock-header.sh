#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# ABI check 1: a program built against the distribution's libaio.h and
# linked with the stock libaio.so.1 runs unchanged on ours (LD_LIBRARY_PATH
# at our build), natively and with every fallback forced.  The program
# prints the libaio it mapped (/proc/self/maps); it must be ours.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_ours
need_stock
need_cmd readelf binutils
stock_header || skip "no stock libaio.h"
need_aio

# -I holds only the stock header; link to the stock file by path, so the
# binary records its soname, libaio.so.1.
$CC -std=gnu11 -O2 -Wall -pthread -I"$tmp/stockinc" -o "$tmp/prog" \
	"$top_srcdir/tests/abi-prog.c" "$tmp/stocklib/libaio.so.1" ||
	fail "cannot build against the stock header"
readelf -d "$tmp/prog" | grep -q 'NEEDED.*\[libaio\.so\.1\]' ||
	fail "program does not need libaio.so.1"

# Control run: the stock library passes the same program.
run_on stock
run_on ours
for m in poll pgetevents ring poll,pgetevents,ring; do
	run_on ours LIBAIO_DISABLE=$m
done
# The dynamic loader agrees about which file it used.
LD_LIBRARY_PATH="$top_builddir/.libs" LD_DEBUG=libs "$tmp/prog" 2>&1 >/dev/null |
	grep -q "calling init: $top_builddir/.libs/libaio.so.1" ||
	fail "LD_DEBUG does not show our library being initialised"
echo "PASS"
