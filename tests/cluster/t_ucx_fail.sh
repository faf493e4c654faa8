#!/bin/sh
# nodes: 2
# A UCX peer fails under traffic (docs/ucx.md): node0's UCP process
# (tests/progs/ucx_peer_fail, peer error handling on) makes round trips
# with a process on node1 over krcore; that process is killed (SIGKILL)
# mid-run and node1's krcore reloaded (a new incarnation). UCX must tell
# node0's process through its error handler, once, and end its requests:
# an error, not a hang. Then a new process on the reloaded node1 answers
# the same node0 process over a new endpoint, every byte checked, with no
# error reported.
. "$KRC_REPO/tests/cluster/lib.sh"

META=$(node_ip 0)
if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1'
	barrier meta
else
	barrier meta
	check "module loads" "krc_load meta_server=$META"
fi
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm

MOD="$KRC_REPO/build/ucx/libuct_krcore.so"
# UCX checks an idle endpoint's peer (uct_ep_check) once per keepalive
# interval (20 s by default): 2 s bounds the time to the error.
export UCX_TLS=krcore,self UCX_LOG_LEVEL=warn UCX_KEEPALIVE_INTERVAL=2s
D="$KRC_RUN/peerfail"
[ "$KRC_NODE" = 0 ] && mkdir -p "$D"
barrier dir

if [ "$KRC_NODE" = 0 ]; then
	LD_PRELOAD=$MOD timeout $((600 * KRC_SLOW)) "$KRC_TBIN/ucx_peer_fail" survivor "$D" \
		>"$KRC_RUN/survivor.out" 2>&1
	rc=$?
	cat "$KRC_RUN/survivor.out"
	check "survivor: every check passed (exit 0)" '[ $rc = 0 ]'
	check "survivor: no FAIL line" '! grep -q "^FAIL: " "$KRC_RUN/survivor.out"'
	check "survivor: its summary says 10 checks, 0 failed" \
		'grep -qx "ucx_peer_fail: survivor 10 checks, 0 failed" "$KRC_RUN/survivor.out"'
	check "node1's krcore said goodbye when it unloaded (its connections dropped)" \
		'ge "$(counter goodbye_recv)" 1'
else
	LD_PRELOAD=$MOD "$KRC_TBIN/ucx_peer_fail" victim "$D" 1 \
		>"$KRC_RUN/victim1.out" 2>&1 &
	victim=$!
	check "the survivor made its round trips with victim 1" \
		'wait_for 120 "[ -e \"$D/traffic.1\" ]"'
	sleep 1
	kill -KILL "$victim"
	wait "$victim"
	vrc=$?
	cat "$KRC_RUN/victim1.out"
	check "victim 1 was killed under traffic (SIGKILL, not an exit)" \
		'[ $vrc = 137 ]'
	check "module unloads after the kill (the process's VQs closed)" \
		'wait_for 30 krc_unload'
	check "module loads again (a new incarnation)" \
		"krc_load meta_server=$META"
	# its peers find it by its new card once it has registered it
	meta_registered
	LD_PRELOAD=$MOD timeout $((400 * KRC_SLOW)) "$KRC_TBIN/ucx_peer_fail" victim "$D" 2 \
		>"$KRC_RUN/victim2.out" 2>&1
	rc=$?
	cat "$KRC_RUN/victim2.out"
	check "victim 2: exit 0" '[ $rc = 0 ]'
	check "victim 2: its summary says 1 checks, 0 failed" \
		'grep -qx "ucx_peer_fail: victim 1 checks, 0 failed" "$KRC_RUN/victim2.out"'
fi

barrier done 700
check "module unloads (every VQ of UCX closed)" krc_unload
check "kernel log clean" dmesg_clean
finish
