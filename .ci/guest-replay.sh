#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kernels job's log compiler for the .mode tests (.ci/kernels.sh,
# replay): instead of running tests/test-AREA.MODE.mode, give back what
# the guest's run of it printed and its exit status, kept in $GUEST_OUT
# as test-AREA.MODE.out and .rc, so that automake's TAP driver reads the
# guest's runs as make check reads the host's.
n=${1##*/}
n=$GUEST_OUT/${n%.mode}
[ -f "$n.rc" ] || { echo "Bail out! the guest did not run $1"; exit 99; }
cat "$n.out"
exit "$(cat "$n.rc")"
