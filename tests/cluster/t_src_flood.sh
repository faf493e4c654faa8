#!/bin/sh
# nodes: 3
# timeout: 500
# A flood from senders whose cards no one holds costs a bounded number of
# MetaServer READs and starves no member. node2 is an outsider (no
# krcore) with a verbs QP and 32 more addresses on its NIC; for 40 s it
# floods node1's control QP with REQs and datagram-path requests whose
# cards are truthful about their source (so they pass the source check
# and reach the card check), from every address. Meanwhile node0 (the
# MetaServer, a member) uses node1: datagram READs (dg_policy=3), then
# RC handshakes (dg_policy=0, its connection dropped before each). Every
# one completes in bounded time; node1 READs the MetaServer at most
# src_lookup_rate times a second for the unknown senders (and remembers
# their misses), and keeps no entry for any of them.
. "$KRC_REPO/tests/cluster/lib.sh"
N0=$(node_ip 0)
N1=$(node_ip 1)
INFO=$KRC_RUN/flood.info
FLOOD_S=30
ALIASES=32

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1 dg_policy=3 pool_size=1'
	barrier up
elif [ "$KRC_NODE" = 1 ]; then
	barrier up
	check "member loads" "krc_load meta_server=$N0 src_lookup_rate=50"
	"$KRC_TBIN/dp_serve" "$INFO" &
	wait_for 30 '[ -s "$INFO" ]'
	put qpn "$(krctl card | sed -n 's/^ *ud_qpn=//p' | head -n 1)"
	put qkey "$(krctl card | sed -n 's/^ *ud_qkey=//p' | head -n 1)"
else
	barrier up
	modprobe -a ib_core rdma_cm
	i=1
	while [ $i -le $ALIASES ]; do
		ip addr add "$KRC_NET.$((100 + i))/24" dev eth0 || fail "alias $i"
		i=$((i + 1))
	done
fi
barrier loaded

if [ "$KRC_NODE" = 2 ]; then
	# The GID indexes of the aliases (RoCE v2, IPv4-mapped): the first
	# entries of the table (shell builtins only: a process per entry
	# of a 1024-entry table is minutes under TCG).
	g=/sys/class/infiniband/rxe0/ports/1
	gid_scan() {
		idx=""
		n=0
		while [ $n -lt $((2 * ALIASES + 16)) ]; do
			t=""
			read -r t <"$g/gid_attrs/types/$n" 2>/dev/null
			if [ "$t" = "RoCE v2" ]; then
				read -r a <"$g/gids/$n"
				case "$a" in
				0000:0000:0000:0000:0000:ffff:*) idx="$idx $n" ;;
				esac
			fi
			n=$((n + 1))
		done
		[ $(echo $idx | wc -w) -gt $ALIASES ]
	}
	wait_for 20 gid_scan
	log "sources: GID indexes$idx"
	check "32 more addresses, each a RoCE v2 GID" '[ $(echo $idx | wc -w) -gt $ALIASES ]'
	barrier flood
	out=$("$KRC_TBIN/src_flood" rxe0 "$N1" "$(get qpn 1)" "$(get qkey 1)" $FLOOD_S both $idx 2>&1)
	echo "$out" | grep -v "source"
	check "the flood ran" 'echo "$out" | grep -q "^src_flood: sent [0-9]* (req [0-9]*, dgram [0-9]*) from 3[3-9] sources"'
	put sent "$(echo "$out" | sed -n 's/^src_flood: sent \([0-9]*\) .*/\1/p')"
	barrier flooded
fi

if [ "$KRC_NODE" = 1 ]; then
	lk0=$(counter src_lookups)
	mr0=$(counter meta_reads)
	barrier flood
	t0=$(now_ms)
	barrier flooded
	t=$(( ($(now_ms) - t0 + 999) / 1000 ))
	sent=$(get sent 2)
	lk=$(($(counter src_lookups) - lk0))
	mr=$(($(counter meta_reads) - mr0))
	log "flood of $sent messages over ${t} s: $lk source lookups ($(($(counter src_negative))) negative hits, $(counter src_limited) limited), $mr MetaServer READs"
	check "node1 received the flood" 'ge "$(counter ctrl_rx)" 1000'
	check "at most 50 lookups a second (and a second's burst) for unknown senders" \
		'[ "$lk" -le $((50 * (t + 1))) ]'
	check "MetaServer READs bounded the same way" '[ "$mr" -le $((lk + 10)) ]'
	check "misses remembered (negative cache hits)" 'ge "$(counter src_negative)" 1'
	check "no entry kept for any flooding sender" \
		'! krctl peers | grep -q "^peer $KRC_NET\.1[0-3][0-9][: ]"'
	check "... nor any peer but the members" \
		'[ "$(krctl status | sed -n "s/.*peers \([0-9]*\),.*/\1/p")" -le 2 ]'
fi

if [ "$KRC_NODE" = 0 ]; then
	barrier flood
	sleep 2
	# Datagram READs to node1 during the flood: each within 5 s.
	i=1
	while [ $i -le 8 ]; do
		s=$(now_ms)
		res=$("$KRC_TBIN/dg_partial" "$N1" "$INFO" read 4 2>&1)
		took=$(($(now_ms) - s))
		log "datagram READ $i: $res (${took} ms)"
		check "datagram READ $i completes with the data in under 10 s" \
			'echo "$res" | grep -q "path=dgram status=0 data=ok" && [ $took -lt 10000 ]'
		i=$((i + 1))
	done
	# RC handshakes to node1 during the flood: each within 5 s.
	param dg_policy 0
	i=1
	while [ $i -le 5 ]; do
		c=$(peer_block "$N1" | sed -n 's/^ *conn \([0-9]*\):.*/\1/p' | head -n 1)
		[ -n "$c" ] && param fault_conn_error "$c"
		wait_for 10 '[ -z "$(peer_block "$N1" | grep "conn .*: ready")" ]'
		s=$(now_ms)
		res=$(krctl connect "$N1" 2>&1)
		took=$(($(now_ms) - s))
		log "handshake $i: $(echo "$res" | grep path=) (${took} ms)"
		check "handshake $i to node1 completes in under 10 s" \
			'echo "$res" | grep -q "path=.*handshake" && [ $took -lt 10000 ]'
		i=$((i + 1))
	done
	barrier flooded
fi
barrier done
[ "$KRC_NODE" = 1 ] && : >"$INFO.stop"
if [ "$KRC_NODE" != 2 ]; then
	check "module unloads" 'sleep 1; krc_unload'
fi
check "kernel log clean" dmesg_clean
finish
