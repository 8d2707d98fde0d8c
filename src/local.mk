# SPDX-License-Identifier: LGPL-2.1-or-later
# The library.  The version script is generated so that the LIBAIO_0.6
# time64 node exists only on 32-bit targets, as in Debian's libaio1t64.
lib_LTLIBRARIES += libaio.la
libaio_la_SOURCES = \
	src/arch/aarch64.h \
	src/arch/arm.h \
	src/arch/generic.h \
	src/arch/i386.h \
	src/arch/loongarch64.h \
	src/arch/powerpc64.h \
	src/arch/riscv64.h \
	src/arch/s390x.h \
	src/arch/x86_64.h \
	src/async.h \
	src/async_submit.c \
	src/async_worker.c \
	src/compat_0_1.c \
	src/compiler.h \
	src/event_array.h \
	src/export.h \
	src/fd_id.c \
	src/fd_id.h \
	src/features.c \
	src/feature_flags.h \
	src/getevents.c \
	src/kernel_abi.h \
	src/kernel_wait.c \
	src/kernel_wait.h \
	src/limits.c \
	src/poll_bits.h \
	src/poll_carry.c \
	src/poll_carry.h \
	src/poll_emul.c \
	src/poll_emul.h \
	src/poll_destroy.c \
	src/poll_helper.c \
	src/poll_helper.h \
	src/poll_rec.c \
	src/poll_thread.c \
	src/poll_rec.h \
	src/poll_syscall.h \
	src/queue.c \
	src/reap.h \
	src/registry.c \
	src/registry.h \
	src/ring.h \
	src/setup.c \
	src/submit.c \
	src/syscall.c \
	src/raw_syscall.h \
	src/syscall_nr.h \
	src/time64.c \
	src/user_ptr.c \
	src/user_ptr.h \
	src/versioned.h \
	# EOL
libaio_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(PTHREAD_CFLAGS)
libaio_la_LIBADD = $(PTHREAD_LIBS)
# -z nodelete: the poll emulation's helper thread runs library code, so
# the library must stay mapped after a dlclose.
libaio_la_LDFLAGS = $(libaio_name_flags) -no-undefined \
	-Wl,--version-script=$(builddir)/libaio.ver -Wl,-z,nodelete
if T64_NAME
# The soname libaio.so.1t64 (configure --enable-t64-name).  libtool's
# version numbers cannot carry letters, so the library is unversioned
# with that suffix; libaio.so.1 (for programs that ask for that name, the
# tests among them) and the development link libaio.so point at it, in
# .libs as in the installed tree.
libaio_name_flags = -avoid-version -shrext .so.1t64
all-local: libaio.la
	$(AM_V_at)cd .libs && ln -sf libaio.so.1t64 libaio.so.1 && \
		ln -sf libaio.so.1t64 libaio.so
install-exec-hook:
	cd $(DESTDIR)$(libdir) && ln -sf libaio.so.1t64 libaio.so.1 && \
		ln -sf libaio.so.1t64 libaio.so
uninstall-hook:
	rm -f $(DESTDIR)$(libdir)/libaio.so.1 $(DESTDIR)$(libdir)/libaio.so
else
libaio_name_flags = -version-info $(LIBAIO_LT_VERSION)
endif
EXTRA_libaio_la_DEPENDENCIES = libaio.ver
EXTRA_DIST += src/libaio.map
CLEANFILES += libaio.ver

if TIME64_ENTRY_POINTS
libaio.ver: $(srcdir)/src/libaio.map
	$(AM_V_GEN)$(SED) -e 's/@TIME64_PARENT@/LIBAIO_0.6/' \
		-e 's/[[:space:]]*#.*@TIME64@.*//' $< > $@
else
libaio.ver: $(srcdir)/src/libaio.map
	$(AM_V_GEN)$(SED) -e 's/@TIME64_PARENT@/LIBAIO_0.5/' \
		-e '/@TIME64@/d' $< > $@
endif
