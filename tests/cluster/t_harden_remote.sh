#!/bin/sh
# nodes: 2
# timeout: 600
# Hostile or unlucky processes against a shared connection (issue 7),
# node1's processes against a buffer served by node0:
#   a process that keeps breaking shared connections is throttled;
#   one VQ fills at most its share of a shared send queue;
#   bytes in flight are capped per VQ;
#   an unreadable request array mid-batch: EFAULT, with how many went;
#   a deep queue of large READs is progress, not a dead peer;
#   VQs closing while recovery moves them (recovery ran: each break
#   counted, recovered; open VQs moved and working, none disconnected);
#   node0 vanishes (no goodbye): a probe times out without failing the
#   shared connection; a deregistration waits for the READ in flight.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/srv.info
H=$KRC_TBIN/harden
D=$KRC_RUN/hr
mkdir -p "$D"

# The RC handshake path (dg_policy=0), whatever the default: each bad
# rkey must break a shared RC connection, the probe needs one
# (docs/dg-policy-audit.md).
if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1 dg_policy=0 fault_goodbye_off=1'
	"$KRC_TBIN/dp_serve" "$INFO" &
	srv=$!
	barrier up
	wait_for 300 "[ -e \"$D/probe.ready\" ]"
	# Vanish without a word: QPs gone, nobody answers.
	touch "$INFO.stop"
	wait "$srv"
	check "module unloads without goodbye" krc_unload
	touch "$D/probe.gone"
	barrier done 400
	check "kernel log clean" dmesg_clean
	finish
fi

barrier up
# The watchdog's bound: 500 ms without a completion; on the debug kernel
# one 256 KiB READ of the deep queue below was seen to take longer.
wto=500
case "$(uname -r)" in *krcdbg*) wto=2000 ;; esac
check "module loads" "krc_load meta_server=$META dg_policy=0 wr_timeout_ms=$wto break_limit=3"
check "3 broken connections, then EBUSY/THROTTLED" '"$H" throttle "$META" "$INFO"'
check "each break counted" 'eq "$(counter conn_breaks)" 3 && eq "$(counter proc_throttled)" 1'
param break_limit 0

param vq_qp_share 10
check "one VQ: 25 of 32 READs (10% of 256), EAGAIN" '"$H" share "$META" "$INFO" 25'
param vq_qp_share 50
param vq_max_bytes 1048576
check "bytes in flight capped per VQ" '"$H" bytes "$META" "$INFO"'
param vq_max_bytes 67108864
check "EFAULT mid-batch says how many were posted" '"$H" efault "$META" "$INFO"'

rec=$(counter recoveries)
to=$(counter wr_timeouts)
# 24 MiB in flight: above a process's default share of 4 MiB.
param proc_max_bytes 67108864
check "96 READs of 256 KiB in flight for longer than wr_timeout_ms" \
	'"$H" deep "$META" "$INFO" 96 256'
check "no watchdog timeout, no recovery during them" \
	'eq "$(counter wr_timeouts)" "$to" && eq "$(counter recoveries)" "$rec"'
param proc_max_bytes 4194304

brk=$(counter conn_breaks)
rec=$(counter recoveries)
cer=$(counter conn_errors)
dis=$(counter vq_disconnected)
out=$("$H" churn "$META" "$INFO" 20 2>&1)
rc=$?
echo "$out"
check "20 s of VQs closing while recovery moves them" '[ $rc -eq 0 ]'
# harden churn: "N breaks" (bad READs failed REMOTE_ACCESS, each the first
# error of its connection) and "M VQs moved by recovery while open" (some
# kept open, each to READ over its connection once the churn is over).
breaks=$(echo "$out" | sed -n 's/^harden: churn: .* VQs connected, \([0-9]*\) breaks, .*/\1/p')
moved=$(echo "$out" | sed -n 's/^harden: churn: .* \([0-9]*\) VQs moved by recovery while open.*/\1/p')
d_brk=$(($(counter conn_breaks) - brk))
d_rec=$(($(counter recoveries) - rec))
d_cer=$(($(counter conn_errors) - cer))
d_dis=$(($(counter vq_disconnected) - dis))
log "churn: $breaks breaks, $moved VQs moved; conn_breaks +$d_brk recoveries +$d_rec conn_errors +$d_cer vq_disconnected +$d_dis"
check "churn: the module counted every break (conn_breaks = $breaks), at least one" \
	'ge "$breaks" 1 && eq "$d_brk" "$breaks"'
check "churn: each broken connection failed and was recovered" \
	'ge "$d_cer" "$breaks" && ge "$d_rec" "$breaks"'
check "churn: recovery moved open VQs ($moved), none left disconnected" \
	'ge "$moved" 1 && eq "$d_dis" 0'
check "every VQ closed after the churn" \
	'wait_for 30 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\""'

param wr_timeout_ms 60000
param mr_drain_ms 1000
param hs_retries 2
param connect_timeout_ms 3000
"$H" drain "$META" "$INFO" "$D" >"$KRC_RUN/drain.out" 2>&1 &
dpid=$!
wait_for 60 "[ -e \"$D/drain.ready\" ]"
rec=$(counter recoveries)
check "a probe of a vanished peer times out" '"$H" probe "$META" "$D"'
check "... and fails no shared connection" 'eq "$(counter recoveries)" "$rec"'
touch "$D/drain.gone"
check "deregistration waits for the READ in flight to complete" "wait $dpid"
cat "$KRC_RUN/drain.out"
check "the registration was drained by failing its connection" \
	'ge "$(counter mr_drain_forced)" 1 && grep -q "dereg returned after [0-9]\{4\} ms" "$KRC_RUN/drain.out"'
barrier done 400
check "every VQ closed" 'wait_for 30 "eq \"\$(counter vq_created)\" \"\$(counter vq_destroyed)\""'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
