#!/bin/sh
# nodes: 2
# 1,000 qconnects from 20 processes to one node share the pooled
# connections: the counters prove that no process got a QP of its own.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
POOL=2
SPARES=4

# The RC handshake path (dg_policy=0), whatever the default: exactly
# one qconnect pays a handshake, every other is pooled
# (docs/dg-policy-audit.md).
if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" "krc_load meta_host=1 dg_policy=0 pool_size=$POOL spare_qps=$SPARES"
	barrier up
	barrier storm_done
	check "node0 accepted exactly the pool" \
		'eq "$(counter hs_req_recv)" '$POOL' && eq "$(counter hs_rep_sent)" '$POOL
else
	barrier up
	check "member loads" "krc_load meta_server=$META dg_policy=0 pool_size=$POOL spare_qps=$SPARES"
	qp0=$(counter qp_created)
	out=$("$KRC_TBIN/qconnect_storm" "$META" 20 50)
	rc=$?
	echo "$out"
	tot=$(echo "$out" | sed -n 's/^totals: //p')
	check "1000 qconnects, none failed, every process exited 0" \
		'[ $rc = 0 ] && eq "$(kv qconnects "$tot")" 1000 && eq "$(kv failed "$tot")" 0'
	check "exactly one qconnect paid a handshake" \
		'eq "$(counter qconnect_handshake)" 1 && eq "$(kv handshakes "$tot")" 1'
	check "every other one was pooled" \
		'ge "$(counter qconnect_pooled)" 999 && eq "$(kv pooled "$tot")" 999'
	check "they used 1 to $POOL connections ($(kv conns "$tot"))" \
		'ge "$(kv conns "$tot")" 1 && ge '$POOL' "$(kv conns "$tot")"'
	check "one MetaServer READ in all" 'eq "$(counter meta_reads)" 1'
	check "pool grew to pool_size in the background" \
		'wait_for 10 "eq \"\$(counter hs_connected)\" '$POOL'"'
	qp1=$(counter qp_created)
	check "QPs created during 1000 qconnects: only spare refills ($((qp1 - qp0)) <= $POOL)" \
		'[ $((qp1 - qp0)) -le '$POOL' ]'
	krctl peers
	check "$POOL ready connections to node0" \
		'[ "$(peer_block "$META" | grep -c "conn .*: ready")" = '$POOL' ]'
	out=$("$KRC_TBIN/qconnect_storm" "$META" 16 8 1)
	rc=$?
	echo "$out"
	tot=$(echo "$out" | sed -n 's/^totals: //p')
	check "128 VQs held open at once, none failed" \
		'[ $rc = 0 ] && eq "$(kv qconnects "$tot")" 128 && eq "$(kv failed "$tot")" 0'
	check "... all pooled, spread over exactly the $POOL connections" \
		'eq "$(kv pooled "$tot")" 128 && eq "$(kv conns "$tot")" '$POOL' && eq "$(counter hs_connected)" '$POOL
	barrier storm_done
fi
barrier end
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
