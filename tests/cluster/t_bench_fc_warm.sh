#!/bin/sh
# nodes: 3
# timeout: 900
# make bench's first contact as it runs there, on three nodes, small: one
# sample of each path right after the reloads and one "code warm" (node2
# contacts node0 and node1 contacts node2 before node1's first contact
# with node0), and rdma_cm's. The numbers are not asserted: that each
# sample took the path its label names and READ the server's value
# (first_contact checks both and fails otherwise), that the warm-up
# contacts were made, and that the report and bench.samples carry the
# warm rows and ratios.
. "$KRC_REPO/tests/cluster/lib.sh"

export KRC_BENCH_FC_SAMPLES=1 KRC_BENCH_FC_PARTS=3 KRC_BENCH_FC_READS=100
export KRC_BENCH_FC_PATHS="dg3 rc dg3w rcw cm"

check "bench/first_contact.sh runs" 'sh "$KRC_REPO/bench/first_contact.sh"'
if [ "$KRC_NODE" = 1 ]; then
	out=$KRC_RUN/first_contact.out
	s=$KRC_RUN/bench.samples
	cat "$out"
	check "four warm-up contacts, two per warm sample" \
		'[ "$(grep -c "^dg3 .* lookup+datagram$" "$KRC_RUN/fc.warmup")" = 2 ] &&
		 [ "$(grep -c "^rc .* lookup+handshake$" "$KRC_RUN/fc.warmup")" = 2 ]'
	check "the warm RC sample's own kernel parts" \
		'[ "$(grep -c "^rcw_parts " "$KRC_RUN/first_contact.samples")" = 1 ]'
	check "the report has both warm rows" \
		'grep -q "^ krcore datagram, code warm  *1 " "$out" &&
		 grep -q "^ krcore RC first contact, code warm  *1 " "$out"'
	check "... the warm kernel parts and the warm ratios" \
		'grep -q "the same with krcore.s code warm" "$out" &&
		 grep -A2 "^ with krcore.s code warm:" "$out" |
		 grep -q "rdma_cm connect, new process / datagram first READ: *[0-9.]*x  (target >= 20x)"'
	for m in krcore_datagram krcore_rc_first krcore_datagram_warm \
		krcore_rc_first_warm rdma_cm; do
		check "first_read: $m sampled" \
			'grep -q "^S first_read $m new_process [0-9]" "$s"'
	done
	check "the warm ratios for the report" \
		'grep -q "^R first_read rdma_cm_over_datagram_warm rdma_cm krcore_datagram_warm >= 20x$" "$s" &&
		 grep -q "^R first_read rc_over_datagram_warm krcore_rc_first_warm krcore_datagram_warm >= 5x$" "$s"'
fi
finish
