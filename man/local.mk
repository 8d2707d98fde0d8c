# SPDX-License-Identifier: LGPL-2.1-or-later
# man rules
# Every page is installed by make install and shipped in the tarball.
# Section 3: one page per public function and inline helper; the .so
# pages are links for names documented on another page.  Section 7: the
# overview.  Section 1: aio-bench (its page is written with tools/).
dist_man_MANS += \
	man/io_aio_limits.3 \
	man/io_async_stats.3 \
	man/io_cancel.3 \
	man/io_destroy.3 \
	man/io_fdsync.3 \
	man/io_features.3 \
	man/io.3 \
	man/io_fsync.3 \
	man/io_getevents.3 \
	man/io_getevents_time64.3 \
	man/io_pgetevents.3 \
	man/io_pgetevents_time64.3 \
	man/io_poll.3 \
	man/io_prep_fdsync.3 \
	man/io_prep_fsync.3 \
	man/io_prep_poll.3 \
	man/io_prep_pread.3 \
	man/io_prep_preadv.3 \
	man/io_prep_preadv2.3 \
	man/io_prep_pwrite.3 \
	man/io_prep_pwritev.3 \
	man/io_prep_pwritev2.3 \
	man/io_queue_init.3 \
	man/io_queue_release.3 \
	man/io_queue_run.3 \
	man/io_queue_wait.3 \
	man/io_reap.3 \
	man/io_reaper_active.3 \
	man/io_set_async.3 \
	man/io_set_callback.3 \
	man/io_set_eventfd.3 \
	man/io_setup.3 \
	man/io_submit.3 \
	man/io_syscall_count.3 \
	man/libaio.7 \
	# EOL
if BUILD_TOOLS
dist_man_MANS += man/aio-bench.1
else
EXTRA_DIST += man/aio-bench.1
endif
