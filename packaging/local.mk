# packaging rules
# Distribution packaging, shipped in the tarball (not installed):
# packaging/debian is a Debian source package directory (copied to debian/
# by packaging/build-deb.sh), packaging/libaio.spec an RPM spec.
EXTRA_DIST += \
	packaging/build-deb.sh \
	packaging/build-rpm.sh \
	packaging/libaio.spec \
	packaging/debian/changelog \
	packaging/debian/control \
	packaging/debian/copyright \
	packaging/debian/libaio-dev.install \
	packaging/debian/libaio1.install \
	packaging/debian/libaio1.symbols \
	packaging/debian/not-installed \
	packaging/debian/rules \
	packaging/debian/source/format \
	.ci/deb.sh \
	# EOL
