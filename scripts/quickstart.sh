#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's first command: install what is missing, build, and run the
# main job (aio-bench's feature report and quick side-by-side benchmarks).
# Extra arguments go to aio-bench (e.g. --json, --time 2, --workloads reap);
# --targets adds the project's own targets under each table.
set -e
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
[ -x configure ] || autoreconf -fi >/dev/null
mkdir -p build
cd build
[ -f Makefile ] || ../configure --quiet
make -j"$(nproc)" --quiet >/dev/null
exec ./aio-bench --targets "$@"
