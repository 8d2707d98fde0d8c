/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "test-common.h"

#ifdef HAVE_VALGRIND_MEMCHECK_H
# include <valgrind/valgrind.h>
#endif

#if TEST_UNDER_TSAN
/* Fork children of a process with threads start threads of their own
 * (the poll emulation's helper for a pty poll, async submission's
 * workers): ThreadSanitizer refuses new threads after a multi-threaded
 * fork unless told to go on. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

int test_under_valgrind(void)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	return RUNNING_ON_VALGRIND;
#else
	return 0;
#endif
}

#if (defined(__x86_64__) || defined(__i386__)) && !TEST_UNDER_TSAN
/* AIOREAP_TEST_NO_STEP: the kernels job's guests, where the CPU is
 * emulated (TCG) and a trap per instruction outlasts the guest's bound. */
static int stepping_off(void)
{
	return test_under_valgrind() || getenv("AIOREAP_TEST_NO_STEP") != NULL;
}
#endif

int test_no_trap_flag(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && !TEST_UNDER_TSAN
	return stepping_off();
#else
	return 1;
#endif
}

#if (defined(__x86_64__) || defined(__i386__)) && !TEST_UNDER_TSAN
#define TRAP_FLAG 0x100u

/* 1: stepping the outer call; 2: stepping a nested one; 0: neither. */
static volatile sig_atomic_t step_depth;
static void (*step_at)(unsigned long, void *);
static void *step_arg;
static volatile unsigned long step_count, nested_count, nested_limit;
static sigjmp_buf nested_env;

static void trap_flag(int on)
{
#ifdef __x86_64__
	unsigned long long f = __builtin_ia32_readeflags_u64();

	__builtin_ia32_writeeflags_u64(on ? f | TRAP_FLAG : f & ~TRAP_FLAG);
#else
	unsigned f = __builtin_ia32_readeflags_u32();

	__builtin_ia32_writeeflags_u32(on ? f | TRAP_FLAG : f & ~TRAP_FLAG);
#endif
}

/* Is the next instruction a system call that starts a futex wait?  The
 * library waits for another reaper's copy only that way (spinning a
 * hundred rounds first), so a nested call that gets there is waiting. */
static int at_futex_wait(const ucontext_t *uc)
{
	const greg_t *g = uc->uc_mcontext.gregs;
#ifdef __x86_64__
	const unsigned char *ip = (const unsigned char *)g[REG_RIP];
	long nr = (long)g[REG_RAX], op = (long)g[REG_RSI];

	if (ip[0] != 0x0f || ip[1] != 0x05)	/* syscall */
		return 0;
#else
	const unsigned char *ip = (const unsigned char *)g[REG_EIP];
	long nr = (long)g[REG_EAX], op = (long)g[REG_ECX];

	if (ip[0] != 0xcd || ip[1] != 0x80)	/* int $0x80 */
		return 0;
#endif
#ifdef SYS_futex_time64
	if (nr == SYS_futex_time64)
		nr = SYS_futex;
#endif
	return nr == SYS_futex && (op & 127) == 0;	/* FUTEX_WAIT */
}

/* The kernel clears the trap flag for the handler and puts it back on
 * return, so the handler itself runs at full speed. */
static void stepped(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	if (step_depth == 2) {
		if (++nested_count > nested_limit || at_futex_wait(uc))
			siglongjmp(nested_env, 1);
	} else if (step_depth == 1) {
		step_at(++step_count, step_arg);
	}
}

long test_single_step(void (*call)(void *), void (*at)(unsigned long, void *),
		      void *arg)
{
	struct sigaction sa, old;

	if (stepping_off())
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = stepped;
	/* SA_NODEFER: a nested call is stepped from inside the handler. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, &old) != 0)
		return -1;
	step_at = at;
	step_arg = arg;
	step_count = 0;
	step_depth = 1;
	trap_flag(1);
	call(arg);
	trap_flag(0);
	step_depth = 0;
	sigaction(SIGTRAP, &old, NULL);
	return step_count ? (long)step_count : -1;
}

int test_step_nested(void (*nested)(void *), void *arg, unsigned long limit)
{
	volatile int done = 0;

	nested_count = 0;
	nested_limit = limit;
	step_depth = 2;
	if (sigsetjmp(nested_env, 1) == 0) {
		trap_flag(1);
		nested(arg);
		trap_flag(0);
		done = 1;

	}
	step_depth = 1;
	return done;
}
#else
long test_single_step(void (*call)(void *), void (*at)(unsigned long, void *),
		      void *arg)
{
	(void)call;
	(void)at;
	(void)arg;
	return -1;
}

int test_step_nested(void (*nested)(void *), void *arg, unsigned long limit)
{
	(void)nested;
	(void)arg;
	(void)limit;
	return 0;
}
#endif

static const char *guarded_test;

static void hang_guard_fired(int sig)
{
	static const char what[] = "hang guard: the test did not finish in time: ";
	const char *t = guarded_test ? guarded_test : "?";

	(void)sig;
	/* Only async-signal-safe calls here. */
	if (write(2, what, sizeof(what) - 1) < 0 ||
	    write(2, t, strlen(t)) < 0 || write(2, "\n", 1) < 0)
		abort();
	abort();
}

void test_hang_guard(const char *test, unsigned seconds)
{
	/* Check's own multiplier of its test timeouts (an emulated CPU runs
	 * every test many times slower) applies to the guards too. */
	const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
	unsigned m = mult && atoi(mult) > 0 ? (unsigned)atoi(mult) : 1;

	if (!seconds) {
		alarm(0);
		return;
	}
	guarded_test = test;
	signal(SIGALRM, hang_guard_fired);
	alarm(m * (test_under_valgrind() ? 3 * seconds : seconds));
}

unsigned char test_pattern(long long offset)
{
	return (unsigned char)((offset * 7 + (offset >> 8)) & 0xff);
}

int test_aio_nr_lock(int exclusive)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if (snprintf(path, sizeof(path), "%s/aioreap-tests-aio-nr.lock", dir) >=
	    (int)sizeof(path))
		return -1;
	/* Close-on-exec: a program a test runs takes its own hold. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

int test_tmpfile(size_t size)
{
	/* $TMPDIR first: a build machine may point it at a writable place
	 * when /tmp is read-only or tmpfs; /tmp when it is unset or empty. */
	const char *dir = getenv("TMPDIR");
	char path[4096];
	unsigned char buf[4096];
	size_t done = 0;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/libaio-test-XXXXXX", dir),
			 (int)sizeof(path));
	fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "mkstemp in %s: %s", dir, strerror(errno));

	unlink(path);
	while (done < size) {
		size_t i, n = size - done < sizeof(buf) ? size - done : sizeof(buf);

		for (i = 0; i < n; i++)
			buf[i] = test_pattern((long long)(done + i));
		ck_assert_int_eq(pwrite(fd, buf, n, (off_t)done), (ssize_t)n);
		done += n;
	}
	return fd;
}

long test_sys_io_setup(unsigned nr, io_context_t *ctxp)
{
	long r = syscall(SYS_io_setup, nr, ctxp);
	return r < 0 ? -errno : r;
}

long test_sys_io_destroy(io_context_t ctx)
{
	long r = syscall(SYS_io_destroy, ctx);
	return r < 0 ? -errno : r;
}

long test_sys_io_submit(io_context_t ctx, long nr, struct iocb **ios)
{
	long r = syscall(SYS_io_submit, ctx, nr, ios);
	return r < 0 ? -errno : r;
}

long test_sys_io_getevents(io_context_t ctx, long min_nr, long nr,
			   struct io_event *ev, struct timespec *ts)
{
	long r = syscall(SYS_io_getevents, ctx, min_nr, nr, ev, ts);
	return r < 0 ? -errno : r;
}

long test_sys_io_cancel(io_context_t ctx, struct iocb *iocb,
			struct io_event *ev)
{
	long r = syscall(SYS_io_cancel, ctx, iocb, ev);
	return r < 0 ? -errno : r;
}

long test_sys_io_pgetevents(io_context_t ctx, long min_nr, long nr,
			    struct io_event *ev, struct timespec *ts,
			    const sigset_t *mask)
{
#ifdef SYS_io_pgetevents
	/* The kernel's struct __aio_sigset and its own sigset size. */
	struct {
		const sigset_t *set;
		size_t size;
	} arg = { mask, _NSIG / 8 };
	long r = syscall(SYS_io_pgetevents, ctx, min_nr, nr, ev, ts, &arg);
	return r < 0 ? -errno : r;
#else
	(void)ctx; (void)min_nr; (void)nr; (void)ev; (void)ts; (void)mask;
	return -ENOSYS;
#endif
}

void *test_bad_pointer(void)
{
	static void *page;

	if (!page) {
		void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		ck_assert_ptr_ne(p, MAP_FAILED);
		page = p;
	}
	return page;
}

int test_mode_disables(const char *feature)
{
	const char *s = getenv("LIBAIO_DISABLE");

	if (!strcmp(feature, "pgetevents")) {
		const char *sc = getenv("LIBAIO_TEST_SECCOMP");

		if (sc && strstr(sc, "pgetevents"))
			return 1;
	}
	return s && (strstr(s, feature) || strstr(s, "all"));
}

int test_mode_async(void)
{
	const char *s = getenv("LIBAIO_ASYNC");

	return s && !strcmp(s, "1");
}

void test_skip(const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* stderr is unbuffered and the runner's stdout line-buffered
	 * (test-main.c): this line is out after the previous case's result
	 * and before this one's, which Check writes when the case returns.
	 * What the case itself left in stdout goes first, and the line
	 * break in front ends a line it left unfinished. */
	fflush(stdout);
	fprintf(stderr, "\naioreap-skip: %s\n", why);
}

int test_skip_in_async_mode(const char *why)
{
	if (!test_mode_async())
		return 0;
	test_skip("not in the async mode: %s", why);
	return 1;
}

#if defined(__x86_64__)
# define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__i386__)
# define TEST_AUDIT_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
# define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__arm__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define TEST_AUDIT_ARCH AUDIT_ARCH_ARM
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define TEST_AUDIT_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__powerpc64__)
# define TEST_AUDIT_ARCH AUDIT_ARCH_PPC64
#elif defined(__s390x__)
# define TEST_AUDIT_ARCH AUDIT_ARCH_S390X
#elif defined(__riscv) && __riscv_xlen == 64
# define TEST_AUDIT_ARCH AUDIT_ARCH_RISCV64
#elif defined(__loongarch64)
# define TEST_AUDIT_ARCH AUDIT_ARCH_LOONGARCH64
#endif

/*
 * One filter: for this ABI, each call in nrs[0..n-1] gets action in_list,
 * every other call gets action others; another ABI's calls (a 32-bit
 * call from a 64-bit process) get other_abi.
 */
static int seccomp_filter(const long *nrs, int n, unsigned in_list,
			  unsigned others, unsigned other_abi, int tsync)
{
#ifdef TEST_AUDIT_ARCH
	struct sock_filter f[4 + 32 + 2];
	struct sock_fprog prog;
	int i, k = 0;

	if (n < 1 || n > 32)
		return -1;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      TEST_AUDIT_ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, other_abi);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	/* Entry i jumps over the remaining n-1-i entries and the default. */
	for (i = 0; i < n; i++)
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned)nrs[i], n - i, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, others);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, in_list);
	prog.len = (unsigned short)k;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	if (tsync)	/* every thread of the process, as it is now */
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			       SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0 ? 0 : -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 ? 0 : -1;
#else
	(void)nrs;
	(void)n;
	(void)in_list;
	(void)others;
	(void)other_abi;
	(void)tsync;
	return -1;
#endif
}

int test_seccomp_setup_eagain(unsigned nr)
{
#ifdef TEST_AUDIT_ARCH
	/* The low 32 bits of the first argument (nr_events is unsigned). */
	const unsigned arg0 = offsetof(struct seccomp_data, args[0]) +
			      (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_setup, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAGAIN),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 ? 0 : -1;
#else
	(void)nr;
	return -1;
#endif
}

int test_seccomp_errno(const long *nrs, int n, int err)
{
	return seccomp_filter(nrs, n, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA),
			      SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW, 0);
}

int test_seccomp_kill_in_every_thread(const long *nrs, int n)
{
	return seccomp_filter(nrs, n, SECCOMP_RET_KILL_PROCESS,
			      SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW, 1);
}

int test_seccomp_no_aio(int err)
{
	static const long aio[] = {
		SYS_io_setup, SYS_io_destroy, SYS_io_submit, SYS_io_cancel,
#ifdef SYS_io_getevents
		SYS_io_getevents,
#endif
#ifdef SYS_io_pgetevents
		SYS_io_pgetevents,
#endif
#ifdef SYS_io_pgetevents_time64
		SYS_io_pgetevents_time64,
#endif
	};

	return test_seccomp_errno(aio, (int)(sizeof(aio) / sizeof(aio[0])), err);
}

int test_seccomp_allow_only(const long *nrs, int n)
{
	return seccomp_filter(nrs, n, SECCOMP_RET_ALLOW,
			      SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_PROCESS, 0);
}

int test_install_seccomp(const char *what)
{
#ifndef SYS_io_pgetevents_time64
# define SYS_io_pgetevents_time64 416
#endif
	static const long pget[] = { SYS_io_pgetevents, SYS_io_pgetevents_time64 };

	if (strcmp(what, "pgetevents") != 0)
		return -1;
	return test_seccomp_errno(pget, 2, ENOSYS);
}

int test_threads_now(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	int n = -1;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	ck_assert_int_gt(n, 0);
	return n;
}

int test_threads_settle_to(int want, unsigned seconds)
{
	int n = test_threads_now();
	unsigned i;

	for (i = 0; n != want && i < seconds * 100; i++) {
		usleep(10000);
		n = test_threads_now();
	}
	return n;
}

long test_task_syscall(long tid)
{
	char path[64], line[128];
	FILE *f;
	long nr = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return -2;
	/* "running" (not in a call) does not scan as a number. */
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr;
}

void test_expect_child(pid_t pid, const char *test, const char *why)
{
	pid_t got;
	int st, i;

	/* Bounded: a child that never ends is killed and fails the test. */
	for (i = 0; (got = waitpid(pid, &st, WNOHANG)) == 0 &&
		    i < TEST_CHILD_S * 100; i++)
		usleep(10000);
	if (got == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		ck_abort_msg("the child did not end within %d s", TEST_CHILD_S);
	}
	ck_assert_int_eq(got, pid);
	ck_assert_msg(WIFEXITED(st), "child died of signal %d", WTERMSIG(st));
	if (WEXITSTATUS(st) == 77) {
		test_skip("%s", *why ? why : "its child exited 77");
		return;
	}
	ck_assert_msg(WEXITSTATUS(st) == 0, "child failed at step %d",
		      WEXITSTATUS(st));
}
