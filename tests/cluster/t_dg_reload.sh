#!/bin/sh
# nodes: 3
# The datagram path to a node that reloads: node1 (datagrams only,
# dg_policy 3) READs from node2 over its stream to it; node2's krcore is
# unloaded (a goodbye to node1) and loaded again: a new incarnation, a new
# control QP. node1's next qconnect reads node2's new card and must aim the
# stream at it then, so its first READ is answered by the new incarnation:
# no request sent to the old control QP, no stream failure first.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
TWO=$(node_ip 2)
INFO=$KRC_RUN/srv.info

case "$KRC_NODE" in
0)
	check "MetaServer loads" 'krc_load meta_host=1'
	barrier up
	barrier read1
	barrier reloaded 300
	barrier read2 300
	;;
1)
	barrier up
	check "node1 loads (datagrams only)" "krc_load meta_server=$META dg_policy=3"
	meta_registered
	check "node2 serves" 'wait_for 60 "[ -s \"$INFO.1\" ]"'
	"$KRC_TBIN/dg_once" "$TWO" "$INFO.1" >"$KRC_RUN/once1.out" 2>&1
	rc=$?
	cat "$KRC_RUN/once1.out"
	check "a READ from node2 over datagrams" \
		'[ $rc = 0 ] && grep -q "path .*datagram" "$KRC_RUN/once1.out"'
	barrier read1
	barrier reloaded 300
	check "node2's goodbye received" 'wait_for 10 "ge \"\$(counter goodbye_recv)\" 1"'
	"$KRC_TBIN/dg_once" "$TWO" "$INFO.2" >"$KRC_RUN/once2.out" 2>&1
	rc=$?
	cat "$KRC_RUN/once2.out"
	krctl counters | grep "^dg_" | tr '\n' ' '; echo
	check "the first READ after node2's reload is answered, over datagrams" \
		'[ $rc = 0 ] && grep -q "path .*datagram" "$KRC_RUN/once2.out"'
	check "the stream was aimed at node2's new incarnation at the qconnect" \
		'eq "$(counter dg_retargeted)" 1'
	check "no request of the stream went unanswered" \
		'eq "$(counter dg_timeouts)" 0'
	barrier read2 300
	;;
2)
	barrier up
	check "node2 loads" "krc_load meta_server=$META"
	meta_registered
	"$KRC_TBIN/dp_serve" "$INFO.1" &
	srv=$!
	barrier read1
	kill "$srv"
	wait "$srv" 2>/dev/null
	check "node2 unloads (a goodbye to its peers)" 'wait_for 30 krc_unload'
	check "node2 loads again (a new incarnation)" "krc_load meta_server=$META"
	meta_registered
	"$KRC_TBIN/dp_serve" "$INFO.2" &
	srv=$!
	check "node2 serves again" 'wait_for 60 "[ -s \"$INFO.2\" ]"'
	barrier reloaded 300
	barrier read2 300
	kill "$srv"
	wait "$srv" 2>/dev/null
	;;
esac
barrier end
check "module unloads" 'wait_for 30 krc_unload'
check "kernel log clean" dmesg_clean
finish
