# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Sourced by .ci/lib.sh: the part of it for the CI jobs that work in
# throw-away Debian roots (.ci/deb.sh, .ci/buildd.sh, .ci/kernels.sh).
# Nothing here touches the host's installed packages: roots are made by
# mmdebstrap from Debian's mirror, cached as tarballs, unpacked into a
# scratch directory for each run, and entered through a private mount
# namespace (unshare -m), so /proc, /dev and the tmpfs /tmp mounted inside
# vanish with the process.
#
# Environment: AIOREAP_CI_CACHE (default /var/cache/aioreap-ci) holds the
# tarballs; AIOREAP_CI_MIRROR (default http://deb.debian.org/debian);
# AIOREAP_CI_SUITE (default bookworm); AIOREAP_CI_REFRESH=1 rebuilds
# cached tarballs.

ci_cache=${AIOREAP_CI_CACHE:-/var/cache/aioreap-ci}
ci_mirror=${AIOREAP_CI_MIRROR:-http://deb.debian.org/debian}
ci_suite=${AIOREAP_CI_SUITE:-bookworm}

# ci_tarball NAME MMDEBSTRAP-ARGS...: path of a cached root tarball,
# made once with mmdebstrap (the suite, mirror, CI_KEY_EXTRA and the
# arguments are the key, so a changed package list makes a new tarball).
ci_tarball() {
	local name=$1
	shift
	local key
	key=$(printf '%s\n' "$ci_suite" "$ci_mirror" "${CI_KEY_EXTRA:-}" "$@" | sha256sum | cut -c1-12)
	local tar=$ci_cache/$name-$ci_suite-$key.tar
	mkdir -p "$ci_cache"
	if [ "${AIOREAP_CI_REFRESH:-0}" = 1 ] || [ ! -s "$tar" ]; then
		echo "=== mmdebstrap $name ($ci_suite) -> $tar" >&2
		rm -rf "$ci_cache/$name-$ci_suite-"*.tar "$ci_cache/.new-$name-"*
		# mmdebstrap picks the output format from the name: keep .tar.
		mmdebstrap --quiet "$@" "$ci_suite" "$ci_cache/.new-$name-$key.tar" "$ci_mirror" >&2 ||
			{ rm -rf "$ci_cache/.new-$name-$key.tar"; return 1; }
		mv "$ci_cache/.new-$name-$key.tar" "$tar"
	else
		echo "=== cached root $tar" >&2
	fi
	echo "$tar"
}

# ci_unpack TARBALL DIR: a fresh root from a cached tarball.
ci_unpack() {
	rm -rf "$2"
	mkdir -p "$2"
	tar -C "$2" --numeric-owner -xf "$1"
}

# ci_copy_source DEST (absolute): the source tree as a fresh clone with
# local edits would see it (tracked and untracked-but-not-ignored files);
# outside git, all but build*, .git, autom4te.cache and debian.
ci_copy_source() {
	mkdir -p "$1"
	# shellcheck disable=SC2154 # src: set by .ci/lib.sh
	if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$src" ls-files -z --cached --others --exclude-standard |
			(cd "$src" && while IFS= read -r -d '' f; do
				[ -e "$f" ] || [ -L "$f" ] || continue	# deleted, not committed
				cp -P --parents -- "$f" "$1/"
			done)
	else
		tar -C "$src" -cf - --exclude='./build*' --exclude='./.git' \
			--exclude='./autom4te.cache' --exclude='./debian' . | tar -C "$1" -xf -
	fi
}

# ci_mounted DIR COMMAND [ARG...]: run COMMAND on the host in a private
# mount namespace where the root DIR has /proc, /dev (bind), /sys and a
# tmpfs /tmp (CI_TMPFS_SIZE, default 1g), for tools that enter the root
# themselves (autopkgtest's chroot backend).
ci_mounted() {
	unshare -m --propagation private sh -ec '
		root=$1; shift
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		mount --rbind /sys "$root/sys"
		mount -t tmpfs -o "size=$CI_TMPFS_SIZE,mode=1777" tmpfs "$root/tmp"
		cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
		exec "$@"
	' ci_mounted "$@"
}

# ci_in_root DIR COMMAND...: run COMMAND (a shell command line) as root in
# the root DIR, mounted as by ci_mounted.
ci_in_root() {
	local root=$1
	shift
	ci_mounted "$root" chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 /bin/sh -ec "$*"
}
export CI_TMPFS_SIZE=${CI_TMPFS_SIZE:-1g}

# ci_host_libaio_sums: sha256 of every file of the host's libaio packages
# (libaio1, libaio1:i386, libaio1t64, libaio-dev), one line each, for a
# before/after comparison.
ci_host_libaio_sums() {
	local p
	# Architecture-qualified names (libaio1:amd64, libaio1:i386, ...):
	# dpkg -L refuses a bare name installed for two architectures.
	for p in $(dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' \
		'libaio1' 'libaio1t64' 'libaio-dev' 'libaio1:*' 'libaio1t64:*' 'libaio-dev:*' 2>/dev/null |
		awk '$1 ~ /^ii/ { print $2 }' | sort -u); do
		echo "package $p $(dpkg-query -W -f='${Version}' "$p")"
		dpkg -L "$p" | while read -r f; do
			[ -f "$f" ] && [ ! -L "$f" ] && sha256sum "$f"
			[ -L "$f" ] && echo "link $f -> $(readlink "$f")"
		done
	done | sort -u
}
