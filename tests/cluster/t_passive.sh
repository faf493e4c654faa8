#!/bin/sh
# nodes: 2
# timeout: 300
# Recovery on both ends of shared connections (issue 8): processes on both
# nodes keep READing from each other (4 processes each, 8 READs in flight
# each) while, on both nodes at once, 3 processes break pooled connections
# of the other with bad-rkey WRITE, FAA and CAS, each on a connection that
# carries one of its node's steady VQs: every READ must complete
# successfully (re-posted, never NOT_EXECUTED) and no VQ may stay in
# RECOVERING; recovery must have run (each break counted, a recovery per
# broken connection at least, requests re-posted, steady VQs moved, none
# disconnected). Then node1 breaks connections while node0 is idle: node0
# must notice its failed passive ends by itself (a QP event, or the
# watchdog's QP state check), not at its next post.
# `make test-passive-loop` runs it ten times in a row.
. "$KRC_REPO/tests/cluster/lib.sh"
# dp_steady checks every completion's order and data (issue 9): when
# connections of both ends fail at once, recovery may re-post a VQ's
# requests on two connections in turn; completions still reach the ring
# in post order (counter wr_held: those that waited for an earlier one).
META=$(node_ip 0)
OTHER=$(node_ip $((1 - KRC_NODE)))
INFO=$KRC_RUN/srv.info.$KRC_NODE
PINFO=$KRC_RUN/srv.info.$((1 - KRC_NODE))

# The RC handshake path (dg_policy=0), whatever the default: the
# breakers must fail pooled RC connections (docs/dg-policy-audit.md).
if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1 dg_policy=0 pool_size=4 break_limit=0'
else
	barrier meta
	check "module loads" "krc_load meta_server=$META dg_policy=0 pool_size=4 break_limit=0"
fi
[ "$KRC_NODE" = 0 ] && barrier meta
"$KRC_TBIN/dp_serve" "$INFO" &
srv=$!
wait_for 30 "[ -s \"$INFO\" ]"
barrier up
wait_for 30 "[ -s \"$PINFO\" ]"
# Warm up every pooled connection to the other node.
krctl connect "$OTHER" 8 >/dev/null
S=$KRC_RUN/steady.d.$KRC_NODE
mkdir -p "$S"
"$KRC_TBIN/dp_steady" "$OTHER" "$PINFO" "$S" 4 any >"$KRC_RUN/steady.$KRC_NODE" 2>&1 &
steady=$!
check "4 steady processes running" \
	'wait_for 120 "[ \$(ls $S | grep -c \"^ready\\.\") = 4 ]"'
# counts NAME...: the counters' values, one line (before/after a part).
counts() {
	for c in "$@"; do
		printf '%s ' "$(counter "$c")"
	done
}
CNT="conn_breaks recoveries wr_reposted wr_not_executed vq_disconnected"
c0=$(counts $CNT)
# Both nodes' breakers pick their connections before either fires.
barrier steady_up
out=$("$KRC_TBIN/harden" breakers "$OTHER" "$PINFO" 3 "$S" 2>&1)
rc=$?
echo "$out"
check "3 bad WRITE/FAA/CAS at once on the other node's connections, beside steady VQs" \
	'[ $rc -eq 0 ]'
own=$(echo "$out" | sed -n 's/^harden: breakers: \([0-9]*\) own errors.*/\1/p')
notex=$(echo "$out" | sed -n 's/.* own errors (REMOTE_ACCESS), \([0-9]*\) not executed.*/\1/p')
# The steady processes go on through the recoveries (of both nodes), then
# stop. dp_steady fails on any error status (NOT_EXECUTED included),
# data or order, and on EAGAIN for 30 s with nothing in flight (a VQ stuck
# in RECOVERING).
sleep 8
touch "$S/stop"
check "every READ and WRITE of the 4 steady processes succeeded, no VQ stuck" "wait $steady"
cat "$KRC_RUN/steady.$KRC_NODE"
# (breaks, recoveries, re-posts, not executed, disconnected) over the part
set -- $c0
d_brk=$(($(counter conn_breaks) - $1))
d_rec=$(($(counter recoveries) - $2))
d_rep=$(($(counter wr_reposted) - $3))
d_nex=$(($(counter wr_not_executed) - $4))
d_dis=$(($(counter vq_disconnected) - $5))
moved=$(sed -n 's/^dp_test: steady .*recoveries=\([0-9]*\)$/\1/p' "$KRC_RUN/steady.$KRC_NODE" |
	awk '{ n += $1 } END { print n + 0 }')
log "breaks $d_brk, recoveries $d_rec, re-posted $d_rep, not executed $d_nex, disconnected $d_dis; steady VQ recoveries $moved"
check "each connection our breakers broke counted once (conn_breaks = $own own errors)" \
	'ge "$own" 1 && eq "$d_brk" "$own"'
check "a recovery for each at least" 'ge "$d_rec" "$own"'
check "the steady VQs beside them were moved (their rings count recoveries)" \
	'ge "$moved" 1'
check "requests in flight on them were re-posted" 'ge "$d_rep" 1'
check "only our breakers' atomics completed NOT_EXECUTED ($notex)" \
	'[ -n "$notex" ] && eq "$d_nex" "$notex"'
check "no VQ disconnected" 'eq "$d_dis" 0'
barrier steady_done
# Node1 breaks connections while node0 posts nothing: node0 must notice
# its failed passive ends by itself, within about a second.
if [ "$KRC_NODE" = 0 ]; then
	seen=$(($(counter conn_found_dead) + $(counter conn_async_errors)))
	barrier broken
	check "an idle node noticed its failed passive ends by itself" \
		"wait_for 5 'ge \$((\$(counter conn_found_dead) + \$(counter conn_async_errors))) $((seen + 1))'"
	S2=$KRC_RUN/steady2.d
	mkdir -p "$S2"
	"$KRC_TBIN/dp_steady" "$OTHER" "$PINFO" "$S2" 2 any \
		>"$KRC_RUN/steady2.out" 2>&1 &
	steady=$!
	wait_for 120 "[ \$(ls $S2 | grep -c \"^ready\\.\") = 2 ]"
	sleep 3
	touch "$S2/stop"
	check "and then READs and WRITEs from it succeed" "wait $steady"
	cat "$KRC_RUN/steady2.out"
else
	krctl connect "$OTHER" 8 >/dev/null
	sleep 2
	c1=$(counts $CNT)
	out=$("$KRC_TBIN/harden" breakers "$OTHER" "$PINFO" 3 2>&1)
	rc=$?
	echo "$out"
	check "3 more bad requests while the other node is idle" '[ $rc -eq 0 ]'
	own=$(echo "$out" | sed -n 's/^harden: breakers: \([0-9]*\) own errors.*/\1/p')
	set -- $c1
	d_brk=$(($(counter conn_breaks) - $1))
	d_rec=$(($(counter recoveries) - $2))
	check "... each broken connection counted once ($own), a recovery for each at least" \
		'ge "$own" 1 && eq "$d_brk" "$own" && ge "$d_rec" "$own"'
	barrier broken
fi
barrier idle_done
krctl counters | grep -E "recover|retarget|found_dead|async|reposted|not_executed|held"
touch "$INFO.stop"
wait $srv
barrier done
check "every VQ closed" 'wait_for 30 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\""'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
