#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fio --ioengine=libaio with the stock libaio.so.1 and with ours, swapped
# with LD_LIBRARY_PATH: 4 KiB random reads on a tmpfs file at iodepth 32
# and 128, interleaved repetitions, IOPS medians and ratios; plus a
# userspace_reap=1 row for reference, and a --verify=crc32c run with each
# library (the script fails if a verify run fails).  As root, the same
# random reads with --direct=1 on a read-only loop device with direct I/O
# over a file on a disk-backed file system (completions arrive from the
# loop driver's worker), with IOPS and CPU time per I/O; skipped with the
# reason when not root or without losetup.
#
# Usage: bench/fio-compare.sh [BUILDDIR]
#   BUILDDIR (or $AIO_BUILDDIR): a build tree holding .libs/libaio.so.1
# Environment: STOCK_LIBAIO (default: the system's libaio.so.1),
#   FIO_RUNTIME seconds per run (3), FIO_REPS repetitions (3),
#   FIO_DIR directory for the test file (/dev/shm), FIO_SIZE (256M),
#   FIO_DEPTHS ("32 128"), FIO_LOOP_DIR directory for the loop device's
#   backing file (/var/tmp), FIO_LOOP_DEPTHS ("1 32 128").
set -u

name=fio-compare tool=fio
# shellcheck source=bench/compare-lib.sh disable=SC2034 # read there
. "$(dirname "$0")/compare-lib.sh"
runtime=${FIO_RUNTIME:-3}
reps=${FIO_REPS:-3}
dir=${FIO_DIR:-/dev/shm}
size=${FIO_SIZE:-256M}
depths=${FIO_DEPTHS:-"32 128"}
loopdir=${FIO_LOOP_DIR:-/var/tmp}
loopdepths=${FIO_LOOP_DEPTHS:-"1 32 128"}
loopdev=

command -v python3 >/dev/null 2>&1 || die "python3 is needed to read fio's JSON"

file=$dir/fio-compare.$$
loopfile=$loopdir/fio-compare-loop.$$
# shellcheck disable=SC2317 # run by compare-lib.sh's trap
cleanup() {
	[ -z "$loopdev" ] || losetup -d "$loopdev" 2>/dev/null
	rm -f "$file" "$file".verify "$loopfile"
}
echo "fio: $(fio --version), kernel $(uname -r), file $file ($size), ${runtime}s per run, $reps reps"

# layout FILE FIO-ARGS...: write FILE ($size) once: each run reads the same.
layout() { f=$1; shift; fio --name=layout --filename="$f" --size="$size" --rw=write \
	--bs=1M --ioengine=psync --output=/dev/null "$@"; }
layout "$file" || die "cannot create $file"

# run LIB QD WHERE FIO-ARGS...: timed 4 KiB random reads with LIB at
# iodepth QD -> prints "IOPS CPU-us-per-IO" (user + system CPU of fio's job
# over its I/Os, from fio's own JSON); a failure dies naming WHERE.
run() {
	lib=$1 qd=$2 where=$3
	shift 3
	LD_LIBRARY_PATH=$work/$lib fio --name="$lib" --rw=randread --bs=4k --ioengine=libaio \
		--iodepth="$qd" "$@" --norandommap --randrepeat=0 --time_based --runtime="$runtime" \
		--output-format=json --output="$work/out.json" >/dev/null 2>"$work/err" ||
		{ cat "$work/err" >&2; die "fio failed $where($lib, iodepth $qd)"; }
	python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))["jobs"][0]
ios = j["read"]["total_ios"]
cpu_s = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"] / 1000.0
print("%.0f %.3f" % (j["read"]["iops"], cpu_s * 1e6 / ios if ios else 0))' "$work/out.json"
}

# sweep OUT DEPTHS VARIANTS WHERE FIO-ARGS...: $reps interleaved rounds of
# run for each iodepth and variant (LIB, or LIB+OPTION for fio's --OPTION=1)
# -> lines "VARIANT QD IOPS CPU-us-per-IO" in $work/OUT.
sweep() {
	out=$1 qds=$2 variants=$3 where=$4
	shift 4
	: >"$work/$out"
	for r in $(seq 1 "$reps"); do
		for qd in $qds; do
			for v in $variants; do
				opt=
				case $v in *+*) opt=--${v#*+}=1 ;; esac
				# shellcheck disable=SC2086 # one option or none
				res=$(run "${v%%+*}" "$qd" "$where" "$@" $opt) || exit 1
				echo "$v $qd $res" >>"$work/$out"
				[ -t 2 ] && printf '\r%-60s' "fio-compare: $out rep $r iodepth $qd $v" >&2
			done
		done
	done
	[ -t 2 ] && printf '\r%60s\r' '' >&2
}

sweep tmpfs "$depths" "stock ours stock+userspace_reap ours+userspace_reap" "" \
	--filename="$file" --size="$size"
python3 - "$work/tmpfs" <<'EOF'
import statistics, sys
rows = {}
order = []
for line in open(sys.argv[1]):
    v, qd, iops, _ = line.split()
    key = (v, int(qd))
    if key not in rows:
        rows[key] = []
        order.append(key)
    rows[key].append(float(iops))
print()
print("== fio --ioengine=libaio, 4 KiB randread, tmpfs file: IOPS (higher is better)")
print("%-26s %8s %12s %24s %10s" % ("library", "iodepth", "median", "spread (min-max)", "vs stock"))
for key in sorted(order, key=lambda k: (k[1], order.index(k))):
    v, qd = key
    m = statistics.median(rows[key])
    base = statistics.median(rows[("stock", qd)])
    print("%-26s %8d %12.0f %24s %9.2fx" % (v, qd, m,
          "%.0f-%.0f" % (min(rows[key]), max(rows[key])), m / base))
for qd in sorted({k[1] for k in order}):
    r = statistics.median(rows[("ours", qd)]) / statistics.median(rows[("stock", qd)])
    print("target: ours plain >= 1.10x stock at iodepth %d: measured %.2fx: %s"
          % (qd, r, "met" if r >= 1.10 else "MISSED"))
EOF

echo
echo "== fio --ioengine=libaio --direct=1, 4 KiB randread, loop device with direct I/O"
if [ "$(id -u)" != 0 ]; then
	echo "skipped: needs root (loop devices)"
elif ! command -v losetup >/dev/null 2>&1; then
	echo "skipped: losetup not installed (util-linux)"
elif ! layout "$loopfile" --end_fsync=1 2>"$work/err"; then
	echo "skipped: cannot create $loopfile: $(cat "$work/err")"
elif ! loopdev=$(losetup --find --show --read-only --direct-io=on "$loopfile" 2>"$work/err"); then
	loopdev=
	echo "skipped: losetup failed: $(cat "$work/err")"
else
	dio=$(cat "/sys/block/${loopdev#/dev/}/loop/dio" 2>/dev/null || echo "?")
	echo "$loopdev over $loopfile ($(stat -f -c %T "$loopfile")), direct I/O: $dio"
	sweep loop "$loopdepths" "stock ours" "on $loopdev " --filename="$loopdev" --readonly \
		--direct=1
	python3 - "$work/loop" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    lib, qd, iops, cpu = line.split()
    rows.setdefault((lib, int(qd)), []).append((float(iops), float(cpu)))
print("%-8s %8s %10s %20s %9s %12s %14s" % ("library", "iodepth", "IOPS", "spread (min-max)",
      "vs stock", "CPU us/IO", "CPU vs stock"))
for qd in sorted({k[1] for k in rows}):
    b = rows[("stock", qd)]
    bi = statistics.median(x[0] for x in b)
    bc = statistics.median(x[1] for x in b)
    for lib in ("stock", "ours"):
        v = rows[(lib, qd)]
        i = statistics.median(x[0] for x in v)
        c = statistics.median(x[1] for x in v)
        print("%-8s %8d %10.0f %20s %8.2fx %12.2f %13.2fx" % (lib, qd, i,
              "%.0f-%.0f" % (min(x[0] for x in v), max(x[0] for x in v)),
              i / bi, c, bc / c if c else float("inf")))
print("CPU us/IO: fio's usr_cpu + sys_cpu of the job over its I/Os; "
      "\"CPU vs stock\": stock's over the row (higher is cheaper).")
EOF
fi

# Data check: write with crc32c headers, read everything back and verify.
echo
echo "== fio verify (--verify=crc32c, randwrite then read-back, iodepth 32)"
rc=0
for lib in stock ours; do
	if LD_LIBRARY_PATH=$work/$lib fio --name=v --filename="$file".verify \
		--size=64M --rw=randwrite --bs=4k --ioengine=libaio --iodepth=32 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output="$work/verify.$lib" >/dev/null 2>&1 &&
		! grep -q "verify: bad" "$work/verify.$lib"; then
		echo "$lib: verify passed"
	else
		echo "$lib: VERIFY FAILED"
		cat "$work/verify.$lib"
		rc=1
	fi
	rm -f "$file".verify
done
exit $rc
