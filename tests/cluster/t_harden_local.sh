#!/bin/sh
# nodes: 1
# timeout: 400
# Hostile processes on one node (issue 7), each check a regression test:
#   scribbled ring headers (the kernel keeps its own geometry);
#   another process's valid rkey on a loopback connection: refused;
#   the loopback connection broken: rebuilt, requests re-posted, kernel
#   traffic (MetaServer lookups on the host) on its own QP;
#   ports above 65535, privileged ports, per-process caps, mappings;
#   poll/epoll on a VQ;
#   the RDMA device removed under a VQ in use: ENODEV, no oops, and the
#   node comes back with the device.
. "$KRC_REPO/tests/cluster/lib.sh"
SELF=$KRC_IP
H=$KRC_TBIN/harden

check "module loads" 'krc_load meta_host=1'
check "both rings scribbled: every message and completion intact" \
	'"$H" ring "$SELF" 5100'
check "loopback: another process's valid rkey refused" '"$H" rkey "$SELF"'
check "refused up front: no connection broke" \
	'eq "$(counter recoveries)" 0 && ge "$(counter wr_foreign_rkey)" 2'
lb=$(counter loopback_created)
check "the loopback connection fails: READs re-posted, qconnect works" \
	'"$H" breakself "$SELF"'
check "a new loopback connection was made" \
	'eq "$(counter loopback_created)" $((lb + 1))'
check "MetaServer lookups on the host still work (kernel loopback QP)" \
	'krctl lookup "$SELF" -f >/dev/null'

param max_ports_per_proc 2
param max_vqs_per_proc 8
check "port range, privileged ports, per-process caps, ring mappings" \
	'"$H" limits "$SELF"'
param max_ports_per_proc 64
param max_vqs_per_proc 8192

check "a closed VQ's data plane is reused zeroed; a mapped ring holds its VQ" \
	'"$H" vqcache "$SELF"'
check "poll and epoll (level and edge triggered) on a VQ (issue 8)" \
	'"$KRC_TBIN/vq_poll" "$SELF" 5200'

# VQ memory is charged to the opener's memory cgroup (cgroup v2).
M=$KRC_RUN/memcg
CG=/sys/fs/cgroup
mkdir -p "$M"
if mount -t cgroup2 none $CG 2>/dev/null || [ -e $CG/cgroup.controllers ]; then
	echo +memory >$CG/cgroup.subtree_control
	mkdir -p $CG/krc
	sh -c "echo \$\$ >$CG/krc/cgroup.procs && exec \"$H\" memcg \"$SELF\" 200 \"$M\"" \
		>"$KRC_RUN/memcg.out" 2>&1 &
	mpid=$!
	sleep 1
	base=$(cat $CG/krc/memory.current)
	touch "$M/memcg.go"
	wait_for 60 "[ -e \"$M/memcg.opened\" ]"
	used=$(($(cat $CG/krc/memory.current) - base))
	log "200 connected VQs: $used bytes charged to their cgroup"
	touch "$M/memcg.done"
	check "200 connected VQs" "wait $mpid"
	check "their kernel memory (>= 16 KiB each) is charged to their cgroup" \
		'ge "$used" $((200 * 16384))'
	# A closed VQ's data plane goes only to a qconnect of its cgroup.
	mkdir -p $CG/krc_a $CG/krc_b
	in_cg() {
		sh -c "echo \$\$ >$CG/$1/cgroup.procs && exec \"$H\" vqonce \"$SELF\""
	}
	check "a VQ in cgroup A: connected, closed" 'in_cg krc_a'
	h=$(counter vq_cache_hits)
	m=$(counter vq_cache_misses)
	check "a VQ in cgroup B" 'in_cg krc_b'
	check "B did not take A's data plane" \
		'eq "$(counter vq_cache_hits)" $h && eq "$(counter vq_cache_misses)" $((m + 1))'
	check "a VQ in cgroup A again" 'in_cg krc_a'
	check "A took its own" 'eq "$(counter vq_cache_hits)" $((h + 1))'
else
	fail "no cgroup v2 in this node"
fi

D=$KRC_RUN/devgone
mkdir -p "$D"
"$H" devgone "$SELF" "$D" >"$KRC_RUN/devgone.out" 2>&1 &
pid=$!
check "a VQ with requests in flight is ready" "wait_for 60 '[ -e \"$D/ready\" ]'"
check "rxe0 removed under it" 'rdma link delete rxe0'
check "control plane stopped" 'wait_for 30 "krctl status | grep -q \"^  down\""'
touch "$D/gone"
check "the process saw ENODEV everywhere" "wait_for 60 '[ -e \"$D/checked\" ]'"
check "rxe0 added again" 'rdma link add rxe0 type rxe netdev eth0'
check "control plane up again" \
	'wait_for 60 "krctl status | grep -q \"metaserver\""'
touch "$D/back"
check "device removal and return, as the process saw them" "wait $pid"
cat "$KRC_RUN/devgone.out"
check "every VQ closed" 'eq "$(counter vq_created)" "$(counter vq_destroyed)"'
check "every user registration given back" \
	'eq "$(counter user_mr_created)" "$(counter user_mr_destroyed)"'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
