#!/bin/sh
# nodes: 3
# timeout: 900
# Remote memory regions (KRCORE_IOC_LMR_ALLOC, _FREE, _SET): node0 hosts
# the MetaServer, processes of node1 allocate memory on node2, where no
# process takes part.
# - Over the datagram path first (node1's dg_policy 3): a region's data,
#   end, free and rights, checked by node2's kernel, then by its RNIC.
# - Over RC: bad arguments get their exact errors; a region with every
#   right is zero at first, holds what is written (1 B .. 1 MiB, unaligned,
#   FAA, CAS), is refused past its end and after its free; a READ-only
#   region refuses a WRITE and an atomic at node2's RNIC and stays
#   unchanged; a memset of any byte value over any range is done by
#   node2's CPU, to the exact byte, and so is a copy between regions or
#   inside one (as memmove); a region of 160 MiB (more than LITE's
#   128 MB) works at both ends and is set whole.
# - A region whose answer node2 sends late (the ALLOC sent again, each
#   copy answered first) stays the caller's: a copy of an answer is no
#   orphan.
# - node2's pool (lmr_pool_mb) refuses what it cannot hold with ENOSPC and
#   takes it once there is room.
# - The examples: krc_lmr_memset; krc_lmr_counter, a counter on node2 that
#   four processes on node0 and node1 add to, exactly.
# - Regions go with their holder: node2 holds exactly the regions a node1
#   process holds, and none once it is killed; when node1's FREEs are lost
#   (tc drops node1's packets to node2) and node1 then unloads, node2 frees
#   them because node1 left the MetaServer's membership (lmr_reclaimed).
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
	# node1 reaches node2 over datagrams only until it says otherwise
	if [ "$KRC_NODE" = 1 ]; then
		check "module loads" "krc_load meta_server=$META dg_policy=3 wr_timeout_ms=30000"
	else
		check "module loads" "krc_load meta_server=$META wr_timeout_ms=30000"
	fi
	meta_registered
fi
barrier loaded

if [ "$KRC_NODE" = 1 ]; then
	# First over the datagram path only (dg_policy 3: no RC to node2
	# yet), then over RC (dg_policy 0: a handshake, then the pool).
	check "over datagrams: a region with every right, its data, its end, its free" \
		"DP_LMR_PATH=dg $LMR $OWNER rw"
	check "over datagrams: a READ-only region refuses WRITE and FAA" \
		"DP_LMR_PATH=dg $LMR $OWNER rights"
	param dg_policy 0
	check "bad arguments: exact errors" "DP_LMR_PATH=rc $LMR $OWNER args $KRC_IP"
	check "a region with every right: zero, written, read back, atomics, freed" \
		"DP_LMR_PATH=rc $LMR $OWNER rw"
	check "a READ-only region: WRITE and FAA refused by the owner's RNIC" \
		"DP_LMR_PATH=rc $LMR $OWNER rights"
	check "memset at the owner: any value, exact edges, exact errors" \
		"$LMR $OWNER set"
	check "copies at the owner, as memmove; exact errors" \
		"$LMR $OWNER copy $META"
	check "a region of 160 MiB, used at both ends, all of it set at the owner" \
		"$LMR $OWNER big 160"
fi
barrier used
if [ "$KRC_NODE" = 2 ]; then
	lmr_counters
	check "node2 allocated 10 regions for node1, and freed them all" \
		'eq "$(counter lmr_allocs)" 10 && eq "$(counter lmr_frees)" 10 &&
		 eq "$(live)" 0'
	check "node2 did the 4 memsets and 4 copies asked of it (the bad ones stopped at node1)" \
		'eq "$(counter lmr_sets)" 4 && eq "$(counter lmr_copies)" 4 &&
		 eq "$(counter lmr_set_refused)" 0'
	check "node2 refused one (512 GiB past the pool)" \
		'eq "$(counter lmr_refused)" 1'
	param fault_lmr_alloc_delay_ms 450
	put allocs1 "$(counter lmr_allocs)"
fi
barrier slow
# A late answer: node1 sends its ALLOC again, node2 answers the copies at
# once (the region is ready) and the first answer late; the region node1
# took stays its own (the later answers are copies, not orphans).
if [ "$KRC_NODE" = 1 ]; then
	r0=$(counter lmr_retransmits)
	check "a region allocated slowly works as any other" "$LMR $OWNER rw"
	r1=$(counter lmr_retransmits)
	log "ALLOCs sent again: $((r1 - r0)), orphans: $(counter lmr_orphans)"
	check "the ALLOC went again, and no answer was taken for an orphan" \
		'ge $((r1 - r0)) 1 && eq "$(counter lmr_orphans)" 0'
fi
barrier slowed
if [ "$KRC_NODE" = 2 ]; then
	param fault_lmr_alloc_delay_ms 0
	check "node2 made one region for the copies of that ALLOC, answered a copy, and freed it" \
		'eq $(($(counter lmr_allocs) - $(get allocs1 2))) 1 && eq "$(live)" 0 &&
		 ge "$(counter lmr_alloc_copies)" 1'
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

# The examples: LITE's remote memset in three calls; a counter on node2
# that processes on node0 and node1 add to with the key its holder
# shared, exactly.
if [ "$KRC_NODE" = 1 ]; then
	check "krc_lmr_memset: 64 MiB set to 42 at node2" \
		'"$KRC_BIN/krc_lmr_memset" "$OWNER" 64 42 >"$KRC_RUN/memset.out" &&
		 grep -qx "first 42 last 42" "$KRC_RUN/memset.out"'
	"$KRC_BIN/krc_lmr_counter" hold "$OWNER" "$KRC_RUN/counter.key" \
		>"$KRC_RUN/counter.out" 2>&1 &
	holder=$!
	check "krc_lmr_counter: the counter allocated, its key shared" \
		'wait_for 60 "grep -q holding \"$KRC_RUN/counter.out\""'
fi
barrier counter
if [ "$KRC_NODE" != 2 ]; then
	"$KRC_BIN/krc_lmr_counter" add "$KRC_RUN/counter.key" 300 >"$KRC_RUN/add.$KRC_NODE.a" 2>&1 &
	a=$!
	"$KRC_BIN/krc_lmr_counter" add "$KRC_RUN/counter.key" 300 >"$KRC_RUN/add.$KRC_NODE.b" 2>&1 &
	b=$!
	check "two processes added 300 each" 'wait $a && wait $b'
fi
barrier added
if [ "$KRC_NODE" = 1 ]; then
	kill -TERM "$holder"
	check "the counter is exactly 1200 (4 processes on 2 nodes)" \
		'wait $holder && grep -qx "final 1200" "$KRC_RUN/counter.out"'
	cat "$KRC_RUN/counter.out"
fi
barrier counted_up
if [ "$KRC_NODE" = 2 ]; then
	check "node2: the examples' regions freed" 'wait_for 30 "eq \$(live) 0"'
fi
barrier examples_checked

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
