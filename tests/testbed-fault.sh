#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# testbed-fault.sh RUNDIR: was a failed cluster run (the run directory of
# tools/krcluster: node<i>.log, .dmesg, .rc, .expect) failed by the
# testbed's network alone, so that tests/run.sh may run the test again?
# Prints one line and exits
#   0  "network-down: ..." or "nic-hang: ...": the testbed's fault alone,
#      the test may run again;
#   1  "not the testbed's alone: ...": the testbed's network failed too,
#      but something else failed (the run fails, no rerun);
#   2  "no testbed fault: ...": nothing of the testbed's (no rerun).
# tests/logscan/rerun-check.sh runs it on made-up run directories.
#
# The rule. A rerun may hide only the testbed's fault, so a run is run
# again only if every node either passed (exit 0, or 77: skipped) or
# failed in one of these two ways, and no node's kernel log holds any
# report at all:
#   network-down: the node's setup ping check failed ("krc-node N:
#     testbed network down", then "node setup failed", exit 125), before
#     the test (and krcore) ran there: no check line at all in its log;
#   nic-hang: the node's own log shows its virtio NIC's transmit watchdog
#     ("NETDEV WATCHDOG: ... transmit queue N timed out"), and everything
#     that failed on that node came after that line: no "FAIL:" line
#     before it, its exit line (if it exited) after it. A check that
#     failed before the watchdog fired failed for a reason of its own.
# So a node that failed with no watchdog line of its own (a peer of the
# hung node whose checks failed because the hung node went deaf) fails
# the run: its log alone cannot show that its failure came after the
# hang (the nodes' logs share no clock). The watchdog's line is printed
# up to 10 s after the NIC's last transmission (watchdog_timeo 5 s, the
# check every 5 s), so a check that failed in that window fails the run
# too. Both err on the side of a failure.
# A kernel report is any line tools/krcluster-logscan.sh (kernel_trouble,
# expected_missing) or tests/cluster/lib.sh (KRC_TROUBLE) calls trouble:
# BUG, WARNING, Oops, Call Trace, KASAN, KFENCE, poison, lockdep, hung
# task, kmemleak, the module's leak and never-completed lines... in the
# console log or the kernel log (the lines a test declared with
# expect_kernel_line excepted, as in those scans). The one exception is
# the watchdog's own report: Debian's 6.1 (the stock and the debug guest
# kernel) prints the watchdog as a single netdev_crit() line, which no
# trouble pattern matches, and no trace; an older kernel's WARN_ONCE
# form ("WARNING: CPU: N PID: N at net/sched/sch_generic.c:N
# dev_watchdog+...", its registers and "Call Trace:" down to its "---[ end
# trace ... ]---") is taken out of the scan as one block, and only if no
# other report (BUG, Oops, KASAN, another WARNING...) starts inside it.
# rxe's warning at QP destroy seen after a NIC hang (docs/journal.md) is
# a report like any other: that run fails.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-}
[ -n "$dir" ] && [ -d "$dir" ] || { echo "usage: testbed-fault.sh RUNDIR" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# The watchdog's line, in either form (the message line, or the WARN
# line naming dev_watchdog where the message is not on the console).
WD_MSG='NETDEV WATCHDOG: .*transmit queue [0-9]+ timed out'
WD_WARN='WARNING: CPU: [0-9]+ PID: [0-9]+ at net/sched/sch_generic[.]c:[0-9]+ dev_watchdog[+]'

# strip_watchdog FILE: FILE without the watchdog's WARN block (see above).
strip_watchdog() {
	tr -d '\r' <"$1" | awk -v warn="$WD_WARN" '
		function flush(i) {
			for (i = 1; i <= n; i++)
				print buf[i]
			n = 0
			inb = 0
		}
		inb {
			buf[++n] = $0
			if ($0 ~ /---\[ end trace [0-9a-f]+ \]---/) {
				n = 0
				inb = 0
			} else if ($0 ~ /BUG:|Oops|KASAN|KFENCE|UBSAN|WARNING:|cut here|Kernel panic|general protection|hung_task|blocked for more than|krcore: / || n > 150) {
				flush()
			}
			next
		}
		$0 ~ warn { inb = 1; n = 0; buf[++n] = $0; next }
		{ print }
		END { flush() }'
}

# The trouble patterns of the nodes' own check (lib.sh's dmesg_clean).
lib_trouble=$(export KRC_REPO="$repo"; . "$repo/tests/cluster/lib.sh" && printf '%s' "$KRC_TROUBLE")
[ -n "$lib_trouble" ] || { echo "not the testbed's alone: no KRC_TROUBLE in tests/cluster/lib.sh"; exit 1; }

# trouble I: node I's kernel reports but the watchdog's (at most a few).
trouble() {
	exp=$dir/node$1.expect
	for f in log dmesg; do
		: >"$tmp/node$1.$f"
		[ -f "$dir/node$1.$f" ] && strip_watchdog "$dir/node$1.$f" >"$tmp/node$1.$f"
	done
	bash -c '. "$1"; kernel_trouble "$2" "$3" "$4"; expected_missing "$2" "$5"' _ \
		"$repo/tools/krcluster-logscan.sh" "$exp" "$tmp/node$1.dmesg" \
		"$tmp/node$1.log" "$dir/node$1.dmesg"
	sed -e 's/^\[ *[0-9.]*\] //' "$tmp/node$1.dmesg" "$tmp/node$1.log" |
		if [ -s "$exp" ]; then grep -vxF -f "$exp"; else cat; fi |
		grep -aE "$lib_trouble" | head -n 3
}

nodes=0
failed=0
hung=""
down=""
bad=""
symptom=0
for log in "$dir"/node*.log; do
	[ -f "$log" ] || continue
	i=${log##*/node}
	i=${i%.log}
	case "$i" in '' | *[!0-9]*) continue ;; esac
	nodes=$((nodes + 1))
	rc=$(cat "$dir/node$i.rc" 2>/dev/null)
	# Line numbers in the console log: the watchdog's (first), the first
	# "FAIL:", the exit line, setup's network-down and failure lines.
	# shellcheck disable=SC2046 # five numbers
	set -- $(tr -d '\r' <"$log" | awk -v n="$i" -v msg="$WD_MSG" -v warn="$WD_WARN" '
		!w && ($0 ~ msg || $0 ~ warn) { w = NR }
		!f && /FAIL:/ { f = NR }
		index($0, "krc-node " n ": exit ") { e = NR }
		index($0, "krc-node " n ": testbed network down") { d = NR }
		index($0, "krc-node " n ": node setup failed") { s = NR }
		END { print w + 0, f + 0, e + 0, d + 0, s + 0 }')
	w=$1 f=$2 e=$3 d=$4 s=$5
	[ "$w" -gt 0 ] || [ "$d" -gt 0 ] && symptom=1
	t=$(trouble "$i")
	if [ -n "$t" ]; then
		bad="$bad; node$i: kernel report: $(printf '%s\n' "$t" | head -n 1)"
		failed=$((failed + 1))
		continue
	fi
	case "$rc" in 0 | 77) continue ;; esac
	failed=$((failed + 1))
	if [ "$rc" = 125 ] && [ "$d" -gt 0 ] && [ "$s" -gt "$d" ] && [ "$f" -eq 0 ]; then
		down="$down node$i"
	elif [ "$w" -gt 0 ] && { [ "$f" -eq 0 ] || [ "$f" -gt "$w" ]; } &&
	     { [ "$e" -eq 0 ] || [ "$e" -gt "$w" ]; }; then
		hung="$hung node$i(line $w)"
	elif [ "$w" -gt 0 ] && [ "$f" -gt 0 ] && [ "$f" -lt "$w" ]; then
		bad="$bad; node$i: a check failed (line $f) before its NIC hang (line $w)"
	elif [ "$w" -gt 0 ]; then
		bad="$bad; node$i: exited ${rc:-?} (line $e) before its NIC hang (line $w)"
	else
		bad="$bad; node$i: failed (exit ${rc:-none}) with no NIC hang or network-down of its own"
	fi
done

if [ "$nodes" -eq 0 ]; then
	echo "no testbed fault: no node log in $dir"
	exit 2
fi
if [ "$symptom" -eq 0 ]; then
	echo "no testbed fault: no NETDEV WATCHDOG and no network-down in any node's log"
	exit 2
fi
if [ -n "$bad" ] || [ "$failed" -eq 0 ]; then
	[ -n "$bad" ] || bad="; no node failed"
	echo "not the testbed's alone:${bad#;}"
	exit 1
fi
if [ -n "$hung" ]; then
	echo "nic-hang: the virtio NIC stopped transmitting (NETDEV WATCHDOG) in$hung${down:+, network down in$down}, every failure after it, no kernel report"
else
	echo "network-down: node setup's ping check failed in$down, before the test ran there, no kernel report"
fi
exit 0
