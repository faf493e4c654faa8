#!/bin/sh
# nodes: 2
# The leak report at unload fires when something leaks. The MetaServer
# (node0) is told by a test-only fault (fault_leak_member=1) to keep the
# memory of the next member it frees; node1 registers twice (two members
# over time), so the unload must report exactly "1 of 2 meta_member
# objects" and nothing else. That one line is declared with
# expect_kernel_line: it must appear exactly once, and only it is excused
# from the kernel log checks.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1'
	check "the leak fault is off by default" \
		'eq "$(cat /sys/module/krcore/parameters/fault_leak_member)" 0'
	check "the fault parameter is root-only writable (0644)" \
		'[ "$(stat -c %a /sys/module/krcore/parameters/fault_leak_member)" = 644 ]'
	barrier up
	barrier member1
	check "one member connected" \
		'wait_for 20 "eq \"\$(counter meta_member_created)\" 1"'
	param fault_leak_member 1
	barrier armed
	barrier member1_gone
	check "the first member's release consumed the fault" \
		'wait_for 30 "eq \"\$(cat /sys/module/krcore/parameters/fault_leak_member)\" 0"'
	check "its memory was kept: 1 created, 0 destroyed" \
		'eq "$(counter meta_member_created)" 1 && eq "$(counter meta_member_destroyed)" 0'
	barrier fault_used
	barrier member2
	check "the second member connected" \
		'wait_for 20 "eq \"\$(counter meta_member_created)\" 2"'
	barrier member2_seen
	barrier member2_gone
	check "the second member is freed normally" \
		'wait_for 30 "eq \"\$(counter meta_member_destroyed)\" 1"'
	expect_kernel_line "krcore: leak: 1 of 2 meta_member objects not destroyed"
	expect_kmemleak 1
	check "MetaServer unloads" krc_unload
	check "the unload reports the leaked member, 1 of 2" \
		'eq "$(dmesg | grep -cx ".*krcore: leak: 1 of 2 meta_member objects not destroyed")" 1'
	check "and no other leak" 'eq "$(dmesg | grep -c "krcore: leak")" 1'
	check "no 'every object freed' claim" \
		'! dmesg | grep -q "krcore: unloaded, every object freed"'
else
	barrier up
	check "member loads" "krc_load meta_server=$META"
	check "member registered" 'krctl status | grep -q "metaserver: registered"'
	barrier member1
	barrier armed
	check "member unloads" krc_unload
	barrier member1_gone
	barrier fault_used
	check "member loads again" "krc_load meta_server=$META"
	barrier member2
	barrier member2_seen
	check "member unloads again" krc_unload
	check "the member's own unloads report no leak" \
		'eq "$(dmesg | grep -c "krcore: unloaded, every object freed")" 2'
	barrier member2_gone
fi
check "kernel log clean (but for the expected line)" dmesg_clean
finish
