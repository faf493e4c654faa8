#!/bin/sh
# nodes: 1
# Load krcore.ko, check the node card against the node's own address,
# open and close many VQs from many processes, unload with no leak.
. "$KRC_REPO/tests/cluster/lib.sh"

check "module loads" krc_load
check "/dev/krcore exists, mode 0660" '[ "$(stat -c %a /dev/krcore)" = 660 ]'
check "modinfo documents every parameter" \
	'ge "$(modinfo -F parm "$KRC_KO" | wc -l)" 3'

krctl status
card=$(krctl card)
mac=$(cat /sys/class/net/eth0/address)
field() {
	echo "$card" | sed -n "s/^$1=//p"
}
check "card address is the node IP" '[ "$(field addr)" = "$KRC_IP" ]'
check "card MAC is eth0's" '[ "$(field mac)" = "$mac" ]'
check "card GID is in rxe0's GID table" \
	'grep -qx "$(field gid)" /sys/class/infiniband/rxe0/ports/1/gids/*'
check "card GID is RoCE v2" \
	'i=$(grep -lx "$(field gid)" /sys/class/infiniband/rxe0/ports/1/gids/* | head -n 1); \
	 grep -q "RoCE v2" "/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/${i##*/}"'
ip_id=$(echo "$KRC_IP" | awk -F. '{ print ($1 * 16777216) + ($2 * 65536) + ($3 * 256) + $4 }')
check "node id is the IPv4 address" 'eq "$(field node_id)" "$ip_id"'
check "incarnation is set" '[ -n "$(field incarnation | tr -d 0)" ]'
check "primary port listed" 'krctl status | grep -q "rxe0/1: ACTIVE.*(primary)"'
check "one device, one PD" 'eq "$(counter device_created)" 1 && eq "$(counter pd_created)" 1'

vq0=$(counter vq_created)
check "8 processes x 25 rounds x 20 VQs" '"$KRC_TBIN/vq_churn" 8 25 20'
check "4000 VQs opened" 'eq "$(($(counter vq_created) - vq0))" 4000'
check "every VQ closed" 'eq "$(counter vq_created)" "$(counter vq_destroyed)"'

# While a VQ is open the module refuses to unload.
sleep 30 </dev/krcore &
holder=$!
sleep 0.5
check "a held VQ is counted" 'eq "$(($(counter vq_created) - $(counter vq_destroyed)))" 1'
check "rmmod refused while a VQ is open" '! rmmod krcore 2>/dev/null'
kill $holder
wait $holder 2>/dev/null
check "rmmod succeeds once closed" krc_unload
check "unload reports every object freed" 'dmesg | grep -q "krcore: unloaded, every object freed"'
check "no leak reported" '! dmesg | grep -q "krcore: leak"'

# Reload: a new incarnation.
check "module reloads" krc_load
inc2=$(krctl card | sed -n 's/^incarnation=//p')
check "reload changes the incarnation" '[ -n "$inc2" ] && [ "$(field incarnation)" != "$inc2" ]'
check "second unload" krc_unload
check "kernel log clean" dmesg_clean
finish
