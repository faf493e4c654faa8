#!/bin/sh
# PID 1 of a krcore test node, started by the initramfs on the host's root
# (read-only, over 9p). Brings up the node's virtio NIC and its Soft-RoCE
# device, runs the node's command from the run directory and powers off.
# The command's exit status goes to /run/krc/node<N>.rc, the kernel log to
# /run/krc/node<N>.dmesg; tools/krcluster reads both. On a kernel with
# kmemleak (the debug kernel) the leaks found after the command ran are
# appended to the latter.

RUN=/run/krc
node=0
nodes=1
repo=/
net=10.77.0
role=""
ko=""
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	krc.node=*) node=${arg#krc.node=} ;;
	krc.nodes=*) nodes=${arg#krc.nodes=} ;;
	krc.repo=*) repo=${arg#krc.repo=} ;;
	krc.net=*) net=${arg#krc.net=} ;;
	krc.role=*) role=${arg#krc.role=} ;;
	krc.ko=*) ko=${arg#krc.ko=} ;;
	esac
done

export PATH="$repo/tools:$repo/build/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export HOME=/tmp
export KRC_NODE=$node KRC_NODES=$nodes KRC_REPO=$repo KRC_RUN=$RUN
export KRC_NET=$net KRC_IP="$net.$((node + 1))" KRC_ROLE=$role
# The krcore.ko built for the running kernel (tests/cluster/lib.sh loads it).
export KRC_KO=${ko:-$repo/kernel/krcore.ko}
KMEMLEAK=/sys/kernel/debug/kmemleak

finish() {
	echo "$1" >"$RUN/node$node.rc"
	if [ -w "$KMEMLEAK" ]; then
		# Two scans, 5 s apart: kmemleak reports no object younger than
		# 5 s, and an object seen unreferenced once (its last pointer in
		# flight) must be seen so again.
		echo scan >"$KMEMLEAK"
		sleep 5
		echo scan >"$KMEMLEAK"
		cat "$KMEMLEAK" >"$RUN/node$node.kmemleak" 2>&1
	fi
	dmesg >"$RUN/node$node.dmesg" 2>&1
	# A leak the test made on purpose (expect_kmemleak N): exactly N.
	if [ -s "$RUN/node$node.kmemleak" ] &&
	    [ -s "$RUN/node$node.kmemleak_expect" ]; then
		want=$(cat "$RUN/node$node.kmemleak_expect")
		got=$(grep -c '^unreferenced object' "$RUN/node$node.kmemleak")
		if [ "$got" = "$want" ]; then
			echo "krc-node $node: kmemleak reports the $want object(s) leaked on purpose"
			mv "$RUN/node$node.kmemleak" "$RUN/node$node.kmemleak.expected"
			# and its scans' "N new suspected memory leaks" lines
			# in the kernel log are about those objects only
			sed -i '/kmemleak: [0-9]* new suspected memory leaks/d' \
				"$RUN/node$node.dmesg"
		fi
	fi
	if [ -s "$RUN/node$node.kmemleak" ]; then
		echo "---- kmemleak: new suspected memory leaks ----" >>"$RUN/node$node.dmesg"
		cat "$RUN/node$node.kmemleak" >>"$RUN/node$node.dmesg"
	fi
	sync
	echo "krc-node $node: exit $1"
	# reboot(2) straight away, from a child: PID 1 itself must not exec
	# (an exec drops the shell's mappings, and on TCG with page poisoning
	# the eviction of 9p page cache that follows in PID 1 ran for minutes
	# with the RCU kthread starved: the testbed's power-off stall). The
	# exec is the fallback if the child could not power off.
	/bin/busybox poweroff -f
	exec /bin/busybox poweroff -f
}

# Every other node answers a ping before the test starts: a node whose
# network never came up (seen on this testbed: a MetaServer that stays
# "unreachable (-113)" for the whole test, no NETDEV WATCHDOG) fails here,
# as the testbed's fault, not in the middle of a test as krcore's. The
# nodes boot within a few seconds of each other; 60 s is generous.
net_check() {
	[ "$nodes" -gt 1 ] || return 0
	j=0
	while [ $j -lt "$nodes" ]; do
		peer="$net.$((j + 1))"
		t=0
		while [ $j -ne "$node" ] &&
		    ! busybox ping -c 1 -W 1 "$peer" >/dev/null 2>&1; do
			t=$((t + 1))
			if [ $t -ge 60 ]; then
				echo "krc-node $node: testbed network down: no answer from $peer to 60 pings"
				ip -s link show eth0
				ip neigh show dev eth0
				return 1
			fi
		done
		j=$((j + 1))
	done
	return 0
}

setup() {
	hostname "node$node"
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	mount -t configfs none /sys/kernel/config 2>/dev/null
	modprobe virtio_net || return 1
	modprobe -a rdma_rxe ib_uverbs rdma_ucm rdma_cm ib_umad || return 1
	ip link set lo up
	i=0
	while ! ip link show eth0 >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 50 ] && { echo "no eth0"; return 1; }
		sleep 0.1
	done
	ip addr add "$KRC_IP/24" dev eth0 || return 1
	ip link set eth0 up || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	net_check || return 1
	if [ -w "$KMEMLEAK" ]; then
		# What boot and setup left unreferenced is not the test's.
		echo scan >"$KMEMLEAK"
		echo clear >"$KMEMLEAK"
	fi
	return 0
}

if ! setup >"$RUN/node$node.setup" 2>&1; then
	cat "$RUN/node$node.setup"
	echo "krc-node $node: node setup failed"
	finish 125
fi

cd "$repo" || finish 125
echo "krc-node $node: up, $KRC_IP, $(uname -r)"
if [ -n "$role" ]; then
	sh "$role" </dev/null
else
	sh "$RUN/cmd" </dev/null
fi
finish $?
