# SPDX-License-Identifier: GPL-2.0
#
# The kernel-log scan of tools/krcluster (bash, sourced): what fails a node
# whose command passed. tests/run.sh's style part checks it on made-up
# logs (tests/logscan/check.sh).

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
