#!/bin/sh
# nodes: 2
# A member loads while the MetaServer is down (node0 has not loaded
# krcore yet). Meanwhile, defined and checked here: the load succeeds
# within the one connection attempt (no wait for the MetaServer), the log
# says it retries in the background, the status says "down (retrying)",
# the node's own card and its loopback connection work, a lookup of
# another node fails at once with EHOSTUNREACH and a clear message, and
# the member keeps retrying. When the MetaServer comes up, the member
# registers by itself (backoff at most 4 s) and the MetaServer node finds
# it with one READ of its table and connects to it.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
MEMBER=$(node_ip 1)

if [ "$KRC_NODE" = 1 ]; then
	start=$(date +%s)
	check "member loads while the MetaServer is down" \
		"krc_load meta_server=$META"
	took=$(($(date +%s) - start))
	log "insmod took $took s"
	check "the load did not wait for the MetaServer (< 15 s)" '[ $took -lt 15 ]'
	check "the log says the MetaServer is unreachable, retried in the background" \
		'dmesg | grep -q "krcore: MetaServer $META:471 unreachable (-[0-9]*), retrying in the background"'
	check "status: MetaServer down (retrying)" \
		'krctl status | grep -q "metaserver: down (retrying) at $META"'
	card=$(krctl card)
	check "the node's card is complete (control QP)" \
		'[ "$(kv addr "$card")" = "$MEMBER" ] && ge "$(kv ud_qpn "$card")" 2'
	out=$(krctl connect "$MEMBER")
	echo "$out"
	check "a VQ connects to this node itself (loopback)" \
		'echo "$out" | grep -q "^path=[a-z+]*local"'
	u0=$(counter meta_unreachable)
	err=$(krctl lookup "$META" 2>&1)
	rc=$?
	echo "$err"
	check "a lookup of another node: EHOSTUNREACH, clear message" \
		'[ $rc -ne 0 ] && echo "$err" | grep -q "no cached card and the MetaServer is unreachable (No route to host)"'
	check "counted as MetaServer unreachable" \
		'eq "$(($(counter meta_unreachable) - u0))" 1'
	check "nothing registered, nothing cached" \
		'eq "$(counter meta_connects)" 0 && ! krctl peers | grep -q "peer $META"'
	check "the member keeps retrying" \
		'wait_for 30 "ge \"\$(counter meta_reconnects)\" 2"'
	barrier meanwhile_checked
	barrier meta_up
	check "the member registers once the MetaServer is up" \
		'wait_for 30 "krctl status | grep -q \"metaserver: registered at $META\""'
	check "one registration (meta_connects)" 'eq "$(counter meta_connects)" 1'
	check "the log says so" \
		'dmesg | grep -q "krcore: registered with MetaServer $META (table of 131072 slots"'
	publish_card
	barrier registered
	out=$(krctl lookup "$META")
	echo "$out"
	check "the member now finds the MetaServer node (one READ)" \
		'[ "$(kv path "$out")" = lookup ] && eq "$(kv reads "$out")" 1'
	barrier found
else
	barrier meanwhile_checked
	check "MetaServer loads" 'krc_load meta_host=1'
	barrier meta_up
	check "the member's card arrives in the table" \
		'wait_for 30 "krctl status | grep -q \"hosted here: 2 cards\""'
	barrier registered
	out=$(krctl lookup "$MEMBER")
	echo "$out"
	check "the member is found by a lookup: one READ" \
		'[ "$(kv path "$out")" = lookup ] && eq "$(kv reads "$out")" 1'
	check "it is the member's current card (incarnation)" \
		'[ "$(kv incarnation "$out")" = "$(kv incarnation "$(card_of 1)")" ]'
	out=$(krctl connect "$MEMBER")
	echo "$out"
	# handshake (RC) or, with dg_policy 1-3, datagram
	check "and connected to" 'echo "$out" | grep -qE "^path=.*(handshake|datagram)"'
	barrier found
fi
# The member leaves first (it deregisters), the MetaServer last.
if [ "$KRC_NODE" = 0 ]; then
	barrier member_gone
	check "module unloads" krc_unload
else
	check "module unloads" krc_unload
	barrier member_gone
fi
check "kernel log clean" dmesg_clean
finish
