#!/bin/sh
# The remote memory benchmark of issue 27 (make bench-lmr), on three
# nodes: node0 hosts the MetaServer, the memory is on node2, node1
# measures (bench/lmr_bench), side by side in one run:
#   - an 8 B READ of a region through krc_lmr_read beside the raw VQ READ
#     of the same address and key (krc_read_sync);
#   - remote allocation: the latency of one, allocations per second, the
#     latency of a free;
#   - memset and copy of each size in KRC_BENCH_LMR_MIB at the owner (its
#     CPU) beside the same bytes moved by node1's process (1 MiB WRITEs;
#     1 MiB READs then WRITEs): several sizes, so that a plot shows how
#     each grows;
#   - lock acquisitions per second of 1, 4 and 8 processes spread over
#     the three nodes (node2's own over loopback): krcore's lock beside a
#     lock built from the owner's RNIC CAS, retried at once;
# then prints every ratio, its target and whether it carries over to
# hardware. Node1's lines go to $KRC_RUN/lmr_bench.out; the Makefile's
# bench-lmr keeps its "lmr_bench:" and "ratio:" lines in summary.txt.
#
# Knobs (about 5 minutes on a 2-core host): KRC_BENCH_LMR_N (1000) 8 B
# READs of each kind, KRC_BENCH_LMR_ALLOCS (100) allocations of
# KRC_BENCH_LMR_KIB (64) KiB, KRC_BENCH_LMR_MIB ("8 32 128", or 8,32,128)
# MiB per region, one run per size (the nodes have 1 GiB of memory: the
# issue's 1 GiB does not fit twice; the ratios are taken at the largest),
# KRC_BENCH_LMR_REPS (3), KRC_BENCH_LMR_SECS (3) seconds per lock run,
# KRC_BENCH_LMR_PROCS ("1 4 8", or 1,4,8).
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
OWNER=$(node_ip 2)
LB=$KRC_BIN/lmr_bench
OUT=$KRC_RUN/lmr_bench.out
KEY=$KRC_RUN/lmr_bench.key
N=${KRC_BENCH_LMR_N:-1000}
ALLOCS=${KRC_BENCH_LMR_ALLOCS:-100}
KIB=${KRC_BENCH_LMR_KIB:-64}
MIBS=$(printf '%s\n' "${KRC_BENCH_LMR_MIB:-8 32 128}" | tr ',' ' ')
# the largest size: node2's pool holds its two regions
MIB=$(printf '%s\n' $MIBS | sort -n | tail -n 1)
REPS=${KRC_BENCH_LMR_REPS:-3}
SECS=${KRC_BENCH_LMR_SECS:-3}
PROCS=$(printf '%s\n' "${KRC_BENCH_LMR_PROCS:-1 4 8}" | tr ',' ' ')

if [ "$KRC_NODE" = 0 ]; then
	check "module loads (MetaServer)" 'krc_load meta_host=1'
	barrier up
else
	barrier up
	if [ "$KRC_NODE" = 2 ]; then
		check "module loads" \
			"krc_load meta_server=$META lmr_pool_mb=$((2 * MIB + 64))"
	else
		check "module loads" "krc_load meta_server=$META"
	fi
	meta_registered
fi
barrier loaded

if [ "$KRC_NODE" = 1 ]; then
	: >"$OUT"
	check "8 B READs: krc_lmr_read and the raw VQ READ" \
		'"$LB" read "$OWNER" "$N" >>"$OUT"'
	check "allocations of $KIB KiB on node2" \
		'"$LB" alloc "$OWNER" "$ALLOCS" "$KIB" >>"$OUT"'
	for m in $MIBS; do
		check "memset and copy of $m MiB: at the owner, and by this process" \
			'"$LB" mem "$OWNER" "$m" "$REPS" >>"$OUT"'
	done
fi
barrier mem_done

if [ "$KRC_NODE" = 0 ]; then
	"$LB" hold "$OWNER" "$KEY" >"$KRC_RUN/lmr_hold.out" 2>&1 &
	holder=$!
	check "the lock's region on node2" \
		'wait_for 60 "grep -q holding \"$KRC_RUN/lmr_hold.out\""'
fi
barrier keyed

# Process i of P runs on node 1, 0, 2, 1, 0, 2, ... (one process: node1).
share() {
	n=0
	i=0
	while [ "$i" -lt "$1" ]; do
		case $((i % 3)) in
		0) [ "$KRC_NODE" = 1 ] && n=$((n + 1)) ;;
		1) [ "$KRC_NODE" = 0 ] && n=$((n + 1)) ;;
		2) [ "$KRC_NODE" = 2 ] && n=$((n + 1)) ;;
		esac
		i=$((i + 1))
	done
	echo "$n"
}

for p in $PROCS; do
	for mode in krcore cas; do
		start=$KRC_RUN/lmr_start.$mode.$p
		mine=$(share "$p")
		pid=
		if [ "$mine" -gt 0 ]; then
			"$LB" lock "$KEY" "$mode" "$mine" "$SECS" "$start" \
				>"$KRC_RUN/lmr_lock.$mode.$p.$KRC_NODE" 2>&1 &
			pid=$!
		fi
		barrier "forked.$mode.$p"
		# the lockers connect first, then all start together
		[ "$KRC_NODE" = 0 ] && { sleep 2; : >"$start"; }
		[ -n "$pid" ] && check "$mode lock: $mine of $p processes here" "wait $pid"
		barrier "locked.$mode.$p"
	done
done

if [ "$KRC_NODE" = 0 ]; then
	kill -TERM "$holder"
	wait "$holder"
fi

if [ "$KRC_NODE" = 1 ]; then
	for p in $PROCS; do
		for mode in krcore cas; do
			cat "$KRC_RUN"/lmr_lock."$mode"."$p".* |
				awk -v mode="$mode" -v p="$p" -v secs="$SECS" '
				/^lmr_bench: lock/ {
					for (i = 1; i <= NF; i++)
						if ($i ~ /^acquired=/) { sub(/acquired=/, "", $i); n += $i }
				}
				END { printf "lmr_bench: lock_all mode=%s procs=%d acquired=%d per_s=%.1f\n",
					mode, p, n, n / secs }'
		done
	done >>"$OUT"
	cat "$OUT"
	# med WHAT KEY: the value of KEY= on the "lmr_bench: WHAT" line; of
	# memset and copy, the largest size's (the owner's fixed costs weigh
	# least there): a line with another mib= fails at [^m]
	med() {
		sed -n "s/^lmr_bench: $1 \(mib=$MIB \)*[^m].*$2=\([0-9.]*\).*/\2/p" "$OUT" |
			head -n 1
	}
	ratio() {	# NAME A B TARGET NOTE: A / B
		awk -v n="$1" -v a="$2" -v b="$3" -v t="$4" -v note="$5" 'BEGIN {
			if (a == "" || b == "" || b == 0) { printf "ratio: %s missing\n", n; exit }
			printf "ratio: %s %.3f (target %s) %s\n", n, a / b, t, note }'
	}
	{
		ratio lmr_read8_vs_raw_read8 "$(med read8_lmr median_us)" \
			"$(med read8_raw median_us)" "<= 1.05" \
			"(the same VQ READ; carries over: the library adds a range check)"
		ratio memset_push_over_owner "$(med memset_push median_ms)" \
			"$(med memset_owner median_ms)" "> 1 (faster at the owner)" \
			"(flatters krcore here: rxe moves data far slower than a NIC, the owner's CPU does not)"
		ratio copy_pull_push_over_owner "$(med copy_pull_push median_ms)" \
			"$(med copy_owner median_ms)" "> 1 (faster at the owner)" \
			"(as above; on hardware the process moves the bytes twice over the wire, the owner none)"
		for p in $PROCS; do
			ratio "lock_per_s_krcore_over_cas_${p}procs" \
				"$(sed -n "s/^lmr_bench: lock_all mode=krcore procs=$p .*per_s=\([0-9.]*\).*/\1/p" "$OUT")" \
				"$(sed -n "s/^lmr_bench: lock_all mode=cas procs=$p .*per_s=\([0-9.]*\).*/\1/p" "$OUT")" \
				"none set (issue: side by side)" \
				"(does not carry over as is: krcore's lock is two control messages through the kernels, a CAS one RNIC atomic)"
		done
	} | tee -a "$OUT"
fi
barrier done
finish
