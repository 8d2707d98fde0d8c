/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Async submission, as a hostile but legitimate program uses it: reads
 * the kernel would block on (a cold page cache, files without a
 * non-blocking mode) go to the library's workers, and the program sees
 * nothing of that but its own events, each once, with its own obj and
 * data, its iocbs and iovec arrays untouched after io_submit returns, and
 * no thread left behind.
 *
 * Where the worker path is taken is made certain, not hoped for:
 *  - a page evicted with POSIX_FADV_DONTNEED after fdatasync (checked
 *    with mincore) makes a RWF_NOWAIT read complete with -EAGAIN;
 *  - a FIFO opened by name has no non-blocking mode for aio (the kernel
 *    refuses RWF_NOWAIT with EOPNOTSUPP at submission), and a worker's
 *    blocking read of it waits, inside io_submit, until the test writes;
 *  - an empty pipe made by pipe() completes a RWF_NOWAIT read with
 *    -EAGAIN, which only a reap shows the library.
 * Each is probed with the raw system calls first; a kernel where it does
 * not hold skips that case with the reason.
 *
 * Thread counts are those of /proc/self/status ("Threads:", every task of
 * /proc/self/task); workers leave "after a short while", so each wait for
 * them is bounded by SETTLE_S, which only a hang reaches.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test-common.h"

#define GUARD_S 120		/* hang guard of a whole test */
#define SETTLE_S 30		/* bound of a wait for workers to leave */
#define BS 4096
#define QD 32
#define PIPE_RD 900		/* a descriptor number no open() returns here */
#define KEY_MARK 0x5eed5eedu	/* never what the kernel writes (0) */

#ifndef RWF_NOWAIT
# define RWF_NOWAIT 0x00000008	/* linux/fs.h */
#endif

/* Set in a process this file started afresh (fresh_process below). */
#define FRESH_ENV "AIOREAP_TEST_ASYNC_FRESH"

static const struct timespec zero_ts = { 0, 0 };

/* ------------------------------------------------------------ helpers */

static void *note_tid(void *arg)
{
	*(long *)arg = syscall(SYS_gettid);
	return NULL;
}

/* The process's own threads, once earlier work (a previous test in the
 * same process, under CK_FORK=no) has let its workers go.  Under
 * ThreadSanitizer, whose runtime starts background threads of its own
 * at the first pthread_create (again after a fork), a thread is started
 * and joined first, so that those are there before the count. */
static int base_threads(void)
{
	int want = 1, i;

	if (TEST_UNDER_TSAN) {
		char path[64];
		pthread_t t;
		long tid = 0;

		ck_assert_int_eq(pthread_create(&t, NULL, note_tid, &tid), 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		snprintf(path, sizeof(path), "/proc/self/task/%ld", tid);
		for (i = 0; access(path, F_OK) == 0; i++) {
			ck_assert_int_lt(i, SETTLE_S * 100);
			usleep(10000);
		}
		return test_threads_now();
	}
	ck_assert_int_eq(test_threads_settle_to(want, SETTLE_S), want);
	return want;
}

static struct io_async_stats stats_now(void)
{
	struct io_async_stats st;

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(io_async_stats(&st, sizeof(st)), 0);
	return st;
}

/* How many iocbs took the worker path between two readings. */
static unsigned long long worker_path(const struct io_async_stats *a,
				      const struct io_async_stats *b)
{
	return (b->to_workers - a->to_workers) + (b->redriven - a->redriven);
}

/* A context with async submission on; the previous setting is whatever
 * LIBAIO_ASYNC made it. */
static io_context_t async_ctx(int n)
{
	io_context_t ctx = NULL;

	ck_assert_int_eq(io_setup(n, &ctx), 0);
	ck_assert_int_eq(io_set_async(ctx, 1),
			 (io_features() & IO_FEATURE_ASYNC) ? 1 : 0);
	return ctx;
}

/* What the kernel does with one RWF_NOWAIT read of fd at offset 0: the
 * errno io_submit answers, or the event's res (-EAGAIN: would block). */
static long raw_nowait_read(int fd, size_t len)
{
	io_context_t raw = NULL;
	static unsigned char buf[BS];
	struct iocb cb, *p = &cb;
	struct io_event ev;
	struct timespec ts = { 5, 0 };
	long r;

	ck_assert_int_eq(test_sys_io_setup(1, &raw), 0);
	io_prep_pread(&cb, fd, buf, len, 0);
	cb.aio_rw_flags = RWF_NOWAIT;
	r = test_sys_io_submit(raw, 1, &p);
	if (r == 1) {
		ck_assert_int_eq(test_sys_io_getevents(raw, 1, 1, &ev, &ts), 1);
		r = (long)ev.res;
	}
	ck_assert_int_eq(test_sys_io_destroy(raw), 0);
	return r;
}

/* A file of nblocks blocks of test_pattern whose reads go to a worker:
 * none of them in the page cache, or (where the pages cannot be evicted)
 * on a file system that refuses RWF_NOWAIT reads, as Linux 6.1's tmpfs
 * does, so that each is queued at submission.  -1 (the case skips, saying
 * why) where neither holds. */
static int cold_file(int nblocks)
{
	size_t len = (size_t)nblocks * BS;
	int fd = test_tmpfile(len);
	unsigned char *vec = calloc((size_t)nblocks, 1);
	void *map;
	int i, resident = 0;

	ck_assert_ptr_nonnull(vec);
	ck_assert_int_eq(fdatasync(fd), 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	ck_assert_int_eq(mincore(map, len, vec), 0);
	for (i = 0; i < nblocks; i++)
		resident += vec[i] & 1;
	munmap(map, len);
	free(vec);
	if (resident && raw_nowait_read(fd, BS) != -EOPNOTSUPP) {
		test_skip("%d of %d pages stay cached after "
			"POSIX_FADV_DONTNEED on $TMPDIR's file system",
			resident, nblocks);
		close(fd);
		return -1;
	}
	return fd;
}

/* One assertion a block, not one a byte: Check records each. */
static void check_block(const unsigned char *b, size_t len, long long off)
{
	size_t k;

	for (k = 0; k < len && b[k] == test_pattern(off + (long long)k); k++)
		;
	ck_assert_msg(k == len, "byte %lld: %#x, the file has %#x",
		      off + (long long)k, b[k], test_pattern(off + (long long)k));
}

/* Reap until n events are in ev (each wait bounded by the guard). */
static void reap_n(io_context_t ctx, struct io_event *ev, int n)
{
	struct timespec ts = { GUARD_S, 0 };
	int got = 0;

	while (got < n) {
		int r = io_getevents(ctx, 1, n - got, ev + got, &ts);

		if (r == -EINTR)
			continue;
		ck_assert_msg(r > 0, "io_getevents: %d after %d of %d events",
			      r, got, n);
		got += r;
	}
}

/* Nothing more comes: no event is waiting now. */
static void expect_no_event(io_context_t ctx)
{
	struct io_event ev;

	ck_assert_int_eq(io_getevents(ctx, 0, 1, &ev,
				      (struct timespec *)&zero_ts), 0);
}

/* The index of ev's obj in cbs[0..n-1], checking data and that it was
 * not seen before. */
static int event_index(const struct io_event *ev, struct iocb *cbs, int n,
		       unsigned char *seen)
{
	long i = (struct iocb *)ev->obj - cbs;

	ck_assert_msg(i >= 0 && i < n, "event with obj %p, not one of ours",
		      ev->obj);
	ck_assert_msg(ev->data == cbs[i].data, "iocb %ld: data %p, gave %p",
		      i, ev->data, cbs[i].data);
	ck_assert_msg(!seen[i], "iocb %ld completed twice", i);
	seen[i] = 1;
	return (int)i;
}

/*
 * A FIFO the kernel refuses RWF_NOWAIT for, so every read of it goes to
 * a worker at submission, where it waits in the kernel until *wr is
 * written or closed.  0, or -1 where this kernel has a non-blocking mode
 * for FIFOs (the case skips, saying why).
 */
static int worker_fifo(int *rd, int *wr)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	long r;

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/libaio-fifo-%ld", dir, (long)getpid());
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	/* O_NONBLOCK only to open the reading end without a writer. */
	*rd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(*rd, 0);
	*wr = open(path, O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(*wr, 0);
	unlink(path);
	ck_assert_int_eq(fcntl(*rd, F_SETFL, 0), 0);
	r = raw_nowait_read(*rd, 8);
	if (r != -EOPNOTSUPP) {
		test_skip("this kernel answers %ld, not "
			"-EOPNOTSUPP, for a RWF_NOWAIT read of a FIFO", r);
		close(*rd);
		close(*wr);
		return -1;
	}
	return 0;
}

/* How many tasks of the process, other than the caller, sleep in
 * io_submit right now. */
static int tasks_in_submit(void)
{
	long self = syscall(SYS_gettid);
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (atol(e->d_name) && atol(e->d_name) != self &&
		    test_task_syscall(atol(e->d_name)) == SYS_io_submit)
			n++;
	closedir(d);
	return n;
}

/* Wait (bounded by the guard) until at least n workers wait in io_submit:
 * the reads they hold are in the kernel, the rest queued. */
static void wait_workers_in_submit(int n)
{
	int i;

	for (i = 0; tasks_in_submit() < n; i++) {
		ck_assert_msg(i < GUARD_S * 100, "%d of %d workers in io_submit",
			      tasks_in_submit(), n);
		usleep(10000);
	}
}

/*
 * Run the test case tcase in a process of its own, started afresh (exec),
 * with LIBAIO_ASYNC set to async (NULL: unset): the library reads it at
 * the process's first io_setup, which in this one (under CK_FORK=no, or
 * after an earlier case) may be long past.  The case's body sees
 * FRESH_ENV and runs; this side waits for its verdict.
 */
static void fresh_process(const char *tcase, const char *async)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (async)
			setenv("LIBAIO_ASYNC", async, 1);
		else
			unsetenv("LIBAIO_ASYNC");
		setenv("CK_RUN_CASE", tcase, 1);
		/* One TAP stream per program: this side writes the result. */
		unsetenv("CK_TAP_LOG_FILE_NAME");
		setenv(FRESH_ENV, "1", 1);
		execl("/proc/self/exe", "test-async", (char *)NULL);
		_exit(98);
	}
	test_expect_child(pid, tcase, "see its output");
}

/* The iocbs of a batch of block reads of fd, block i at offset
 * order[i] * BS (reversed: no two neighbours in order), into buf. */
static void prep_reads(struct iocb *cb, struct iocb **p, int n, int fd,
		       unsigned char *buf, uintptr_t tag)
{
	int i;

	for (i = 0; i < n; i++) {
		io_prep_pread(&cb[i], fd, buf + (size_t)i * BS, BS,
			      (long long)(n - 1 - i) * BS);
		cb[i].data = (void *)(tag + (uintptr_t)i);
		cb[i].key = KEY_MARK;
		p[i] = &cb[i];
	}
}

/* ------------------------------------------------------------- cases */

/*
 * Cold buffered reads at QD 32: each event has the program's obj and
 * data and the whole block, some took the worker path, and the program's
 * iocbs are byte for byte what it wrote, key included (the kernel writes
 * 0 there in every iocb it is handed).
 */
START_TEST(cold_reads_complete_through_workers_with_the_programs_iocbs)
{
	static unsigned char buf[QD * BS];
	struct iocb cb[QD], copy[QD], *p[QD];
	struct io_event ev[QD];
	unsigned char seen[QD] = { 0 };
	struct io_async_stats s0, s1;
	io_context_t ctx;
	int i, fd;

	test_hang_guard("cold_reads_complete_through_workers_with_the_programs_iocbs",
			GUARD_S);
	if ((fd = cold_file(QD)) < 0)
		return;
	ctx = async_ctx(QD);
	prep_reads(cb, p, QD, fd, buf, 0xda7a0000u);
	memcpy(copy, cb, sizeof(cb));
	s0 = stats_now();
	ck_assert_int_eq(io_submit(ctx, QD, p), QD);
	ck_assert_msg(memcmp(copy, cb, sizeof(cb)) == 0,
		      "io_submit wrote into the program's iocbs");
	reap_n(ctx, ev, QD);
	s1 = stats_now();
	for (i = 0; i < QD; i++) {
		int j = event_index(&ev[i], cb, QD, seen);

		ck_assert_int_eq((long)ev[i].res, BS);
		ck_assert_int_eq((long)ev[i].res2, 0);
		check_block(buf + (size_t)j * BS, BS, (long long)(QD - 1 - j) * BS);
	}
	for (i = 0; i < QD; i++)
		ck_assert_msg(memcmp(&copy[i], &cb[i], sizeof(cb[i])) == 0,
			      "iocb %d changed (key %#x)", i, cb[i].key);
	ck_assert_msg(worker_path(&s0, &s1) > 0,
		      "no read of a cold file took the worker path");
	expect_no_event(ctx);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/* Reads of cached blocks complete in the kernel at once: inline_done
 * counts each, and no worker thread ever appears.  A file system without
 * non-blocking reads (Linux 6.1's tmpfs) sends each to a worker instead:
 * to_workers counts them all and none completes inline. */
START_TEST(cached_reads_complete_inline_without_a_worker)
{
	static unsigned char buf[QD * BS];
	struct iocb cb[QD], *p[QD];
	struct io_event ev[QD];
	unsigned char seen[QD] = { 0 };
	struct io_async_stats s0, s1;
	io_context_t ctx;
	int i, fd, base = base_threads();
	long r;
	int nowait;

	test_hang_guard("cached_reads_complete_inline_without_a_worker", GUARD_S);
	fd = test_tmpfile(QD * BS);
	ck_assert_int_eq(fdatasync(fd), 0);	/* no writeback meanwhile */
	ck_assert_int_eq(pread(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	r = raw_nowait_read(fd, BS);
	nowait = r == BS;
	if (!nowait && r != -EOPNOTSUPP) {
		test_skip("a RWF_NOWAIT read of a cached block of "
			"$TMPDIR's file system gives %ld", r);
		close(fd);
		return;
	}
	ctx = async_ctx(QD);
	prep_reads(cb, p, QD, fd, buf, 0xcace0000u);
	s0 = stats_now();
	ck_assert_int_eq(io_submit(ctx, QD, p), QD);
	if (nowait)
		ck_assert_int_eq(test_threads_now(), base);
	reap_n(ctx, ev, QD);
	if (nowait)
		ck_assert_int_eq(test_threads_now(), base);
	s1 = stats_now();
	for (i = 0; i < QD; i++) {
		int j = event_index(&ev[i], cb, QD, seen);

		ck_assert_int_eq((long)ev[i].res, BS);
		check_block(buf + (size_t)j * BS, BS, (long long)(QD - 1 - j) * BS);
	}
	ck_assert_uint_eq(s1.inline_done - s0.inline_done, nowait ? QD : 0);
	ck_assert_uint_eq(worker_path(&s0, &s1), nowait ? 0 : QD);
	ck_assert_int_eq(io_destroy(ctx), 0);
	if (nowait)
		ck_assert_int_eq(test_threads_now(), base);
	close(fd);
}
END_TEST

/* Buffered writes (some file systems have no non-blocking buffered
 * write: those go to workers), then IOCB_CMD_FSYNC: the blocks read back
 * from the disk, the page cache dropped, are what was written. */
START_TEST(buffered_writes_then_fsync_reach_the_disk)
{
	enum { N = 16 };
	static unsigned char buf[N * BS], back[N * BS];
	struct iocb cb[N + 1], *p[N + 1];
	struct io_event ev[N];
	unsigned char seen[N + 1] = { 0 };
	io_context_t ctx = async_ctx(N + 1);
	int i, fd = test_tmpfile(0);
	size_t k;

	test_hang_guard("buffered_writes_then_fsync_reach_the_disk", GUARD_S);
	for (k = 0; k < sizeof(buf); k++)
		buf[k] = (unsigned char)~test_pattern((long long)k);
	for (i = 0; i < N; i++) {
		io_prep_pwrite(&cb[i], fd, buf + (size_t)i * BS, BS,
			       (long long)i * BS);
		cb[i].data = (void *)(uintptr_t)(0x3e1e0000u + i);
		p[i] = &cb[i];
	}
	ck_assert_int_eq(io_submit(ctx, N, p), N);
	reap_n(ctx, ev, N);
	for (i = 0; i < N; i++) {
		event_index(&ev[i], cb, N, seen);
		ck_assert_int_eq((long)ev[i].res, BS);
	}
	io_prep_fsync(&cb[N], fd);
	cb[N].data = (void *)0xf5c;
	p[N] = &cb[N];
	ck_assert_int_eq(io_submit(ctx, 1, &p[N]), 1);
	reap_n(ctx, ev, 1);
	ck_assert_ptr_eq(ev[0].obj, &cb[N]);
	ck_assert_ptr_eq(ev[0].data, (void *)0xf5c);
	ck_assert_int_eq((long)ev[0].res, 0);
	/* Clean pages go; what is read next comes from the disk. */
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	ck_assert_int_eq(pread(fd, back, sizeof(back), 0), (ssize_t)sizeof(back));
	ck_assert_msg(memcmp(back, buf, sizeof(buf)) == 0,
		      "the file is not what was written");
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/* The program overwrites its iovec arrays and frees them as soon as
 * io_submit returns, as the stock library allows: the reads, done later
 * by workers, still land where the arrays said at submission. */
START_TEST(vectored_reads_survive_an_iovec_array_freed_after_submit)
{
	enum { N = 8, V = 4, PART = BS / V };
	static unsigned char buf[N * BS], decoy[PART];
	struct iocb cb[N], *p[N];
	struct iovec *iov[N];
	struct io_event ev[N];
	unsigned char seen[N] = { 0 };
	struct io_async_stats s0, s1;
	io_context_t ctx;
	int i, v, fd;

	test_hang_guard("vectored_reads_survive_an_iovec_array_freed_after_submit",
			GUARD_S);
	if ((fd = cold_file(N)) < 0)
		return;
	ctx = async_ctx(N);
	memset(decoy, 0xee, sizeof(decoy));
	for (i = 0; i < N; i++) {
		iov[i] = malloc(V * sizeof(*iov[i]));
		ck_assert_ptr_nonnull(iov[i]);
		for (v = 0; v < V; v++) {
			iov[i][v].iov_base = buf + (size_t)i * BS + (size_t)v * PART;
			iov[i][v].iov_len = PART;
		}
		io_prep_preadv(&cb[i], fd, iov[i], V, (long long)i * BS);
		cb[i].data = (void *)(uintptr_t)(0x10ec0000u + i);
		p[i] = &cb[i];
	}
	s0 = stats_now();
	ck_assert_int_eq(io_submit(ctx, N, p), N);
	for (i = 0; i < N; i++) {
		for (v = 0; v < V; v++) {
			iov[i][v].iov_base = decoy;
			iov[i][v].iov_len = 1;
		}
		free(iov[i]);
	}
	reap_n(ctx, ev, N);
	s1 = stats_now();
	for (i = 0; i < N; i++) {
		int j = event_index(&ev[i], cb, N, seen);

		ck_assert_int_eq((long)ev[i].res, BS);
		check_block(buf + (size_t)j * BS, BS, (long long)j * BS);
	}
	for (v = 0; v < PART; v++)
		ck_assert_int_eq(decoy[v], 0xee);
	ck_assert_msg(worker_path(&s0, &s1) > 0,
		      "no vectored read of a cold file took the worker path");
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/*
 * An empty pipe: the RWF_NOWAIT read completes with -EAGAIN, which the
 * library learns only in a reap, and a worker then waits in the read.
 * Before that, the program closes its descriptor and gives the number to
 * another file (/dev/zero): the read must still be the pipe's, as it is
 * when the kernel takes the request at io_submit (the library's copy
 * names its own duplicate).  The pipe's data arrives, not zeros.
 */
START_TEST(a_descriptor_number_reused_after_io_submit_keeps_its_file)
{
	unsigned char b[64];
	struct iocb cb, *p = &cb;
	struct io_event ev;
	struct io_async_stats s0, s1;
	io_context_t ctx;
	int pfd[2], zero;
	long r;

	test_hang_guard("a_descriptor_number_reused_after_io_submit_keeps_its_file",
			GUARD_S);
	ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
	ck_assert_int_eq(dup2(pfd[0], PIPE_RD), PIPE_RD);
	close(pfd[0]);
	/* -EAGAIN: a worker re-drives the read after its event; -EOPNOTSUPP
	 * (Linux 6.1's pipes): the read is queued for a worker at submission.
	 * Either way the duplicate is taken inside io_submit. */
	r = raw_nowait_read(PIPE_RD, sizeof(b));
	if (r != -EAGAIN && r != -EOPNOTSUPP) {
		test_skip("a RWF_NOWAIT read of an empty pipe "
			"gives %ld here, neither -EAGAIN nor -EOPNOTSUPP", r);
		close(PIPE_RD);
		close(pfd[1]);
		return;
	}
	ctx = async_ctx(4);
	memset(b, 0xee, sizeof(b));
	io_prep_pread(&cb, PIPE_RD, b, sizeof(b), 0);
	cb.data = (void *)0xbadf;
	s0 = stats_now();
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	close(PIPE_RD);
	zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(zero, 0);
	ck_assert_int_eq(dup2(zero, PIPE_RD), PIPE_RD);
	close(zero);
	ck_assert_int_eq(write(pfd[1], "hello", 5), 5);
	reap_n(ctx, &ev, 1);
	s1 = stats_now();
	ck_assert_ptr_eq(ev.obj, &cb);
	ck_assert_ptr_eq(ev.data, (void *)0xbadf);
	ck_assert_msg((long)ev.res == 5, "res %ld, not the pipe's 5 bytes",
		      (long)ev.res);
	ck_assert_int_eq(memcmp(b, "hello", 5), 0);
	ck_assert_uint_eq(s1.failed - s0.failed, 0);
	expect_no_event(ctx);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(PIPE_RD);
	close(pfd[1]);
}
END_TEST

/*
 * io_cancel of reads still queued for a worker: 0, the program's obj and
 * data with -ECANCELED, and no event for them ever.  More reads than the
 * pool has workers (32) wait on a FIFO, so at least 8 are queued, one
 * worker holding one; a read a worker holds is in the kernel's hands, and
 * the kernel answers EINVAL for a read.
 */
START_TEST(cancel_of_queued_reads_gives_ecanceled_and_no_event)
{
	enum { N = 40, LEN = 8 };
	static unsigned char buf[N][LEN], fill[N * LEN];
	struct iocb cb[N], *p[N];
	struct io_event ev[N], cev;
	unsigned char cancelled[N] = { 0 }, seen[N] = { 0 };
	struct io_async_stats s0, s1;
	io_context_t ctx;
	int i, rd, wr, ncancel = 0, base = base_threads();

	test_hang_guard("cancel_of_queued_reads_gives_ecanceled_and_no_event",
			GUARD_S);
	if (worker_fifo(&rd, &wr) != 0)
		return;
	ctx = async_ctx(64);
	for (i = 0; i < N; i++) {
		io_prep_pread(&cb[i], rd, buf[i], LEN, 0);
		cb[i].data = (void *)(uintptr_t)(0xcc000000u + i);
		p[i] = &cb[i];
	}
	s0 = stats_now();
	ck_assert_int_eq(io_submit(ctx, N, p), N);
	wait_workers_in_submit(1);
	for (i = 0; i < N; i++) {
		int r;

		memset(&cev, 0x5a, sizeof(cev));
		r = io_cancel(ctx, &cb[i], &cev);
		ck_assert_msg(r == 0 || r == -EINVAL, "io_cancel of read %d: %d",
			      i, r);
		if (r != 0)
			continue;
		cancelled[i] = 1;
		ncancel++;
		ck_assert_ptr_eq(cev.obj, &cb[i]);
		ck_assert_ptr_eq(cev.data, cb[i].data);
		ck_assert_int_eq((long)cev.res, -ECANCELED);
		ck_assert_int_eq((long)cev.res2, 0);
	}
	ck_assert_msg(ncancel >= N - 32, "%d of %d queued reads cancelled",
		      ncancel, N);
	/* Exactly what the others read, then EOF for any read beyond. */
	memset(fill, 'f', sizeof(fill));
	ck_assert_int_eq(write(wr, fill, (size_t)(N - ncancel) * LEN),
			 (N - ncancel) * LEN);
	close(wr);
	reap_n(ctx, ev, N - ncancel);
	for (i = 0; i < N - ncancel; i++) {
		int j = event_index(&ev[i], cb, N, seen);

		ck_assert_msg(!cancelled[j], "an event for cancelled read %d", j);
		ck_assert_int_eq((long)ev[i].res, LEN);
	}
	/* Once the workers have gone nothing can still be on its way. */
	ck_assert_int_eq(test_threads_settle_to(base, SETTLE_S), base);
	expect_no_event(ctx);
	s1 = stats_now();
	ck_assert_uint_eq(s1.cancelled - s0.cancelled, (unsigned)ncancel);
	ck_assert_uint_eq(s1.to_workers - s0.to_workers, N);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(rd);
}
END_TEST

/*
 * io_cancel of reads the kernel holds: one the kernel completed at once
 * (a cached block, its event not yet reaped) and one a worker waits on
 * inside io_submit.  The answer is the kernel's, as a raw io_cancel of
 * the same completed read gives it, and each event still comes, once.
 */
START_TEST(cancel_of_reads_the_kernel_holds_answers_as_the_kernel)
{
	static unsigned char b1[BS], b2[8];
	struct iocb cb[2], *p[2] = { &cb[0], &cb[1] };
	struct io_event ev;
	io_context_t ctx, raw = NULL;
	int fd, rd, wr, want, got;

	test_hang_guard("cancel_of_reads_the_kernel_holds_answers_as_the_kernel",
			GUARD_S);
	fd = test_tmpfile(BS);
	ck_assert_int_eq(pread(fd, b1, BS, 0), BS);
	/* The kernel's own answer for a completed read. */
	ck_assert_int_eq(test_sys_io_setup(1, &raw), 0);
	io_prep_pread(&cb[0], fd, b1, BS, 0);
	ck_assert_int_eq(test_sys_io_submit(raw, 1, p), 1);
	ck_assert_int_eq(test_sys_io_getevents(raw, 1, 1, &ev, NULL), 1);
	want = (int)test_sys_io_cancel(raw, &cb[0], &ev);
	ck_assert_int_eq(test_sys_io_destroy(raw), 0);

	ctx = async_ctx(4);
	io_prep_pread(&cb[0], fd, b1, BS, 0);
	cb[0].data = (void *)0xca0;
	ck_assert_int_eq(io_submit(ctx, 1, p), 1);
	if ((got = io_cancel(ctx, &cb[0], &ev)) == 0) {
		/* A file with no non-blocking read (tmpfs before 6.x):
		 * the read was still queued for a worker, and cancelled. */
		ck_assert_ptr_eq(ev.obj, &cb[0]);
		ck_assert_ptr_eq(ev.data, (void *)0xca0);
		ck_assert_int_eq((long)ev.res, -ECANCELED);
	} else {
		ck_assert_int_eq(got, want);
		reap_n(ctx, &ev, 1);
		ck_assert_ptr_eq(ev.obj, &cb[0]);
		ck_assert_ptr_eq(ev.data, (void *)0xca0);
		ck_assert_int_eq((long)ev.res, BS);
	}
	expect_no_event(ctx);

	if (worker_fifo(&rd, &wr) == 0) {
		io_prep_pread(&cb[1], rd, b2, sizeof(b2), 0);
		cb[1].data = (void *)0xca1;
		ck_assert_int_eq(io_submit(ctx, 1, &p[1]), 1);
		wait_workers_in_submit(1);
		ck_assert_int_eq(io_cancel(ctx, &cb[1], &ev), -EINVAL);
		ck_assert_int_eq(write(wr, "12345678", 8), 8);
		reap_n(ctx, &ev, 1);
		ck_assert_ptr_eq(ev.obj, &cb[1]);
		ck_assert_ptr_eq(ev.data, (void *)0xca1);
		ck_assert_int_eq((long)ev.res, 8);
		expect_no_event(ctx);
		close(rd);
		close(wr);
	}
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

struct releaser {
	long main_tid;
	int wr;
	atomic_int destroyed;
};

/* Close the FIFO's writing end once the main thread sleeps in io_destroy
 * (or in a futex wait: the library waiting for a worker), or once
 * io_destroy has returned; the workers' reads then end (EOF). */
static void *release_when_destroying(void *arg)
{
	struct releaser *r = arg;

	for (;;) {
		long nr = test_task_syscall(r->main_tid);

		/* Relaxed: only the flag's own value matters here. */
		if (nr == SYS_io_destroy || nr == SYS_futex || nr == -2 ||
		    atomic_load_explicit(&r->destroyed, memory_order_relaxed))
			break;
		usleep(1000);
	}
	close(r->wr);
	return NULL;
}

/* io_destroy while reads are queued and every worker waits in the kernel:
 * it returns 0, and then no worker thread remains. */
START_TEST(destroy_with_queued_reads_and_busy_workers_leaves_no_thread)
{
	enum { N = 40, LEN = 8 };
	static unsigned char buf[N][LEN];
	struct iocb cb[N], *p[N];
	struct releaser rel;
	pthread_t t;
	io_context_t ctx;
	int i, rd, base = base_threads();

	test_hang_guard("destroy_with_queued_reads_and_busy_workers_leaves_no_thread",
			GUARD_S);
	if (worker_fifo(&rd, &rel.wr) != 0)
		return;
	ctx = async_ctx(64);
	for (i = 0; i < N; i++) {
		io_prep_pread(&cb[i], rd, buf[i], LEN, 0);
		cb[i].data = (void *)(uintptr_t)i;
		p[i] = &cb[i];
	}
	ck_assert_int_eq(io_submit(ctx, N, p), N);
	wait_workers_in_submit(1);
	rel.main_tid = syscall(SYS_gettid);
	atomic_init(&rel.destroyed, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, release_when_destroying, &rel), 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	atomic_store_explicit(&rel.destroyed, 1, memory_order_relaxed);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(test_threads_settle_to(base, SETTLE_S), base);
	ck_assert_int_eq(io_set_async(ctx, 1), -EINVAL);
	close(rd);
}
END_TEST

/* The child's side of the fork case: exit 0, or the step that failed. */
static int fork_child(io_context_t parent, int fd)
{
	static unsigned char buf[QD * BS];
	struct iocb cb[QD], *p[QD];
	struct io_event ev[QD];
	struct io_async_stats st;
	io_context_t ctx = NULL;
	int i, got = 0, base;

	if (test_threads_now() > 1 + TEST_UNDER_TSAN)
		return 1;	/* a worker of the parent's */
	base = base_threads();
	if (io_async_stats(&st, sizeof(st)) != 0)
		return 2;
	if (st.inline_done || st.to_workers || st.redriven || st.cancelled ||
	    st.failed)
		return 3;	/* the counters start again at a fork */
	if (io_getevents(parent, 0, 1, ev, (struct timespec *)&zero_ts) !=
	    test_sys_io_getevents(parent, 0, 1, ev, (struct timespec *)&zero_ts))
		return 4;
	if (io_set_async(parent, 1) != -EINVAL)
		return 5;	/* not a context of this process */
	/* Its own async work runs: nothing of the parent's pool is held. */
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		return 6;
	if (io_setup(QD, &ctx) != 0 || io_set_async(ctx, 1) < 0)
		return 7;
	prep_reads(cb, p, QD, fd, buf, 0xc41d0000u);
	if (io_submit(ctx, QD, p) != QD)
		return 8;
	while (got < QD) {
		struct timespec ts = { GUARD_S, 0 };
		int r = io_getevents(ctx, 1, QD, ev + got, &ts);

		if (r <= 0 && r != -EINTR)
			return 9;
		got += r > 0 ? r : 0;
	}
	for (i = 0; i < QD; i++)
		if ((long)ev[i].res != BS ||
		    ev[i].data != ((struct iocb *)ev[i].obj)->data)
			return 10;
	if (io_destroy(ctx) != 0)
		return 11;
	if (test_threads_settle_to(base, SETTLE_S) != base)
		return 12;
	return 0;
}

/*
 * fork while reads wait for workers and workers wait in the kernel: the
 * child has no queue, no worker and no counts of the parent's, its reap
 * of the parent's context answers as the kernel's does (no such context
 * in the child), and its own async work runs.  The parent gets every
 * event it was owed.
 */
START_TEST(a_fork_child_has_no_queue_and_no_worker)
{
	enum { F = 36, LEN = 8, N = QD + F };
	static unsigned char buf[QD * BS], fb[F][LEN], fill[F * LEN];
	struct iocb cb[N], *p[N];
	struct io_event ev[N];
	unsigned char seen[N] = { 0 };
	io_context_t ctx;
	int i, k, fd, rd, wr;
	pid_t pid;

	test_hang_guard("a_fork_child_has_no_queue_and_no_worker", GUARD_S);
	if ((fd = cold_file(QD)) < 0)
		return;
	if (worker_fifo(&rd, &wr) != 0)
		return;
	ctx = async_ctx(N);
	prep_reads(cb, p, QD, fd, buf, 0xf0000000u);
	for (i = QD; i < N; i++) {
		io_prep_pread(&cb[i], rd, fb[i - QD], LEN, 0);
		cb[i].data = (void *)(uintptr_t)(0xf1000000u + i);
		p[i] = &cb[i];
	}
	ck_assert_int_eq(io_submit(ctx, N, p), N);
	wait_workers_in_submit(1);
	/* Hand the cold reads' -EAGAIN completions to the workers too. */
	i = io_getevents(ctx, 0, N, ev, (struct timespec *)&zero_ts);
	ck_assert_int_ge(i, 0);
	/* AddressSanitizer's allocator (clang 14's) is not fork-safe: a
	 * thread inside it at the fork (a new worker setting up) leaves its
	 * lock held in the child.  There the fork waits until every worker
	 * waits in the kernel (more FIFO reads than workers: the rest stay
	 * queued); every other build forks at once. */
	for (k = 0; TEST_UNDER_ASAN && tasks_in_submit() !=
			test_threads_now() - 1 - TEST_UNDER_TSAN; k++) {
		ck_assert_msg(k < GUARD_S * 100, "the workers never all waited");
		usleep(10000);
	}
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fork_child(ctx, fd));
	test_expect_child(pid, "a_fork_child_has_no_queue_and_no_worker", "");
	memset(fill, 'f', sizeof(fill));
	ck_assert_int_eq(write(wr, fill, sizeof(fill)), (ssize_t)sizeof(fill));
	reap_n(ctx, ev + i, N - i);
	for (i = 0; i < N; i++) {
		int j = event_index(&ev[i], cb, N, seen);

		ck_assert_int_eq((long)ev[i].res, j < QD ? BS : LEN);
		if (j < QD)
			check_block(buf + (size_t)j * BS, BS,
				    (long long)(QD - 1 - j) * BS);
	}
	expect_no_event(ctx);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(rd);
	close(wr);
	close(fd);
}
END_TEST

/* ------------------------------------------------- exactly once, threads */

enum { X_READS = 2048, X_BATCH = 8, X_EV = 16 };

struct exact {
	io_context_t ctx;
	struct iocb *cb;
	unsigned char *buf;
	atomic_int seen[X_READS];
	atomic_int done;		/* events taken, all reapers */
	atomic_int bad;			/* first wrong thing seen, or 0 */
	atomic_int submit_err;
	atomic_int submitted;
};

static struct exact *exact_now;

/* Record one completion; a wrong one is kept for the main thread. */
static void exact_take(struct exact *x, struct iocb *obj, void *data,
		       long res, int bad_code)
{
	long i = obj - x->cb;

	if (i < 0 || i >= X_READS || data != x->cb[i].data || res != BS) {
		int none = 0;

		atomic_compare_exchange_strong(&x->bad, &none, bad_code);
		atomic_fetch_add(&x->done, 1);
		return;
	}
	atomic_fetch_add(&x->seen[i], 1);
	atomic_fetch_add(&x->done, 1);
}

/* io_queue_run's callback: the iocbs' data is this function. */
static void exact_callback(io_context_t ctx, struct iocb *iocb, long res,
			   long res2)
{
	(void)ctx;
	(void)res2;
	exact_take(exact_now, iocb, (void *)(uintptr_t)exact_callback, res, 4);
}

static void *exact_submitter(void *arg)
{
	struct exact *x = arg;
	struct iocb *p[X_BATCH];
	int i = 0, k;

	while (i < X_READS) {
		int n = X_READS - i < X_BATCH ? X_READS - i : X_BATCH, r;

		for (k = 0; k < n; k++)
			p[k] = &x->cb[i + k];
		r = io_submit(x->ctx, n, p);
		if (r == -EAGAIN || r == 0) {	/* the ring is full */
			sched_yield();
			continue;
		}
		if (r < 0) {
			atomic_store(&x->submit_err, r);
			return NULL;
		}
		i += r;
		atomic_store(&x->submitted, i);
	}
	return NULL;
}

static void exact_events(struct exact *x, const struct io_event *ev, int n,
			 int bad_code)
{
	int i;

	for (i = 0; i < n; i++)
		exact_take(x, ev[i].obj, ev[i].data, (long)ev[i].res, bad_code);
}

static int exact_finished(struct exact *x)
{
	return atomic_load(&x->done) >= X_READS || atomic_load(&x->submit_err);
}

/* A waiting reaper: io_pgetevents (with no mask) or io_getevents.  Each
 * wait is bounded so that it sees the end; how long does not matter. */
static void exact_wait_reaper(struct exact *x, int pget)
{
	struct io_event ev[X_EV];

	while (!exact_finished(x)) {
		struct timespec ts = { 0, 20000000 };
		int r = pget ? io_pgetevents(x->ctx, 1, X_EV, ev, &ts, NULL)
			     : io_getevents(x->ctx, 1, X_EV, ev, &ts);

		if (r > 0)
			exact_events(x, ev, r, 1 + pget);
		else if (r < 0 && r != -EINTR)
			atomic_store(&x->bad, 10 * (1 + pget));
	}
}

static void *exact_getevents(void *arg)
{
	exact_wait_reaper(arg, 0);
	return NULL;
}

static void *exact_pgetevents(void *arg)
{
	exact_wait_reaper(arg, 1);
	return NULL;
}

static void *exact_reap(void *arg)
{
	struct exact *x = arg;
	struct io_event ev[X_EV];

	while (!exact_finished(x)) {
		int r = io_reap(x->ctx, X_EV, ev);

		if (r > 0)
			exact_events(x, ev, r, 3);
		else if (r < 0)
			atomic_store(&x->bad, 30);
		else
			usleep(1000);
	}
	return NULL;
}

static void *exact_queue_run(void *arg)
{
	struct exact *x = arg;

	while (!exact_finished(x)) {
		int before = atomic_load(&x->done), r = io_queue_run(x->ctx);

		if (r < 0)
			atomic_store(&x->bad, 40);
		else if (atomic_load(&x->done) == before)
			usleep(1000);
	}
	return NULL;
}

/*
 * One thread submits thousands of cold reads while four reap the one
 * context through io_getevents, io_pgetevents, io_reap and io_queue_run:
 * every read completes once, with its obj, data (io_queue_run's callback)
 * and whole block, and none is missing.
 */
START_TEST(every_reaping_path_returns_each_completion_once)
{
	static void *(*const reapers[])(void *) = {
		exact_getevents, exact_pgetevents, exact_reap, exact_queue_run,
	};
	pthread_t sub, r[4];
	struct io_async_stats s0, s1;
	struct exact *x = calloc(1, sizeof(*x));
	int i, fd;

	test_hang_guard("every_reaping_path_returns_each_completion_once", 3 * GUARD_S);
	ck_assert_ptr_nonnull(x);
	if ((fd = cold_file(X_READS)) < 0)
		return;
	x->cb = calloc(X_READS, sizeof(*x->cb));
	x->buf = malloc((size_t)X_READS * BS);
	ck_assert_ptr_nonnull(x->cb);
	ck_assert_ptr_nonnull(x->buf);
	for (i = 0; i < X_READS; i++) {
		/* Strided: neighbours far apart, so readahead helps little. */
		long long blk = (long long)((i * 97) % X_READS);

		io_prep_pread(&x->cb[i], fd, x->buf + (size_t)i * BS, BS, blk * BS);
		io_set_callback(&x->cb[i], exact_callback);
	}
	x->ctx = async_ctx(128);
	exact_now = x;
	s0 = stats_now();
	ck_assert_int_eq(pthread_create(&sub, NULL, exact_submitter, x), 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&r[i], NULL, reapers[i], x), 0);
	/* Bounded, to say where it stands when a completion never comes. */
	for (i = 0; !exact_finished(x) && i < 2 * GUARD_S * 100; i++)
		usleep(10000);
	s1 = stats_now();
	ck_assert_msg(exact_finished(x), "%d of %d reads completed, %d submitted;"
		      " counters: inline %llu, to workers %llu, redriven %llu,"
		      " failed %llu; %d threads", atomic_load(&x->done), X_READS,
		      atomic_load(&x->submitted), s1.inline_done - s0.inline_done,
		      s1.to_workers - s0.to_workers, s1.redriven - s0.redriven,
		      s1.failed - s0.failed, test_threads_now());
	ck_assert_int_eq(pthread_join(sub, NULL), 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_join(r[i], NULL), 0);
	ck_assert_msg(!atomic_load(&x->submit_err), "io_submit: %d",
		      atomic_load(&x->submit_err));
	ck_assert_msg(!atomic_load(&x->bad),
		      "a wrong event or error (code %d: reaper %d)",
		      atomic_load(&x->bad), atomic_load(&x->bad) % 10 ?
		      atomic_load(&x->bad) : atomic_load(&x->bad) / 10);
	for (i = 0; i < X_READS; i++) {
		ck_assert_msg(atomic_load(&x->seen[i]) == 1,
			      "read %d completed %d times", i,
			      atomic_load(&x->seen[i]));
		check_block(x->buf + (size_t)i * BS, BS,
			    (long long)((i * 97) % X_READS) * BS);
	}
	ck_assert_int_eq(atomic_load(&x->done), X_READS);
	ck_assert_msg(worker_path(&s0, &s1) > 0,
		      "no read of a cold file took the worker path");
	expect_no_event(x->ctx);
	ck_assert_int_eq(io_destroy(x->ctx), 0);
	free(x->buf);
	free(x->cb);
	free(x);
	close(fd);
}
END_TEST

/* ------------------------------------------- the environment, the calls */

/* LIBAIO_ASYNC=1 before the first io_setup: every context starts with
 * async on (io_queue_init's too), io_features says so, io_set_async turns
 * it off for one context, and that one behaves as stock again. */
START_TEST(libaio_async_in_the_environment_turns_it_on)
{
	static unsigned char buf[8];
	struct iocb cb, copy, *p = &cb;
	struct io_event ev;
	struct io_async_stats s0, s1;
	io_context_t ctx = NULL, ctx2 = NULL;
	int rd, wr;

	if (!getenv(FRESH_ENV)) {
		fresh_process("env_on", "1");
		return;
	}
	ck_assert_int_eq(io_setup(8, &ctx), 0);
	ck_assert_uint_ne(io_features() & IO_FEATURE_ASYNC, 0);
	ck_assert_int_eq(io_queue_init(8, &ctx2), 0);
	ck_assert_int_eq(io_set_async(ctx2, 1), 1);
	ck_assert_int_eq(io_set_async(ctx, 0), 1);
	ck_assert_int_eq(io_set_async(ctx, 0), 0);

	/* ctx2: on; a FIFO's read goes to a worker, the iocb untouched. */
	if (worker_fifo(&rd, &wr) != 0)
		return;
	ck_assert_int_eq(write(wr, "1234567812345678", 16), 16);
	io_prep_pread(&cb, rd, buf, 8, 0);
	cb.key = KEY_MARK;
	copy = cb;
	s0 = stats_now();
	ck_assert_int_eq(io_submit(ctx2, 1, &p), 1);
	reap_n(ctx2, &ev, 1);
	s1 = stats_now();
	ck_assert_int_eq((long)ev.res, 8);
	ck_assert(memcmp(&copy, &cb, sizeof(cb)) == 0);
	ck_assert_uint_eq(s1.to_workers - s0.to_workers, 1);

	/* ctx: off; the kernel gets the program's own iocb and writes its
	 * key, and no counter moves. */
	io_prep_pread(&cb, rd, buf, 8, 0);
	cb.key = KEY_MARK;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	reap_n(ctx, &ev, 1);
	ck_assert_int_eq((long)ev.res, 8);
	ck_assert_uint_eq(cb.key, 0);
	s0 = stats_now();
	ck_assert(memcmp(&s0, &s1, sizeof(s0)) == 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	ck_assert_int_eq(io_queue_release(ctx2), 0);
	close(rd);
	close(wr);
}
END_TEST

/* Without LIBAIO_ASYNC nothing changes: the kernel gets the program's
 * iocbs (it writes their key), no worker ever runs, the counters stay
 * 0, and io_features has no IO_FEATURE_ASYNC. */
START_TEST(with_async_off_nothing_changes)
{
	static unsigned char buf[QD * BS], t[8];
	struct iocb cb[QD], *p[QD];
	struct io_event ev[QD];
	unsigned char seen[QD] = { 0 };
	struct io_async_stats st, zero;
	io_context_t ctx = NULL;
	int i, fd, rd, wr, base;

	if (!getenv(FRESH_ENV)) {
		fresh_process("env_off", NULL);
		return;
	}
	base = base_threads();
	memset(&zero, 0, sizeof(zero));
	ck_assert_int_eq(io_setup(QD, &ctx), 0);
	ck_assert_uint_eq(io_features() & IO_FEATURE_ASYNC, 0);
	if ((fd = cold_file(QD)) < 0)
		return;
	prep_reads(cb, p, QD, fd, buf, 0x0ff0000u);
	ck_assert_int_eq(io_submit(ctx, QD, p), QD);
	ck_assert_int_eq(test_threads_now(), base);
	reap_n(ctx, ev, QD);
	for (i = 0; i < QD; i++) {
		int j = event_index(&ev[i], cb, QD, seen);

		ck_assert_int_eq((long)ev[i].res, BS);
		ck_assert_uint_eq(cb[j].key, 0);
	}
	/* A FIFO with data: read in io_submit itself, as stock. */
	if (worker_fifo(&rd, &wr) == 0) {
		ck_assert_int_eq(write(wr, "12345678", 8), 8);
		io_prep_pread(&cb[0], rd, t, sizeof(t), 0);
		ck_assert_int_eq(io_submit(ctx, 1, p), 1);
		reap_n(ctx, ev, 1);
		ck_assert_int_eq((long)ev[0].res, 8);
		close(rd);
		close(wr);
	}
	ck_assert_int_eq(test_threads_now(), base);
	ck_assert_int_eq(io_async_stats(&st, sizeof(st)), 0);
	ck_assert(memcmp(&st, &zero, sizeof(st)) == 0);
	ck_assert_int_eq(io_set_async(ctx, 0), 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/* io_set_async on a context that is not one of this process's live ones,
 * io_async_stats with no room or an unwritable one, a short size. */
START_TEST(set_async_and_stats_reject_bad_arguments)
{
	unsigned char raw[64], want[64];
	io_context_t ctx = NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *two;
	unsigned k;

	ck_assert_int_eq(io_setup(1, &ctx), 0);
	ck_assert_int_eq(io_destroy(ctx), 0);
	ck_assert_int_eq(io_set_async(ctx, 1), -EINVAL);
	ck_assert_int_eq(io_set_async(NULL, 1), -EINVAL);
	ck_assert_int_eq(io_set_async((io_context_t)1, 0), -EINVAL);
	ck_assert_int_eq(io_set_async((io_context_t)test_bad_pointer(), 1), -EINVAL);
	ck_assert_errno_kept(io_set_async(NULL, 1));

	ck_assert_int_eq(io_async_stats(NULL, sizeof(struct io_async_stats)),
			 -EINVAL);
	ck_assert_int_eq(io_async_stats((struct io_async_stats *)raw, 0), -EINVAL);
	ck_assert_errno_kept(io_async_stats(NULL, 8));

	/* A short size copies that many bytes; a long one, the struct. */
	ck_assert_int_eq(io_async_stats((struct io_async_stats *)want, sizeof(want)), 0);
	memset(raw, 0xa5, sizeof(raw));
	ck_assert_int_eq(io_async_stats((struct io_async_stats *)raw, 12), 0);
	ck_assert(memcmp(raw, want, 12) == 0);
	for (k = 12; k < sizeof(raw); k++)
		ck_assert_msg(raw[k] == 0xa5, "byte %u written by a 12-byte call", k);
	memset(raw, 0xa5, sizeof(raw));
	ck_assert_int_eq(io_async_stats((struct io_async_stats *)raw, sizeof(raw)), 0);
	for (k = sizeof(struct io_async_stats); k < sizeof(raw); k++)
		ck_assert_msg(raw[k] == 0xa5, "byte %u past the struct written", k);

	if (test_under_valgrind())
		return;		/* it reports the bad pointers themselves */
	ck_assert_int_eq(io_async_stats(test_bad_pointer(),
					sizeof(struct io_async_stats)), -EFAULT);
	/* Writable for 8 bytes, then a page it cannot write. */
	two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(two, MAP_FAILED);
	ck_assert_int_eq(mprotect(two + page, page, PROT_READ), 0);
	ck_assert_int_eq(io_async_stats((struct io_async_stats *)(two + page - 8),
					sizeof(struct io_async_stats)), -EFAULT);
	ck_assert_int_eq(io_async_stats((struct io_async_stats *)(two + page - 8), 8), 0);
	ck_assert_int_eq(io_async_stats((struct io_async_stats *)(two + page), 8),
			 -EFAULT);
	munmap(two, 2 * page);
}
END_TEST

/* The 257th context set through io_set_async gets ENOSPC; a destroyed
 * context's setting makes room again. */
START_TEST(set_async_on_a_257th_context_answers_enospc)
{
	enum { N = 257 };
	io_context_t *ctx = calloc(N, sizeof(*ctx)), extra = NULL;
	int i, r;

	ck_assert_ptr_nonnull(ctx);
	for (i = 0; i < N; i++) {
		r = io_setup(1, &ctx[i]);
		if (r == -EAGAIN) {
			test_skip("fs.aio-max-nr leaves room for "
				"only %d contexts", i);
			goto out;
		}
		ck_assert_int_eq(r, 0);
	}
	for (i = 0; i < N - 1; i++)
		ck_assert_int_ge(io_set_async(ctx[i], i & 1), 0);
	ck_assert_int_eq(io_set_async(ctx[N - 1], 1), -ENOSPC);
	ck_assert_int_eq(io_destroy(ctx[0]), 0);
	ctx[0] = NULL;
	ck_assert_int_ge(io_set_async(ctx[N - 1], 1), 0);
	ck_assert_int_eq(io_setup(1, &extra), 0);
	ck_assert_int_eq(io_set_async(extra, 1), -ENOSPC);
	ck_assert_int_eq(io_destroy(extra), 0);
out:
	for (i = 0; i < N; i++)
		if (ctx[i])
			ck_assert_int_eq(io_destroy(ctx[i]), 0);
	free(ctx);
}
END_TEST

/* Workers leave once nothing is queued: after the last completion is
 * reaped the process is back to its own threads. */
START_TEST(workers_leave_after_the_last_completion)
{
	enum { N = 64 };
	static unsigned char buf[N * BS];
	struct iocb cb[N], *p[N];
	struct io_event ev[N];
	struct io_async_stats s0, s1;
	io_context_t ctx;
	int fd, base = base_threads();

	test_hang_guard("workers_leave_after_the_last_completion", GUARD_S);
	if ((fd = cold_file(N)) < 0)
		return;
	ctx = async_ctx(N);
	prep_reads(cb, p, N, fd, buf, 0x1ea0000u);
	s0 = stats_now();
	ck_assert_int_eq(io_submit(ctx, N, p), N);
	reap_n(ctx, ev, N);
	s1 = stats_now();
	ck_assert_msg(worker_path(&s0, &s1) > 0,
		      "no read of a cold file took the worker path");
	ck_assert_int_eq(test_threads_settle_to(base, SETTLE_S), base);
	/* The context stays usable, and the workers come back for it. */
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	ck_assert_int_eq(io_submit(ctx, N, p), N);
	reap_n(ctx, ev, N);
	ck_assert_int_eq(test_threads_settle_to(base, SETTLE_S), base);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
}
END_TEST

/* One bad iocb of bad_iocbs_for_a_worker_are_refused_by_io_submit into
 * *cb, by row number; 0 past the last row. */
static int bad_row(struct iocb *cb, int row, int rd, int wr)
{
	static unsigned char b[64];
	static struct iovec many[1025], bad[2];
	static void *none;
	int i;

	if (!none) {
		none = mmap(NULL, 4096, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ck_assert_ptr_ne(none, MAP_FAILED);
		for (i = 0; i < 1025; i++)
			many[i] = (struct iovec){ b, 1 };
		bad[0] = (struct iovec){ b, 1 };
		bad[1] = (struct iovec){ b, (size_t)-8 };
	}
	switch (row) {
	case 0: io_prep_pread(cb, wr, b, 8, 0); break;
	case 1: io_prep_pwrite(cb, rd, b, 8, 0); break;
	case 2: io_prep_pread(cb, rd, b, 8, -1); break;
	case 3: io_prep_preadv(cb, rd, many, 1025, 0); break;
	case 4: io_prep_preadv(cb, rd, bad, 2, 0); break;
	case 5: io_prep_preadv(cb, rd, none, 2, 0); break;
	case 6:		/* RWF_ATOMIC: refused by the file, not a worker's */
		io_prep_pread(cb, rd, b, 8, 0);
		cb->aio_rw_flags = 0x40;
		break;
	case 7:		/* RWF_APPEND with RWF_NOAPPEND */
		io_prep_pread(cb, rd, b, 8, 0);
		cb->aio_rw_flags = 0x30;
		break;
	case 8:		/* the reserved field */
		io_prep_pread(cb, rd, b, 8, 0);
		cb->u.c.__pad3 = 1;
		break;
	case 9:		/* IOCB_FLAG_IOPRIO with no such class */
		io_prep_pread(cb, rd, b, 8, 0);
		cb->u.c.flags = 1u << 1;
		cb->aio_reqprio = (short)(7 << 13);
		break;
	default:
		return 0;
	}
	return 1;
}

/*
 * A read or write that goes to a worker without a try in the kernel (a
 * FIFO has no non-blocking mode here, and after 16 refused reads its
 * reads are not even tried) is still refused by io_submit where the
 * kernel would refuse it: the wrong direction for the descriptor, a
 * negative offset, too many or bad vectored segments, an unreadable
 * array, flags or fields the kernel refuses.  In a batch, io_submit
 * counts the iocbs before the bad one, and those complete.
 */
START_TEST(bad_iocbs_for_a_worker_are_refused_by_io_submit)
{
	static unsigned char b[16 * 8];
	struct iocb cb[16], *p[16];
	struct io_event ev[16];
	io_context_t ctx, raw = NULL;
	int rd, wr, i, pass;

	test_hang_guard("bad_iocbs_for_a_worker_are_refused_by_io_submit",
			GUARD_S);
	if (worker_fifo(&rd, &wr) < 0)
		return;
	for (i = 0; i < 16; i++)
		p[i] = &cb[i];
	ctx = async_ctx(16);
	ck_assert_int_eq(test_sys_io_setup(8, &raw), 0);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; bad_row(&cb[0], i, rd, wr); i++) {
			long kernel = test_sys_io_submit(raw, 1, p), ours;

			ck_assert_int_eq(bad_row(&cb[0], i, rd, wr), 1);
			ours = io_submit(ctx, 1, p);
			ck_assert_msg(kernel < 0, "pass %d row %d: the kernel "
				      "took it", pass, i);
			ck_assert_msg(ours == kernel, "pass %d row %d: io_submit "
				      "%ld, the kernel %ld", pass, i, ours,
				      kernel);
		}
		/* 16 reads the FIFO refuses a try for: from then on its
		 * reads go to a worker untried (the second pass). */
		for (i = 0; i < 16; i++)
			io_prep_pread(&cb[i], rd, b + i * 8, 8, 0);
		ck_assert_int_eq(io_submit(ctx, 16, p), 16);
		for (i = 0; i < 16; i++)
			ck_assert_int_eq(write(wr, "12345678", 8), 8);
		reap_n(ctx, ev, 16);
	}
	io_prep_pread(&cb[0], rd, b, 8, 0);
	cb[0].data = (void *)0x600d;
	io_prep_pread(&cb[1], rd, b, 8, -1);
	ck_assert_int_eq(io_submit(ctx, 2, p), 1);
	ck_assert_int_eq(write(wr, "12345678", 8), 8);
	reap_n(ctx, ev, 1);
	ck_assert_ptr_eq(ev[0].obj, &cb[0]);
	ck_assert_ptr_eq(ev[0].data, (void *)0x600d);
	ck_assert_int_eq((long)ev[0].res, 8);
	expect_no_event(ctx);
	ck_assert_int_eq(io_destroy(ctx), 0);
	ck_assert_int_eq(test_sys_io_destroy(raw), 0);
	close(rd);
	close(wr);
}
END_TEST

/*
 * A request queued while every worker is inside a submission that may
 * never end (a read of a FIFO nobody writes) still gets a worker: the
 * second FIFO's read, whose data is there, completes while the first
 * still waits.
 */
START_TEST(a_request_queued_behind_a_worker_blocked_for_ever_completes)
{
	unsigned char b1[8], b2[8];
	struct iocb cb1, cb2, *p1 = &cb1, *p2 = &cb2;
	struct io_event ev;
	io_context_t ctx;
	int rd1, wr1, rd2, wr2, base = base_threads(), i;

	test_hang_guard("a_request_queued_behind_a_worker_blocked_for_ever_completes",
			GUARD_S);
	if (worker_fifo(&rd1, &wr1) < 0)
		return;
	ck_assert_int_eq(worker_fifo(&rd2, &wr2), 0);
	ctx = async_ctx(4);
	io_prep_pread(&cb1, rd1, b1, sizeof(b1), 0);
	ck_assert_int_eq(io_submit(ctx, 1, &p1), 1);
	/* Until its worker waits in the kernel, and is the only one. */
	for (i = 0; tasks_in_submit() != 1; i++) {
		ck_assert_int_lt(i, SETTLE_S * 100);
		usleep(10000);
	}
	ck_assert_int_eq(test_threads_settle_to(base + 1, SETTLE_S), base + 1);
	ck_assert_int_eq(write(wr2, "12345678", 8), 8);
	io_prep_pread(&cb2, rd2, b2, sizeof(b2), 0);
	cb2.data = (void *)0xf1f0;
	ck_assert_int_eq(io_submit(ctx, 1, &p2), 1);
	reap_n(ctx, &ev, 1);
	ck_assert_ptr_eq(ev.obj, &cb2);
	ck_assert_ptr_eq(ev.data, (void *)0xf1f0);
	ck_assert_int_eq((long)ev.res, 8);
	ck_assert_int_eq(write(wr1, "abcdefgh", 8), 8);
	reap_n(ctx, &ev, 1);
	ck_assert_ptr_eq(ev.obj, &cb1);
	ck_assert_int_eq((long)ev.res, 8);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(rd1);
	close(wr1);
	close(rd2);
	close(wr2);
}
END_TEST

/* How many events wait in ctx's ring: its header, as the kernel lays it
 * out, has nr, head and tail in its second to fourth 32-bit words. */
static unsigned ring_count(io_context_t ctx)
{
	const volatile unsigned *h = (const volatile unsigned *)ctx;
	unsigned nr = h[1], head = h[2], tail = h[3];

	return nr ? (tail + nr - head) % nr : 0;
}

/* Until ctx's ring has stopped filling: the kernel takes no more
 * requests than it has room for (a little less than the ring's size,
 * as it keeps some of the count per CPU).  Only to reach that state
 * before the check that follows, which holds either way. */
static void wait_ring_settled(io_context_t ctx)
{
	unsigned last = ring_count(ctx), same = 0;
	int i;

	for (i = 0; same < 20 || last == 0; i++) {
		unsigned now;

		ck_assert_int_lt(i, SETTLE_S * 100);
		usleep(10000);
		now = ring_count(ctx);
		same = now == last ? same + 1 : 0;
		last = now;
	}
}

/* Writes to one file go to the workers one at a time on a context, and a
 * worker that finds its ring full waits for room with the write in hand:
 * a write to the same file on another context still completes. */
START_TEST(a_write_waiting_for_room_holds_back_no_other_context)
{
	enum { MANY = 1024, LEN = 512 };
	static unsigned char buf[LEN];
	static struct iocb cb[MANY];
	static struct io_event ev[MANY];
	struct iocb *p[MANY], other, *po = &other;
	unsigned char seen[MANY] = { 0 };
	io_context_t c1, c2;
	int fd, i, taken = 0;

	test_hang_guard("a_write_waiting_for_room_holds_back_no_other_context",
			GUARD_S);
	fd = test_tmpfile(0);
	c1 = async_ctx(1);
	c2 = async_ctx(1);
	for (i = 0; i < MANY; i++) {
		io_prep_pwrite(&cb[i], fd, buf, LEN, (long long)i * LEN);
		p[i] = &cb[i];
	}
	/* A few writes, reaped: where the file system refuses a write
	 * without blocking only in its completion (ext4), the library
	 * learns it here, and sends the next writes straight to a worker
	 * (tmpfs refuses at submission). */
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(io_submit(c1, 1, &p[i]), 1);
	reap_n(c1, ev, 8);
	for (i = 0; i < 8; i++)
		event_index(&ev[i], cb, MANY, seen);
	/* More than the ring holds, and nothing reaped: the rest wait.  A
	 * write tried in the kernel once the ring is full is refused
	 * (-EAGAIN), as without async submission; the others are taken. */
	for (i = 8; i < MANY; i++) {
		int r = io_submit(c1, 1, &p[i]);

		ck_assert_msg(r == 1 || r == -EAGAIN, "io_submit: %d", r);
		taken += r == 1;
	}
	ck_assert_int_gt(taken, MANY / 2);
	wait_ring_settled(c1);
	io_prep_pwrite(&other, fd, buf, LEN, (long long)MANY * LEN);
	other.data = (void *)0xc2;
	ck_assert_int_eq(io_submit(c2, 1, &po), 1);
	reap_n(c2, ev, 1);
	ck_assert_ptr_eq(ev[0].obj, &other);
	ck_assert_ptr_eq(ev[0].data, (void *)0xc2);
	ck_assert_int_eq((long)ev[0].res, LEN);
	/* Room again: every write c1 took completes, once. */
	reap_n(c1, ev, taken);
	for (i = 0; i < taken; i++) {
		event_index(&ev[i], cb, MANY, seen);
		ck_assert_int_eq((long)ev[i].res, LEN);
	}
	expect_no_event(c1);
	ck_assert_int_eq(io_destroy(c1), 0);
	ck_assert_int_eq(io_destroy(c2), 0);
	close(fd);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("async");
	TCase *t = tcase_create("async");
	TCase *once = tcase_create("exactly_once");
	TCase *forked = tcase_create("fork");
	TCase *on = tcase_create("env_on");
	TCase *off = tcase_create("env_off");

	tcase_set_timeout(t, 240);
	tcase_add_test(t, cold_reads_complete_through_workers_with_the_programs_iocbs);
	tcase_add_test(t, cached_reads_complete_inline_without_a_worker);
	tcase_add_test(t, buffered_writes_then_fsync_reach_the_disk);
	tcase_add_test(t, vectored_reads_survive_an_iovec_array_freed_after_submit);
	tcase_add_test(t, a_descriptor_number_reused_after_io_submit_keeps_its_file);
	tcase_add_test(t, bad_iocbs_for_a_worker_are_refused_by_io_submit);
	tcase_add_test(t, a_request_queued_behind_a_worker_blocked_for_ever_completes);
	tcase_add_test(t, a_write_waiting_for_room_holds_back_no_other_context);
	tcase_add_test(t, cancel_of_queued_reads_gives_ecanceled_and_no_event);
	tcase_add_test(t, cancel_of_reads_the_kernel_holds_answers_as_the_kernel);
	tcase_add_test(t, destroy_with_queued_reads_and_busy_workers_leaves_no_thread);
	tcase_add_test(t, set_async_and_stats_reject_bad_arguments);
	tcase_add_test(t, set_async_on_a_257th_context_answers_enospc);
	tcase_add_test(t, workers_leave_after_the_last_completion);
	suite_add_tcase(s, t);
	tcase_set_timeout(forked, 240);
	tcase_add_test(forked, a_fork_child_has_no_queue_and_no_worker);
	suite_add_tcase(s, forked);
	tcase_set_timeout(once, 400);
	tcase_add_test(once, every_reaping_path_returns_each_completion_once);
	suite_add_tcase(s, once);
	/* Each in a process of its own, started afresh: see fresh_process. */
	tcase_set_timeout(on, 60);
	tcase_add_test(on, libaio_async_in_the_environment_turns_it_on);
	suite_add_tcase(s, on);
	tcase_set_timeout(off, 60);
	tcase_add_test(off, with_async_off_nothing_changes);
	suite_add_tcase(s, off);
	return s;
}
