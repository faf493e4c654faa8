#!/bin/sh
# The benchmarks (make bench), on two nodes: node0 serves, node1 measures
# krcore and raw verbs side by side (and first what a QP costs in memory,
# bench/qp_cost). Prints numbers and ratios. Then
# bench/first_contact.sh: first contact with a node never contacted
# (datagram path, RC first contact, rdma_cm, verbs) and the READ latency
# on datagrams vs RC.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
DIR=$KRC_RUN/bench
ITERS=${KRC_BENCH_ITERS:-5000}
SECS=${KRC_BENCH_SECS:-10}

gid_index() {
	krctl status | sed -n 's/.*rxe0\/1: .* gid\[\([0-9]*\)\].*/\1/p'
}

CONNECTS=${KRC_BENCH_CONNECTS:-40}
RATE_K=${KRC_BENCH_RATE_K:-10}
RATE_ROUNDS=${KRC_BENCH_RATE_ROUNDS:-3}
# Node1 measures; its samples (krbench_report's input) go here and the
# Makefile's bench target turns them into build/bench/results.
[ "$KRC_NODE" = 1 ] && export KRC_BENCH_SAMPLES=$KRC_RUN/bench.samples

if [ "$KRC_NODE" = 0 ]; then
	mkdir -p "$DIR"
	krc_load meta_host=1 || exit 1
	"$KRC_REPO/build/bin/connect_bench" server 7472 >/dev/null &
	cm=$!
	barrier up
	barrier connect_done 900
	kill $cm
	"$KRC_REPO/build/bin/read_bench" server "$DIR" "$(gid_index)" || fail "server"
	barrier read_done 900
else
	barrier up
	echo "== qp_cost: the memory of an RC and a UD QP on this node's device"
	"$KRC_REPO/build/bin/qp_cost" "${KRC_BENCH_QP_COST_N:-256}" |
		tee "$KRC_RUN/qp_cost.out" || fail "qp_cost"
	krc_load meta_server="$META" || exit 1
	echo "== connect_bench: $CONNECTS new processes per path"
	"$KRC_REPO/build/bin/connect_bench" client "$META" 7472 "$CONNECTS" |
		tee "$KRC_RUN/connect_bench.out" || fail "connect_bench"
	echo "== connect_bench rate: 1, 2, 4, 8 processes at once, $RATE_K connects each, $RATE_ROUNDS rounds"
	"$KRC_REPO/build/bin/connect_bench" rate "$META" 7472 "$RATE_K" "$RATE_ROUNDS" |
		tee "$KRC_RUN/connect_rate.out" || fail "connect_bench rate"
	barrier connect_done
	echo "== read_bench: $ITERS synchronous READs and ${SECS}s of batched READs, each path"
	"$KRC_REPO/build/bin/read_bench" client "$META" "$DIR" "$(gid_index)" \
		"$ITERS" "$SECS" | tee "$KRC_RUN/read_bench.out" || fail "client"
	barrier read_done
fi
sh "$KRC_REPO/bench/first_contact.sh" || fail "first_contact"
krc_unload
finish
