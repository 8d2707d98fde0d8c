# tests: the static archive.  libaio.a defines only the public names and
# names with the reserved prefix aioreap_, and a program that defines the
# old unprefixed internal names links with it statically.
static_tests = tests/static-names.sh tests/static-link.sh
TESTS += $(static_tests)
EXTRA_DIST += $(static_tests)

# tests: the library's files call one another one way (no circle of calls
# between src/*.c), read from the objects libtool built.
TESTS += tests/src-layering.sh
EXTRA_DIST += tests/src-layering.sh
