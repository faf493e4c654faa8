#!/bin/sh
# nodes: 1
# timeout: 300
# The krcore.ko DKMS built (as the krcore-dkms package builds it), not
# kernel/krcore.ko: it loads, the node comes up, the udev rule of the
# packages gives /dev/krcore to group rdma (a member of it opens the
# device, another user cannot), the module refuses to unload while the
# device is open (what an upgrade of krcore-dkms relies on), unloads with
# nothing leaked, the kernel log stays clean; the example modprobe.d file
# shows the module's defaults.
# The module is $KRC_REPO/build/dkms/<kernel>/krcore.ko, left there on the
# host by scripts/dkms-build.sh (a private DKMS tree) or by tests/run.sh pkg
# (tests/pkg/test_deb.sh keeps the one the installed package built);
# without it the test skips.
. "$KRC_REPO/tests/cluster/lib.sh"

kver=$(uname -r)
ko=$KRC_REPO/build/dkms/$kver/krcore.ko
[ -f "$ko" ] || skip "no DKMS-built module for $kver in build/dkms (run scripts/dkms-build.sh or tests/run.sh pkg on the host)"
ver=$(sed -n 's/^#define KRC_VERSION[[:space:]]*"\(.*\)"/\1/p' "$KRC_REPO/kernel/core/core.h")
log "module $ko, version $ver"

check "built for this kernel" '[ "$(modinfo -F vermagic "$ko" | cut -d " " -f 1)" = "$kver" ]'
check "its version is the sources' KRC_VERSION" '[ -n "$ver" ] && [ "$(modinfo -F version "$ko")" = "$ver" ]'
check "signed by DKMS" '[ "$(modinfo -F signer "$ko")" = "DKMS module signing key" ]'

# udev, as on an installed system: the packages' rule, then the load.
rdma_gid=$(getent group rdma | cut -d: -f3)
check "group rdma exists" '[ -n "$rdma_gid" ]'
udevd=/lib/systemd/systemd-udevd
mkdir -p /run/udev/rules.d
cp "$KRC_REPO/packaging/udev/60-krcore.rules" /run/udev/rules.d/
check "systemd-udevd starts" '"$udevd" --daemon'
udevadm settle -t 30

export KRC_KO=$ko
check "the DKMS module loads" krc_load
udevadm settle -t 30
check "/dev/krcore mode 0660, group rdma" \
	'[ "$(stat -c "%a %U %G" /dev/krcore)" = "660 root rdma" ]'
check "/sys/module/krcore/version" '[ "$(cat /sys/module/krcore/version)" = "$ver" ]'
status=$(krctl status)
printf '%s\n' "$status"
check "krctl status: the module's version" \
	'printf "%s\n" "$status" | grep -q "^krcore $ver, ABI "'
check "krctl status: control plane up" \
	'printf "%s\n" "$status" | grep -q "^  peers [0-9]*, pooled connections"'
check "card address is the node IP" '[ "$(krctl card | sed -n "s/^addr=//p")" = "$KRC_IP" ]'

# packaging/modprobe.d/krcore.conf shows the defaults (but for the node's
# own settings): each is what the module, loaded without options, has.
example_defaults() {
	bad=0
	for kv in $(sed -n 's/^#options krcore //p' "$KRC_REPO/packaging/modprobe.d/krcore.conf"); do
		name=${kv%%=*}
		want=${kv#*=}
		case "$name" in meta_host|meta_server|ibdev) continue ;; esac
		# KRC_TEST_DG_POLICY (lib.sh) loads with another dg_policy.
		[ "$name" = dg_policy ] && [ -n "${KRC_TEST_DG_POLICY:-}" ] && continue
		if ! got=$(cat "/sys/module/krcore/parameters/$name" 2>/dev/null); then
			echo "no parameter $name"
			bad=1
			continue
		fi
		case "$got" in Y) got=1 ;; N) got=0 ;; esac
		[ "$got" = "$want" ] || { echo "$name: example $want, module $got"; bad=1; }
	done
	return $bad
}
check "the modprobe.d example shows the module's defaults" example_defaults

# A user in group rdma opens /dev/krcore; one outside it is refused.
cp "$KRC_BIN/krctl" /tmp/krctl
chmod 755 /tmp/krctl
check "nobody with group rdma: krctl card" \
	'setpriv --reuid=65534 --regid=65534 --groups="$rdma_gid" /tmp/krctl card >/dev/null'
check "nobody without it: permission denied" \
	'! setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/krctl card 2>/tmp/denied &&
	 grep -q "permission denied" /tmp/denied'

# An open /dev/krcore keeps the module in (upgrades stop users first).
sleep 30 </dev/krcore &
holder=$!
sleep 0.5
check "rmmod refused while /dev/krcore is open" '! rmmod krcore 2>/dev/null'
kill $holder
wait $holder 2>/dev/null
check "rmmod once closed" krc_unload
check "unload reports every object freed" 'dmesg | grep -q "krcore: unloaded, every object freed"'
udevadm control --exit
check "kernel log clean" dmesg_clean
finish
