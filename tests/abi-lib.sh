# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# Sourced by the shell tests that look at the built library: tests/abi-*.sh,
# static-*.sh, secure-env.sh, fastpath-frame.sh and src-layering.sh.  Takes
# top_srcdir and top_builddir (default: .), CC, CXX, STOCK_LIBAIO and
# STOCK_LIBAIO_H from the environment (tests/local.mk sets them) and gives:
# absolute paths; $ours (our libaio.so.1) and $archive (our libaio.a); a
# scratch $tmp under $TMPDIR, removed on exit; skip and fail; bad and
# finish, for a test that goes on after a failed check; the need_* skips;
# stock_header, build_static and run_on.  77 is used only for what
# cannot exist on this machine, never for a check that went wrong.

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
rc_all=0
bad() { echo "FAIL: $*"; rc_all=1; }
finish() { [ $rc_all -eq 0 ] && echo PASS; exit $rc_all; }

CC=${CC:-cc}
CXX=${CXX:-c++}
top_srcdir=$(cd "${top_srcdir:-.}" && pwd) || fail "no source directory"
top_builddir=$(cd "${top_builddir:-.}" && pwd) || fail "no build directory"
ours=$top_builddir/.libs/libaio.so.1
archive=$top_builddir/.libs/libaio.a

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-test.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

need_ours() { [ -e "$ours" ] || skip "no shared library built ($ours)"; }
need_static() {
	[ -f "$archive" ] || skip "no static archive $archive (configure --disable-static)"
}
# need_cmd TOOL PACKAGE
need_cmd() { command -v "$1" >/dev/null 2>&1 || skip "$1 not installed ($2)"; }

# Skip where the AIO system calls answer ENOSYS (tests/aio-probe says why).
need_aio() { "$top_builddir/tests/aio-probe" || exit $?; }

elf_class() { # 32, 64 or unknown
	case $(od -An -tx1 -j4 -N1 "$1" | tr -d ' ') in
	01) echo 32 ;; 02) echo 64 ;; *) echo unknown ;;
	esac
}

real() { readlink -f "$1"; }

# need_stock offers the stock library alone in $tmp/stocklib, for
# LD_LIBRARY_PATH.
need_stock() {
	[ -e "${STOCK_LIBAIO:-}" ] ||
		skip "no stock libaio.so.1 (configure --with-stock-libaio=PATH)"
	[ "$(elf_class "$STOCK_LIBAIO")" = "$(elf_class "$ours")" ] ||
		skip "stock $STOCK_LIBAIO is not the same ELF class as ours"
	{ mkdir "$tmp/stocklib" && ln -s "$(real "$STOCK_LIBAIO")" "$tmp/stocklib/libaio.so.1"; } ||
		fail "$tmp/stocklib"
}

# stock_header: false without the distribution's libaio.h, else it is
# copied alone into $tmp/stockinc, for -I.
stock_header() {
	[ -f "${STOCK_LIBAIO_H:-}" ] || return 1
	{ mkdir "$tmp/stockinc" && cp "$STOCK_LIBAIO_H" "$tmp/stockinc/libaio.h"; } ||
		fail "cannot copy $STOCK_LIBAIO_H"
}

# dyn TAG FILE: the values of FILE's dynamic TAG (SONAME, NEEDED), one a line.
dyn() { readelf -d "$2" | sed -n "s/.*($1).*\[\(.*\)\]/\1/p"; }

# build_static PROG LINK...: $tmp/PROG.c built into $tmp/PROG against our
# header, with LINK (where libaio.a goes) and the build's own CFLAGS and
# LDFLAGS: a sanitizer build's archive needs the sanitizer runtime.
build_static() {
	prog=$1
	shift
	# shellcheck disable=SC2086
	$CC -std=gnu11 ${TEST_CFLAGS:-} -I"$top_srcdir/include" -o "$tmp/$prog" \
		"$tmp/$prog.c" ${TEST_LDFLAGS:-} "$@" -pthread
}

# run_on stock|ours [ENV...]: $tmp/prog (tests/abi-prog.c) run with ENV
# and that library's directory in LD_LIBRARY_PATH; it must pass and must
# have mapped that library (it prints the libaio file it finds in
# /proc/self/maps).
run_on() {
	case $1 in
	stock) label="stock library" want=$STOCK_LIBAIO dir=$tmp/stocklib ;;
	*) label="our library" want=$ours dir=$top_builddir/.libs ;;
	esac
	shift
	[ $# -eq 0 ] || label="$label, $*"
	echo "== $label"
	env LD_LIBRARY_PATH="$dir" "$@" "$tmp/prog" > "$tmp/out" 2>&1
	rc=$?
	cat "$tmp/out"
	[ $rc -eq 0 ] || fail "$label: exit $rc"
	got=$(sed -n 's/^libaio: //p' "$tmp/out")
	[ -n "$got" ] || fail "$label: no libaio mapped"
	[ "$(real "$got")" = "$(real "$want")" ] ||
		fail "$label: loaded $got, expected $want"
}
