#!/bin/sh
# nodes: 2
# Two-sided messages over the shared QPs: a process of node0 binds a port
# and echoes what it receives; a process of node1 sends SENDs and
# SEND_IMMs of 1 B to 4080 B and a WRITE_IMM, and checks every echo.
# A message to a port nobody bound is refused (ECONNREFUSED) before it is
# sent: nothing is dropped.
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
	barrier refused
	check "nothing was sent to the unbound port (its sender was refused first)" \
		'eq "$(counter msg_no_port)" 0 && eq "$(counter msg_refused)" 0'
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
	# No process has port 5999 bound on node0: the send is refused
	# (ECONNREFUSED) before anything goes out, no message is lost.
	out=$(timeout 60 "$KRC_TBIN/dp_msg" ping "$META" 5999 2 "$INFO" 2>&1)
	echo "$out"
	check "a message to a port nobody bound: refused, ECONNREFUSED" \
		'echo "$out" | grep -q "no process has the receiving port bound" &&
		 ge "$(counter flow_refused)" 1'
	barrier refused
fi
barrier end
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
