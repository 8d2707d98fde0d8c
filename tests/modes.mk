# SPDX-License-Identifier: LGPL-2.1-or-later
# Read by GNU make only (tests/local.mk includes it with "-include", which
# automake leaves alone): each Check program of mode_programs once per
# mode of TEST_MODES, as tests/test-AREA.MODE.mode.
mode_tests = $(foreach m,$(TEST_MODES),$(mode_programs:=.$(m).mode))
TESTS += $(mode_tests)
# Every mode run-mode.sh knows.
all_test_modes = native poll pgetevents ring all seccomp-pgetevents async
all_mode_tests = $(foreach m,$(all_test_modes),$(mode_programs:=.$(m).mode))
# No file stands behind a .mode name: this rule makes each one (those of
# a TESTS given on the command line too) a target make can "remake",
# doing nothing, so that the .mode.log suffix rule applies.
$(all_mode_tests): ; @:
clean-mode-logs:
	-rm -f $(all_mode_tests:.mode=.log) $(all_mode_tests:.mode=.trs)
