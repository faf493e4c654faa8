#!/bin/sh
# The benchmarks (make bench), on two nodes: node0 serves, node1 measures
# krcore and raw verbs side by side (and first what a QP costs in memory,
# bench/qp_cost): connections (bench/connect_bench), then READ and WRITE
# at 1-8 processes (bench/read_bench) with perftest's ib_read_lat and
# ib_write_lat beside them. Prints numbers and ratios. Then the MetaServer
# (bench/meta_bench): node0 fills its table with synthetic cards to each
# occupancy in turn, node1 measures uncached lookups, their latency and
# the lookups per second of 1, 2, 4 and 8 processes. Then
# bench/first_contact.sh: first contact with a node never contacted
# (datagram path, RC first contact, rdma_cm, verbs) and the READ latency
# on datagrams vs RC.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
DIR=$KRC_RUN/bench
# The data plane (bench/read_bench): synchronous samples per method and
# point, seconds of batched requests per method and point, processes
# 1, 2, 4 ... DP_PROCS; then perftest's ib_read_lat and ib_write_lat
# with PT_ITERS iterations on the same two nodes, for reference.
ITERS=${KRC_BENCH_ITERS:-5000}
SECS=${KRC_BENCH_SECS:-4}
DP_PROCS=${KRC_BENCH_DP_PROCS:-8}
PT_ITERS=${KRC_BENCH_PT_ITERS:-2000}

gid_index() {
	krctl status | sed -n 's/.*rxe0\/1: .* gid\[\([0-9]*\)\].*/\1/p'
}

CONNECTS=${KRC_BENCH_CONNECTS:-40}
FLOOR_N=${KRC_BENCH_FLOOR_N:-200}
RATE_K=${KRC_BENCH_RATE_K:-10}
RATE_ROUNDS=${KRC_BENCH_RATE_ROUNDS:-3}
# The MetaServer: synthetic cards in node0's table (1%, 50%, 75% of
# 100,000; the default table has 131,072 slots), uncached lookups timed
# one by one, seconds of lookups per process count.
META_FILLS=${KRC_BENCH_META_FILLS:-1000 50000 75000}
META_COUNT=${KRC_BENCH_META_COUNT:-2000}
META_SECS=${KRC_BENCH_META_SECS:-3}
FILLP=/sys/module/krcore/parameters/test_meta_fill

# node1: krcore anew before each occupancy, so that each starts with no
# peer entry left from the last one (every card looked up stays a peer
# of the node), with room for a peer per synthetic card (max_peers is
# 65536 by default).
meta_reload() {
	tries=0
	while grep -q '^krcore ' /proc/modules && ! rmmod krcore 2>/dev/null; do
		tries=$((tries + 1))
		[ $tries -gt 50 ] && { fail "rmmod krcore"; return 1; }
		sleep 0.1
	done
	krc_load meta_server="$META" max_peers=$(($1 + 1024)) ||
		{ fail "insmod krcore (max_peers=$(($1 + 1024)))"; return 1; }
	wait_for 30 'krctl status | grep -q "metaserver: registered"' ||
		{ fail "not registered with the MetaServer"; return 1; }
}

# meta_run MODE ARGS...: bench/meta_bench, its output on the console and
# appended to meta_bench.out; its exit status.
meta_run() {
	"$KRC_REPO/build/bin/meta_bench" "$@" >"$KRC_RUN/meta_bench.part"
	mrc=$?
	cat "$KRC_RUN/meta_bench.part"
	cat "$KRC_RUN/meta_bench.part" >>"$KRC_RUN/meta_bench.out"
	rm -f "$KRC_RUN/meta_bench.part"
	return $mrc
}
# perftest_run TOOL: TOOL's client against node0 (its server may still be
# starting: a few tries), its typical latency (perftest's median) and
# 99th percentile in perftest.out, and a sample in the figure of
# read_bench's that it stands beside (ib_write_lat's number is half a
# ping-pong round trip, not a WRITE's completion time).
perftest_run() {
	fig=read_lat
	[ "$1" = ib_write_lat ] && fig=write_lat
	tries=0
	until timeout 300 "$1" -d rxe0 -x "$(gid_index)" -s 8 -n "$PT_ITERS" -F \
		"$META" >"$KRC_RUN/$1.client" 2>&1; do
		tries=$((tries + 1))
		[ $tries -ge 5 ] && return 1
		sleep 1
	done
	awk -v t="$1" -v fig="$fig" -v s="${KRC_BENCH_SAMPLES:-/dev/null}" '
	$1 == 8 && NF >= 8 {
		printf "  %-13s typical %9.1f us  p99 %9.1f us\n", t, $5, $8
		printf "S %s perftest_%s 1 %s\n", fig, t, $5 >>s
		found = 1
	}
	END { exit !found }' "$KRC_RUN/$1.client" >>"$KRC_RUN/perftest.out"
}
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
	"$KRC_REPO/build/bin/read_bench" server "$DIR" "$(gid_index)" \
		"$DP_PROCS" || fail "server"
	barrier read_done 900
	for t in ib_read_lat ib_write_lat; do
		timeout 300 $t -d rxe0 -x "$(gid_index)" -s 8 -n "$PT_ITERS" -F \
			>"$KRC_RUN/$t.server" 2>&1 &
		pt=$!
		barrier "${t}_up" 300
		wait $pt || fail "$t server"
		barrier "${t}_done" 600
	done
	# (wait_for and barrier use n and i: other names here)
	for fill in $META_FILLS; do
		echo "$fill" >"$FILLP" || fail "test_meta_fill=$fill"
		log "MetaServer: $(krctl status | grep -o 'table [0-9]* slots, hosted here: [0-9]* cards')"
		barrier "meta_filled_$fill" 300
		barrier "meta_done_$fill" 900
	done
else
	barrier up
	echo "== qp_cost: the memory of an RC and a UD QP on this node's device"
	"$KRC_REPO/build/bin/qp_cost" "${KRC_BENCH_QP_COST_N:-256}" |
		tee "$KRC_RUN/qp_cost.out" || fail "qp_cost"
	krc_load meta_server="$META" || exit 1
	echo "== connect_bench: $CONNECTS new processes per path"
	"$KRC_REPO/build/bin/connect_bench" client "$META" 7472 "$CONNECTS" |
		tee "$KRC_RUN/connect_bench.out" || fail "connect_bench"
	echo "== conn_floor: a connection beside a null device's open + ioctl + close, $FLOOR_N rounds"
	"$KRC_REPO/build/bin/conn_floor" "$META" "$FLOOR_N" |
		tee "$KRC_RUN/conn_floor.out" || fail "conn_floor"
	echo "== connect_bench rate: 1, 2, 4, 8 processes at once, $RATE_K connects each, $RATE_ROUNDS rounds"
	"$KRC_REPO/build/bin/connect_bench" rate "$META" 7472 "$RATE_K" "$RATE_ROUNDS" |
		tee "$KRC_RUN/connect_rate.out" || fail "connect_bench rate"
	barrier connect_done
	echo "== read_bench: READ and WRITE at 1-$DP_PROCS processes, $ITERS synchronous requests and ${SECS}s of batched ones per method and point"
	"$KRC_REPO/build/bin/read_bench" client "$META" "$DIR" "$(gid_index)" \
		"$ITERS" "$SECS" "$DP_PROCS" | tee "$KRC_RUN/read_bench.out" ||
		fail "client"
	barrier read_done
	echo "== perftest on the same nodes: ib_read_lat, ib_write_lat, 8 B, $PT_ITERS iterations"
	: >"$KRC_RUN/perftest.out"
	for t in ib_read_lat ib_write_lat; do
		barrier "${t}_up"
		perftest_run "$t" || fail "$t"
		barrier "${t}_done"
	done
	cat "$KRC_RUN/perftest.out"
	echo "== meta_bench: MetaServer lookups at $META_FILLS synthetic cards: $META_COUNT uncached lookups, then ${META_SECS}s at 1, 2, 4, 8 processes"
	: >"$KRC_RUN/meta_bench.out"
	for fill in $META_FILLS; do
		ok=0
		meta_reload "$fill" && ok=1
		barrier "meta_filled_$fill" 300
		if [ $ok = 1 ]; then
			meta_run lat "$fill" "$META_COUNT" ||
				fail "meta_bench lat $fill"
			meta_run rate "$fill" "$META_SECS" 1 2 4 8 ||
				fail "meta_bench rate $fill"
		fi
		barrier "meta_done_$fill" 900
	done
fi
# make bench runs first contact alone on three nodes (KRC_BENCH_FC=0 here).
if [ "${KRC_BENCH_FC:-1}" != 0 ]; then
	sh "$KRC_REPO/bench/first_contact.sh" || fail "first_contact"
fi
krc_unload
finish
