/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Descriptor identity (fd_id.c), for the poll emulation; no lock needed. */
#ifndef LIBAIO_FD_ID_H
#define LIBAIO_FD_ID_H

#include <stdint.h>

#include "compiler.h"

/* What a descriptor referred to when the library made it: device and
 * inode (0/0 when neither statx nor fstat answers). */
struct fd_id {
	uint64_t dev, ino;
};

void aioreap_fd_identify(int fd, struct fd_id *id);
/* Does fd still name what id recorded, close-on-exec as we made it? */
int aioreap_fd_is(int fd, const struct fd_id *id);
/* Does fd (the program's, so of any flags) name the file id recorded? */
int aioreap_fd_names(int fd, const struct fd_id *id);
/* fd moved above 2 (close-on-exec), or -errno with fd closed. */
long aioreap_fd_above_stdio(long fd);
/* fd's file type (the S_IFMT bits of its mode), 0 if it cannot be had. */
unsigned aioreap_fd_type(int fd);
/* Is fd a regular file of a file system that holds the file's lock
 * through each buffered write (ext4, tmpfs)?  *id is what it names.  Not
 * thread-safe (the answers kept per device): under the caller's lock. */
int aioreap_fd_write_locked(int fd, struct fd_id *id);
/* Does fd name an eventfd?  1 also when /proc cannot tell. */
int aioreap_fd_is_eventfd(int fd);
/* Is the file registered in the epoll set epfd under the number fd the
 * one fd names now (kcmp)?  1 yes, 0 no, -1 when kcmp cannot tell
 * (missing, or refused by a seccomp filter or ptrace rules). */
int aioreap_fd_in_epoll(int epfd, int fd);

#endif /* LIBAIO_FD_ID_H */
