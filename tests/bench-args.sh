#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# aio-bench: options, exit codes and the shape of its output (tables, JSON,
# CSV).  Timings are never checked; every run here is tiny.
set -u
bench=${top_builddir:-.}/aio-bench
[ -x "$bench" ] || { echo "no $bench"; exit 99; }
"${top_builddir:-.}/tests/aio-probe" || exit $?	# skips where AIO answers ENOSYS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-args.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# expect RC DESCRIPTION ARGS...: run, compare the exit code.
expect() {
	want=$1 what=$2
	shift 2
	"$bench" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq "$want" ]; then pass "$what (exit $rc)"; else
		fail "$what: exit $rc, want $want"; sed 's/^/  | /' "$tmp/err" | head -n 5
	fi
}

tiny="--time 0.01 --reps 1 --batches 1,16 --conns 1,2 --depths 1,4 --file-size 8"

expect 0 "--help" --help
grep -q -- "--workloads" "$tmp/out" && pass "--help lists --workloads" || fail "--help text"
expect 0 "-h" -h
expect 0 "--version" --version
grep -q "aio-bench" "$tmp/out" && pass "--version names the tool" || fail "--version text"

expect 2 "unknown option" --no-such-option
grep -q "no-such-option" "$tmp/err" && pass "unknown option is named" || fail "no message for an unknown option"
expect 2 "unknown short option" -Z
expect 2 "missing argument" --time
grep -q "needs an argument" "$tmp/err" && pass "missing argument message" || fail "no message for a missing argument"
expect 2 "bad --time" --time abc
expect 2 "zero --time" --time 0
expect 2 "bad --reps" --reps 0
expect 2 "bad --workloads" --workloads reap,bogus
expect 2 "bad --conns" --conns 1,x
expect 2 "bad --procs" --procs 3
expect 2 "bad --batches (does not divide the fill)" --batches 7
expect 2 "bad --direct" --direct sometimes
expect 2 "stray argument" stray
expect 2 "--json with --csv" --json --csv

# Human output: header lines and one table per workload.
expect 0 "tiny table run" $tiny --workloads reap,loop,file
for key in "kernel:" "poll:" "pgetevents:" "ring reaper:" "== reap" "== loop" "== file" \
	"ours-ring" "ours-syscall" "copy-floor" "epoll-lt" "epoll-oneshot" \
	"aio-poll-ours" "aio-poll-syscall" "series"; do
	grep -q -- "$key" "$tmp/out" && pass "table has '$key'" || fail "table lacks '$key'"
done
# The bare ring copy and the multi-threaded child must really have run:
# a number, not "-".
for series in ring-copy-floor ours-ring-mt; do
	grep -Eq "^$series +batch=[0-9]+ +[0-9]+\.[0-9]+ " "$tmp/out" &&
		pass "$series measured" || fail "$series has no value"
done
grep -Eq "ring reaper: +(on \(|off \()" "$tmp/out" &&
	pass "ring reaper state" || fail "ring reaper state line"
LIBAIO_DISABLE=ring "$bench" --workloads reap --time 0.01 --reps 1 --batches 1 >"$tmp/out" 2>&1
grep -q "ring reaper:  off (LIBAIO_DISABLE)" "$tmp/out" && pass "LIBAIO_DISABLE=ring is reported" ||
	fail "LIBAIO_DISABLE=ring not reported"

# JSON: parses, has the expected keys, rows carry the expected fields.
expect 0 "tiny --json run" $tiny --json
if command -v python3 >/dev/null 2>&1; then
	python3 -m json.tool "$tmp/out" >/dev/null && pass "JSON parses" || fail "JSON does not parse"
	python3 - "$tmp/out" <<'PY' && pass "JSON keys and rows" || fail "JSON keys or rows"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("version", "kernel", "features", "rows", "targets", "reps", "cell_time"):
    assert k in d, k
for k in ("poll", "pgetevents", "ring_reaper"):
    assert k in d["features"], k
wl = {r["workload"] for r in d["rows"]}
assert wl == {"reap", "loop", "file"}, wl
for r in d["rows"]:
    for k in ("series", "param", "unit", "median", "min", "max", "reps", "baseline", "ratio", "note"):
        assert k in r, k
assert any(r["series"] == "ours-ring" and r["reps"] == 1 for r in d["rows"])
PY
else
	echo "skip: no python3 for the JSON checks"
fi
[ ! -s "$tmp/err" ] || ! grep -q "aio-bench: [a-z]" "$tmp/err" || { fail "--json run warned"; cat "$tmp/err"; }

# CSV: header row first, then rows with the same number of fields.
expect 0 "tiny --csv run" $tiny --workloads reap,loop --csv
head -n 1 "$tmp/out" | grep -q "^workload,series,param,unit,median,min,max,reps,baseline,ratio" &&
	pass "CSV header" || fail "CSV header row"
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) > 2 and all(len(r) == len(rows[0]) for r in rows)' "$tmp/out" &&
		pass "CSV rows have the header's field count" || fail "CSV field counts"
fi

# Two processes, CPU pinning, a named file, no stock library.
expect 0 "--procs 1,2 --cpu 0" --workloads loop --time 0.01 --reps 1 --conns 1 --procs 1,2 --cpu 0 --csv
grep -q "K=1 2p" "$tmp/out" && pass "two-process rows" || fail "no two-process rows"
expect 0 "--file PATH (created and removed)" --workloads file --time 0.01 --reps 1 --depths 2 \
	--file "$tmp/data" --file-size 4 --stock none
[ ! -e "$tmp/data" ] && pass "created file removed" || fail "file left behind"
grep -q "stock-libaio" "$tmp/out" && pass "stock row shown when skipped" || fail "stock row missing"
expect 0 "--progress" --workloads reap --time 0.01 --reps 1 --batches 1 --progress
grep -q "reap" "$tmp/err" && pass "progress on stderr" || fail "no progress line"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
exit 0
