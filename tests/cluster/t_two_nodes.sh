#!/bin/sh
# nodes: 2
# Each node loads krcore and prints its card; the nodes reach each other
# over RoCE (ib_read_lat, a real RDMA READ exchange between the two rxe).
. "$KRC_REPO/tests/cluster/lib.sh"

check "module loads" krc_load
krctl card | tee "$KRC_RUN/card.$KRC_NODE"
peer=$((1 - KRC_NODE))
barrier cards
check "peer card names the peer" 'grep -qx "addr=$(node_ip $peer)" "$KRC_RUN/card.$peer"'
check "cards differ" '! cmp -s "$KRC_RUN/card.0" "$KRC_RUN/card.1"' 
check "peer answers ping" 'busybox ping -c 2 -W 5 "$(node_ip $peer)" >/dev/null' 

if [ "$KRC_NODE" = 0 ]; then
	check "ib_read_lat server" 'timeout 120 ib_read_lat -d rxe0 -x 1 -n 100 -F' 
else
	sleep 1
	ok=1
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		if timeout 60 ib_read_lat -d rxe0 -x 1 -n 100 -F "$(node_ip 0)" >"$KRC_RUN/lat.out" 2>&1; then
			ok=0
			break
		fi
		sleep 1
	done
	cat "$KRC_RUN/lat.out"
	check "ib_read_lat over RoCE v2 to node0" '[ $ok = 0 ]' 
fi
barrier done
check "module unloads" krc_unload
finish
