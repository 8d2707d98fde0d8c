/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LIBAIO_TEST_COMMON_H
#define LIBAIO_TEST_COMMON_H

#include <check.h>
#include <errno.h>
#include <libaio.h>
#include <stddef.h>
#include <sys/types.h>

/* 1 in a build with ThreadSanitizer, whose runtime runs a thread of its
 * own and must see every thread the process starts; else 0. */
#if defined(__SANITIZE_THREAD__)
# define TEST_UNDER_TSAN 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define TEST_UNDER_TSAN 1
# endif
#endif
#ifndef TEST_UNDER_TSAN
# define TEST_UNDER_TSAN 0
#endif

/* 1 in a build with AddressSanitizer, else 0. */
#if defined(__SANITIZE_ADDRESS__)
# define TEST_UNDER_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define TEST_UNDER_ASAN 1
# endif
#endif
#ifndef TEST_UNDER_ASAN
# define TEST_UNDER_ASAN 0
#endif

/* Provided by each area file. */
Suite *test_suite(void);

/* A temporary file of size bytes filled with pattern(offset); its path is
 * unlinked at once.  Returns the fd. */
int test_tmpfile(size_t size);
unsigned char test_pattern(long long offset);

/* fs.aio-nr is one count for the whole machine.  Every Check program
 * holds this lock shared for its whole run (test-main.c); a program that
 * measures its own charge to the count holds it exclusive instead, so
 * that no other Check program of the same run (the same $TMPDIR) makes or
 * destroys a context meanwhile.  The shell tests' programs (aio-probe,
 * aio-bench, fio, the ABI and man-page examples) and anything outside the
 * run do not take it: the measuring program still counts only the rounds
 * in which nothing moved the count.  The lock is a file in $TMPDIR (or
 * /tmp), held with flock until exit.  Returns the descriptor, or -1 (then
 * the program runs unlocked).  A program holding it exclusive must not
 * wait for a test program it starts: that one would wait for the lock. */
int test_aio_nr_lock(int exclusive);

/* Raw system calls, to compare the library's answers with the kernel's. */
long test_sys_io_setup(unsigned nr, io_context_t *ctxp);
long test_sys_io_destroy(io_context_t ctx);
long test_sys_io_submit(io_context_t ctx, long nr, struct iocb **ios);
long test_sys_io_getevents(io_context_t ctx, long min_nr, long nr,
			   struct io_event *ev, struct timespec *ts);
long test_sys_io_cancel(io_context_t ctx, struct iocb *iocb,
			struct io_event *ev);
/* io_pgetevents with the kernel's sigset argument built from mask (NULL:
 * no mask); -ENOSYS where the build has no number for it. */
long test_sys_io_pgetevents(io_context_t ctx, long min_nr, long nr,
			    struct io_event *ev, struct timespec *ts,
			    const sigset_t *mask);

/* The address of a page that is mapped PROT_NONE for the whole run: the
 * kernel answers EFAULT for it, and no later mapping can reuse it. */
void *test_bad_pointer(void);

/* seccomp: make the named system call answer ENOSYS.  Names:
 * "pgetevents" (io_pgetevents and io_pgetevents_time64). */
int test_install_seccomp(const char *what);

/* seccomp: make every io_* system call of this ABI fail with errno err
 * (ENOSYS: a kernel without AIO), for the rest of the process. */
int test_seccomp_no_aio(int err);

/* seccomp: make each system call in nrs[0..n-1] of this ABI
 * fail with errno err, for the rest of the process (n <= 32). */
int test_seccomp_errno(const long *nrs, int n, int err);

/* seccomp: io_setup with nr_events == nr answers EAGAIN, as the kernel
 * does at fs.aio-max-nr; every other call, io_setup of another size
 * included, goes through.  For the rest of the process. */
int test_seccomp_setup_eagain(unsigned nr);

/* seccomp: each system call in nrs[0..n-1] (n <= 32) of this ABI kills
 * the whole process with SIGSYS, whichever thread makes it; installed in
 * every thread of the process (TSYNC). */
int test_seccomp_kill_in_every_thread(const long *nrs, int n);

/* seccomp: allow only the system calls in nrs[0..n-1] (n <= 32) of this
 * ABI; any other call kills the whole process with SIGSYS.  Filters
 * stack: one installed earlier still applies. */
int test_seccomp_allow_only(const long *nrs, int n);

/* True under valgrind, whose own aio wrappers dereference the iocbs of a
 * submit and of returned events: cases that hand it deliberately bad ones
 * skip themselves there (every other job runs them). */
int test_under_valgrind(void);

/* Hang guard: unless test_hang_guard(0) cancels it first, end the
 * process with a message naming the test after the given seconds (three
 * times as many under valgrind, and CK_TIMEOUT_MULTIPLIER times as many
 * when that is set, as for Check's own timeouts).  Check's fork mode
 * leaves the child its own SIGALRM handler, which would kill it with a
 * bare "signal 9"; this one says what happened and aborts. */
void test_hang_guard(const char *test, unsigned seconds);

/* "Threads:" of /proc/self/status: every task of the process. */
int test_threads_now(void);
/* Wait (up to seconds) until the process has want threads; the count. */
int test_threads_settle_to(int want, unsigned seconds);

/* The system call task tid of this process sleeps in (the first field
 * of /proc/self/task/TID/syscall): its number, -1 when it runs (in no
 * call), -2 when there is no such file (no /proc, or the task is gone). */
long test_task_syscall(long tid);

/* Wait for a child that exits 0 (passed), 77 (cannot run here: say why
 * and skip) or the number of the step that failed; one that has not
 * ended after TEST_CHILD_S seconds is killed and fails the test. */
#define TEST_CHILD_S 40
void test_expect_child(pid_t pid, const char *test, const char *why);
/*
 * Single-stepping (x86's trap flag): call(arg) runs one instruction at a
 * time, and before each of its instructions after the first, a SIGTRAP
 * handler calls at(step, arg) with step = 1, 2, ...: a deterministic
 * "signal handler interrupting here", for every place at once.  Returns
 * how many steps there were; -1 where there is no trap flag (not x86, or
 * a CPU emulator such as valgrind that ignores it).
 */
long test_single_step(void (*call)(void *), void (*at)(unsigned long, void *),
		      void *arg);
/* Why test_single_step may answer -1: not x86, a CPU emulator (valgrind)
 * or ThreadSanitizer, whose signal handling lets a trap-flag SIGTRAP kill
 * the process.  Nonzero where -1 is expected. */
int test_no_trap_flag(void);
/* From inside at(): run nested(arg), itself one instruction at a time,
 * and give it up (siglongjmp out of the trap handler) when it starts a
 * futex wait, or after limit instructions.  Returns 1 if it returned, 0
 * if it was given up: it was waiting, e.g. for a lock that the
 * interrupted code holds.  Only for nested calls that hold nothing while
 * they wait. */
int test_step_nested(void (*nested)(void *), void *arg, unsigned long limit);

/* The mode the suite runs in, from LIBAIO_DISABLE / LIBAIO_TEST_SECCOMP. */
int test_mode_disables(const char *feature);

/* Whether this mode turns async submission on for every context
 * (LIBAIO_ASYNC=1). */
int test_mode_async(void);

/* The running Check case cannot hold here, for the reason given (printf
 * format): the case returns at once after it, and tests/run-mode.sh turns
 * its "ok" into "ok ... # SKIP reason", a skip, not a pass. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* In the async mode: skip the running case, which cannot hold there for
 * the reason why (async submission changes it by design), and answer 1
 * so that it returns at once; 0 in every other mode. */
int test_skip_in_async_mode(const char *why);

/* Whether the library reaps from the ring in this mode. */
static inline int ring_mode(void)
{
	return !test_mode_disables("ring");
}

/* The ring header as the kernel lays it out: eight 32-bit words, then
 * nr 32-byte events.  A context handle is the ring's address. */
struct ring_hdr {
	unsigned id, nr, head, tail, magic, compat, incompat, hdrlen;
};

static inline struct ring_hdr *hdr(io_context_t ctx)
{
	return (struct ring_hdr *)ctx;
}

/* Helpers for ck_assert on library calls that must not touch errno. */
#define ck_assert_errno_kept(call) do {				\
		errno = 12345;					\
		(void)(call);					\
		ck_assert_int_eq(errno, 12345);			\
	} while (0)

#endif
