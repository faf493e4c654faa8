#!/bin/sh
# nodes: 2
# timeout: 600
# Priority classes on a shared connection (data/prio.c, KRCORE_IOC_QPRIO).
# node1 has one pooled RC connection to node0 (pool_size=1), so every VQ
# below shares it. First the bounds of the high class: unknown classes,
# prio_high_vqs per process, a place given back by a VQ set back or
# closed, and a high VQ's requests of at most prio_high_bytes (one more
# byte is refused, TOO_LONG; the same READ on a normal VQ completes).
# Then a process keeps 16 VQs full of 1 MiB READs on that connection
# (up to its share, proc_max_bytes: 4 MiB in flight), and a second
# process times 8-byte READs on it: as a normal VQ, no connection yields
# (prio_yields unchanged) and each READ waits behind the backlog; as a
# high VQ, the connection yields (the flood's qpushes are held back) and
# the median READ is several times faster; once the high VQ is gone and
# the window over, normal READs no longer make anything yield. The flood
# keeps completing READs all along, none fails.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
# On the debug kernel (KASAN under TCG) a flood of 4 MiB in flight at
# well under 1 MiB/s starved the node (its MetaServer keepalive, the
# watchdog): there the flood is a quarter (READs of 256 KiB, a process's
# share 1 MiB) and so is the yield (64 KiB), the same proportion.
KB=1024 DBG=
case "$(uname -r)" in
*krcdbg*)
	KB=256
	DBG="proc_max_bytes=1048576 prio_yield_bytes=65536 wr_timeout_ms=30000"
	;;
esac
INFO=$KRC_RUN/prio.info
P=$KRC_TBIN/prio_probe

# probe CLASS TAG: 12 timed READs; sets MED (median, us).
probe() {
	"$P" lat "$META" "$INFO" "$1" 12 >"$KRC_RUN/probe.$2" 2>&1
	rc=$?
	cat "$KRC_RUN/probe.$2"
	check "$2: 12 READs of the $1 VQ complete with their data" \
		"[ $rc = 0 ] && grep -q 'class=$1 n=12 ok=12 ' $KRC_RUN/probe.$2"
	MED=$(sed -n 's/.*median_us=\([0-9]*\).*/\1/p' "$KRC_RUN/probe.$2")
	MED=${MED:-0}
}

greedy_done() {
	sed -n 's/^fair_greedy: t=[0-9]* done=\([0-9]*\).*/\1/p' \
		"$KRC_RUN/greedy.out" | tail -n 1
}

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1'
	"$KRC_TBIN/dp_serve" "$INFO" &
	barrier up
	barrier done 500
	: >"$INFO.stop"
else
	barrier up
	check "member loads, one shared RC connection, 3 high VQs per process" \
		"krc_load meta_server=$META pool_size=1 dg_policy=0 prio_high_vqs=3 prio_high_bytes=65536 $DBG"
	"$P" limits "$META" "$INFO" 3 65536 >"$KRC_RUN/limits.out" 2>&1
	rc=$?
	cat "$KRC_RUN/limits.out"
	check "the high class's bounds hold (prio_probe limits: 13 checks)" \
		"[ $rc = 0 ] && ! grep -q FAIL $KRC_RUN/limits.out && [ \$(grep -c '^prio_probe: ok: ' $KRC_RUN/limits.out) = 13 ]"
	check "counted: 5 VQs set high, 2 set back" \
		'eq "$(counter prio_high_vqs)" 5 && eq "$(counter prio_normal_vqs)" 2'

	"$KRC_TBIN/fair_greedy" "$META" "$INFO" 16 "$KB" 300 >"$KRC_RUN/greedy.out" 2>&1 &
	g=$!
	check "the flood is under way" \
		"wait_for 60 'grep -q \"t=3 \" $KRC_RUN/greedy.out'"
	y0=$(counter prio_yields)
	probe normal normal
	normal=$MED
	check "normal: nothing yields" 'eq "$(counter prio_yields)" "$y0"'
	d0=$(greedy_done)
	probe high high
	high=$MED
	d1=$(greedy_done)
	y1=$(counter prio_yields)
	log "median 8-byte READ under the flood: normal ${normal} us, high ${high} us"
	check "high: the connection yielded to it (prio_yields grew)" \
		'[ "$y1" -gt "$y0" ]'
	check "high: its median READ at least 3x faster than normal's (${high} vs ${normal} us)" \
		'[ "$high" -gt 0 ] && [ $((high * 3)) -lt "$normal" ]'
	check "the flood went on meanwhile (READs done: $d0 -> $d1)" \
		'[ "${d1:-0}" -gt "${d0:-0}" ]'
	sleep 1
	y2=$(counter prio_yields)
	probe normal after
	check "after: the window is over, nothing yields" \
		'eq "$(counter prio_yields)" "$y2"'
	check "after: normal READs wait behind the backlog again (${MED} us)" \
		'[ $((high * 3)) -lt "$MED" ]'
	kill -TERM $g
	wait $g
	rc=$?
	tail -n 1 "$KRC_RUN/greedy.out"
	check "the flood's READs all succeeded" \
		'[ $rc = 0 ] && grep -q "^fair_greedy: done=[1-9][0-9]* failed=0 " $KRC_RUN/greedy.out'
	check "no connection failed, no recovery" \
		'eq "$(counter recoveries)" 0 && eq "$(counter conn_errors)" 0'
	check "every VQ freed" \
		'wait_for 60 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\""'
	barrier done 500
fi
check "module unloads" 'sleep 1; krc_unload'
check "kernel log clean" dmesg_clean
finish
