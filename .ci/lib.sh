# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by every CI job (.ci/*.sh, scripts/test-all.sh).  The part for
# throw-away Debian roots is .ci/chroot-lib.sh, sourced from here.

# Install host tools the jobs need (never anything the tests compare
# against): through scripts/install-deps.sh, which waits for the dpkg lock.
ci_need() { # package...
	local missing='' p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "=== installing on the host:$missing"
	# shellcheck disable=SC2086
	sh "$(dirname "${BASH_SOURCE[0]}")/../scripts/install-deps.sh" --only $missing
}

# shellcheck source=.ci/chroot-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/chroot-lib.sh"
