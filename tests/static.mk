# tests: the static archive.  libaio.a defines only the public names and
# names with the reserved prefix aioreap_, and a program that defines the
# old unprefixed internal names links with it statically.
static_tests = tests/static-names.sh tests/static-link.sh
TESTS += $(static_tests)
EXTRA_DIST += $(static_tests)
