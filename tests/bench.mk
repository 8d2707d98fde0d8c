# tests: bench
# aio-bench's argument handling and output formats (never its timings).
TESTS += tests/bench-args.sh
EXTRA_DIST += tests/bench-args.sh
