#!/bin/sh
# nodes: 3
# timeout: 600
# Remote memory across membership changes: node0 hosts the MetaServer,
# processes of node1 hold regions on node2 (whose membership sweep is off,
# lmr_sweep_ms=0, so what frees a region below is the path named).
# - A holder node that leaves properly: its process killed, node2 drops
#   its FREEs (fault_ctrl_drop_type 13), then node1 unloads and its
#   GOODBYE arrives: node2 frees both regions at once (lmr_reclaimed).
# - A node that joins during use: node1 loads again (a new incarnation)
#   and its process allocates a region on node2 at once, sets it and
#   reads it back.
# - The owner reloads: the holder's memset, copy and publish get ESTALE,
#   the old key reads nothing (never the old data), the free is taken
#   and a second one ENOENT, a new region on the new incarnation reads
#   zero (dp_lmr reload).
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
OWNER=$(node_ip 2)
LMR="$KRC_TBIN/dp_lmr"

live() { echo $(($(counter lmr_created) - $(counter lmr_destroyed))); }

if [ "$KRC_NODE" = 0 ]; then
	check "module loads (MetaServer)" 'krc_load meta_host=1'
	barrier up
elif [ "$KRC_NODE" = 1 ]; then
	barrier up
	check "module loads" "krc_load meta_server=$META break_limit=0"
	meta_registered
else
	barrier up
	check "module loads, no membership sweep" \
		"krc_load meta_server=$META lmr_sweep_ms=0"
	meta_registered
fi
barrier loaded

# A holder node that leaves with a GOODBYE, its FREEs lost.
if [ "$KRC_NODE" = 1 ]; then
	"$LMR" "$OWNER" hold 2 >"$KRC_RUN/hold" 2>&1 &
	holder=$!
	check "a process holds 2 regions on node2" \
		'wait_for 60 "grep -q \"held 2\" \"$KRC_RUN/hold\""'
fi
barrier held
if [ "$KRC_NODE" = 2 ]; then
	check "node2 owns exactly 2 regions" 'eq "$(live)" 2'
	echo 13 >/sys/module/krcore/parameters/fault_ctrl_drop_type
	echo 1000 >/sys/module/krcore/parameters/fault_ctrl_drop_rx
fi
barrier dropping
if [ "$KRC_NODE" = 1 ]; then
	kill -9 "$holder"
	wait "$holder" 2>/dev/null
	check "node1's FREEs went unanswered (node2 dropped them)" \
		'wait_for 60 "eq \$(counter lmr_free_lost) 2"'
	check "node1 unloads, with its GOODBYE" krc_unload
fi
barrier gone
if [ "$KRC_NODE" = 2 ]; then
	check "the FREEs were dropped, not done" \
		'[ "$(counter ctrl_rx_dropped)" -ge 2 ] && eq "$(counter lmr_frees)" 0'
	check "the GOODBYE freed both regions (lmr_reclaimed 2, none left)" \
		'wait_for 20 "eq \$(live) 0" && eq "$(counter lmr_reclaimed)" 2'
	echo 0 >/sys/module/krcore/parameters/fault_ctrl_drop_rx
	echo 0 >/sys/module/krcore/parameters/fault_ctrl_drop_type
fi
barrier freed

# A node that joins during use: node1 comes back and holds a region at once.
if [ "$KRC_NODE" = 1 ]; then
	check "node1 loads again (a new member)" \
		"krc_load meta_server=$META break_limit=0"
	meta_registered
	"$LMR" "$OWNER" reload "$KRC_RUN/reloaded" >"$KRC_RUN/reload" 2>&1 &
	user=$!
	check "its process holds a region on node2, set to 0x5a" \
		'wait_for 60 "grep -q \"reload: held\" \"$KRC_RUN/reload\""'
fi
barrier rejoined
if [ "$KRC_NODE" = 2 ]; then
	check "node2 owns its region" 'eq "$(live)" 1'
	check "node2 reloads (a new incarnation)" \
		"krc_unload && krc_load meta_server=$META lmr_sweep_ms=0"
	meta_registered
	check "no region is left of the old incarnation" 'eq "$(live)" 0'
	: >"$KRC_RUN/reloaded"
fi
barrier reloaded
if [ "$KRC_NODE" = 1 ]; then
	wait "$user"
	rc=$?
	cat "$KRC_RUN/reload"
	check "after the owner's reload: ESTALE, the old key dead, a new region clean" \
		'[ $rc = 0 ] && ! grep -q FAIL "$KRC_RUN/reload" &&
		 grep -q "reads nothing" "$KRC_RUN/reload" &&
		 grep -q "new incarnation reads zero" "$KRC_RUN/reload"'
fi
barrier checked
if [ "$KRC_NODE" = 2 ]; then
	check "node2 freed the new region when its process exited" \
		'wait_for 30 "eq \$(live) 0"'
fi
barrier done
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
