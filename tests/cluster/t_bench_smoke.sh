#!/bin/sh
# nodes: 2
# timeout: 1500
# make bench, small: bench/run.sh with a few samples of everything
# (what a QP costs, connect latency, connection rate at 1-8 processes and
# threads, READ and WRITE latency and throughput at 1-8 processes with
# perftest beside them, the two-sided round trip, MetaServer lookups at three
# occupancies, first contact on every path), then node1 turns its samples
# into a report with krbench_report. The numbers are not asserted, only
# that every figure is there with sane values: positive medians, the
# ratios computed, no malformed sample line.
. "$KRC_REPO/tests/cluster/lib.sh"

export KRC_BENCH_CONNECTS=4 KRC_BENCH_RATE_K=2 KRC_BENCH_RATE_ROUNDS=1
export KRC_BENCH_ITERS=200 KRC_BENCH_SECS=1 KRC_BENCH_QP_COST_N=64
export KRC_BENCH_FC_SAMPLES=1 KRC_BENCH_FC_PARTS=3 KRC_BENCH_FC_READS=100
export KRC_BENCH_META_COUNT=100 KRC_BENCH_META_SECS=1 KRC_BENCH_PT_ITERS=100

# "sane" when every median column (2, 4, ...) of every row of the
# benchmark figures' data files is a positive number, or NaN where a
# method has no sample at that x (perftest's rows are at 1 process only),
# and every row has at least one number.
medians_sane() {
	awk '!/^#/ {
		rows++
		got = 0
		for (i = 2; i <= NF; i += 2) {
			if ($i == "NaN")
				continue
			got++
			if ($i !~ /^[0-9.]+(e[+-]?[0-9]+)?$/ || $i + 0 <= 0)
				bad++
		}
		if (!got)
			bad++
	}
	END { print (rows > 0 && !bad) ? "sane" : "bad " bad " of " rows }' \
		"$1"/connect*.dat "$1"/read*.dat "$1"/write*.dat "$1"/msg_rtt.dat "$1"/first_read.dat "$1"/meta_*.dat
}

# xs_of FIGURE METHOD FILE: the distinct x values of METHOD in FIGURE's
# samples in FILE, in numeric order, on one line: "1 2 4 8".
xs_of() {
	sed -n "s/^S $1 $2 \([^ ]*\) .*/\1/p" "$3" | sort -un | tr '\n' ' ' |
		sed 's/ $//'
}

check "bench/run.sh runs" 'sh "$KRC_REPO/bench/run.sh"'
barrier bench_done 900
if [ "$KRC_NODE" = 1 ]; then
	res=$KRC_RUN/results
	s=$KRC_RUN/bench.samples
	check_report "$s" "$res"
	for fig in connect connect_conc connect_rate connect_conc_thr \
		connect_rate_thr read_lat read_tput write_lat write_tput \
		msg_rtt first_read read_lat_dg \
		meta_lat meta_rate; do
		check "figure $fig has data and a plot script" \
			'[ -s "$res/$fig.dat" ] && [ -s "$res/$fig.gp" ]'
	done
	# Every median of every method: a positive, finite number.
	check "every median positive" '[ "$(medians_sane "$res")" = sane ]'
	for m in krcore_pooled verbs_new rdma_cm_warm; do
		check "connect: $m sampled" 'grep -q "^S connect $m " "$s"'
	done
	for p in 1 2 4 8; do
		check "connect_rate at $p processes, both methods" \
			'[ "$(grep -c "^S connect_rate [a-z_]* $p " "$s")" = 2 ]'
		check "connect_rate_thr at $p threads, both methods" \
			'[ "$(grep -c "^S connect_rate_thr [a-z_]* $p " "$s")" = 2 ]'
	done
	# The data plane: READ and WRITE, both methods, 1, 2, 4, 8 processes;
	# perftest's row beside each.
	for fig in read_lat read_tput write_lat write_tput; do
		for m in verbs krcore; do
			check "$fig: $m at 1, 2, 4 and 8 processes" \
				'[ "$(xs_of $fig $m "$s")" = "1 2 4 8" ]'
		done
	done
	for m in verbs krcore; do
		check "msg_rtt: $m round trips timed" \
			'grep -q "^S msg_rtt $m 1 [0-9]" "$s"'
	done
	check "perftest: ib_read_lat and ib_write_lat rows" \
		'grep -q "^S read_lat perftest_ib_read_lat 1 [0-9]" "$s" &&
		 grep -q "^S write_lat perftest_ib_write_lat 1 [0-9]" "$s"'
	# The MetaServer: 1000, 50000 and 75000 cards (1%, 50%, 75%).
	check "meta_lat: lookups timed at each occupancy" \
		'[ "$(xs_of meta_lat krcore_lookup "$s")" = "1 50 75" ]'
	for m in lookup_1pct lookup_50pct lookup_75pct; do
		check "meta_rate: $m at 1, 2, 4 and 8 processes" \
			'[ "$(xs_of meta_rate $m "$s")" = "1 2 4 8" ]'
	done
	check "qp_cost measured an RC and a UD QP (bytes > 0)" \
		'grep -qE "^cost rc [1-9][0-9]*$" "$KRC_RUN/qp_cost.out" &&
		 grep -qE "^cost ud [1-9][0-9]*$" "$KRC_RUN/qp_cost.out"'
	rcb=$(sed -n "s/^cost rc //p" "$KRC_RUN/qp_cost.out")
	udb=$(sed -n "s/^cost ud //p" "$KRC_RUN/qp_cost.out")
	check "the state model takes the measured costs" \
		'"$KRC_BIN/state_table" -s --rc-bytes "$rcb" --ud-bytes "$udb" --measured |
		 grep -q "RC QP $rcb B (measured), UD QP $udb B (measured)"'
	for m in krcore_datagram krcore_rc_first rdma_cm verbs; do
		check "first_read: $m sampled" 'grep -q "^S first_read $m " "$s"'
	done
	check "ratios in the JSON" 'grep -q "krcore_over_rdma_cm" "$res/results.json"'
	# make bench-publish: a section per figure, the targets' ratios.
	pub=$KRC_RUN/published
	check "bench/publish.sh writes the results page" \
		'sh "$KRC_REPO/bench/publish.sh" "$res" "$pub" >/dev/null'
	nfig=$(grep -c "^ figure [a-z0-9_]*, " "$res/summary.txt")
	check "a section per figure ($nfig), each with its table" \
		'[ "$nfig" -gt 10 ] &&
		 [ "$(grep -c "^## " "$pub/README.md")" = $((nfig + 1)) ] &&
		 [ "$(grep -c "^ method " "$pub/README.md")" = "$nfig" ]'
	check "the ratios judged against targets, by figure" \
		'grep -q "^first_read: rdma_cm_over_datagram at x=new_process: .*target >= 20x" "$pub/README.md" &&
		 grep -q "^read_lat: krcore_over_verbs at x=8: " "$pub/README.md"'
	head -n 40 "$res/summary.txt"
fi
finish
