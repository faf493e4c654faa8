#!/bin/sh
# nodes: 2
# timeout: 400
# The datagram path against a hostile or unlucky user of node1 (dg_policy
# 3), node0 the responder:
#   A. guessing rkeys costs the same as on RC: each bad-key READ counts
#      toward the process's throttling (break_limit 3), then EBUSY;
#   B. a WRITE_IMM whose range is partly outside the memory its rkey
#      names is refused whole: not a byte written, no immediate delivered
#      (node0 checks the whole request's range with every segment);
#   C. an old stream's first datagram that comes again after a new stream
#      started (fault_dg_replay_old on node0) is not executed again: ten
#      FAAs move the counter by exactly ten across two failed streams, the
#      first FAA's datagram repeated after the second;
#   D. the executor QP is every peer's: with its queue at 2 (qp_depth)
#      and its requests reaching it 20 ms late, all at once
#      (fault_dg_exec_delay_ms, a slow RNIC), four VQs' windows of READs
#      wait for room (dg_exec_busy) and every one succeeds;
#   E. per-peer traffic counters are for operators: an unprivileged user
#      of /dev/krcore lists the peers but not their traffic (EPERM).
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/srv.info
WINFO=$KRC_RUN/wimm.info
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads, executor queue of 2" 'krc_load meta_host=1 qp_depth=2'
	"$KRC_TBIN/dp_serve" "$INFO" &
	"$KRC_TBIN/wimm_range" serve 7001 "$WINFO" 120 >"$KRC_RUN/wimm.out" 2>&1 &
	wpid=$!
	barrier up
else
	barrier up
	check "member loads, datagrams only" "krc_load meta_server=$META dg_policy=3 break_limit=3"
fi
barrier loaded

# A
if [ "$KRC_NODE" = 1 ]; then
	f0=$(counter dg_proc_faults)
	check "A: three bad rkeys over datagrams, then EBUSY/THROTTLED" \
		'"$KRC_TBIN/harden" throttle "$META" "$INFO"'
	check "A: each counted against the process" \
		'eq $(($(counter dg_proc_faults) - f0)) 3 && eq "$(counter proc_throttled)" 1'
	param break_limit 0
fi
barrier a_done

# B
if [ "$KRC_NODE" = 1 ]; then
	out=$("$KRC_TBIN/wimm_range" send "$META" 7001 "$WINFO" 2>&1)
	log "$out"
	check "B: the straddling WRITE_IMM refused (REM_ACCESS_ERR), the other done" \
		'echo "$out" | grep -q "straddling status=10 inside status=0"'
fi
barrier b_done
if [ "$KRC_NODE" = 0 ]; then
	wait "$wpid"
	cat "$KRC_RUN/wimm.out"
	check "B: one immediate delivered, the inside one's" \
		'grep -q "^wimm_range: message imm=0x4321" "$KRC_RUN/wimm.out" && ! grep -q "imm=0x1234" "$KRC_RUN/wimm.out"'
	check "B: exactly its 8 KiB written, nothing of the refused one" \
		'grep -q "^wimm_range: messages=1 written=8192 head=0$" "$KRC_RUN/wimm.out"'
	param fault_dg_replay_old 2
	os0=$(counter dg_old_stream)
fi
barrier c_ready

# C
if [ "$KRC_NODE" = 1 ]; then
	out=$("$KRC_TBIN/dg_faa" "$META" "$INFO" 10 5 2>&1)
	log "$out"
	check "C: ten FAAs moved the counter by exactly ten" \
		'[ $(( $(kv after "$out") - $(kv before "$out") )) -eq 10 ]'
	check "C: the one in flight when its stream failed is unknown, the others done" \
		'[ "$(kv ok "$out")" = 9 ] && [ "$(kv unknown "$out")" = 1 ]'
fi
barrier c_done
if [ "$KRC_NODE" = 0 ]; then
	check "C: each old stream's first datagram came again (the first FAA's too)" \
		'eq "$(counter dg_fault_replayed)" 2'
	check "C: ... and was not executed again" \
		'eq $(($(counter dg_old_stream) - os0)) 2'
	eb0=$(counter dg_exec_busy)
	put eb0 "$eb0"
fi
barrier d_ready

# D
[ "$KRC_NODE" = 0 ] && param fault_dg_exec_delay_ms 20
if [ "$KRC_NODE" = 1 ]; then
	out=$("$KRC_TBIN/fair_greedy" "$META" "$INFO" 4 1 8 2>&1)
	log "$(echo "$out" | tail -n 1)"
	check "D: every READ of four full windows succeeded" \
		'echo "$out" | grep -q "^fair_greedy: done=[1-9][0-9]* failed=0 "'
fi
barrier d_done
if [ "$KRC_NODE" = 0 ]; then
	check "D: they waited for room on the executor QP" \
		'[ "$(counter dg_exec_busy)" -gt "$(get eb0 0)" ]'
	param fault_dg_exec_delay_ms 0
fi
barrier e_ready

# E
if [ "$KRC_NODE" = 1 ]; then
	chmod 0666 /dev/krcore
	out=$($NOBODY "$KRC_BIN/krctl" peers 2>&1)
	rc=$?
	echo "$out"
	check "E: an unprivileged user lists the peers" \
		'[ $rc = 0 ] && echo "$out" | grep -q "^peer $META"'
	check "E: ... but not their traffic" \
		'! echo "$out" | grep -q "traffic: wr_posted" && echo "$out" | grep -q "for CAP_NET_ADMIN only"'
	check "E: root sees the traffic" 'krctl peers | grep -q "traffic: wr_posted"'
	chmod 0660 /dev/krcore
fi
barrier done
[ "$KRC_NODE" = 0 ] && : >"$INFO.stop"
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
