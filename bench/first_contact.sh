#!/bin/sh
# First contact (issue 10), on two nodes: node0 serves, node1 measures a
# brand-new process's open to its first 8 B READ on a node it never
# contacted: krcore's datagram path, krcore's RC first contact, librdmacm,
# user-space verbs; the pieces of the RC first contact's protocol minimum;
# the synchronous READ latency of a VQ on datagrams vs on RC. "Never
# contacted": before every krcore sample node0 reloads krcore.ko (its
# krcore process too), then node1 does. KRC_BENCH_FC_SERVER_RELOAD=0
# reloads node1 only, so node0 keeps state for node1's old incarnation
# (its responder re-addresses to the new control QP: dg_readdressed).
# With a third node the paths dg3w and rcw are measured too, "code warm":
# after the reloads node2 contacts node0 and node1 contacts node2 (each
# over the same path), then node1 measures its first contact with node0
# as before. Neither of the pair knows the other, but krcore's code has
# run once on both: under TCG, code run for the first time after a
# module load is translated first (milliseconds over a first contact),
# which a real CPU does not do; rdma_cm's and verbs' code (modules never
# reloaded, libraries in the page cache) is warm in every sample.
# make bench runs it alone on three nodes:
#   tools/krcluster -n 3 -t 1500 -p -- sh bench/first_contact.sh
# and bench/run.sh on two (KRC_BENCH_FC=0 leaves it out there).
# KRC_BENCH_FC_SAMPLES (10) samples per path, KRC_BENCH_FC_PATHS
# ("dg3 dg1 rc cm verbs", then "dg3w rcw" with a third node) the paths,
# KRC_BENCH_FC_PARTS (50) samples of
# each protocol piece, KRC_BENCH_FC_READS (2000) READs per path,
# KRC_BENCH_FC_TRACE=1 logs node0's reloads and both nodes' dg_ counters.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
DIR=$KRC_RUN/bench
# node2's registered value, for node1's warm-up contact
DIR2=$KRC_RUN/bench2
FC=$KRC_REPO/build/bin/first_contact
PORT=7473
SAMPLES=${KRC_BENCH_FC_SAMPLES:-10}
PATHS="dg3 dg1 rc cm verbs"
[ "$KRC_NODES" -ge 3 ] && PATHS="$PATHS dg3w rcw"
PATHS=${KRC_BENCH_FC_PATHS:-$PATHS}
PARTS=${KRC_BENCH_FC_PARTS:-50}
READS=${KRC_BENCH_FC_READS:-2000}
SRELOAD=${KRC_BENCH_FC_SERVER_RELOAD:-1}
OUT=$KRC_RUN/first_contact.samples

# The samples as krbench_report input (bench/report/parse.c): the first
# READ of a brand-new process per path, and the synchronous READ latency
# of a VQ on datagrams vs on RC.
fc_samples() {
	awk '
	BEGIN {
		m["dg3"] = "krcore_datagram"; m["dg1"] = "krcore_dg_rc_behind"
		m["rc"] = "krcore_rc_first"; m["cm"] = "rdma_cm"
		m["verbs"] = "verbs"
		m["dg3w"] = "krcore_datagram_warm"
		m["rcw"] = "krcore_rc_first_warm"
		print "F first_read us case First contact: a new process, open to its first 8 B READ on a node never contacted"
		print "F read_lat_dg us procs Synchronous 8 B READ latency: a VQ on datagrams vs on RC"
	}
	($1 in m) && NF >= 2 {
		printf "S first_read %s new_process %s\n", m[$1], $2
		if ($1 == "dg3w") dgw = 1
		if ($1 == "rcw") rcw = 1
	}
	$1 == "lat_dg" && NF >= 2 { printf "S read_lat_dg krcore_datagram 1 %s\n", $2 }
	$1 == "lat_rc" && NF >= 2 { printf "S read_lat_dg krcore_rc 1 %s\n", $2 }
	END {
		print "R first_read rdma_cm_over_datagram rdma_cm krcore_datagram >= 20x"
		print "R first_read rc_over_datagram krcore_rc_first krcore_datagram >= 5x"
		print "R read_lat_dg datagram_over_rc krcore_datagram krcore_rc"
		if (dgw)
			print "R first_read rdma_cm_over_datagram_warm rdma_cm krcore_datagram_warm >= 20x"
		if (dgw && rcw)
			print "R first_read rc_over_datagram_warm krcore_rc_first_warm krcore_datagram_warm >= 5x"
	}'
}

gid_index() {
	krctl status | sed -n 's/.*rxe0\/1: .* gid\[\([0-9]*\)\].*/\1/p'
}

loaded() {
	grep -q '^krcore ' /proc/modules
}

unload() {
	tries=0
	while loaded && ! rmmod krcore 2>/dev/null; do
		tries=$((tries + 1))
		[ $tries -gt 50 ] && { fail "rmmod krcore"; return 1; }
		sleep 0.1
	done
}

# node0 (node2: D=$DIR2): the process that registered the value, anew.
kserver_start() {
	D=${1:-$DIR}
	rm -f "$D/fc.kstop" "$D/fc.krcore"
	"$FC" kserver "$D" &
	kserver=$!
	wait_for 60 '[ -e "$D/fc.krcore" ]' || fail "kserver"
}

kserver_stop() {
	touch "${1:-$DIR}/fc.kstop"
	wait_for 30 '! kill -0 $kserver 2>/dev/null' ||
		stuck "kserver did not exit" $kserver
	wait $kserver
}

# A path's label as first_contact krcore takes it, and its dg_policy.
base() {
	case $1 in
	dg3w) echo dg3 ;;
	rcw) echo rc ;;
	*) echo "$1" ;;
	esac
}

policy() {
	b=$(base "$1")
	[ "$b" = rc ] && echo 0 || echo "${b#dg}"
}

# node2, asked by node1 before a warm sample (path $1): krcore anew, its
# value registered, then a first contact with node0 over that path, so
# that node0's krcore has served one (its code run) before node1's.
warm_peer() {
	[ -n "${kserver:-}" ] && kserver_stop "$DIR2"
	unload || return 1
	krc_load meta_server="$META" dg_policy="$(policy "$1")" ||
		{ fail "insmod (node2)"; return 1; }
	wait_for 30 'krctl status | grep -q "metaserver: registered"' ||
		{ fail "node2 not registered with the MetaServer"; return 1; }
	kserver_start "$DIR2"
	"$FC" krcore "$(base "$1")" "$META" "$DIR" >>"$KRC_RUN/fc.warmup" ||
		fail "node2's warm-up contact with node0 ($1)"
	# Let node0 finish what a first contact leaves to the background.
	sleep 2
}

# What a process stuck in the kernel is doing, and the kernel's log.
stuck() {
	log "stuck: $1"
	cat "/proc/$2/wchan" "/proc/$2/stack" 2>/dev/null
	krctl counters 2>/dev/null | grep -E '^(dg_|vq|mr|user_mr|conn)' | tr '\n' ' '
	echo
	dmesg | tail -n 20
}

# ask KIND N ARG: node1's request N of KIND (reload: node0's, warm:
# node2's) with its argument; returns once the node has carried it out.
ask() {
	echo "$3" >"$DIR/fc.$1.$2.tmp"
	mv "$DIR/fc.$1.$2.tmp" "$DIR/fc.$1.$2"
	wait_for 120 "[ -e '$DIR/fc.$1.$2.done' ]"
}

# serve KIND HANDLER SECONDS: until node1 is done, carry out its requests
# of KIND in order (HANDLER ARG), looking for the next every SECONDS.
# (wait_for and barrier use n and i: other names here)
serve() {
	req=1
	while [ ! -e "$KRC_RUN/barrier.fc_done.1" ]; do
		if [ -e "$DIR/fc.$1.$req" ]; then
			$2 "$(cat "$DIR/fc.$1.$req")"
			: >"$DIR/fc.$1.$req.done"
			req=$((req + 1))
		fi
		sleep "$3"
	done
}

# node0, asked by node1: $1 is the sample node1 just took; after an RC
# one, the kernel's parts of accepting it (counters fc_*, before they go
# with the module).
server_reload() {
	[ -n "${KRC_BENCH_FC_TRACE:-}" ] && log "reload after $1"
	[ "$1" = rc ] && "$FC" accepts >>"$DIR/fc.accepts"
	kserver_stop
	rmmod krcore 2>/dev/null &
	rm=$!
	wait_for 30 '! kill -0 $rm 2>/dev/null' || stuck "rmmod krcore" $rm
	wait $rm
	unload || return 1
	krc_load meta_host=1 || { fail "insmod (node0)"; return 1; }
	kserver_start
}

# reload POLICY [WARM]: (node0 anew, if SRELOAD; then, for a warm sample
# of path WARM, node2's warm-up contact with node0) a new incarnation of
# krcore on this node, registered with the MetaServer.
nreq=0
nwarm=0
last=none
reload() {
	if [ "$SRELOAD" = 1 ]; then
		nreq=$((nreq + 1))
		ask reload $nreq "$last" ||
			{ fail "node0 did not reload"; return 1; }
	fi
	if [ -n "${2:-}" ]; then
		nwarm=$((nwarm + 1))
		ask warm $nwarm "$2" ||
			{ fail "node2 did not warm up"; return 1; }
	fi
	unload || return 1
	krc_load meta_server="$META" dg_policy="$1" || { fail "insmod"; return 1; }
	wait_for 30 'krctl status | grep -q "metaserver: registered"' ||
		{ fail "not registered with the MetaServer"; return 1; }
}

if [ "$KRC_NODE" -ge 3 ]; then
	barrier fc_up 600
	barrier fc_done
elif [ "$KRC_NODE" = 2 ]; then
	mkdir -p "$DIR2"
	barrier fc_up 600
	serve warm warm_peer 0.2
	barrier fc_done
	[ -n "${kserver:-}" ] && kserver_stop "$DIR2"
	loaded && krc_unload
elif [ "$KRC_NODE" = 0 ]; then
	mkdir -p "$DIR"
	mine=0
	if ! loaded; then
		krc_load meta_host=1 || exit 1
		mine=1
	fi
	rm -f "$DIR"/fc.*
	: >"$DIR/fc.accepts"
	"$FC" server "$DIR" "$META" $PORT "$(gid_index)" >/dev/null &
	srv=$!
	kserver_start
	barrier fc_up 600
	serve reload server_reload 0.1
	barrier fc_done
	[ -n "${KRC_BENCH_FC_TRACE:-}" ] &&
		log "$(krctl counters | grep '^dg_' | tr '\n' ' ')"
	touch "$DIR/fc.stop" "$DIR/fc.kstop"
	wait $srv || fail "first_contact server"
	wait $kserver
	[ $mine = 1 ] && krc_unload
else
	had=0
	loaded && had=1
	barrier fc_up 600
	: >"$OUT"
	echo "== first_contact: $SAMPLES new processes per path ($PATHS), reloading krcore before each krcore sample"
	r=0
	while [ $r -lt "$SAMPLES" ] && [ "$KRC_FAILS" = 0 ]; do
		# Rotate the order round by round.
		set -- $PATHS
		k=0
		while [ $k -lt $((r % $#)) ]; do
			first=$1
			shift
			set -- "$@" "$first"
			k=$((k + 1))
		done
		for p in "$@"; do
			case $p in
			dg3w|rcw)
				reload "$(policy "$p")" "$p" || break
				# This node's first contact (node2), then ours.
				"$FC" krcore "$(base "$p")" "$(node_ip 2)" "$DIR2" \
					>>"$KRC_RUN/fc.warmup" ||
					fail "warm-up contact with node2 ($p)"
				sleep 2
				"$FC" krcore "$p" "$META" "$DIR" >>"$OUT" ||
					fail "krcore sample $p"
				last=$p
				;;
			dg*|rc)
				reload "$(policy "$p")" || break
				"$FC" krcore "$p" "$META" "$DIR" >>"$OUT" ||
					fail "krcore sample $p"
				last=$p
				;;
			cm)
				"$FC" rdmacm "$META" $PORT "$DIR" >>"$OUT" ||
					fail "rdma_cm sample"
				;;
			verbs)
				"$FC" verbs "$META" $PORT "$DIR" >>"$OUT" ||
					fail "verbs sample"
				;;
			esac
		done
		r=$((r + 1))
	done
	echo "== first_contact: protocol pieces ($PARTS each), then $READS READs per path"
	loaded || reload 0
	"$FC" parts "$META" "$DIR" "$(gid_index)" "$PARTS" >>"$OUT" ||
		fail "protocol pieces"
	reload 3 && { "$FC" latency "$META" "$DIR" "$READS" >>"$OUT" ||
		fail "READ latency"; }
	cat "$DIR/fc.accepts" >>"$OUT" 2>/dev/null
	"$FC" report "$OUT" | tee "$KRC_RUN/first_contact.out"
	fc_samples <"$OUT" >>"${KRC_BENCH_SAMPLES:-$KRC_RUN/bench.samples}"
	[ -n "${KRC_BENCH_FC_TRACE:-}" ] &&
		log "$(krctl counters | grep '^dg_' | tr '\n' ' ')"
	barrier fc_done
	[ $had = 1 ] || krc_unload
fi
finish
