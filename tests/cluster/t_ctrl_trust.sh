#!/bin/sh
# nodes: 3
# timeout: 400
# Control-plane trust (issue 7): node0 is the MetaServer, node1 the
# target, and a process of node2 with user-space verbs the liar.
#   A. half-open connections are capped: with max_half_open_per_peer=0
#      node1 refuses node2's handshake (NAK EBUSY), counted;
#   B. node2's process sends node1 REQs, GOODBYEs and REPs (guessed
#      request ids) that carry node0's card, then node2's own card (its
#      control QP) from a QP of its own: dropped as spoofed (they do not
#      come from the GID, or the QP, their card names);
#   C. it sends REQs and GOODBYEs carrying a card of node2 that names its
#      own QP: the source checks pass, but a process holds no cluster key:
#      without the control MAC every one is dropped before the handshake
#      sees it (ctrl_rx_bad_mac; before the key, the REQs were found
#      unverified by the MetaServer and the GOODBYEs stray);
#   D. a flood of REQs from 200 made-up nodes: dropped, no peer created;
#   then node1's cached cards are unchanged and its pooled connections to
#   node0 and node2 still carry traffic;
#   E. a member that registers a card of another address is refused;
#      the MetaServer caps its members: with meta_max_members=0 (node1
#      keeps reconnecting, so any other cap would race with it), node2
#      reloading is refused.
. "$KRC_REPO/tests/cluster/lib.sh"
N0=$(node_ip 0)
N1=$(node_ip 1)
N2=$(node_ip 2)
card_field() {
	krctl lookup "$1" | sed -n "s/^ *$2=//p" | head -n 1
}

# The RC handshake path (dg_policy=0), whatever the default: A is a
# handshake refused at the half-open cap, the probes need RC
# connections (docs/dg-policy-audit.md).
if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1 dg_policy=0 pool_size=1'
	barrier up
else
	barrier up
	check "member loads" "krc_load meta_server=$N0 dg_policy=0 pool_size=1"
fi
barrier loaded

# A
[ "$KRC_NODE" = 1 ] && param max_half_open_per_peer 0
barrier a_ready
if [ "$KRC_NODE" = 2 ]; then
	out=$(krctl connect "$N1" 2>&1)
	echo "$out"
	check "A: node1 refused the handshake (half-open cap)" '! echo "$out" | grep -q "path="'
fi
barrier a_done
if [ "$KRC_NODE" = 1 ]; then
	check "A: refusal counted" 'ge "$(counter hs_refused_cap)" 1'
	param max_half_open_per_peer 8
	probe "$N0"
	check "A: connects to node0, READ over it" 'probe_ok "$N0"'
	probe "$N2"
	check "A: connects to node2, READ over it" 'probe_ok "$N2"'
	put qpn1 "$(card_field "$N1" ud_qpn)"
	put qkey1 "$(card_field "$N1" ud_qkey)"
	put inc0 "$(card_field "$N0" incarnation)"
	put qpn0 "$(card_field "$N0" ud_qpn)"
	put inc2 "$(card_field "$N2" incarnation)"
	put qpn2 "$(card_field "$N2" ud_qpn)"
	before0="$(card_field "$N0" ud_qpn) $(card_field "$N0" incarnation)"
	before2="$(card_field "$N2" ud_qpn) $(card_field "$N2" incarnation)"
	peers=$(krctl status | sed -n 's/.*peers \([0-9]*\),.*/\1/p')
	rx0=$(counter ctrl_rx)
	sp0=$(counter ctrl_rx_spoofed)
	un0=$(counter hs_unverified)
	st0=$(counter hs_stray)
	mac0=$(counter ctrl_rx_bad_mac)
	lk0=$(counter src_lookups)
fi
barrier connected

if [ "$KRC_NODE" = 2 ]; then
	gidx=$(krctl status | sed -n 's/.*rxe0\/1: .* gid\[\([0-9]*\)\].*/\1/p')
	Q=$(get qpn1 1)
	K=$(get qkey1 1)
	G="$KRC_TBIN/ud_garbage rxe0 $gidx $N1 $Q $K"
	check "B: 30 messages with node0's card sent" \
		"$G 30 as $N0 $(get qpn0 1) $(get inc0 1) | grep -q 'sent 30 of 30'"
	check "B: 20 messages with node2's own card (its control QP) sent from a process's QP" \
		"$G 20 as $N2 $(get qpn2 1) $(get inc2 1) | grep -q 'sent 20 of 20'"
	check "C: 20 messages with a card of node2 naming a process's QP sent" \
		"$G 20 self $N2 0 $(get inc2 1) | grep -q 'sent 20 of 20'"
	check "D: 200 REQs from made-up nodes sent" \
		"$G 200 flood | grep -q 'sent 200 of 200'"
fi
barrier attacked

if [ "$KRC_NODE" = 1 ]; then
	sleep 3
	rx=$(($(counter ctrl_rx) - rx0))
	sp=$(($(counter ctrl_rx_spoofed) - sp0))
	un=$(($(counter hs_unverified) - un0))
	st=$(($(counter hs_stray) - st0))
	mac=$(($(counter ctrl_rx_bad_mac) - mac0))
	log "received $rx: spoofed $sp, without the key's MAC $mac, unverified $un, stray $st"
	check "B: the 30 messages with node0's card and the 20 with node2's control QP dropped as spoofed" \
		'ge "$sp" 50'
	check "C: the 20 messages from a process's own QP dropped: no cluster key" 'eq "$mac" 20'
	check "C: none reached the handshake, none cost a MetaServer READ" \
		'eq "$un" 0 && eq "$st" 0 && eq "$(counter src_lookups)" "$lk0"'
	check "B-D: every message received was dropped (a UD flood may lose some)" \
		'eq "$rx" $((sp + mac))'
	check "no peer created by the flood" \
		'eq "$(krctl status | sed -n "s/.*peers \([0-9]*\),.*/\1/p")" "$peers"'
	check "node0's cached card unchanged" \
		'[ "$(card_field "$N0" ud_qpn) $(card_field "$N0" incarnation)" = "$before0" ]'
	check "node2's cached card unchanged" \
		'[ "$(card_field "$N2" ud_qpn) $(card_field "$N2" incarnation)" = "$before2" ]'
	probe "$N0"
	check "the pooled connection to node0 still works: READ over it" \
		'probe_ok "$N0" "path=pooled"'
	probe "$N2"
	check "the pooled connection to node2 still works: READ over it" \
		'probe_ok "$N2" "path=pooled"'
fi
barrier checked

# E
if [ "$KRC_NODE" = 1 ]; then
	check "E: node1 reloads and registers a card of another address" \
		"krc_unload && krc_load meta_server=$N0 dg_policy=0 pool_size=1 fault_meta_foreign_card=1"
	check "E: ... refused: not registered" \
		'sleep 3; ! krctl status | grep -q "metaserver: registered"'
fi
barrier e_foreign
if [ "$KRC_NODE" = 0 ]; then
	check "E: the foreign card was refused" 'ge "$(counter meta_refused)" 1'
	foreign="${N1%.*}.$((${N1##*.} ^ 64))"
	check "E: ... and is not in the table" '! krctl lookup "$foreign" -f >/dev/null 2>&1'
	param meta_max_members 0
	refused=$(counter meta_refused)
fi
barrier e_ready
if [ "$KRC_NODE" = 2 ]; then
	check "E: node2 reloads" "krc_unload && krc_load meta_server=$N0 dg_policy=0 pool_size=1"
	check "E: ... and is not registered" \
		'sleep 3; ! krctl status | grep -q "metaserver: registered"'
fi
barrier e_done
if [ "$KRC_NODE" = 0 ]; then
	check "E: the member beyond the cap refused" \
		'ge "$(counter meta_refused)" $((refused + 1))'
fi
barrier end
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
