/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Branch hints: the compiler helpers every file may use. */
#ifndef LIBAIO_COMPILER_H
#define LIBAIO_COMPILER_H

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#endif /* LIBAIO_COMPILER_H */
