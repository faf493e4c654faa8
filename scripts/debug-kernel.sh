#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The debug guest kernel of 'make test-debug': Debian's kernel source
# (/usr/src/linux-source-6.1.tar.xz, package linux-source) configured from
# 'make allnoconfig' plus tests/debug-kernel.config (KASAN, lockdep,
# DEBUG_ATOMIC_SLEEP, KFENCE, kmemleak, debug objects; virtio, 9p, Soft-RoCE),
# built once and cached under build/debug-kernel/:
#
#   bzImage             the kernel krcluster boots (KRC_KERNEL=debug)
#   kver                its release (uname -r in the nodes)
#   mods/lib/modules/   its modules; the nodes mount them at /lib/modules
#   krcore/kernel/krcore.ko   krcore.ko built against it (kernel/ untouched)
#
#   scripts/debug-kernel.sh [kernel|module|all]    (default all)
#   scripts/debug-kernel.sh selftest    check that the log scan catches a
#                                       leak, KASAN, lockdep, sleep in atomic
#
# The kernel is rebuilt only when the fragment, the source tarball or the
# recipe number below changed. The build runs at nice 10 with KRC_JOBS
# jobs (default 2).
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
what=${1:-all}
dir=$repo/${BUILD:-build}/debug-kernel
tarball=${KRC_KSRC_TARBALL:-$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)}
frag=$repo/tests/debug-kernel.config
jobs=${KRC_JOBS:-2}

die() {
	echo "debug-kernel: $*" >&2
	exit 1
}

# Bump when the way the kernel is built below changes.
recipe=1

stamp_of() {
	{
		echo "recipe $recipe"
		ls -l --time-style=+%s "$tarball" | awk '{ print $5, $6 }'
		cat "$frag"
	} | sha256sum | cut -d' ' -f1
}

build_kernel() {
	[ -n "$tarball" ] && [ -f "$tarball" ] ||
		die "no /usr/src/linux-source-*.tar.xz: run 'make deps'"
	for t in bc bison flex gcc make perl depmod; do
		command -v "$t" >/dev/null || die "$t missing: run 'make deps'"
	done
	[ -f /usr/include/libelf.h ] || die "libelf-dev missing: run 'make deps'"
	[ -f /usr/include/openssl/opensslv.h ] || die "libssl-dev missing: run 'make deps'"
	stamp=$(stamp_of)
	if [ -f "$dir/bzImage" ] && [ -f "$dir/kver" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ]; then
		echo "debug-kernel: cached $dir/bzImage ($(cat "$dir/kver"))"
		return 0
	fi
	mkdir -p "$dir"
	base=$(basename "$tarball" .tar.xz)
	src=$dir/$base
	if [ ! -f "$src/Makefile" ]; then
		echo "debug-kernel: extracting $tarball"
		rm -rf "$src"
		tar -C "$dir" -xf "$tarball"
		[ -f "$src/Makefile" ] || die "$tarball did not give $src"
	fi
	start=$(date +%s)
	echo "debug-kernel: configuring $src (allnoconfig + $frag)"
	make -s -C "$src" ARCH=x86_64 KCONFIG_ALLCONFIG="$frag" allnoconfig
	# Every line of the fragment must have survived (a missing dependency
	# silently drops an option).
	bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) want=$line ;;
		"# CONFIG_"*" is not set") want=$line ;;
		*) continue ;;
		esac
		sym=$(echo "$want" | sed -e 's/^# //' -e 's/[= ].*//')
		got=$(grep -E "^$sym=|^# $sym is not set" "$src/.config" || true)
		if [ "$got" != "$want" ]; then
			echo "debug-kernel: wanted '$want', got '${got:-nothing}'" >&2
			bad=1
		fi
	done <"$frag"
	[ $bad -eq 0 ] || die "the configuration lost options of $frag"
	echo "debug-kernel: building bzImage and modules (make -j$jobs at nice 10; a log in $dir/build.log)"
	if ! nice -n 10 make -C "$src" ARCH=x86_64 -j"$jobs" bzImage modules >"$dir/build.log" 2>&1; then
		tail -n 40 "$dir/build.log"
		die "kernel build failed (log: $dir/build.log)"
	fi
	kver=$(make -s -C "$src" kernelrelease)
	rm -rf "$dir/mods"
	make -s -C "$src" ARCH=x86_64 INSTALL_MOD_PATH="$dir/mods" modules_install >>"$dir/build.log" 2>&1 ||
		die "modules_install failed (log: $dir/build.log)"
	# The nodes see only mods/ (not the source tree behind these links).
	rm -f "$dir/mods/lib/modules/$kver/build" "$dir/mods/lib/modules/$kver/source"
	cp "$src/arch/x86/boot/bzImage" "$dir/bzImage"
	echo "$kver" >"$dir/kver"
	echo "$stamp" >"$dir/stamp"
	rm -rf "$dir/krcore"
	echo "debug-kernel: built $kver in $(($(date +%s) - start))s"
	echo "$(date -u +%FT%TZ) $kver $(($(date +%s) - start))s -j$jobs" >>"$dir/build-times"
}

# krcore.ko against the debug kernel, from a copy of the sources (an
# out-of-tree build writes next to its sources; kernel/krcore.ko stays the
# stock kernel's). -g: faddr2line can name file:line of a report's frames.
build_module() {
	[ -f "$dir/kver" ] || die "no debug kernel yet: scripts/debug-kernel.sh kernel"
	src=$dir/$(basename "$tarball" .tar.xz)
	mkdir -p "$dir/krcore"
	# Sources only (no objects of the stock kernel's build), with kernel/'s
	# layer directories; cp -p keeps their times, so an unchanged file is
	# not rebuilt. A source the tree no longer has (moved or removed) goes
	# from the copy too, so the copy is the tree's kernel/.
	(cd "$repo" && find kernel common include -type f \
		\( -name '*.[ch]' -o -name Kbuild -o -name Makefile \)) |
	while IFS= read -r f; do
		mkdir -p "$dir/krcore/$(dirname "$f")"
		cmp -s "$repo/$f" "$dir/krcore/$f" || cp -p "$repo/$f" "$dir/krcore/$f"
	done
	(cd "$dir/krcore" && find kernel common include -type f \
		\( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) ! -name '*.mod.c') |
	while IFS= read -r f; do
		[ -e "$repo/$f" ] || rm -f "$dir/krcore/$f"
	done
	rm -f "$dir/krcore/kernel/krcore.ko"
	make -s -C "$src" ARCH=x86_64 M="$dir/krcore/kernel" KCFLAGS=-g modules ||
		die "krcore.ko does not build against the debug kernel"
	echo "debug-kernel: $dir/krcore/kernel/krcore.ko"
}

# A positive control of the log scan: four nodes each load
# tests/debug-selftest/krc_dbg_selftest.ko with one bug on purpose (a leak,
# an out-of-bounds read, an AB-BA lock order, a sleep under a spinlock);
# every node must fail, on the report of the matching bug finder.
selftest() {
	[ -f "$dir/kver" ] || die "no debug kernel yet: scripts/debug-kernel.sh kernel"
	src=$dir/$(basename "$tarball" .tar.xz)
	st=$dir/selftest
	mkdir -p "$st"
	for f in krc_dbg_selftest.c Kbuild; do
		cmp -s "$repo/tests/debug-selftest/$f" "$st/$f" || cp -p "$repo/tests/debug-selftest/$f" "$st/$f"
	done
	make -s -C "$src" ARCH=x86_64 M="$st" modules || die "the self-test module does not build"
	out=$repo/${BUILD:-build}/cluster/debug/selftest
	rm -rf "$out"
	mkdir -p "$out"
	# Every node is meant to fail: the summary names each one's first report.
	KRC_KERNEL=debug "$repo/tools/krcluster" -n 4 -t "${KRC_SELFTEST_TIMEOUT:-1200}" -o "$out" -- \
		'set -- leak kasan lockdep sleep; shift $KRC_NODE; insmod '"$st"'/krc_dbg_selftest.ko what=$1 && rmmod krc_dbg_selftest' \
		>"$out/summary" 2>&1 || true
	ok=0
	i=0
	for want in 'leak' 'KASAN' 'possible circular locking' 'sleeping function called from invalid context'; do
		line=$(grep "node$i: FAIL" "$out/summary" || true)
		case "$line" in
		*"$want"*) echo "debug-kernel: selftest node$i ok: $line" ;;
		*) echo "debug-kernel: selftest node$i: the log scan missed '$want': ${line:-node passed}" >&2
		   ok=1 ;;
		esac
		i=$((i + 1))
	done
	[ $ok -eq 0 ] || die "selftest failed (logs in $out)"
	echo "debug-kernel: selftest passed: each bug finder's report fails its node"
}

case "$what" in
kernel) build_kernel ;;
module) build_module ;;
all) build_kernel; build_module ;;
selftest) selftest ;;
*) die "usage: scripts/debug-kernel.sh [kernel|module|all|selftest]" ;;
esac
