#!/bin/sh
# nodes: 2
# timeout: 300
# The datagram path writes READ and atomic results into the registration
# (its pages, pinned by krcore), never through the process's mapping. A
# process on node1 registers a buffer, maps the same addresses anew under
# userfaultfd (a mapping that blocks on any fault until the process lets
# go, as a FUSE file of its own would) and posts a datagram READ into it;
# while it holds the mapping (20 s), other processes' datagram READs to
# the same peer complete at once, and so does its own.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/map.info
HOLD=20

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1'
	"$KRC_TBIN/dp_serve" "$INFO" &
	barrier up
else
	barrier up
	check "member loads, datagrams only" "krc_load meta_server=$META dg_policy=3"
fi
barrier loaded

if [ "$KRC_NODE" = 1 ]; then
	out=$KRC_RUN/uffd.out
	"$KRC_TBIN/dg_uffd" "$META" "$INFO" $HOLD >"$out" 2>&1 &
	pid=$!
	check "the blocking process posted its READ" \
		'wait_for 30 "grep -q \"^dg_uffd: posted\" $out"'
	i=1
	ends=
	while [ $i -le 5 ]; do
		s=$(now_ms)
		res=$("$KRC_TBIN/dg_partial" "$META" "$INFO" read 4 2>&1)
		e=$(now_ms)
		ends="$ends $e"
		log "READ $i of another process: $res ($((e - s)) ms)"
		check "READ $i of another process completes with the data" \
			'echo "$res" | grep -q "path=dgram status=0 data=ok"'
		i=$((i + 1))
	done
	check "the blocking process's own READ completed while it held the mapping" \
		'wait_for 30 "grep -q \"^dg_uffd: completed status=0\" $out"'
	wait "$pid"
	cat "$out"
	check "... and it let go" 'grep -q "^dg_uffd: released" "$out"'
	# Against the moment it let go (its clock is /proc/uptime's), not a
	# guess of it: on a slow kernel its start alone takes seconds.
	rel=$(sed -n 's/^dg_uffd: released at_ms=//p' "$out")
	i=1
	for e in $ends; do
		check "READ $i of another process completed before the blocking process let go" \
			'[ -n "$rel" ] && [ "$e" -lt "$rel" ]'
		i=$((i + 1))
	done
fi
barrier done
[ "$KRC_NODE" = 0 ] && : >"$INFO.stop"
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
