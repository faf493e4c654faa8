#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/krcluster-logscan.sh on made-up run directories: what is the
# testbed's power-off stall (tests/run.sh runs such a test once more) and
# what stays a failure of the test. Prints one line per case; exits 1 if
# any case is judged wrong.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/krcluster-logscan.sh
. "$repo/tools/krcluster-logscan.sh"
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
bad=0

# node I: its console (lines of $2, \n-separated) and a clean dmesg.
node() {
	printf '%b' "$2" >"$dir/node$1.log"
	printf '[    1.000000] Linux version 6.1\n' >"$dir/node$1.dmesg"
}

# judge I WANT CASE: poweroff_stall's verdict on node I is WANT (stall|test).
judge() {
	local got=test
	poweroff_stall "$dir" "$1" && got=stall
	if [ "$got" = "$2" ]; then
		echo "ok - logscan: $3: $got"
	else
		echo "not ok - logscan: $3: judged $got, want $2"
		bad=1
	fi
}

pass='krc-node N: up\n[nodeN] all checks passed\nkrc-node N: exit 0\n'
lockup='[  200.100000] watchdog: BUG: soft lockup - CPU#0 stuck for 93s! [sh:1]\n[  200.200000] Call Trace:\n[  200.300000]  truncate_inode_pages_range+0x2a0/0x5c0\n[  200.400000]  v9fs_evict_inode+0x1c/0x60\n'
rcu='[  300.100000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n[  300.200000] Call Trace:\n[  300.300000]  __kernel_poison_pages+0x50/0xb0\n'

node 0 "${pass//N/0}$lockup"
judge 0 stall "soft lockup after exit 0, no krcore frame"
node 1 "${pass//N/1}$rcu"
judge 1 stall "RCU stall after exit 0, no krcore frame"
node 2 "${pass//N/2}${lockup}[  200.500000]  krc_dg_recv+0x40/0x300 [krcore]\n"
judge 2 test "stall with a krcore frame"
node 3 "krc-node 3: up\n[  50.000000] WARNING: CPU: 0 PID: 9 at kernel/foo.c:1\nkrc-node 3: exit 0\n$lockup"
judge 3 test "a warning before the exit line"
node 4 "krc-node 4: up\n[node4] FAIL: a check\nkrc-node 4: exit 1\n$lockup"
judge 4 test "the test failed (exit 1)"
node 5 "${pass//N/5}"
printf '[    1.000000] Linux version 6.1\n[   40.000000] BUG: KASAN: use-after-free in krc_vq_free\n' >"$dir/node5.dmesg"
judge 5 test "a report in dmesg before the exit"
node 6 "krc-node 6: up\n$lockup"
judge 6 test "a stall with no exit line (the test never ended)"
node 7 "${pass//N/7}[  200.000000] reboot: Power down\n"
judge 7 test "no stall at all (nothing to excuse)"
exit $bad
