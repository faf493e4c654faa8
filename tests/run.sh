#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The test suite of krcore: unit tests (no VM), style (checkpatch, man
# pages), fuzzers (each runs KRC_FUZZ_SECONDS, default 20), packaging
# (tests/pkg: make install, make deb, the packages installed and purged on
# this host, DKMS; as root), then cluster tests (each boots its own
# Soft-RoCE nodes with tools/krcluster). Ends with one line
# "N passed, N failed, N rerun" (then ", N skipped" when a test was
# skipped); "N rerun" counts the cluster runs the testbed's network
# failed, and that ran again (below, run_cluster_test).
# A unit test case skipped with cmocka's skip(), or a cluster test whose
# nodes exit 77 (lib.sh: skip) where none failed, counts as skipped; a
# test binary with no test case at all, no unit test binary, or a fuzzer
# that ran no input fails.
#
#   tests/run.sh [unit|style|fuzz|pkg|cluster|all] [NAME-PATTERN]
#
# A pattern matches any part of a name; a cluster test's name followed by
# '$' (t_abi$) runs that test alone.
#
# A cluster test is tests/cluster/t_*.sh; its header says how many nodes it
# needs ("# nodes: N") and optionally its timeout ("# timeout: SEC").
# KRC_KERNEL=debug runs the cluster tests on the debug kernel (see
# scripts/debug-kernel.sh); KRC_TIMEOUT_SCALE multiplies every cluster
# test's timeout (default 1, 4 on the debug kernel: KASAN under TCG).
set -u
cd "$(dirname "$0")/.." || exit 2
what=${1:-all}
pattern=${2:-}
build=${BUILD:-build}
passed=0
failed=0
skipped=0
reruns=0
rerun_names=""
failures=""
skips=""

pass() {
	passed=$((passed + 1))
}

flunk() {
	failed=$((failed + 1))
	failures="$failures $1"
}

skip() {
	skipped=$((skipped + 1))
	skips="$skips $1"
}

run_unit() {
	found=0
	for t in "$build"/tests/test_*; do
		case "$t" in *.d) continue ;; esac
		[ -x "$t" ] || continue
		name=${t##*/}
		case "$name" in *"$pattern"*) ;; *) continue ;; esac
		found=$((found + 1))
		out=$(CMOCKA_MESSAGE_OUTPUT=TAP "$t" 2>&1)
		rc=$?
		echo "$out" | grep -E '^(not )?ok ' | sed "s/^/unit $name: /"
		# cmocka's TAP: "ok N - name # SKIP" for a skipped case
		sk=$(echo "$out" | grep -c '^ok .*# *SKIP')
		ok=$(($(echo "$out" | grep -c '^ok ') - sk))
		bad=$(echo "$out" | grep -c '^not ok ')
		passed=$((passed + ok))
		failed=$((failed + bad))
		skipped=$((skipped + sk))
		[ "$bad" -gt 0 ] && failures="$failures $name"
		[ "$sk" -gt 0 ] && skips="$skips $name"
		if [ $rc -ne 0 ] && [ "$bad" -eq 0 ]; then
			# crashed or failed outside a test case
			echo "$out" | tail -n 20
			flunk "$name(exit $rc)"
		elif [ $((ok + bad + sk)) -eq 0 ]; then
			echo "$out" | tail -n 20
			echo "not ok - unit $name: no test case ran"
			flunk "$name(no-tests)"
		fi
	done
	if [ "$found" -eq 0 ]; then
		echo "not ok - unit: no test binary in $build/tests matches '$pattern' (make all?)"
		flunk "unit(none)"
	fi
}

# Did a cluster test skip? Every node exited 0 or 77 (at least one 77),
# krcluster failed only those nodes and their kernel logs are clean.
cluster_skipped() {
	n77=0
	for rcf in "$1"/node*.rc; do
		[ -f "$rcf" ] || return 1
		case "$(cat "$rcf")" in
		0) ;;
		77)
			n77=$((n77 + 1))
			grep -qE 'BUG:|WARNING:|Oops|Call Trace' "${rcf%.rc}.dmesg" 2>/dev/null &&
				return 1
			;;
		*) return 1 ;;
		esac
	done
	[ "$n77" -gt 0 ] &&
		grep -q "^krcluster: $n77 of [0-9]* node(s) failed" "$1.summary"
}

# A cluster test that the testbed's network failed runs again, and says
# so; the run that counts must pass on its own. A rerun may hide only the
# testbed's fault: tests/testbed-fault.sh decides from the run's logs
# (its header has the rule; tests/logscan/rerun-check.sh checks it in the
# style part). In short: every node that failed either never started the
# test (node setup's ping check found the network down, before krcore
# loaded) or failed only after its own virtio NIC stopped transmitting
# (the guest's "NETDEV WATCHDOG: ... transmit queue 0 timed out", every
# packet of the node lost from then on: no "FAIL:" line and no exit
# before the watchdog's line in its log), and no node's log holds any
# kernel report (an oops, KASAN, any warning, a hung task, the module's
# leak lines...). Anything else fails the test with no rerun: a check
# that failed before the hang, a peer's check that failed with no hang in
# its own log, a report after the hang. The first run's logs are kept
# in $out.nic-hang (then $out.nic-hang.2). A network that never came up
# is found before the test starts, so a boot that meets it costs little:
# such a test gets up to three boots; a NIC hang, one more run.
run_cluster_test() {
	rm -rf "$out".nic-hang*
	attempt=1
	most=3
	while :; do
		tools/krcluster -q -n "${nodes:-1}" -t "$tmo" -o "$out" -- sh "$t" \
			>"$out.summary" 2>&1 && return 0
		why=$(sh tests/testbed-fault.sh "$out")
		case $? in
		0) ;;
		1)
			echo "cluster $name: no rerun: $why"
			return 1
			;;
		*) return 1 ;;
		esac
		case "$why" in nic-hang:*) most=2 ;; esac
		[ "$attempt" -lt "$most" ] || return 1
		kept=$out.nic-hang
		[ "$attempt" -gt 1 ] && kept=$out.nic-hang.$attempt
		mv "$out" "$kept"
		mv "$out.summary" "$kept/summary"
		attempt=$((attempt + 1))
		reruns=$((reruns + 1))
		rerun_names="$rerun_names $name(${why%%:*})"
		echo "cluster $name: the testbed's fault alone: $why; logs in $kept; running it again (run $attempt of at most $most)"
	done
}

run_cluster() {
	scale=${KRC_TIMEOUT_SCALE:-}
	if [ -z "$scale" ]; then
		scale=1
		[ "${KRC_KERNEL:-}" = debug ] && scale=4
	fi
	for t in tests/cluster/t_*.sh; do
		name=$(basename "$t" .sh)
		# NAME$ names one test exactly; anything else is a substring
		case "$pattern" in
		*\$) [ "$name" = "${pattern%\$}" ] || continue ;;
		*) case "$name" in *"$pattern"*) ;; *) continue ;; esac ;;
		esac
		nodes=$(sed -n 's/^# nodes: *\([0-9]*\).*/\1/p' "$t" | head -n 1)
		tmo=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "$t" | head -n 1)
		out="$build/cluster/$name"
		[ "${KRC_KERNEL:-}" = debug ] && out="$build/cluster/debug/$name"
		rm -rf "$out"
		mkdir -p "${out%/*}"
		tmo=$((${tmo:-300} * scale))
		echo "cluster $name: ${nodes:-1} node(s)${KRC_KERNEL:+, kernel $KRC_KERNEL}, timeout ${tmo}s"
		start=$(date +%s)
		if run_cluster_test; then
			echo "ok - cluster $name ($(($(date +%s) - start))s)"
			pass
		elif cluster_skipped "$out"; then
			# every node that did not pass skipped (exit 77), cleanly
			why=$(grep -h -a -o 'SKIP: .*' "$out"/node*.log 2>/dev/null | head -n 1 | tr -d '\r')
			echo "skip - cluster $name ($(($(date +%s) - start))s): ${why:-exit 77}"
			skip "$name"
		else
			echo "not ok - cluster $name ($(($(date +%s) - start))s), logs in $out"
			cat "$out.summary"
			for log in "$out"/node*.log; do
				[ -f "$log" ] || continue
				echo "---- $log (checks and last lines) ----"
				grep -a -E '^\[node[0-9]+\] (FAIL|ok)' "$log" | tail -n 30
				tail -n 15 "$log" | tr -d '\r'
			done
			flunk "$name"
		fi
		[ "${KRC_KERNEL:-}" = debug ] && keep_reports "$name" "$out"
	done
}

# On the debug kernel: every node log holding a report of the kernel's bug
# finders is kept in $build/debug-reports/ (the next run of the test
# deletes its run directory).
keep_reports() {
	for d in "$2"/node*.dmesg; do
		[ -f "$d" ] || continue
		if grep -aqE 'BUG:|WARNING:|KASAN|KFENCE|possible (circular|recursive) locking|inconsistent lock state|sleeping function called|ODEBUG:|unreferenced object|Call Trace:' "$d"; then
			mkdir -p "$build/debug-reports"
			n=${d##*/}
			cp "$d" "$build/debug-reports/$1-${n%.dmesg}-$(date +%Y%m%d-%H%M%S).dmesg"
			echo "debug kernel report kept: $build/debug-reports/$1-${n%.dmesg}-*.dmesg"
		fi
	done
}

run_style() {
	case "style" in *"$pattern"*) ;; *) return ;; esac
	if out=$(scripts/checkpatch.sh 2>&1); then
		echo "ok - style: checkpatch clean"
		pass
	else
		echo "$out" | tail -n 40
		echo "not ok - style: checkpatch"
		flunk style
	fi
	# The kernel's layers run one way (includes, and the built objects'
	# symbols): scripts/layers.sh
	if out=$(sh scripts/layers.sh 2>&1); then
		echo "ok - style: ${out#layers: }"
		pass
	else
		echo "$out"
		echo "not ok - style: a kernel layer reaches up (scripts/layers.sh)"
		flunk layers
	fi
	# lintian (make deb) refuses a source line over 512 characters (it
	# passes JSON and SVG); say so here, in seconds, not at the packaging.
	# Bytes, not characters, and 512 already (lintian said "513 > 512" of
	# a line of 512 with its newline); the fuzz seeds are binary, and
	# lintian reads them too.
	long=$({ git ls-files -z -- ':!*.json' ':!*.svg' ':!tests/fuzz/corpus' |
		LC_ALL=C xargs -0 grep -I -n -E '^.{512}' --
		git ls-files -z -- tests/fuzz/corpus |
		LC_ALL=C xargs -0 grep -a -n -E '^.{512}' --; } 2>/dev/null |
		cut -d: -f1,2 | head -n 5)
	if [ -z "$long" ]; then
		echo "ok - style: no source line over 512 characters"
		pass
	else
		echo "$long"
		echo "not ok - style: lines over 512 characters (lintian's very-long-line-length-in-source-file)"
		flunk long-lines
	fi
	run_man
	run_mutants_apply
	# krcluster's kernel-log scan on made-up logs (tests/logscan/check.sh)
	if out=$(bash tests/logscan/check.sh 2>&1); then
		echo "ok - style: the kernel-log scan judges made-up logs right ($(echo "$out" | grep -c '^ok') cases)"
		pass
	else
		echo "$out" | grep -v '^ok'
		echo "not ok - style: the kernel-log scan (tests/logscan/check.sh)"
		flunk logscan
	fi
	# Which failed cluster runs may run again (tests/testbed-fault.sh),
	# on made-up run directories (tests/logscan/rerun-check.sh)
	if out=$(sh tests/logscan/rerun-check.sh 2>&1) &&
	   [ "$(echo "$out" | grep -c '^ok - rerun: ')" -gt 0 ]; then
		echo "ok - style: the rerun rule judges made-up runs right ($(echo "$out" | grep -c '^ok - rerun: ') cases)"
		pass
	else
		echo "$out" | grep -v '^ok'
		echo "not ok - style: the rerun rule (tests/logscan/rerun-check.sh)"
		flunk rerun-rule
	fi
}

# The mutation checks (scripts/mutants.sh) stay a record of today's code:
# every tests/mutants/*.patch still applies and names its test and check.
run_mutants_apply() {
	bad=""
	for p in tests/mutants/*.patch; do
		[ -f "$p" ] || continue
		t=$(sed -n 's/^Test: *//p' "$p" | head -n 1)
		if ! grep -q '^Expect: ..*' "$p" || [ ! -f "tests/cluster/$t.sh" ] ||
		   ! patch -p1 --dry-run --quiet -f <"$p" >/dev/null 2>&1; then
			bad="$bad ${p##*/}"
		fi
	done
	if [ -z "$bad" ]; then
		echo "ok - style: every mutant patch applies and names its test"
		pass
	else
		echo "not ok - style: mutant patches stale or incomplete:$bad"
		flunk mutants-apply
	fi
}

# The man pages: mandoc's lint (style level) finds nothing, and they
# document what the code has: every krctl subcommand, every symbol the
# library exports, every module parameter but those of the tests.
run_man() {
	if ! command -v mandoc >/dev/null; then
		echo "not ok - style: man pages: no mandoc (make deps)"
		flunk man-lint
	elif out=$(mandoc -T lint man/*.[1-9] 2>&1); then
		echo "ok - style: man pages lint clean (mandoc -T lint)"
		pass
	else
		echo "$out" | head -n 40
		echo "not ok - style: man pages lint (mandoc -T lint)"
		flunk man-lint
	fi
	# The words of the tags (the line after .TP) of krctl.8's COMMANDS.
	tags=" $(awk '/^\.SH /{on = ($2 == "COMMANDS")} on && tp {print} {tp = /^\.TP/}' man/krctl.8 |
		sed 's/^\.[A-Z]* //; s/\\f[BIRP]//g; s/\\-/-/g; s/[",]/ /g' | tr '\n' ' ') "
	missing=""
	# The names of krctl's command table (tools/krctl/main.c).
	cmds=$(sed -n 's/^	{ "\([a-z-]*\)", cmd_.*/\1/p' tools/krctl/main.c | sort -u)
	[ -n "$cmds" ] || cmds="(no-command-table-in-tools/krctl/main.c)"
	for c in $cmds; do
		case "$tags" in *" $c "*) ;; *) missing="$missing $c" ;; esac
	done
	man_check "every krctl subcommand in man/krctl.8" "$missing"
	names=" $(ls man/*.3 | sed 's|.*/||; s|\.3$||' | tr '\n' ' ') $(sh scripts/man-links.sh | sed -n 's/\.3 .*//p' | tr '\n' ' ') "
	missing=""
	for sym in $(sed -n 's/^[[:space:]]*\(krc_[a-z_0-9]*\);.*/\1/p' lib/libkrcore.map); do
		case "$names" in *" $sym "*) ;; *) missing="$missing $sym" ;; esac
	done
	man_check "every symbol of lib/libkrcore.map has a man page" "$missing"
	# ...and is in the Debian symbols file (make deb fails otherwise,
	# twenty minutes into make test).
	missing=""
	for sym in $(sed -n 's/^[[:space:]]*\(krc_[a-z_0-9]*\);.*/\1/p' lib/libkrcore.map); do
		grep -q "^ $sym@" debian/libkrcore0.symbols || missing="$missing $sym"
	done
	man_check "every symbol of lib/libkrcore.map is in debian/libkrcore0.symbols" "$missing"
	missing=""
	# kernel/'s sources are in its layer directories (core/, control/, ...).
	for p in $(sed -n 's/.*module_param\(_named\|_cb\)(\([a-z_0-9]*\),.*/\2/p' \
		$(find kernel -name '*.c' ! -name '*.mod.c' | sort)); do
		case "$p" in fault_* | test_*) continue ;; esac
		grep -q "^\.BI $p= " man/krcore.4 || missing="$missing $p"
	done
	man_check "every module parameter in man/krcore.4" "$missing"
}

man_check() {
	if [ -z "$2" ]; then
		echo "ok - style: $1"
		pass
	else
		echo "not ok - style: $1: missing$2"
		flunk "man($1)"
	fi
}

# libFuzzer targets tests/fuzz/fuzz_*.c, built by 'make fuzz' into
# $build/fuzz. Each runs on a working copy of its committed seed corpus.
run_fuzz() {
	names=""
	for src in tests/fuzz/fuzz_*.c; do
		[ -f "$src" ] || continue
		name=$(basename "$src" .c)
		case "$name" in *"$pattern"*) names="$names $name" ;; esac
	done
	[ -n "$names" ] || return
	if ! out=$(make -s fuzz BUILD="$build" 2>&1); then
		echo "$out" | tail -n 40
		echo "not ok - fuzz-build"
		flunk fuzz-build
		return
	fi
	secs=${KRC_FUZZ_SECONDS:-20}
	for name in $names; do
		bin="$build/fuzz/$name"
		corpus="$build/fuzz/corpus/$name"
		log="$build/fuzz/$name.log"
		rm -rf "$corpus"
		mkdir -p "$corpus"
		if [ -d "tests/fuzz/corpus/$name" ]; then
			cp -R "tests/fuzz/corpus/$name/." "$corpus/"
		fi
		if "$bin" -max_total_time="$secs" -max_len=512 \
			-artifact_prefix="$build/fuzz/$name-" "$corpus" >"$log" 2>&1; then
			runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
			if [ "${runs:-0}" -gt 0 ] 2>/dev/null; then
				echo "ok - fuzz $name ($runs runs)"
				pass
			else
				tail -n 20 "$log"
				echo "not ok - fuzz $name: no input ran (${runs:-no} runs), log in $log"
				flunk "$name(no-runs)"
			fi
		else
			tail -n 40 "$log"
			echo "not ok - fuzz $name, log in $log"
			flunk "$name"
		fi
	done
}

# Packaging and installation on this host (tests/pkg/test_*.sh, no VM):
# make install, make deb with lintian, dpkg -i and --purge of the
# packages, DKMS builds. Each prints "ok - ..." / "not ok - ..." lines;
# exit 77 means skipped (not root, a krcore package already installed).
run_pkg() {
	for t in tests/pkg/test_*.sh; do
		name=$(basename "$t" .sh)
		case "$name" in *"$pattern"*) ;; *) continue ;; esac
		start=$(date +%s)
		out=$(BUILD="$build" sh "$t" 2>&1)
		rc=$?
		echo "$out" | grep -vE '^(not )?ok - |^SKIP: '
		echo "$out" | grep -E '^(not )?ok - '
		ok=$(echo "$out" | grep -c '^ok - ')
		bad=$(echo "$out" | grep -c '^not ok - ')
		passed=$((passed + ok))
		failed=$((failed + bad))
		[ "$bad" -gt 0 ] && failures="$failures $name"
		if [ $rc -eq 77 ]; then
			echo "skip - pkg $name: $(echo "$out" | sed -n 's/^SKIP: //p' | head -n 1)"
			skip "$name"
		elif [ $rc -ne 0 ] && [ "$bad" -eq 0 ]; then
			echo "not ok - pkg $name: exit $rc"
			flunk "$name(exit $rc)"
		elif [ $((ok + bad)) -eq 0 ]; then
			echo "not ok - pkg $name: no check ran"
			flunk "$name(no-checks)"
		fi
		echo "pkg $name: $(($(date +%s) - start))s"
	done
}

case "$what" in
unit) run_unit ;;
cluster) run_cluster ;;
style) run_style ;;
fuzz) run_fuzz ;;
pkg) run_pkg ;;
all) run_unit; run_style; run_fuzz; run_pkg; run_cluster ;;
*) echo "usage: tests/run.sh [unit|style|fuzz|pkg|cluster|all] [PATTERN]" >&2; exit 2 ;;
esac

[ -n "$failures" ] && echo "failed:$failures"
[ -n "$skips" ] && echo "skipped:$skips"
[ -n "$rerun_names" ] && echo "rerun (the testbed's fault):$rerun_names"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $reruns rerun, $skipped skipped"
else
	echo "$passed passed, $failed failed, $reruns rerun"
fi
[ "$failed" -eq 0 ]
