#!/bin/sh
# nodes: 2
# timeout: 300
# A request longer than the datagram window completes SUCCESS only if all
# of it executed. node1 serves nothing over RC (dg_policy=3: datagrams
# only); a READ and a WRITE of 256 KiB (about 270 datagrams, four windows)
# lose their stream part way (fault_dg_fail_after: the 20th reply fails
# the stream, as a reloaded peer's STALE reply does): each completes with
# NOT_EXECUTED_OR_UNKNOWN (64), never SUCCESS, and is counted as a
# partial failure. The same requests without the fault succeed with the
# right data, on the stream that replaced the failed one.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/partial.info

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1'
	"$KRC_TBIN/dp_serve" "$INFO" &
	barrier up
else
	barrier up
	check "member loads, datagrams only" "krc_load meta_server=$META dg_policy=3"
fi
barrier loaded

if [ "$KRC_NODE" = 1 ]; then
	P="$KRC_TBIN/dg_partial $META $INFO"
	for op in read write; do
		p0=$(counter dg_partial_failed)
		f0=$(counter dg_fault_failed)
		param fault_dg_fail_after 20
		out=$($P $op 256 2>&1)
		log "$op, stream failed part way: $out"
		check "$op: on the datagram path" 'echo "$out" | grep -q "path=dgram"'
		check "$op: the stream failed (the fault fired once)" \
			'eq $(($(counter dg_fault_failed) - f0)) 1'
		check "$op: completes NOT_EXECUTED_OR_UNKNOWN, not SUCCESS" \
			'[ "$(kv status "$out")" = 64 ]'
		check "$op: counted as a partly sent request failed" \
			'eq $(($(counter dg_partial_failed) - p0)) 1'
		param fault_dg_fail_after 0
		out=$($P $op 256 2>&1)
		log "$op, no fault: $out"
		check "$op: then succeeds on a new stream" '[ "$(kv status "$out")" = 0 ]'
	done
	out=$($P read 256 2>&1)
	check "the server's data, READ back whole" 'echo "$out" | grep -q "status=0 data=ok"'
fi
barrier done
[ "$KRC_NODE" = 0 ] && : >"$INFO.stop"
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
