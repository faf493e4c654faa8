#!/bin/sh
# The elastic key-value store demo (make demo-kvs; issue 11): three nodes.
# node0 hosts the MetaServer and the memory node: a RACE-like hash table
# (common/kvs.c) in registered memory, reachable through krcore and
# through raw verbs. node1 loads the table and runs a steady worker. On
# node2, a fresh compute node, a load spike starts new worker processes
# that never ran there before: first KRC_KVS_WORKERS verbs workers (each
# its own context, QP and rdma_cm connection), then as many krcore
# workers (a VQ on the node's shared connection). Every worker prints a
# line every 5 ms; bench/kvs_report.sh turns them into the timeline.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
DIR=$KRC_RUN/kvs
KVS=$KRC_REPO/build/bin/kvs_demo
KEYS=${KRC_KVS_KEYS:-1000}
WORKERS=${KRC_KVS_WORKERS:-4}
SPIKE=${KRC_KVS_SPIKE_SECS:-3}

case "$KRC_NODE" in
0)
	mkdir -p "$DIR"
	check "krcore loads (MetaServer)" 'krc_load meta_host=1'
	"$KVS" memnode "$DIR" "$META" "$KEYS" >"$KRC_RUN/kvs.memnode" \
		2>"$KRC_RUN/kvs.memnode.err" &
	check "memory node ready" 'wait_for 120 "[ -f $DIR/kvs.ready ]"'
	barrier ready
	barrier loaded 300
	barrier spikes_done 900
	: >"$DIR/stop"
	wait
	;;
1)
	check "krcore loads" 'krc_load meta_server=$META'
	barrier ready
	meta_registered
	log "loading $KEYS keys through krcore (CAS inserts)"
	check "table loaded" '"$KVS" load "$DIR" krcore "$KEYS" >"$KRC_RUN/kvs.load"'
	barrier loaded 300
	# The steady load: one worker for the whole demo.
	"$KVS" worker "$DIR" krcore $((4 * SPIKE + 10)) >"$KRC_RUN/kvs.steady" \
		2>"$KRC_RUN/kvs.steady.err" &
	barrier spikes_done 900
	wait
	check "steady worker ran" '[ -s "$KRC_RUN/kvs.steady" ]'
	;;
2)
	check "krcore loads" 'krc_load meta_server=$META'
	barrier ready
	meta_registered
	barrier loaded 300
	sleep 2
	for m in verbs krcore; do
		log "load spike: $WORKERS new $m workers for ${SPIKE}s"
		t0=$(date +%s%6N)
		i=0
		while [ $i -lt "$WORKERS" ]; do
			KRC_KVS_T0_US=$t0 "$KVS" worker "$DIR" $m "$SPIKE" \
				>"$KRC_RUN/kvs.spike.$m.$i" \
				2>"$KRC_RUN/kvs.spike.$m.$i.err" &
			i=$((i + 1))
		done
		wait
		echo "$t0" >"$KRC_RUN/kvs.spike.$m.t0"
		n=$(cat "$KRC_RUN"/kvs.spike.$m.[0-9]* | grep -c '^S done')
		check "$WORKERS $m workers served GETs" '[ "$n" = "$WORKERS" ]'
		sleep 1
	done
	# The paths the krcore workers' VQs took (datagrams first, RC behind).
	krctl counters | grep -E '^(qconnect_(pooled|handshake|datagram)|dg_(vqs_joined|switches|req_sent|retransmits)|wr_posted)=' |
		tr '\n' ' ' >"$KRC_RUN/kvs.spike.paths"
	log "spike node's paths: $(cat "$KRC_RUN/kvs.spike.paths")"
	barrier spikes_done
	;;
esac
check "module unloads" krc_unload
finish
