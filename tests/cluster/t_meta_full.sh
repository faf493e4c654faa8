#!/bin/sh
# nodes: 2
# timeout: 480
# A MetaServer table holding 100,000 cards in the kernel (the default
# 131,072-slot table): the host registers 100,000 synthetic cards through
# its test-only hook (test_meta_fill), then the member node1 looks up 2,000
# random ones without caching. A lookup is one READ in the common case
# (the unit test of the table measured 94.9%; at least 90% is asserted),
# never more than the table's bound (33), every card found is the one registered there, the
# READ counters agree with what each lookup reports, and addresses just
# past the filled range are unknown (ENXIO).
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
FILL=100000
LOOKUPS=2000
FILLP=/sys/module/krcore/parameters/test_meta_fill

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads (default table)" 'krc_load meta_host=1'
	check "a table of 131072 slots" \
		'krctl status | grep -q "table 131072 slots, hosted here: 1 cards"'
	check "the fill hook is write-only, root only (0200)" \
		'[ "$(stat -c %a $FILLP)" = 200 ]'
	check "the fill hook refuses more than 2^20 cards" \
		'! echo 1048577 2>/dev/null >$FILLP'
	reg0=$(counter meta_registered)
	start=$(date +%s)
	check "$FILL synthetic cards registered" "echo $FILL >$FILLP"
	log "filled in $(($(date +%s) - start)) s"
	check "the host counts $((FILL + 1)) cards" \
		'krctl status | grep -q "hosted here: $((FILL + 1)) cards"'
	check "every synthetic card counted as a registration" \
		'eq "$(($(counter meta_registered) - reg0))" $FILL'
	check "the host looks a synthetic card up itself" \
		'eq "$(kv node_id "$(krctl lookup 10.201.134.159 -f)")" $(((10 << 24) + (201 << 16) + (134 << 8) + 159))'
	barrier filled
	barrier member_up
	check "the member registered too: $((FILL + 2)) cards" \
		'wait_for 20 "krctl status | grep -q \"hosted here: $((FILL + 2)) cards\""'
	barrier looked_up
	barrier member_gone
	check "MetaServer unloads" krc_unload
else
	barrier filled
	check "member loads" "krc_load meta_server=$META"
	check "the fill hook is refused on a member (ENODEV)" \
		'! echo 10 2>/dev/null >$FILLP'
	barrier member_up
	r0=$(counter meta_reads)
	h0=$(counter meta_hits)
	m0=$(counter meta_misses)
	t0=$(counter meta_torn)
	out=$("$KRC_TBIN/meta_lookups" $FILL $LOOKUPS "$(date +%s)")
	rc=$?
	echo "$out"
	check "the lookup program ran" '[ $rc -eq 0 ]'
	check "every lookup of a filled entry succeeded" 'eq "$(kv errors "$out")" 0'
	check "every card found is the one registered at its address" \
		'eq "$(kv wrong "$out")" 0'
	one=$(kv one_read "$out")
	log "one READ: $one of $LOOKUPS lookups, two: $(kv two_reads "$out"), more: $(kv more_reads "$out"), at most $(kv max_reads "$out")"
	check "one READ per lookup in the common case (>= 90%)" \
		'ge "$((one * 100))" "$((LOOKUPS * 90))"'
	# The table's bound (common/meta_table.h): no card lies further than
	# KRC_MT_MAX_PROBE slots past its home, a READ covers KRC_MT_WINDOW
	# slots: at most MAX_PROBE / WINDOW + 1 READs (33) without a torn one.
	# (A bound of 12 seen in earlier runs was luck: one CI run met 13.)
	mt=$KRC_REPO/common/meta_table.h
	probe=$(sed -n 's/^#define KRC_MT_SPILL[[:space:]]*\([0-9]*\).*/\1/p' "$mt")
	win=$(sed -n 's/^#define KRC_MT_WINDOW[[:space:]]*\([0-9]*\).*/\1/p' "$mt")
	bound=$((probe / win + 1))
	check "no lookup took more than the table's bound ($bound READs)" \
		'[ -n "$probe" ] && [ -n "$win" ] && ge "$bound" "$(kv max_reads "$out")"'
	check "READs counted by the module = READs reported by the lookups" \
		'eq "$(($(counter meta_reads) - r0))" "$(($(kv reads "$out") + $(kv miss_reads "$out")))"'
	check "READs per lookup on average below 1.2" \
		'ge "$((LOOKUPS * 12))" "$(($(kv reads "$out") * 10))"'
	check "the module counted $LOOKUPS hits" \
		'eq "$(($(counter meta_hits) - h0))" $LOOKUPS'
	check "addresses past the filled range are unknown (ENXIO)" \
		'eq "$(kv misses "$out")" $((LOOKUPS / 10)) && eq "$(kv miss_errors "$out")" 0'
	check "the module counted them as misses" \
		'eq "$(($(counter meta_misses) - m0))" $((LOOKUPS / 10))'
	check "no torn READs (the table was not being written)" \
		'eq "$(($(counter meta_torn) - t0))" 0'
	barrier looked_up
	check "member unloads" krc_unload
	barrier member_gone
fi
check "kernel log clean" dmesg_clean
finish
