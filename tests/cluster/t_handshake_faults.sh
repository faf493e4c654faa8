#!/bin/sh
# nodes: 4
# The handshake under loss and failure, with fault injection on the
# receiving side (pool_size=1, so each pair of nodes makes one handshake):
#   A. node0 -> node1, node1 loses the first two REQs: retransmitted.
#   B. node0 -> node2, node0 loses the REP: the repeated REQ is answered
#      with the same connection, not a second one.
#   C. node1 -> node2, node2 loses the RTU: repeated until acknowledged.
#   D. node1 -> node3, node3 ignores every REQ: a dead peer, ETIMEDOUT
#      within the bound, clear message; once it answers again, it works.
#   E. malformed datagrams at node3's control QP: counted and dropped;
#      the control QP fails anyway: it is reset (same QPN) and works.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
N1=$(node_ip 1)
N2=$(node_ip 2)
N3=$(node_ip 3)

# The RC handshake path (dg_policy=0), whatever the default: every
# first contact here is the handshake the faults are injected into
# (docs/dg-policy-audit.md).
if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1 dg_policy=0 pool_size=1'
	barrier up
else
	barrier up
	check "member loads" "krc_load meta_server=$META dg_policy=0 pool_size=1"
fi
barrier loaded

# A and B count exact attempts: node0 waits 1 s (then 2 s) for an answer,
# so that a guest the host starves for a moment (TCG on a loaded machine)
# does not make it send one more REQ than the drops need.
[ "$KRC_NODE" = 0 ] && param hs_timeout_ms 1000

# A
[ "$KRC_NODE" = 1 ] && param fault_ctrl_drop_type 1 && param fault_ctrl_drop_rx 2
barrier a_ready
if [ "$KRC_NODE" = 0 ]; then
	out=$(krctl connect "$N1")
	echo "$out"
	check "A: connected after two retransmissions" \
		'echo "$out" | grep -q "path=lookup+handshake reads=1 attempts=3"'
	check "A: retransmissions counted" 'eq "$(counter hs_retransmits)" 2'
fi
barrier a_done
[ "$KRC_NODE" = 1 ] && check "A: node1 dropped two REQs" 'eq "$(counter ctrl_rx_dropped)" 2'

# B
[ "$KRC_NODE" = 0 ] && param fault_ctrl_drop_type 2 && param fault_ctrl_drop_rx 1
barrier b_ready
if [ "$KRC_NODE" = 0 ]; then
	probe "$N2"
	check "B: connected although the REP was lost, and READ over it" \
		'probe_ok "$N2" "path=lookup+handshake reads=1 attempts=2"'
fi
barrier b_done
[ "$KRC_NODE" = 0 ] && param hs_timeout_ms 100
if [ "$KRC_NODE" = 2 ]; then
	check "B: the repeated REQ was recognised" 'eq "$(counter hs_dup_req)" 1'
	check "B: one connection to node0, not two" \
		'wait_for 5 "[ \$(peer_block $META | grep -c \"conn .*ready\") = 1 ]"'
	peer_block "$META"
fi

# C
[ "$KRC_NODE" = 2 ] && param fault_ctrl_drop_type 4 && param fault_ctrl_drop_rx 1
barrier c_ready
if [ "$KRC_NODE" = 1 ]; then
	check "C: connect" 'krctl connect "$N2" >/dev/null'
	check "C: RTU repeated until acknowledged" \
		'wait_for 10 "ge \"\$(counter hs_rtu_sent)\" 2"'
fi
if [ "$KRC_NODE" = 2 ]; then
	check "C: the accepted connection turns ready once an RTU arrives" \
		'wait_for 10 "peer_block $N1 | grep -q \"conn .*: ready.*accepted\""'
	check "C: one RTU was lost" 'eq "$(counter ctrl_rx_dropped)" 1'
fi
barrier c_done

# D
[ "$KRC_NODE" = 3 ] && param fault_ctrl_drop_type 1 && param fault_ctrl_drop_rx 1000
barrier d_ready
if [ "$KRC_NODE" = 1 ]; then
	t0=$(date +%s)
	err=$(krctl connect "$N3" 2>&1)
	rc=$?
	t1=$(date +%s)
	echo "$err"
	check "D: dead peer: the connect fails" '[ $rc -ne 0 ]'
	check "D: ETIMEDOUT with a clear message" \
		'echo "$err" | grep -q "did not answer the handshake (Connection timed out)"'
	check "D: within the bound of 6 attempts with backoff ($((t1 - t0)) s)" \
		'[ $((t1 - t0)) -le 8 ]'
	check "D: the dead peer's QP was destroyed, nothing pooled (card kept)" \
		'eq "$(peer_conns "$N3")" 0'
fi
barrier d_failed
[ "$KRC_NODE" = 3 ] && param fault_ctrl_drop_rx 0
barrier d_revived
if [ "$KRC_NODE" = 1 ]; then
	probe "$N3"
	check "D: once the peer answers, it is reached and READ" \
		'probe_ok "$N3" "path=cached+handshake"'
fi
barrier d_done

# E
if [ "$KRC_NODE" = 1 ]; then
	card=$(krctl lookup "$N3")
	gidx=$(krctl status | sed -n 's/.*rxe0\/1: .* gid\[\([0-9]*\)\].*/\1/p')
	out=$("$KRC_TBIN/ud_garbage" rxe0 "$gidx" "$N3" \
		"$(kv ud_qpn "$card")" "$(kv ud_qkey "$card")" 60)
	echo "$out"
	check "E: 60 malformed datagrams sent" 'echo "$out" | grep -q "sent 60 of 60"'
fi
barrier e_sent
if [ "$KRC_NODE" = 3 ]; then
	check "E: every malformed datagram rejected" \
		'wait_for 5 "eq \"\$(counter ctrl_rx_bad)\" 60"'
fi
if [ "$KRC_NODE" = 0 ]; then
	probe "$N3"
	check "E: node3 still connects after the garbage, READ over it" \
		'probe_ok "$N3" "handshake"'
fi
barrier e_done
[ "$KRC_NODE" = 2 ] && param fault_ctrl_reset 1
barrier f_ready
if [ "$KRC_NODE" = 3 ]; then
	probe "$N2"
	check "F: node2's control QP failed on our REQ, recovered, answered; READ over it" \
		'probe_ok "$N2" "handshake"'
fi
barrier f_done
if [ "$KRC_NODE" = 2 ]; then
	check "F: one control QP recovery" 'eq "$(counter ctrl_recoveries)" 1'
	put ctrl_qpn "$(dmesg | sed -n "s/.*control QP \([0-9]*\) recovered.*/\1/p")"
fi
if [ "$KRC_NODE" = 1 ]; then
	# node1 cached node2's card in C, before the reset: it must still hold.
	qpn=$(get ctrl_qpn 2)
	out=$(krctl lookup "$N2")
	echo "$out"
	check "F: the recovered control QP ($qpn) has the QPN node1 cached before the reset" \
		'[ "$(kv path "$out")" = cached ] && [ -n "$qpn" ] && [ "$(kv ud_qpn "$out")" = "$qpn" ]'
fi
barrier done
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
