# SPDX-License-Identifier: LGPL-2.1-or-later
# Read by GNU make only (tests/local.mk includes it with "-include", which
# automake leaves alone): each Check program of mode_programs once per
# mode of TEST_MODES, as tests/test-AREA.MODE.mode.
# A program's modes next to each other, and all of them ahead of the
# shell tests: make -j starts tests in this order, and the long programs'
# modes (the soak, the poll races) then run side by side from the start
# instead of the last modes of the slowest starting last.  TESTS, which
# automake defines in one assignment at the top, is complete here.
mode_tests = $(foreach p,$(mode_programs),$(foreach m,$(TEST_MODES),$(p).$(m).mode))
TESTS := $(mode_tests) $(TESTS)
# Every mode run-mode.sh knows.
all_test_modes = native poll pgetevents ring all seccomp-pgetevents async
all_mode_tests = $(foreach m,$(all_test_modes),$(mode_programs:=.$(m).mode))
# No file stands behind a .mode name: this rule makes each one (those of
# a TESTS given on the command line too) a target make can "remake",
# doing nothing, so that the .mode.log suffix rule applies.
$(all_mode_tests): ; @:
clean-mode-logs:
	-rm -f $(all_mode_tests:.mode=.log) $(all_mode_tests:.mode=.trs)
