#!/bin/sh
# nodes: 2
# timeout: 900
# The datagram path (issue 10): VQs served over the nodes' control UD QPs
# before (or instead of) a pooled RC connection.
#   A: dg_policy=3 (datagrams only): READ/WRITE 8 B..1 MiB and FAA/CAS with
#      data verified, SEND/SEND_IMM/WRITE_IMM echoed, no RC connection made;
#   B: 1 in 25 datagrams dropped and 1 in 20 taken twice (both nodes):
#      WRITE/READ-back/FAA rounds and messages still exact (repeats,
#      duplicates answered from the cache, FAAs executed once, in order);
#   D: a bad rkey over datagrams: REM_ACCESS_ERR for that request only,
#      refused by the responder's check, no connection fails, the VQ goes on;
#      a 64 KiB READ whose first datagram is refused: one completion, and
#      VQs closed with such a READ's later datagrams still out (the VQ is
#      kept until the last one is answered: the cluster ioctl fuzzer found
#      a use-after-free there);
#   E: a peer that answers nothing (it drops every datagram): the requests
#      fail with RETRY_EXC_ERR in bounded time; once it answers again, a new
#      stream works;
#   F: a process of node1 sends datagram-path messages to node0's control
#      QP from a UD QP of its own (malformed, and well-formed READ/WRITE/
#      FAA requests with the server's real rkey, and replies): every one
#      refused (malformed or not from a control QP), nothing executed, the
#      MetaServer asked at most once a second, the server's data intact;
#   C: node1 reloads (a new control QP: node0 must answer the new one),
#      dg_policy=1: a new peer is served at once over datagrams, RC is
#      built behind it and the VQ moves to it, requests still verified.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/srv.info
N=20

if [ "$KRC_NODE" = 0 ]; then
	check "module loads (datagrams only)" 'krc_load meta_host=1 dg_policy=3'
	"$KRC_TBIN/dp_serve" "$INFO" &
	srv=$!
	"$KRC_TBIN/dp_msg" echo 5000 $N "$KRC_RUN/echo.info" >"$KRC_RUN/echo0.out" 2>&1 &
	echo_pid=$!
	barrier up
	check "the echo process answered every message over datagrams" \
		"wait $echo_pid"
	cat "$KRC_RUN/echo0.out"
	krctl counters | grep "^dg_" | tr '\n' ' '; echo
	barrier a_done
	param fault_dg_drop_every 25
	param fault_dg_dup_every 20
	"$KRC_TBIN/dp_msg" echo 5001 $N "$KRC_RUN/echo1.info" >"$KRC_RUN/echo1.out" 2>&1 &
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
	rx0=$(counter ctrl_rx)
	bad0=$(counter dg_rx_bad)
	sp0=$(counter dg_rx_spoofed)
	ex0=$(counter dg_executed)
	mr0=$(counter meta_reads)
	barrier f_ready
	barrier f_sent
	wait_for 10 '[ $(($(counter ctrl_rx) - rx0)) -ge 150 ]'
	rx=$(($(counter ctrl_rx) - rx0))
	bad=$(($(counter dg_rx_bad) - bad0))
	sp=$(($(counter dg_rx_spoofed) - sp0))
	log "F: received $rx: malformed $bad, not from a control QP $sp"
	check "F: every hostile datagram refused (malformed or spoofed)" \
		'ge "$rx" 100 && eq "$rx" $((bad + sp))'
	check "F: some were malformed, some well-formed but spoofed" \
		'ge "$bad" 1 && ge "$sp" 1'
	check "F: nothing executed" 'eq "$(counter dg_executed)" "$ex0"'
	check "F: the MetaServer was asked at most once a second, not per datagram" \
		'[ $(($(counter meta_reads) - mr0)) -le 5 ]'
	barrier f_counted
	barrier f_done 300
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
		'"$KRC_TBIN/dp_rw" "$META" "$INFO"'
	check "A: every qconnect took the datagram path" \
		'ge "$(counter qconnect_datagram)" 1 && eq "$(counter qconnect_handshake)" 0'
	check "A: $N messages over datagrams, echoed and checked" \
		'"$KRC_TBIN/dp_msg" ping "$META" 5000 $N "$KRC_RUN/echo.info"'
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
	check "B: 300 WRITE/READ/FAA rounds exact with lost and repeated datagrams" \
		'"$KRC_TBIN/dg_once" "$META" "$INFO" seq 300'
	check "B: messages with lost and repeated datagrams" \
		'"$KRC_TBIN/dp_msg" ping "$META" 5001 $N "$KRC_RUN/echo1.info"'
	check "B: lost datagrams were repeated" 'ge "$(counter dg_retransmits)" 1'
	check "B: no stream gave up" 'eq "$(counter dg_timeouts)" 0'
	krctl counters | grep "^dg_" | tr '\n' ' '; echo
	barrier b_done
	param fault_dg_drop_every 0
	param fault_dg_dup_every 0
	check "D: a bad rkey over datagrams: REM_ACCESS_ERR, the VQ goes on" \
		'"$KRC_TBIN/dp_badrkey" "$META" "$INFO"'
	# 20 failing READs from one process, one per VQ: not a throttle
	# test (closing its VQs does not lift a throttle: t_harden_remote).
	param break_limit 0
	check "D: a 64 KiB READ whose first datagram fails: one completion; VQs closed with its datagrams out" \
		'"$KRC_TBIN/dg_once" "$META" "$INFO" split 20'
	param break_limit 3
	check "D: every VQ freed (none kept by its datagrams)" \
		'wait_for 30 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\""'
	barrier d_done
	gidx=$(krctl status | sed -n 's/.*rxe0\/1: .* gid\[\([0-9]*\)\].*/\1/p')
	q0=$(krctl lookup "$META" | sed -n "s/^ *ud_qpn=//p" | head -n 1)
	k0=$(krctl lookup "$META" | sed -n "s/^ *ud_qkey=//p" | head -n 1)
	rkey=$(cut -d' ' -f2 "$INFO")
	barrier f_ready
	check "F: 150 hostile datagram-path messages sent" \
		'"$KRC_TBIN/ud_garbage" rxe0 "$gidx" "$META" "$q0" "$k0" 150 dg "0x$rkey" | grep -q "sent 150 of 150"'
	barrier f_sent
	barrier f_counted
	check "F: the server's data intact, READ/WRITE/atomics still exact" \
		'"$KRC_TBIN/dp_rw" "$META" "$INFO"'
	barrier f_done 300
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
	check "C: module reloads (a new control QP and incarnation)" \
		"krc_load meta_server=$META dg_policy=3"
	check "C: the peer answers this new incarnation over datagrams" \
		'"$KRC_TBIN/dg_once" "$META" "$INFO"'
	param dg_policy 1
	check "C: READ/WRITE and atomics across the move to RC, data verified" \
		'"$KRC_TBIN/dp_rw" "$META" "$INFO"'
	check "C: the VQ started on datagrams" \
		'eq "$(counter qconnect_datagram)" 2'
	check "C: RC was built behind it and the VQ moved" \
		'ge "$(counter dg_switches)" 1 && ge "$(counter hs_connected)" 1'
	barrier c_done 600
fi
barrier end
krctl counters | grep "^dg_" | tr '\n' ' '; echo
check "every VQ closed" 'eq "$(counter vq_created)" "$(counter vq_destroyed)"'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
