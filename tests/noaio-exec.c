/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * noaio-exec PROGRAM [ARGS...]: run PROGRAM where every AIO system call
 * answers ENOSYS, as on a kernel built without CONFIG_AIO or in a sandbox
 * that refuses them.  The seccomp filter stays across the exec.  Exit 77
 * (skip) where seccomp filters cannot be installed.
 */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "test-common.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: noaio-exec PROGRAM [ARGS...]\n");
		return 2;
	}
	if (test_seccomp_no_aio(ENOSYS) != 0) {
		fprintf(stderr, "SKIP: cannot install a seccomp filter here\n");
		return 77;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
