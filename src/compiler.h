/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The compiler helpers every file may use; every private header includes
 * this one.  hidden goes on each declaration of an object shared between
 * the library's files: -fvisibility=hidden covers only definitions, so
 * without it a file that reads the object through an extern declaration
 * loads its address from the GOT first.
 */
#ifndef LIBAIO_COMPILER_H
#define LIBAIO_COMPILER_H

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define hidden		__attribute__((visibility("hidden")))

/*
 * On every function the poll helper runs (poll_helper.c, poll_rec.c,
 * fd_id.c).  The helper is no C library thread and keeps its creator's
 * thread pointer, whose thread may be gone, stack and all: code it runs
 * must not read thread-local storage, and a stack protector's canary is
 * read from there on several ABIs.
 */
#if defined(__has_attribute)
# if __has_attribute(no_stack_protector)
#  define helper_code	__attribute__((no_stack_protector))
# endif
#endif
#ifndef helper_code
# define helper_code
#endif

#endif /* LIBAIO_COMPILER_H */
