# tests: man
# The manual pages: lint (mandoc, groff), coverage of every exported name
# and inline helper plus the page skeleton, and the EXAMPLE programs
# compiled against the built library and run.
man_tests = tests/man-lint.sh tests/man-coverage.sh tests/man-examples.sh
TESTS += $(man_tests)
EXTRA_DIST += $(man_tests) tests/man-extract.sh
