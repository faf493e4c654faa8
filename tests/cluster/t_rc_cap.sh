#!/bin/sh
# nodes: 4
# timeout: 900
# The RC cap (issue 10: bounded QP state at any cluster size), dg_policy=1:
#   A. node1 with rc_max=1 talks to three peers (node0, node2, node3) from
#      one process, 60 rounds of [WRITE, READ back, FAA +1] to each in
#      turn, twice over: it never holds more than one RC connection;
#      the least recently used one is closed with its peer (a close
#      handshake) for the next peer's, its VQ goes on over datagrams and
#      back to RC; every round exact (nothing lost, repeated or reordered).
#   B. node2 with rc_max=1, holding a connection to node1, gets a
#      handshake from node3: refused (ENOSPC) while its connection is in
#      its place; node2 closes its idle one in the background, node3's
#      retry gets in; node3's traffic, on datagrams meanwhile, ends on RC.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
DP=$KRC_TBIN/dp_test
# rc_idle_ms is also how long a node waits after a refusal (ENOSPC)
# before it asks for RC again: 100 ms everywhere.
CAP="pool_size=1 dg_policy=1 rc_idle_ms=100"

case $KRC_NODE in
1 | 2) CAP="$CAP rc_max=1" ;;
esac
if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" "krc_load meta_host=1 $CAP"
else
	barrier meta_up
	check "member loads ($CAP)" "krc_load meta_server=$META $CAP"
fi
[ "$KRC_NODE" = 0 ] && barrier meta_up
if [ "$KRC_NODE" != 1 ]; then
	"$DP" serve "$KRC_RUN/srv.$KRC_NODE" &
	srv=$!
fi
[ "$KRC_NODE" != 0 ] && { wait_for 90 'krctl status | grep -q "metaserver: registered"' ||
	fail "registered with the MetaServer"; }
barrier up

# A
if [ "$KRC_NODE" = 1 ]; then
	for p in 0 2 3; do
		wait_for 60 "[ -e \"$KRC_RUN/srv.$p\" ]"
	done
	out=$("$KRC_TBIN/rc_cap" 360 60 "$META" "$KRC_RUN/srv.0" \
		"$(node_ip 2)" "$KRC_RUN/srv.2" "$(node_ip 3)" "$KRC_RUN/srv.3")
	rc=$?
	echo "$out"
	check "A: 360 rounds to three peers, every one exact" \
		'[ $rc -eq 0 ] && echo "$out" | grep -q "360 rounds over 3 peers, .* 0 wrong"'
	check "A: never more than one RC connection (rc_max=1)" \
		'echo "$out" | grep -q "most RC connections 1$"'
	check "A: rounds on RC and on datagrams" \
		'echo "$out" | grep -Eq "[1-9][0-9]* on datagrams, [1-9][0-9]* on RC"'
	ev=$(counter rc_evictions)
	log "rc_evictions $ev rc_capped $(counter rc_capped) rc_evict_busy $(counter rc_evict_busy) rc_vqs_to_dgram $(counter rc_vqs_to_dgram) dg_switches $(counter dg_switches)"
	check "A: connections closed for others (three peers, one place)" \
		'ge "$ev" 2'
	check "A: VQs moved to datagrams and back" \
		'ge "$(counter rc_vqs_to_dgram)" 2 && ge "$(counter dg_switches)" 3'
	check "A: one RC place held at most, one now" \
		'eq $(($(counter rc_place_created) - $(counter rc_place_destroyed))) 1'
	krctl peers
fi
barrier a_done
if [ "$KRC_NODE" != 1 ]; then
	log "rc_closed_by_peer $(counter rc_closed_by_peer) rc_close_req_recv $(counter rc_close_req_recv)"
	check "A: this node closed its end when node1 asked" \
		'ge "$(counter rc_closed_by_peer)" 1'
fi
barrier a_checked

# B: node2 holds one connection (to node1), then node3 wants one.
if [ "$KRC_NODE" = 1 ]; then
	check "B: node1 connects to node2 (its connection takes node2's place)" \
		'krctl connect "$(node_ip 2)" >/dev/null'
	check "B: ... on RC once built" \
		'wait_for 20 "peer_block $(node_ip 2) | grep -q \"conn .*ready\""'
fi
barrier b_held
if [ "$KRC_NODE" = 2 ]; then
	check "B: node2 is at its cap" \
		'wait_for 20 "eq \$((\$(counter rc_place_created) - \$(counter rc_place_destroyed))) 1"'
fi
barrier b_full
if [ "$KRC_NODE" = 3 ]; then
	out=$("$KRC_TBIN/dg_once" "$(node_ip 2)" "$KRC_RUN/srv.2" seq 600)
	rc=$?
	echo "$out"
	check "B: node3's 600 rounds to node2, every one exact" '[ $rc -eq 0 ]'
	check "B: ... began on datagrams and ended on RC" \
		'echo "$out" | grep -Eq "[1-9][0-9]* on datagrams, [1-9][0-9]* on RC"'
fi
barrier b_done
if [ "$KRC_NODE" = 2 ]; then
	log "rc_capped $(counter rc_capped) rc_evictions $(counter rc_evictions) hs_nak_sent $(counter hs_nak_sent)"
	check "B: node2 refused a handshake at its cap" 'ge "$(counter rc_capped)" 1'
	check "B: ... and closed its idle connection for it" \
		'ge "$(counter rc_evictions)" 1'
	check "B: node2 holds one RC place" \
		'eq $(($(counter rc_place_created) - $(counter rc_place_destroyed))) 1'
fi
barrier b_checked

if [ "$KRC_NODE" != 1 ]; then
	touch "$KRC_RUN/srv.$KRC_NODE.stop"
	check "server process done" "wait $srv"
fi
barrier end
check "every VQ closed" 'eq "$(counter vq_created)" "$(counter vq_destroyed)"'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
