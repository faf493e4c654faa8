#!/bin/sh
# nodes: 4
# timeout: 900
# First contact over datagrams on four nodes (issue 10), dg_policy=1:
#   node3, which never contacted anyone, reaches node0 (the MetaServer),
#   node1 and node2 with fresh processes: each first READ is served on the
#   datagram path at once (no handshake in the way), data verified;
#   then on each peer a stream of [WRITE i, READ back, FAA +1] rounds that
#   starts on datagrams and goes on over RC once the VQ moved: every READ
#   sees the WRITE before it, the FAA counts are exact, nothing lost or
#   repeated across the move; every VQ ends on RC.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
ONCE=$KRC_TBIN/dg_once

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1 dg_policy=1'
else
	barrier meta_up
	check "member loads" "krc_load meta_server=$META dg_policy=1"
fi
[ "$KRC_NODE" = 0 ] && barrier meta_up
if [ "$KRC_NODE" != 3 ]; then
	"$KRC_TBIN/dp_serve" "$KRC_RUN/srv.$KRC_NODE" &
	srv=$!
fi
barrier up
if [ "$KRC_NODE" = 3 ]; then
	wait_for 90 'krctl status | grep -q "metaserver: registered"'
	# (lib.sh's wait_for and barrier use $n and $i: loops here use $p)
	for p in 0 1 2; do
		addr=$(node_ip $p)
		wait_for 60 "[ -e \"$KRC_RUN/srv.$p\" ]"
		out=$("$ONCE" "$addr" "$KRC_RUN/srv.$p")
		rc=$?
		echo "$out"
		check "first READ of a fresh process to never-contacted node$p: success" \
			'[ $rc -eq 0 ]'
		check "... on the datagram path" \
			'echo "$out" | grep -q "path .*datagram.*, success"'
	done
	check "no qconnect waited for a handshake" \
		'eq "$(counter qconnect_handshake)" 0 && eq "$(counter qconnect_datagram)" 3'
	for p in 0 1 2; do
		check "node$p: READ/WRITE 8 B..1 MiB and atomics, data verified" \
			'"$KRC_TBIN/dp_rw" "$(node_ip $p)" "$KRC_RUN/srv.$p"'
	done
	krc_unload
	check "member reloads (forgets every peer)" \
		"krc_load meta_server=$META dg_policy=1"
	wait_for 90 'krctl status | grep -q "metaserver: registered"'
	for p in 0 1 2; do
		out=$("$ONCE" "$(node_ip $p)" "$KRC_RUN/srv.$p" seq 400)
		rc=$?
		echo "$out"
		check "node$p: 400 WRITE/READ/FAA rounds across the move to RC, all exact" \
			'[ $rc -eq 0 ]'
		check "node$p: ... started on datagrams and moved to RC" \
			'echo "$out" | grep -q "path .*datagram" &&
			 echo "$out" | grep -Eq "on datagrams, [1-9][0-9]* on RC"'
	done
	check "every VQ moved to RC" 'ge "$(counter dg_switches)" 3'
	barrier done 800
else
	barrier done 800
	touch "$KRC_RUN/srv.$KRC_NODE.stop"
	check "server process done" "wait $srv"
fi
barrier end
check "every VQ closed" 'eq "$(counter vq_created)" "$(counter vq_destroyed)"'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
