# SPDX-License-Identifier: GPL-2.0
# Helpers for cluster tests; sourced by tests/cluster/t_*.sh inside a node.
# Environment from node-init.sh: KRC_NODE, KRC_NODES, KRC_IP, KRC_NET,
# KRC_RUN (a directory shared by every node and the host), KRC_REPO.

KRC_BIN=$KRC_REPO/build/bin
KRC_TBIN=$KRC_REPO/build/tests
KRC_FAILS=0

log() {
	echo "[node$KRC_NODE] $*"
}

# check DESCRIPTION SHELL-EXPRESSION: evaluate the expression in this
# shell (functions of this file available), report, count failures.
check() {
	desc=$1
	shift
	if eval "$*"; then
		log "ok: $desc"
	else
		log "FAIL: $desc"
		KRC_FAILS=$((KRC_FAILS + 1))
	fi
}

fail() {
	log "FAIL: $*"
	KRC_FAILS=$((KRC_FAILS + 1))
}

# The exit status of a test: 0 if no check failed.
finish() {
	if [ "$KRC_FAILS" -ne 0 ]; then
		log "$KRC_FAILS check(s) failed"
		exit 1
	fi
	log "all checks passed"
	exit 0
}

# skip REASON: this test cannot run here; tests/run.sh counts it as
# skipped (exit 77 on every node that skips, none failing).
skip() {
	log "SKIP: $*"
	exit 77
}

node_ip() {
	echo "$KRC_NET.$(($1 + 1))"
}

# Wait until every node reached barrier NAME (files in the shared run dir).
# The debug kernel (KASAN, lockdep, under TCG; its nodes boot with
# krc.moddir=) is some 4x slower than the stock one: a test scales its own
# time limits by KRC_SLOW, as tests/run.sh scales the test's timeout.
if grep -q "krc\.moddir=" /proc/cmdline 2>/dev/null; then
	KRC_SLOW=4
else
	KRC_SLOW=1
fi

barrier() {
	name=$1
	timeout=${2:-120}
	: >"$KRC_RUN/barrier.$name.$KRC_NODE"
	i=0
	while :; do
		n=0
		j=0
		while [ $j -lt "$KRC_NODES" ]; do
			[ -e "$KRC_RUN/barrier.$name.$j" ] && n=$((n + 1))
			j=$((j + 1))
		done
		[ $n -eq "$KRC_NODES" ] && return 0
		i=$((i + 1))
		if [ $i -gt $((timeout * 10)) ]; then
			fail "barrier $name: only $n of $KRC_NODES nodes after ${timeout}s"
			return 1
		fi
		sleep 0.1
	done
}

# Publish a value for other nodes / wait for another node's value.
put() {
	printf '%s\n' "$2" >"$KRC_RUN/val.$1.$KRC_NODE.tmp" &&
		mv "$KRC_RUN/val.$1.$KRC_NODE.tmp" "$KRC_RUN/val.$1.$KRC_NODE"
}

get() {
	key=$1
	from=$2
	i=0
	while [ ! -e "$KRC_RUN/val.$key.$from" ]; do
		i=$((i + 1))
		[ $i -gt 1200 ] && { fail "no value $key from node$from"; return 1; }
		sleep 0.1
	done
	cat "$KRC_RUN/val.$key.$from"
}

# Load krcore.ko (and the RDMA modules it needs) with optional parameters.
# $KRC_KO is the module built for the running kernel (node-init.sh); a test
# may point it at another build of it (t_dkms: the one DKMS built).
# KRC_TEST_DG_POLICY=N (from the host) loads with dg_policy=N unless the
# test names dg_policy itself: the suite as it would run with that default
# (t_dkms then leaves dg_policy out of its check of the defaults).
# The cluster key is the run's ($KRC_RUN/cluster.key, tools/krcluster)
# unless the test names a key_file itself.
krc_load() {
	modprobe -a ib_core rdma_cm || return 1
	if [ -n "${KRC_TEST_DG_POLICY:-}" ] &&
	   ! echo " $* " | grep -q " dg_policy="; then
		set -- "$@" "dg_policy=$KRC_TEST_DG_POLICY"
	fi
	echo " $* " | grep -q " key_file=" ||
		set -- "$@" "key_file=$KRC_RUN/cluster.key"
	insmod "${KRC_KO:-$KRC_REPO/kernel/krcore.ko}" "$@"
}

krc_unload() {
	rmmod krcore
}

# A member that loaded before its MetaServer was up retries in the
# background (backing off up to KRC_MC_BACKOFF_MAX_MS): a lookup between
# two tries fails with EHOSTUNREACH. Scripts whose nodes load at once
# wait here, once the MetaServer's node said it is up, until this node
# is registered.
meta_registered() {
	check "registered with the MetaServer" \
		'wait_for 60 "krctl status | grep -q \"metaserver: registered\""'
}

# counter NAME: the value of one krcore counter (fails if there is none).
counter() {
	cat "/sys/class/misc/krcore/counters/$1"
}

# eq A B / ge A B: integer comparisons that fail on empty or non-numbers.
eq() {
	[ -n "$1" ] && [ -n "$2" ] && [ "$1" -eq "$2" ] 2>/dev/null
}

ge() {
	[ -n "$1" ] && [ -n "$2" ] && [ "$1" -ge "$2" ] 2>/dev/null
}

# The trouble dmesg_clean and tools/krcluster look for in a kernel log.
KRC_TROUBLE='BUG:|WARNING:|Oops|Call Trace|Poison overwritten|Redzone|KASAN|KFENCE|inconsistent lock state|sleeping function called from invalid context|krcore: .*(leak|never completed|did not flush|recovery failed)'

# expect_kernel_line LINE: this node's kernel log must contain the module
# message LINE (exactly, without its timestamp, starting "krcore: ")
# exactly once; that line, and only it, is then not trouble. For tests of
# the module's own trouble reports (the leak report at unload). Recorded
# in the run directory, where tools/krcluster reads it too.
expect_kernel_line() {
	case "$1" in
	"krcore: "*) printf '%s\n' "$1" >>"$KRC_RUN/node$KRC_NODE.expect" ;;
	*) fail "expect_kernel_line: not a krcore message: $1" ;;
	esac
}

# expect_kmemleak N: a test that leaks on purpose (t_leak_report) leaks
# exactly N objects; on the debug kernel kmemleak must then report exactly
# N unreferenced objects at the end of the run, and those are not trouble
# (tests/cluster/node-init.sh). Any other count is reported as usual.
expect_kmemleak() {
	echo "$1" >"$KRC_RUN/node$KRC_NODE.kmemleak_expect"
}

# The kernel log must hold no trace of trouble (krcluster checks it too),
# but for the lines expect_kernel_line named, each there exactly once.
dmesg_clean() {
	exp="$KRC_RUN/node$KRC_NODE.expect"
	klog=$(dmesg | sed 's/^\[ *[0-9.]*\] //')
	if [ -s "$exp" ]; then
		while IFS= read -r line; do
			n=$(printf '%s\n' "$klog" | grep -cxF -- "$line")
			[ "$n" -eq 1 ] || { echo "expected once, seen $n times: $line"; return 1; }
		done <"$exp"
		klog=$(printf '%s\n' "$klog" | grep -vxF -f "$exp")
	fi
	! printf '%s\n' "$klog" | grep -E "$KRC_TROUBLE"
}

# wait_for SECONDS SHELL-EXPRESSION: poll (every 0.2 s) until it holds.
wait_for() {
	secs=$1
	shift
	n=0
	while ! eval "$*"; do
		n=$((n + 1))
		[ $n -ge $((secs * 5)) ] && return 1
		sleep 0.2
	done
	return 0
}

# kv KEY TEXT: the value of "KEY=value" (space or newline separated).
kv() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# Set a writable module parameter (fault injection, timeouts).
param() {
	echo "$2" >"/sys/module/krcore/parameters/$1"
}

# Publish this node's card; card_of N prints node N's (after a barrier).
publish_card() {
	krctl card >"$KRC_RUN/card.$KRC_NODE"
}

card_of() {
	cat "$KRC_RUN/card.$1"
}

# peer_conns ADDR [STATE]: how many connections (in STATE, e.g. ready) the
# node has to the peer at ADDR; prints nothing and fails if krctl fails
# or the peer is not listed at all (so that eq/ge on it fail too).
peer_conns() {
	_pc=$(krctl peers) || return 1
	printf '%s\n' "$_pc" | awk -v p="peer $1" -v s="${2:-}" '
		/^peer / { on = (index($0, p ":") == 1 || index($0, p " ") == 1); if (on) seen = 1 }
		on && /^ *conn / && (s == "" || index($0, ": " s)) { n++ }
		END { if (seen) print n + 0; else exit 1 }'
}

# probe ADDR: "krctl probe ADDR" (qconnect, then one READ of the peer's
# card over the VQ's connection); its output (stderr too) in $probe_out,
# printed, its exit status in $probe_rc. krctl prints the path line
# before the READ, so a check of the path alone passes when the READ
# fails: probe_ok checks the READ.
probe() {
	probe_out=$(krctl probe "$1" 2>&1)
	probe_rc=$?
	printf '%s\n' "$probe_out"
}

# probe_ok ADDR [PATTERN]: the last probe (of ADDR) READ ADDR's card:
# exit 0, the path line first, then "probe: READ the peer's card in N ns"
# (printed only once the READ completed and the card decoded), then that
# card's "  addr=ADDR"; and the path line contains PATTERN (a fixed
# string) if one is given.
probe_ok() {
	[ "${probe_rc:-1}" -eq 0 ] || return 1
	printf '%s\n' "$probe_out" | awk -v a="  addr=$1" '
		!p && /^path=/ { p = NR }
		p && !r && /^probe: READ the peer.s card in [0-9]+ ns$/ { r = NR }
		r && $0 == a { ok = 1 }
		END { exit !(p && r && ok) }' || return 1
	[ $# -lt 2 ] || printf '%s\n' "$probe_out" | grep '^path=' | head -n 1 | grep -qF -- "$2"
}

# now_ms: milliseconds since boot (busybox date has no %N).
now_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

# peer_block ADDR: the lines "krctl peers" prints about the peer at ADDR.
peer_block() {
	krctl peers | awk -v p="peer $1" '
		/^peer / { on = (index($0, p ":") == 1 || index($0, p " ") == 1) }
		on { print }'
}

# check_report SAMPLES RESULTS: the benchmark samples file SAMPLES is
# there, krbench_report turns it into RESULTS (summary.txt, results.json,
# a .dat and .gp per figure) and found no malformed or dropped line.
check_report() {
	# (check evaluates its expression with its own arguments as $1...)
	rep_s=$1
	rep_r=$2
	check "samples written" '[ -s "$rep_s" ]'
	check "krbench_report writes the report" \
		'"$KRC_BIN/krbench_report" -q "$rep_r" "$rep_s" 2>"$KRC_RUN/report.err"'
	check "no malformed or dropped sample line" \
		'grep -q " 0 malformed, 0 dropped" "$rep_r/summary.txt"'
}
