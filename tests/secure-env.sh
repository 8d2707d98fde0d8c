#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# LIBAIO_DISABLE is the environment's word, so a program running with
# raised privileges ignores it, as secure_getenv(3) would: a set-user-ID
# copy of a small program (linked with libaio.a, so that the library it
# finds does not depend on a search path that secure execution ignores)
# still reports the ring reaper on, the same program without the bit
# reports it switched off.  Needs root, to give the copy to another user.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_static
[ "$(id -u)" = 0 ] || skip "needs root to make a set-user-ID copy owned by another user"
chmod 755 "$tmp"
cat > "$tmp/prog.c" <<'PROG'
#include <libaio.h>
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	unsigned f = io_features();

	printf("%s %s\n", geteuid() != getuid() ? "privileged" : "plain",
	       f & IO_FEATURE_RING_DISABLED ? "ring-disabled" : "ring-on");
	return 0;
}
PROG
build_static prog "$archive" || fail "cannot build the program"
plain=$(LIBAIO_DISABLE=ring "$tmp/prog") || fail "the program did not run"
[ "$plain" = "plain ring-disabled" ] || fail "without privileges: '$plain'"
{ chown 65534 "$tmp/prog" && chmod 4755 "$tmp/prog"; } || skip "cannot make a set-user-ID copy"
priv=$(LIBAIO_DISABLE=ring "$tmp/prog") || fail "the set-user-ID program did not run"
case $priv in
"plain "*) skip "$tmp does not honour the set-user-ID bit (nosuid)" ;;
"privileged ring-on") echo "PASS: LIBAIO_DISABLE ignored with raised privileges" ;;
*) fail "with raised privileges: '$priv' (LIBAIO_DISABLE was obeyed)" ;;
esac
