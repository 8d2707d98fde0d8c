/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Export control.  The library is built with -fvisibility=hidden; a public
 * entry point is marked AIO_PUBLIC, and libaio.map gives it its version.
 * A name with two versions is defined twice under internal names and each
 * is bound to "name@VERSION" (old) or "name@@VERSION" (default).  The GCC
 * symver attribute survives LTO; compilers without it get .symver.
 */
#ifndef LIBAIO_EXPORT_H
#define LIBAIO_EXPORT_H

#define AIO_PUBLIC __attribute__((visibility("default")))

#if defined(__has_attribute)
# if __has_attribute(symver)
#  define AIO_HAVE_SYMVER_ATTR 1
# endif
#endif

#ifdef AIO_HAVE_SYMVER_ATTR
# define AIO_SYMVER(internal, versioned) \
	extern __typeof__(internal) internal \
		__attribute__((symver(versioned)))
#else
# define AIO_SYMVER(internal, versioned) \
	__asm__(".symver " #internal ", " versioned)
#endif

#endif /* LIBAIO_EXPORT_H */
