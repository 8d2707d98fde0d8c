/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For the shell tests that run programs doing AIO: exit 0 when the AIO
 * system calls work here, or print why not and exit 77 (skip) when
 * io_setup answers ENOSYS (a kernel built without AIO, a sandbox that
 * refuses it, or qemu-user, which does not pass the calls on).  Any other
 * failure of io_setup (EAGAIN at fs.aio-max-nr, ...) is not a reason to
 * skip: exit 0 and let the test meet it.
 */
#include <errno.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	aio_context_t ctx = 0;

	if (syscall(SYS_io_setup, 1, &ctx) == 0) {
		syscall(SYS_io_destroy, ctx);
		return 0;
	}
	if (errno == ENOSYS) {
		printf("SKIP: io_setup answers ENOSYS (a kernel without AIO,"
		       " or qemu-user, which does not pass the AIO system calls on)\n");
		return 77;
	}
	return 0;
}
