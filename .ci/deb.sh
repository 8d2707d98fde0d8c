#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "deb": build the Debian packages, install them, build and run a
# small client against the installed package through pkg-config, then put
# the machine back as it was.
#
# Installing our libaio1 replaces Debian's libaio1 (same package name),
# which the test suite uses as the stock reference, and, because libaio1
# is Multi-Arch: same, apt also removes libaio1:i386 (its version would
# no longer match).  So before installing, the exact Debian packages that
# are installed now are saved as .deb files (from apt's cache, or
# downloaded with apt-get download), and an EXIT trap installs them again
# (a downgrade, so nothing that depends on libaio1 is ever removed) and
# checks that dpkg reports the same libaio packages and versions as
# before.  If no libaio package was installed before, ours are removed
# with dpkg -r.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "deb.sh: must run as root (it installs packages)"; exit 1; }

work=$(mktemp -d /tmp/libaio-ci-deb.XXXXXX)
state() {
	dpkg-query -W -f='${binary:Package} ${Version} ${db:Status-Abbrev}\n' \
		'libaio1' 'libaio1:*' 'libaio-dev' 'libaio-dev:*' 2>/dev/null |
		awk '$3 ~ /^ii/ { print $1, $2 }' | sort -u
}
before=$(state)
auto=$(apt-mark showauto 'libaio1*' 'libaio-dev*' 2>/dev/null || true)
echo "=== libaio packages before:"; echo "${before:-(none)}"

# Save the currently installed Debian packages for the restore.
mkdir -p "$work/saved"
while read -r pkg ver; do
	[ -n "$pkg" ] || continue
	name=${pkg%%:*}
	arch=$(dpkg-query -W -f='${Architecture}' "$pkg")
	file=${name}_${ver/:/%3a}_${arch}.deb
	if [ -f "/var/cache/apt/archives/$file" ]; then
		cp "/var/cache/apt/archives/$file" "$work/saved/"
	else
		(cd "$work/saved" && apt-get download "$name:$arch=$ver")
	fi
done <<< "$before"

restore() {
	local rc=$?
	set +e
	echo "=== restoring the libaio packages"
	if ls "$work"/saved/*.deb >/dev/null 2>&1; then
		apt-get install -y --allow-downgrades "$work"/saved/*.deb ||
			dpkg -i "$work"/saved/*.deb
	fi
	for p in libaio-dev libaio1; do
		if dpkg-query -W -f='${Version}\n' "$p" 2>/dev/null | grep -qx '0\.4\..*'; then
			dpkg -r "$p"
		fi
	done
	# Installing from files marks packages manual: put back "auto" marks.
	# shellcheck disable=SC2086 # one package name per word
	[ -z "$auto" ] || apt-mark auto $auto >/dev/null
	after=$(state)
	echo "=== libaio packages after:"; echo "${after:-(none)}"
	if [ "$after" != "$before" ]; then
		echo "deb.sh: FAILED to restore the libaio packages"
		rc=1
	fi
	rm -rf "$work"
	exit $rc
}
trap restore EXIT

echo "=== building the packages"
bash packaging/build-deb.sh "$work/debs" > "$work/build.log" 2>&1 ||
	{ tail -50 "$work/build.log"; exit 1; }
ls "$work/debs"

echo "=== installing them"
apt-get install -y --allow-downgrades \
	"$work"/debs/libaio1_*.deb "$work"/debs/libaio-dev_*.deb
dpkg-query -W libaio1 libaio-dev

echo "=== pkg-config"
pkg-config --modversion libaio
pkg-config --cflags --libs libaio
pkg-config --static --cflags --libs libaio
[ "$(pkg-config --modversion libaio)" = "$(dpkg-query -W -f='${Version}' libaio-dev)" ] ||
	{ echo "deb.sh: pkg-config version differs from the package"; exit 1; }
for page in /usr/share/man/man3/io_setup.3.gz /usr/share/man/man7/libaio.7.gz; do
	[ -e "$page" ] || { echo "deb.sh: $page not installed"; exit 1; }
done

echo "=== building and running a client against the installed package"
cat > "$work/client.c" <<'CEOF'
#include <libaio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char path[] = "/tmp/libaio-ci-clientXXXXXX", buf[16] = "";
	struct iocb cb, *list[1] = { &cb };
	struct io_event ev;
	io_context_t ctx = 0;
	int fd = mkstemp(path), ret;

	if (fd < 0 || write(fd, "hello", 5) != 5)
		return 1;
	unlink(path);
	if ((ret = io_setup(4, &ctx)) < 0) {
		fprintf(stderr, "io_setup: %s\n", strerror(-ret));
		return 1;
	}
	io_prep_pread(&cb, fd, buf, sizeof(buf) - 1, 0);
	if (io_submit(ctx, 1, list) != 1 || io_getevents(ctx, 1, 1, &ev, NULL) != 1)
		return 1;
	if ((long)ev.res != 5 || strcmp(buf, "hello") != 0)
		return 1;
	printf("features %#x, reaper %d\n", io_features(), io_reaper_active(ctx));
	io_destroy(ctx);
	printf("OK\n");
	return 0;
}
CEOF
# shellcheck disable=SC2046
cc -Wall -Werror -o "$work/client" "$work/client.c" $(pkg-config --cflags --libs libaio)
ldd "$work/client" | grep libaio
out=$("$work/client")
echo "$out"
[ "$(echo "$out" | tail -n 1)" = OK ] || exit 1
# shellcheck disable=SC2046
cc -static -o "$work/client-static" "$work/client.c" $(pkg-config --static --cflags --libs libaio)
"$work/client-static" | tail -n 1 | grep -qx OK
echo "static client: OK"
echo "=== deb job passed"
