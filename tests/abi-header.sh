#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2086 # $CC, $CXX and $strict are lists of words
# The public header on its own: it compiles alone as strict C99 and C11
# (-pedantic -Wall -Wextra -Werror), as C++11 and C++17, and for i386;
# it defines AIOREAP_EXTENSIONS (and not upstream's LIBAIO_EXTENSIONS);
# and a 32-bit program built with _TIME_BITS=64 calls
# io_getevents_time64 and io_pgetevents_time64 (checked with nm on a
# small object), while one built without it, or a 64-bit one with it,
# calls the plain names.  When the distribution's header is installed,
# tests/test-abi-layout.c is also compiled against it, so the layout
# table is checked against the stock header as well as ours.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_ours
inc=$top_srcdir/include
strict="-pedantic -Wall -Wextra -Werror"

printf '#include <libaio.h>\n' > "$tmp/alone.c"
# Twice, and with the declarations used, so include guards and the
# inline helpers are exercised too.
cat > "$tmp/used.c" <<'EOC'
#include <libaio.h>
#include <libaio.h>
int use_all(io_context_t ctx, struct iocb *cb, struct io_event *ev,
	    struct timespec *ts, sigset_t *mask);
int use_all(io_context_t ctx, struct iocb *cb, struct io_event *ev,
	    struct timespec *ts, sigset_t *mask)
{
	io_prep_pread(cb, 0, (void *)0, 0, 0);
	io_set_eventfd(cb, 3);
	io_set_callback(cb, (io_callback_t)0);
	return io_getevents(ctx, 1, 1, ev, ts) +
	       io_pgetevents(ctx, 1, 1, ev, ts, mask) +
	       io_fsync(ctx, cb, (io_callback_t)0, 0) +
	       io_poll(ctx, cb, (io_callback_t)0, 0, 1);
}
EOC

compile() { # label, compiler and flags...
	label=$1
	shift
	if "$@" -c -o "$tmp/obj.o" 2> "$tmp/err"; then
		echo "ok   $label"
	else
		cat "$tmp/err"
		bad "$label"
	fi
}

# Alone and used, as C99 and C11 and, given a C++ compiler, C++11 and C++17.
cxx_stds="c++11 c++17"
command -v "${CXX%% *}" >/dev/null 2>&1 || {
	cxx_stds=
	echo "SKIP (part): no C++ compiler '$CXX': the header is not checked as C++"
}
for std in c99 c11 $cxx_stds; do
	case $std in c++*) lang=C++ cc="$CXX -x c++" ;; *) lang=C cc=$CC ;; esac
	for f in alone used; do
		compile "$lang $std $f" $cc -std=$std $strict -I"$inc" "$tmp/$f.c"
	done
done
compile "C gnu11 used" $CC -std=gnu11 $strict -I"$inc" "$tmp/used.c"
if command -v clang >/dev/null 2>&1; then
	compile "clang c99 used" clang -std=c99 $strict -I"$inc" "$tmp/used.c"
else
	echo "SKIP (part): clang not installed: the header is checked with $CC only"
fi

# The feature macro says the four extensions are declared, and is in the
# project's namespace: LIBAIO_* belongs to upstream libaio, and a program
# testing the old development name must fall back to its stock path.
cat > "$tmp/macro.c" <<'EOC'
#include <libaio.h>
#if !defined(AIOREAP_EXTENSIONS) || AIOREAP_EXTENSIONS != 1
#error "AIOREAP_EXTENSIONS is not defined to 1"
#endif
#ifdef LIBAIO_EXTENSIONS
#error "LIBAIO_EXTENSIONS (upstream's namespace) is defined"
#endif
int (*reap)(io_context_t, long, struct io_event *) = io_reap;
int (*active)(io_context_t) = io_reaper_active;
unsigned int (*features)(void) = io_features;
unsigned long long (*count)(void) = io_syscall_count;
EOC
compile "C c99 AIOREAP_EXTENSIONS and the four extensions" \
	$CC -std=c99 $strict -I"$inc" "$tmp/macro.c"

# expect_calls COMPILER LABEL WANT FLAGS...: the sorted io_*getevents*
# names that used.c built by COMPILER (words) with FLAGS calls are WANT.
expect_calls() {
	ecc=$1 label=$2 want=$3
	shift 3
	if ! $ecc -std=gnu11 $strict -I"$inc" "$@" -c -o "$tmp/t.o" "$tmp/used.c" 2> "$tmp/err"; then
		cat "$tmp/err"
		bad "$label: does not compile"
	elif got=$(nm -u "$tmp/t.o" | awk '{ print $NF }' | grep getevents | sort | tr '\n' ' ') &&
		[ "$got" = "$want" ]; then
		echo "ok   $label: $got"
	else
		bad "$label: calls '$got', want '$want'"
	fi
}

# A 32-bit x86 compiler: $CC -m32 (gcc-multilib) or Debian's cross
# compiler for i386 (crossbuild-essential-i386, which the kernels job
# installs anyway, and which cannot be installed beside gcc-multilib).
# The probe includes libc headers: a bare -m32 compile succeeds with the
# compiler alone, while every real 32-bit compile also needs the 32-bit
# C library headers.
cc32=
for c in "$CC -m32" i686-linux-gnu-gcc; do
	if printf '#include <sys/types.h>\n#include <signal.h>\n#include <time.h>\nint x;\n' |
		$c -x c -c -o "$tmp/m32.o" - 2>/dev/null; then
		cc32=$c
		break
	fi
done
if [ -n "$cc32" ]; then
	compile "C c99 32-bit used ($cc32)" $cc32 -std=c99 $strict -I"$inc" "$tmp/used.c"
	expect_calls "$cc32" "32-bit _TIME_BITS=64" "io_getevents_time64 io_pgetevents_time64 " \
		-D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64
	expect_calls "$cc32" "32-bit" "io_getevents io_pgetevents "
else
	echo "SKIP (part): neither $CC -m32 nor i686-linux-gnu-gcc compiles a file" \
		"that includes <sys/types.h> (no gcc-multilib, no crossbuild-essential-i386):" \
		"the 32-bit compile and the 32-bit _TIME_BITS=64 redirection are not checked"
fi
case $(elf_class "$ours") in
64) expect_calls "$CC" "64-bit _TIME_BITS=64" "io_getevents io_pgetevents " \
	-D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64 ;;
esac

# The layout checks hold for the stock header too (same ABI).
if stock_header; then
	if $CC -std=gnu11 -Wall -I"$tmp/stockinc" -o "$tmp/layout" \
		"$top_srcdir/tests/test-abi-layout.c" 2> "$tmp/err" &&
		"$tmp/layout"; then
		echo "ok   stock header passes tests/test-abi-layout.c"
	else
		cat "$tmp/err"
		bad "stock header fails tests/test-abi-layout.c"
	fi
fi

finish
