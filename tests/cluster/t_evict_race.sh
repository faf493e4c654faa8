#!/bin/sh
# nodes: 2
# timeout: 400
# Recovery and the RC cap on the same connection at the same time: a
# connection the cap is closing takes no request, and the close checks its
# queue again under the connection's lock, so requests re-posted by a
# recovery never land on a connection about to go (where they would never
# complete, and its teardown would take a reference on a freed object).
#
# node0 serves a buffer; node1 (pool_size=2) has two VQs on connection X
# and an idle Y. A bad-rkey READ breaks X; recovery picks Y and waits
# (fault_recover_delay_ms); meanwhile Y is closed as the cap would close
# it (fault_evict_conn), and the close waits between its empty-queue
# check and the close handshake (fault_close_delay_ms). Recovery's
# re-posts must be refused by Y (rc_closing_refused) and go elsewhere:
# every READ completes with the server's data, Y is closed, no report in
# the kernel log. A probe of X's VQ while recovery holds it says EAGAIN,
# not ENOTCONN (the VQ is still connected: try again). Three rounds.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/evict.info
ROUNDS=3
# The windows the shell must act in, and its waits: four times wider on
# the debug kernel (KASAN, lockdep), with the watchdog's bound above them.
k=1
case "$(uname -r)" in *krcdbg*) k=4 ;; esac

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1 dg_policy=0'
	"$KRC_TBIN/dp_serve" "$INFO" &
	barrier up
else
	barrier up
	check "member loads" "krc_load meta_server=$META dg_policy=0 pool_size=2 vq_max_bytes=268435456 proc_max_bytes=268435456 fault_recover_delay_ms=$((1500 * k)) fault_close_delay_ms=$((1700 * k)) wr_timeout_ms=$((5000 * k))"
fi
barrier loaded

if [ "$KRC_NODE" = 1 ]; then
	r=1
	while [ $r -le $ROUNDS ]; do
		ref0=$(counter rc_closing_refused)
		ev0=$(counter rc_evictions)
		rec0=$(counter recoveries)
		out=$KRC_RUN/evict.$r.out
		"$KRC_TBIN/evict_race" "$META" "$INFO" 24 2 >"$out" 2>&1 &
		pid=$!
		wait_for $((30 * k)) 'grep -q "^evict_race: broken" "$out"' ||
			fail "round $r: evict_race never started"
		x=$(sed -n 's/^evict_race: broken \([0-9]*\) idle.*/\1/p' "$out")
		y=$(sed -n 's/^evict_race: broken [0-9]* idle \([0-9]*\)/\1/p' "$out")
		log "round $r: conn $x breaks, recovery's target should be $y"
		# Recovery chose Y and waits: close Y now, under its feet.
		check "round $r: recovery of conn $x chose conn $y" \
			"wait_for $((30 * k)) 'dmesg | grep -q \"conn $x: recovery re-posts on conn $y\$\"'"
		param fault_evict_conn "$y"
		wait "$pid"
		rc=$?
		cat "$out"
		res=$(grep "^evict_race: bad=" "$out")
		check "round $r: every READ completed with the server's data" \
			'[ $rc = 0 ] && [ "$(kv ok "$res")" = 25 ]'
		check "round $r: the bad READ failed on its own" \
			'[ "$(kv bad "$res")" = 10 ]'
		check "round $r: a probe while recovery held the VQ said EAGAIN" \
			'[ "$(kv probe "$res")" = -11 ]'
		check "round $r: the closing connection refused the re-posts" \
			'ge $(($(counter rc_closing_refused) - ref0)) 1'
		check "round $r: conn $y was closed" \
			"wait_for $((20 * k)) 'dmesg | grep -q \"conn $y: eviction by fault injection: 0\$\"'"
		check "round $r: it is off the pool" \
			"! krctl peers | grep -q \"conn $y:\""
		check "round $r: one eviction, one recovery or more" \
			'eq $(($(counter rc_evictions) - ev0)) 1 && ge $(($(counter recoveries) - rec0)) 1'
		r=$((r + 1))
	done
fi
barrier done
[ "$KRC_NODE" = 0 ] && : >"$INFO.stop"
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
