# SPDX-License-Identifier: LGPL-2.1-or-later
# Read by GNU make only (tests/local.mk includes it with "-include", which
# automake leaves alone): each Check program of mode_programs once per
# mode of TEST_MODES, as tests/test-AREA.MODE.mode.
mode_tests = $(foreach m,$(TEST_MODES),$(mode_programs:=.$(m).mode))
TESTS += $(mode_tests)
# No file stands behind a .mode name: this rule makes any one (those of
# a TESTS given on the command line too) a target make can "remake",
# doing nothing, so that the .mode.log suffix rule applies.
%.mode: ; @:
