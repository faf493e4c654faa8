#!/bin/sh
# nodes: 3
# timeout: 500
# The MetaServer is the cluster's trust root: only a node's kernel, which
# holds the cluster key, registers, updates or removes a card
# (common/auth.h, docs/trust-model.md). node0 hosts the table, node1 and
# node2 are members.
#   A. On node1 an unprivileged process (nobody, no capabilities) with
#      user-space rdma_cm: a REGISTER of node1's address with its own UD
#      QP and a MAC it cannot compute is refused and disconnected; a
#      connection that signs nothing is dropped after 5 s; a hello of the
#      old protocol is rejected; one address holds at most two pending
#      connections. node1's card in the table is unchanged throughout.
#   B. A member with another key: the MetaServer fails its proof (the
#      descriptor's MAC), the member registers nothing. Without a key, or
#      with a key file others can read: no registration attempt at all.
#   C. A kernel member whose first REGISTER carries a wrong MAC
#      (fault_meta_bad_mac) is disconnected and registers on its retry.
. "$KRC_REPO/tests/cluster/lib.sh"
N0=$(node_ip 0)
N1=$(node_ip 1)
N2=$(node_ip 2)
PORT=471
FORGE=$KRC_TBIN/meta_forge
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
# The card of $1 as the MetaServer holds it: "ud_qpn incarnation".
table_card() {
	krctl lookup "$1" -f 2>/dev/null |
		sed -n 's/^ *\(ud_qpn\|incarnation\)=//p' | tr '\n' ' '
}
registered() {
	krctl status | grep -q "metaserver: registered"
}

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1'
	barrier up
else
	barrier up
	check "member loads" "krc_load meta_server=$N0"
	check "member registered" 'wait_for 20 registered'
fi
barrier loaded

# A
if [ "$KRC_NODE" = 0 ]; then
	before=$(table_card "$N1")
	log "node1's card in the table: $before"
	put card1 "$before"
	af0=$(counter meta_auth_failed)
	at0=$(counter meta_auth_timeouts)
	rg0=$(counter meta_registered)
fi
barrier a_ready
if [ "$KRC_NODE" = 1 ]; then
	out=$($NOBODY "$FORGE" "$N0" $PORT nomac 2>&1)
	log "$out"
	check "A: the forger ran unprivileged (no capabilities)" \
		'echo "$out" | grep -q "^meta_forge: nomac: desc=ok"'
	check "A: a REGISTER without the key's MAC got no reply" \
		'echo "$out" | grep -q "reply=none"'
	check "A: ... and its connection was dropped at once" \
		'echo "$out" | grep -q "disconnected=yes" && [ "$(kv after_ms "$out")" -lt 3000 ]'
	out=$($NOBODY "$FORGE" "$N0" $PORT silent 2>&1)
	log "$out"
	check "A: a connection that signs nothing is dropped after about 5 s" \
		'echo "$out" | grep -q "disconnected=yes" && [ "$(kv after_ms "$out")" -ge 4000 ] && [ "$(kv after_ms "$out")" -lt 9000 ]'
	out=$($NOBODY "$FORGE" "$N0" $PORT v1 2>&1)
	log "$out"
	check "A: a hello of the old protocol is rejected" \
		'echo "$out" | grep -q "^meta_forge: v1: rejected"'
	out=$($NOBODY "$FORGE" "$N0" $PORT pending 6 2>&1)
	log "$out"
	check "A: one address holds at most two pending connections" \
		'echo "$out" | grep -q "^meta_forge: pending: established=2 rejected=4"'
	out=$($NOBODY "$FORGE" "$N0" $PORT nomac 999 2>&1)
	log "a privileged source port, unprivileged: $out"
	check "A: an unprivileged process cannot use a port below 1024" \
		'! echo "$out" | grep -q "^meta_forge: nomac: desc="'
fi
barrier a_done
if [ "$KRC_NODE" = 0 ]; then
	sleep 6		# the pending connections' deadline
	af=$(($(counter meta_auth_failed) - af0))
	at=$(($(counter meta_auth_timeouts) - at0))
	log "auth failures $af, deadlines $at"
	check "A: the forged REGISTER refused for its MAC" 'eq "$af" 1'
	check "A: the silent connection timed out" 'ge "$at" 1'
	check "A: nothing registered" 'eq "$(counter meta_registered)" "$rg0"'
	check "A: node1's card in the table unchanged" \
		'[ "$(table_card "$N1")" = "$(get card1 0)" ]'
	check "A: the table holds the three members' cards, no more" \
		'krctl status | grep -q "hosted here: 3 cards"'
fi
barrier a_checked

# B: another key, no key, a key others can read
if [ "$KRC_NODE" = 2 ]; then
	(umask 077 && od -An -v -tx1 -N32 /dev/urandom | tr -d ' \n' >/tmp/other.key && echo >>/tmp/other.key)
	check "B: node2 reloads with another key" \
		'krc_unload && krc_load meta_server=$N0 key_file=/tmp/other.key'
	check "B: ... the MetaServer fails its proof, nothing registered" \
		'wait_for 15 "ge \$(counter meta_auth_failed) 1" && ! registered'
	check "B: node2 reloads without a key" \
		'krc_unload && krc_load meta_server=$N0 key_file=/nonexistent'
	check "B: ... and does not even try" \
		'wait_for 15 "ge \$(counter meta_no_key) 1" && ! registered && eq "$(counter meta_connects)" 0'
	cp "$KRC_RUN/cluster.key" /tmp/open.key
	chmod 0644 /tmp/open.key
	check "B: node2 reloads with the cluster key in a file others can read" \
		'krc_unload && krc_load meta_server=$N0 key_file=/tmp/open.key'
	check "B: ... refused as no key" \
		'wait_for 15 "ge \$(counter meta_no_key) 1" && ! registered && dmesg | grep -q "no cluster key from /tmp/open.key (-13"'
fi
barrier b_done
if [ "$KRC_NODE" = 0 ]; then
	check "B: the table has no card of node2 any more (it deregistered first)" \
		'! krctl lookup "$N2" -f >/dev/null 2>&1'
	af0=$(counter meta_auth_failed)
fi
barrier c_ready

# C: a wrong MAC from a kernel member, then its retry
if [ "$KRC_NODE" = 2 ]; then
	check "C: node2 reloads, its first REGISTER's MAC wrong" \
		'krc_unload && krc_load meta_server=$N0 fault_meta_bad_mac=1'
	check "C: ... it registers on a retry" 'wait_for 30 registered'
	check "C: ... after a reconnect" 'ge "$(counter meta_reconnects)" 1'
fi
barrier c_done
if [ "$KRC_NODE" = 0 ]; then
	check "C: the wrong MAC refused once" \
		'eq $(($(counter meta_auth_failed) - af0)) 1'
	check "C: node2's card is back in the table" 'krctl lookup "$N2" -f >/dev/null'
fi
barrier done
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
