#!/bin/sh
# nodes: 3
# timeout: 600
# Names of remote memory (KRCORE_IOC_LMR_PUBLISH, _UNPUBLISH, _LOOKUP):
# node0 hosts the MetaServer; a process of node1 allocates two regions on
# node2 and publishes them under names with some of their rights;
# processes on node0 and node2 (its own, over loopback) look the names up
# with one READ of node2's names table and use them (tests/progs/dp_name.c).
# - Publish: exact errors (EEXIST, EACCES, EINVAL, ENOENT); a lookup
#   over datagrams only (node1's dg_policy 3: no RC to READ the table
#   over) is a control message that node2's kernel answers with what the
#   READ would find: the regions, rights and keys that READ their bytes,
#   ENOENT for a name not there. node0's VQ, on the datagram path first,
#   looks up by message or over the RC built behind it.
# - Lookup: the region, its length and the name's rights; an unknown name
#   ENOENT. "ro" allows READ only: WRITE and FAA with its key fail at
#   node2's RNIC and change nothing; memset and lock are refused. "rw"
#   allows all: WRITE (read back through "ro": one region), FAA, memset
#   at the owner, a lock. A looked-up region is not the process's to
#   publish, copy or free.
# - Revoke "rw": its name is gone, its key dead (READ refused, memset
#   ESTALE, lock EACCES); "ro" still works.
# - The holder killed: its regions go and their names with them (lookups
#   ENOENT, old keys refused, memset ESTALE); node2 keeps no name.
# - Bounds: one node publishes at most a quarter of the table (240
#   names, then ENOSPC), a bucket holds 8 (ENOSPC past them).
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
OWNER=$(node_ip 2)
NAME="$KRC_TBIN/dp_name"

name_counters() {
	for c in name_publishes name_drops name_refused name_lookups \
		 name_misses name_rereads name_asked name_answered \
		 lmr_name_created lmr_name_destroyed \
		 lmr_allocs lmr_frees lmr_reclaimed; do
		printf '%s=%s ' "$c" "$(counter $c)"
	done
	echo
}
# names: node2's names now
names() {
	echo $(($(counter lmr_name_created) - $(counter lmr_name_destroyed)))
}

# node1 on datagrams only (its lookups: by message); node0 and node2 break
# connections on purpose (refused keys): no throttle.
if [ "$KRC_NODE" = 0 ]; then
	check "module loads (MetaServer)" 'krc_load meta_host=1 break_limit=0'
	barrier up
elif [ "$KRC_NODE" = 1 ]; then
	barrier up
	check "module loads (datagrams only)" "krc_load meta_server=$META dg_policy=3"
	meta_registered
else
	barrier up
	check "module loads" "krc_load meta_server=$META break_limit=0"
	meta_registered
fi
barrier loaded

if [ "$KRC_NODE" = 1 ]; then
	"$NAME" hold "$OWNER" >"$KRC_RUN/hold.out" 2>&1 &
	holder=$!
	check "node1 published ro, rw and b on node2; bad publishes refused" \
		'wait_for 60 "grep -q published \"$KRC_RUN/hold.out\"" &&
		 ! grep FAIL "$KRC_RUN/hold.out"'
	cat "$KRC_RUN/hold.out"
	check "node1: 4 lookups on datagrams only, each a message (3 found, 1 ENOENT)" \
		'grep -q "4 lookups over datagrams only: by message" "$KRC_RUN/hold.out" &&
		 eq "$(counter name_asked)" 4 && eq "$(counter name_lookups)" 3 &&
		 eq "$(counter name_misses)" 1 && eq "$(counter name_rereads)" 0'
	# A call not answered in time is sent again: the owner answers each copy.
	counter lmr_retransmits >"$KRC_RUN/n1.rtx"
fi
barrier published
if [ "$KRC_NODE" = 2 ]; then
	name_counters
	check "node2: 4 names, 2 publishes refused (both EEXIST)" \
		'eq "$(names)" 4 && eq "$(counter name_publishes)" 4 &&
		 eq "$(counter name_refused)" 2'
	rtx=$(cat "$KRC_RUN/n1.rtx")
	check "node2 answered node1's 4 lookups by message (and any copy node1 sent again: $rtx)" \
		'ge "$(counter name_answered)" 4 && ge $((4 + rtx)) "$(counter name_answered)"'
fi
if [ "$KRC_NODE" != 1 ]; then
	"$NAME" use "$OWNER" "$KRC_NODE" >"$KRC_RUN/use.$KRC_NODE" 2>&1 &
	user=$!
	check "node$KRC_NODE: the names looked up and used within their rights" \
		'wait_for 120 "grep -q used \"$KRC_RUN/use.$KRC_NODE\"" &&
		 ! grep FAIL "$KRC_RUN/use.$KRC_NODE"'
fi
barrier used

if [ "$KRC_NODE" = 1 ]; then
	kill -USR1 "$holder"
	check "rw revoked" 'wait_for 30 "grep -q revoked \"$KRC_RUN/hold.out\"" &&
		! grep FAIL "$KRC_RUN/hold.out"'
fi
barrier revoked
if [ "$KRC_NODE" != 1 ]; then
	kill -USR1 "$user"
	check "node$KRC_NODE: rw gone, its key dead; ro still works" \
		'wait_for 60 "grep -q revoke-checked \"$KRC_RUN/use.$KRC_NODE\"" &&
		 ! grep FAIL "$KRC_RUN/use.$KRC_NODE"'
fi
if [ "$KRC_NODE" = 2 ]; then
	check "node2: 3 names left" 'eq "$(names)" 3 && eq "$(counter name_drops)" 1'
fi
barrier revoke_checked

if [ "$KRC_NODE" = 1 ]; then
	kill -9 "$holder"
	wait "$holder" 2>/dev/null
fi
barrier holder_killed
if [ "$KRC_NODE" = 2 ]; then
	check "node2 freed the killed holder's regions and their names" \
		'wait_for 30 "eq \$(names) 0 && eq \$(counter lmr_frees) 2"'
	check "names drop with their region" 'eq "$(counter name_drops)" 4'
fi
barrier names_gone
if [ "$KRC_NODE" != 1 ]; then
	kill -USR1 "$user"
	check "node$KRC_NODE: every name and key gone with the regions" \
		'wait $user && grep -q gone-checked "$KRC_RUN/use.$KRC_NODE"'
	cat "$KRC_RUN/use.$KRC_NODE"
	check "node$KRC_NODE's lookups: 5 found, 5 misses, as the program counted" \
		'grep -q "lookups 5 misses 5" "$KRC_RUN/use.$KRC_NODE" &&
		 eq "$(counter name_lookups)" 5 && eq "$(counter name_misses)" 5'
fi
barrier used_checked

# Bounds: node0 fills its quarter; node2 fills one bucket.
if [ "$KRC_NODE" = 0 ]; then
	"$NAME" quota "$OWNER" >"$KRC_RUN/quota.out" 2>&1 &
	quota=$!
	check "node0 publishes 240 names, the 241st ENOSPC" \
		'wait_for 240 "grep -q quota-held \"$KRC_RUN/quota.out\"" &&
		 ! grep FAIL "$KRC_RUN/quota.out"'
	grep "quota:" "$KRC_RUN/quota.out"
fi
barrier quota_held
if [ "$KRC_NODE" = 2 ]; then
	check "node2: a full bucket refuses a name (ENOSPC)" "$NAME bucket $OWNER"
fi
barrier bucket
if [ "$KRC_NODE" = 0 ]; then
	kill -9 "$quota"
	wait "$quota" 2>/dev/null
fi
barrier quota_gone
if [ "$KRC_NODE" = 2 ]; then
	check "node2 keeps no name, every name's MR gone" \
		'wait_for 30 "eq \$(names) 0"'
	name_counters
	check "node2 published 4 + 240 + 6 names and dropped them all" \
		'eq "$(counter name_publishes)" 250 && eq "$(counter name_drops)" 250'
fi
finish
