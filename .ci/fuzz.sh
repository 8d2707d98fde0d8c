#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fuzzing job: build the two libFuzzer targets (clang, ASan + UBSan) and
# run each for FUZZ_SECONDS (default 30) from the committed seed corpus.
# New inputs go to a scratch directory, so the tree stays clean.  Fails on
# a crash, a sanitizer report, an invariant abort, a leak or a timeout;
# the reproducer is left in $BUILD (crash-*, timeout-*, leak-*).
#   FUZZ_SECONDS=600 bash .ci/fuzz.sh          # a longer run
#   BUILD=$AIOREAP_CI_SCRATCH/build-fuzz (default)  CC=clang (default)
set -euo pipefail
# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-$ci_scratch/build-fuzz}
CC=${CC:-clang}
secs=${FUZZ_SECONDS:-30}
command -v "$CC" >/dev/null || { echo "fuzz: $CC not found"; exit 77; }
# Only config.h is needed from configure.
if [ "$BUILD/config.h" -nt "$src/configure" ]; then cd "$BUILD"; else ci_configure "$BUILD" CC="$CC"; fi

# shellcheck disable=SC2054 # the commas are -fsanitize's
flags=(-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
	-I"$BUILD" -I"$src/src" -I"$src/include")
"$CC" "${flags[@]}" -o fuzz-ring "$src/fuzz/fuzz-ring.c"
"$CC" "${flags[@]}" -pthread -o fuzz-args "$src/fuzz/fuzz-args.c" "$src"/src/*.c

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rc=0
for t in ring args; do
	work=$BUILD/corpus-$t
	rm -rf "$work" && mkdir -p "$work"
	echo "=== fuzz-$t for $secs s"
	./fuzz-$t -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$BUILD/" \
		"$work" "$src/fuzz/corpus/$t" >fuzz-$t.log 2>&1 || rc=1
	grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE|ERROR|invariant|SUMMARY' \
		fuzz-$t.log | head -20
	[ $rc = 0 ] || { tail -60 fuzz-$t.log; exit 1; }
done
ci_counts fuzz 2 0 0 "(fuzz-ring, fuzz-args: $secs s each, no crash)"
