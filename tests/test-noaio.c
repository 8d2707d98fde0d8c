/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A kernel without AIO (CONFIG_AIO=n, or a sandbox that refuses the
 * calls): before any test runs, a seccomp filter makes every io_* system
 * call answer ENOSYS for the whole process.  Every public call must then
 * give the kernel's answer, -ENOSYS, leave errno alone, return promptly
 * (a hang guard turns a hang into a named failure) and not crash, and
 * io_features() must not claim AIO or anything built on it.
 *
 * Where the system calls already answer ENOSYS without a filter (qemu-user,
 * which does not pass them on, or a kernel built without AIO), the
 * program runs as it is.  Where neither holds (no seccomp for this ABI),
 * it is skipped with the reason.  There is no context to work on, so
 * calls that take one get a made-up value; the kernel's answer for it is
 * what the raw system call says, and the library must say the same.
 */
#include "config.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test-common.h"

/* This program is meant for a system without AIO: the runner must not
 * skip it for that (tests/test-main.c). */
const int test_runs_without_aio = 1;

#define KEPT(call)                                                           \
	({                                                                    \
		long kept_ret_;                                               \
		errno = 4242;                                                 \
		kept_ret_ = (long)(call);                                     \
		ck_assert_msg(errno == 4242, "%s changed errno to %d", #call, \
			      errno);                                         \
		kept_ret_;                                                    \
	})

/* The library gives -ENOSYS, as the raw system call does. */
#define ENOSYS_AS_KERNEL(lib, kern)                                          \
	do {                                                                  \
		long kern_ = (kern), lib_ = KEPT(lib);                        \
		ck_assert_msg(kern_ == -ENOSYS, "kernel: %s = %ld, not -ENOSYS", \
			      #kern, kern_);                                  \
		ck_assert_msg(lib_ == -ENOSYS, "%s = %ld, want -ENOSYS",      \
			      #lib, lib_);                                    \
	} while (0)

#define EXPECT_ENOSYS(lib)                                                   \
	do {                                                                  \
		long lib_ = KEPT(lib);                                        \
		ck_assert_msg(lib_ == -ENOSYS, "%s = %ld, want -ENOSYS",      \
			      #lib, lib_);                                    \
	} while (0)

/* A context value no io_setup returned: the address of a page that is
 * never mapped, so that a library that read through it would crash. */
static io_context_t fake_ctx(void)
{
	return (io_context_t)test_bad_pointer();
}

START_TEST(setup_answers_enosys)
{
	io_context_t ctx = NULL, raw = NULL;

	test_hang_guard("setup_answers_enosys", 20);
	ENOSYS_AS_KERNEL(io_setup(8, &ctx), test_sys_io_setup(8, &raw));
	ck_assert_ptr_null(ctx);
	EXPECT_ENOSYS(io_queue_init(8, &ctx));
	ck_assert_ptr_null(ctx);
	/* Again: nothing was cached from the first answer that changes it. */
	EXPECT_ENOSYS(io_setup(1, &ctx));
	EXPECT_ENOSYS(io_queue_init(1, &ctx));
	test_hang_guard(NULL, 0);
}
END_TEST

START_TEST(calls_on_a_context_answer_enosys)
{
	io_context_t ctx = fake_ctx();
	int fd = test_tmpfile(4096);
	char buf[512];
	struct iocb cb, *cbp = &cb;
	struct io_event ev[4];
	struct timespec ts = { 0, 1000000 };
	sigset_t mask;

	test_hang_guard("calls_on_a_context_answer_enosys", 20);
	io_prep_pread(&cb, fd, buf, sizeof(buf), 0);
	ENOSYS_AS_KERNEL(io_submit(ctx, 1, &cbp), test_sys_io_submit(ctx, 1, &cbp));
	ENOSYS_AS_KERNEL(io_cancel(ctx, &cb, ev), test_sys_io_cancel(ctx, &cb, ev));
	/* No timeout: on a real context this would wait for ever. */
	ENOSYS_AS_KERNEL(io_getevents(ctx, 1, 4, ev, NULL),
			 test_sys_io_getevents(ctx, 1, 4, ev, NULL));
	ENOSYS_AS_KERNEL(io_getevents(ctx, 0, 4, ev, &ts),
			 test_sys_io_getevents(ctx, 0, 4, ev, &ts));
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	EXPECT_ENOSYS(io_pgetevents(ctx, 1, 4, ev, NULL, &mask));
	EXPECT_ENOSYS(io_pgetevents(ctx, 1, 4, ev, NULL, NULL));
	EXPECT_ENOSYS(io_destroy(ctx));
	EXPECT_ENOSYS(io_queue_release(ctx));
	EXPECT_ENOSYS(io_queue_run(ctx));
	EXPECT_ENOSYS(io_reap(ctx, 4, ev));
	ck_assert_int_eq(KEPT(io_reaper_active(ctx)), 0);
	close(fd);
	test_hang_guard(NULL, 0);
}
END_TEST

START_TEST(helpers_that_submit_answer_enosys)
{
	io_context_t ctx = fake_ctx();
	int fd = test_tmpfile(4096), pfd[2];
	struct iocb cb;

	test_hang_guard("helpers_that_submit_answer_enosys", 20);
	ck_assert_int_eq(pipe(pfd), 0);
	EXPECT_ENOSYS(io_fsync(ctx, &cb, NULL, fd));
	EXPECT_ENOSYS(io_poll(ctx, &cb, NULL, pfd[0], POLLIN));
	/* A poll on a pipe, which the library may complete itself when the
	 * kernel's aio poll is missing or disabled: not without a context. */
	io_prep_poll(&cb, pfd[0], POLLIN);
	{
		struct iocb *cbp = &cb;

		EXPECT_ENOSYS(io_submit(ctx, 1, &cbp));
	}
	close(pfd[0]);
	close(pfd[1]);
	close(fd);
	test_hang_guard(NULL, 0);
}
END_TEST

START_TEST(features_report_no_aio)
{
	io_context_t ctx = NULL;
	unsigned f;

	test_hang_guard("features_report_no_aio", 20);
	(void)KEPT(io_features());
	EXPECT_ENOSYS(io_setup(4, &ctx));
	f = KEPT(io_features());
	ck_assert_msg(!(f & IO_FEATURE_AIO), "io_features() = %#x claims AIO", f);
	ck_assert_msg(!(f & (IO_FEATURE_POLL | IO_FEATURE_PGETEVENTS | IO_FEATURE_RING)),
		      "io_features() = %#x claims a kernel feature in use", f);
	test_hang_guard(NULL, 0);
}
END_TEST

/* Every io_* system call of this ABI answers ENOSYS from now on. */
static int block_aio(void)
{
	return test_seccomp_no_aio(ENOSYS);
}

Suite *test_suite(void)
{
	Suite *s = suite_create("noaio");
	TCase *tc = tcase_create("noaio");
	io_context_t probe = NULL;

	if (block_aio() != 0) {
		if (test_sys_io_setup(1, &probe) != -ENOSYS) {
			/* TAP's plan for a program that cannot run. */
			printf("1..0 # SKIP cannot install a seccomp filter on"
			       " this ABI, and the AIO system calls work: no way"
			       " to test a kernel without AIO here\n");
			exit(77);
		}
		printf("note: no seccomp filter, but io_setup already answers"
		       " ENOSYS here: testing as it is\n");
	}
	tcase_add_test(tc, setup_answers_enosys);
	tcase_add_test(tc, calls_on_a_context_answer_enosys);
	tcase_add_test(tc, helpers_that_submit_answer_enosys);
	tcase_add_test(tc, features_report_no_aio);
	suite_add_tcase(s, tc);
	return s;
}
