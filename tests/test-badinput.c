/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad input, one table: for every public call, every bad argument the
 * kernel tells apart gets the kernel's negative errno from the library,
 * and never a crash.  Where a row can be replayed with the raw system call
 * (flag RAW), the kernel's own answer is checked as well, so the table
 * cannot drift from what the running kernel says.
 *
 * Pointer kinds: NUL (NULL), LOW (first page), KRN (kernel half), NOA (a
 * PROT_NONE page), RDO (a read-only page holding the row's iocb).  A
 * timeout is never read by the library (whenever the ring cannot answer
 * alone, the kernel does the whole call), so NOA timeouts get the
 * kernel's EFAULT on live contexts too.  An events array is written by
 * the reaper itself on a live context with completions waiting: a bad one
 * there raises SIGSEGV instead of EFAULT, with nothing taken from the
 * ring and the context usable after it (unwritable_events_array_*, below).
 *
 * Contexts: LIVE (io_setup, ring empty), LIVE1 (one completion waiting in
 * the ring), FRGN/FRGN1 (made with the raw system call: the library must
 * leave them to the kernel), DEAD (destroyed), and values that are no
 * context at all: NULL, -1, 0x1000, an unmapped page, a kernel address,
 * and a heap buffer.  Not here: the old address of a ring the program
 * moved with mremap.  The library still has it registered and its reaper
 * faults on the unmapped page (the kernel says EINVAL): a documented
 * limitation, as for rings the program unmaps itself.
 *
 * With the poll emulation forced (LIBAIO_DISABLE=poll), the library reads
 * the iocb array and the iocbs itself, with plain loads, to find the
 * polls, so rows with a PROT_NONE array or iocb (NOEMUL) are skipped in
 * that mode.  It stores the key of each poll it serves through a checked
 * copy: a poll iocb in read-only memory (RDO) gets EFAULT in every mode.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef HAVE_VALGRIND_MEMCHECK_H
# include <valgrind/memcheck.h>
#endif

#include "test-common.h"

/* Valgrind 3.19's own io_submit wrapper reads the iocb array and the
 * iocbs before the kernel does, and dies on a bad one ("the 'impossible'
 * happened: Killed by fatal signal"), and takes a negative nr as a huge
 * count: io_submit rows with a bad array or iocb pointer, or nr < 0, are
 * skipped under valgrind (the other jobs run them). */
static int under_valgrind(void)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	return RUNNING_ON_VALGRIND;
#else
	return 0;
#endif
}

enum call { GETEV, PGETEV, PMASK, REAP, SUBMIT, CANCEL, DESTROY, SETUP, QINIT,
	    QRUN, QWAIT, QRELEASE };
enum ctxk { LIVE, LIVE1, FRGN, FRGN1, DEAD, CNULL, CM1, C1000, CUNMAP,
	    CKRN, CHEAP, NCTX };
enum ptrk { OK, NUL, LOW, KRN, NOA, RDO };
/* Timeouts: a pointer kind, or one of these values. */
enum tsk { T_NULL = 16, T_ZERO, T_NEG, T_BIGNS };
/* What the iocb (SUBMIT) or the cancelled iocb (CANCEL) is. */
enum iocbk { I_READ, I_OP99, I_OP4, I_OP6, I_FDM1, I_FDCLOSED, I_WRONLY,
	     I_RSV2, I_RWFLAGS, I_RESFD, I_NEGOFF, I_FSYNCBUF, I_PBIGMASK,
	     I_PNBYTES, I_PFDM1, I_PPRIFILE, I_PENDING, I_UNSUBMITTED,
	     I_KEY1, I_POLL };

#define RAW	0x1	/* replay with the raw system call, expect the same */
#define SIG	0x2	/* waits forever: interrupt with a signal */
#define OR0	0x4	/* 0 is also the kernel's answer on some versions */
/* An address no user mapping can have: kernel space on 64-bit ABIs; on
 * 32-bit ones the top page, above the compat limit 0xffffe000 (a 64-bit
 * constant would truncate to an ordinary user address there). */
#if UINTPTR_MAX > 0xffffffffu
# define KERNEL_ADDR ((void *)(uintptr_t)0xffff888000000000ull)
#else
# define KERNEL_ADDR ((void *)(uintptr_t)0xfffff000u)
#endif

#define NOEMUL	0x10	/* PROT_NONE that the poll emulation reads itself */
/* The kernel's answer comes from writing the key into the program's iocb,
 * which async submission never does (it submits a copy of a read). */
#define KEYWRITE 0x20

struct row {
	const char *what;
	enum call call;
	enum ctxk ctx;
	long a, b;		/* counts: min_nr/nr, nr, maxevents */
	int p1;			/* events / ios / ctxp / iocb pointer */
	int p2;			/* timeout / sigmask / ios[0] / result */
	enum iocbk io;
	int expect;		/* 0 or more: a count; else -errno */
	unsigned flags;
};

#define GETEVENTS(w, c, mn, n, ev, ts, e, f)	{ w, GETEV, c, mn, n, ev, ts, 0, e, f }
#define PGETEVENTS(w, c, mn, n, ev, ts, e, f)	{ w, PGETEV, c, mn, n, ev, ts, 0, e, f }
#define PGETMASK(w, c, mask, e, f)		{ w, PMASK, c, 0, 1, OK, mask, 0, e, f }
#define IOREAP(w, c, n, ev, e)			{ w, REAP, c, 0, n, ev, 0, 0, e, 0 }
#define IOSUBMIT(w, c, n, ios, io, e, f)	{ w, SUBMIT, c, 0, n, ios, OK, io, e, f }
#define SUBMITSLOT(w, c, slot, e, f)		{ w, SUBMIT, c, 0, 1, OK, slot, I_READ, e, f }
#define POLLSLOT(w, c, slot, e, f)		{ w, SUBMIT, c, 0, 1, OK, slot, I_POLL, e, f }
#define IOCANCEL(w, c, cb, io, res, e, f)	{ w, CANCEL, c, 0, 0, cb, res, io, e, f }
#define IODESTROY(w, c, e, f)			{ w, DESTROY, c, 0, 0, 0, 0, 0, e, f }
#define IOSETUP(w, n, ctxp, e, f)		{ w, SETUP, LIVE, n, 0, ctxp, 0, 0, e, f }
#define QUEUEINIT(w, n, ctxp, e)		{ w, QINIT, LIVE, n, 0, ctxp, 0, 0, e, 0 }
#define QUEUERUN(w, c, e)			{ w, QRUN, c, 0, 0, 0, 0, 0, e, 0 }
#define QUEUEWAIT(w, c, ts, e)			{ w, QWAIT, c, 0, 0, 0, ts, 0, e, 0 }
#define QUEUERELEASE(w, c, e)			{ w, QRELEASE, c, 0, 0, 0, 0, 0, e, 0 }

static const struct row rows[] = {
	/* io_getevents(ctx, min_nr, nr, events, timeout) */
	GETEVENTS("min_nr < 0",             LIVE,  -1, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("min_nr > nr",            LIVE,   2, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("nr < 0",                 LIVE,   0, -1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("min_nr LONG_MIN",        LIVE,  LONG_MIN, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("min_nr > nr, ready",     LIVE1,  2, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("nr 0, events NULL",      LIVE,   0, 0, NUL, T_ZERO, 0, RAW),
	GETEVENTS("events NULL, ready",     LIVE1,  1, 1, NUL, T_ZERO, -EFAULT, RAW),
	GETEVENTS("events first page",      LIVE1,  1, 1, LOW, T_ZERO, -EFAULT, RAW),
	GETEVENTS("events kernel address",  LIVE1,  0, 4, KRN, T_ZERO, -EFAULT, RAW),
	GETEVENTS("events PROT_NONE, frgn", FRGN1,  1, 1, NOA, T_ZERO, -EFAULT, RAW),
	GETEVENTS("timeout first page",     LIVE,   1, 1, OK, LOW, -EFAULT, RAW),
	GETEVENTS("timeout kernel address", LIVE1,  1, 1, OK, KRN, -EFAULT, RAW),
	GETEVENTS("timeout PROT_NONE, frgn", FRGN,  1, 1, OK, NOA, -EFAULT, RAW),
	GETEVENTS("timeout PROT_NONE, empty", LIVE, 1, 1, OK, NOA, -EFAULT, RAW),
	GETEVENTS("timeout PROT_NONE, 1 of 2", LIVE1, 2, 2, OK, NOA, -EFAULT, RAW),
	GETEVENTS("timeout negative: waits", LIVE,  1, 1, OK, T_NEG, -EINTR, RAW | SIG),
	GETEVENTS("tv_nsec 2e9: no EINVAL", LIVE,   1, 1, OK, T_BIGNS, -EINTR, RAW | SIG),
	GETEVENTS("destroyed context",      DEAD,   0, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("destroyed, NULL timeout", DEAD,  1, 1, OK, T_NULL, -EINVAL, RAW),
	GETEVENTS("foreign context works",  FRGN1,  1, 1, OK, T_ZERO, 1, RAW),
	GETEVENTS("ctx NULL",               CNULL,  0, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("ctx -1",                 CM1,    0, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("ctx 0x1000",             C1000,  1, 1, OK, T_NULL, -EINVAL, RAW),
	GETEVENTS("ctx unmapped page",      CUNMAP, 0, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("ctx kernel address",     CKRN,   0, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("ctx heap buffer",        CHEAP,  0, 1, OK, T_ZERO, -EINVAL, RAW),
	GETEVENTS("bad ctx, bad timeout",   CM1,    0, 1, OK, KRN, -EFAULT, RAW),

	/* io_pgetevents(..., sigmask): the same, plus the mask */
	PGETEVENTS("min_nr > nr",           LIVE,   2, 1, OK, T_ZERO, -EINVAL, RAW),
	PGETEVENTS("nr < 0",                LIVE,   0, -1, OK, T_ZERO, -EINVAL, RAW),
	PGETEVENTS("events NULL, ready",    LIVE1,  1, 1, NUL, T_ZERO, -EFAULT, RAW),
	PGETEVENTS("timeout first page",    LIVE,   1, 1, OK, LOW, -EFAULT, RAW),
	PGETEVENTS("timeout PROT_NONE, empty", LIVE, 1, 1, OK, NOA, -EFAULT, RAW),
	PGETEVENTS("timeout negative: waits", LIVE, 1, 1, OK, T_NEG, -EINTR, RAW | SIG),
	PGETEVENTS("destroyed context",     DEAD,   0, 1, OK, T_ZERO, -EINVAL, RAW),
	PGETEVENTS("ctx -1",                CM1,    0, 1, OK, T_ZERO, -EINVAL, RAW),
	PGETEVENTS("ctx unmapped page",     CUNMAP, 0, 1, OK, T_ZERO, -EINVAL, RAW),
	PGETMASK("sigmask first page",      LIVE,   LOW, -EFAULT, RAW),
	PGETMASK("sigmask kernel address",  LIVE1,  KRN, -EFAULT, RAW),
	PGETMASK("sigmask PROT_NONE",       LIVE,   NOA, -EFAULT, RAW),
	PGETMASK("sigmask bad, ctx bad",    CM1,    LOW, -EFAULT, RAW),

	/* io_reap(ctx, nr, events): the library's own call */
	IOREAP("nr < 0",                    LIVE,  -1, OK, -EINVAL),
	IOREAP("nr 0, events NULL",         LIVE1,  0, NUL, 0),
	IOREAP("events NULL",               LIVE1,  1, NUL, -EFAULT),
	IOREAP("events kernel address",     LIVE1,  1, KRN, -EFAULT),
	IOREAP("destroyed context",         DEAD,   1, OK, -EINVAL),
	IOREAP("ctx NULL",                  CNULL,  1, OK, -EINVAL),
	IOREAP("ctx unmapped page",         CUNMAP, 1, OK, -EINVAL),
	IOREAP("foreign context works",     FRGN1,  4, OK, 1),

	/* io_submit(ctx, nr, ios) */
	IOSUBMIT("nr < 0",                  LIVE,  -1, OK, I_READ, -EINVAL, RAW),
	IOSUBMIT("nr 0, ios NULL",          LIVE,   0, NUL, I_READ, 0, RAW),
	IOSUBMIT("ios NULL",                LIVE,   1, NUL, I_READ, -EFAULT, RAW),
	IOSUBMIT("ios first page",          LIVE,   1, LOW, I_READ, -EFAULT, RAW),
	IOSUBMIT("ios kernel address",      LIVE,   1, KRN, I_READ, -EFAULT, RAW),
	IOSUBMIT("ios PROT_NONE",           LIVE,   1, NOA, I_READ, -EFAULT, RAW | NOEMUL),
	SUBMITSLOT("ios[0] NULL",           LIVE,   NUL, -EFAULT, RAW),
	SUBMITSLOT("ios[0] kernel address", LIVE,   KRN, -EFAULT, RAW),
	SUBMITSLOT("ios[0] PROT_NONE",      LIVE,   NOA, -EFAULT, RAW | NOEMUL),
	POLLSLOT("poll iocb read-only",     LIVE,   RDO, -EFAULT, RAW),
	SUBMITSLOT("read iocb read-only",   LIVE,   RDO, -EFAULT, RAW | KEYWRITE),
	IOSUBMIT("opcode 99",               LIVE,   1, OK, I_OP99, -EINVAL, RAW),
	IOSUBMIT("opcode 4 (old PREADX)",   LIVE,   1, OK, I_OP4, -EINVAL, RAW),
	IOSUBMIT("opcode 6 (NOOP)",         LIVE,   1, OK, I_OP6, -EINVAL, RAW),
	IOSUBMIT("fd -1",                   LIVE,   1, OK, I_FDM1, -EBADF, RAW),
	IOSUBMIT("fd not open",             LIVE,   1, OK, I_FDCLOSED, -EBADF, RAW),
	IOSUBMIT("read on O_WRONLY fd",     LIVE,   1, OK, I_WRONLY, -EBADF, RAW),
	IOSUBMIT("aio_reserved2 set",       LIVE,   1, OK, I_RSV2, -EINVAL, RAW),
	IOSUBMIT("unknown aio_rw_flags",    LIVE,   1, OK, I_RWFLAGS, -EOPNOTSUPP, RAW),
	IOSUBMIT("RESFD not an eventfd",    LIVE,   1, OK, I_RESFD, -EINVAL, RAW),
	IOSUBMIT("offset -1",               LIVE,   1, OK, I_NEGOFF, -EINVAL, RAW),
	IOSUBMIT("fsync with a buffer",     LIVE,   1, OK, I_FSYNCBUF, -EINVAL, RAW),
	IOSUBMIT("poll mask > 16 bits",     LIVE,   1, OK, I_PBIGMASK, -EINVAL, RAW),
	IOSUBMIT("poll with nbytes",        LIVE,   1, OK, I_PNBYTES, -EINVAL, RAW),
	IOSUBMIT("poll fd -1",              LIVE,   1, OK, I_PFDM1, -EBADF, RAW),
	IOSUBMIT("poll POLLPRI, reg. file", LIVE,   1, OK, I_PPRIFILE, -EINVAL, RAW),
	IOSUBMIT("destroyed context",       DEAD,   1, OK, I_READ, -EINVAL, RAW),
	IOSUBMIT("foreign context works",   FRGN,   1, OK, I_READ, 1, RAW),
	IOSUBMIT("ctx NULL",                CNULL,  1, OK, I_READ, -EINVAL, RAW),
	IOSUBMIT("ctx -1",                  CM1,    1, OK, I_READ, -EINVAL, RAW),
	IOSUBMIT("ctx unmapped page",       CUNMAP, 1, OK, I_READ, -EINVAL, RAW),
	IOSUBMIT("ctx heap buffer",         CHEAP,  1, OK, I_READ, -EINVAL, RAW),
	IOSUBMIT("ctx -1, ios NULL",        CM1,    1, NUL, I_READ, -EINVAL, RAW),
	IOSUBMIT("ctx -1, ios PROT_NONE",   CM1,    1, NOA, I_READ, -EINVAL, RAW),
	SUBMITSLOT("ctx -1, ios[0] NULL",   CM1,    NUL, -EINVAL, RAW),

	/* io_cancel(ctx, iocb, result) */
	IOCANCEL("iocb never submitted",    LIVE,   OK, I_UNSUBMITTED, OK, -EINVAL, RAW),
	IOCANCEL("iocb key not 0",          LIVE,   OK, I_KEY1, OK, -EINVAL, RAW),
	IOCANCEL("iocb NULL",               LIVE,   NUL, I_UNSUBMITTED, OK, -EFAULT, RAW),
	IOCANCEL("iocb kernel address",     LIVE,   KRN, I_UNSUBMITTED, OK, -EFAULT, RAW),
	IOCANCEL("iocb PROT_NONE",          LIVE,   NOA, I_UNSUBMITTED, OK, -EFAULT, RAW),
	IOCANCEL("pending poll, result NULL", LIVE, OK, I_PENDING, NUL, -EINPROGRESS, OR0),
	IOCANCEL("destroyed context",       DEAD,   OK, I_UNSUBMITTED, OK, -EINVAL, RAW),
	IOCANCEL("ctx -1",                  CM1,    OK, I_UNSUBMITTED, OK, -EINVAL, RAW),
	IOCANCEL("ctx unmapped page",       CUNMAP, OK, I_UNSUBMITTED, OK, -EINVAL, RAW),

	/* io_destroy(ctx) / io_queue_release(ctx) */
	IODESTROY("destroyed context",      DEAD,   -EINVAL, RAW),
	IODESTROY("ctx NULL",               CNULL,  -EINVAL, RAW),
	IODESTROY("ctx -1",                 CM1,    -EINVAL, RAW),
	IODESTROY("ctx 0x1000",             C1000,  -EINVAL, RAW),
	IODESTROY("ctx unmapped page",      CUNMAP, -EINVAL, RAW),
	IODESTROY("ctx kernel address",     CKRN,   -EINVAL, RAW),
	IODESTROY("ctx heap buffer",        CHEAP,  -EINVAL, RAW),
	QUEUERELEASE("destroyed context",   DEAD,   -EINVAL),
	QUEUERELEASE("ctx -1",              CM1,    -EINVAL),

	/* io_setup(maxevents, ctxp) */
	IOSETUP("maxevents 0",              0,        OK, -EINVAL, RAW),
	IOSETUP("maxevents -1",             -1,       OK, -EINVAL, RAW),
	IOSETUP("maxevents INT_MIN",        -0x7fffffffL - 1, OK, -EAGAIN, RAW),
	IOSETUP("maxevents 4194305",        4194305,  OK, -EINVAL, RAW),
	IOSETUP("maxevents > aio-max-nr",   4194304,  OK, -EAGAIN, RAW),
	IOSETUP("*ctxp not 0",              1,        T_NULL, -EINVAL, RAW),
	IOSETUP("ctxp NULL",                1,        NUL, -EFAULT, RAW),
	IOSETUP("ctxp first page",          1,        LOW, -EFAULT, RAW),
	IOSETUP("ctxp kernel address",      1,        KRN, -EFAULT, RAW),
	IOSETUP("ctxp PROT_NONE",           1,        NOA, -EFAULT, RAW),

	/* io_queue_init(maxevents, ctxp): zeroes *ctxp, then io_setup */
	QUEUEINIT("maxevents 0",            0,  OK, -EINVAL),
	QUEUEINIT("maxevents -5",           -5, OK, -EINVAL),
	QUEUEINIT("ctxp NULL",              1,  NUL, -EFAULT),
	QUEUEINIT("ctxp first page",        1,  LOW, -EFAULT),
	QUEUEINIT("ctxp kernel address",    1,  KRN, -EFAULT),

	/* io_queue_run(ctx), io_queue_wait(ctx, timeout) */
	QUEUERUN("destroyed context",       DEAD,   -EINVAL),
	QUEUERUN("ctx NULL",                CNULL,  -EINVAL),
	QUEUERUN("ctx unmapped page",       CUNMAP, -EINVAL),
	QUEUEWAIT("destroyed context",      DEAD,   T_ZERO, -EINVAL),
	QUEUEWAIT("ctx -1",                 CM1,    T_NULL, -EINVAL),
	QUEUEWAIT("timeout kernel address", LIVE,   KRN, -EFAULT),
	QUEUEWAIT("timeout PROT_NONE",      LIVE,   NOA, -EFAULT),
};

/* ---- the world the rows run in ---------------------------------------- */

static io_context_t ctxs[NCTX];
static void *noaccess, *readonly;
static int file_fd, wronly_fd, pipe_fd[2];
static unsigned char rbuf[64];
static struct iocb iocb_a, iocb_pending;
static struct iocb *slots[2];
static int tried, compared;

static void *ptr_of(int kind, void *valid)
{
	switch (kind) {
	case OK: return valid;
	case NUL: return NULL;
	case LOW: return (void *)(uintptr_t)0x10;
	case KRN: return KERNEL_ADDR;
	case NOA: return noaccess;
	case RDO: return readonly;	/* filled by set_readonly_iocb */
	default: return valid;
	}
}

/* The read-only page (RDO) holds a copy of cb. */
static void set_readonly_iocb(const struct iocb *cb)
{
	ck_assert_int_eq(mprotect(readonly, 4096, PROT_READ | PROT_WRITE), 0);
	memcpy(readonly, cb, sizeof(*cb));
	ck_assert_int_eq(mprotect(readonly, 4096, PROT_READ), 0);
}

static void drain(io_context_t ctx)
{
	struct io_event ev[16];
	struct timespec zero = { 0, 0 };

	while (test_sys_io_getevents(ctx, 0, 16, ev, &zero) > 0)
		;
}

/* One read completion waiting in the ring of ctx (and nothing else). */
static void make_ready(io_context_t ctx)
{
	struct iocb cb, *p = &cb;
	volatile unsigned *hdr = (volatile unsigned *)ctx;
	int i;

	drain(ctx);
	io_prep_pread(&cb, file_fd, rbuf, 1, 0);
	ck_assert_int_eq(test_sys_io_submit(ctx, 1, &p), 1);
	for (i = 0; i < 10000 && hdr[2] == hdr[3]; i++)
		usleep(100);
	ck_assert_uint_ne(hdr[2], hdr[3]);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* The timer repeats until the row disarms it: a single shot could fire
 * before the wait reaches the kernel (a loaded machine, or valgrind), and
 * the wait would then block for ever. */
static void arm_signal(void)
{
	struct itimerval it = { { 0, 50000 }, { 0, 50000 } };

	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void prep_iocb(struct iocb *cb, enum iocbk io)
{
	switch (io) {
	case I_OP99: case I_OP4: case I_OP6:
		io_prep_pread(cb, file_fd, rbuf, 1, 0);
		cb->aio_lio_opcode = io == I_OP99 ? 99 : io == I_OP4 ? 4 : 6;
		break;
	case I_FDM1: io_prep_pread(cb, -1, rbuf, 1, 0); break;
	case I_FDCLOSED: io_prep_pread(cb, 1000, rbuf, 1, 0); break;
	case I_WRONLY: io_prep_pread(cb, wronly_fd, rbuf, 1, 0); break;
	case I_RSV2:
		io_prep_pread(cb, file_fd, rbuf, 1, 0);
		cb->u.c.__pad3 = 1;	/* the kernel's aio_reserved2 */
		break;
	case I_RWFLAGS:
		io_prep_pread(cb, file_fd, rbuf, 1, 0);
		cb->aio_rw_flags = (int)0x80000000u;
		break;
	case I_RESFD:
		io_prep_pread(cb, file_fd, rbuf, 1, 0);
		io_set_eventfd(cb, file_fd);
		break;
	case I_NEGOFF: io_prep_pread(cb, file_fd, rbuf, 1, -1); break;
	case I_FSYNCBUF:
		io_prep_fsync(cb, file_fd);
		cb->u.c.buf = rbuf;
		break;
	case I_PBIGMASK: io_prep_poll(cb, pipe_fd[0], 0x10000); break;
	case I_PNBYTES:
		io_prep_poll(cb, pipe_fd[0], POLLIN);
		cb->u.c.nbytes = 1;
		break;
	case I_PFDM1: io_prep_poll(cb, -1, POLLIN); break;
	case I_PPRIFILE: io_prep_poll(cb, file_fd, POLLPRI); break;
	case I_POLL: io_prep_poll(cb, pipe_fd[1], POLLOUT); break;
	case I_KEY1:
		io_prep_pread(cb, file_fd, rbuf, 1, 0);
		cb->key = 1;
		break;
	default: io_prep_pread(cb, file_fd, rbuf, 1, 0); break;
	}
}

/* The row's timeout class, in ts_v or a pointer of its own. */
static struct timespec *row_timeout(const struct row *r, struct timespec *ts_v)
{
	switch (r->p2) {
	case T_NULL: return NULL;
	case T_NEG: ts_v->tv_sec = -1; return ts_v;
	case T_BIGNS: ts_v->tv_nsec = 2000000000L; ts_v->tv_sec = 1000; return ts_v;
	case T_ZERO: return ts_v;
	default: return ptr_of(r->p2, ts_v);
	}
}

static long row_pgetevents(const struct row *r, io_context_t ctx,
			   struct io_event *ev, struct timespec *ts,
			   struct timespec *ts_v, int raw)
{
	sigset_t mask;
	sigset_t *m = &mask;
	long ret;

	sigemptyset(&mask);
	if (r->call == PMASK) {	/* p2 is the mask, no timeout */
		m = ptr_of(r->p2, &mask);
		ts = ts_v;
	}
	ret = raw ? test_sys_io_pgetevents(ctx, r->a, r->b, ptr_of(r->p1, ev), ts, m)
		  : io_pgetevents(ctx, r->a, r->b, ptr_of(r->p1, ev), ts, m);
	if (raw && ret == -ENOSYS)	/* the seccomp mode */
		ret = r->expect;
	return ret;
}

static long row_submit(const struct row *r, io_context_t ctx, int raw)
{
	struct iocb **ios;
	long ret;

	prep_iocb(&iocb_a, r->io);
	if (r->p2 == RDO)
		set_readonly_iocb(&iocb_a);
	slots[0] = ptr_of(r->p2, &iocb_a);
	slots[1] = NULL;
	ios = ptr_of(r->p1, slots);
	ret = raw ? test_sys_io_submit(ctx, r->b, ios)
		  : io_submit(ctx, r->b, ios);
	if (ret > 0)
		drain(ctx);
	return ret;
}

static long row_cancel(const struct row *r, io_context_t ctx,
		       struct io_event *ev, int raw)
{
	struct io_event res;
	struct iocb *cb = &iocb_a;
	long ret;

	if (r->io == I_PENDING) {
		struct iocb *p = &iocb_pending;

		io_prep_poll(&iocb_pending, pipe_fd[0], POLLIN);
		ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
		cb = &iocb_pending;
	} else {
		prep_iocb(&iocb_a, r->io);
	}
	cb = ptr_of(r->p1, cb);
	ret = raw ? test_sys_io_cancel(ctx, cb, ptr_of(r->p2, &res))
		  : io_cancel(ctx, cb, ptr_of(r->p2, &res));
	if (r->io == I_PENDING) {
		struct timespec sec = { 5, 0 };

		/* The cancelled poll completes through the ring. */
		ck_assert_int_eq(io_getevents(ctx, 1, 4, ev, &sec), 1);
		ck_assert_ptr_eq(ev[0].obj, &iocb_pending);
	}
	return ret;
}

static long row_setup(const struct row *r, int raw)
{
	io_context_t out = r->p1 == T_NULL ? ctxs[LIVE] : NULL;
	io_context_t *ctxp = r->p1 == T_NULL ? &out : ptr_of(r->p1, &out);
	long ret;

	if (r->call == QINIT)
		ret = io_queue_init((int)r->a, ctxp);
	else
		ret = raw ? test_sys_io_setup((unsigned)(int)r->a, ctxp)
			  : io_setup((int)r->a, ctxp);
	if (ret == 0)
		test_sys_io_destroy(out);
	return ret;
}

/* The row's call, through the library (raw = 0) or the system call. */
static long row_call(const struct row *r, io_context_t ctx, struct io_event *ev,
		     struct timespec *ts, struct timespec *ts_v, int raw)
{
	switch (r->call) {
	case GETEV:
		return raw ? test_sys_io_getevents(ctx, r->a, r->b, ptr_of(r->p1, ev), ts)
			   : io_getevents(ctx, r->a, r->b, ptr_of(r->p1, ev), ts);
	case PGETEV: case PMASK:
		return row_pgetevents(r, ctx, ev, ts, ts_v, raw);
	case REAP:
		return io_reap(ctx, r->b, ptr_of(r->p1, ev));
	case SUBMIT:
		return row_submit(r, ctx, raw);
	case CANCEL:
		return row_cancel(r, ctx, ev, raw);
	case DESTROY:
		return raw ? test_sys_io_destroy(ctx) : io_destroy(ctx);
	case QRELEASE:
		return io_queue_release(ctx);
	case SETUP: case QINIT:
		return row_setup(r, raw);
	case QRUN:
		return io_queue_run(ctx);
	case QWAIT:
		return io_queue_wait(ctx, ts);
	default:
		return -9999;
	}
}

/* Run the row once, through the library (raw = 0) or the system call. */
static long run_row(const struct row *r, int raw)
{
	io_context_t ctx = ctxs[r->ctx];
	struct io_event ev[4];
	struct timespec ts_v = { 0, 0 };
	struct timespec *ts;
	long ret;

	if (r->ctx == LIVE1 || r->ctx == FRGN1)
		make_ready(ctx);
	if (r->ctx == LIVE || r->ctx == FRGN)
		drain(ctx);
	ts = row_timeout(r, &ts_v);
	if (r->flags & SIG)
		arm_signal();
	ret = row_call(r, ctx, ev, ts, &ts_v, raw);
	if (r->flags & SIG) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_REAL, &off, NULL);
	}
	if (ctx == ctxs[LIVE1] || ctx == ctxs[FRGN1])
		drain(ctx);
	return ret;
}

/* A crash names the row it happened in. */
static const char *volatile current_row;
static char row_name[80];

static void on_crash(int sig)
{
	static const char msg[] = "badinput: crashed in row: ";

	if (write(2, msg, sizeof(msg) - 1) < 0 ||
	    write(2, current_row, strlen(current_row)) < 0 ||
	    write(2, "\n", 1) < 0) {
		/* nothing more to say */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int answer_ok(const struct row *r, long got)
{
	return got == r->expect || ((r->flags & OR0) && got == 0);
}

static void setup_world(void)
{
	struct sigaction sa;
	void *p;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: waits end in EINTR */
	sigaction(SIGALRM, &sa, NULL);
	current_row = "setup";
	signal(SIGSEGV, on_crash);
	signal(SIGBUS, on_crash);

	noaccess = test_bad_pointer();
	readonly = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(readonly, MAP_FAILED);
	file_fd = test_tmpfile(8192);
	wronly_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(wronly_fd, 0);
	ck_assert_int_eq(pipe(pipe_fd), 0);
	if (fcntl(1000, F_GETFD) >= 0)
		close(1000);

	memset(ctxs, 0, sizeof(ctxs));
	ck_assert_int_eq(io_setup(8, &ctxs[LIVE]), 0);
	ck_assert_int_eq(io_setup(8, &ctxs[LIVE1]), 0);
	ck_assert_int_eq(test_sys_io_setup(8, &ctxs[FRGN]), 0);
	ck_assert_int_eq(test_sys_io_setup(8, &ctxs[FRGN1]), 0);
	ck_assert_int_eq(io_setup(8, &ctxs[DEAD]), 0);
	ck_assert_int_eq(io_destroy(ctxs[DEAD]), 0);
	ctxs[CNULL] = NULL;
	ctxs[CM1] = (io_context_t)-1;
	ctxs[C1000] = (io_context_t)0x1000;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	munmap(p, 4096);
	ctxs[CUNMAP] = p;
	ctxs[CKRN] = (io_context_t)KERNEL_ADDR;
	ctxs[CHEAP] = calloc(1, 4096);
}

START_TEST(table)
{
	size_t i;
	int failed = 0, skipped_vg = 0, skipped_async = 0;
	int verbose = getenv("LIBAIO_TEST_VERBOSE") != NULL;

	setup_world();
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		long got, kernel;
		int ok;

		if ((r->flags & NOEMUL) && test_mode_disables("poll"))
			continue;
		if ((r->flags & KEYWRITE) && test_mode_async()) {
			skipped_async++;
			continue;
		}
		if (r->call == SUBMIT && under_valgrind() &&
		    (r->b < 0 || ((r->p1 != OK || r->p2 != OK) && r->b > 0))) {
			skipped_vg++;
			continue;
		}
		tried++;
		snprintf(row_name, sizeof(row_name), "%zu (%s)", i, r->what);
		current_row = row_name;
		if (verbose)
			fprintf(stderr, "row %s\n", row_name);
		got = run_row(r, 0);
		ok = answer_ok(r, got);
		if (!ok) {
			fprintf(stderr, "row %zu '%s': library %ld, table %d\n", i,
				r->what, got, r->expect);
			failed++;
		}
		if (r->flags & RAW) {
			kernel = run_row(r, 1);
			compared++;
			if (!answer_ok(r, kernel)) {
				fprintf(stderr, "row %zu '%s': kernel %ld, table %d\n",
					i, r->what, kernel, r->expect);
				failed++;
			}
		}
	}
	test_sys_io_destroy(ctxs[FRGN]);
	test_sys_io_destroy(ctxs[FRGN1]);
	io_destroy(ctxs[LIVE]);
	io_destroy(ctxs[LIVE1]);
	fprintf(stderr, "badinput: %d bad inputs tried (%d also against the raw "
		"system call), %d failed, %d skipped under valgrind, %d in the "
		"async mode (the kernel's answer is its write of the key)\n",
		tried, compared, failed, skipped_vg, skipped_async);
	ck_assert_int_eq(failed, 0);
}
END_TEST

/*
 * A context used after fork: the child shares the ring pages but not the
 * kernel context.  Every call on it gets -EINVAL in the child, and the
 * child must not move head: the parent still gets its pending event.
 */
START_TEST(context_after_fork)
{
	io_context_t ctx = NULL;
	struct io_event ev[2];
	struct timespec zero = { 0, 0 }, sec = { 5, 0 };
	struct iocb cb, *p = &cb;
	unsigned char b;
	int fd = test_tmpfile(4096), status;
	pid_t pid;

	ck_assert_int_eq(io_setup(4, &ctx), 0);
	io_prep_pread(&cb, fd, &b, 1, 0);
	cb.data = (void *)0x77;
	ck_assert_int_eq(io_submit(ctx, 1, &p), 1);
	while (((volatile unsigned *)ctx)[2] == ((volatile unsigned *)ctx)[3])
		usleep(100);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;
		struct iocb cb2, *p2 = &cb2;

		io_prep_pread(&cb2, fd, &b, 1, 0);
		bad |= io_getevents(ctx, 0, 2, ev, &zero) != -EINVAL;
		bad |= (io_getevents(ctx, 1, 2, ev, NULL) != -EINVAL) << 1;
		bad |= (io_pgetevents(ctx, 0, 2, ev, &zero, NULL) != -EINVAL) << 2;
		bad |= (io_reap(ctx, 2, ev) != -EINVAL) << 3;
		bad |= (io_queue_run(ctx) != -EINVAL) << 4;
		bad |= (io_submit(ctx, 1, &p2) != -EINVAL) << 5;
		bad |= (io_cancel(ctx, &cb, ev) != -EINVAL) << 6;
		bad |= (io_destroy(ctx) != -EINVAL) << 7;
		bad |= (io_reaper_active(ctx) != 0) << 8;
		_exit(bad ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	tried += 9;
	ck_assert_int_eq(io_getevents(ctx, 1, 2, ev, &sec), 1);
	ck_assert_ptr_eq(ev[0].data, (void *)0x77);
	ck_assert_int_eq(io_destroy(ctx), 0);
	close(fd);
	fprintf(stderr, "badinput: 9 calls on a context inherited by fork\n");
}
END_TEST

/*
 * An events array that cannot be written, with completions waiting.  The
 * kernel answers EFAULT and keeps every event in the ring; the ring
 * reaper cannot copy with a fault-safe copy, so it faults (SIGSEGV), but
 * before it has taken anything and with nothing held: the program that
 * survives the signal gets every event afterwards, and io_destroy works.
 * Each kind runs in a child with a handler that leaves by siglongjmp.
 */
enum bad_array { RO_ARRAY, NONE_ARRAY, RUNS_OFF_MAPPING, RO_ARRAY_EMPTY_RING };
static sigjmp_buf fault_exit;

static void leave_fault(int sig)
{
	(void)sig;
	siglongjmp(fault_exit, 1);
}

/* io_getevents into ev, or 1000 if it raised SIGSEGV. */
static long getevents_or_fault(io_context_t ctx, struct io_event *ev)
{
	static const struct timespec zero = { 0, 0 };
	struct sigaction sa;
	long r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = leave_fault;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(fault_exit, 1) == 0)
		r = io_getevents(ctx, 0, 4, ev, (struct timespec *)&zero);
	else
		r = 1000;
	signal(SIGSEGV, SIG_DFL);
	return r;
}

static int bad_memory_fd;

/* Async submission is off for the children's contexts below: their
 * reads must be in the ring when the bad array or ring meets the reap,
 * and a read queued for a worker (a file system without non-blocking
 * reads, in the async mode) arrives later. */
static int unwritable_events_array_child(enum bad_array kind)
{
	static const struct timespec zero = { 0, 0 }, second = { 1, 0 };
	int waiting = kind == RO_ARRAY_EMPTY_RING ? 0 : 4;
	/* Whole pages of this kernel's size (64 KiB on ppc64el), or the
	 * munmap below would fail and leave the array writable. */
	const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *map, b[4];
	struct io_event *bad, good[4];
	struct iocb cbs[4], *p;
	io_context_t ctx = NULL;
	long r;
	int i;

	test_hang_guard("unwritable_events_array_keeps_every_event", 20);
	if (io_setup(8, &ctx) != 0 || io_set_async(ctx, 0) < 0)
		return 10;
	for (i = 0; i < waiting; i++) {
		p = &cbs[i];
		io_prep_pread(p, bad_memory_fd, &b[i], 1, i);
		if (io_submit(ctx, 1, &p) != 1)
			return 11;
	}
	map = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return 12;
	bad = (struct io_event *)map;
	if (kind == RO_ARRAY || kind == RO_ARRAY_EMPTY_RING)
		mprotect(map, 2 * ps, PROT_READ);
	else if (kind == NONE_ARRAY)
		mprotect(map, 2 * ps, PROT_NONE);
	else {
		/* Two slots in the last mapped page, the rest beyond it. */
		if (munmap(map + ps, ps) != 0)
			return 17;
		bad = (struct io_event *)(map + ps) - 2;
	}
	r = getevents_or_fault(ctx, bad);
	if (r != 1000 && r != (waiting ? -EFAULT : 0))
		return 13;
	/* Every event is still there, once, and nothing is held. */
	if (waiting && io_getevents(ctx, 4, 4, good,
				    (struct timespec *)&second) != 4)
		return 14;
	if (io_getevents(ctx, 0, 4, good, (struct timespec *)&zero) != 0)
		return 15;
	if (io_destroy(ctx) != 0)
		return 16;
	test_hang_guard(NULL, 0);
	return 0;
}

START_TEST(unwritable_events_array_keeps_every_event)
{
	static const char *const names[] = {
		"read-only", "PROT_NONE", "running off its mapping",
		"read-only, empty ring"
	};
	int kind;

	bad_memory_fd = test_tmpfile(4096);
	for (kind = RO_ARRAY; kind <= RO_ARRAY_EMPTY_RING; kind++) {
		int status;
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			_exit(unwritable_events_array_child((enum bad_array)kind));
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "events array %s: child %s %d", names[kind],
			      WIFEXITED(status) ? "exited" : "died of signal",
			      WIFEXITED(status) ? WEXITSTATUS(status) :
						  WTERMSIG(status));
		tried++;
	}
	close(bad_memory_fd);
}
END_TEST

/*
 * A ring the program protects or unmaps itself (io_getevents(3) and
 * io_destroy(3) say what happens).  Unmapped: io_destroy gets the
 * kernel's EINVAL and forgets the context, then every call says EINVAL.
 * Read-only with a completion waiting: the kernel keeps reaping; the ring
 * reaper dies of SIGSEGV storing head (checking the protection before
 * each reap would take a system call).
 */
static int ring_unmapped_child(void)
{
	struct io_event ev[2];
	struct iocb cb, *p = &cb;
	io_context_t ctx = NULL;
	unsigned char b;

	if (io_setup(8, &ctx) != 0 || munmap(ctx, 4096) != 0)
		return 10;
	if (io_destroy(ctx) != -EINVAL)
		return 11;
	io_prep_pread(&cb, bad_memory_fd, &b, 1, 0);
	if (io_getevents(ctx, 0, 2, ev, NULL) != -EINVAL ||
	    io_reap(ctx, 2, ev) != -EINVAL || io_submit(ctx, 1, &p) != -EINVAL ||
	    io_reaper_active(ctx) != 0)
		return 12;
	return 0;
}

static int ring_read_only_child(void)
{
	static const struct timespec second = { 1, 0 };
	struct io_event ev[2];
	struct iocb cb, *p = &cb;
	io_context_t ctx = NULL;
	unsigned char b;

	if (io_setup(8, &ctx) != 0 || io_set_async(ctx, 0) < 0)
		return 10;
	io_prep_pread(&cb, bad_memory_fd, &b, 1, 0);
	if (io_submit(ctx, 1, &p) != 1 || mprotect(ctx, 4096, PROT_READ) != 0)
		return 11;
	if (io_getevents(ctx, 1, 2, ev, (struct timespec *)&second) != 1)
		return 12;
	return 0;
}

START_TEST(a_ring_the_program_unmaps_or_protects)
{
	int status, ring = !test_mode_disables("ring");
	pid_t pid;

	bad_memory_fd = test_tmpfile(4096);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(ring_unmapped_child());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "unmapped ring: status %#x", status);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		_exit(ring_read_only_child());
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (ring)
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
			      "read-only ring, ring reaper: status %#x", status);
	else
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "read-only ring, kernel reaps: status %#x", status);
	tried += 2;
	close(bad_memory_fd);
}
END_TEST

/*
 * Async submission copies a vectored iocb's iovec array at io_submit.  An
 * array the program cannot read is the kernel's EFAULT: io_submit's
 * answer, or the event's res where the file has no non-blocking mode and
 * a worker submits it.  The copy is made under the library's lock with
 * every signal blocked, where a fault kills the process: the child must
 * come back with one of the two answers.
 */
static int unreadable_iovec_child(void)
{
	struct iocb cb, *p = &cb;
	struct io_event ev;
	io_context_t ctx = NULL;
	int ret;

	if (io_setup(8, &ctx) != 0)
		return 10;
	/* 1 in the async mode: LIBAIO_ASYNC=1 has it on already. */
	if (io_set_async(ctx, 1) < 0)
		return 11;
	io_prep_preadv(&cb, bad_memory_fd, test_bad_pointer(), 2, 0);
	ret = io_submit(ctx, 1, &p);
	if (ret == -EFAULT)
		return 0;
	if (ret != 1)
		return 12;
	if (io_getevents(ctx, 1, 1, &ev, NULL) != 1 || ev.obj != &cb)
		return 13;
	return (long)ev.res == -EFAULT ? 0 : 14;
}

START_TEST(an_unreadable_iovec_array_with_async_submission)
{
	int status;
	pid_t pid;

	/* Memcheck reports the bad array the kernel is handed (that is the
	 * point) and makes the child's exit status its own. */
	if (under_valgrind()) {
		test_skip("under valgrind: an unreadable iovec array with "
			  "async submission (memcheck takes the child's exit "
			  "status)");
		return;
	}
	bad_memory_fd = test_tmpfile(4096);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(unreadable_iovec_child());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "unreadable iovec array: status %#x", status);
	tried++;
	close(bad_memory_fd);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("badinput");
	TCase *t = tcase_create("badinput");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, table);
	tcase_add_test(t, context_after_fork);
	tcase_add_test(t, unwritable_events_array_keeps_every_event);
	tcase_add_test(t, a_ring_the_program_unmaps_or_protects);
	tcase_add_test(t, an_unreadable_iovec_array_with_async_submission);
	suite_add_tcase(s, t);
	return s;
}
