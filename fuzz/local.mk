# SPDX-License-Identifier: LGPL-2.1-or-later
# fuzz: libFuzzer targets (clang only; built and run by .ci/fuzz.sh, not by
# make).  Listed here so that they and their seed corpora are distributed.
EXTRA_DIST += fuzz/fuzz-ring.c fuzz/fuzz-args.c fuzz/gen-corpus.py \
	fuzz/corpus .ci/fuzz.sh
