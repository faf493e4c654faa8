#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The plots of make bench-ucx: from its summary.txt (bench/ucx.sh's
# "ucx_bench:" lines), a data file and a gnuplot script per figure in
# RESULTS_DIR, then the PNGs:
#   ucx_elastic.png    a new process's first put and first AM reply:
#                      medians of its phases (exec, UCX start-up,
#                      endpoint, operation), krcore cold and pooled, tcp;
#   ucx_latency.png    ucx_perftest's 8 B latencies (50th percentile);
#   ucx_bandwidth.png  ucx_perftest's 64 KiB ucp_put_bw (MB/s);
#   ucx_eps.png        endpoints (with a first put) per second;
#   ucx_mpi.png        MPI_Init and a first MPI_Alltoall (max over ranks).
# The summary is copied beside them. Without gnuplot this says so and
# exits 0 (the summary holds the numbers).
#
#   sh bench/ucx_plot.sh SUMMARY RESULTS_DIR
set -u
sum=${1:-}
res=${2:-}
if [ $# -ne 2 ] || [ ! -f "$sum" ]; then
	echo "usage: sh bench/ucx_plot.sh SUMMARY RESULTS_DIR" >&2
	exit 2
fi
mkdir -p "$res" || exit 1
cp "$sum" "$res/summary.txt"

# field LINE KEY: the value of KEY= on LINE
field() {
	printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

: >"$res/ucx_elastic.dat"
for op in put am; do
	for tl in krcore_cold krcore tcp; do
		l=$(grep "^ucx_bench: elastic tls=$tl op=$op " "$sum" | head -n 1)
		[ -n "$l" ] || continue
		printf '"%s %s" %s %s %s %s\n' "$op" "$tl" \
			"$(field "$l" exec_us)" "$(field "$l" startup_us)" \
			"$(field "$l" ep_us)" "$(field "$l" op_us)" >>"$res/ucx_elastic.dat"
	done
done

: >"$res/ucx_latency.dat"
: >"$res/ucx_bandwidth.dat"
for t in put_lat get tag_lat; do
	k=$(sed -n "s/^ucx_bench: perftest test=$t.krcore .*lat_p50_us=\([0-9.]*\).*/\1/p" "$sum" | head -n 1)
	c=$(sed -n "s/^ucx_bench: perftest test=$t.tcp .*lat_p50_us=\([0-9.]*\).*/\1/p" "$sum" | head -n 1)
	[ -n "$k$c" ] && echo "\"$t 8B\" ${k:-0} ${c:-0}" >>"$res/ucx_latency.dat"
done
k=$(sed -n 's/^ucx_bench: perftest test=put_bw.krcore .*bw_mb_s=\([0-9.]*\).*/\1/p' "$sum" | head -n 1)
c=$(sed -n 's/^ucx_bench: perftest test=put_bw.tcp .*bw_mb_s=\([0-9.]*\).*/\1/p' "$sum" | head -n 1)
[ -n "$k$c" ] && echo "\"ucp_put_bw 64KiB\" ${k:-0} ${c:-0}" >>"$res/ucx_bandwidth.dat"

: >"$res/ucx_eps.dat"
k=$(sed -n 's/^ucx_bench: eps_median tls=krcore .*eps_per_s=\([0-9.]*\).*/\1/p' "$sum")
c=$(sed -n 's/^ucx_bench: eps_median tls=tcp .*eps_per_s=\([0-9.]*\).*/\1/p' "$sum")
p=$(sed -n 's/^ucx_bench: eps_median .*peers=\([0-9]*\).*/\1/p' "$sum" | head -n 1)
[ -n "$k$c" ] && echo "\"${p:-?} peers\" ${k:-0} ${c:-0}" >>"$res/ucx_eps.dat"

: >"$res/ucx_mpi.dat"
for tl in krcore tcp; do
	l=$(grep "^ucx_bench: mpi_median tls=$tl " "$sum" | head -n 1)
	[ -n "$l" ] || continue
	echo "$tl $(field "$l" init_max_us) $(field "$l" alltoall_max_us)" >>"$res/ucx_mpi.dat"
done

head='set terminal pngcairo size 900,540 noenhanced
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set grid ytics
set key below horizontal
set yrange [0:*]'

cat >"$res/ucx_elastic.gp" <<EOF
$head
set output "ucx_elastic.png"
set title "A new process's first put / first AM reply (medians; TCG + Soft-RoCE: ratios, not times)"
set style histogram rowstacked
set ylabel "ms from before fork()"
set xtics rotate by -20
plot "ucx_elastic.dat" using (\$2/1000):xtic(1) title "exec + loader", \
     "" using (\$3/1000) title "ucp_init + worker", \
     "" using (\$4/1000) title "ep_create", \
     "" using (\$5/1000) title "put+flush / AM round trip"
EOF

two() {	# NAME TITLE YLABEL COL2 COL3
	cat >"$res/$1.gp" <<EOF
$head
set output "$1.png"
set title "$2"
set style histogram clustered gap 1
set ylabel "$3"
plot "$1.dat" using 2:xtic(1) title "$4", "" using 3 title "$5"
EOF
}
two ucx_latency "ucx_perftest 8 B, 50th percentile (lower is better; on rxe, no guide to a NIC)" \
	"us" "krcore" "tcp"
two ucx_bandwidth "ucx_perftest ucp_put_bw 64 KiB (higher is better)" "MB/s" \
	"krcore" "tcp"
two ucx_eps "endpoints + first put per second, one process (higher is better)" \
	"endpoints/s" "krcore" "tcp"
cat >"$res/ucx_mpi.gp" <<EOF
$head
set output "ucx_mpi.png"
set title "MPI_Init and a first MPI_Alltoall, max over ranks (lower is better)"
set style histogram rowstacked
set ylabel "ms"
plot "ucx_mpi.dat" using (\$2/1000):xtic(1) title "MPI_Init", \
     "" using (\$3/1000) title "first MPI_Alltoall"
EOF

# A figure without data draws nothing; bench/plot.sh draws the others.
for gp in "$res"/ucx_*.gp; do
	nm=$(basename "$gp" .gp)
	if [ ! -s "$res/$nm.dat" ]; then
		echo "ucx_plot: $nm: no data in the summary"
		rm -f "$gp"
	fi
done
sh "$(dirname "$0")/plot.sh" "$res"
