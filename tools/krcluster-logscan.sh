# SPDX-License-Identifier: GPL-2.0
#
# The kernel-log scan of tools/krcluster (bash, sourced): what fails a node
# whose command passed. tests/run.sh's style part checks it on fixtures
# (tests/logscan/check.sh).

# A kernel problem fails the node even if its command said it passed: the
# stock kernel's reports, the debug kernel's (KASAN, KFENCE, lockdep,
# atomic sleep, debug objects, kmemleak: node-init.sh appends the kmemleak
# report to node<i>.dmesg) and the module's own error lines.
# kernel_trouble EXPECT FILE...: EXPECT lists module messages the test
# declared it causes (expect_kernel_line in tests/cluster/lib.sh): exact
# lines, without their timestamps, that are not trouble.
kernel_trouble() {
	local exp=$1
	shift
	sed -e 's/\r$//' -e 's/^\[ *[0-9.]*\] //' "$@" 2>/dev/null |
		if [ -s "$exp" ]; then grep -vxF -f "$exp"; else cat; fi |
		grep -aE 'BUG:|WARNING:|Oops|general protection|Kernel panic|blocked for more than|hung_task|Call Trace:|UBSAN:|refcount_t:|list_(add|del) corruption|Poison overwritten|Redzone|Object padding|KASAN|KFENCE|possible circular locking|possible recursive locking|inconsistent lock state|sleeping function called from invalid context|ODEBUG:|new suspected memory leaks|unreferenced object|krcore: .*(leak|never completed|did not flush|recovery failed)' |
		grep -v 'krc-ignore' | head -n 5
}

# Each expected line must be a krcore message and in the kernel log once.
expected_missing() {
	local exp=$1 dmesg=$2 line n
	[ -s "$exp" ] || return 0
	while IFS= read -r line; do
		case "$line" in
		"krcore: "*) ;;
		*) echo "expected line is not a krcore message: $line"; return ;;
		esac
		n=$(sed -e 's/^\[ *[0-9.]*\] //' "$dmesg" 2>/dev/null | grep -cxF -- "$line")
		[ "$n" -eq 1 ] || { echo "expected line seen $n times: $line"; return; }
	done <"$exp"
}

# The testbed's power-off stall: a node whose test passed (exit 0, a clean
# kernel log up to its "krc-node N: exit 0" line) and whose kernel then
# reported a soft lockup or an RCU stall while powering off, with no
# krcore frame in what it printed after that line. Seen on TCG with page
# poisoning on a loaded host (PID 1 truncating 9p page cache at exit). It
# still fails the node, with this reason, so that tests/run.sh can tell it
# from a failure of the test (and run the test once more).
# poweroff_stall RUN_DIR I: node I of RUN_DIR stalled so.
poweroff_stall() {
	local dir=$1 i=$2 log=$1/node$2.log n after
	n=$(grep -a -n "^krc-node $i: exit 0" "$log" 2>/dev/null | head -n 1 | cut -d: -f1)
	[ -n "$n" ] || return 1
	[ -z "$(kernel_trouble "$dir/node$i.expect" "$dir/node$i.dmesg" <(head -n "$n" "$log"))" ] ||
		return 1
	after=$(tail -n +"$((n + 1))" "$log" | tr -d '\r')
	echo "$after" | grep -aqE 'soft lockup|rcu: INFO: .* detected stall|rcu_(preempt|sched) detected stall' ||
		return 1
	! echo "$after" | grep -aqE 'krc_|\[krcore\]'
}

