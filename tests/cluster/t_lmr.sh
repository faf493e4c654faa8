#!/bin/sh
# nodes: 3
# timeout: 900
# Remote memory regions (KRCORE_IOC_LMR_ALLOC, _FREE): node0 hosts the
# MetaServer, a process of node1 allocates memory on node2, where no
# process takes part. Bad arguments get their exact errors; a region
# with every right is zero at first, holds what is written (1 B .. 1 MiB,
# unaligned, FAA, CAS), is refused past its end and after its free; a
# READ-only region refuses a WRITE and an atomic at node2's RNIC and
# stays unchanged; a region of 160 MiB (more than LITE's 128 MB) works at
# both ends; node2's pool (lmr_pool_mb) refuses what it cannot hold with
# ENOSPC and takes it once there is room. Regions go with their holder:
# node2 holds exactly the regions a node1 process holds, and none once
# it is killed; when node1's FREEs are lost (tc drops node1's packets to
# node2) and node1 then unloads, node2 frees them because node1 left
# the MetaServer's membership (lmr_reclaimed).
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
OWNER=$(node_ip 2)
LMR="$KRC_TBIN/dp_lmr"
IF=$(ip -o -4 addr show | awk -v ip="$KRC_IP" 'index($4, ip "/") == 1 { print $2 }')

# live: regions node2 owns now
live() { echo $(($(counter lmr_created) - $(counter lmr_destroyed))); }
lmr_counters() {
	for c in lmr_created lmr_destroyed lmr_allocs lmr_refused lmr_frees \
		 lmr_reclaimed lmr_free_stray lmr_orphans lmr_free_lost \
		 lmr_retransmits; do
		printf '%s=%s ' "$c" "$(counter $c)"
	done
	echo
}

if [ "$KRC_NODE" = 0 ]; then
	check "module loads (MetaServer)" 'krc_load meta_host=1'
	barrier up
else
	barrier up
	check "module loads" "krc_load meta_server=$META"
	meta_registered
fi
barrier loaded

if [ "$KRC_NODE" = 1 ]; then
	check "bad arguments: exact errors" "$LMR $OWNER args $KRC_IP"
	check "a region with every right: zero, written, read back, atomics, freed" \
		"$LMR $OWNER rw"
	check "a READ-only region: WRITE and FAA refused by the owner's RNIC" \
		"$LMR $OWNER rights"
	check "a region of 160 MiB, used at both ends" "$LMR $OWNER big 160"
fi
barrier used
if [ "$KRC_NODE" = 2 ]; then
	check "node2 allocated 3 regions for node1, and freed them all" \
		'eq "$(counter lmr_allocs)" 3 && eq "$(counter lmr_frees)" 3 &&
		 eq "$(live)" 0'
	check "node2 refused one (512 GiB past the pool)" \
		'eq "$(counter lmr_refused)" 1'
	param lmr_pool_mb 16
fi
barrier small
if [ "$KRC_NODE" = 1 ]; then
	check "a 16 MiB pool: ENOSPC past it, room again once freed" \
		"$LMR $OWNER pool 16"
fi
barrier pooled
if [ "$KRC_NODE" = 2 ]; then
	param lmr_pool_mb 256
	lmr_counters
	check "node2: every region of the pool test freed" 'eq "$(live)" 0'
fi
barrier pool_checked

# A holder that exits frees its regions.
if [ "$KRC_NODE" = 1 ]; then
	"$LMR" "$OWNER" hold 3 >"$KRC_RUN/hold1" 2>&1 &
	holder=$!
	check "a process holds 3 regions" \
		'wait_for 60 "grep -q \"held 3\" \"$KRC_RUN/hold1\""'
fi
barrier held
if [ "$KRC_NODE" = 2 ]; then
	check "node2 owns exactly 3 regions" 'eq "$(live)" 3'
	put frees0 "$(counter lmr_frees)"
fi
barrier counted
if [ "$KRC_NODE" = 1 ]; then
	kill -9 "$holder"
	wait "$holder" 2>/dev/null
fi
barrier killed
if [ "$KRC_NODE" = 2 ]; then
	check "the holder killed: node2 freed its 3 regions (its FREEs)" \
		'wait_for 30 "eq \$(live) 0" &&
		 eq $(($(counter lmr_frees) - $(get frees0 2))) 3'
fi
barrier freed

# A holder node that vanishes: its FREEs and GOODBYE lost, it leaves the
# membership, the owner's sweep frees its regions.
if [ "$KRC_NODE" = 1 ]; then
	"$LMR" "$OWNER" hold 2 >"$KRC_RUN/hold2" 2>&1 &
	holder=$!
	check "a process holds 2 regions" \
		'wait_for 60 "grep -q \"held 2\" \"$KRC_RUN/hold2\""'
fi
barrier held2
if [ "$KRC_NODE" = 2 ]; then
	check "node2 owns exactly 2 regions" 'eq "$(live)" 2'
fi
barrier counted2
if [ "$KRC_NODE" = 1 ]; then
	check "node1 cut off from node2 (tc)" \
		'tc qdisc add dev "$IF" root handle 1: prio &&
		 tc filter add dev "$IF" parent 1: protocol ip prio 1 u32 match ip dst "$OWNER/32" action drop'
	kill -9 "$holder"
	wait "$holder" 2>/dev/null
	check "node1's FREEs went unanswered" \
		'wait_for 30 "eq \$(counter lmr_free_lost) 2"'
	check "node1 unloads (its GOODBYE lost too)" krc_unload
fi
barrier gone
if [ "$KRC_NODE" = 2 ]; then
	check "node2's sweep freed node1's 2 regions" \
		'wait_for 30 "eq \$(live) 0" && eq "$(counter lmr_reclaimed)" 2'
fi
[ "$KRC_NODE" = 2 ] && lmr_counters
barrier swept
if [ "$KRC_NODE" = 1 ]; then
	check "node1 back on the network" 'tc qdisc del dev "$IF" root'
fi
finish
