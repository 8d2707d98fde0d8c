#!/bin/sh
# Runs one test program in every mode the library has: natively, with each
# fallback forced through LIBAIO_DISABLE, with all of them at once, and with
# io_pgetevents answering ENOSYS from a seccomp filter (a pre-4.18 kernel).
# LIBAIO_TEST_MODES narrows the list (e.g. "native ring").
# Exit: 0 all passed, 77 only if every mode skipped, else the first failure.
prog="$1"; shift
modes=${LIBAIO_TEST_MODES:-"native poll pgetevents ring poll,pgetevents,ring seccomp-pgetevents"}
rc_all=77
for m in $modes; do
	case $m in
	native) env -u LIBAIO_DISABLE -u LIBAIO_TEST_SECCOMP "$prog" "$@" ;;
	seccomp-*) env -u LIBAIO_DISABLE LIBAIO_TEST_SECCOMP="${m#seccomp-}" "$prog" "$@" ;;
	*) env -u LIBAIO_TEST_SECCOMP LIBAIO_DISABLE="$m" "$prog" "$@" ;;
	esac
	rc=$?
	echo "== mode $m: exit $rc"
	case $rc in
	0) rc_all=0 ;;
	77) ;;
	*) exit $rc ;;
	esac
done
exit $rc_all
