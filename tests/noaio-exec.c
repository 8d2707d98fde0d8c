/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * noaio-exec PROGRAM [ARGS...]: run PROGRAM where every AIO system call
 * answers ENOSYS, as on a kernel built without CONFIG_AIO or in a sandbox
 * that refuses them.  The seccomp filter stays across the exec.  Exit 77
 * (skip) where seccomp filters cannot be installed.
 */
#include "config.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test-common.h"

int main(int argc, char **argv)
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

	if (argc < 2) {
		fprintf(stderr, "usage: noaio-exec PROGRAM [ARGS...]\n");
		return 2;
	}
	if (test_seccomp_errno(aio, (int)(sizeof(aio) / sizeof(aio[0])),
			       ENOSYS) != 0) {
		fprintf(stderr, "SKIP: cannot install a seccomp filter here\n");
		return 77;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
