#!/bin/sh
# nodes: 2
# UCX programs written elsewhere, unmodified, over krcore (docs/ucx.md):
# Debian's ucx_info lists the krcore transport with its capabilities (and
# does not without the module); Debian's ucx_perftest runs its UCT-level
# tests (active messages short and bcopy, put short/bcopy/zcopy, get
# bcopy/zcopy, atomic add, fetch-add, compare-and-swap, and swap and a
# 32-bit fetch-add as compare-and-swap loops) and its UCP-level
# tests (tag, stream, put, get, atomics, AM, eager and
# rendezvous sizes)
# between the two nodes with UCX restricted to krcore (and self): every
# run completes all its iterations on both sides, and UCP says it chose
# krcore. ucx_check (tests/progs) checks the data UCP moves that way:
# tags, puts and gets, atomics and AMs of 8 B to 1 MiB, byte by byte.
. "$KRC_REPO/tests/cluster/lib.sh"

if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1'
	barrier meta
else
	barrier meta
	check "module loads" "krc_load meta_server=$(node_ip 0)"
fi
# UCX's shared-memory transports want /dev/shm (the nodes have none)
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm

MOD="$KRC_REPO/build/ucx/libuct_krcore.so"
export UCX_TLS=krcore,self UCX_LOG_LEVEL=warn

ucx_info -d >"$KRC_RUN/info.plain.$KRC_NODE" 2>&1
check "Debian's UCX alone has no krcore transport" \
	'! grep -q "Transport: krcore" "$KRC_RUN/info.plain.$KRC_NODE"'
LD_PRELOAD=$MOD ucx_info -d >"$KRC_RUN/info.$KRC_NODE" 2>&1
sed -n '/Transport: krcore/,/error handling/p' "$KRC_RUN/info.$KRC_NODE"
for cap in "Transport: krcore" "connection: to iface" \
	"am_short: <= 4080" "am_bcopy: <= 4080" "put_zcopy: <= 1G, up to 4 iov" \
	"get_zcopy: <= 1G, up to 4 iov" "atomic_add: 32, 64 bit" \
	"atomic_fadd: 32, 64 bit" "atomic_fxor: 32, 64 bit" \
	"atomic_swap: 32, 64 bit" \
	"atomic_cswap: 32, 64 bit" "device address: 16 bytes" \
	"iface address: 2 bytes" "error handling: peer failure, ep_check"; do
	check "ucx_info -d: $cap" \
		'grep -q "^# *$cap\$" "$KRC_RUN/info.$KRC_NODE"'
done

# perf NAME ARGS...: ucx_perftest server on node1, client on node0; both
# must exit 0 and the client report all $N iterations.
N=100
perf() {
	pf=$1
	shift
	if [ "$KRC_NODE" = 1 ]; then
		LD_PRELOAD=$MOD timeout $((120 * KRC_SLOW)) ucx_perftest "$@" -n $N -w 5 \
			>"$KRC_RUN/srv.$pf" 2>&1 &
		pf_pid=$!
		barrier "srv.$pf"
		wait "$pf_pid"
		echo $? >"$KRC_RUN/srv.$pf.rc"
		barrier "end.$pf" $((150 * KRC_SLOW))
	else
		barrier "srv.$pf"
		# until the server listens: a refused try costs little
		pf_rc=1
		pf_try=0
		while [ $pf_try -lt 50 ]; do
			pf_try=$((pf_try + 1))
			LD_PRELOAD=$MOD timeout $((120 * KRC_SLOW)) ucx_perftest "$(node_ip 1)" \
				"$@" -n $N -w 5 -f >"$KRC_RUN/cli.$pf" 2>&1
			pf_rc=$?
			grep -q "Connection refused" "$KRC_RUN/cli.$pf" || break
			sleep 0.2
		done
		barrier "end.$pf" $((150 * KRC_SLOW))
		pf_line=$(grep -E "^ +$N +[0-9]" "$KRC_RUN/cli.$pf" | tail -n 1)
		echo "$pf: $pf_line"
		check "ucx_perftest $pf: both sides exit 0" \
			'[ $pf_rc = 0 ] && eq "$(cat "$KRC_RUN/srv.$pf.rc")" 0'
		check "ucx_perftest $pf: $N iterations measured" '[ -n "$pf_line" ]'
	fi
}

# UCT level: -x krcore -d krcore
perf am_lat_short -t am_lat -x krcore -d krcore -D short
perf am_lat_bcopy -t am_lat -x krcore -d krcore -D bcopy -s 4000
perf am_bw_bcopy -t am_bw -x krcore -d krcore -D bcopy -s 1024
perf put_lat_short -t put_lat -x krcore -d krcore -D short
perf put_bw_bcopy -t put_bw -x krcore -d krcore -D bcopy -s 4000
perf put_bw_zcopy -t put_bw -x krcore -d krcore -D zcopy -s 65536
perf get_bcopy -t get -x krcore -d krcore -D bcopy -s 4000
perf get_zcopy -t get -x krcore -d krcore -D zcopy -s 65536
perf add_lat -t add_lat -x krcore -d krcore
perf fadd -t fadd -x krcore -d krcore
perf cswap -t cswap -x krcore -d krcore
perf swap -t swap -x krcore -d krcore
perf fadd32 -t fadd -x krcore -d krcore -s 4

# UCP level: UCX chooses among krcore and self (UCX_TLS)
perf tag_lat -t tag_lat
# rendezvous of 1,000,000 bytes: a buffer of exactly 256 pages meets
# Linux 6.1 rxe's rxe_mr_copy bug (docs/testing.md), which on the debug
# kernel stalls the transfer
perf tag_bw_rndv -t tag_bw -s 1000000
perf tag_sync_lat -t tag_sync_lat
perf stream_lat -t stream_lat
perf stream_bw -t stream_bw -s 65536
perf ucp_put_lat -t ucp_put_lat
perf ucp_put_bw -t ucp_put_bw -s 65536
perf ucp_get -t ucp_get -s 65536
perf ucp_add -t ucp_add
perf ucp_fadd -t ucp_fadd
perf ucp_cswap -t ucp_cswap
perf ucp_swap -t ucp_swap
perf ucp_am_lat -t ucp_am_lat
perf ucp_am_bw -t ucp_am_bw -s 100000

if [ "$KRC_NODE" = 0 ]; then
	# UCP's own word that it used krcore between the nodes
	LD_PRELOAD=$MOD UCX_LOG_LEVEL=info timeout $((120 * KRC_SLOW)) ucx_perftest \
		-t tag_lat -n 10 -w 1 -l >/dev/null 2>&1
	barrier srv.cfg
	sleep 1
	LD_PRELOAD=$MOD UCX_LOG_LEVEL=info timeout $((120 * KRC_SLOW)) ucx_perftest \
		"$(node_ip 1)" -t tag_lat -n 10 -w 1 -f >"$KRC_RUN/cli.cfg" 2>&1
	grep "ep_cfg" "$KRC_RUN/cli.cfg"
	check "UCP chose krcore for the peer (ep_cfg tag(krcore/krcore))" \
		'grep -q "ep_cfg\[[0-9]*\]: tag(krcore/krcore)" "$KRC_RUN/cli.cfg"'
	barrier end.cfg
else
	LD_PRELOAD=$MOD UCX_LOG_LEVEL=info timeout $((120 * KRC_SLOW)) ucx_perftest \
		-t tag_lat -n 10 -w 1 >"$KRC_RUN/srv.cfg" 2>&1 &
	barrier srv.cfg
	wait
	barrier end.cfg
fi

# The data, checked by a UCP program of ours over the same transport:
# node1 serves, node0 calls; they meet in $KRC_RUN/ucxcheck.
D="$KRC_RUN/ucxcheck"
[ "$KRC_NODE" = 1 ] && mkdir -p "$D"
barrier check.dir
role=$([ "$KRC_NODE" = 1 ] && echo server || echo client)
LD_PRELOAD=$MOD timeout $((180 * KRC_SLOW)) "$KRC_TBIN/ucx_check" $role "$D" \
	>"$KRC_RUN/check.$role" 2>&1
ck_rc=$?
cat "$KRC_RUN/check.$role"
check "ucx_check $role: every check passed (exit 0)" '[ $ck_rc = 0 ]'
check "ucx_check $role: no FAIL line" '! grep -q "^FAIL: " "$KRC_RUN/check.$role"'
check "ucx_check $role: its summary says 0 failed" \
	'grep -q "^ucx_check: $role [0-9]* checks, 0 failed$" "$KRC_RUN/check.$role"'
if [ "$KRC_NODE" = 0 ]; then
	# UCP's own lanes: atomics on krcore's device lane, not emulated
	check "UCP's atomics go to krcore's device atomics (an amo lane on krcore)" \
		'grep -qE "lane\[[0-9]+\]: .*krcore/krcore.* amo#0" "$KRC_RUN/check.client"'
fi

barrier done
check "module unloads (every VQ of UCX closed)" krc_unload
check "kernel log clean" dmesg_clean
finish
