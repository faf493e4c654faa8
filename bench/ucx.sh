#!/bin/sh
# UCX over krcore beside UCX over tcp (issue 28, make bench-ucx), the same
# programs in the same run, only UCX_TLS differs (krcore,self or
# tcp,self; LD_PRELOAD of build/ucx/libuct_krcore.so in both, so that
# start-up loads the same libraries). Two nodes: node1 serves, node0
# measures and writes every line to $KRC_RUN/ucx_bench.out:
#   - the elastic figure (bench/ucx_bench launch): new processes on node0,
#     each from before its fork to its first put (8 B put + flush) or to
#     its first AM reply, in phases (exec, ucp_init + ucp_worker_create,
#     endpoint, operation); krcore "cold" first (KRC_BENCH_UCX_COLD
#     processes, each with krcore freshly loaded on both nodes: node0's
#     krcore has no RC to node1, as krctl peers shows before each), then
#     KRC_BENCH_UCX_K processes per transport and operation ("pooled":
#     node0's krcore already has its RC to node1);
#   - endpoints per second (ucx_bench eps): one new process creates
#     endpoints to the KRC_BENCH_UCX_PEERS workers of a process on node1
#     (each worker its own address: a krcore port, a tcp listener), puts
#     8 B on each and flushes;
#   - steady state, Debian's ucx_perftest: ucp_put_lat, ucp_get and
#     tag_lat of 8 B (median latency), ucp_put_bw of 64 KiB (MB/s);
#   - rc_verbs and ud_verbs (Debian's UCX on Soft-RoCE directly), tried
#     once each: what happened, as a "note:" line.
# With the argument "mpi" (four nodes): mpirun on node0 starts a rank on
# each node through tools/krc-rsh; bench/mpi_bench times MPI_Init and a
# first MPI_Alltoall from inside the ranks (the max over the ranks),
# krcore and tcp alternately (krcore's first mpirun meets no RC between
# the nodes: a cold start), KRC_BENCH_UCX_MPI_K times each.
# Each part ends with its "ratio:" lines (medians), the target and
# whether the ratio carries over to hardware.
#
# Knobs (small defaults: about 10 minutes for both parts on a 2-core
# host): KRC_BENCH_UCX_K (5) new processes per transport and operation,
# KRC_BENCH_UCX_COLD (6, alternately put and am; 0: none),
# KRC_BENCH_UCX_PEERS (16) workers for endpoints per second,
# KRC_BENCH_UCX_EPS_REPS (3) processes per transport,
# KRC_BENCH_UCX_LAT_N (200) latency iterations, KRC_BENCH_UCX_BW_N (50)
# bandwidth iterations, KRC_BENCH_UCX_VERBS (1; 0: skip rc/ud_verbs),
# KRC_BENCH_UCX_MPI_K (3) mpiruns per transport.
. "$KRC_REPO/tests/cluster/lib.sh"
MOD=$KRC_REPO/build/ucx/libuct_krcore.so
UB=$KRC_BIN/ucx_bench
D=$KRC_RUN/ucx
OUT=$KRC_RUN/ucx_bench.out
K=${KRC_BENCH_UCX_K:-5}
COLD=${KRC_BENCH_UCX_COLD:-6}
PEERS=${KRC_BENCH_UCX_PEERS:-16}
EPS_REPS=${KRC_BENCH_UCX_EPS_REPS:-3}
LAT_N=${KRC_BENCH_UCX_LAT_N:-200}
BW_N=${KRC_BENCH_UCX_BW_N:-50}
VERBS=${KRC_BENCH_UCX_VERBS:-1}
MPI_K=${KRC_BENCH_UCX_MPI_K:-3}
PART=${1:-main}
export UCX_LOG_LEVEL=warn

say() {
	printf '%s\n' "$*" | tee -a "$OUT"
}

# ucx TL CMD...: CMD with UCX restricted to TL (and self), the module
# preloaded whatever TL is.
ucx() {
	u_tl=$1
	shift
	env LD_PRELOAD="$MOD" UCX_TLS="$u_tl,self" "$@"
}

# med FILE KEY: the median of KEY= over the lines of FILE (of an even
# count, the mean of the middle two).
med() {
	sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$1" | sort -n |
		awk '{ v[NR] = $1 }
		END {
			if (NR % 2)
				print v[(NR + 1) / 2]
			else if (NR)
				printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}

# rc_state: how many RCs node0's krcore has to node1 ("none": not a peer).
rc_state() {
	peer_conns "$(node_ip 1)" 2>/dev/null || echo none
}

# ratio NAME A B TARGET CARRIES: A / B with its target (">= 1": met when
# at least 1) and whether it carries over to hardware.
ratio() {
	awk -v nm="$1" -v a="$2" -v b="$3" -v t="$4" -v hw="$5" 'BEGIN {
		if (a == "" || b == "" || b + 0 == 0 || a + 0 == 0) {
			printf "ratio: %s = missing (target: %s; not met)\n", nm, t
			exit
		}
		x = a / b
		v = substr(t, 4) + 0
		ok = substr(t, 1, 2) == ">=" ? x >= v : x <= v
		printf "ratio: %s = %.3f (target: %s; %s) carries over: %s\n",
			nm, x, t, ok ? "met" : "not met", hw
	}' | tee -a "$OUT"
}

# Server side: srv TL NAME [WORKERS] starts ucx_bench serve in the
# background and waits for its info file; srv_stop NAME ends it.
srv() {
	rm -f "$D/$2.stop" "$D/$2.info"
	ucx "$1" timeout 900 "$UB" serve "$D" "$2" "${3:-1}" \
		>"$D/srv.$2.out" 2>&1 &
	srv_pid=$!
	wait_for 60 "[ -e '$D/$2.info' ]" || fail "server $2 did not start"
}

srv_stop() {
	: >"$D/$1.stop"
	wait "$srv_pid" || fail "server $1 exit status"
}

# reload ROLE: krcore unloaded and loaded again (node1 hosts the
# MetaServer, node0 registers with it).
load() {
	if [ "$KRC_NODE" = 1 ]; then
		krc_load meta_host=1
	else
		krc_load meta_server="$(node_ip 1)" &&
			wait_for 30 'krctl status | grep -q "metaserver: registered"'
	fi
}

# perf LABEL TL N ARGS...: ucx_perftest, server on node1, client on
# node0 (retried while the server is not listening yet); node0 prints
# "ucx_bench: perftest ..." with the 50th percentile latency (us) and the
# overall bandwidth (MB/s) of the final line.
perf() {
	pf=$1
	pf_tl=$2
	pf_n=$3
	shift 3
	if [ "$KRC_NODE" = 1 ]; then
		ucx "$pf_tl" timeout 180 ucx_perftest "$@" -n "$pf_n" -w 10 \
			>"$D/pf.$pf.srv" 2>&1 &
		pf_pid=$!
		barrier "pf.up.$pf" 300
		wait "$pf_pid"
		barrier "pf.end.$pf" 300
		return
	fi
	barrier "pf.up.$pf" 300
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		sleep 1
		ucx "$pf_tl" timeout 180 ucx_perftest "$(node_ip 1)" "$@" \
			-n "$pf_n" -w 10 -f >"$D/pf.$pf.cli" 2>&1
		grep -q "Connection refused" "$D/pf.$pf.cli" || break
	done
	barrier "pf.end.$pf" 300
	pf_line=$(grep -E "^ +$pf_n +[0-9]" "$D/pf.$pf.cli" | tail -n 1)
	if [ -z "$pf_line" ]; then
		fail "ucx_perftest $pf"
		cat "$D/pf.$pf.cli"
		return
	fi
	# shellcheck disable=SC2086 # the final line's columns
	set -- $pf_line
	say "ucx_bench: perftest test=$pf tls=$pf_tl iters=$1 lat_p50_us=$2 lat_avg_us=$3 bw_mb_s=$6"
}

# verbs LABEL TLS: Debian's UCX on rxe0 itself, once; what happened.
verbs() {
	if [ "$KRC_NODE" = 1 ]; then
		UCX_TLS=$2 timeout 60 ucx_perftest -t ucp_put_lat -n 100 -w 5 \
			>"$D/vb.$1.srv" 2>&1 &
		vb_pid=$!
		barrier "vb.up.$1" 300
		wait "$vb_pid"
		barrier "vb.end.$1" 300
		return
	fi
	barrier "vb.up.$1" 300
	for _ in 1 2 3 4 5; do
		sleep 1
		UCX_TLS=$2 timeout 60 ucx_perftest "$(node_ip 1)" -t ucp_put_lat \
			-n 100 -w 5 -f >"$D/vb.$1.cli" 2>&1
		vb_rc=$?
		grep -q "Connection refused" "$D/vb.$1.cli" || break
	done
	barrier "vb.end.$1" 300
	vb_line=$(grep -E "^ +100 +[0-9]" "$D/vb.$1.cli" | tail -n 1)
	vb_err=$(grep -m 1 -iE "error|fatal|abort|unhandled|failed|unreachable|no auxiliary" \
		"$D/vb.$1.cli" | sed 's/^ *//; s/^\[[^]]*\] *//; s/^\[[^]]*\] *//; s/  */ /g' |
		cut -c 1-240)
	if [ -n "$vb_line" ]; then
		# shellcheck disable=SC2086
		set -- "$1" "$2" $vb_line
		say "note: UCX_TLS=$2 ucx_perftest ucp_put_lat completed (exit $vb_rc): lat_p50_us=$4"
	else
		[ -z "$vb_err" ] && vb_err=$(tail -n 1 "$D/vb.$1.cli" | cut -c 1-240)
		say "note: UCX_TLS=$2 ucx_perftest ucp_put_lat failed (exit $vb_rc): $vb_err"
	fi
}

mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
mkdir -p "$D"

if [ "$PART" = mpi ]; then
	# Four nodes: node0 hosts the MetaServer and runs mpirun.
	if [ "$KRC_NODE" = 0 ]; then
		check "module loads" 'krc_load meta_host=1'
		barrier meta
	else
		barrier meta
		check "module loads" "krc_load meta_server=$(node_ip 0)"
		meta_registered
	fi
	export KRC_RUN
	"$KRC_REPO/tools/krc-rsh" -serve "$(node_ip "$KRC_NODE")" &
	served=$!
	barrier served
	if [ "$KRC_NODE" = 0 ]; then
		hosts=""
		for nd in $(seq 0 $((KRC_NODES - 1))); do
			hosts="$hosts${hosts:+,}$(node_ip "$nd"):1"
		done
		say "ucx_bench: mpi run ranks=$KRC_NODES reps=$MPI_K"
		say "ucx_bench: mpi node0's RCs to node1 before the first mpirun: $(rc_state)"
		for rep in $(seq 1 "$MPI_K"); do
			# which goes first alternates (the host's load drifts)
			order="krcore tcp"
			[ $((rep % 2)) = 0 ] && order="tcp krcore"
			for tl in $order; do
				before=$(rc_state)
				timeout 400 mpirun --allow-run-as-root -np "$KRC_NODES" \
					--host "$hosts" \
					--mca plm_rsh_agent "$KRC_REPO/tools/krc-rsh" \
					--mca plm_rsh_no_tree_spawn 1 \
					--mca oob_tcp_if_include eth0 \
					--mca pml ucx --mca pml_ucx_tls any \
					--mca pml_ucx_devices any \
					--mca btl self --mca osc ^ucx \
					-x LD_PRELOAD="$MOD" -x UCX_TLS="$tl,self" \
					-x UCX_LOG_LEVEL=warn \
					"$KRC_BIN/mpi_bench" >"$D/mpi.$tl.$rep" 2>&1 ||
					{ fail "mpirun $tl $rep"; cat "$D/mpi.$tl.$rep"; }
				ml=$(grep '^mpi_bench:' "$D/mpi.$tl.$rep")
				[ -n "$ml" ] && say "ucx_bench: mpi tls=$tl rep=$rep rc_node0_to_node1_before=$before ${ml#mpi_bench: }"
				grep "^mpi_bench:" "$D/mpi.$tl.$rep" >>"$D/mpi.$tl"
			done
		done
		for tl in krcore tcp; do
			say "ucx_bench: mpi_median tls=$tl ranks=$KRC_NODES init_max_us=$(med "$D/mpi.$tl" init_max_us) alltoall_max_us=$(med "$D/mpi.$tl" alltoall_max_us) total_max_us=$(med "$D/mpi.$tl" total_max_us)"
		done
		ratio mpi_init_alltoall_tcp_over_krcore \
			"$(med "$D/mpi.tcp" total_max_us)" \
			"$(med "$D/mpi.krcore" total_max_us)" ">= 1" \
			"yes (control plane: UCX start-up and every rank's first connections)"
		ratio mpi_first_alltoall_tcp_over_krcore \
			"$(med "$D/mpi.tcp" alltoall_max_us)" \
			"$(med "$D/mpi.krcore" alltoall_max_us)" ">= 1" \
			"yes (endpoint creation and the first exchange between every pair)"
		for nd in $(seq 0 $((KRC_NODES - 1))); do
			: >"$KRC_RUN/rsh/$(node_ip "$nd")/stop"
		done
	fi
	barrier all_done 900
	wait "$served"
	check "module unloads" krc_unload
	finish
fi

# The main part: two nodes, node1 hosts the MetaServer and serves.
if [ "$KRC_NODE" = 1 ]; then
	check "module loads" 'load'
	barrier meta
else
	barrier meta
	check "module loads" 'load'
	: >"$OUT"
	say "ucx_bench: run k=$K cold=$COLD peers=$PEERS eps_reps=$EPS_REPS lat_iters=$LAT_N bw_iters=$BW_N"
fi

# 1. Cold: krcore freshly loaded on both nodes before each (the first as
# the run loaded it). ucx_info and ucx_bench's usage first, so that no
# sample pays for reading UCX's libraries over 9p (no connection: UCX
# opens the interfaces only).
if [ "$KRC_NODE" = 0 ]; then
	ucx krcore ucx_info -d >/dev/null 2>&1
	ucx tcp ucx_info -d >/dev/null 2>&1
	"$UB" >/dev/null 2>&1
	say "ucx_bench: node0's krcore RCs to node1 before the first cold process: $(rc_state)"
fi
c=1
while [ "$c" -le "$COLD" ]; do
	op=put
	[ $((c % 2)) = 0 ] && op=am
	if [ "$c" -gt 1 ]; then
		# node1 first (the MetaServer), then node0
		barrier "cold.$c.down" 300
		if [ "$KRC_NODE" = 1 ]; then
			if ! { krc_unload && load; }; then fail "reload (node1)"; fi
		fi
		barrier "cold.$c.n1" 300
		if [ "$KRC_NODE" = 0 ]; then
			if ! { krc_unload && load; }; then fail "reload (node0)"; fi
		fi
	fi
	if [ "$KRC_NODE" = 1 ]; then
		srv krcore "cold$c"
		barrier "cold.$c.up" 300
		barrier "cold.$c.done" 300
		srv_stop "cold$c"
	else
		barrier "cold.$c.up" 300
		before=$(rc_state)
		ucx krcore timeout 300 "$UB" launch "$D" "cold$c" $op 1 \
			>"$D/first.cold.$c" 2>&1 || { fail "cold $c"; cat "$D/first.cold.$c"; }
		after=$(rc_state)
		fl=$(grep '^ucx_bench: first' "$D/first.cold.$c")
		say "ucx_bench: cold sample=$c rc_to_peer_before=$before rc_to_peer_after=$after ${fl#ucx_bench: first }"
		printf '%s\n' "$fl" >>"$D/first.krcore_cold.$op"
		barrier "cold.$c.done" 300
	fi
	c=$((c + 1))
done

# 2. Pooled: K new processes per transport and operation.
for tl in krcore tcp; do
	if [ "$KRC_NODE" = 1 ]; then
		srv $tl "first_$tl"
		barrier "first.$tl.up" 300
		barrier "first.$tl.done" 900
		srv_stop "first_$tl"
		continue
	fi
	barrier "first.$tl.up" 300
	[ $tl = krcore ] && say "ucx_bench: node0's krcore RCs to node1 before the pooled krcore processes: $(rc_state)"
	for op in put am; do
		ucx $tl timeout 600 "$UB" launch "$D" "first_$tl" $op "$K" \
			>"$D/first.$tl.$op" 2>&1 || { fail "launch $tl $op"; cat "$D/first.$tl.$op"; }
	done
	barrier "first.$tl.done" 900
done

# 3. Endpoints per second to PEERS workers of one process on node1.
for tl in krcore tcp; do
	if [ "$KRC_NODE" = 1 ]; then
		srv $tl "eps_$tl" "$PEERS"
		barrier "eps.$tl.up" 300
		barrier "eps.$tl.done" 900
		srv_stop "eps_$tl"
		continue
	fi
	barrier "eps.$tl.up" 300
	: >"$D/eps.$tl"
	for _ in $(seq 1 "$EPS_REPS"); do
		ucx $tl timeout 300 "$UB" eps "$D" "eps_$tl" >>"$D/eps.$tl" 2>&1 ||
			{ fail "eps $tl"; cat "$D/eps.$tl"; }
	done
	barrier "eps.$tl.done" 900
done

# 4. Steady state: Debian's ucx_perftest.
for tl in krcore tcp; do
	perf "put_lat.$tl" $tl "$LAT_N" -t ucp_put_lat -s 8
	perf "get.$tl" $tl "$LAT_N" -t ucp_get -s 8
	perf "tag_lat.$tl" $tl "$LAT_N" -t tag_lat -s 8
	perf "put_bw.$tl" $tl "$BW_N" -t ucp_put_bw -s 65536
done

# 5. Debian's UCX over rxe0's verbs directly.
if [ "$VERBS" != 0 ]; then
	verbs rc rc_verbs,self
	verbs rcud rc_verbs,ud_verbs,self
	[ "$KRC_NODE" = 0 ] &&
		say "note: ucx_perftest 1.13 has no client/server (sockaddr, rdmacm) mode: its -h lists none; it exchanges addresses over its own TCP socket (-p)"
fi

if [ "$KRC_NODE" = 0 ]; then
	for f in "$D"/first.krcore.* "$D"/first.tcp.* "$D"/first.krcore_cold.*; do
		[ -s "$f" ] || continue
		lb=${f#"$D"/first.}
		say "ucx_bench: elastic tls=${lb%.*} op=${lb##*.} samples=$(grep -c '^ucx_bench: first' "$f") exec_us=$(med "$f" exec_us) startup_us=$(med "$f" startup_us) init_us=$(med "$f" init_us) worker_us=$(med "$f" worker_us) ep_us=$(med "$f" ep_us) op_us=$(med "$f" op_us) total_us=$(med "$f" total_us)"
	done
	for tl in krcore tcp; do
		grep '^ucx_bench: eps' "$D/eps.$tl" | while read -r l; do say "$l"; done
		say "ucx_bench: eps_median tls=$tl peers=$PEERS eps_per_s=$(med "$D/eps.$tl" eps_per_s) total_us=$(med "$D/eps.$tl" total_us)"
	done
	F=$D/first
	# sum2 FILE: the median endpoint time plus the median operation time
	sum2() {
		awk -v a="$(med "$1" ep_us)" -v b="$(med "$1" op_us)" \
			'BEGIN { if (a != "" && b != "") print a + b }'
	}
	ctl="yes (control plane: UCX start-up, endpoint and the first RC; rxe's data path adds to both alike)"
	for op in put am; do
		ratio "first_${op}_total_tcp_over_krcore" "$(med "$F.tcp.$op" total_us)" \
			"$(med "$F.krcore.$op" total_us)" ">= 1" "$ctl"
		ratio "first_${op}_ep_plus_op_tcp_over_krcore" \
			"$(sum2 "$F.tcp.$op")" "$(sum2 "$F.krcore.$op")" ">= 1" "$ctl"
		[ -s "$F.krcore_cold.$op" ] || continue
		cold="yes in direction (the kernel's first RC to the node, in software here; on hardware an RC handshake costs more than a TCP connect)"
		ratio "first_${op}_total_tcp_over_krcore_cold" \
			"$(med "$F.tcp.$op" total_us)" \
			"$(med "$F.krcore_cold.$op" total_us)" ">= 1" "$cold"
		ratio "first_${op}_ep_plus_op_tcp_over_krcore_cold" \
			"$(sum2 "$F.tcp.$op")" "$(sum2 "$F.krcore_cold.$op")" \
			">= 1" "$cold"
	done
	ratio startup_tcp_over_krcore "$(med "$F.tcp.put" startup_us)" \
		"$(med "$F.krcore.put" startup_us)" ">= 1" \
		"yes (ucp_init + ucp_worker_create: krcore opens /dev/krcore and binds a port, tcp opens sockets)"
	ratio eps_per_s_krcore_over_tcp "$(med "$D/eps.krcore" eps_per_s)" \
		"$(med "$D/eps.tcp" eps_per_s)" ">= 1" \
		"yes (one VQ and a pooled RC per endpoint against a TCP connect and UCP's wireup)"
	pm() {
		sed -n "s/^ucx_bench: perftest test=$1 .* $2=\([0-9.]*\).*/\1/p" "$OUT" | head -n 1
	}
	dp="no (rxe is RDMA in the kernel's software and makes every verbs post a system call, as UCX's tcp makes every send; a NIC's data path is another matter)"
	ratio put_lat8_tcp_over_krcore "$(pm put_lat.tcp lat_p50_us)" \
		"$(pm put_lat.krcore lat_p50_us)" ">= 1" "$dp"
	ratio get_lat8_tcp_over_krcore "$(pm get.tcp lat_p50_us)" \
		"$(pm get.krcore lat_p50_us)" ">= 1" "$dp"
	ratio tag_lat8_tcp_over_krcore "$(pm tag_lat.tcp lat_p50_us)" \
		"$(pm tag_lat.krcore lat_p50_us)" ">= 1" "$dp"
	ratio put_bw64k_krcore_over_tcp "$(pm put_bw.krcore bw_mb_s)" \
		"$(pm put_bw.tcp bw_mb_s)" ">= 1" \
		"no (rxe moves the bytes with the CPU in the kernel, as tcp does; a NIC moves them itself)"
fi
barrier all_done 600
check "module unloads (every VQ of UCX closed)" krc_unload
finish
