#!/bin/sh
# nodes: 4
# timeout: 900
# The RC cap (issue 10: bounded QP state at any cluster size), dg_policy=1:
#   A. node1 with rc_max=1 talks to three peers (node0, node2, node3) from
#      one process, 60 rounds of [WRITE, READ back, FAA +1] to each in
#      turn, twice over: it never holds more than one RC connection (the
#      kernel's high-water mark of places taken, rc_high_water); the
#      least recently used one is closed with its peer (a close
#      handshake) for the next peer's, its VQ goes on over datagrams and
#      back to RC; every round exact (nothing lost, repeated or reordered).
#   B. node2 with rc_max=1, holding a connection to node1, gets a
#      handshake from node3: refused (ENOSPC) while its connection is in
#      its place; node2 closes its idle one in the background, node3's
#      retry gets in; node3's traffic, on datagrams meanwhile, ends on RC.
#      Then node1 asks node2 for RC alone (dg_policy=0): its qconnect
#      fails with ENOSPC, node2 being at its cap. Counts are the
#      differences over the part; node1 and node2 never held more than
#      rc_max places at once (rc_high_water).
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
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
	"$KRC_TBIN/dp_serve" "$KRC_RUN/srv.$KRC_NODE" &
	srv=$!
fi
[ "$KRC_NODE" != 0 ] && { wait_for 90 'krctl status | grep -q "metaserver: registered"' ||
	fail "registered with the MetaServer"; }
barrier up

# snap NAME...: the counters' values now; since NAME: how much counter
# NAME grew since (nothing, so that eq and ge fail, if either is missing).
snap() {
	for c in "$@"; do
		eval "snap_$c=\$(counter \"\$c\")"
	done
}
since() {
	eval "_was=\${snap_$1:-}"
	_now=$(counter "$1") && [ -n "$_was" ] && [ -n "$_now" ] &&
		echo $((_now - _was))
}

# A
snap rc_evictions rc_vqs_to_dgram dg_switches rc_closed_by_peer
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
	check "A: never more than one RC place taken at once (rc_max=1: rc_high_water 1)" \
		'eq "$(counter rc_high_water)" 1'
	check "A: rounds on RC and on datagrams" \
		'echo "$out" | grep -Eq "[1-9][0-9]* on datagrams, [1-9][0-9]* on RC"'
	ev=$(since rc_evictions)
	log "during A: rc_evictions $ev rc_vqs_to_dgram $(since rc_vqs_to_dgram) dg_switches $(since dg_switches); rc_capped $(counter rc_capped) rc_evict_busy $(counter rc_evict_busy)"
	check "A: connections closed for others (three peers, one place)" \
		'ge "$ev" 2'
	check "A: VQs moved to datagrams and back" \
		'ge "$(since rc_vqs_to_dgram)" 2 && ge "$(since dg_switches)" 3'
	check "A: one RC place held at most, one now" \
		'eq $(($(counter rc_place_created) - $(counter rc_place_destroyed))) 1'
	krctl peers
fi
barrier a_done
if [ "$KRC_NODE" != 1 ]; then
	log "during A: rc_closed_by_peer $(since rc_closed_by_peer) rc_close_req_recv $(counter rc_close_req_recv)"
	check "A: this node closed its end when node1 asked" \
		'ge "$(since rc_closed_by_peer)" 1'
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
# Counts over B (from here, node2 at its cap).
snap rc_capped hs_nak_sent hs_nak_recv hs_refused_cap rc_evictions \
	rc_place_created rc_place_destroyed qconnect_failed
barrier b_full
if [ "$KRC_NODE" = 3 ]; then
	out=$("$KRC_TBIN/dg_once" "$(node_ip 2)" "$KRC_RUN/srv.2" seq 600)
	rc=$?
	echo "$out"
	check "B: node3's 600 rounds to node2, every one exact" '[ $rc -eq 0 ]'
	check "B: ... began on datagrams and ended on RC" \
		'echo "$out" | grep -Eq "[1-9][0-9]* on datagrams, [1-9][0-9]* on RC"'
	log "during B: hs_nak_recv $(since hs_nak_recv)"
	check "B: node3's handshake was refused (a NAK) before it got in" \
		'ge "$(since hs_nak_recv)" 1'
fi
barrier b_done
if [ "$KRC_NODE" = 2 ]; then
	log "during B: rc_capped $(since rc_capped) hs_nak_sent $(since hs_nak_sent) hs_refused_cap $(since hs_refused_cap) rc_evictions $(since rc_evictions) rc_place_created $(since rc_place_created) rc_place_destroyed $(since rc_place_destroyed)"
	check "B: node2 refused node3's handshake at its RC cap" \
		'ge "$(since rc_capped)" 1'
	check "B: ... every NAK it sent was such a refusal (none for half-open)" \
		'eq "$(since hs_nak_sent)" "$(since rc_capped)" && eq "$(since hs_refused_cap)" 0'
	check "B: ... and closed its idle connection (to node1) for it, once" \
		'eq "$(since rc_evictions)" 1'
	check "B: node3's connection took the place node1's gave back" \
		'eq "$(since rc_place_created)" 1 && eq "$(since rc_place_destroyed)" 1'
	check "B: node2 holds one RC place" \
		'eq $(($(counter rc_place_created) - $(counter rc_place_destroyed))) 1'
fi
barrier b_checked

# B, the refusal itself: node1 asks node2 (at its cap, node3's connection
# in its place) for RC alone: the qconnect fails with ENOSPC.
snap rc_capped hs_nak_sent hs_nak_recv qconnect_failed rc_evictions
barrier b2_ready
if [ "$KRC_NODE" = 1 ]; then
	param dg_policy 0
	err=$(krctl connect "$(node_ip 2)" 2>&1)
	rc=$?
	param dg_policy 1
	echo "$err"
	check "B: RC alone to a node at its cap: ENOSPC (krctl exit 1)" \
		'[ $rc -eq 1 ] && echo "$err" | grep -q "(No space left on device)$" &&
		 ! echo "$err" | grep -q "^path="'
	check "B: ... the peer's NAK received, the qconnect counted as failed" \
		'ge "$(since hs_nak_recv)" 1 && eq "$(since qconnect_failed)" 1'
fi
barrier b2_done
if [ "$KRC_NODE" = 2 ]; then
	check "B: node2 refused node1 at its cap" \
		'ge "$(since rc_capped)" 1 && eq "$(since hs_nak_sent)" "$(since rc_capped)"'
	check "B: ... and closed its idle connection (to node3) for a later attempt" \
		'wait_for 10 "eq \"\$(since rc_evictions)\" 1"'
fi
case $KRC_NODE in
1 | 2)
	check "the most RC places this node held at once: rc_max (1)" \
		'eq "$(counter rc_high_water)" 1'
	;;
esac
barrier b2_checked

if [ "$KRC_NODE" != 1 ]; then
	touch "$KRC_RUN/srv.$KRC_NODE.stop"
	check "server process done" "wait $srv"
fi
barrier end
check "every VQ closed" 'eq "$(counter vq_created)" "$(counter vq_destroyed)"'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
