#!/bin/sh
# nodes: 2
# timeout: 300
# Recovery on both ends of shared connections (issue 8): processes on both
# nodes keep READing from each other (4 processes each, 8 READs in flight
# each) while, on both nodes at once, 3 processes break pooled connections
# of the other with bad-rkey WRITE, FAA and CAS: every READ must complete
# successfully (re-posted, never NOT_EXECUTED) and no VQ may stay in
# RECOVERING. Then node1 breaks connections while node0 is idle: node0
# must notice its failed passive ends by itself (a QP event, or the
# watchdog's QP state check), not at its next post.
# `make test-passive-loop` runs it ten times in a row.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
OTHER=$(node_ip $((1 - KRC_NODE)))
INFO=$KRC_RUN/srv.info.$KRC_NODE
PINFO=$KRC_RUN/srv.info.$((1 - KRC_NODE))

if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1 pool_size=4 break_limit=0'
else
	barrier meta
	check "module loads" "krc_load meta_server=$META pool_size=4 break_limit=0"
fi
[ "$KRC_NODE" = 0 ] && barrier meta
"$KRC_TBIN/dp_test" serve "$INFO" &
srv=$!
wait_for 30 "[ -s \"$INFO\" ]"
barrier up
wait_for 30 "[ -s \"$PINFO\" ]"
# Warm up every pooled connection to the other node.
krctl connect "$OTHER" 8 >/dev/null
"$KRC_TBIN/dp_test" steady "$OTHER" "$PINFO" 12 4 >"$KRC_RUN/steady.$KRC_NODE" 2>&1 &
steady=$!
sleep 3
check "3 bad WRITE/FAA/CAS at once on the other node's connections" \
	'"$KRC_TBIN/harden" breakers "$OTHER" "$PINFO" 3'
# dp_test steady fails on any error status (NOT_EXECUTED included) and on
# EAGAIN for 10 s with nothing in flight (a VQ stuck in RECOVERING).
check "every READ of the 4 steady processes succeeded, no VQ stuck" "wait $steady"
cat "$KRC_RUN/steady.$KRC_NODE"
barrier steady_done
# Node1 breaks connections while node0 posts nothing: node0 must notice
# its failed passive ends by itself, within about a second.
if [ "$KRC_NODE" = 0 ]; then
	seen=$(($(counter conn_found_dead) + $(counter conn_async_errors)))
	barrier broken
	check "an idle node noticed its failed passive ends by itself" \
		"wait_for 5 'ge \$((\$(counter conn_found_dead) + \$(counter conn_async_errors))) $((seen + 1))'"
	check "and then READs from it succeed" \
		'"$KRC_TBIN/dp_test" steady "$OTHER" "$PINFO" 3 2'
else
	krctl connect "$OTHER" 8 >/dev/null
	sleep 2
	check "3 more bad requests while the other node is idle" \
		'"$KRC_TBIN/harden" breakers "$OTHER" "$PINFO" 3'
	barrier broken
fi
barrier idle_done
krctl counters | grep -E "recover|retarget|found_dead|async|reposted|not_executed"
touch "$INFO.stop"
wait $srv
barrier done
check "every VQ closed" 'wait_for 30 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\""'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
