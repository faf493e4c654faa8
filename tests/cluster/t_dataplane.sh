#!/bin/sh
# nodes: 2
# timeout: 600
# The data plane between two nodes, node1's processes against a buffer a
# process of node0 registered:
#   READ/WRITE 8 B..1 MiB and atomics, data verified;
#   16 processes with interleaved batches on one shared QP (pool_size=1);
#   a process posting every kind of garbage beside well-behaved ones;
#   a process posting far beyond its queue depth;
#   a bad rkey from one process while others run: only it sees an error;
#   a process killed with requests in flight;
# then no leak anywhere and a clean unload.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/srv.info
DP=$KRC_TBIN/dp_test

if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1 pool_size=1'
	"$DP" serve "$INFO" &
	srv=$!
	barrier up
	barrier done 550
	touch "$INFO.stop"
	check "server process done" "wait $srv"
else
	barrier up
	check "module loads" "krc_load meta_server=$META pool_size=1"
	check "READ/WRITE 8 B to 1 MiB and FAA/CAS, data verified" \
		'"$DP" rw "$META" "$INFO"'
	check "16 processes, interleaved batches, each gets its own completions" \
		'"$DP" share "$META" "$INFO" 16 25'
	check "all of them on one shared QP" \
		'[ "$(peer_block "$META" | grep -c "conn .*: ready")" = 1 ]'

	"$DP" steady "$META" "$INFO" 8 4 >"$KRC_RUN/steady1.out" 2>&1 &
	good=$!
	check "every malformed request refused with its errno" \
		'"$DP" garbage "$META" "$INFO"'
	check "well-behaved processes beside the garbage: no error" "wait $good"
	cat "$KRC_RUN/steady1.out"

	check "far beyond the queue depth: EAGAIN, no overflow, all complete" \
		'"$DP" flood "$META" "$INFO"'

	rec0=$(counter recoveries)
	"$DP" steady "$META" "$INFO" 8 4 >"$KRC_RUN/steady2.out" 2>&1 &
	good=$!
	sleep 2
	check "a bad rkey: that process gets the remote access error" \
		'"$DP" badrkey "$META" "$INFO"'
	check "the others complete every request" "wait $good"
	cat "$KRC_RUN/steady2.out"
	check "the shared connection was recovered" '[ "$(counter recoveries)" -gt "$rec0" ]'
	check "requests of the other processes were re-posted, none lost" \
		'eq "$(counter wr_not_executed)" 0'

	"$DP" inflight "$META" "$INFO" >/dev/null 2>&1 &
	victim=$!
	sleep 2
	kill -9 $victim
	wait $victim 2>/dev/null
	check "the killed process's VQ and registrations are gone" \
		'wait_for 30 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\" && eq \"\$(counter user_mr_created)\" \"\$(counter user_mr_destroyed)\""'
	check "the pool keeps working" '"$DP" rw "$META" "$INFO" >/dev/null'
	check "every process context freed" \
		'eq "$(counter proc_created)" "$(counter proc_destroyed)"'
	krctl counters | grep -E "^(wr_|recoveries|stray)"
	barrier done
fi
check "module unloads" krc_unload
check "no leak reported" '! dmesg | grep -q "krcore: leak"'
check "kernel log clean" dmesg_clean
finish
