#!/bin/sh
# The serverless transfer (make demo-serverless; issue 11): two nodes.
# node0 hosts the MetaServer and the storage node: an object of
# KRC_SL_MIB MiB registered for krcore and for raw verbs (bench/serverless
# store). node1, a compute node that ran no function before, invokes
# KRC_SL_N short-lived functions per method, alternating: each a new
# process that connects to node0, READs the object and checks it
# (bench/serverless invoke), its end-to-end time from fork to exit.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
DIR=$KRC_RUN/serverless
SL=$KRC_REPO/build/bin/serverless
MIB=${KRC_SL_MIB:-4}
N=${KRC_SL_N:-10}

if [ "$KRC_NODE" = 0 ]; then
	mkdir -p "$DIR"
	check "krcore loads (MetaServer)" 'krc_load meta_host=1'
	"$SL" store "$DIR" "$META" "$MIB" >"$KRC_RUN/sl.store" \
		2>"$KRC_RUN/sl.store.err" &
	check "storage node ready" 'wait_for 120 "[ -f $DIR/sl.sum ]"'
	barrier ready 300
	barrier invoked 900
	: >"$DIR/stop"
	wait
else
	# the samples (krbench_report input) next to the table
	export KRC_BENCH_SAMPLES=$KRC_RUN/bench.samples
	check "krcore loads" 'krc_load meta_server=$META'
	barrier ready 300
	meta_registered
	log "invoking $N functions per method, each fetching a $MIB MiB object"
	check "every function fetched the object intact" \
		'"$SL" invoke "$DIR" "$N" >"$KRC_RUN/serverless.out"'
	cat "$KRC_RUN/serverless.out"
	barrier invoked
fi
check "module unloads" krc_unload
finish
