#!/bin/sh
# nodes: 2
# Two-sided messages over the shared QPs: a process of node0 binds a port
# and echoes what it receives; a process of node1 sends SENDs and
# SEND_IMMs of 1 B to 4080 B and a WRITE_IMM, and checks every echo.
# A message to a port nobody bound is dropped and counted.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/echo.info
N=40

if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1'
	"$KRC_TBIN/dp_msg" echo 5000 $N "$INFO" &
	echo_pid=$!
	barrier up
	check "the echo process got and answered every message" "wait $echo_pid"
	barrier done
	check "one message to an unbound port counted" \
		'wait_for 10 "eq \"\$(counter msg_no_port)\" 1"'
else
	barrier up
	check "module loads" "krc_load meta_server=$META"
	check "$N messages sent, echoed and checked" \
		'"$KRC_TBIN/dp_msg" ping "$META" 5000 $N "$INFO"'
	check "no message dropped" 'eq "$(counter msg_dropped)" 0'
	"$KRC_TBIN/dp_msg" echo 5001 1 "$KRC_RUN/x.info" >/dev/null 2>&1 &
	holder=$!
	wait_for 10 '[ -e "$KRC_RUN/x.info" ]'
	err=$("$KRC_TBIN/dp_msg" echo 5001 0 "$KRC_RUN/y.info" 2>&1)
	echo "$err"
	check "binding a port another VQ holds: EADDRINUSE" \
		'echo "$err" | grep -q "port 5001 is bound by another VQ of this node (Address already in use)"'
	kill $holder
	wait $holder 2>/dev/null
	barrier done
	"$KRC_TBIN/dp_msg" ping "$META" 5999 2 "$INFO" >/dev/null 2>&1 &
	sleep 3
	kill $! 2>/dev/null
	wait 2>/dev/null
fi
barrier end
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
