#!/bin/sh
# nodes: 2
# Each node loads krcore and prints its card; the nodes reach each other
# over RoCE (ib_read_lat, a real RDMA READ exchange between the two rxe);
# the README's program READs a buffer another node's process registered.
. "$KRC_REPO/tests/cluster/lib.sh"

# node0 hosts the MetaServer, node1 registers its card there
if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1'
	barrier meta
else
	barrier meta
	check "module loads" "krc_load meta_server=$(node_ip 0)"
fi
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
# The README's program (build/bin/readme_read8, copied from README.md)
# READs node1's buffer, which krc_example serve filled.
if [ "$KRC_NODE" = 1 ]; then
	"$KRC_REPO/build/bin/krc_example" serve "$KRC_RUN/serve.info" >/dev/null &
	server=$!
	for _ in $(seq 30); do
		[ -s "$KRC_RUN/serve.info" ] && break
		sleep 1
	done
	check "krc_example serves a buffer" '[ -s "$KRC_RUN/serve.info" ]'
fi
barrier served
if [ "$KRC_NODE" = 0 ]; then
	set -- $(cat "$KRC_RUN/serve.info")
	"$KRC_REPO/build/bin/readme_read8" "$(node_ip 1)" "$1" "$2" >"$KRC_RUN/read8.out" 2>&1
	cat "$KRC_RUN/read8.out"
	check "the README's program READs the served bytes" 'grep -qx "hello fr (path .*)" "$KRC_RUN/read8.out"'
fi
barrier read
[ "$KRC_NODE" = 1 ] && kill "$server"
barrier done
check "module unloads" krc_unload
finish
