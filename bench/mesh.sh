#!/bin/sh
# The full mesh (KRCore's Fig. 8b; make bench, on four nodes): every node
# starts P new processes at once and each connects to every other node,
# with krcore (a VQ per peer node, qconnect) and with rdma_cm (a new
# process's device context and a QP per peer node, to the connect_bench
# server each node runs). A point's time is the slowest node's, from its
# processes' start to their last connection ready (connect_bench mesh).
# First a krcore round with one process on pools that reach no peer yet
# (first contact with every node: krcore_first), then ROUNDS rounds of
# P = 1, 2, 4, 8, the two methods alternating. node0 prints the table and
# writes the samples (figure mesh) to its run directory's bench.samples.
. "$KRC_REPO/tests/cluster/lib.sh"
PORT=7473
META=$(node_ip 0)
PROCS=${KRC_BENCH_MESH_PROCS:-1 2 4 8}
ROUNDS=${KRC_BENCH_MESH_ROUNDS:-3}

peers=""
j=0
while [ $j -lt "$KRC_NODES" ]; do
	[ $j != "$KRC_NODE" ] && peers="$peers $(node_ip $j)"
	j=$((j + 1))
done

# mesh_point NAME KIND P: this node's part of one point, its time in
# $KRC_RUN/mesh.NAME.NODE.
mesh_point() {
	barrier "mesh_$1" 600 || return 1
	# shellcheck disable=SC2086 # $peers is a list
	t=$("$KRC_REPO/build/bin/connect_bench" mesh $PORT "$3" "$2" $peers) ||
		{ fail "mesh $1: connect_bench mesh $3 $2"; t=fail; }
	echo "$t" >"$KRC_RUN/mesh.$1.$KRC_NODE"
}

# slowest NAME: the largest time of point NAME over the nodes, in ms;
# nothing when a node failed it.
slowest() {
	cat "$KRC_RUN"/mesh."$1".[0-9]* | awk -v n="$KRC_NODES" '
	$1 ~ /^[0-9.]+$/ { c++; if ($1 > m) m = $1 }
	END { if (c == n) printf "%.3f\n", m / 1000 }'
}

if [ "$KRC_NODE" = 0 ]; then
	krc_load meta_host=1 || exit 1
else
	krc_load meta_server="$META" || exit 1
	wait_for 30 'krctl status | grep -q "metaserver: registered"' ||
		fail "not registered with the MetaServer"
fi
"$KRC_REPO/build/bin/connect_bench" server $PORT >/dev/null &
srv=$!
barrier up 300

mesh_point first krcore 1
r=1
while [ $r -le "$ROUNDS" ]; do
	for p in $PROCS; do
		if [ $((r % 2)) = 1 ]; then
			mesh_point "krcore.$p.$r" krcore "$p"
			mesh_point "rdma_cm.$p.$r" rdma_cm "$p"
		else
			mesh_point "rdma_cm.$p.$r" rdma_cm "$p"
			mesh_point "krcore.$p.$r" krcore "$p"
		fi
	done
	r=$((r + 1))
done
barrier mesh_done 600

if [ "$KRC_NODE" = 0 ]; then
	out=$KRC_RUN/mesh.out
	s=$KRC_RUN/bench.samples
	{
		echo "full mesh: $KRC_NODES nodes, P processes each connecting to the $((KRC_NODES - 1)) others; the slowest node's time to done, ms"
		echo "  krcore, first contact with every node (P = 1): $(slowest first)"
		printf '  %-5s %14s %14s %8s\n' procs "krcore ms" "rdma_cm ms" ratio
	} >"$out"
	echo "F mesh ms procs Full mesh of $KRC_NODES nodes: time until every process reaches every other node" >>"$s"
	v=$(slowest first)
	[ -n "$v" ] && echo "S mesh krcore_first 1 $v" >>"$s"
	for p in $PROCS; do
		r=1
		while [ $r -le "$ROUNDS" ]; do
			for m in krcore rdma_cm; do
				v=$(slowest "$m.$p.$r")
				[ -n "$v" ] && echo "S mesh $m $p $v" >>"$s"
			done
			r=$((r + 1))
		done
		awk -v p="$p" '
		$1 == "S" && $2 == "mesh" && $3 == "krcore" && $4 == p { k[nk++] = $5 }
		$1 == "S" && $2 == "mesh" && $3 == "rdma_cm" && $4 == p { c[nc++] = $5 }
		function med(a, n,   i, j, t) {
			for (i = 0; i < n; i++)
				for (j = i + 1; j < n; j++)
					if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n ? a[int(n / 2)] : 0
		}
		END {
			mk = med(k, nk); mc = med(c, nc)
			printf "  %-5d %14.1f %14.1f %7.0fx\n", p, mk, mc, (mk > 0 ? mc / mk : 0)
		}' "$s" >>"$out"
	done
	echo "R mesh rdma_cm_over_krcore rdma_cm krcore" >>"$s"
	cat "$out"
fi
kill $srv 2>/dev/null
krc_unload
finish
