#!/bin/sh
# nodes: 2
# timeout: 3900
# The ioctl fuzzer (tests/progs/ioctl_fuzz.c) on both nodes at once, node0
# hosting the MetaServer, for KRC_FUZZ_CLUSTER_SECONDS (120; `make soak`
# runs longer): random and boundary arguments to every ioctl, random
# sequences, scribbled rings, messages to itself and to the other node,
# workers killed with SIGKILL. Beside it on node1 a well-behaved process
# WRITEs and READs back node0's memory: every request must succeed with
# its data. Then every VQ closes, no leak, the module unloads, the kernel
# logs are clean (krcluster also fails a node on slab poison reports).
# Three phases, a third of the time each, the module reloaded between
# them: RC (dg_policy=0); datagrams (dg_policy=3 on both nodes: every VQ
# to the other node on the datagram path, each node's responder taking
# the other's fuzzed requests); the move ("move": loaded with dg_policy=3,
# set to 1 halfway, so RC is built behind the datagram VQs and they move
# to it at their next qpush, with fuzzed requests in flight on both sides
# of the move; under the default dg_policy=1 VQs move the same way, but RC
# is ready within milliseconds, too soon for the fuzzer, and the whole
# suite runs that). KRC_FUZZ_DG=0 runs the RC phase only,
# KRC_FUZZ_PHASES="3" (a list of 0, 3, move) the phases named.
. "$KRC_REPO/tests/cluster/lib.sh"
SECS=${KRC_FUZZ_CLUSTER_SECONDS:-120}
SEED=${KRC_FUZZ_SEED:-$(date +%s)}
META=$(node_ip 0)
OTHER=$(node_ip $((1 - KRC_NODE)))
F=$KRC_TBIN/ioctl_fuzz
PHASES=${KRC_FUZZ_PHASES:-0 3 move}
[ "${KRC_FUZZ_DG:-1}" = 1 ] || PHASES=0
set -- $PHASES
T=$((SECS / $#))

# fuzz_phase DG_POLICY|move: load, fuzz for T seconds beside the
# well-behaved process(es), check that everything was given back, unload.
fuzz_phase() {
	dg=$1
	INFO=$KRC_RUN/srv.info.$dg.$KRC_NODE
	PINFO=$KRC_RUN/srv.info.$dg.$((1 - KRC_NODE))
	opts="dg_policy=$dg"
	[ "$dg" = move ] && opts="dg_policy=3"
	if [ "$KRC_NODE" = 0 ]; then
		check "module loads ($opts)" "krc_load meta_host=1 $opts"
		barrier "meta$dg"
	else
		barrier "meta$dg"
		check "module loads ($opts)" "krc_load meta_server=$META $opts"
	fi
	"$KRC_TBIN/dp_serve" "$INFO" >/dev/null &
	srv=$!
	wait_for 30 "[ -s \"$INFO\" ]"
	barrier "up$dg"
	wait_for 30 "[ -s \"$PINFO\" ]"
	goodpid=
	if [ "$KRC_NODE" = 1 ] || [ "$dg" != 0 ]; then
		"$F" good "$OTHER" "$PINFO" "$T" >"$KRC_RUN/good.out.$dg.$KRC_NODE" 2>&1 &
		goodpid=$!
	fi
	flip=
	if [ "$dg" = move ]; then
		(sleep $((T / 2)) && echo 1 >/sys/module/krcore/parameters/dg_policy) &
		flip=$!
	fi
	check "dg_policy=$dg: the fuzzer ran $T s (seed $((SEED + KRC_NODE))) and every worker was reaped" \
		'"$F" run "$T" $((SEED + KRC_NODE)) "$KRC_IP" "$OTHER" "$PINFO" 4'
	if [ -n "$goodpid" ]; then
		check "dg_policy=$dg: the well-behaved process verified every request beside it" \
			"wait $goodpid"
		cat "$KRC_RUN/good.out.$dg.$KRC_NODE"
	fi
	if [ "$dg" = 3 ]; then
		check "dg_policy=$dg: requests went and were served as datagrams" \
			'ge "$(counter dg_req_sent)" 100 && ge "$(counter dg_executed)" 100'
	elif [ "$dg" = move ]; then
		wait $flip
		# The well-behaved process's VQ, on datagrams from the start,
		# goes on posting after the flip: RC is built (or was, by a
		# fuzzed qconnect asking KRCORE_QCONNECT_F_RC) and it moves.
		check "dg_policy=3, then 1: requests went as datagrams, then VQs moved to RC" \
			'ge "$(counter dg_req_sent)" 100 && ge "$(counter dg_executed)" 100 &&
			 ge "$(counter dg_switches)" 1'
	fi
	krctl counters | grep -E "recover|retarget|throttl|breaks|rejected|ioctl_errors|foreign|posted|disconnected|^dg_(req|rep|exec|retr|dup|stale|rkey|rx|vqs|switch|rc_)"
	barrier "fuzzed$dg" 600
	touch "$INFO.stop"
	wait $srv
	check "dg_policy=$dg: every VQ closed" \
		'wait_for 60 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\""'
	check "dg_policy=$dg: every user registration given back" \
		'eq "$(counter user_mr_created)" "$(counter user_mr_destroyed)"'
	barrier "done$dg" 300
	check "dg_policy=$dg: module unloads" krc_unload
}

for dg in $PHASES; do
	fuzz_phase "$dg"
done
check "kernel log clean" dmesg_clean
finish
