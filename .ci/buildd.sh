#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI job "buildd": build the Debian packages as Debian's buildds do, with
# sbuild in its unshare mode, the test suite on (no nocheck), each flavour
# where it ships: the default one (libaio1) in a minimal Debian 12
# (bookworm) chroot, the t64 one (libaio1t64) in a minimal Debian 13
# (trixie) chroot, with that release's toolchain.  Each chroot is a cached
# tarball of `mmdebstrap --variant=buildd` plus only the declared
# Build-Depends (apt-get build-dep on the flavour's control file), with no
# gcc-multilib, valgrind, abidiff, clang or stock libaio in sight; sbuild
# builds there as an unprivileged user.  Beside them, in a second chroot
# of each release that also has the i386 cross toolchain (kept out of the
# first, whose tests must see a plain amd64 buildd), each flavour is
# cross-built with sbuild --host=i386 (nocheck: this host's kernel runs
# no i386 program), so that every architecture's packages come from one
# place.  sbuild runs lintian in each chroot after the build
# (--run-lintian), so each flavour is checked by its release's lintian
# (doc/packaging.md says how strictly), and .ci/deb.sh installs and uses
# the packages in throw-away roots.
#
#   .ci/buildd.sh [OUTDIR]
#
# OUTDIR (default: a temporary directory) receives the packages and, for
# each flavour, sbuild's logs and the test logs in OUTDIR/FLAVOUR/
# (build.log, cross.log, test-suite.log, tests/*.log).  Prints each
# build's test summary and each skipped test with its reason.  The
# chroots' tarballs are cached (.ci/chroot-lib.sh), so a rerun downloads
# only apt's lists; a changed Build-Depends makes new ones.
#
# sbuild's unshare mode runs as an ordinary user with subordinate user and
# group ids (/etc/subuid, /etc/subgid): when the user aioreap-sbuild is
# missing, the job adds it, with useradd's ranges, for the run only, and
# takes it out again (userdel -r also frees the ranges), so that the host
# keeps no account of ours.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "buildd.sh: must run as root (useradd, apt-get)"; exit 1; }
# shellcheck source=.ci/lib.sh
. .ci/lib.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/aioreap-ci-buildd.XXXXXX")
user=aioreap-sbuild
# The account's comment marks it as this job's: one a stopped run left
# behind is taken out at the end of the next.  (useradd refuses a colon
# in it: the comment is a field of /etc/passwd.)
user_mark='aioreap CI sbuild, for one run'
added_user=
pid=
leave() {
	local sub0
	# The user's processes first (a build still running when the job
	# stopped early): userdel refuses a user who has any.  Inside
	# sbuild's namespaces the build runs as the user's first subordinate
	# id; killing each namespace's first process ends all of its own.
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [ -n "$added_user" ]; then
		sub0=$(awk -F: -v u="$user" '$1 == u { print $2; exit }' /etc/subuid)
		[ -z "$sub0" ] || pkill -KILL -U "$sub0" 2>/dev/null || true
		pkill -KILL -u "$user" 2>/dev/null || true
		sleep 1
	fi
	rm -rf "$work" || true
	[ -z "$added_user" ] || userdel -r "$user" 2>&1 | grep -v 'mail spool' >&2 || true
	! { [ -n "$added_user" ] && id -u "$user" >/dev/null 2>&1; } ||
		echo "buildd.sh: could not remove the user $user" >&2
}
trap leave EXIT
trap 'exit 1' INT TERM
out=${1:-$work/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ci_need mmdebstrap sbuild uidmap
if ! id -u "$user" >/dev/null 2>&1; then
	echo "=== adding the user $user, who runs sbuild (removed at the end)"
	useradd --create-home --shell /bin/sh --comment "$user_mark" "$user"
	added_user=1
elif [ "$(getent passwd "$user" | cut -d: -f5)" = "$user_mark" ]; then
	echo "=== the user $user, left by a stopped run, is removed at the end"
	added_user=1
fi
for f in /etc/subuid /etc/subgid; do
	grep -q "^$user:" "$f" || { echo "buildd.sh: $user has no range in $f"; exit 1; }
done
arch=$(dpkg --print-architecture)
# Each flavour is built where it ships: its packaging directory's
# changelog names the release (~deb12, ~deb13).
flavours="default t64"
pkgdir() { [ "$1" = default ] && echo debian || echo "debian-$1"; }
declare -A suite=([default]=bookworm [t64]=trixie) version
for f in $flavours; do
	version[$f]=$(dpkg-parsechangelog -l "packaging/$(pkgdir "$f")/changelog" -S Version)
done

# buildd_root FLAVOUR NAME MMDEBSTRAP-ARGS...: a chroot tarball of the
# flavour's release with the flavour's Build-Depends.  A changed
# Build-Depends makes a new one (the hooks read the control file, so its
# text is not among mmdebstrap's arguments); the control file goes in
# through a fixed path, so that the tarball's key (its mmdebstrap
# arguments and CI_KEY_EXTRA) stays the same between runs.  lintian's
# packages wait in apt's cache (cleanup/apt/cache skipped): sbuild
# installs lintian after the build, so the tests never see it (nor the
# groff it brings); while the release's archive holds the same lintian,
# nothing is downloaded for it.
# dpkg skips its fsync calls there (force-unsafe-io, kept in the chroot's
# dpkg.cfg.d): a throw-away chroot needs no crash safety.
# A root with i386 added also gets the cross build's dependencies and
# i386's libstdc++-dev, which sbuild adds to every cross build's.
buildd_root() {
	local flavour=$1 name=$2 control bd_key
	shift 2
	control=packaging/$(pkgdir "$flavour")/control
	bd_key=$(sed -n '/^Build-Depends/,/^[^ ]/p' "$control" | sha256sum | cut -c1-12)
	mkdir -p "$ci_cache"
	cp "$control" "$ci_cache/buildd-$flavour.control"
	ci_suite=${suite[$flavour]} CI_KEY_EXTRA=$bd_key ci_tarball "$name" --variant=buildd \
		--include=fakeroot --skip=cleanup/apt/cache --dpkgopt=force-unsafe-io "$@" \
		--customize-hook="mkdir -p \"\$1/root/bd/debian\"" \
		--customize-hook="upload $ci_cache/buildd-$flavour.control /root/bd/debian/control" \
		--customize-hook='chroot "$1" apt-get build-dep -y -q --no-install-recommends /root/bd' \
		--customize-hook='chroot "$1" sh -c "dpkg --print-foreign-architectures | grep -q . || exit 0;
			apt-get build-dep -y -q --no-install-recommends -a i386 -P cross,nocheck /root/bd &&
			apt-get install -y -q --no-install-recommends libstdc++-\$(gcc -dumpversion)-dev:i386"' \
		--customize-hook='rm -rf "$1/root/bd"' \
		--customize-hook='chroot "$1" apt-get install -y -q --download-only lintian'
}
# tar[F] builds flavour F with its tests, xtar[F] cross-builds it, both
# from dsc[F], its source package.
declare -A tar xtar dsc
for f in $flavours; do
	tar[$f]=$(buildd_root "$f" "buildd-$f")
	# apt-utils: the release's own external apt solver, which sbuild's
	# cross resolver calls (sbuild copies in the host's, built for
	# Debian 12's libapt-pkg, where a chroot lacks one).  No tests run in
	# this chroot: lintian is installed there already, saving the build
	# that time.
	xtar[$f]=$(buildd_root "$f" "buildd-cross-$f" --architectures="$arch,i386" \
		--include=crossbuild-essential-i386,libc6-dev:i386,apt-utils,lintian)
	bash packaging/build-deb.sh --flavour "$f" --source "$work/src" >/dev/null
	dsc[$f]=$work/src/aioreap_${version[$f]}.dsc
done

# What sbuild runs in the chroots, through a bind mount (/aioreap-ci):
# has.sh, before the build and after the build dependencies, says which
# tools the tests could find; keep.sh, after the build, saves the test
# logs; lintian lints what the build made as doc/packaging.md says: the
# source and binary packages the .changes names, no -dbgsym package (they
# cannot carry overrides) and not the .changes (no override mechanism;
# its fields are the uploader's).  In sbuild's user namespace, root is
# the build user's first subordinate id, not the user: the scripts are
# readable by all, and the directories keep.sh writes belong to that id.
ci=$work/ci
mkdir -p "$ci"
chmod 755 "$work" "$ci"
for f in $flavours; do
	mkdir -p "$ci/keep-$f"
	chown "$(awk -F: -v u="$user" '$1 == u { print $2; exit }' /etc/subuid):$(
		awk -F: -v u="$user" '$1 == u { print $2; exit }' /etc/subgid)" "$ci/keep-$f"
done
cat >"$ci/has.sh" <<'END'
for tool in gcc g++ make autoreconf dh pkg-config mandoc groff valgrind strace abidiff clang \
	i686-linux-gnu-gcc gcc-m32 libaio1 libaio1t64; do
	case $tool in
	libaio1*) v=$(dpkg-query -W -f='${Version}' "$tool" 2>/dev/null) || v=no ;;
	gcc-m32) echo '#include <sys/types.h>' | gcc -m32 -x c -c -o /dev/null - >/dev/null 2>&1 &&
		v=yes || v=no ;;
	*) command -v "$tool" >/dev/null 2>&1 && v=yes || v=no ;;
	esac
	echo "has: $tool ${v:-no}"
done
echo "has: gcc-version $(gcc -dumpfullversion)"
END
cat >"$ci/keep.sh" <<'END'
cd "$1"
mkdir "/aioreap-ci/keep-$2/tests"
cp test-suite.log "/aioreap-ci/keep-$2/" || exit 1
cp tests/*.log tests/*.trs "/aioreap-ci/keep-$2/tests/" 2>/dev/null || true
END
cat >"$ci/lintian" <<'END'
#!/bin/sh
for a do
	shift
	case $a in
	*.changes)
		debs=0
		for f in $(awk '/^Files:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $NF }' "$a"); do
			case $f in
			*-dbgsym_* | *.buildinfo | *.tar.*) ;;
			*.deb) debs=$((debs + 1)); set -- "$@" "$(dirname "$a")/$f" ;;
			*) set -- "$@" "$(dirname "$a")/$f" ;;
			esac
		done
		# A .changes with no package to lint would leave the .dsc alone.
		[ "$debs" -gt 0 ] || { echo "lintian: no .deb in ${a##*/}"; echo "lintian: exit 2"; exit 2; } ;;
	*) set -- "$@" "$a" ;;
	esac
done
echo "lintian $(dpkg-query -W -f='${Version}' lintian) over$(for a do case $a in *.dsc | *.deb) echo " ${a##*/}" ;; esac; done | sort -u | tr -d '\n')"
lintian "$@"
rc=$?
echo "lintian: exit $rc"
exit $rc
END
chmod 755 "$ci/lintian"
lint_flags="--fail-on error,warning,info,pedantic,experimental -I -E --pedantic --tag-display-limit 0"
cat >"$work/sbuild.conf" <<END
\$lintian = '/aioreap-ci/lintian';
\$lintian_opts = [qw($lint_flags)];
\$lintian_require_success = 1;
\$apt_distupgrade = 0;
\$unshare_tmpdir_template = '$work/sbuild-tmp.XXXXXXXXXX';
\$unshare_bind_mounts = [ { directory => '$ci', mountpoint => '/aioreap-ci' } ];
1;
END
chown "$user:" "$work" "$work/src" "$work/src"/*

# sbuild_as FLAVOUR LOG SBUILD-ARG...: sbuild, as the build user, of the
# flavour's source package in its release, lintian on, its output in LOG.
sbuild_as() {
	local f=$1 log=$2
	shift 2
	runuser -u "$user" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="/home/$user" \
		LANG=C.UTF-8 SBUILD_CONFIG="$work/sbuild.conf" \
		sbuild --chroot-mode=unshare --dist="${suite[$f]}" --nolog --run-lintian \
		--no-run-piuparts --no-run-autopkgtest --jobs="$(nproc)" "$@" "${dsc[$f]}" >"$log" 2>&1
}

# parallel=N as Debian's build daemons set it, one job per CPU.  The
# builds with the tests run in the background: their suites spend most of
# their time asleep (the kernel retiring destroyed contexts), and the two
# cross builds, without tests, one after the other, fill that time.  The
# two builds with the tests run one after the other, never together:
# fs.aio-nr and fs.aio-max-nr are the kernel's, shared by every chroot,
# and a suite's limits tests count on no one else opening and closing
# contexts meanwhile.
echo "=== sbuild with the tests on, parallel=$(nproc): flavour default in ${suite[default]}," \
	"then flavour t64 in ${suite[t64]}; beside them, nocheck, both --host=i386"
t0=$SECONDS
for f in $flavours; do
	runuser -u "$user" -- mkdir -p "$work/out-$f"
	frc=0
	sbuild_as "$f" "$work/build-$f.log" --chroot="${tar[$f]}" --source --arch-all \
		--build-dir="$work/out-$f" \
		--starting-build-commands="sh /aioreap-ci/has.sh" \
		--finished-build-commands="sh /aioreap-ci/keep.sh %SBUILD_PKGBUILD_DIR $f" || frc=$?
	echo "build with the tests, flavour $f (${suite[$f]}): exit $frc at $((SECONDS - t0)) s" >"$work/rc-$f"
	[ "$frc" = 0 ] || break
done &
pid=$!
xrc=0
for f in $flavours; do
	echo "sbuild --host=i386, flavour $f (${suite[$f]})"
	runuser -u "$user" -- mkdir -p "$work/xout-$f"
	sbuild_as "$f" "$work/cross-$f.log" --chroot="${xtar[$f]}" --host=i386 --no-arch-all \
		--profiles=cross,nocheck --build-dir="$work/xout-$f" ||
		{ xrc=1; tail -n 60 "$work/cross-$f.log"; echo "sbuild --host=i386, flavour $f: FAILED"; }
done
echo "builds without tests: exit $xrc in $((SECONDS - t0)) s"
wait "$pid" || true
pid=

echo "=== what the chroots of the builds with the tests have (and lack)"
printf '  %-10s %-10s %s\n' '' "${suite[default]}" "${suite[t64]}"
sed -n 's/^has: \([^ ]*\) .*/\1/p' "$work/build-default.log" | while read -r tool; do
	printf '  %-10s %-10s %s\n' "$tool" "$(sed -n "s/^has: $tool //p" "$work/build-default.log")" \
		"$(sed -n "s/^has: $tool //p" "$work/build-t64.log" 2>/dev/null)"
done
rc=0
for f in $flavours; do
	cat "$work/rc-$f" 2>/dev/null || { echo "build with the tests, flavour $f: not run"; rc=1; continue; }
	grep -q ': exit 0 at' "$work/rc-$f" || rc=1
	log=$out/$f
	mkdir -p "$log"
	cp "$work/build-$f.log" "$log/build.log"
	cp "$work/cross-$f.log" "$log/cross.log" 2>/dev/null || true
	kept=$ci/keep-$f
	if [ -d "$kept" ]; then
		mkdir -p "$log/tests"
		cp "$kept"/test-suite.log "$log/" 2>/dev/null || true
		cp "$kept"/tests/*.log "$log/tests/" 2>/dev/null || true
		echo "=== test summary, flavour $f, ${suite[$f]}'s toolchain ($(sed -n 's/^has: gcc-version //p' "$log/build.log"))"
		grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$kept/test-suite.log" 2>/dev/null ||
			sed -n '/^# TOTAL/,/^# ERROR/p' "$log/build.log" | head -7
		ci_skips "$kept"
	fi
	# A build whose suite never ran (nocheck from some configuration)
	# must not pass for one that ran it.
	total=$(sed -n 's/^# PASS: *//p' "$kept/test-suite.log" 2>/dev/null | head -n 1 || true)
	[ "${total:-0}" -gt 0 ] ||
		{ echo "build with the tests, flavour $f: no test passed (no test-suite.log totals)"; rc=1; }
	grep -q ': exit 0 at' "$work/rc-$f" || tail -n 80 "$log/build.log"
done
[ "$rc" = 0 ] && [ "$xrc" = 0 ] || exit 1
for f in $flavours; do
	cp "$work/out-$f"/* "$work/xout-$f"/* "$out/"
done
ls -l "$out"/*.deb

rc=0
if [ "${BUILDD_INSTALL_TEST:-1}" = 1 ]; then
	echo "=== installing what the buildd made into throw-away roots (.ci/deb.sh)"
	bash .ci/deb.sh "$out" || rc=$?
fi
# lintian (doc/packaging.md: any tag fails, every override has a reason):
# sbuild ran it after each build, in that build's chroot, and a tag
# failed the build ($lintian_require_success); its lines here.
lint_rc=0
for f in $flavours; do
	for l in "$out/$f/build.log" "$out/$f/cross.log"; do
		echo "=== sbuild --run-lintian, flavour $f (${suite[$f]}), $(basename "$l" .log):" \
			"$(grep -m1 '^lintian [0-9]' "$l" || echo 'lintian did not run')"
		sed -n '/^lintian [0-9]/,/^lintian: exit /p' "$l" | sed -e 1d -e '$d' |
			grep -v '^running with root privileges' || true
		grep -m1 '^lintian: exit ' "$l" || echo "lintian: no exit status"
		grep -qx 'lintian: exit 0' "$l" || lint_rc=1
	done
done
awk 'FNR == 1 || /^$/ { why = 0 } /^#/ { why = 1; next }
	/./ && !why { print FILENAME ": override without a reason: " $0; bad = 1 }
	END { exit bad }' packaging/debian*/*lintian-overrides packaging/debian/source/lintian-overrides ||
	lint_rc=1
[ "$rc" = 0 ] && [ "$lint_rc" = 0 ] || exit 1
echo "=== buildd job passed"
