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

#endif /* LIBAIO_COMPILER_H */
