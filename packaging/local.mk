# SPDX-License-Identifier: LGPL-2.1-or-later
# packaging rules
# Distribution packaging, shipped in the tarball (not installed):
# packaging/debian is a Debian source package directory (copied to debian/
# by packaging/build-deb.sh), packaging/aioreap.spec an RPM spec.
EXTRA_DIST += \
	packaging/build-deb.sh \
	packaging/build-rpm.sh \
	packaging/aioreap.spec \
	packaging/aioreap.rpmlintrc \
	packaging/debian/changelog \
	packaging/debian/control \
	packaging/debian/copyright \
	packaging/debian/libaio-dev.install \
	packaging/debian/libaio1.install \
	packaging/debian/libaio1.symbols \
	packaging/debian/libaio1.lintian-overrides \
	packaging/debian/libaio-dev.lintian-overrides \
	packaging/debian/source/lintian-overrides \
	packaging/debian/tests/control \
	packaging/debian/tests/build-and-run \
	packaging/debian/tests/fio-verify \
	packaging/debian/libaio-dev.docs \
	packaging/debian-t64/README \
	packaging/debian-t64/changelog \
	packaging/debian-t64/control \
	packaging/debian-t64/libaio1t64.install \
	packaging/debian-t64/libaio1t64.symbols \
	packaging/debian-t64/libaio1t64.lintian-overrides \
	packaging/debian/not-installed \
	packaging/debian/rules \
	packaging/debian/source/format \
	.ci/deb.sh \
	.ci/buildd.sh \
	.ci/chroot-lib.sh \
	.ci/lib.sh \
	.ci/cross.sh \
	.ci/kernels.sh \
	# EOL
