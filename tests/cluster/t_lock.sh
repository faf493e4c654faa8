#!/bin/sh
# nodes: 3
# timeout: 900
# Locks and barriers on remote memory (KRCORE_IOC_LOCK, _UNLOCK; libkrcore's
# krc_lock, krc_barrier_wait): node0 hosts the MetaServer and a process
# that allocates a region on node2 and shares its key; processes on all
# three nodes (node2's own through its loopback) use it.
# - Bad locks get their exact errors (node1's kernel, then node2's); a
#   lock not granted in time leaves node2's queue (lock_cancels).
# - Mutual exclusion: 6 processes on 3 nodes add 1 to a counter with a
#   READ and a WRITE under the lock, 25 times each: exactly 150.
# - Fairness: while node1 holds the lock, node0 asks, then node2; they
#   are granted in that order (grant numbers A+1, A+2).
# - A grant sent late (fault_lock_grant_delay_ms): the LOCK goes again and
#   is answered at once; the late grant is a copy, not an orphan.
# - A holder killed: its kernel releases the lock; the waiter gets it.
# - The owner's table bounded (lock_entries_max 8): node1 may queue 2
#   entries, its third is ENOSPC, node0's still queues.
# - A barrier of 3 processes on 3 nodes, 6 rounds, a different one late
#   each round: nobody passes before everyone has arrived.
# - The example krc_lmr_workq: 300 jobs in a queue on node2 guarded by a
#   lock, a worker on each node: each job done exactly once; and
#   krc_lmr_hash: a table on node2 that each node puts 100 keys in at once
#   (CAS, no lock) and finds all 300 in.
# - A holder node that vanishes (its UNLOCK and GOODBYE lost to tc, then
#   unloaded): node2's membership sweep gives the lock to the waiter.
# - The region freed: a lock on it is ESTALE; node2 keeps no lock entry.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
OWNER=$(node_ip 2)
LOCK="$KRC_TBIN/dp_lock"
KEY="$KRC_RUN/lock.key"
IF=$(ip -o -4 addr show | awk -v ip="$KRC_IP" 'index($4, ip "/") == 1 { print $2 }')

lock_counters() {
	for c in lock_grants lock_waits lock_copies lock_releases lock_cancels \
		 lock_reclaimed lock_refused lock_gave_up lock_orphans \
		 lock_unlock_lost lock_entry_created lock_entry_destroyed \
		 lock_held_created lock_held_destroyed; do
		printf '%s=%s ' "$c" "$(counter $c)"
	done
	echo
}
# entries: lockers in node2's queues now
entries() {
	echo $(($(counter lock_entry_created) - $(counter lock_entry_destroyed)))
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

if [ "$KRC_NODE" = 0 ]; then
	"$LOCK" hold "$OWNER" "$KEY" >"$KRC_RUN/hold.out" 2>&1 &
	holder=$!
	check "a region on node2, its key shared" \
		'wait_for 60 "grep -q holding \"$KRC_RUN/hold.out\""'
fi
barrier keyed

if [ "$KRC_NODE" = 1 ]; then
	check "bad locks: exact errors; a lock not granted in time leaves" \
		"$LOCK errors $KEY"
	check "node1: one lock gave up, no grant was an orphan" \
		'eq "$(counter lock_gave_up)" 1 && eq "$(counter lock_orphans)" 0'
fi
barrier errors
if [ "$KRC_NODE" = 2 ]; then
	lock_counters
	check "node2: the waiter that gave up left its queue; 3 bad locks refused here" \
		'eq "$(counter lock_cancels)" 1 && eq "$(counter lock_refused)" 3 &&
		 eq "$(entries)" 0'
fi
barrier errors_checked

# Mutual exclusion, from every node (node2's processes through its own
# loopback connection).
"$LOCK" count "$KEY" 25 >"$KRC_RUN/count.$KRC_NODE.a" 2>&1 &
a=$!
"$LOCK" count "$KEY" 25 >"$KRC_RUN/count.$KRC_NODE.b" 2>&1 &
b=$!
check "two processes counted 25 times each under the lock" 'wait $a && wait $b'
barrier counted
if [ "$KRC_NODE" = 1 ]; then
	check "the counter is exactly 150 (6 processes on 3 nodes)" \
		'"$LOCK" value "$KEY" >"$KRC_RUN/value" && grep -qx "value 150" "$KRC_RUN/value"'
	cat "$KRC_RUN/value"
fi
barrier count_checked

# Fairness: A (node1) holds; B (node0) asks, then C (node2).
if [ "$KRC_NODE" = 2 ]; then
	put waits0 "$(counter lock_waits)"
fi
barrier fair0
if [ "$KRC_NODE" = 1 ]; then
	"$LOCK" order "$KEY" 0 12000 A >"$KRC_RUN/order.A" 2>&1 &
	pa=$!
	check "A holds the lock" 'wait_for 30 "grep -q \"A grant\" \"$KRC_RUN/order.A\""'
fi
barrier fairA
if [ "$KRC_NODE" = 0 ]; then
	"$LOCK" order "$KEY" 0 0 B >"$KRC_RUN/order.B" 2>&1 &
	pb=$!
fi
if [ "$KRC_NODE" = 2 ]; then
	check "B waits behind A" \
		'wait_for 30 "eq \$(counter lock_waits) \$(($(get waits0 2) + 1))"'
	"$LOCK" order "$KEY" 0 0 C >"$KRC_RUN/order.C" 2>&1 &
	pc=$!
	check "C waits behind B" \
		'wait_for 30 "eq \$(counter lock_waits) \$(($(get waits0 2) + 2))"'
fi
barrier fairBC
[ "$KRC_NODE" = 1 ] && check "A released" 'wait $pa'
[ "$KRC_NODE" = 0 ] && check "B granted and released" 'wait $pb'
[ "$KRC_NODE" = 2 ] && check "C granted and released" 'wait $pc'
barrier fair_done
if [ "$KRC_NODE" = 1 ]; then
	ga=$(sed -n 's/^A grant //p' "$KRC_RUN/order.A")
	gb=$(sed -n 's/^B grant //p' "$KRC_RUN/order.B")
	gc=$(sed -n 's/^C grant //p' "$KRC_RUN/order.C")
	log "grants: A $ga, B $gb, C $gc"
	check "granted in the order asked: B after A, C after B" \
		'eq "$gb" $((ga + 1)) && eq "$gc" $((ga + 2))'
fi
barrier fair_checked

# A late grant: node2 sends each grant 450 ms late, node1's LOCK goes
# again and is answered at once; the late grant is a copy, no orphan.
if [ "$KRC_NODE" = 2 ]; then
	param fault_lock_grant_delay_ms 450
	put copies0 "$(counter lock_copies)"
fi
barrier late0
if [ "$KRC_NODE" = 1 ]; then
	r0=$(counter lmr_retransmits)
	o0=$(counter lock_orphans)
	check "a lock granted late is the caller's: held 1.5 s, released" \
		'"$LOCK" order "$KEY" 0 1500 H >"$KRC_RUN/order.H" &&
		 grep -q "H grant" "$KRC_RUN/order.H"'
	check "its LOCK went again, and the late grant was no orphan" \
		'ge $(($(counter lmr_retransmits) - r0)) 1 &&
		 eq "$(counter lock_orphans)" "$o0"'
fi
barrier late1
if [ "$KRC_NODE" = 2 ]; then
	param fault_lock_grant_delay_ms 0
	check "node2 answered a copy of the LOCK at once" \
		'ge $(($(counter lock_copies) - $(get copies0 2))) 1 && eq "$(entries)" 0'
fi
barrier late_checked

# A holder killed: its kernel gives the lock back.
if [ "$KRC_NODE" = 2 ]; then
	put waits1 "$(counter lock_waits)"
	put rel1 "$(counter lock_releases)"
fi
barrier kill0
if [ "$KRC_NODE" = 1 ]; then
	"$LOCK" hang "$KEY" >"$KRC_RUN/hang1" 2>&1 &
	hung=$!
	check "a process holds the lock" 'wait_for 30 "grep -q locked \"$KRC_RUN/hang1\""'
fi
barrier hung
if [ "$KRC_NODE" = 0 ]; then
	"$LOCK" order "$KEY" 0 0 D >"$KRC_RUN/order.D" 2>&1 &
	pd=$!
fi
if [ "$KRC_NODE" = 2 ]; then
	check "D waits behind the hung holder" \
		'wait_for 30 "eq \$(counter lock_waits) \$(($(get waits1 2) + 1))"'
fi
barrier waiting
if [ "$KRC_NODE" = 1 ]; then
	kill -9 "$hung"
	wait "$hung" 2>/dev/null
	check "node1 let go of the killed process's lock" \
		'eq $(($(counter lock_held_created) - $(counter lock_held_destroyed))) 0'
fi
barrier killed
if [ "$KRC_NODE" = 0 ]; then
	check "D got the lock the killed process held" \
		'wait $pd && grep -q "D grant" "$KRC_RUN/order.D"'
fi
barrier killed_checked
if [ "$KRC_NODE" = 2 ]; then
	check "node2: released by the holder's kernel (2), nothing reclaimed" \
		'eq $(($(counter lock_releases) - $(get rel1 2))) 2 &&
		 eq "$(counter lock_reclaimed)" 0 && eq "$(entries)" 0'
fi
barrier released

# The owner's table bounded: lock_entries_max 8, so one node may queue 2.
if [ "$KRC_NODE" = 2 ]; then
	param lock_entries_max 8
	put waits3 "$(counter lock_waits)"
	put refused3 "$(counter lock_refused)"
fi
barrier bound0
if [ "$KRC_NODE" = 1 ]; then
	"$LOCK" hang "$KEY" >"$KRC_RUN/hang3" 2>&1 &
	hung=$!
	check "a process holds the lock" 'wait_for 30 "grep -q locked \"$KRC_RUN/hang3\""'
	"$LOCK" order "$KEY" 0 0 F >"$KRC_RUN/order.F" 2>&1 &
	pf=$!
fi
if [ "$KRC_NODE" = 2 ]; then
	check "node1's second entry waits" \
		'wait_for 30 "eq \$(counter lock_waits) \$(($(get waits3 2) + 1))"'
fi
barrier bound1
if [ "$KRC_NODE" = 1 ]; then
	check "node1's third entry: ENOSPC (its share of 8 is 2)" "$LOCK nospace $KEY"
fi
barrier bound2
if [ "$KRC_NODE" = 0 ]; then
	"$LOCK" order "$KEY" 0 0 G >"$KRC_RUN/order.G" 2>&1 &
	pg=$!
fi
if [ "$KRC_NODE" = 2 ]; then
	check "node0 still queues behind node1's two" \
		'wait_for 30 "eq \$(counter lock_waits) \$(($(get waits3 2) + 2))" &&
		 eq $(($(counter lock_refused) - $(get refused3 2))) 1'
fi
barrier bound3
if [ "$KRC_NODE" = 1 ]; then
	kill -9 "$hung"
	wait "$hung" 2>/dev/null
	check "node1's waiter got the lock after the holder went" \
		'wait $pf && grep -q "F grant" "$KRC_RUN/order.F"'
fi
if [ "$KRC_NODE" = 0 ]; then
	check "then node0's" 'wait $pg && grep -q "G grant" "$KRC_RUN/order.G"'
fi
barrier bound4
[ "$KRC_NODE" = 2 ] && param lock_entries_max 16384

# A barrier of three processes on three nodes, a different one late each
# round.
check "6 barrier rounds of 3 processes on 3 nodes" \
	"$LOCK barrier $KEY 3 $KRC_NODE 6"
barrier barriers

# The example: a work queue of 300 jobs on node2, a worker on each node.
if [ "$KRC_NODE" = 0 ]; then
	"$KRC_BIN/krc_lmr_workq" hold "$OWNER" "$KRC_RUN/workq.key" 300 \
		>"$KRC_RUN/workq.out" 2>&1 &
	wq=$!
	check "krc_lmr_workq: 300 jobs queued on node2" \
		'wait_for 60 "grep -q holding \"$KRC_RUN/workq.out\""'
fi
barrier queued
check "krc_lmr_workq: a worker took jobs until none was left" \
	'"$KRC_BIN/krc_lmr_workq" work "$KRC_RUN/workq.key" >"$KRC_RUN/took.$KRC_NODE"'
barrier worked
if [ "$KRC_NODE" = 0 ]; then
	kill -TERM "$wq"
	took=$(($(sed -n 's/^took //p' "$KRC_RUN/took.0") +
		$(sed -n 's/^took //p' "$KRC_RUN/took.1") +
		$(sed -n 's/^took //p' "$KRC_RUN/took.2")))
	log "jobs taken: $(cat "$KRC_RUN"/took.*  | tr '\n' ' ')"
	check "each of the 300 jobs done exactly once (sum 45150), by 3 workers" \
		'wait $wq && grep -qx "done 300 sum 45150" "$KRC_RUN/workq.out" &&
		 eq "$took" 300'
	cat "$KRC_RUN/workq.out"
fi
barrier workq_checked

# The example: a hash table of 512 slots on node2, 100 keys put from each
# node at once (CAS claims, no lock), then all 300 looked up from each.
if [ "$KRC_NODE" = 0 ]; then
	"$KRC_BIN/krc_lmr_hash" hold "$OWNER" "$KRC_RUN/hash.key" \
		>"$KRC_RUN/hash.out" 2>&1 &
	ht=$!
	check "krc_lmr_hash: the table allocated on node2" \
		'wait_for 60 "grep -q holding \"$KRC_RUN/hash.out\""'
fi
barrier hashed
check "krc_lmr_hash: 100 keys put" \
	'"$KRC_BIN/krc_lmr_hash" put "$KRC_RUN/hash.key" $((1 + 100 * KRC_NODE)) 100'
barrier put
check "krc_lmr_hash: all 300 keys found, each with its value" \
	'"$KRC_BIN/krc_lmr_hash" get "$KRC_RUN/hash.key" 1 300 >"$KRC_RUN/found.$KRC_NODE" &&
	 grep -qx "found 300" "$KRC_RUN/found.$KRC_NODE"'
barrier found
if [ "$KRC_NODE" = 0 ]; then
	kill -TERM "$ht"
	check "the table holds exactly 300 entries" \
		'wait $ht && grep -qx "entries 300" "$KRC_RUN/hash.out"'
fi
barrier hash_checked

# A holder node that vanishes: node2 learns it from the membership.
if [ "$KRC_NODE" = 2 ]; then
	put waits2 "$(counter lock_waits)"
fi
barrier vanish0
if [ "$KRC_NODE" = 1 ]; then
	"$LOCK" hang "$KEY" >"$KRC_RUN/hang2" 2>&1 &
	hung=$!
	check "a process holds the lock" 'wait_for 30 "grep -q locked \"$KRC_RUN/hang2\""'
fi
barrier hung2
if [ "$KRC_NODE" = 0 ]; then
	"$LOCK" order "$KEY" 0 0 E >"$KRC_RUN/order.E" 2>&1 &
	pe=$!
fi
if [ "$KRC_NODE" = 2 ]; then
	check "E waits behind node1's holder" \
		'wait_for 30 "eq \$(counter lock_waits) \$(($(get waits2 2) + 1))"'
fi
barrier waiting2
if [ "$KRC_NODE" = 1 ]; then
	check "node1 cut off from node2 (tc)" \
		'tc qdisc add dev "$IF" root handle 1: prio &&
		 tc filter add dev "$IF" parent 1: protocol ip prio 1 u32 match ip dst "$OWNER/32" action drop'
	kill -9 "$hung"
	wait "$hung" 2>/dev/null
	check "node1's UNLOCK went unanswered" \
		'wait_for 30 "eq \$(counter lock_unlock_lost) 1"'
	check "node1 unloads (its GOODBYE lost too)" krc_unload
fi
barrier gone
if [ "$KRC_NODE" = 0 ]; then
	check "E got the lock of the vanished node" \
		'wait $pe && grep -q "E grant" "$KRC_RUN/order.E"'
fi
if [ "$KRC_NODE" = 2 ]; then
	check "node2's sweep dropped node1's lock" \
		'wait_for 60 "eq \$(counter lock_reclaimed) 1"'
fi
barrier swept
if [ "$KRC_NODE" = 1 ]; then
	check "node1 back on the network" 'tc qdisc del dev "$IF" root'
fi

# The region freed: its locks go, a new lock is ESTALE.
if [ "$KRC_NODE" = 0 ]; then
	kill -TERM "$holder"
	check "the region freed by its holder" 'wait $holder'
	check "a lock on the freed region: ESTALE" "$LOCK stale $KEY"
fi
barrier freed
if [ "$KRC_NODE" = 2 ]; then
	lock_counters
	check "node2 keeps no lock entry" 'eq "$(entries)" 0'
fi
finish
