#!/bin/sh
# nodes: 2
# timeout: 900
# RPC with a receiver that stops reading (pool_size=1 on both nodes: every
# VQ from node1 to node0 shares one RC connection):
#   node0 serves port 9100 without reading it (its ring of 64 fills) and
#   port 9101 normally;
#   node1 starts 200 calls at once to 9100 (process P1): 64 fill the ring,
#   the rest wait for its credit in P1's channel (queued, not dropped);
#   meanwhile another process (P2) makes 100 calls to 9101 over the same
#   connection, all answered while P1's wait;
#   P2's replies are read as they come: node1 grants their port's slots
#   back in batches, at most one GRANT per 4 replies;
#   3 s later node0 starts reading 9100: P1 gets its 200 replies, each its
#   own and once; 9100's server ran exactly 200 calls, 9101's exactly 100;
#   no receive ring dropped or refused a message.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
R=$KRC_TBIN/rpc_test
D=$KRC_RUN/rpc_stall
N1=200
N2=100

if [ "$KRC_NODE" = 0 ]; then
	mkdir -p "$D/a" "$D/b"
	check "MetaServer loads, one pooled connection per peer" \
		'krc_load meta_host=1 pool_size=1'
	"$R" serve 9100 1 "$D/a" hold >"$D/a/out" 2>&1 &
	apid=$!
	"$R" serve 9101 1 "$D/b" >"$D/b/out" 2>&1 &
	bpid=$!
	wait_for 30 '[ -e "$D/a/ready" ] && [ -e "$D/b/ready" ]'
	barrier up
	barrier held 300
	: >"$D/a/go"
	barrier streamed 400
	: >"$D/a/stop"
	: >"$D/b/stop"
	wait $apid
	wait $bpid
	sa=$(cat "$D/a/srv.stats")
	sb=$(cat "$D/b/srv.stats")
	log "9100: $sa"
	log "9101: $sb"
	check "the server that stopped reading ran exactly $N1 calls" \
		'eq "$(kv run "$sa")" $N1'
	check "the other port's server ran exactly $N2 calls" \
		'eq "$(kv run "$sb")" $N2'
	check "nothing dropped or refused at a receive ring" \
		'eq "$(counter msg_dropped)" 0 && eq "$(counter msg_refused)" 0'
else
	barrier up
	check "member loads, one pooled connection per peer" \
		"krc_load meta_server=$META pool_size=1"
	mkdir -p "$D"
	"$R" stream "$META" 9100 $N1 >"$D/p1.out" 2>&1 &
	p1=$!
	wait_for 120 'grep -q "stream: started" "$D/p1.out"'
	t0=$(date +%s)
	g0=$(counter flow_grants_sent)
	out=$("$R" clients "$META" 9101 1 $N2 2>&1)
	rc=$?
	g1=$(counter flow_grants_sent)
	log "$out"
	check "P2's $N2 calls to the other port answered while P1's wait" \
		'[ $rc = 0 ] && echo "$out" | grep -q "ok: every process" &&
		 kill -0 $p1 && ! grep -q "stream: done" "$D/p1.out"'
	# Only P2's reply port took messages here: its slots go back to
	# node0 in batches (common/credit.h), not one GRANT per reply.
	check "P2's $N2 replies: their port's slots granted in batches ($((g1 - g0)) GRANTs, at most $((N2 / 4)))" \
		'[ $((g1 - g0)) -ge 1 ] && [ $((g1 - g0)) -le $((N2 / 4)) ]'
	sleep 3
	check "P1 still waits, $(($(date +%s) - t0)) s after it started" \
		'kill -0 $p1 && ! grep -q "stream: done" "$D/p1.out"'
	barrier held 300
	wait $p1
	rc=$?
	out=$(cat "$D/p1.out")
	log "$out"
	check "P1's $N1 calls answered once each, every reply its own" \
		'[ $rc = 0 ] && echo "$out" | grep -q "ok: every call answered once"'
	check "P1's calls beyond the ring waited for credit in its channel" \
		'ge "$(echo "$out" | sed -n "s/.* queued=\([0-9]*\).*/\1/p")" 1'
	barrier streamed 400
fi
barrier done
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
