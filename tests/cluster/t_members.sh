#!/bin/sh
# nodes: 3
# timeout: 900
# Membership (KRCORE_IOC_MEMBERS, krc_members(3), krctl members): node0
# hosts the MetaServer, nodes 1 and 2 are members. Every node lists the
# same three members, each with its own card's node id and incarnation,
# itself marked self and node0 marked the MetaServer, at one generation. A
# query of a list that did not change costs one READ of the MetaServer
# (the directory's generation); of one that did, three (generation,
# records, generation again). Node2 leaves (rmmod): node1, already
# waiting for a change, sees it (another generation, two members, node2
# absent), and so does node0; node2 loads again: listed again with its
# new incarnation, at yet another generation. Then node2 is cut off from
# the MetaServer without unloading (tc drops its packets to and from
# node0, as a crash or a pulled cable would): the MetaServer's keepalive
# is not delivered, it removes node2's card (meta_members_lost 1) and
# node1, waiting, sees node2 gone; node2 hears no keepalive
# (meta_silent); once the link is back it registers again by itself and
# is listed with the same incarnation.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
L=$KRC_RUN/members

gen_of() { sed -n 's/^generation: //p' "$1"; }
count_of() { sed -n 's/^members: //p' "$1"; }
# line_of FILE ADDR: the member line of ADDR
line_of() { grep "^$2 node " "$1"; }
# field_of FILE ADDR N: word N of that line (3: node id, 5: incarnation)
field_of() { line_of "$1" "$2" | awk -v n="$3" '{ print $n }'; }

# listed FILE: every node of the cluster has its card's node id and
# incarnation (as it published them), only this node is self, only node0
# is the MetaServer; $1's count is 3.
listed_all() {
	eq "$(count_of "$1")" 3 || return 1
	for n in 0 1 2; do
		ip=$(node_ip $n)
		[ "$(field_of "$1" "$ip" 3)" = "$(get id$2.$n $n)" ] || return 1
		[ "$(field_of "$1" "$ip" 5)" = "$(get inc$2.$n $n)" ] || return 1
	done
	[ "$(grep -c ' self' "$1")" = 1 ] &&
		line_of "$1" "$KRC_IP" | grep -q ' self' &&
		[ "$(grep -c ' metaserver$' "$1")" = 1 ] &&
		line_of "$1" "$META" | grep -q ' metaserver$'
}

publish_me() {
	card=$(krctl card)
	put "id$1.$KRC_NODE" "$(kv node_id "$card")"
	put "inc$1.$KRC_NODE" "$(kv incarnation "$card")"
}

if [ "$KRC_NODE" = 0 ]; then
	check "module loads (MetaServer)" 'krc_load meta_host=1'
	barrier up
else
	barrier up
	check "module loads" "krc_load meta_server=$META"
	meta_registered
fi
publish_me 1
barrier loaded

# Every node, the same list at the same generation.
check "krctl members lists the three nodes with their cards, self and the MetaServer" \
	'krctl members >"$L.1.$KRC_NODE" && listed_all "$L.1.$KRC_NODE" 1'
cat "$L.1.$KRC_NODE"
put gen1 "$(gen_of "$L.1.$KRC_NODE")"
check "every node sees the same generation" \
	'[ "$(get gen1 0)" = "$(get gen1 1)" ] && [ "$(get gen1 1)" = "$(get gen1 2)" ]'
check "--json: three members, generation as text" \
	'krctl --json members | grep -q "\"count\":3" &&
	 krctl --json members | grep -q "\"generation\":\"$(get gen1 0)\""'
r0=$(counter meta_reads)
krctl members >/dev/null
r1=$(counter meta_reads)
log "READs of an unchanged list: $((r1 - r0))"
check "an unchanged list costs one READ (its generation)" 'eq $((r1 - r0)) 1'
barrier listed

# Node2 leaves while node1 waits for a change.
GEN1=$(get gen1 0)
if [ "$KRC_NODE" = 1 ]; then
	krctl members -w "$GEN1" -t 60000 >"$L.2.1" 2>&1 &
	waiter=$!
	sleep 1
	check "the waiter waits while nothing changes" 'kill -0 $waiter'
fi
barrier waiting
if [ "$KRC_NODE" = 2 ]; then
	check "node2 unloads (leaves)" krc_unload
fi
barrier left
if [ "$KRC_NODE" = 1 ]; then
	check "node1's wait returned" 'wait $waiter'
	cat "$L.2.1"
	check "node1 saw the leave: another generation, two members, node2 absent" \
		'[ "$(gen_of "$L.2.1")" != "$GEN1" ] && eq "$(count_of "$L.2.1")" 2 &&
		 ! line_of "$L.2.1" "$(node_ip 2)"'
fi
if [ "$KRC_NODE" = 0 ]; then
	r0=$(counter meta_reads)
	krctl members >"$L.2.0"
	r1=$(counter meta_reads)
	log "READs of a changed list: $((r1 - r0))"
	check "node0 saw the leave" \
		'[ "$(gen_of "$L.2.0")" != "$GEN1" ] && eq "$(count_of "$L.2.0")" 2 &&
		 ! line_of "$L.2.0" "$(node_ip 2)"'
	check "a changed list costs three READs (generation, records, generation)" \
		'eq $((r1 - r0)) 3'
	put gen2 "$(gen_of "$L.2.0")"
fi
barrier seen

# Node2 comes back: a new incarnation, another generation.
if [ "$KRC_NODE" = 2 ]; then
	check "node2 loads again" "krc_load meta_server=$META"
	meta_registered
fi
publish_me 2
barrier back
if [ "$KRC_NODE" != 2 ]; then
	check "node2 listed again with its new incarnation, at another generation" \
		'krctl members >"$L.3.$KRC_NODE" && listed_all "$L.3.$KRC_NODE" 2 &&
		 [ "$(get inc2.2 2)" != "$(get inc1.2 2)" ] &&
		 [ "$(gen_of "$L.3.$KRC_NODE")" != "$(get gen2 0)" ] &&
		 [ "$(gen_of "$L.3.$KRC_NODE")" != "$GEN1" ]'
else
	check "node2 lists itself and the others again" \
		'krctl members >"$L.3.2" && listed_all "$L.3.2" 2'
fi
barrier listed3

# Node2 is cut off from the MetaServer, its module loaded.
GEN3=$(gen_of "$L.3.1" 2>/dev/null)
[ "$KRC_NODE" = 1 ] && put gen3 "$GEN3"
GEN3=$(get gen3 1)
if [ "$KRC_NODE" = 1 ]; then
	krctl members -w "$GEN3" -t 60000 >"$L.4.1" 2>&1 &
	waiter=$!
fi
barrier waiting2
if [ "$KRC_NODE" = 2 ]; then
	IF=$(ip -o -4 addr show | awk -v ip="$KRC_IP" 'index($4, ip "/") == 1 { print $2 }')
	check "node2 drops its traffic to and from the MetaServer (tc)" \
		'tc qdisc add dev "$IF" root handle 1: prio &&
		 tc filter add dev "$IF" parent 1: protocol ip prio 1 u32 match ip dst "$META/32" action drop &&
		 tc qdisc add dev "$IF" ingress &&
		 tc filter add dev "$IF" parent ffff: protocol ip prio 1 u32 match ip src "$META/32" action drop'
	check "node2 notices the MetaServer's silence" \
		'wait_for 60 "ge \"\$(counter meta_silent)\" 1"'
fi
if [ "$KRC_NODE" = 1 ]; then
	check "node1's wait returned" 'wait $waiter'
	cat "$L.4.1"
	check "node1 saw node2 cut off: another generation, two members, node2 absent" \
		'[ "$(gen_of "$L.4.1")" != "$GEN3" ] && eq "$(count_of "$L.4.1")" 2 &&
		 ! line_of "$L.4.1" "$(node_ip 2)"'
fi
if [ "$KRC_NODE" = 0 ]; then
	check "the MetaServer lost one member to an undelivered keepalive" \
		'wait_for 60 "eq \"\$(counter meta_members_lost)\" 1"'
fi
barrier cut 180
if [ "$KRC_NODE" = 2 ]; then
	check "node2's link to the MetaServer is back" \
		'tc qdisc del dev "$IF" root && tc qdisc del dev "$IF" ingress'
fi
barrier uncut
if [ "$KRC_NODE" = 1 ]; then
	check "node2 registered again by itself: listed with the same incarnation" \
		'wait_for 60 "krctl members >\"$L.5.1\" && listed_all \"$L.5.1\" 2"'
fi
barrier done
check "kernel log clean" dmesg_clean
finish
