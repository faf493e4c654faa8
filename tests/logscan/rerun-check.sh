#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/testbed-fault.sh on made-up run directories: which failed cluster
# runs tests/run.sh may run again (the testbed's network failed, and
# nothing else) and which it may not (anything else failed too, or
# nothing of the testbed's is in the logs). Prints one line per case;
# exits 1 if any case is judged wrong.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
bad=0
n=0

# node I RC LOG [DMESG]: node I of the run being made: its exit status
# ("" for none: a node that timed out), its console log and its kernel log
# (printf %b text; the kernel log defaults to the console's kernel lines).
node() {
	[ -n "$2" ] && echo "$2" >"$dir/run/node$1.rc"
	printf '%b' "$3" >"$dir/run/node$1.log"
	if [ $# -ge 4 ]; then
		printf '%b' "$4" >"$dir/run/node$1.dmesg"
	elif [ -n "$2" ]; then
		grep '^\[ *[0-9.]*\] ' "$dir/run/node$1.log" >"$dir/run/node$1.dmesg"
	fi
}

# new: a fresh run directory.
new() {
	rm -rf "$dir/run"
	mkdir -p "$dir/run"
}

# judge WANT CASE: the verdict on the run made (rerun: exit 0; fail: exit
# 1 or 2, and WANT fail1/fail2 names which).
judge() {
	out=$(sh "$repo/tests/testbed-fault.sh" "$dir/run")
	rc=$?
	case "$rc" in
	0) got=rerun ;;
	*) got=fail$rc ;;
	esac
	n=$((n + 1))
	if [ "$got" = "$1" ]; then
		echo "ok - rerun: $2: $got ($out)"
	else
		echo "not ok - rerun: $2: judged $got ($out), want $1"
		bad=1
	fi
}

up='krc-node 0: up, 10.77.0.1, 6.1.0\r\n[node0] ok: module loads\r\n'
up1='krc-node 1: up, 10.77.0.2, 6.1.0\r\n[node1] ok: member loads\r\n'
pass1="${up1}[node1] all checks passed\r\nkrc-node 1: exit 0\r\n"
# Debian 6.1's watchdog: one netdev_crit line, then virtio_net's own.
wd='[  81.250000] virtio_net virtio0 eth0: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 5120 ms\r\n[  81.251000] virtio_net virtio0 eth0: TX timeout on queue: 0, sq: output.0, vq: 0x1, name: output.0, 5120000 usecs ago\r\n'
# An older kernel's: WARN_ONCE, its registers and trace.
wdwarn='[  81.250000] ------------[ cut here ]------------\r\n'
wdwarn="$wdwarn"'[  81.250000] NETDEV WATCHDOG: eth0 (virtio_net): transmit queue 0 timed out\r\n'
wdwarn="$wdwarn"'[  81.250001] WARNING: CPU: 0 PID: 0 at net/sched/sch_generic.c:525 dev_watchdog+0x207/0x210\r\n'
wdwarn="$wdwarn"'[  81.250002] Modules linked in: krcore rdma_rxe\r\n'
wdwarn="$wdwarn"'[  81.250003] CPU: 0 PID: 0 Comm: swapper/0 Not tainted 6.1.0 #1\r\n'
wdwarn="$wdwarn"'[  81.250004] RIP: 0010:dev_watchdog+0x207/0x210\r\n'
wdwarn="$wdwarn"'[  81.250005] Call Trace:\r\n'
wdwarn="$wdwarn"'[  81.250006]  <IRQ>\r\n'
wdwarn="$wdwarn"'[  81.250007]  call_timer_fn+0x27/0x130\r\n'
wdwarn="$wdwarn"'[  81.250008]  </IRQ>\r\n'
wdwarn="$wdwarn"'[  81.250009] ---[ end trace 0000000000000000 ]---\r\n'
fails='[node0] FAIL: barrier b: only 1 of 2 nodes after 120s\r\n[node0] FAIL: probe of node1\r\n[node0] 2 check(s) failed\r\nkrc-node 0: exit 1\r\n'
down0='krc-node 0: testbed network down: no answer from 10.77.0.2 to 60 pings\r\n2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500\r\nkrc-node 0: node setup failed\r\nkrc-node 0: exit 125\r\n'
down1='krc-node 1: testbed network down: no answer from 10.77.0.1 to 60 pings\r\nkrc-node 1: node setup failed\r\nkrc-node 1: exit 125\r\n'

new
node 0 1 "$up$wd$fails"
node 1 0 "$pass1"
judge rerun "a NIC hang, every failed check after it"

new
node 0 "" "$up${wd}[node0] FAIL: barrier b: only 1 of 2 nodes after 120s\r\n"
node 1 0 "$pass1"
judge rerun "a NIC hang, then the node timed out"

new
node 0 0 "$up${wd}[node0] all checks passed\r\nkrc-node 0: exit 0\r\n"
node 1 1 "$up1${wd}[node1] FAIL: lookup of node0\r\n[node1] 1 check(s) failed\r\nkrc-node 1: exit 1\r\n"
judge rerun "NIC hangs in both nodes, the failed checks after them"

new
node 0 1 "$up$wdwarn$fails"
node 1 0 "$pass1"
judge rerun "an old kernel's watchdog WARN and trace, failures after it"

new
node 0 1 "${up}[node0] FAIL: READ data\r\n$wd$fails"
node 1 0 "$pass1"
judge fail1 "a check failed before the NIC hang"

new
node 0 1 "${up}harden: FAIL: 3 of 96 READs failed\r\n$wd$fails"
node 1 0 "$pass1"
judge fail1 "a test program's FAIL before the NIC hang"

new
node 0 1 "${up}[node0] 1 check(s) failed\r\nkrc-node 0: exit 1\r\n$wd"
node 1 0 "$pass1"
judge fail1 "the node exited failed before its NIC hang (at power-off)"

new
node 0 1 "$up$wd$fails" "${wd}[  90.000000] BUG: KASAN: use-after-free in krc_vq_free+0x12/0x40\r\n"
node 1 0 "$pass1"
judge fail1 "a NIC hang and a KASAN report in the kernel log"

new
node 0 1 "$up${wd}[  85.000000] WARNING: CPU: 0 PID: 77 at drivers/infiniband/sw/rxe/rxe_pool.c:255 __rxe_cleanup+0x9b/0xb0\r\n[  85.000001] Call Trace:\r\n[  85.000002] ---[ end trace 0000000000000000 ]---\r\n$fails"
node 1 0 "$pass1"
judge fail1 "a NIC hang and another warning after it (rxe at QP destroy)"

new
node 0 1 "$up$wd$fails"
node 1 0 "${up1}[  88.000000] krcore: 2 VQs leaked at unload\r\n[node1] all checks passed\r\nkrc-node 1: exit 0\r\n"
judge fail1 "a NIC hang and the module's leak report on the other node"

new
node 0 1 "$up$wd$fails"
node 1 0 "${up1}[  88.000000] INFO: task krctl:123 blocked for more than 120 seconds.\r\n[node1] all checks passed\r\nkrc-node 1: exit 0\r\n"
judge fail1 "a NIC hang and a hung task"

new
node 0 1 "$up$(printf '%s' "$wdwarn" | sed 's/ *Call Trace:/ BUG: KASAN: slab-out-of-bounds in rxe_completer/')$fails"
node 1 0 "$pass1"
judge fail1 "a report inside the watchdog's WARN block"

new
node 0 1 "${up}[  81.250001] WARNING: CPU: 0 PID: 0 at net/sched/sch_generic.c:525 dev_watchdog+0x207/0x210\r\n[  81.250005] Call Trace:\r\n$fails"
node 1 0 "$pass1"
judge fail1 "a watchdog WARN block that never ends"

new
node 0 1 "$up$wd$fails"
node 1 1 "${up1}[node1] FAIL: barrier b: only 1 of 2 nodes after 120s\r\n[node1] 1 check(s) failed\r\nkrc-node 1: exit 1\r\n"
judge fail1 "a NIC hang in node0, a failed check in node1 (no hang of its own)"

new
node 0 125 "$down0"
node 1 125 "$down1"
judge rerun "the network never came up (setup's ping check, every node)"

new
node 0 125 "$down0"
node 1 1 "${up1}[node1] FAIL: barrier up: only 1 of 2 nodes after 120s\r\n[node1] 1 check(s) failed\r\nkrc-node 1: exit 1\r\n"
judge fail1 "node0's network never came up, node1 ran the test and failed"

new
node 0 125 "$down0" "[  70.000000] Oops: 0000 [#1] PREEMPT SMP NOPTI\r\n"
node 1 125 "$down1"
judge fail1 "the network never came up and an oops"

new
node 0 1 "${up}[  50.000000] Oops: 0000 [#1] PREEMPT SMP NOPTI\r\n[  50.000001] Call Trace:\r\n$fails"
node 1 0 "$pass1"
judge fail2 "an oops alone"

new
node 0 1 "$up$fails"
node 1 0 "$pass1"
judge fail2 "failed checks alone"

new
node 0 0 "$up${wd}[node0] all checks passed\r\nkrc-node 0: exit 0\r\n" "${wd}[  99.000000] krcore: 1 requests never completed\r\n"
node 1 0 "$pass1"
judge fail1 "every node passed, a NIC hang and the module's never-completed line"

if [ "$bad" -eq 0 ]; then
	echo "all $n cases judged right"
fi
exit $bad
