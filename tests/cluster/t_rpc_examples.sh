#!/bin/sh
# nodes: 3
# timeout: 600
# The RPC examples (examples/krc_rpc_*.c) as a user runs them, from
# build/bin: node0 (the MetaServer) serves krc_rpc_echo on port 9100 and
# krc_rpc_counter (two threads) on port 9101; node1 and node2 load krcore
# only then, as members:
#   krc_rpc_once on node2, which never contacted node0: exit 0, its line
#   with the time, and its one connect was not a pooled one;
#   krc_rpc_counter add from node1 and node2 at once, 100 ADDs of 1
#   each: get says exactly 200, and one of the two last replies was 200;
#   an echo call from node1 and from node2: each its own text back;
#   names of 0 and 65 bytes: EINVAL from the server, which serves on;
#   a one-way RESET, then get (a new process) reads 0;
#   SIGTERM: each server exits 0 and prints how many requests it served,
#   exactly those made.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
META_RE=$(printf '%s' "$META" | sed 's/\./\\./g')
B=$KRC_REPO/build/bin
D=$KRC_RUN/rpcex
CNT=$B/krc_rpc_counter

servers_ready() {
	grep -qx "krc_rpc_echo: serving port 9100" "$D/echo.out" &&
		grep -qx "krc_rpc_counter: serving port 9101" "$D/counter.out"
}

if [ "$KRC_NODE" = 0 ]; then
	mkdir -p "$D"
	check "MetaServer loads" 'krc_load meta_host=1'
	"$B/krc_rpc_echo" serve 9100 >"$D/echo.out" 2>&1 &
	epid=$!
	"$CNT" serve 9101 >"$D/counter.out" 2>&1 &
	cpid=$!
	check "both servers bound their ports" 'wait_for 30 servers_ready'
fi
barrier up
if [ "$KRC_NODE" != 0 ]; then
	check "member loads" "krc_load meta_server=$META"
fi
if [ "$KRC_NODE" = 2 ]; then
	out=$("$B/krc_rpc_once" "$META" 9100 2>&1)
	rc=$?
	log "$out"
	check "krc_rpc_once: one call from a new process, its time printed" \
		'[ $rc = 0 ] && printf "%s\n" "$out" | grep -qxE "krc_rpc_once: reply from $META_RE:9100 in [0-9]+ us from start(, at most [0-9]+ us from fork \(counted in [0-9]+ us ticks\))?"'
	check "its connect was this node's first to node0 (not pooled)" \
		'eq "$(counter qconnect_pooled)" 0 &&
		 eq $(($(counter qconnect_handshake) + $(counter qconnect_datagram))) 1'
fi
# node1 waits here for node2's first contact: both then add at once.
barrier once
if [ "$KRC_NODE" != 0 ]; then
	last=$("$CNT" add "$META" 9101 hits 1 100 2>&1)
	rc=$?
	log "add: last value $last"
	check "100 ADDs from this node (the other adds at once)" \
		'[ $rc = 0 ] && ge "$last" 100 && ge 200 "$last"'
	put last "$last"
fi
barrier added
if [ "$KRC_NODE" != 0 ]; then
	text="node$KRC_NODE says: hello, echo (1 2 3)"
	out=$("$B/krc_rpc_echo" call "$META" 9100 "$text" 2>&1)
	rc=$?
	log "echo: $out"
	check "an echo call: exactly its own text back" \
		'[ $rc = 0 ] && [ "$out" = "$text" ]'
fi
if [ "$KRC_NODE" = 1 ]; then
	# The client sends any name as given: the server must check it.
	out=$("$CNT" get "$META" 9101 "" 2>&1)
	rc=$?
	log "empty name: $out"
	check "an empty name: EINVAL from the server" \
		'[ $rc = 1 ] && printf "%s\n" "$out" | grep -qx "krc_rpc_counter: get: .*(Invalid argument)"'
	out=$("$CNT" get "$META" 9101 "$(printf '%065d' 0)" 2>&1)
	rc=$?
	log "65-byte name: $out"
	check "a 65-byte name: EINVAL from the server" \
		'[ $rc = 1 ] && printf "%s\n" "$out" | grep -qx "krc_rpc_counter: get: .*(Invalid argument)"'
	v=$("$CNT" get "$META" 9101 hits 2>&1)
	log "get: $v"
	check "get after both: exactly 200 (the server served on)" '[ "$v" = 200 ]'
	other=$(get last 2)
	check "the last ADD of one of the two answered 200" \
		'[ "$last" = 200 ] || [ "$other" = 200 ]'
fi
barrier checked
if [ "$KRC_NODE" = 2 ]; then
	out=$("$CNT" reset "$META" 9101 hits 2>&1)
	rc=$?
	check "a one-way RESET sent" '[ $rc = 0 ] && [ -z "$out" ]'
	# Messages of one channel arrive in order, but each get below is a
	# new process with a channel of its own, and the server's other
	# thread may run it before the RESET: poll up to 5 s for 0.
	n=0
	v=
	while [ $n -lt 25 ]; do
		n=$((n + 1))
		v=$("$CNT" get "$META" 9101 hits 2>&1)
		[ "$v" = 0 ] && break
		sleep 0.2
	done
	log "get after the RESET: $v ($n get(s))"
	check "after the one-way RESET, get reads 0 (within 5 s)" '[ "$v" = 0 ]'
	put gets "$n"
fi
barrier served
if [ "$KRC_NODE" = 0 ]; then
	kill -TERM "$epid" "$cpid"
	wait "$epid"
	erc=$?
	wait "$cpid"
	crc=$?
	cat "$D/echo.out" "$D/counter.out"
	# krc_rpc_once and one echo call each from node1 and node2; 200 ADDs,
	# on node1 2 bad names and a get, on node2 the RESET and its gets.
	gets=$(get gets 2)
	want=$((200 + 3 + 1 + ${gets:-0}))
	check "the echo server exits 0 on SIGTERM: served 3 calls" \
		'[ $erc = 0 ] && [ "$(cat "$D/echo.out")" = "$(printf "%s\n%s" \
		 "krc_rpc_echo: serving port 9100" "krc_rpc_echo: served 3 calls")" ]'
	check "the counter server exits 0 on SIGTERM: served $want requests" \
		'[ $crc = 0 ] && [ "$(cat "$D/counter.out")" = "$(printf "%s\n%s" \
		 "krc_rpc_counter: serving port 9101" "krc_rpc_counter: served $want requests")" ]'
fi
barrier done
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
