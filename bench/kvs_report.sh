#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The report of the key-value store demo (tests/cluster/demo_kvs.sh):
# from the spike workers' lines (kvs_demo: "S first_get ...", a "T ..."
# line every 5 ms) in RUN_DIR, per method (verbs, krcore):
# - each new worker's time from the spike's start to its first GET, and
#   from its main() to its first GET (process start-up, which both
#   methods pay and TCG inflates, left out);
# - the throughput timeline of the spike's workers together, GETs per
#   second in BUCKET_MS buckets (default 50) from the spike's start;
# - when the new capacity was in use: the first bucket at 90% of the
#   plateau (the median rate of the spike's second half);
# then a one-line verdict, and krbench_report's summary, JSON and PNGs in
# RESULTS_DIR.
#
#   sh bench/kvs_report.sh RUN_DIR RESULTS_DIR
set -u
run=${1:-}
res=${2:-}
bin=${KRC_BIN:-build/bin}
bucket=${KRC_KVS_BUCKET_MS:-50}
if [ $# -ne 2 ] || [ ! -d "$run" ]; then
	echo "usage: sh bench/kvs_report.sh RUN_DIR RESULTS_DIR" >&2
	exit 2
fi
for m in verbs krcore; do
	if ! ls "$run"/kvs.spike.$m.[0-9]* >/dev/null 2>&1; then
		echo "kvs_report: no $m spike workers' output in $run" >&2
		exit 1
	fi
done
rm -rf "$res"
mkdir -p "$res" || exit 1

# One awk over both methods' files: samples for krbench_report on
# stdout, the text report on fd 3 (a file).
cat "$run"/kvs.spike.verbs.[0-9]* "$run"/kvs.spike.krcore.[0-9]* |
awk -v B="$bucket" -v text="$res/kvs_report.txt" '
# "N ms", or "never" when the rate never reached 90% of a steady one
function when(ms) {
	return ms < 0 ? "never (no steady rate)" : ms " ms"
}
function median(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--)
			a[j + 1] = a[j]
		a[j + 1] = t
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$1 == "S" && $2 == "first_get" {
	m = $3; nf[m]++; fg[m, nf[m]] = $8 / 1000
	fm[m, nf[m]] = NF >= 9 ? ($8 - $9) / 1000 : $8 / 1000
	S[m] = 1
}
$1 == "T" {
	m = $2; w = m SUBSEP $3; e = $4; g = $5
	b = int(e / (B * 1000))
	cnt[m, b] += g - (w in last ? last[w] : 0)
	last[w] = g
	if (b > maxb[m]) maxb[m] = b
	S[m] = 1
}
$1 == "S" && $2 == "done" { errs[$3] += $7 }
END {
	print "F kvs_first_get ms spike Time from the load spike to each new worker'"'"'s first GET"
	print "F kvs_first_get_main ms spike From each new worker'"'"'s main() to its first GET (process start-up left out)"
	print "F kvs_timeline per_s ms GETs per second of the spike'"'"'s new workers, from the spike'"'"'s start"
	# The timeline in steps of k bins, k the smallest that keeps it
	# within 120 points (krbench_report takes 128 x values a figure;
	# a slow node, the debug kernel, makes a long spike).
	mb = 0
	for (m in S)
		if (maxb[m] > mb)
			mb = maxb[m]
	k = int((mb + 119) / 120)
	if (k < 1)
		k = 1
	for (m in S) {
		for (i = 1; i <= nf[m]; i++) {
			printf "S kvs_first_get %s new_worker %.3f\n", m, fg[m, i]
			v[i] = fg[m, i]
		}
		fgmed[m] = nf[m] ? median(v, nf[m]) : 0
		split("", v)
		for (i = 1; i <= nf[m]; i++) {
			printf "S kvs_first_get_main %s new_worker %.3f\n", m, fm[m, i]
			v[i] = fm[m, i]
		}
		fmmed[m] = nf[m] ? median(v, nf[m]) : 0
		split("", v)
		# the plateau: median rate of the second half of the spike
		n = 0
		for (b = int(maxb[m] / 2); b < maxb[m]; b++)
			v[++n] = cnt[m, b] * 1000 / B
		plat[m] = n ? median(v, n) : 0
		split("", v)
		full[m] = -1
		for (b = 0; b < maxb[m]; b += k) {
			sum = 0
			nb = 0
			for (j = b; j < b + k && j < maxb[m]; j++) {
				sum += cnt[m, j]
				nb++
			}
			printf "S kvs_timeline %s %d %.1f\n", m, b * B,
				sum * 1000 / (B * nb)
		}
		for (b = 0; b < maxb[m]; b++) {
			r = cnt[m, b] * 1000 / B
			rate[m, b] = r
			if (full[m] < 0 && plat[m] > 0 && r >= 0.9 * plat[m])
				full[m] = b * B
		}
	}
	print "R kvs_first_get verbs_over_krcore verbs krcore >= 100x"
	print "R kvs_first_get_main verbs_over_krcore verbs krcore >= 100x"
	print "load spike: " nf["verbs"] " verbs workers, then " nf["krcore"] " krcore workers, on a node they never ran on" >text
	printf "%-8s %14s %16s %14s %16s %8s\n", "method", "first GET (ms)", "from main() (ms)", "plateau GET/s", "capacity in use", "errors" >text
	for (k = 1; k <= 2; k++) {
		m = k == 1 ? "verbs" : "krcore"
		printf "%-8s %14.1f %16.1f %14.0f %13.0f ms %8d\n", m, fgmed[m], fmmed[m], plat[m], full[m], errs[m] >text
	}
	printf "\ntimeline, GET/s of the new workers (every %d ms; # = krcore, * = verbs)\n", 2 * B >text
	top = plat["verbs"] > plat["krcore"] ? plat["verbs"] : plat["krcore"]
	mb = maxb["verbs"] > maxb["krcore"] ? maxb["verbs"] : maxb["krcore"]
	for (b = 0; b < mb && b < 80; b += 2) {
		rv = rate["verbs", b]; rk = rate["krcore", b]
		bv = top > 0 ? int(30 * rv / top + 0.5) : 0
		bk = top > 0 ? int(30 * rk / top + 0.5) : 0
		if (bv > 40) bv = 40
		if (bk > 40) bk = 40
		sv = ""; sk = ""
		for (i = 0; i < bv; i++) sv = sv "*"
		for (i = 0; i < bk; i++) sk = sk "#"
		printf "%6d ms  verbs %7.0f %-40s krcore %7.0f %s\n", b * B, rv, sv, rk, sk >text
	}
	rmain = fmmed["krcore"] > 0 ? fmmed["verbs"] / fmmed["krcore"] : 0
	if (fgmed["krcore"] > 0)
		printf "\nverdict: new krcore workers served their first GET %.0fx sooner than new verbs workers (median %.1f ms vs %.1f ms from launch; %.1fx from main(): %.1f ms vs %.1f ms); the spike'"'"'s capacity was in use after %s with krcore, %s with verbs\n", fgmed["verbs"] / fgmed["krcore"], fgmed["krcore"], fgmed["verbs"], rmain, fmmed["krcore"], fmmed["verbs"], when(full["krcore"]), when(full["verbs"]) >text
}' >"$res/samples.txt" || exit 1
"$bin/krbench_report" -q "$res" "$res/samples.txt" >/dev/null || exit 1
sh bench/plot.sh "$res" >/dev/null || exit 1
# The spike node's counters after both spikes: the krcore workers' paths.
[ -s "$run/kvs.spike.paths" ] &&
	printf "the spike node's paths (krctl counters): %s\n" \
		"$(cat "$run/kvs.spike.paths")" >>"$res/kvs_report.txt"
cat "$res/kvs_report.txt"
echo "kvs_report: $res (kvs_report.txt, summary.txt, results.json, *.png)"
