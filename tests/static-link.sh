#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A program that defines, for its own use, the names the library's
# objects used internally before they got the aioreap_ prefix (rec_free,
# registry_add, helper_arm, pe_lock, kernel_getevents, ...) links
# statically with every object of libaio.a (--whole-archive) and runs:
# no "multiple definition".  Stock libaio.a allows the same.
# shellcheck source=tests/abi-lib.sh
. "${top_srcdir:-.}/tests/abi-lib.sh"
need_static
# The internal globals of libaio.a before the prefix (nm -g --defined-only).
old="features_disabled_word features_parse_env features_pgetevents_missing
features_pgetevents_native features_poll_native getevents_core helper_arm
helper_complete helper_disarm helper_ensure helper_forget_ctx
helper_is_doorbell helper_reset_in_child kernel_getevents kernel_pgetevents
pe_lock poll_emul_cancel poll_emul_forget poll_emul_resume poll_emul_submit
poll_emul_translate poll_emul_used reap_excl_contended reap_shared_enter
rec_by_token rec_free rec_token registry_add registry_begin_destroy
registry_end_destroy registry_lookup registry_table ring_reap_locked
io_cancel_0_1 io_cancel_0_4 io_getevents_0_1 io_getevents_0_4
io_queue_wait_0_1 io_queue_wait_0_4"
{
	printf '%s\n' '#include <libaio.h>' '#include <stdio.h>'
	for n in $old; do
		printf 'int %s(void);\nint %s(void) { return 7; }\n' "$n" "$n"
	done
	printf '%s\n' 'int main(void)' '{' '	io_context_t ctx = 0;' \
		'	int r = io_setup(4, &ctx), sum = 0;' '	if (r == 0)' '		io_destroy(ctx);'
	for n in $old; do
		printf '\tsum += %s();\n' "$n"
	done
	printf '%s\n' '	printf("io_setup %d, features %#x, own names %d\n", r, io_features(), sum);'
	# shellcheck disable=SC2086
	printf '\treturn sum == 7 * %d ? 0 : 1;\n}\n' "$(echo $old | wc -w)"
} > "$tmp/prog.c"
if ! build_static prog -Wl,--whole-archive "$archive" -Wl,--no-whole-archive 2> "$tmp/err"; then
	grep -m 10 'multiple definition\|error' "$tmp/err"
	fail "a program defining the old internal names does not link with libaio.a"
fi
"$tmp/prog" || fail "the statically linked program did not run"
echo PASS
