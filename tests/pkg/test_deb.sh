#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The Debian packages, as a user gets them: 'make deb' builds them (out of
# tree), lintian finds nothing, dpkg -i installs the five together
# (krcore-dkms builds krcore.ko with DKMS for the guest kernel), a program
# built outside the tree with pkg-config's flags runs, krctl, the
# benchmarks and the man pages are there, Debian's UCX takes the
# transport of krcore-ucx when it is preloaded; reinstalling krcore-dkms (what
# an upgrade does) builds the module again; dpkg --purge leaves the host as
# it was. Needs root; skips when a krcore package is installed already
# (it is not this test's to remove).
# The module DKMS built is kept in build/dkms/<kernel>/ for the cluster
# test t_dkms. A DKMS signing key this run made (/var/lib/dkms/mok.*,
# none before) is removed with the packages.
. "$(dirname "$0")/lib.sh"

PKGS="krcore-dkms libkrcore0 libkrcore-dev krcore-tools krcore-ucx"
[ "$(id -u)" -eq 0 ] || pkg_skip "needs root (dpkg -i)"
for p in $PKGS; do
	if dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -qv "not-installed"; then
		pkg_skip "$p is installed on this host: not touching it"
	fi
done
kver=$(scripts/kver.sh) || pkg_skip "no kernel with headers (make deps)"
ver=$(sed -n 's/^#define KRC_VERSION[[:space:]]*"\(.*\)"/\1/p' kernel/core/core.h)
abi=$(sed -n 's/^#define KRCORE_ABI_VERSION[[:space:]]*//p' include/uapi/krcore.h)
debs=$BUILD/deb
tmp=$(mktemp -d /tmp/krc-pkg-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

pkg_check "make deb" make -s deb || pkg_finish
files=""
for p in $PKGS; do
	f=$(ls "$debs/${p}_${ver}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] && files="$files $f"
done
pkg_check "the five packages, version $ver" '[ $(echo $files | wc -w) -eq 5 ]' || pkg_finish
pkg_check "lintian: no error, warning, info, pedantic or experimental tag" \
	'lintian -I -E --pedantic "$debs"/krcore_${ver}_*.changes >"$tmp/lintian" 2>&1;
	 cat "$tmp/lintian"; ! grep -q "^[EWIPX]: " "$tmp/lintian"'

mok=""
[ -e /var/lib/dkms/mok.key ] || mok=new
pkg_host_state >"$tmp/before"
# shellcheck disable=SC2086
pkg_check "dpkg -i the five packages" dpkg -i $files
pkg_check "DKMS built and installed krcore $ver for $kver" \
	'dkms status krcore | grep -q "^krcore/$ver, $kver, [^:]*: installed"'
pkg_check "modinfo -k $kver krcore: the DKMS module, version $ver" \
	'[ "$(modinfo -k "$kver" -F filename krcore)" = "/lib/modules/$kver/updates/dkms/krcore.ko" ] &&
	 [ "$(modinfo -k "$kver" -F version krcore)" = "$ver" ]'
ex=/usr/share/doc/krcore-dkms/examples/krcore.conf
pkg_check "every option of the modprobe.d example is a parameter of the module" \
	'parms=" $(modinfo -k "$kver" -F parm krcore | cut -d: -f1 | tr "\n" " ") "; bad="";
	 for kv in $(sed -n "s/^#options krcore //p" "$ex"); do
		case "$parms" in *" ${kv%%=*} "*) ;; *) bad="$bad ${kv%%=*}" ;; esac
	 done; echo "not parameters:$bad"; [ -n "$(sed -n "s/^#options krcore //p" "$ex")" ] && [ -z "$bad" ]'
pkg_check "udev rule: /dev/krcore to group rdma, which exists" \
	'grep -q "KERNEL==\"krcore\".*GROUP=\"rdma\"" /lib/udev/rules.d/60-krcore.rules && getent group rdma'
mkdir -p "$BUILD/dkms/$kver"
cp "/lib/modules/$kver/updates/dkms/krcore.ko" "$BUILD/dkms/$kver/krcore.ko" 2>/dev/null

pkg_check "pkg-config: -I/usr/include/krcore and -lkrcore" \
	'[ "$(pkg-config --cflags libkrcore | sed "s/ *$//")" = "-I/usr/include/krcore" ] &&
	 [ "$(pkg-config --libs libkrcore | sed "s/ *$//")" = "-lkrcore" ]'
cp tests/pkg/prog.c "$tmp/"
pkg_check "a program outside the tree: cc \$(pkg-config --cflags --libs libkrcore)" \
	'cd "$tmp" && cc -Wall -Werror -o prog prog.c $(pkg-config --cflags --libs libkrcore)'
pkg_check "it runs on /usr/lib/*/libkrcore.so.0$([ -e /dev/krcore ] || echo ", reports ENOENT without the module")" \
	'"$tmp/prog" >"$tmp/out"; rc=$?; cat "$tmp/out"; [ $rc -eq 0 ] &&
	 grep -qx "abi $abi" "$tmp/out" &&
	 lib=$(ldd "$tmp/prog" | sed -n "s/.*libkrcore\.so\.0 => \([^ ]*\) .*/\1/p") &&
	 [ "$(readlink -f "$lib")" = "$(readlink -f /usr/lib/x86_64-linux-gnu/libkrcore.so.0)" ] &&
	 { [ -e /dev/krcore ] || grep -q "^no module: /dev/krcore: krcore.ko is not loaded" "$tmp/out"; }'
pkg_check "and links statically with libkrcore.a" \
	'cd "$tmp" && cc -o prog-static prog.c $(pkg-config --cflags libkrcore) \
		"$(pkg-config --variable=libdir libkrcore)/libkrcore.a" && ./prog-static'
pkg_check "krctl: --help, and a clear error without the module" \
	'krctl --help | grep -q "krctl connect ADDR" &&
	 { [ -e /dev/krcore ] || { ! krctl status 2>"$tmp/err" && grep -q "not loaded" "$tmp/err"; }; }'
pkg_check "benchmarks in /usr/libexec/krcore print their usage" \
	'for b in read_bench connect_bench first_contact; do
		/usr/libexec/krcore/$b 2>"$tmp/$b"; [ $? -eq 2 ] && grep -q "^usage: $b" "$tmp/$b" || exit 1
	 done'
pkg_check "man: krctl(8), krcore(4), libkrcore(3), krc_qpop(3) (a link)" \
	'man -w 8 krctl && man -w 4 krcore && man -w 3 libkrcore &&
	 [ "$(readlink -f "$(man -w 3 krc_qpop)")" = "$(readlink -f "$(man -w 3 krc_qpush)")" ]'

# krcore-ucx: the transport where Debian's UCX keeps its modules, needing
# only UCX's libraries (libkrcore is linked in), bound to the libucx0 it
# was built against (UCX's internal ABI). Preloaded, UCX takes its
# component (its UCX_KRCORE_* settings); ucx_info -d lists the transport
# only where /dev/krcore opens (query_md_resources offers no memory
# domain elsewhere), so without the module it must list none and not fail.
m=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/ucx/libuct_krcore.so
pkg_check "krcore-ucx: $m, which needs no libkrcore.so" \
	'[ -f "$m" ] && dpkg -S "$m" | grep -q "^krcore-ucx:" &&
	 readelf -d "$m" | grep NEEDED && ! readelf -d "$m" | grep NEEDED | grep -q libkrcore &&
	 ! ldd "$m" | grep -q libkrcore && ! nm -D --defined-only "$m" | grep -q " krc_"'
pkg_check "krcore-ucx depends on exactly the installed libucx0" \
	'dep=$(dpkg-query -W -f "\${Depends}" krcore-ucx); echo "$dep";
	 echo "$dep" | grep -q "libucx0 (= $(dpkg-query -W -f "\${Version}" libucx0))"'
pkg_check "Debian's ucx_info takes its component (UCX_KRCORE_* settings)" \
	'LD_PRELOAD=$m ucx_info -cf 2>/dev/null | grep -qx "UCX_KRCORE_TX_BUFS=512"'
if [ -e /dev/krcore ]; then
	pkg_check "ucx_info -d lists Transport: krcore" \
		'LD_PRELOAD=$m ucx_info -d >"$tmp/ucx" 2>&1; rc=$?; cat "$tmp/ucx";
		 [ $rc -eq 0 ] && grep -q "Transport: krcore$" "$tmp/ucx"'
else
	pkg_check "ucx_info -d without /dev/krcore: no krcore transport, no error" \
		'LD_PRELOAD=$m ucx_info -d >"$tmp/ucx" 2>&1; rc=$?; cat "$tmp/ucx";
		 [ $rc -eq 0 ] && grep -q "Transport: self$" "$tmp/ucx" &&
		 ! grep -qi "krcore" "$tmp/ucx"'
fi
pkg_check "its documentation: /usr/share/doc/krcore-ucx/ucx.md" \
	'zgrep -q "LD_PRELOAD=" /usr/share/doc/krcore-ucx/ucx.md*'

pkg_check "reinstall krcore-dkms (an upgrade's path): the module is built again" \
	'dpkg -i "$debs"/krcore-dkms_${ver}_all.deb &&
	 dkms status krcore | grep -q "^krcore/$ver, $kver, [^:]*: installed"'

pkg_check "dpkg --purge the five packages" dpkg --purge $PKGS
pkg_check "no krcore left in DKMS nor in /lib/modules/$kver" \
	'[ -z "$(dkms status krcore)" ] && [ ! -e "/lib/modules/$kver/updates/dkms/krcore.ko" ] &&
	 [ ! -e /usr/src/krcore-$ver ] && ! modinfo -k "$kver" krcore'
pkg_check "no krcore-ucx left: $m" '[ ! -e "$m" ] && [ ! -e /usr/share/doc/krcore-ucx ]'
[ "$mok" = new ] && rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
pkg_host_state >"$tmp/after"
pkg_check "the host is as it was" 'diff "$tmp/before" "$tmp/after"'
pkg_finish
