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
#   sh bench/report.sh RUN_DIR RESULTS_DIR
set -u
run=${1:-}
res=${2:-}
bin=${KRC_BIN:-build/bin}
if [ $# -ne 2 ] || [ ! -d "$run" ]; then
	echo "usage: sh bench/report.sh RUN_DIR RESULTS_DIR" >&2
	exit 2
fi
if [ ! -s "$run/bench.samples" ]; then
	echo "report: no samples in $run/bench.samples: the benchmark run wrote none" >&2
	exit 1
fi
rm -rf "$res"
mkdir -p "$res" || exit 1
cp "$run/bench.samples" "$res/samples.txt"
"$bin/state_table" -s >>"$res/samples.txt" || exit 1
for f in connect_bench.out connect_rate.out read_bench.out first_contact.out; do
	[ -f "$run/$f" ] && cp "$run/$f" "$res/"
done
"$bin/state_table" >"$res/state_table.txt" || exit 1
"$bin/krbench_report" -q "$res" "$res/samples.txt" || exit 1
sh bench/plot.sh "$res" || exit 1
cat "$res/summary.txt"
echo "report: $res (summary.txt, results.json, *.png)"
