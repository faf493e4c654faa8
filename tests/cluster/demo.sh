#!/bin/sh
# The main demo (make demo): two Soft-RoCE nodes. node0 hosts the
# MetaServer and a process serving 64 KiB of its memory; on node1 a
# process connects (one MetaServer READ and one handshake), more processes
# connect in microseconds through the shared pool, and the example program
# READs and WRITEs node0's memory through its VQ.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/demo.info

if [ "$KRC_NODE" = 0 ]; then
	krc_load meta_host=1 || { fail "krcore.ko does not load"; finish; }
	"$KRC_REPO/build/bin/krc_example" serve "$INFO" >/dev/null &
	barrier up
	barrier shown 300
	kill %1 2>/dev/null
else
	barrier up
	krc_load meta_server="$META" || { fail "krcore.ko does not load"; finish; }
	echo
	echo "### node1: krctl status"
	krctl status | sed -n '1,/^counters:/p' | grep -v '^counters:'
	echo
	echo "### node1: node0's card, from the MetaServer's table (one RDMA READ)"
	krctl lookup "$META" | sed 's/^/  /'
	echo
	echo "### node1: five processes connect to node0, one after the other"
	for i in 1 2 3 4 5; do
		krctl connect "$META"
	done
	echo
	echo "### node1: the example program (libkrcore: qconnect, reg_mr, READ, WRITE, a batch)"
	wait_for 30 '[ -e "$INFO" ]'
	"$KRC_REPO/build/bin/krc_example" read "$META" "$INFO" || fail "example"
	echo
	echo "### node1: the shared pool"
	krctl peers
	barrier shown
fi
krc_unload
finish
