#!/bin/sh
# nodes: 2
# timeout: 600
# make demo-serverless, small: demo_serverless.sh with a 1 MiB object and
# 3 invocations per method, then node1's samples through krbench_report.
# The numbers are not asserted, only that every function fetched the
# object intact (the demo checks each one's checksum) and that the times
# and the ratio are there and positive.
. "$KRC_REPO/tests/cluster/lib.sh"

export KRC_SL_MIB=1 KRC_SL_N=3
check "the demo runs" 'sh "$KRC_REPO/tests/cluster/demo_serverless.sh"'
barrier demo_done 600
if [ "$KRC_NODE" = 1 ]; then
	s=$KRC_RUN/bench.samples
	res=$KRC_RUN/results
	for m in krcore verbs; do
		check "$m: 3 invocations timed, positive" \
			'[ "$(awk -v m=$m "\$1 == \"S\" && \$3 == m && \$5 > 0" "$s" | wc -l)" = 3 ]'
	done
	check "the node's first invocation timed" \
		'grep -qE "^S serverless krcore_first invocation [0-9.]+$" "$s"'
	check "the verdict printed" \
		'grep -qE "^verdict: a krcore function is done [0-9.]+x sooner" "$KRC_RUN/serverless.out"'
	check_report "$s" "$res"
	check "the ratio in the JSON" \
		'grep -q verbs_over_krcore "$res/results.json"'
fi
finish
