#!/bin/sh
# nodes: 3
# A member reloads krcore (new incarnation): with a goodbye its peers drop
# their connections and card at once; without one (as after a crash) the
# first failed request makes the peer re-read the card, find the new
# incarnation and reconnect. A handshake naming a wrong incarnation is
# refused (ESTALE) and the requester refreshes the card.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
TWO=$(node_ip 2)

inc_of() {
	sed -n 's/^ *incarnation=//p' | head -n 1
}

# The RC handshake path (dg_policy=0), whatever the default: the
# probes need RC connections, the paths checked are handshakes
# (docs/dg-policy-audit.md).
case "$KRC_NODE" in
0)
	check "MetaServer loads" 'krc_load meta_host=1 dg_policy=0'
	for b in up members probed1 reloaded1 probed2 reloaded2 probed3; do
		barrier $b 200
	done
	barrier done 200
	;;
1)
	barrier up
	check "member loads" "krc_load meta_server=$META dg_policy=0"
	barrier members
	probe "$TWO"
	inc1=$(printf '%s\n' "$probe_out" | inc_of)
	check "probe of node2 over a new connection: READ node2's card" \
		'probe_ok "$TWO" && [ -n "$inc1" ]'
	barrier probed1
	barrier reloaded1
	check "goodbye from node2 received" 'wait_for 5 "ge \"\$(counter goodbye_recv)\" 1"'
	check "connections to node2's old incarnation dropped" \
		'wait_for 5 "eq \"\$(peer_conns $TWO ready)\" 0"'
	probe "$TWO"
	inc2=$(printf '%s\n' "$probe_out" | inc_of)
	check "after the goodbye: a fresh lookup and handshake, READ over it" \
		'probe_ok "$TWO" "path=lookup+handshake"'
	check "the probe reads the new incarnation" '[ -n "$inc2" ] && [ "$inc2" != "$inc1" ]'
	barrier probed2
	barrier reloaded2
	# No goodbye this time: our pool still holds connections to the
	# old incarnation. The first request on one fails...
	out=$(krctl probe "$TWO" 2>&1)
	rc=$?
	echo "$out"
	check "first probe after a silent reload: the pooled connection's READ fails" \
		'[ $rc = 1 ] && echo "$out" | grep -q "^path=pooled" &&
		 echo "$out" | grep -qE "^krctl: probe READ failed \((Input/output error|Connection timed out)\)"'
	# ...and makes us re-read node2's card: every stale connection goes.
	check "the failure made us verify the peer" \
		'wait_for 10 "ge \"\$(counter peer_verified)\" 1"'
	check "node2 seen with a new incarnation" 'ge "$(counter peer_reincarnated)" 1'
	probe "$TWO"
	inc3=$(printf '%s\n' "$probe_out" | inc_of)
	check "then the peer is reached again: READ its new card" \
		'probe_ok "$TWO" && [ -n "$inc3" ] && [ "$inc3" != "$inc2" ] && [ "$inc3" != "$inc1" ]'
	barrier probed3
	# A request naming the wrong incarnation: NAK, refresh, success.
	krctl lookup "$META" >/dev/null
	nak0=$(counter hs_nak_recv)
	param fault_hs_bad_incarnation 1
	probe "$META"
	check "a stale handshake is refused, then succeeds with the card re-read; READ over it" \
		'probe_ok "$META" "path=cached+lookup+handshake" && eq "$(counter hs_nak_recv)" $((nak0 + 1))'
	barrier done
	;;
2)
	barrier up
	check "member loads" "krc_load meta_server=$META dg_policy=0"
	barrier members
	barrier probed1
	check "unload (with goodbye)" krc_unload
	check "reload" "krc_load meta_server=$META dg_policy=0"
	barrier reloaded1
	barrier probed2
	param fault_goodbye_off 1
	check "unload without goodbye" krc_unload
	check "reload" "krc_load meta_server=$META dg_policy=0"
	barrier reloaded2
	barrier probed3
	barrier done
	;;
esac
if [ "$KRC_NODE" = 0 ]; then
	check "the stale request was refused here" 'eq "$(counter hs_stale)" 1'
fi
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
