#!/bin/sh
# nodes: 4
# timeout: 900
# The full mesh of make bench, small: bench/mesh.sh on four nodes with 1,
# 2 and 4 processes per node and one round, then node0 turns its samples
# into a report with krbench_report. The numbers are not asserted, only
# that every point is there, positive, for both methods, with the ratio.
. "$KRC_REPO/tests/cluster/lib.sh"

export KRC_BENCH_MESH_PROCS="1 2 4" KRC_BENCH_MESH_ROUNDS=1

check "bench/mesh.sh runs" 'sh "$KRC_REPO/bench/mesh.sh"'
barrier mesh_bench_done 600
if [ "$KRC_NODE" = 0 ]; then
	res=$KRC_RUN/results
	s=$KRC_RUN/bench.samples
	check_report "$s" "$res"
	check "figure mesh has data and a plot script" \
		'[ -s "$res/mesh.dat" ] && [ -s "$res/mesh.gp" ]'
	check "mesh: krcore's first contact with every node timed" \
		'grep -qE "^S mesh krcore_first 1 [0-9.]+$" "$s"'
	for p in 1 2 4; do
		for m in krcore rdma_cm; do
			check "mesh: $m at $p processes, a positive time" \
				'awk -v m=$m -v p=$p "\$1 == \"S\" && \$3 == m && \$4 == p && \$5 > 0 { ok = 1 } END { exit !ok }" "$s"'
		done
	done
	check "the table: a row with both times and the ratio per process count" \
		'[ "$(grep -cE "^  [0-9]+ +[0-9.]+ +[0-9.]+ +[0-9]+x$" "$KRC_RUN/mesh.out")" = 3 ]'
	check "the ratio in the JSON" \
		'grep -q "rdma_cm_over_krcore" "$res/results.json"'
	cat "$KRC_RUN/mesh.out"
fi
finish
