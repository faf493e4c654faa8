#!/bin/sh
# nodes: 2
# timeout: 900
# Flow control of two-sided messages on the datagram path (dg_policy=3:
# no RC connection at all; t_dp_faults proves the same over pooled RC):
#   A: a port not read for now fills its ring and its sender is held back
#      (EAGAIN, NO_CREDIT), while another port of the same node gets all
#      its messages; once read, all arrive in order, none dropped;
#   B: a sender waiting for slots of a port whose process then exits gets
#      ECONNREFUSED at once (not at its wait's timeout), having sent
#      exactly the ring's entries; poll's POLLWRBAND off while it has no
#      slot, on once refused;
#   C: a sender that still has slots when the receiving process exits
#      is told (not only one that asks): its next send is refused, and
#      nothing goes to the port nobody holds.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
D=$KRC_RUN/flow
N_FULL=200
N_LIVE=100
HOLD=15

if [ "$KRC_NODE" = 0 ]; then
	mkdir -p "$D"
	check "module loads (datagrams only)" 'krc_load meta_host=1 dg_policy=3'
	barrier up
	md0=$(counter msg_dropped)
	out=$("$KRC_TBIN/dp_overflow" sink 7000 7001 $N_FULL $N_LIVE "$D")
	rc=$?
	echo "$out"
	sk=$(echo "$out" | sed -n 's/^sink: //p')
	ents=$(kv entries "$sk")
	check "A: port 7000's $N_LIVE read in order while 7001 was not read; its ring of $ents held $ents, then all $N_FULL arrived in order" \
		'[ $rc = 0 ] && ge "$ents" 1 && [ "$ents" -lt $N_FULL ] &&
		 eq "$(kv full_at_block "$sk")" "$ents" && eq "$(kv kept "$sk")" $N_FULL'
	check "A: nothing dropped or refused" \
		'eq "$(counter msg_dropped)" $md0 && eq "$(counter msg_refused)" 0'
	barrier a_done
	mkdir -p "$D/b"
	"$KRC_TBIN/dp_msg" hold 7100 $HOLD "$D/b" &
	hold=$!
	barrier b_ready
	check "B: the holding process exits after ${HOLD}s" "wait $hold"
	barrier b_done
	mkdir -p "$D/c"
	"$KRC_TBIN/dp_msg" drain 7200 >"$D/c/drain.out" 2>&1 &
	drain=$!
	# Bound before node1 sends (its first send must find the port).
	check "C: port 7200 bound and read" \
		'wait_for 30 "grep -q \"drain on port 7200\" \"$D/c/drain.out\""'
	barrier c_ready
	nnp=$(counter msg_no_port)
	wait_for 60 '[ -e "$D/c/twice.sent" ]'
	kill $drain
	wait $drain 2>/dev/null
	: >"$D/c/twice.closed"
	barrier c_done
	check "C: nothing was sent to the port once its process was gone" \
		'eq "$(counter msg_no_port)" "$nnp"'
else
	barrier up
	check "member loads (datagrams only)" "krc_load meta_server=$META dg_policy=3"
	out=$("$KRC_TBIN/dp_overflow" spray "$META" 7000 7001 $N_FULL $N_LIVE "$D")
	rc=$?
	echo "$out"
	sp=$(echo "$out" | sed -n 's/^spray: //p')
	check "A: all SENDs complete; the sender to the unread port was held back and waited" \
		'[ $rc = 0 ] && ge "$(kv blocked "$sp")" 1 && ge "$(kv waits "$sp")" 1'
	check "A: over datagrams only: no RC connection made" \
		'eq "$(counter hs_connected)" 0 && ge "$(counter dg_req_sent)" $((N_FULL + N_LIVE))'
	barrier a_done
	wait_for 60 '[ -e "$D/b/hold.ready" ]' || true
	barrier b_ready
	t0=$(now_ms)
	out=$("$KRC_TBIN/dp_msg" flood "$META" 7100 1000)
	t1=$(now_ms)
	echo "$out"
	fl=$(echo "$out" | sed -n 's/^flood: //p')
	check "B: the sender filled the ring (64 sent) and waited; poll said no POLLWRBAND then" \
		'eq "$(kv sent "$fl")" 64 && ge "$(kv waits "$fl")" 1 &&
		 eq "$(kv wrband_blocked "$fl")" 0'
	check "B: once refused, POLLWRBAND (the next qpush fails at once)" \
		'eq "$(kv wrband_after "$fl")" 1'
	check "B: when the receiving process exited, the waiting sender got ECONNREFUSED within 10 s (not its 120 s wait)" \
		'eq "$(kv error "$fl")" 111 && [ $((t1 - t0)) -lt $(((HOLD + 10) * 1000)) ]'
	check "B: the next send fails at once with ECONNREFUSED, counted" \
		'eq "$(kv push_after "$fl")" 111 && ge "$(counter flow_refused)" 1'
	barrier b_done
	barrier c_ready
	out=$("$KRC_TBIN/dp_msg" twice "$META" 7200 "$D/c")
	echo "$out"
	tw=$(echo "$out" | sed -n 's/^twice: //p')
	check "C: a sender with slots left learns its receiver left: its next send is refused (ECONNREFUSED), not sent" \
		'eq "$(kv first "$tw")" 0 && eq "$(kv second "$tw")" 111'
	barrier c_done
fi
barrier end
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
