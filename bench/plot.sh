#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Draw the plots of a results directory written by krbench_report: gnuplot
# runs every FIGURE.gp there, in that directory, and each writes
# FIGURE.png next to it (pngcairo, or gnuplot's png terminal when it has
# no cairo). Without gnuplot this says so and exits 0: summary.txt and
# results.json are the results, the plots only draw them.
#
#   sh bench/plot.sh RESULTS_DIR
#
# Exit 0 when every script drew its PNG (or there is no gnuplot), 1 when
# one failed (its messages in RESULTS_DIR/FIGURE.plot.log), 2 on a usage
# error.
set -u
dir=${1:-}
if [ $# -ne 1 ] || [ ! -d "$dir" ]; then
	echo "usage: sh bench/plot.sh RESULTS_DIR (a directory krbench_report wrote)" >&2
	exit 2
fi
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "plot: gnuplot is not installed (Debian: apt-get install gnuplot-nox, or make deps):"
	echo "plot: no PNGs drawn; $dir/summary.txt and $dir/results.json hold the results"
	exit 0
fi
drawn=0
failed=0
for gp in "$dir"/*.gp; do
	[ -f "$gp" ] || continue
	name=$(basename "$gp" .gp)
	rm -f "$dir/$name.png" "$dir/$name.plot.log"
	if (cd "$dir" && gnuplot "$name.gp") >"$dir/$name.plot.log" 2>&1 &&
		[ -s "$dir/$name.png" ]; then
		drawn=$((drawn + 1))
		rm -f "$dir/$name.plot.log"
	else
		failed=$((failed + 1))
		echo "plot: $name.gp drew no PNG: $dir/$name.plot.log"
	fi
done
echo "plot: $drawn PNG(s) drawn in $dir, $failed failed"
[ "$failed" -eq 0 ]
