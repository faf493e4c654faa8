#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/krcluster-logscan.sh on made-up node logs: what fails a node whose
# test passed (every report, wherever it lies in the log, a stall at
# power-off too) and what does not (clean logs, the module lines a test
# declared). Prints one line per case; exits 1 if any case is judged wrong.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/krcluster-logscan.sh
. "$repo/tools/krcluster-logscan.sh"
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
bad=0

# judge WANT CASE LOG [EXPECT]: a node whose console and kernel log both
# hold LOG (printf %b text), with the declared lines EXPECT, scanned the
# way tools/krcluster scans a node: trouble (fail) or none (pass), as WANT
# says.
judge() {
	local got=pass
	printf '%b' "$3" >"$dir/log"
	printf '[    1.000000] Linux version 6.1\n%b' "$3" >"$dir/dmesg"
	printf '%b' "${4:-}" >"$dir/expect"
	[ -n "$(kernel_trouble "$dir/expect" "$dir/dmesg" "$dir/log")$(expected_missing "$dir/expect" "$dir/dmesg")" ] &&
		got=fail
	if [ "$got" = "$1" ]; then
		echo "ok - logscan: $2: $got"
	else
		echo "not ok - logscan: $2: judged $got, want $1"
		bad=1
	fi
}

pass='krc-node 0: up\n[node0] all checks passed\nkrc-node 0: exit 0\n'
judge pass "a clean run" "${pass}[  60.000000] reboot: Power down\n"
judge fail "a soft lockup at power-off, after the exit line" \
	"${pass}[  200.100000] watchdog: BUG: soft lockup - CPU#0 stuck for 93s! [busybox:1]\n"
judge fail "an RCU stall's trace at power-off" \
	"${pass}[  300.100000] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:\n[  300.200000] Call Trace:\n"
judge fail "a warning during the test" \
	"krc-node 0: up\n[  50.000000] WARNING: CPU: 0 PID: 9 at kernel/foo.c:1\n${pass}"
judge fail "KASAN" "[  40.000000] BUG: KASAN: use-after-free in krc_vq_free\n${pass}"
judge fail "the module's leak report" "[  40.000000] krcore: 2 VQs leaked at unload\n${pass}"
judge pass "a module line the test declared" \
	"[  40.000000] krcore: 2 VQs leaked at unload\n${pass}" 'krcore: 2 VQs leaked at unload\n'
judge fail "a declared line that never came" "${pass}" 'krcore: 2 VQs leaked at unload\n'
judge fail "a declared line that is not the module's" "${pass}" 'rxe: something\n'
exit $bad
