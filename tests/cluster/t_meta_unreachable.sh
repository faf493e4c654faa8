#!/bin/sh
# nodes: 4
# The MetaServer goes away: members keep their pooled connections and
# cached cards (a cached node is still reached by handshake), a lookup of
# an unknown node fails with EHOSTUNREACH and a clear message, and the
# members register again when the MetaServer comes back.
# The datagram variant, node2 to node3 (whose card node2 cached) while the
# MetaServer is down; node3 does not know node2 and cannot look it up:
#   dg_policy=3 (datagrams only, no handshake): node3 drops node2's
#   datagrams (dg_rx_unverified) and the fresh process's READ fails with
#   RETRY_EXC_ERR in bounded time, nothing hangs;
#   dg_policy=1 (the default): the qconnect returns on the datagram path
#   and starts the RC handshake, whose request gives node3 node2's card
#   (taken unverified, as the MetaServer is down): the READ succeeds.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
TWO=$(node_ip 2)
THREE=$(node_ip 3)
ONCE=$KRC_TBIN/dg_once

# The RC handshake path (dg_policy=0) on node1, whatever the default:
# the probes need RC connections, the cached peer is reached by handshake
# (docs/dg-policy-audit.md). node2 takes datagrams first (dg_policy=1).
DG=0
[ "$KRC_NODE" = 2 ] && DG=1
if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1 dg_policy=0'
	barrier up
	barrier members
	barrier cached
	check "MetaServer unloads" krc_unload
	barrier meta_gone
	barrier dg_tried
	barrier tested
	check "MetaServer comes back" 'krc_load meta_host=1 dg_policy=0'
	barrier meta_back
	check "every member registers again" \
		'wait_for 20 "krctl status | grep -q \"hosted here: 4 cards\""'
	barrier registered
	barrier done
else
	barrier up
	check "member loads" "krc_load meta_server=$META dg_policy=$DG"
	if [ "$KRC_NODE" = 3 ]; then
		"$KRC_TBIN/dp_serve" "$KRC_RUN/srv.3" &
		srv=$!
		check "server up" 'wait_for 30 "[ -s \"$KRC_RUN/srv.3\" ]"'
	fi
	barrier members
	if [ "$KRC_NODE" = 1 ]; then
		probe "$TWO"
		check "pooled connection to node2, READ over it" 'probe_ok "$TWO"'
		check "node3's card cached (no connection)" 'krctl lookup "$THREE" >/dev/null'
	fi
	if [ "$KRC_NODE" = 2 ]; then
		check "node2: node3's card cached (no connection)" \
			'krctl lookup "$THREE" >/dev/null'
	fi
	barrier cached
	barrier meta_gone
	check "MetaServer seen down" \
		'wait_for 10 "krctl status | grep -q \"metaserver: down\""'
	if [ "$KRC_NODE" = 1 ]; then
		probe "$TWO"
		check "pooled peer still works: READ over the pooled connection" \
			'probe_ok "$TWO" "path=pooled"'
		probe "$THREE"
		check "cached peer reached by handshake, no MetaServer, READ over it" \
			'probe_ok "$THREE" "path=cached+handshake reads=0"'
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
	if [ "$KRC_NODE" = 2 ]; then
		mr0=$(counter meta_reads)
		echo 3 >/sys/module/krcore/parameters/dg_policy
		t0=$(now_ms)
		out=$("$ONCE" "$THREE" "$KRC_RUN/srv.3")
		rc=$?
		t1=$(now_ms)
		echo "$out"
		check "datagrams only, MetaServer down, a node that does not know us: RETRY_EXC_ERR" \
			'[ $rc -eq 3 ] && echo "$out" | grep -q "path .*cached.*datagram" &&
			 echo "$out" | grep -q "did not answer"'
		check "... in bounded time ($((t1 - t0)) ms < 30000)" '[ $((t1 - t0)) -lt 30000 ]'
		echo 1 >/sys/module/krcore/parameters/dg_policy
		out=$("$ONCE" "$THREE" "$KRC_RUN/srv.3")
		rc=$?
		echo "$out"
		check "dg_policy=1: the first READ of a fresh process succeeds" \
			'[ $rc -eq 0 ] && echo "$out" | grep -q "path .*cached.*datagram.*, success"'
		check "... no MetaServer READ on this side" \
			'eq "$(counter meta_reads)" "$mr0" && eq "$(counter qconnect_datagram)" 2'
		check "... and the RC connection behind it was made" \
			'wait_for 30 "krctl conns | grep -q \"$THREE\""'
	fi
	barrier dg_tried
	if [ "$KRC_NODE" = 3 ]; then
		krctl counters | grep -E "^(dg_(rx|exec|req|rep)|hs_req_recv|meta_)"
		check "node3: node2's datagrams dropped as unverified while it did not know node2" \
			'ge "$(counter dg_rx_unverified)" 2 && eq "$(counter dg_rx_spoofed)" 0'
		check "node3: ... then node2's handshake gave its card: connected" \
			'krctl conns | grep -q "$TWO"'
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
	if [ "$KRC_NODE" = 3 ]; then
		touch "$KRC_RUN/srv.3.stop"
		check "server process done" "wait $srv"
	fi
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
