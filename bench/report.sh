#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The host's half of make bench: the sample lines node1 wrote in the run
# directory (bench/run.sh, KRC_BENCH_SAMPLES), with the QP state model's
# (bench/state_table -s), become RESULTS_DIR/summary.txt, results.json, a
# data file and a gnuplot script per figure (bench/krbench_report), and
# the PNGs (bench/plot.sh). The run's own text outputs are copied next to
# them.
#
# MESH_DIR, the four-node run of bench/mesh.sh, adds its samples and
# mesh.out when it has them; FC_DIR, the three-node run of
# bench/first_contact.sh, its samples and first_contact.out; RPC_DIR, the
# two-node run of bench/rpc.sh, its samples (the rpc_* figures) and
# rpc_bench.out (its "rpc_bench:" and "ratio:" lines, with each ratio's
# hardware note); CORES_DIR, the run of bench/cores.sh on nodes of two
# vCPUs, its samples (the *_cpus2 figures) and connect_rate_cpus.out.
#
#   sh bench/report.sh RUN_DIR RESULTS_DIR [MESH_DIR [FC_DIR [RPC_DIR [CORES_DIR]]]]
#
# A DIR given as "-" (or empty) is left out. RUN_DIR may be left out only
# when RPC_DIR is given (make bench-rpc: the RPC figures alone); the state
# model, whose QP costs RUN_DIR measures, then is too.
set -u
run=${1:-}
res=${2:-}
mesh=${3:-}
fc=${4:-}
rpc=${5:-}
cores=${6:-}
[ "$run" = - ] && run=""
[ "$cores" = - ] && cores=""
[ "$mesh" = - ] && mesh=""
[ "$fc" = - ] && fc=""
[ "$rpc" = - ] && rpc=""
if [ $# -lt 2 ] || [ $# -gt 6 ] || [ -z "$res" ] ||
	{ [ -n "$run" ] && [ ! -d "$run" ]; } || { [ -z "$run" ] && [ -z "$rpc" ]; }; then
	echo "usage: sh bench/report.sh RUN_DIR RESULTS_DIR [MESH_DIR [FC_DIR [RPC_DIR [CORES_DIR]]]] (a DIR \"-\": none; RUN_DIR only with RPC_DIR)" >&2
	exit 2
fi
if [ -n "$run" ] && [ ! -s "$run/bench.samples" ]; then
	echo "report: no samples in $run/bench.samples: the benchmark run wrote none" >&2
	exit 1
fi
if [ -z "$run" ] && [ ! -s "$rpc/bench.samples" ]; then
	echo "report: no samples in $rpc/bench.samples: the RPC run (bench/rpc.sh) wrote none" >&2
	exit 1
fi
bin=${KRC_BIN:-build/bin}
rm -rf "$res"
mkdir -p "$res" || exit 1
: >"$res/samples.txt" || exit 1
[ -n "$run" ] && cat "$run/bench.samples" >>"$res/samples.txt"
if [ -n "$mesh" ]; then
	if [ -s "$mesh/bench.samples" ]; then
		cat "$mesh/bench.samples" >>"$res/samples.txt"
		cp "$mesh/mesh.out" "$res/" 2>/dev/null
	else
		echo "report: no full-mesh samples in $mesh/bench.samples" >&2
	fi
fi
if [ -n "$fc" ]; then
	if [ -s "$fc/bench.samples" ]; then
		cat "$fc/bench.samples" >>"$res/samples.txt"
	else
		echo "report: no first-contact samples in $fc/bench.samples" >&2
	fi
fi
if [ -n "$run" ]; then
	# The state model with the RC and UD QP costs measured in the run
	# (bench/qp_cost); DC, which Soft-RoCE lacks, taken to cost what RC
	# does.
	costs=""
	if [ -f "$run/qp_cost.out" ]; then
		rc=$(sed -n 's/^cost rc \([0-9][0-9]*\)$/\1/p' "$run/qp_cost.out")
		ud=$(sed -n 's/^cost ud \([0-9][0-9]*\)$/\1/p' "$run/qp_cost.out")
		[ -n "$rc" ] && [ -n "$ud" ] && [ "$rc" -gt 0 ] && [ "$ud" -gt 0 ] &&
			costs="--rc-bytes $rc --ud-bytes $ud --measured --dc-as-rc"
	fi
	[ -n "$costs" ] || echo "report: no QP costs measured in $run (qp_cost.out): the state table's are assumed" >&2
	# shellcheck disable=SC2086 # $costs is options
	"$bin/state_table" -s $costs >>"$res/samples.txt" || exit 1
	for f in connect_bench.out conn_floor.out connect_rate.out read_bench.out perftest.out first_contact.out qp_cost.out meta_bench.out; do
		[ -f "$run/$f" ] && cp "$run/$f" "$res/"
	done
	# shellcheck disable=SC2086
	"$bin/state_table" $costs >"$res/state_table.txt" || exit 1
else
	echo "report: no benchmark run (RUN_DIR -): the RPC figures alone, without the state model (its QP costs come from make bench's run)" >&2
fi
[ -n "$fc" ] && [ -f "$fc/first_contact.out" ] && cp "$fc/first_contact.out" "$res/"
if [ -n "$rpc" ]; then
	if [ -s "$rpc/bench.samples" ]; then
		cat "$rpc/bench.samples" >>"$res/samples.txt"
	else
		echo "report: no RPC samples in $rpc/bench.samples" >&2
	fi
	[ -f "$rpc/rpc_bench.out" ] && cp "$rpc/rpc_bench.out" "$res/"
fi
if [ -n "$cores" ]; then
	if [ -s "$cores/bench.samples" ]; then
		cat "$cores/bench.samples" >>"$res/samples.txt"
	else
		echo "report: no samples of the run on two vCPUs in $cores/bench.samples" >&2
	fi
	[ -f "$cores/connect_rate_cpus.out" ] && cp "$cores/connect_rate_cpus.out" "$res/"
fi
"$bin/krbench_report" -q "$res" "$res/samples.txt" || exit 1
sh bench/plot.sh "$res" || exit 1
cat "$res/summary.txt"
echo "report: $res (summary.txt, results.json, *.png)"
