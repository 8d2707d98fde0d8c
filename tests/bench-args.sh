#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# aio-bench: options, exit codes and the shape of its output (tables, JSON,
# CSV).  Timings are never checked; every run here is tiny.
set -u
bench=${top_builddir:-.}/aio-bench
[ -x "$bench" ] || { echo "no $bench"; exit 99; }
"${top_builddir:-.}/tests/aio-probe" || exit $?	# skips where AIO answers ENOSYS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-args.XXXXXX") || exit 99
pids=""	# every aio-bench this script started
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
# check PASS FAIL COMMAND...: pass PASS when COMMAND succeeds, else fail FAIL.
check() { p=$1 f=$2; shift 2; if "$@"; then pass "$p"; else fail "$f"; fi; }
# has PASS FAIL ERE [FILE]: check that FILE (the last run's output) has a
# line matching ERE.
has() { check "$1" "$2" grep -Eq -- "$3" "${4:-$tmp/out}"; }
py=$(command -v python3) || echo "skip: no python3 for the JSON and CSV checks"

# expect RC DESCRIPTION ARGS...: run, compare the exit code.
expect() {
	want=$1 what=$2
	shift 2
	# In the background only to learn its pid, which names its tmpfs file.
	"$bench" "$@" >"$tmp/out" 2>"$tmp/err" &
	pids="$pids $!"
	wait $!
	rc=$?
	if [ $rc -eq "$want" ]; then pass "$what (exit $rc)"; else
		fail "$what: exit $rc, want $want"; sed 's/^/  | /' "$tmp/err" | head -n 5
	fi
}

# tiny DESCRIPTION ARGS...: expect 0 from a tiny run of every kind of cell.
# The disk-backed file goes under $TMPDIR (it may be tmpfs there: the tool
# then warns that it is not a disk, which is fine here).
tiny() { expect 0 "$@" --time 0.01 --reps 1 --batches 1,16 --conns 1,2 --depths 1,4 \
	--file-size 8 --file "$tmp/disk" --threads 2 --thread-depth 4; }

# A kernel without AIO: the report says so, the AIO rows say why they are
# empty, and the tool exits cleanly.
noaio=${top_builddir:-.}/tests/noaio-exec
if [ -x "$noaio" ]; then
	"$noaio" "$bench" --workloads reap --time 0.01 --reps 1 --batches 1 \
		>"$tmp/noaio" 2>&1
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "skip: no seccomp here for the no-AIO run"
	elif [ $rc -eq 0 ] && grep -q '^kernel AIO: *no' "$tmp/noaio" &&
	     grep -q 'Function not implemented' "$tmp/noaio"; then
		pass "no-AIO run: the report says so and exits 0"
	else
		fail "no-AIO run: exit $rc, or the report does not say AIO is missing"
		head -n 20 "$tmp/noaio" | sed 's/^/  | /'
	fi
fi

# Rows "EXIT|ARGS|out or err|ERE": aio-bench ARGS exits EXIT, and its
# stdout or stderr matches ERE (a usage error names what it rejects).
while IFS='|' read -r want args where ere; do
	# shellcheck disable=SC2086 # ARGS are words
	expect "$want" "$args" $args
	has "$args: $where has '$ere'" "$args: $where lacks '$ere'" "$ere" "$tmp/$where"
done <<'EOF'
0|--help|out|--workloads
0|-h|out|--workloads
0|--version|out|^aio-bench
2|--no-such-option|err|unknown option '--no-such-option'
2|-Z|err|unknown option '-Z'
2|--time|err|'--time' needs an argument
2|--time abc|err|bad --time 'abc'
2|--time 0|err|bad --time '0'
2|--reps 0|err|bad --reps '0'
2|--workloads reap,bogus|err|bad --workloads 'reap,bogus'
2|--workloads thread|err|bad --workloads 'thread'
2|--workloads buffer|err|bad --workloads 'buffer'
2|--conns 1,x|err|bad --conns '1,x'
2|--procs 3|err|bad --procs '3'
2|--batches 7|err|bad --batches '7' .*dividing
2|--direct sometimes|err|bad --direct 'sometimes'
2|--threads 0|err|bad --threads '0'
2|--thread-depth 5000|err|bad --thread-depth '5000'
2|--pattern some|err|bad --pattern 'some'
2|stray|err|unexpected argument 'stray'
2|--json --csv|err|--json and --csv
EOF

# Human output: header lines and one table per workload.
tiny "tiny table run" --workloads reap,loop,file,threads,buffered
for key in "kernel:" "poll:" "pgetevents:" "ring reaper:" "== reap" "== loop" "== file" \
	"== threads" "== buffered" "ours-ring" "ours-syscall" "ours-async" "copy-floor" \
	"epoll-lt" "epoll-oneshot" "aio-poll-ours" "aio-poll-syscall" "series" "sc/op" \
	"cpu vs" "dup" "lost" "sub max" "one ring per thread"; do
	has "table has '$key'" "table lacks '$key'" "$key"
done
# CPU and system calls carry measured numbers (usr, sys, cpu ratio, sc/op,
# sc ratio) in the reap and file rows of ours and stock, and the threads
# rows show 0 duplicates and 0 losses.
num='[0-9]+(\.[0-9]+)?'
for row in "ours-ring +batch=16" "stock-libaio +batch=16" "ours-ring +tmpfs QD=4" \
	"stock-libaio +tmpfs QD=4" "ours-ring +(direct|buffered)(-tmpfs)? QD=4" \
	"stock-libaio +(direct|buffered)(-tmpfs)? QD=1"; do
	has "'$row' has CPU and system-call figures" "'$row' lacks CPU or system-call figures" \
		"^$row +$num +$num-$num +${num}x +$num +$num +${num}x +$num +(${num}x|inf) "
done
for series in ours-ring stock-libaio; do
	has "threads: $series measured, 0 dup, 0 lost" "threads: $series row" \
		"^$series +tmpfs T=2 +$num .* 0 +0 +one shared context"
done
has "threads: io_uring row" "threads: io_uring row" \
	"^io_uring +tmpfs T=2 +($num .* 0 +0 +one ring per thread|.*not built with liburing)"
# buffered: every AIO series measured, reads and writes, with its cost and
# its longest io_submit; io_uring has no io_submit ("-").
for row in "stock-libaio +read QD=4" "ours-ring +read QD=1" "ours-async +read QD=4" \
	"stock-libaio +write QD=1" "ours-ring +write QD=4" "ours-async +write QD=4"; do
	has "buffered: '$row' measured" "buffered: '$row' lacks figures" \
		"^$row +$num +$num-$num +(${num}x|-) +(${num}x|-) +$num +$num +(${num}x|-) +$num +(${num}x|inf|-) +$num  "
done
# ... and where its requests went, from the library's counters.
has "buffered: ours-async notes io_async_stats" "buffered: ours-async has no counters note" \
	"^ours-async +read QD=4 .*  inline [0-9]+%, to workers [0-9]+%, redriven [0-9]+%$"
has "buffered: io_uring row" "buffered: io_uring row" \
	"^io_uring +read QD=4 +($num .* -  |.*not built with liburing)"
has "buffered: the direct row, async on, or why not" "buffered: no direct row" \
	"^(ours-async +direct QD=128 +$num |direct QD=128: skipped: )"
has "buffered: the fsync is named" "buffered: no fsync line" "then one fsync through"
# The stock library's reap makes one system call per io_getevents, ours
# none when the events are in the ring.
has "stock: one system call per batch-1 reap" "stock reap system calls" \
	"^stock-libaio +batch=1 .* 1\.000 +1\.00x "
if grep -q "ring reaper:  on" "$tmp/out"; then
	has "ours: no system call to reap from the ring" "ours reap system calls" \
		"^ours-ring +batch=16 .* 0\.000 +inf "
fi
check "disk-backed file removed" "disk-backed file left behind" test ! -e "$tmp/disk"
# The bare ring copy and the multi-threaded child must really have run:
# a number, not "-".
for series in ring-copy-floor ours-ring-mt; do
	has "$series measured" "$series has no value" "^$series +batch=[0-9]+ +[0-9]+\.[0-9]+ "
done
has "ring reaper state" "ring reaper state line" "ring reaper: +(on \(|off \()"
has "the machine-wide limit" "no aio limit line" \
	"^aio limit: +fs\.aio-nr [0-9]+ of fs\.aio-max-nr [0-9]+, [0-9]+ left "
has "what the deepest io_setup takes" "no io_setup line" \
	"^io_setup\([0-9]+\): charges [0-9]+, maps [0-9]+ slots in [0-9]+ KiB "
# The project's own targets only with --targets.
check "no target line by default" "a target line without --targets" \
	sh -c '! grep -q "^target:" "$1"' sh "$tmp/out"
expect 0 "--targets" --workloads reap --time 0.01 --reps 1 --batches 1,256 --targets
has "--targets: the stock target" "--targets: no stock target" \
	"^target: ours-ring cheaper than stock-libaio, batch=1: want >= 10\.00x, (measured $num""x: (met|MISSED)|not measured)$"
has "--targets: a copy-floor target" "--targets: no copy-floor target" \
	"^target: ours-ring within 1\.3x of copy-floor, batch=256: want >= 0\.77x, "
LIBAIO_DISABLE=ring "$bench" --workloads reap --time 0.01 --reps 1 --batches 1 >"$tmp/out" 2>&1
has "LIBAIO_DISABLE=ring is reported" "LIBAIO_DISABLE=ring not reported" \
	"ring reaper:  off \(LIBAIO_DISABLE\)"

# JSON: parses, has the expected keys, rows carry the expected fields.
tiny "tiny --json run" --workloads reap,loop,file,threads,buffered --json
[ -z "$py" ] || check "JSON keys and rows" "JSON keys or rows" python3 - "$tmp/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def need(keys, have, what):
    missing = set(keys.split()) - set(have)
    assert not missing, "%s lacks %s" % (what, sorted(missing))
need("version kernel features rows targets reps cell_time", d, "the report")
assert d["targets"] == [], d["targets"]	# none without --targets
need("poll pgetevents ring_reaper", d["features"], "features")
need("aio_nr aio_max_nr available io_setup charge ring_events ring_bytes "
     "possible_cpus page_size", d["aio_limits"], "aio_limits")
lim = d["aio_limits"]
assert lim["charge"] == lim["io_setup"] and lim["ring_events"] >= 2 * lim["charge"], lim
wl = {r["workload"] for r in d["rows"]}
assert wl == {"reap", "loop", "file", "threads", "buffered"}, wl
for r in d["rows"]:
    need("series param unit median min max reps baseline ratio note cpu_usr_us "
         "cpu_sys_us cpu_us cpu_ratio syscalls syscall_ratio cost_reps "
         "submit_max_us", r, r)
assert any(r["series"] == "ours-ring" and r["reps"] == 1 for r in d["rows"])
# Every measured reap, file and threads row has its cost measured too
# (a cell of 10 ms on a loaded machine may see no I/O complete at all:
# then there is no cost to measure).
for r in d["rows"]:
    if r["workload"] != "loop" and r["reps"] and r["median"]:
        assert r["cost_reps"] == r["reps"], r
        assert r["cpu_us"] is not None and r["cpu_us"] >= 0, r
        assert r["syscalls"] is not None and r["syscalls"] >= 0, r
params = {r["param"].split()[0] for r in d["rows"] if r["workload"] == "file"}
assert "tmpfs" in params and params & {"direct", "buffered", "direct-tmpfs",
                                       "buffered-tmpfs"}, params
th = [r for r in d["rows"] if r["workload"] == "threads"]
assert {r["series"] for r in th} >= {"ours-ring", "stock-libaio"}, th
for r in th:
    if r["reps"]:
        assert r["dups"] == 0 and r["lost"] == 0, r
        # A 10 ms cell on a loaded machine may complete nothing: the
        # figure must be there, not positive.
        assert isinstance(r["median"], (int, float)) and r["median"] >= 0, r
stock = [r for r in d["rows"] if r["workload"] == "file" and r["series"] == "stock-libaio"
         and r["reps"]]
assert stock and all(r["syscalls"] > 0 for r in stock), stock
# buffered: reads and writes at each depth for the four series; the AIO
# ones carry their longest io_submit, io_uring none.
bu = [r for r in d["rows"] if r["workload"] == "buffered"]
got = {(r["series"], r["param"]) for r in bu}
for s in ("stock-libaio", "ours-ring", "ours-async", "io_uring"):
    for p in ("read QD=1", "read QD=4", "write QD=1", "write QD=4"):
        assert (s, p) in got, (s, p)
for r in bu:
    if r["series"] == "io_uring" or not r["reps"]:
        assert r["submit_max_us"] is None, r
    else:
        assert r["submit_max_us"] is not None and r["submit_max_us"] > 0, r
        assert r["syscalls"] is not None and r["syscalls"] > 0, r
for r in bu:
    if r["param"].startswith("direct"):
        assert r["series"] in ("ours-ring", "ours-async"), r
PY
[ ! -s "$tmp/err" ] || ! grep -v "not on a disk" "$tmp/err" | grep -q "aio-bench: [a-z]" ||
	{ fail "--json run warned"; cat "$tmp/err"; }

# CSV: header row first, then rows with the same number of fields.
tiny "tiny --csv run" --workloads reap,loop,buffered --csv
check "CSV header" "CSV header row" grep -q "^workload,series,param,unit,median,min,max,reps,baseline,ratio,baseline2,ratio2,cpu_usr_us,cpu_sys_us,cpu_us,cpu_ratio,syscalls,syscall_ratio,dups,lost,kernel,version,note,submit_max_us$" "$tmp/out"
has "CSV: a buffered row with its longest io_submit" "CSV: no buffered row" \
	"^buffered,ours-async,read QD=4,IOPS,.*,$num$"
[ -z "$py" ] || check "CSV rows have the header's field count" "CSV field counts" \
	python3 - "$tmp/out" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) > 2 and all(len(r) == len(rows[0]) for r in rows)
PY

# Two processes, CPU pinning, a named file, no stock library.
expect 0 "--procs 1,2 --cpu 0" --workloads loop --time 0.01 --reps 1 --conns 1 --procs 1,2 --cpu 0 --csv
has "two-process rows" "no two-process rows" "K=1 2p"
expect 0 "--file PATH --stock none" --workloads file --time 0.01 --reps 1 --depths 2 \
	--file "$tmp/data" --file-size 4 --stock none
has "--stock none: stock row shown as skipped" "--stock none: no skipped stock row" \
	"^stock-libaio +tmpfs QD=2 .*skipped \(--stock none\)"
check "created file removed" "file left behind" test ! -e "$tmp/data"
expect 0 "--pattern batch" --workloads file,threads --pattern batch --time 0.01 --reps 1 \
	--depths 4 --threads 2 --thread-depth 2 --file "$tmp/data" --file-size 4
has "--pattern batch is reported" "--pattern batch not reported" "one io_submit for all of them"
check "created file removed" "file left behind" test ! -e "$tmp/data"
expect 0 "--progress" --workloads reap --time 0.01 --reps 1 --batches 1 --progress
check "progress on stderr" "no progress line" grep -q reap "$tmp/err"
# Only this script's runs: another aio-bench on the machine may be running.
left=$(for p in $pids; do ls /dev/shm/aio-bench."$p".* 2>/dev/null; done)
check "tmpfs file removed" "tmpfs file left behind in /dev/shm: $left" test -z "$left"

# --loop: root only; without root it is skipped with a reason (exit 0).
if [ "$(id -u)" = 0 ] && [ -e /dev/loop-control ]; then
	expect 0 "--loop" --workloads file,threads,buffered --loop --time 0.01 --reps 1 \
		--depths 4 --threads 2 --thread-depth 2 --file "$tmp/lo" --file-size 4 --direct on
	if grep -q "loop: skipped" "$tmp/out"; then
		echo "note: loop device not available here: $(grep 'loop: skipped' "$tmp/out" | head -n 1)"
	else
		has "loop device rows measured" "no loop device rows" "^ours-ring +loop QD=4 +$num "
		has "loop threads rows" "no loop threads rows" "^ours-ring +loop T=2 +$num .* 0 +0 "
		has "buffered: ext4 on a loop device" "buffered: no ext4 loop rows" \
			"^ours-async +loop (read|write) QD=4 +$num "
	fi
	# The loop devices detach themselves and the ext4 image is gone, even
	# though the tool never unmounted anything.
	sleep 1
	if losetup -a 2>/dev/null | grep -q "$tmp/"; then fail "loop device left attached"
	else pass "loop devices detached"; fi
	left=$(find "$tmp" -name 'aio-bench*')
	check "no file left in $tmp" "files left: $left" test -z "$left"
	check "nothing mounted" "a mount left behind" sh -c "! grep -q '$tmp' /proc/self/mountinfo"
else
	expect 0 "--loop without root" --workloads file --loop --time 0.01 --reps 1 --depths 1 \
		--file "$tmp/lo" --file-size 4
	has "--loop skipped with a reason" "--loop without root gave no reason" "loop: skipped"
fi

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
exit 0
