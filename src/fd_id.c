/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Descriptor identity, for the poll emulation: what a descriptor the
 * library made referred to, and whether its number still names that.
 */
/* fstat's 32-bit struct stat has no room for a 64-bit inode number (it
 * fails with EOVERFLOW): ask for the wide one, in this file only. */
#undef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/kcmp.h>
#include <linux/magic.h>
#include <linux/stat.h>

#include "fd_id.h"
#include "poll_syscall.h"

/*
 * dir, then fd (not negative) in decimal; buf has room for dir and ten
 * digits.  No snprintf: a signal handler's io_submit may get here.
 */
static void proc_path(char *buf, const char *dir, int fd)
{
	char num[12], *p = stpcpy(buf, dir);
	int n = 0;

	do
		num[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	while (n > 0)
		*p++ = num[--n];
	*p = '\0';
}

/*
 * Read the link "/proc/thread-self/" leaf fd: the calling
 * thread's descriptors.  /proc/self names the main thread's, and once it
 * has exited (a zombie) it has none; a task id would not do either, as
 * it is the caller's PID namespace's and /proc may be another's.  Kernels
 * before 3.17 have no thread-self: /proc/self there.
 */
static long proc_link(const char *leaf, int fd, char *link, size_t size)
{
	static const char *const dirs[] = { "/proc/thread-self/",
					    "/proc/self/" };
	char path[48], dir[32];
	long ret = -ENOENT;
	unsigned i;

	for (i = 0; i < 2 && ret == -ENOENT; i++) {
		stpcpy(stpcpy(dir, dirs[i]), leaf);
		proc_path(path, dir, fd);
		ret = sys_readlinkat(AT_FDCWD, path, link, size);
	}
	return ret;
}

/* statx (with flags), or fstat where statx is missing: both give the
 * same numbers, so a descriptor recorded with one can be checked with
 * the other.  Fills *id (0/0 when neither answers) and returns the file
 * type (the S_IFMT bits of the mode, 0 if it cannot be had). */
helper_code static unsigned stat_id(int fd, int flags, struct fd_id *id)
{
	struct statx stx;
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (sys_statx_fd_flags(fd, flags, STATX_TYPE | STATX_INO, &stx) == 0) {
		id->dev = (uint64_t)stx.stx_dev_major << 32 | stx.stx_dev_minor;
		id->ino = stx.stx_ino;
		return stx.stx_mask & STATX_TYPE ? stx.stx_mode & S_IFMT : 0;
	}
	if (sys_fstat(fd, &st) != 0)
		return 0;
	id->dev = (uint64_t)major(st.st_dev) << 32 | minor(st.st_dev);
	id->ino = st.st_ino;
	return st.st_mode & S_IFMT;
}

helper_code void aioreap_fd_identify(int fd, struct fd_id *id)
{
	stat_id(fd, 0, id);
}

/* Is id's device one whose file system takes the file's lock for the
 * whole of a buffered write?  ext4 and tmpfs: measured.  Not FUSE, whose
 * server may run direct writes to one file side by side, nor any other
 * file system that has not been looked at.  The answers for the last
 * few devices asked about are kept, a no and a failed fstatfs (a filter
 * that refuses it, a FUSE server that does not answer it) as well: on
 * FUSE and network file systems each fstatfs is a request to the server.
 * An anonymous device number reused by a later mount keeps the old
 * answer, which costs speed at most. */
#define FS_ANSWERS 4
static int fs_write_locked(int fd, uint64_t dev)
{
	static struct { uint64_t dev; int answer; } seen[FS_ANSWERS];
	static unsigned next, used;
	sys_statfs_t sfs;
	unsigned i;

	for (i = 0; i < used; i++)
		if (seen[i].dev == dev)
			return seen[i].answer;
	i = next;
	next = (next + 1) % FS_ANSWERS;
	if (used < FS_ANSWERS)
		used++;
	seen[i].dev = dev;
	seen[i].answer = sys_fstatfs(fd, &sfs) == 0 &&
			 (sfs.f_type == EXT4_SUPER_MAGIC ||
			  sfs.f_type == TMPFS_MAGIC);
	return seen[i].answer;
}

int aioreap_fd_write_locked(int fd, struct fd_id *id)
{
	/* AT_STATX_DONT_SYNC: type and inode number never change, and a
	 * network or FUSE file system would otherwise be asked again. */
	return S_ISREG(stat_id(fd, AT_STATX_DONT_SYNC, id)) &&
	       fs_write_locked(fd, id->dev);
}

unsigned aioreap_fd_type(int fd)
{
	struct fd_id unused;

	return stat_id(fd, 0, &unused);
}

helper_code int aioreap_fd_is(int fd, const struct fd_id *id)
{
	long fl;

	if (fd < 0)
		return 0;
	/* Every descriptor the library makes is close-on-exec. */
	fl = sys_fcntl(fd, F_GETFD, 0);
	if (fl < 0 || !(fl & FD_CLOEXEC))
		return 0;
	return aioreap_fd_names(fd, id);
}

helper_code int aioreap_fd_names(int fd, const struct fd_id *id)
{
	struct fd_id now;

	if (fd < 0 || (!id->dev && !id->ino))
		return 0;	/* nothing recorded: nothing to match */
	aioreap_fd_identify(fd, &now);
	return now.dev == id->dev && now.ino == id->ino;
}

/* Does fd name an eventfd?  Only /proc can tell without changing it; if
 * /proc is not mounted, accept and let the doorbell find out. */
int aioreap_fd_is_eventfd(int fd)
{
	static const char want[] = "anon_inode:[eventfd]";
	char link[sizeof(want)];
	long len = proc_link("fd/", fd, link, sizeof(link));

	if (len < 0)
		return 1;
	return len == (long)sizeof(want) - 1 && !memcmp(link, want, len);
}

helper_code int aioreap_fd_in_epoll(int epfd, int fd)
{
	struct kcmp_epoll_slot slot;
	long r;

	slot.efd = (uint32_t)epfd;
	slot.tfd = (uint32_t)fd;
	slot.toff = 0;
	/* This thread's file table: the main thread may have exited. */
	r = sys_kcmp(sys_gettid(), KCMP_EPOLL_TFD, fd, (long)&slot);
	if (r == -ENOSYS || r == -EPERM || r == -EACCES)
		return -1;
	return r == 0;
}

/*
 * fd moved above 2 (close-on-exec), or -errno with fd closed.  A daemon
 * that closed its standard descriptors opens /dev/null next and expects
 * 0, 1 and 2: none of them may be the library's, even for a while.
 */
helper_code long aioreap_fd_above_stdio(long fd)
{
	long moved;

	if (fd < 0 || fd > 2)
		return fd;
	moved = sys_fcntl((int)fd, F_DUPFD_CLOEXEC, 3);
	sys_close((int)fd);
	return moved == -EINVAL ? -EMFILE : moved;	/* EINVAL: limit <= 3 */
}
