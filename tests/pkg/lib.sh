# SPDX-License-Identifier: GPL-2.0
# Helpers of the packaging tests (tests/pkg/test_*.sh, run on the host by
# tests/run.sh pkg): each check prints "ok - pkg ..." or "not ok - pkg ...",
# a test ends with pkg_finish (exit 0, or 1 if a check failed) or
# pkg_skip REASON (exit 77).
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
PKG_NAME=$(basename "$0" .sh)
PKG_LOGS=$BUILD/pkg/$PKG_NAME
PKG_FAILS=0
rm -rf "$PKG_LOGS"
mkdir -p "$PKG_LOGS"
PKG_LOGS=$(cd "$PKG_LOGS" && pwd)
pkg_n=0

pkg_ok() {
	echo "ok - pkg $PKG_NAME: $1"
}

pkg_fail() {
	echo "not ok - pkg $PKG_NAME: $1"
	PKG_FAILS=$((PKG_FAILS + 1))
}

# pkg_check DESCRIPTION SHELL-EXPRESSION: evaluate it with its output in a
# log of its own, report; on failure show the log's end.
pkg_check() {
	desc=$1
	shift
	pkg_n=$((pkg_n + 1))
	log=$PKG_LOGS/$pkg_n.log
	if (eval "$*") >"$log" 2>&1; then
		pkg_ok "$desc"
		return 0
	fi
	tail -n 25 "$log" | sed 's/^/    /'
	pkg_fail "$desc (log: $log)"
	return 1
}

pkg_skip() {
	echo "SKIP: $*"
	exit 77
}

pkg_finish() {
	[ "$PKG_FAILS" -eq 0 ]
	exit $?
}

# What an install or a DKMS build could leave on the host: the files of
# the directories packages and DKMS write to, the installed packages, the
# groups. Compared before and after a test that must leave no trace.
pkg_host_state() {
	kv=$(scripts/kver.sh 2>/dev/null)
	find /usr/src /var/lib/dkms /lib/udev/rules.d /usr/include /usr/libexec \
		/usr/bin /usr/share/doc /usr/share/man /etc/modprobe.d \
		/usr/lib/x86_64-linux-gnu/pkgconfig -maxdepth 2 2>/dev/null
	[ -n "$kv" ] && find "/lib/modules/$kv" -path "*/updates/*" 2>/dev/null
	find /usr/lib/x86_64-linux-gnu -maxdepth 1 -name 'libkrcore*' 2>/dev/null
	find /usr/lib/x86_64-linux-gnu/ucx 2>/dev/null
	dpkg-query -W -f '${Package} ${Status}\n' 2>/dev/null
	cut -d: -f1 /etc/group
}
