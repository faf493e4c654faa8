#!/bin/sh
# nodes: 2
# timeout: 500
# One process's backlog is not everyone's problem, on either path. On
# node1 a process keeps 16 VQs to node0 full of large READs; another
# process's small READs on the same peer wait behind at most a bounded
# share of it, not behind its whole backlog: on RC its process's share
# (all its VQs together: proc_max_bytes, 4 MiB by default); on the
# datagram stream, with that share lifted, a turn of 8 datagrams of
# each of its VQs. Then the greedy process is killed with requests in
# flight: its VQs close without failing the connection others use (no
# recovery), the others' READs go on, and every closed VQ is freed once
# its last request completes. First on a shared RC connection
# (pool_size=1), then on the datagram path (dg_policy=3).
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
# On the debug kernel (KASAN under TCG) the RC flood of 4 MiB in flight
# starved the node (its MetaServer keepalive, the watchdog at 5 s): there
# the flood's READs and its process's share are a quarter (256 KiB,
# 1 MiB) and the watchdog's bound 30 s.
# A bystander's READ (a new process: connect, register, READ) there takes
# about 7 s even idle, so its bound is 20 s instead of 8.
KB=1024 DBG= BOUND=8
case "$(uname -r)" in
*krcdbg*) KB=256 DBG="proc_max_bytes=1048576 wr_timeout_ms=30000" BOUND=20 ;;
esac
INFO=$KRC_RUN/fair.info

bystander() {
	# $1: rc or dgram. Five READs of 1 KiB, each within $BOUND s.
	p=$1
	i=1
	while [ $i -le 5 ]; do
		s=$(now_ms)
		res=$("$KRC_TBIN/dg_partial" "$META" "$INFO" read 1 2>&1)
		took=$(($(now_ms) - s))
		log "$1: bystander READ $i: $res (${took} ms)"
		check "$1: bystander READ $i completes, data right, within $BOUND s" \
			'echo "$res" | grep -q "path=$p status=0 data=ok" && [ $took -lt $((BOUND * 1000)) ]'
		i=$((i + 1))
	done
}

# greedy PATH KB: the greedy process, 16 VQs of KB KiB READs, then killed.
greedy() {
	p=$1
	rec0=$(counter recoveries)
	err0=$(counter conn_errors)
	cb0=$(counter vq_closed_busy)
	full0=$(counter wr_proc_full)
	"$KRC_TBIN/fair_greedy" "$META" "$INFO" 16 "$2" 120 >"$KRC_RUN/greedy.$1" 2>&1 &
	g=$!
	check "$1: the greedy process is under way" \
		"wait_for 60 'grep -q \"t=2 \" $KRC_RUN/greedy.$1'"
	bystander "$1"
	if [ "$p" = rc ]; then
		check "$1: the greedy process met its share (wr_proc_full)" \
			'[ "$(counter wr_proc_full)" -gt "$full0" ]'
		check "$1: no process ever had more than proc_max_bytes in flight" \
			'[ "$(counter proc_bytes_high)" -le 4194304 ]'
	fi
	kill -9 $g
	wait $g 2>/dev/null
	tail -n 2 "$KRC_RUN/greedy.$1"
	check "$1: its VQs closed with requests in flight" \
		'[ "$(counter vq_closed_busy)" -gt "$cb0" ]'
	res=$("$KRC_TBIN/dg_partial" "$META" "$INFO" read 1 2>&1)
	check "$1: a READ right after the kill completes" \
		'echo "$res" | grep -q "path=$p status=0 data=ok"'
	check "$1: no connection failed, no recovery" \
		'eq "$(counter recoveries)" "$rec0" && eq "$(counter conn_errors)" "$err0"'
	check "$1: every closed VQ freed once its requests completed" \
		'wait_for 60 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\""'
}

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1'
	"$KRC_TBIN/dp_serve" "$INFO" &
	barrier up
	barrier done 400
	: >"$INFO.stop"
else
	barrier up
	check "member loads, one shared RC connection" \
		"krc_load meta_server=$META pool_size=1 dg_policy=0 $DBG"
	greedy rc "$KB"
	# On datagrams the VQs' turns alone: a process may queue far more
	# than its default share (and the peer's backlog holds it all).
	check "member reloads, datagrams only, no process share" \
		"krc_unload && krc_load meta_server=$META dg_policy=3 proc_max_wrs=4096 proc_max_bytes=1073741824 dg_backlog=8192 ${DBG:+wr_timeout_ms=30000}"
	greedy dgram 16
	barrier done 400
fi
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
