#!/bin/sh
# nodes: 2
# timeout: 900
# The datagram path (issue 10): VQs served over the nodes' control UD QPs
# before (or instead of) a pooled RC connection.
#   A: dg_policy=3 (datagrams only): READ/WRITE 8 B..1 MiB and FAA/CAS with
#      data verified, SEND/SEND_IMM/WRITE_IMM echoed, no RC connection made;
#   B: the same with 1 in 25 datagrams dropped and 1 in 20 taken twice
#      (both nodes): repeats, duplicates answered from the cache, data and
#      atomics still exact;
#   D: a bad rkey over datagrams: REM_ACCESS_ERR for that request only,
#      refused by the responder's check, no connection fails, the VQ goes on;
#   E: a peer that answers nothing (it drops every datagram): the requests
#      fail with RETRY_EXC_ERR in bounded time; once it answers again, a new
#      stream works;
#   C: dg_policy=1: a new peer is served at once over datagrams, RC is
#      built behind it and the VQ moves to it, requests still verified.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/srv.info
DP=$KRC_TBIN/dp_test
N=20

if [ "$KRC_NODE" = 0 ]; then
	check "module loads (datagrams only)" 'krc_load meta_host=1 dg_policy=3'
	"$DP" serve "$INFO" &
	srv=$!
	"$DP" echo 5000 $N "$KRC_RUN/echo.info" >"$KRC_RUN/echo0.out" 2>&1 &
	echo_pid=$!
	barrier up
	check "the echo process answered every message over datagrams" \
		"wait $echo_pid"
	cat "$KRC_RUN/echo0.out"
	krctl counters | grep "^dg_" | tr '\n' ' '; echo
	barrier a_done
	param fault_dg_drop_every 25
	param fault_dg_dup_every 20
	"$DP" echo 5001 $N "$KRC_RUN/echo1.info" >"$KRC_RUN/echo1.out" 2>&1 &
	echo_pid=$!
	barrier b_ready
	check "echo with lost and repeated datagrams" "wait $echo_pid"
	cat "$KRC_RUN/echo1.out"
	krctl counters | grep "^dg_" | tr '\n' ' '; echo
	barrier b_done
	param fault_dg_drop_every 0
	param fault_dg_dup_every 0
	check "repeated requests answered from the cache" \
		'ge "$(counter dg_dups)" 1'
	barrier d_done
	check "D: the bad rkey was refused by the check, not the RNIC" \
		'ge "$(counter dg_rkey_refused)" 1 && eq "$(counter recoveries)" 0'
	param fault_dg_drop_every 1
	barrier e_dead
	barrier e_failed 300
	param fault_dg_drop_every 0
	barrier e_back
	param dg_policy 1
	barrier c_done 600
	touch "$INFO.stop"
	check "server process done" "wait $srv"
	check "no RC connection was ever made from here" \
		'eq "$(counter hs_req_sent)" 0'
else
	barrier up
	check "module loads (datagrams only)" \
		"krc_load meta_server=$META dg_policy=3"
	check "A: READ/WRITE 8 B to 1 MiB and FAA/CAS over datagrams, data verified" \
		'"$DP" rw "$META" "$INFO"'
	check "A: every qconnect took the datagram path" \
		'ge "$(counter qconnect_datagram)" 1 && eq "$(counter qconnect_handshake)" 0'
	check "A: $N messages over datagrams, echoed and checked" \
		'"$DP" ping "$META" 5000 $N "$KRC_RUN/echo.info"'
	check "A: no handshake, no RC connection" \
		'eq "$(counter hs_req_sent)" 0 && eq "$(counter dg_switches)" 0'
	check "A: no stream gave up" 'eq "$(counter dg_timeouts)" 0'
	check "A: the peer executed on its executor QP" \
		'ge "$(counter dg_req_sent)" 1000'
	krctl counters | grep "^dg_" | tr '\n' ' '; echo
	barrier a_done
	param fault_dg_drop_every 25
	param fault_dg_dup_every 20
	barrier b_ready
	check "B: READ/WRITE and atomics exact with lost and repeated datagrams" \
		'"$DP" rw "$META" "$INFO"'
	check "B: messages with lost and repeated datagrams" \
		'"$DP" ping "$META" 5001 $N "$KRC_RUN/echo1.info"'
	check "B: lost datagrams were repeated" 'ge "$(counter dg_retransmits)" 1'
	check "B: no stream gave up" 'eq "$(counter dg_timeouts)" 0'
	krctl counters | grep "^dg_" | tr '\n' ' '; echo
	barrier b_done
	param fault_dg_drop_every 0
	param fault_dg_dup_every 0
	check "D: a bad rkey over datagrams: REM_ACCESS_ERR, the VQ goes on" \
		'"$DP" badrkey "$META" "$INFO"'
	barrier d_done
	barrier e_dead
	t0=$(date +%s)
	"$KRC_TBIN/dg_once" "$META" "$INFO" >"$KRC_RUN/dead.out" 2>&1
	rc=$?
	t1=$(date +%s)
	cat "$KRC_RUN/dead.out"
	check "E: a READ to a silent peer fails (RETRY_EXC_ERR)" \
		'[ $rc -eq 3 ] && grep -q "did not answer" "$KRC_RUN/dead.out"'
	check "E: ... within 30 s" '[ $((t1 - t0)) -le 30 ]'
	check "E: the stream gave up" 'ge "$(counter dg_timeouts)" 1'
	barrier e_failed
	barrier e_back
	check "E: the peer answers again: a new stream works" \
		'"$KRC_TBIN/dg_once" "$META" "$INFO"'
	krc_unload
	check "C: module reloads (datagrams, RC at once)" \
		"krc_load meta_server=$META dg_policy=1"
	check "C: READ/WRITE and atomics across the move to RC, data verified" \
		'"$DP" rw "$META" "$INFO"'
	check "C: the VQ started on datagrams" \
		'eq "$(counter qconnect_datagram)" 1'
	check "C: RC was built behind it and the VQ moved" \
		'ge "$(counter dg_switches)" 1 && ge "$(counter hs_connected)" 1'
	barrier c_done 600
fi
barrier end
check "every VQ closed" 'eq "$(counter vq_created)" "$(counter vq_destroyed)"'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
