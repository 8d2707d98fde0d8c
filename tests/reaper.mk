# tests: the user-space ring reaper (exactly once, fork, destroy, corruption)
if HAVE_CHECK
check_PROGRAMS += tests/test-reaper
TESTS += tests/test-reaper
tests_test_reaper_SOURCES = tests/test-reaper.c $(test_common_sources)
tests_test_reaper_CFLAGS = $(test_cflags)
tests_test_reaper_LDADD = $(test_ldadd)
endif
# tests: reaps the library did not start (raw system calls, raw clones)
if HAVE_CHECK
check_PROGRAMS += tests/test-foreign
TESTS += tests/test-foreign
tests_test_foreign_SOURCES = tests/test-foreign.c $(test_common_sources)
tests_test_foreign_CFLAGS = $(test_cflags)
tests_test_foreign_LDADD = $(test_ldadd)
endif
if HAVE_CHECK
TESTS += tests/reaper-valgrind.sh
endif
EXTRA_DIST += tests/reaper-valgrind.sh
# tests: the reap lock and registry at the edges (abnormal exits, destroy
# races, real-time priorities)
if HAVE_CHECK
check_PROGRAMS += tests/test-edges
TESTS += tests/test-edges
tests_test_edges_SOURCES = tests/test-edges.c $(test_common_sources)
tests_test_edges_CFLAGS = $(test_cflags)
tests_test_edges_LDADD = $(test_ldadd)
endif
TESTS += tests/fastpath-frame.sh
EXTRA_DIST += tests/fastpath-frame.sh
