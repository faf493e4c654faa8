#!/bin/sh
# nodes: 2
# Both nodes connect to each other at the same moment. Each serves the
# other's request while its own is pending; both ends end with two
# working connection pairs (one initiated, one accepted). Each side loses
# the first three replies to its own request, so that both handshakes
# last long enough to surely overlap.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
PEER=$(node_ip $((1 - KRC_NODE)))

# The RC handshake path (dg_policy=0), whatever the default: the
# crossed handshakes are the test (docs/dg-policy-audit.md).
if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1 dg_policy=0 pool_size=1'
else
	barrier meta_up
	check "module loads" "krc_load meta_server=$META dg_policy=0 pool_size=1"
fi
[ "$KRC_NODE" = 0 ] && barrier meta_up
barrier loaded
krctl lookup "$PEER" >/dev/null
param fault_ctrl_drop_type 2
param fault_ctrl_drop_rx 3
# Exact attempts below: wait 1 s (then 2 s) for each answer, so that a
# guest starved by a loaded host does not send one REQ more than the
# drops need.
param hs_timeout_ms 1000
barrier go
probe "$PEER"
check "connect + probe's READ succeeded (replies lost: card checked, request repeated)" \
	'probe_ok "$PEER" "path=cached+lookup+handshake reads=1 attempts=4"'
check "the peer's request arrived while ours was pending" 'ge "$(counter hs_crossed)" 1'
check "served the peer's request once, answered its repeats" \
	'eq "$(counter hs_req_recv)" 4 && eq "$(counter hs_dup_req)" 3'
barrier probed
check "two ready connections: one initiated, one accepted" \
	'wait_for 10 "[ \$(peer_block $PEER | grep -c \"ready.*initiated here\") = 1 ] && [ \$(peer_block $PEER | grep -c \"ready.*accepted\") = 1 ]"'
peer_block "$PEER"
# Both pairs carry the VQs of this node: held VQs spread over them.
out=$("$KRC_TBIN/qconnect_storm" "$PEER" 1 8 1)
echo "$out"
check "8 held VQs share both connections" \
	'echo "$out" | grep -q ": 0 failed, 0 children failed" && echo "$out" | grep -q "pooled connections used: 2"'
barrier done
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
