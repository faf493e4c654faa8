#!/bin/sh
# nodes: 3
# timeout: 900
# make demo, small: the elastic key-value store demo (demo_kvs.sh) with
# 200 keys and a spike of 2 verbs then 2 krcore workers for 1 s, then
# its report (bench/kvs_report.sh) on node2. The numbers are not
# asserted, only that the report is there and sane: every worker served
# GETs with no error, first GETs positive and from main() no later than
# from launch, a timeline for both methods, the verdict, the figures.
. "$KRC_REPO/tests/cluster/lib.sh"

export KRC_KVS_KEYS=200 KRC_KVS_WORKERS=2 KRC_KVS_SPIKE_SECS=1
check "the demo runs" 'sh "$KRC_REPO/tests/cluster/demo_kvs.sh"'
barrier demo_done 900
if [ "$KRC_NODE" = 2 ]; then
	res=$KRC_RUN/results
	check "the report is written" \
		'KRC_BIN="$KRC_REPO/build/bin" sh "$KRC_REPO/bench/kvs_report.sh" "$KRC_RUN" "$res" >"$KRC_RUN/report.out" 2>&1'
	cat "$KRC_RUN/report.out"
	txt=$res/kvs_report.txt
	s=$res/samples.txt
	for m in verbs krcore; do
		check "$m: 2 workers' first GETs, positive" \
			'[ "$(awk -v m=$m '"'"'$2 == "kvs_first_get" && $3 == m && $5 > 0'"'"' "$s" | wc -l)" = 2 ]'
		check "$m: from main() positive and no later than from launch" \
			'[ "$(awk -v m=$m '"'"'$2 == "kvs_first_get" && $3 == m { l[++a] = $5 }
			 $2 == "kvs_first_get_main" && $3 == m { f[++b] = $5 }
			 END { ok = a == 2 && b == 2; for (i = 1; i <= b; i++) if (!(f[i] > 0 && f[i] <= l[i])) ok = 0; print ok }'"'"' "$s")" = 1 ]'
		check "$m: a timeline with GETs in it" \
			'awk -v m=$m '"'"'$2 == "kvs_timeline" && $3 == m && $5 > 0 { n++ } END { exit !(n > 0) }'"'"' "$s"'
		check "$m: no GET error" \
			'awk -v m=$m '"'"'$1 == m { exit !($NF == 0) }'"'"' "$txt"'
	done
	check "the verdict" 'grep -q "^verdict: new krcore workers served their first GET" "$txt"'
	# Two krcore workers, each a first contact of this node's kernel with
	# the memory node: each connected somehow, on the path the report shows.
	check "the krcore workers' paths in the report" \
		'grep "^the spike node'"'"'s paths (krctl counters): " "$txt" |
		 awk '"'"'{ for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) v[kv[1]] = kv[2] }
		 END { exit !(v["qconnect_datagram"] + v["qconnect_handshake"] + v["qconnect_pooled"] == 2 && v["wr_posted"] > 0) }'"'"''
	check "no malformed or dropped sample line" \
		'grep -q " 0 malformed, 0 dropped" "$res/summary.txt"'
	check "the figures in the JSON" \
		'grep -q kvs_first_get_main "$res/results.json" && grep -q kvs_timeline "$res/results.json"'
fi
finish
