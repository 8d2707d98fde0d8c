# tests: bench
# aio-bench's argument handling and output formats (never its timings).
if BUILD_TOOLS
TESTS += tests/bench-args.sh
endif
EXTRA_DIST += tests/bench-args.sh
