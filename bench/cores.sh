#!/bin/sh
# The connection rate on nodes of more than one virtual CPU (make bench
# runs it with tools/krcluster -c 2: qemu's multi-threaded TCG, one host
# thread per vCPU): node0 hosts the MetaServer and an rdma_cm server,
# node1 runs connect_bench rate (1, 2, 4 and 8 processes, then threads,
# each making RATE_K connections, RATE_ROUNDS rounds alternating krcore
# and a warm rdma_cm process). Its figures are bench/run.sh's with the
# suffix _cpusN (connect_rate_cpus2, connect_rate_thr_cpus2, ...).
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
RATE_K=${KRC_BENCH_RATE_K:-10}
RATE_ROUNDS=${KRC_BENCH_RATE_ROUNDS:-3}

if [ "$KRC_NODE" = 0 ]; then
	krc_load meta_host=1 || exit 1
	"$KRC_REPO/build/bin/connect_bench" server 7472 >/dev/null &
	cm=$!
	barrier up
	barrier rate_done 1200
	kill $cm
else
	export KRC_BENCH_SAMPLES=$KRC_RUN/bench.samples
	export KRC_BENCH_RATE_SUFFIX=_cpus$(nproc)
	barrier up
	krc_load meta_server="$META" || exit 1
	echo "== connect_bench rate on $(nproc) vCPUs: 1, 2, 4, 8 processes and threads at once, $RATE_K connects each, $RATE_ROUNDS rounds"
	"$KRC_REPO/build/bin/connect_bench" rate "$META" 7472 "$RATE_K" \
		"$RATE_ROUNDS" | tee "$KRC_RUN/connect_rate_cpus.out" ||
		fail "connect_bench rate"
	barrier rate_done
fi
krc_unload
finish
