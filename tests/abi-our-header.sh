#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# ABI check 2: the same program built against our libaio.h and linked with
# our library runs unchanged on the stock libaio.so.1.  Built with
# --enable-t64-name, the program records libaio.so.1t64, the name under
# which Debian 13 ships the same stock library: the stock file is offered
# under that name too.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_ours
need_stock
need_aio

soname=${LIBAIO_SONAME:-libaio.so.1}
[ "$soname" = libaio.so.1 ] || ln -s "$(real "$STOCK_LIBAIO")" "$tmp/stocklib/$soname"
$CC -std=gnu11 -O2 -Wall -Wextra -Werror -pthread -I"$top_srcdir/include" \
	-o "$tmp/prog" "$top_srcdir/tests/abi-prog.c" "$ours" ||
	fail "cannot build against our header"

run_on stock
run_on ours
echo "PASS"
