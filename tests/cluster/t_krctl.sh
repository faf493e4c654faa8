#!/bin/sh
# nodes: 2
# timeout: 900
# krctl for operators (issue 12 item 5), node1 a member of node0's
# MetaServer:
#   every command's --json output is one valid JSON document (top: one per
#   interval), with the values the text shows;
#   exact traffic per peer: 1000 READs of 4096 B from node1 to node0 grow
#   node0's wr_posted by 1000 and wr_bytes by 4096000 in 'krctl peers',
#   qconnects by the VQs connected (3 + 1); the new '  traffic:' line
#   leaves the old greps of 'krctl peers' counting what they did;
#   'krctl top -n 2 -d 1' in batch mode (and --json) while traffic runs:
#   two blocks (lines), requests/s above 0 for node0; on a terminal it
#   redraws the screen;
#   exit statuses: 3 with the module gone ("modprobe" in the message),
#   2 for a bad command line, 1 for a lookup of a node nobody is, 4 for a
#   user outside group rdma ("group rdma"), 7 for a krctl of a newer ABI,
#   6 for meta/status/lookup/connect with the MetaServer unreachable, 5
#   with the control plane down.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/srv.info
NOBODY=10.77.0.99
E=/tmp/krctl.err

# run CMD...: $out (standard output), $err (standard error), $rc.
run() {
	out=$("$@" 2>"$E")
	rc=$?
	err=$(cat "$E")
}

# The JSON document on standard input, strictly parsed (no NaN or
# Infinity, exactly one line); prints Python expression $1 of it (d).
pyj() {
	python3 -c '
import json, sys
text = sys.stdin.read()
def reject(c):
    raise ValueError("not JSON: " + c)
if text.count("\n") != 1 or not text.endswith("\n"):
    raise SystemExit("not one line: %r" % text[:200])
d = json.loads(text, parse_constant=reject)
r = eval(sys.argv[1])
print(("true" if r else "false") if isinstance(r, bool) else r)' "$1"
}

# js EXPR: pyj on $out.
js() {
	printf '%s\n' "$out" | pyj "$1"
}

# JSON Lines on standard input: each line parses; prints how many.
jsonl_count() {
	python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    json.loads(line, parse_constant=lambda c: 1 / 0)
    n += 1
print(n)'
}

# The peer entry of ADDR in "krctl --json peers" output $out: field $2.
peer_field() {
	js "[p for p in d[\"peers\"] if p[\"addr\"] == \"$1\"][0]$2"
}

if [ "$KRC_NODE" = 0 ]; then
	check "MetaServer loads" 'krc_load meta_host=1'
	"$KRC_TBIN/dp_serve" "$INFO" &
	srv=$!
	barrier up
	check "meta on the MetaServer: registered, hosted here, 2 cards" \
		'wait_for 60 "krctl meta | grep -qx \"hosted here: 2 cards\""'
	run krctl meta
	echo "$out"
	check "meta: exit 0, state registered at this node" \
		'[ $rc = 0 ] && echo "$out" | grep -qx "state: registered" &&
		 echo "$out" | grep -qx "address: $META"'
	run krctl --json meta
	check "meta --json: hosted_here, cards 2, table_slots as status says" \
		'[ "$(js "d[\"metaserver\"][\"hosted_here\"]")" = true ] &&
		 eq "$(js "d[\"metaserver\"][\"cards\"]")" 2 &&
		 krctl status | grep -q "table $(js "d[\"metaserver\"][\"table_slots\"]") slots"'
	barrier traffic_done 600
	touch "$INFO.stop"
	check "server process done" "wait $srv"
	barrier member_unloaded
	check "MetaServer unloads" krc_unload
	barrier meta_gone
	barrier member_done 300
	check "kernel log clean" dmesg_clean
	finish
fi

# node1
run krctl status
echo "$err"
check "no module: status exits 3, says modprobe" \
	'[ $rc = 3 ] && echo "$err" | grep -q "krcore is not loaded (no /dev/krcore): load it with .modprobe krcore."'
run krctl --json status
check "no module: --json status: an error document, status 3, ENOENT" \
	'[ $rc = 3 ] && eq "$(js "d[\"error\"][\"status\"]")" 3 &&
	 [ "$(js "d[\"error\"][\"errno_name\"]")" = ENOENT ]'
run krctl counters
check "no module: counters exits 3" '[ $rc = 3 ] && echo "$err" | grep -q modprobe'
run krctl top -n 1 -d 0.1
check "no module: top exits 3" '[ $rc = 3 ]'
run krctl frobnicate
check "a bad command: exit 2, the usage" '[ $rc = 2 ] && echo "$err" | grep -q "^usage: krctl"'
run krctl --json frobnicate
check "a bad command, --json: exit 2, an error document" \
	'[ $rc = 2 ] && eq "$(js "d[\"error\"][\"status\"]")" 2'
run krctl status extra
check "an extra argument: exit 2" '[ $rc = 2 ]'
run krctl top -d 0
check "top -d 0: exit 2" '[ $rc = 2 ]'
run krctl top -n x
check "top -n x: exit 2" '[ $rc = 2 ]'
run krctl --help
check "--help lists the exit statuses" \
	'[ $rc = 0 ] && echo "$out" | grep -q "krctl connect ADDR" &&
	 echo "$out" | grep -q "6 MetaServer unreachable"'

barrier up
check "member loads" "krc_load meta_server=$META pool_size=2"
check "registered with the MetaServer" \
	'wait_for 60 "krctl meta | grep -qx \"state: registered\""'
run krctl meta
echo "$out"
check "meta: exit 0, registered at node0, not hosted here" \
	'[ $rc = 0 ] && echo "$out" | grep -qx "address: $META" &&
	 echo "$out" | grep -qx "hosted here: no" && echo "$out" | grep -q "^meaning: registered"'

# Every command's --json: one document that parses, with the values.
run krctl --json status
check "status --json: exit 0, up, registered at node0, ABI and counters" \
	'[ $rc = 0 ] && [ "$(js "d[\"control_plane\"][\"up\"]")" = true ] &&
	 [ "$(js "d[\"control_plane\"][\"metaserver\"][\"state\"]")" = registered ] &&
	 [ "$(js "d[\"control_plane\"][\"metaserver\"][\"address\"]")" = "$META" ] &&
	 eq "$(js "d[\"module\"][\"abi\"]")" "$(js "d[\"libkrcore_abi\"]")" &&
	 eq "$(js "d[\"counters\"][\"vq_created\"]")" "$(counter vq_created)" &&
	 [ "$(js "[p[\"primary\"] for p in d[\"ports\"] if p[\"ibdev\"] == \"rxe0\"][0]")" = true ]'
run krctl status --json
check "status --json after the command: the same document" \
	'[ $rc = 0 ] && [ "$(js "d[\"card\"][\"addr\"]")" = "$KRC_IP" ]'
run krctl --json card
card=$(krctl card)
check "card --json: the card's values" \
	'[ $rc = 0 ] && [ "$(js "d[\"card\"][\"addr\"]")" = "$KRC_IP" ] &&
	 [ "$(js "d[\"card\"][\"incarnation\"]")" = "$(kv incarnation "$card")" ] &&
	 [ "$(js "d[\"card\"][\"gid\"]")" = "$(kv gid "$card")" ] &&
	 eq "$(js "d[\"card\"][\"ud_qpn\"]")" "$(kv ud_qpn "$card")" &&
	 [ "$(js "d[\"card\"][\"mtu\"]")" = "$(kv mtu "$card")" ]'
run krctl --json counters
check "counters --json: every counter, as numbers" \
	'[ $rc = 0 ] && eq "$(js "len(d[\"counters\"])")" "$(krctl counters | wc -l)" &&
	 [ "$(js "all(type(v) is int for v in d[\"counters\"].values())")" = true ] &&
	 eq "$(js "d[\"counters\"][\"vq_created\"]")" "$(counter vq_created)"'
run krctl --json lookup "$META"
check "lookup --json: node0's card, path lookup" \
	'[ $rc = 0 ] && [ "$(js "d[\"card\"][\"addr\"]")" = "$META" ] &&
	 [ "$(js "d[\"path\"]")" = lookup ] && eq "$(js "d[\"reads\"]")" 1'
node0_id=$(js 'd["card"]["node_id"]')
run krctl --json connect "$META" 2
check "connect --json: two connects to node0" \
	'[ $rc = 0 ] && eq "$(js "len(d[\"connects\"])")" 2 &&
	 eq "$(js "d[\"connects\"][1][\"peer_node\"]")" "$node0_id"'
# With a datagram first contact (dg_policy 1-3) the VQ moves to RC once
# the connection behind it is ready: probe reads over RC.
check "a ready connection to node0" \
	'wait_for 30 "ge \"\$(peer_conns $META ready)\" 1"'
run krctl --json probe "$META"
check "probe --json: the card READ over the connection" \
	'[ $rc = 0 ] && [ "$(js "d[\"probe\"][\"card\"][\"addr\"]")" = "$META" ] &&
	 [ "$(js "d[\"connect\"][\"path\"]")" != "" ]'
run krctl --json peers
check "peers --json: node0 with a cached card and its traffic" \
	'[ $rc = 0 ] && [ "$(peer_field "$META" "[\"card_cached\"]")" = true ] &&
	 [ "$(peer_field "$META" "[\"traffic\"] is not None")" = true ]'
run krctl --json conns
check "conns --json: connections to node0, all in peers too" \
	'[ $rc = 0 ] && ge "$(js "len([c for c in d[\"conns\"] if c[\"peer\"] == \"$META\"])")" 1'
run krctl --json meta
check "meta --json: registered, at node0" \
	'[ $rc = 0 ] && [ "$(js "d[\"metaserver\"][\"state\"]")" = registered ] &&
	 [ "$(js "d[\"metaserver\"][\"address\"]")" = "$META" ]'

# Exact traffic counts per peer (once the pool is complete).
check "pool of 2 ready connections to node0" \
	'wait_for 30 "eq \"\$(peer_conns $META ready)\" 2"'
out=$(krctl --json peers)
q0=$(peer_field "$META" '["qconnects"]')
p0=$(peer_field "$META" '["traffic"]["wr_posted"]')
b0=$(peer_field "$META" '["traffic"]["wr_bytes"]')
e0=$(peer_field "$META" '["traffic"]["wr_errors"]')
check "3 VQs connected" 'krctl connect "$META" 3 >/dev/null'
load=$("$KRC_TBIN/krctl_load" reads "$META" "$INFO" 1000 4096)
check "1000 READs of 4096 B ($load)" '[ "$load" = "posted 1000 bytes 4096000" ]'
out=$(krctl --json peers)
q1=$(peer_field "$META" '["qconnects"]')
p1=$(peer_field "$META" '["traffic"]["wr_posted"]')
b1=$(peer_field "$META" '["traffic"]["wr_bytes"]')
e1=$(peer_field "$META" '["traffic"]["wr_errors"]')
log "qconnects $q0 -> $q1, wr_posted $p0 -> $p1, wr_bytes $b0 -> $b1"
check "peers --json: wr_posted grew by exactly 1000" 'eq "$((p1 - p0))" 1000'
check "peers --json: wr_bytes grew by exactly 4096000" 'eq "$((b1 - b0))" 4096000'
check "peers --json: qconnects grew by the 4 VQs connected" 'eq "$((q1 - q0))" 4'
check "peers --json: no errors" 'eq "$((e1 - e0))" 0'
peers=$(krctl peers)
printf '%s\n' "$peers"
block=$(peer_block "$META")
check "peers: node0's traffic line says the same" \
	'[ "$(printf "%s\n" "$block" | grep -c "^  traffic: ")" = 1 ] &&
	 eq "$(kv wr_posted "$(printf "%s\n" "$block" | grep "^  traffic: ")")" "$p1" &&
	 eq "$(kv wr_bytes "$(printf "%s\n" "$block" | grep "^  traffic: ")")" "$b1"'
nready=$(printf '%s\n' "$out" | pyj "len([c for p in d[\"peers\"] if p[\"addr\"] == \"$META\" for c in p[\"conns\"] if c[\"state\"] == \"ready\"])")
check "the old greps of peers count the $nready ready connections of --json" \
	'ge "$nready" 1 && eq "$(printf "%s\n" "$block" | grep -c "conn .*: ready")" "$nready" &&
	 eq "$(printf "%s\n" "$block" | grep -c "conn .*ready")" "$nready" &&
	 eq "$(peer_conns "$META" ready)" "$nready" &&
	 eq "$(peer_conns "$META")" "$(peer_field "$META" "[\"nconns\"]")"'
conns=$(krctl conns)
printf '%s\n' "$conns"
check "conns: one line per ready connection to node0" \
	'eq "$(printf "%s\n" "$conns" | grep -c "^$META conn [0-9]*: ready, qp [0-9]* -> [0-9]*, [0-9]* VQs, ")" "$nready"'

# top, while READs run: the three runs first, then their checks.
# The READs last until the three runs are done (at most 120 s: on the debug
# kernel the three take longer than a fixed 15 s of load).
rm -f /tmp/load.stop
"$KRC_TBIN/krctl_load" run "$META" "$INFO" 120 4096 /tmp/load.stop >/tmp/load.out 2>&1 &
loader=$!
sleep 1
run krctl top -n 2 -d 1
top_rc=$rc
top_out=$out
run krctl top -n 2 -d 1 --json
topj_rc=$rc
topj_out=$out
run krctl --json top -n 3 -d 0.5
toph_rc=$rc
toph_out=$out
: >/tmp/load.stop
printf '%s\n' "$top_out" "$topj_out" "$toph_out"
check "top -n 2 -d 1, batch: exit 0, two blocks, no escape sequence" \
	'[ $top_rc = 0 ] && eq "$(printf "%s\n" "$top_out" | grep -c "^krctl top - ")" 2 &&
	 ! printf "%s" "$top_out" | grep -q "$(printf "\033")"'
check "top: node0 with requests/s above 0 in both" \
	'eq "$(printf "%s\n" "$top_out" | awk -v p="$META" "\$1 == p && \$3 > 0" | wc -l)" 2'
check "top --json: two lines, each a JSON object" \
	'[ $topj_rc = 0 ] && eq "$(printf "%s\n" "$topj_out" | jsonl_count)" 2'
check "top --json: node0's requests_per_s above 0 in each" \
	'eq "$(printf "%s\n" "$topj_out" | while read -r l; do printf "%s\n" "$l" |
		pyj "[p[\"requests_per_s\"] > 0 and p[\"wr_posted\"] > 0 for p in d[\"peers\"] if p[\"addr\"] == \"$META\"][0]"
	 done | grep -c true)" 2'
check "top -d 0.5: three intervals of about half a second, READs counted" \
	'[ $toph_rc = 0 ] && eq "$(printf "%s\n" "$toph_out" | jsonl_count)" 3 &&
	 eq "$(printf "%s\n" "$toph_out" | while read -r l; do printf "%s\n" "$l" |
		pyj "0.3 < d[\"interval\"] < 3 and d[\"node\"][\"wr_posted\"] > 0"; done | grep -c true)" 3'
check "the READs during top all completed" "wait $loader"
cat /tmp/load.out
# script(1) needs pseudo-terminals: the nodes boot without devpts.
[ -d /dev/pts ] || mkdir -p /dev/pts
[ -e /dev/pts/ptmx ] || mount -t devpts -o ptmxmode=0666 devpts /dev/pts 2>/dev/null
if script -qec true /dev/null >/dev/null 2>&1; then
	script -qec "krctl top -n 2 -d 0.2" /dev/null >/tmp/tty.out 2>&1
	check "top on a terminal: the screen cleared first and at every interval" \
		'eq "$(grep -o "$(printf "\033")\[H$(printf "\033")\[2J" /tmp/tty.out | wc -l)" 3'
else
	log "script(1) cannot open a terminal here: top on a terminal not checked"
fi

# Failures and their statuses.
run krctl lookup "$NOBODY"
echo "$err"
check "lookup of a node nobody is: exit 1, the same message as before" \
	'[ $rc = 1 ] && echo "$err" | grep -q "^krctl: node $NOBODY is not registered with the MetaServer (No such device or address)"'
run krctl --json lookup "$NOBODY"
check "... --json: status 1, ENXIO" \
	'[ $rc = 1 ] && eq "$(js "d[\"error\"][\"status\"]")" 1 &&
	 [ "$(js "d[\"error\"][\"errno_name\"]")" = ENXIO ]'
run krctl connect "$NOBODY"
check "connect to a node nobody is: exit 1" '[ $rc = 1 ]'
run krctl lookup 10.77.0
check "a bad address: exit 2, the same message as before" \
	'[ $rc = 2 ] && echo "$err" | grep -q "neither an IPv4 address nor a GID"'
run krctl connect "$META" 0
check "connect N=0: exit 2" '[ $rc = 2 ]'

# Permission: /dev/krcore is 0660 root:root without the udev rule.
cp "$KRC_BIN/krctl" /tmp/krctl
chmod 755 /tmp/krctl
check "/dev/krcore: 0660 root:root" '[ "$(stat -c "%a %U %G" /dev/krcore)" = "660 root root" ]'
run setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/krctl status
echo "$err"
check "nobody: status exits 4, says group rdma" \
	'[ $rc = 4 ] && echo "$err" | grep -q "permission denied: add the user to group rdma"'
run setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/krctl --json peers
check "nobody, --json: status 4, EACCES" \
	'[ $rc = 4 ] && [ "$(js "d[\"error\"][\"errno_name\"]")" = EACCES ]'
run setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/krctl counters
check "nobody: counters (sysfs) exit 0" '[ $rc = 0 ] && echo "$out" | grep -q "^vq_created="'

# A krctl built for the next ABI.
run "$KRC_TBIN/krctl_abi_next" status
echo "$err"
check "krctl of a newer ABI: exit 7, says so" \
	'[ $rc = 7 ] && echo "$err" | grep -q "too old" && echo "$err" | grep -q "needs krcore ABI"'
barrier traffic_done 600
check "member unloads" krc_unload

# The MetaServer unreachable.
barrier member_unloaded
barrier meta_gone
check "member loads while no MetaServer runs" "krc_load meta_server=$META"
check "meta: down" 'wait_for 30 "krctl meta | grep -qx \"state: down\""'
# The member tries again in the background: between tries it is
# "connecting" for a moment (a CI run met one). The next look that says
# down is the one checked.
for i in 1 2 3 4 5 6 7 8 9 10; do
	run krctl meta
	echo "$out" | grep -qx "state: down" && break
	sleep 0.5
done
echo "$out"
echo "$err"
check "meta: exit 6, MetaServer $META unreachable, what it means" \
	'[ $rc = 6 ] && echo "$err" | grep -q "MetaServer $META unreachable: check the meta_server= module parameter" &&
	 echo "$out" | grep -qx "state: down" && echo "$out" | grep -qx "table: unknown" &&
	 echo "$out" | grep -q "^meaning: the MetaServer is unreachable"'
run krctl --json meta
check "meta --json: state down, status 6" \
	'[ $rc = 6 ] && [ "$(js "d[\"metaserver\"][\"state\"]")" = down ] &&
	 eq "$(js "d[\"error\"][\"status\"]")" 6'
run krctl status
check "status: exit 6, 'metaserver: down' as before" \
	'[ $rc = 6 ] && echo "$out" | grep -q "metaserver: down (retrying) at $META"'
run krctl lookup "$NOBODY"
echo "$err"
check "lookup: exit 6, the old message and the MetaServer's address" \
	'[ $rc = 6 ] && echo "$err" | grep -q "no cached card and the MetaServer is unreachable (No route to host)" &&
	 echo "$err" | grep -q "MetaServer $META unreachable"'
run krctl connect "$NOBODY"
check "connect: exit 6" '[ $rc = 6 ]'
check "member unloads" krc_unload

# The control plane down.
check "loads with ibdev=nosuch0" 'krc_load ibdev=nosuch0'
run krctl status
echo "$err"
check "status: exit 5, '  down' as before, what to do" \
	'[ $rc = 5 ] && echo "$out" | grep -A1 "^control plane:" | grep -qx "  down" &&
	 echo "$err" | grep -qE "no active RoCE port|ibdev= and gid_index="'
run krctl card
check "card: exit 5, the old message" '[ $rc = 5 ] && echo "$err" | grep -q "No such device"'
run krctl meta
check "meta: exit 5" '[ $rc = 5 ]'
run krctl connect "$META"
check "connect: exit 5" '[ $rc = 5 ] && echo "$err" | grep -q "No such device"'
run krctl --json status
check "status --json: up false, status 5" \
	'[ $rc = 5 ] && [ "$(js "d[\"control_plane\"][\"up\"]")" = false ] &&
	 eq "$(js "d[\"error\"][\"status\"]")" 5'
check "member unloads" krc_unload

# The module gone.
run krctl status
check "module gone: status exits 3, says modprobe" '[ $rc = 3 ] && echo "$err" | grep -q modprobe'
barrier member_done 300
check "kernel log clean" dmesg_clean
finish
