#!/bin/sh
# nodes: 4
# The MetaServer goes away: members keep their pooled connections and
# cached cards (a cached node is still reached by handshake), a lookup of
# an unknown node fails with EHOSTUNREACH and a clear message, and the
# members register again when the MetaServer comes back.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
TWO=$(node_ip 2)
THREE=$(node_ip 3)

# The RC handshake path (dg_policy=0), whatever the default: the
# probes need RC connections, the cached peer is reached by handshake
# (docs/dg-policy-audit.md).
if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1 dg_policy=0'
	barrier up
	barrier members
	barrier cached
	check "MetaServer unloads" krc_unload
	barrier meta_gone
	barrier tested
	check "MetaServer comes back" 'krc_load meta_host=1 dg_policy=0'
	barrier meta_back
	check "every member registers again" \
		'wait_for 20 "krctl status | grep -q \"hosted here: 4 cards\""'
	barrier registered
	barrier done
else
	barrier up
	check "member loads" "krc_load meta_server=$META dg_policy=0"
	barrier members
	if [ "$KRC_NODE" = 1 ]; then
		check "pooled connection to node2" 'krctl probe "$TWO" >/dev/null'
		check "node3's card cached (no connection)" 'krctl lookup "$THREE" >/dev/null'
	fi
	barrier cached
	barrier meta_gone
	check "MetaServer seen down" \
		'wait_for 10 "krctl status | grep -q \"metaserver: down\""'
	if [ "$KRC_NODE" = 1 ]; then
		out=$(krctl probe "$TWO")
		echo "$out"
		check "pooled peer still works" 'echo "$out" | grep -q "path=pooled"'
		out=$(krctl probe "$THREE")
		echo "$out"
		check "cached peer reached by handshake, no MetaServer" \
			'echo "$out" | grep -q "path=cached+handshake reads=0"'
		mu0=$(counter meta_unreachable)
		mr0=$(counter meta_reads)
		t0=$(now_ms)
		err=$(krctl connect 10.77.0.99 2>&1)
		rc=$?
		t1=$(now_ms)
		echo "$err"
		# krctl's exit status 6: the MetaServer is unreachable.
		check "unknown node: EHOSTUNREACH, clear message, exit 6" \
			'[ $rc = 6 ] && echo "$err" | grep -q "no cached card and the MetaServer is unreachable (No route to host)"'
		# A lookup attempt would wait for the MetaServer (a connect
		# of up to connect_timeout_ms, 10 s); starting krctl alone
		# takes about a second on a loaded TCG node.
		check "the failure was quick ($((t1 - t0)) ms < 3000), no lookup attempted" \
			'[ $((t1 - t0)) -lt 3000 ] && eq "$(counter meta_unreachable)" $((mu0 + 1)) &&
			 eq "$(counter meta_reads)" "$mr0"'
	fi
	barrier tested
	barrier meta_back
	check "registered again after the MetaServer came back" \
		'wait_for 20 "krctl status | grep -q \"metaserver: registered\""'
	# The new table fills as each member comes back: wait for all.
	barrier registered
	if [ "$KRC_NODE" = 1 ]; then
		out=$(krctl lookup 10.77.0.4 -f)
		check "lookups work again" 'echo "$out" | grep -q "path=lookup"'
	fi
	barrier done
fi
# Members leave first (they deregister), the MetaServer last.
if [ "$KRC_NODE" = 0 ]; then
	barrier members_gone
	check "module unloads" krc_unload
else
	check "module unloads" krc_unload
	barrier members_gone
fi
check "kernel log clean" dmesg_clean
finish
