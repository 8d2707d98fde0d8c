#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# LIBAIO_DISABLE is the environment's word, so a program running with
# raised privileges ignores it, as secure_getenv(3) would: a set-user-ID
# copy of a small program (linked with libaio.a, so that the library it
# finds does not depend on a search path that secure execution ignores)
# still reports the ring reaper on, the same program without the bit
# reports it switched off.  Needs root, to give the copy to another user.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${CC:=cc}"
lib=$top_builddir/.libs/libaio.a
[ -f "$lib" ] || { echo "SKIP: no static archive $lib (configure --disable-static)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to make a set-user-ID copy owned by another user"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/secure-env.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
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
# shellcheck disable=SC2086
$CC -std=gnu11 ${TEST_CFLAGS:-} -I"$top_srcdir/include" -o "$tmp/prog" \
	"$tmp/prog.c" ${TEST_LDFLAGS:-} "$lib" -pthread || { echo "FAIL: cannot build the program"; exit 1; }
plain=$(LIBAIO_DISABLE=ring "$tmp/prog") || { echo "FAIL: the program did not run"; exit 1; }
[ "$plain" = "plain ring-disabled" ] || { echo "FAIL: without privileges: '$plain'"; exit 1; }
chown 65534 "$tmp/prog" && chmod 4755 "$tmp/prog" || { echo "SKIP: cannot make a set-user-ID copy"; exit 77; }
priv=$(LIBAIO_DISABLE=ring "$tmp/prog") || { echo "FAIL: the set-user-ID program did not run"; exit 1; }
case $priv in
"plain "*) echo "SKIP: $TMPDIR does not honour the set-user-ID bit (nosuid)"; exit 77 ;;
"privileged ring-on") echo "PASS: LIBAIO_DISABLE ignored with raised privileges" ;;
*) echo "FAIL: with raised privileges: '$priv' (LIBAIO_DISABLE was obeyed)"; exit 1 ;;
esac
