#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The plots of make bench-lmr: from its summary.txt (bench/lmr.sh's
# "lmr_bench:" lines), a data file and a gnuplot script per figure in
# RESULTS_DIR, then the PNGs:
#   lmr_read.png   an 8 B krc_lmr_read beside the raw VQ READ of the same
#                  address and key (krc_read_sync): min, median, p99;
#   lmr_alloc.png  remote allocation: the latency of an allocation and
#                  of a free (min, median, p99), and allocations per
#                  second;
#   lmr_mem.png    memset and copy at the owner (krc_lmr_set,
#                  krc_lmr_copy) beside a process moving the same bytes,
#                  median time per size (log scales: the two differ by
#                  one to two orders of magnitude on rxe);
#   lmr_lock.png   lock acquisitions per second of all processes at 1, 4
#                  and 8 processes: krcore's lock beside the CAS lock.
# The summary is copied beside them. Without gnuplot this says so and
# exits 0 (the summary holds the numbers).
#
#   sh bench/lmr_plot.sh SUMMARY RESULTS_DIR
set -u
sum=${1:-}
res=${2:-}
if [ $# -ne 2 ] || [ ! -f "$sum" ]; then
	echo "usage: sh bench/lmr_plot.sh SUMMARY RESULTS_DIR" >&2
	exit 2
fi
mkdir -p "$res" || exit 1
cp "$sum" "$res/summary.txt"

# val WHAT KEY [MATCH]: the value of KEY= on the first "lmr_bench: WHAT "
# line (that also holds MATCH, a field such as mib=8)
val() {
	grep "^lmr_bench: $1 " "$sum" | grep -e "${3:- }" | head -n 1 |
		tr ' ' '\n' | sed -n "s/^$2=//p"
}

# Rows with no number of either kind are left out; a missing one of two
# is NaN, which gnuplot skips (a gap, not a bar of 0).
: >"$res/lmr_read.dat"
for k in min median p99; do
	a=$(val read8_lmr "${k}_us")
	b=$(val read8_raw "${k}_us")
	[ -n "$a$b" ] && echo "$k ${a:-NaN} ${b:-NaN}" >>"$res/lmr_read.dat"
done

: >"$res/lmr_alloc.dat"
for k in min median p99; do
	a=$(val alloc "${k}_us")
	f=$(val free "${k}_us")
	[ -n "$a$f" ] && echo "$k ${a:-NaN} ${f:-NaN}" >>"$res/lmr_alloc.dat"
done
# the rate (and the size allocated) in the title: one number, no axis
rate=$(val alloc_rate per_s)
kib=$(val alloc_rate kib)

: >"$res/lmr_mem.dat"
for m in $(sed -n 's/^lmr_bench: memset_owner mib=\([0-9]*\) .*/\1/p' "$sum" | sort -n -u); do
	printf '%s %s %s %s %s\n' "$m" \
		"$(val memset_owner median_ms "mib=$m ")" \
		"$(val memset_push median_ms "mib=$m ")" \
		"$(val copy_owner median_ms "mib=$m ")" \
		"$(val copy_pull_push median_ms "mib=$m ")" |
		awk '{ for (i = 2; i <= 5; i++) if ($i == "") $i = "NaN"; print }' \
		>>"$res/lmr_mem.dat"
done

: >"$res/lmr_lock.dat"
for p in $(sed -n 's/^lmr_bench: lock_all .*procs=\([0-9]*\) .*/\1/p' "$sum" | sort -n -u); do
	k=$(val lock_all per_s "mode=krcore procs=$p ")
	c=$(val lock_all per_s "mode=cas procs=$p ")
	echo "$p ${k:-NaN} ${c:-NaN}" >>"$res/lmr_lock.dat"
done

head='set terminal pngcairo size 900,540 noenhanced
set style fill solid 0.8 border -1
set grid ytics
set key below horizontal
set datafile missing "NaN"'
bars='set style data histograms
set style histogram clustered gap 1
set boxwidth 0.8
set yrange [0:*]'

cat >"$res/lmr_read.gp" <<EOF
$head
$bars
set output "lmr_read.png"
set title "8 B READ of a remote region (lower is better; rxe: compare, not absolute)"
set ylabel "us"
plot "lmr_read.dat" using 2:xtic(1) title "krc_lmr_read", "" using 3 title "raw VQ READ (krc_read_sync)"
EOF

cat >"$res/lmr_alloc.gp" <<EOF
$head
$bars
set output "lmr_alloc.png"
set title "Remote allocation of ${kib:-?} KiB: ${rate:-?} allocations/s, one after the other (lower is better)"
set ylabel "us"
plot "lmr_alloc.dat" using 2:xtic(1) title "krc_lmr_alloc", "" using 3 title "krc_lmr_free"
EOF

cat >"$res/lmr_mem.gp" <<EOF
$head
set output "lmr_mem.png"
set title "memset and copy: at the owner vs a process moving the bytes (median; lower is better)"
set xlabel "MiB per region"
set ylabel "ms"
set logscale xy 2
set grid xtics
set offsets graph 0.05, graph 0.05, 0, 0
plot "lmr_mem.dat" using 1:2 with linespoints lw 2 pt 7 title "memset at the owner (krc_lmr_set)", \
     "" using 1:3 with linespoints lw 2 pt 5 title "memset: 1 MiB WRITEs by the process", \
     "" using 1:4 with linespoints lw 2 pt 9 title "copy at the owner (krc_lmr_copy)", \
     "" using 1:5 with linespoints lw 2 pt 11 title "copy: 1 MiB READs + WRITEs by the process"
EOF

cat >"$res/lmr_lock.gp" <<EOF
$head
$bars
set output "lmr_lock.png"
set title "Lock acquire + release per second, all processes (higher is better)"
set xlabel "processes (on node1, node0, node2, ...)"
set ylabel "acquisitions/s"
plot "lmr_lock.dat" using 2:xtic(1) title "krcore (krc_lock, krc_unlock)", "" using 3 title "CAS lock (the owner's RNIC, retried at once)"
EOF

# A figure without data draws nothing; bench/plot.sh draws the others.
for gp in "$res"/lmr_*.gp; do
	nm=$(basename "$gp" .gp)
	if [ ! -s "$res/$nm.dat" ]; then
		echo "lmr_plot: $nm: no data in the summary"
		rm -f "$gp"
	fi
done
sh "$(dirname "$0")/plot.sh" "$res"
