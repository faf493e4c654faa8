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
. "$KRC_REPO/tests/cluster/lib.sh"
SECS=${KRC_FUZZ_CLUSTER_SECONDS:-120}
SEED=${KRC_FUZZ_SEED:-$(date +%s)}
META=$(node_ip 0)
OTHER=$(node_ip $((1 - KRC_NODE)))
INFO=$KRC_RUN/srv.info.$KRC_NODE
PINFO=$KRC_RUN/srv.info.$((1 - KRC_NODE))
F=$KRC_TBIN/ioctl_fuzz

if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1'
	barrier meta
else
	barrier meta
	check "module loads" "krc_load meta_server=$META"
fi
"$KRC_TBIN/dp_test" serve "$INFO" >/dev/null &
srv=$!
wait_for 30 "[ -s \"$INFO\" ]"
barrier up
wait_for 30 "[ -s \"$PINFO\" ]"
if [ "$KRC_NODE" = 1 ]; then
	"$F" good "$OTHER" "$PINFO" "$SECS" >"$KRC_RUN/good.out" 2>&1 &
	goodpid=$!
fi
check "the fuzzer ran $SECS s (seed $((SEED + KRC_NODE))) and every worker was reaped" \
	'"$F" run "$SECS" $((SEED + KRC_NODE)) "$KRC_IP" "$OTHER" "$PINFO" 4'
if [ "$KRC_NODE" = 1 ]; then
	check "the well-behaved process verified every request beside it" "wait $goodpid"
	cat "$KRC_RUN/good.out"
fi
krctl counters | grep -E "recover|retarget|throttl|breaks|rejected|ioctl_errors|foreign|posted|disconnected"
barrier fuzzed 600
touch "$INFO.stop"
wait $srv
check "every VQ closed" \
	'wait_for 60 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\""'
check "every user registration given back" \
	'eq "$(counter user_mr_created)" "$(counter user_mr_destroyed)"'
barrier done 300
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
