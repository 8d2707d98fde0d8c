#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Memcheck learns that the kernel filled a read buffer from its own
# io_getevents wrapper; completions reaped from the ring bypass it.  Run the
# test that branches on data read through a ring-reaped completion under
# memcheck: it is clean only because the library marks those bytes defined.
# (Built with --disable-valgrind-hints, memcheck reports "Conditional jump
# or move depends on uninitialised value" in the same test.)
"$top_builddir/tests/aio-probe" || exit $?	# skips where AIO answers ENOSYS
command -v valgrind >/dev/null 2>&1 || { echo "SKIP: valgrind not installed"; exit 77; }
grep -q 'define HAVE_VALGRIND_HINTS 1' "$top_builddir/config.h" ||
	{ echo "SKIP: built without valgrind hints (--disable-valgrind-hints or no valgrind/memcheck.h)"; exit 77; }
# Valgrind must be able to run this build's programs at all (an i386
# build needs libc6-dbg:i386, for instance): if it cannot, skip.
CK_RUN_CASE=none-such $LIBTOOL --mode=execute valgrind -q \
	"$top_builddir/tests/test-reaper" >/dev/null 2>&1 ||
	{ echo "SKIP: valgrind cannot run this build's programs"; exit 77; }
# Natively (reaper on), and with the reaper off as the control.
for mode in "" ring; do
	LIBAIO_DISABLE=$mode CK_RUN_CASE=valgrind CK_FORK=no \
		$LIBTOOL --mode=execute valgrind --error-exitcode=3 -q \
		"$top_builddir/tests/test-reaper" || exit 1
done
