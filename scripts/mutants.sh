#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Mutation checks: does a test fail when the behaviour it claims to prove
# is broken? Each tests/mutants/NAME.patch breaks one claim in the module
# or the library and names the cluster test that proves it:
#
#   Claim:  what the product promises
#   Breaks: what the patch does to it
#   Test:   the cluster test (tests/cluster/TEST.sh)
#   Expect: text of the check that must fail ("FAIL: ...TEXT...")
#   Env:    optional VAR=VALUE words for tests/run.sh (opt-in tests)
#
# For each mutant: the tree as it is now (committed and uncommitted changes
# of tracked files, and the files git neither tracks nor ignores: new
# sources of work in progress) is copied to build/mutants/NAME/src, the
# patch applied, everything built, and the test run there on its own
# cluster. The mutant is killed when the test fails and the expected check
# is among its failures; it survives when the test passes; anything else
# (patch, build, or the test failing elsewhere only) is inconclusive and
# counts as a failure too. Ends with "N killed, N survived, N
# inconclusive" and exits 0 only if every mutant was killed.
#
#   scripts/mutants.sh [NAME...]     (default: every tests/mutants/*.patch)
#
# Runs one cluster at a time: never beside another cluster run on a small
# host. About 2 to 4 minutes per mutant on 2 cores (build included).
set -u
cd "$(dirname "$0")/.." || exit 2
repo=$(pwd)
out=$repo/build/mutants
mkdir -p "$out"

if [ $# -eq 0 ]; then
	set --
	for p in tests/mutants/*.patch; do
		n=${p##*/}
		set -- "$@" "${n%.patch}"
	done
fi

field() {
	sed -n "s/^$1: *//p" "$2" | head -n 1
}

# The tree to mutate: tracked files as they are in the work tree.
rev=$(git stash create 2>/dev/null)
rev=${rev:-HEAD}

killed=0
survived=0
inconclusive=0
summary=$out/summary.txt
: >"$summary"

verdict() {
	echo "$1" | tee -a "$summary"
}

for m in "$@"; do
	p=$repo/tests/mutants/$m.patch
	if [ ! -f "$p" ]; then
		verdict "inconclusive - mutant $m: no $p"
		inconclusive=$((inconclusive + 1))
		continue
	fi
	test=$(field Test "$p")
	expect=$(field Expect "$p")
	env=$(field Env "$p")
	if [ -z "$test" ] || [ -z "$expect" ] ||
	   [ ! -f "tests/cluster/$test.sh" ]; then
		verdict "inconclusive - mutant $m: Test or Expect missing or unknown"
		inconclusive=$((inconclusive + 1))
		continue
	fi
	dir=$out/$m
	src=$dir/src
	rm -rf "$dir"
	mkdir -p "$src"
	git archive "$rev" | tar -x -C "$src"
	# Files not tracked yet (tracked ones may already use them).
	git ls-files -z --others --exclude-standard |
		tar --null -T - -cf - | tar -xf - -C "$src"
	# The guest's initramfs does not depend on the mutant: reuse it.
	if ls build/cluster/initramfs-*.cpio >/dev/null 2>&1; then
		mkdir -p "$src/build/cluster"
		cp build/cluster/initramfs-*.cpio "$src/build/cluster/"
	fi
	if ! patch -d "$src" -p1 --quiet --no-backup-if-mismatch <"$p" \
	     >"$dir/patch.log" 2>&1; then
		verdict "inconclusive - mutant $m: the patch does not apply (see $dir/patch.log)"
		inconclusive=$((inconclusive + 1))
		continue
	fi
	if ! make -C "$src" -j"$(nproc)" all >"$dir/build.log" 2>&1; then
		verdict "inconclusive - mutant $m: build failed (see $dir/build.log)"
		inconclusive=$((inconclusive + 1))
		continue
	fi
	start=$(date +%s)
	# shellcheck disable=SC2086 # Env holds VAR=VALUE words
	env $env sh "$src/tests/run.sh" cluster "$test\$" >"$dir/run.log" 2>&1
	took=$(($(date +%s) - start))
	logs=$src/build/cluster/$test
	if grep -q "^ok - cluster $test " "$dir/run.log"; then
		verdict "SURVIVED - mutant $m: $test passed (${took}s) although $(field Breaks "$p")"
		survived=$((survived + 1))
	elif grep -q "^not ok - cluster $test " "$dir/run.log" &&
	     grep -a -h 'FAIL: ' "$logs"/node*.log 2>/dev/null |
	     grep -q -F -- "$expect"; then
		verdict "killed - mutant $m: $test failed (${took}s) at \"$expect\""
		killed=$((killed + 1))
	else
		verdict "inconclusive - mutant $m: $test did not fail at \"$expect\" (${took}s; see $dir/run.log, $logs)"
		inconclusive=$((inconclusive + 1))
	fi
	# Every check that failed, for the record.
	grep -a -h 'FAIL: ' "$logs"/node*.log 2>/dev/null | sed "s/^/    /" |
		tr -d '\r' >>"$summary"
	# Keep the logs, drop the build.
	mv "$logs" "$dir/logs" 2>/dev/null
	rm -rf "$src"
done
echo "$killed killed, $survived survived, $inconclusive inconclusive" |
	tee -a "$summary"
[ "$survived" -eq 0 ] && [ "$inconclusive" -eq 0 ]
