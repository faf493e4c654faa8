#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make install as a new user runs it, after the plain 'make' of the tree
# (PREFIX /usr/local then): PREFIX=/usr must give a .pc that says /usr,
# the headers in include/krcore/ (the .pc's Cflags), the man pages and
# their links; a program built outside the tree with pkg-config's flags
# for that install compiles, links and runs. make install-dkms: the DKMS
# source tree, its dkms.conf naming the sources' version.
. "$(dirname "$0")/lib.sh"

[ -f "$BUILD/lib/libkrcore.a" ] || pkg_skip "nothing built in $BUILD (make all)"
tmp=$(mktemp -d /tmp/krc-pkg-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
d=$tmp/usr-root
ver=$(sed -n 's/^#define KRC_VERSION[[:space:]]*"\(.*\)"/\1/p' kernel/core/core.h)
abi=$(sed -n 's/^#define KRCORE_ABI_VERSION[[:space:]]*//p' include/uapi/krcore.h)

# The build tree's .pc as a plain 'make' leaves it (PREFIX /usr/local).
make -s -B "$BUILD/lib/pkgconfig/libkrcore.pc" >/dev/null
pkg_check "make install DESTDIR=... PREFIX=/usr" make -s install DESTDIR="$d" PREFIX=/usr
pc=$d/usr/lib/pkgconfig/libkrcore.pc
pkg_check "the .pc says prefix=/usr" 'grep -qx "prefix=/usr" "$pc" && ! grep -q /usr/local "$pc"'
pkg_check "headers in /usr/include/krcore/, none bare in /usr/include" \
	'[ -f "$d/usr/include/krcore/libkrcore.h" ] && [ -f "$d/usr/include/krcore/krcore.h" ] &&
	 [ -z "$(find "$d/usr/include" -maxdepth 1 -type f)" ]'
pcenv() {
	PKG_CONFIG_SYSROOT_DIR=$d PKG_CONFIG_LIBDIR=$d/usr/lib/pkgconfig pkg-config "$@"
}
pkg_check "pkg-config: Cflags -I/usr/include/krcore" \
	'[ "$(pcenv --cflags libkrcore | sed "s/ *$//")" = "-I$d/usr/include/krcore" ]'
cp tests/pkg/prog.c "$tmp/"
pkg_check "a program outside the tree builds with pkg-config's flags" \
	'(cd "$tmp" && cc -Wall -Werror -o prog prog.c $(pcenv --cflags --libs libkrcore))'
pkg_check "it runs on the installed libkrcore.so.0" \
	'LD_LIBRARY_PATH=$d/usr/lib "$tmp/prog" >"$tmp/out" && cat "$tmp/out" &&
	 grep -qx "abi $abi" "$tmp/out" &&
	 LD_LIBRARY_PATH=$d/usr/lib ldd "$tmp/prog" | grep -q "libkrcore.so.0 => $d/usr/lib/libkrcore.so.0"'
pkg_check "#include <krcore/libkrcore.h> works without pkg-config" \
	'sed "s|<libkrcore.h>|<krcore/libkrcore.h>|" "$tmp/prog.c" >"$tmp/prog2.c" &&
	 (cd "$tmp" && cc -Wall -Werror -c -o prog2.o -I"$d/usr/include" prog2.c)'
pkg_check "man pages: krctl(8), krcore(4), libkrcore(3), links to a group's page" \
	'[ -f "$d/usr/share/man/man8/krctl.8" ] && [ -f "$d/usr/share/man/man4/krcore.4" ] &&
	 [ -f "$d/usr/share/man/man3/libkrcore.3" ] &&
	 [ "$(readlink "$d/usr/share/man/man3/krc_qpop.3")" = krc_qpush.3 ] &&
	 [ "$(readlink "$d/usr/share/man/man3/krc_qconnect_gid.3")" = krc_qconnect.3 ]'
pkg_check "krctl installed in /usr/bin" '[ -x "$d/usr/bin/krctl" ]'

pkg_check "make install DESTDIR=... (default PREFIX): prefix=/usr/local" \
	'make -s install DESTDIR="$tmp/local" && grep -qx "prefix=/usr/local" "$tmp/local/usr/local/lib/pkgconfig/libkrcore.pc"'
pkg_check "LIBDIR=/usr/lib/x86_64-linux-gnu: the .pc's libdir follows" \
	'make -s install DESTDIR="$tmp/ma" PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu &&
	 grep -qx "libdir=\${exec_prefix}/lib/x86_64-linux-gnu" "$tmp/ma/usr/lib/x86_64-linux-gnu/pkgconfig/libkrcore.pc" &&
	 [ -f "$tmp/ma/usr/lib/x86_64-linux-gnu/libkrcore.so.0" ]'

# The UCX transport (docs/ucx.md): where Debian's UCX keeps its modules,
# needing only UCX's libraries (libkrcore linked in), and Debian's UCX
# takes its component when it is preloaded.
m=$tmp/ma/usr/lib/x86_64-linux-gnu/ucx/libuct_krcore.so
pkg_check "make install-ucx: /usr/lib/x86_64-linux-gnu/ucx/libuct_krcore.so" \
	'make -s install-ucx DESTDIR="$tmp/ma" PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu && [ -f "$m" ]'
pkg_check "it needs no libkrcore.so and exports no krc_ symbol" \
	'! ldd "$m" | grep -q libkrcore && ! nm -D --defined-only "$m" | grep -q " krc_"'
pkg_check "Debian's ucx_info takes its component (UCX_KRCORE_* settings)" \
	'LD_PRELOAD=$m ucx_info -cf 2>/dev/null | grep -qx "UCX_KRCORE_TX_BUFS=512"'

s=$tmp/dkms/usr/src/krcore-$ver
pkg_check "make install-dkms: /usr/src/krcore-$ver with kernel/, common/, include/uapi/" \
	'make -s install-dkms DESTDIR="$tmp/dkms" && [ -f "$s/kernel/Kbuild" ] && [ -f "$s/kernel/main.c" ] &&
	 [ -f "$s/common/card.c" ] && [ -f "$s/include/uapi/krcore.h" ] && [ ! -e "$s/kernel/krcore.mod.c" ]'
# The same kernel/ as the tree's, subdirectories and all: every source
# and build file, and the source of every object kernel/Kbuild links.
pkg_check "its kernel/ has every source of the tree's kernel/ and of kernel/Kbuild's objects" \
	'missing="";
	 for f in $(find kernel -name "*.[ch]" ! -name "*.mod.c") kernel/Kbuild kernel/Makefile; do
		[ -f "$s/$f" ] || missing="$missing $f"
	 done;
	 for o in $(sed -e :a -e "/\\\\$/N; s/\\\\\n//; ta" kernel/Kbuild | sed -n "s/^krcore-y *:= *//p"); do
		[ -f "$s/kernel/${o%.o}.c" ] || missing="$missing kernel/${o%.o}.c"
	 done;
	 echo "missing:$missing"; [ -z "$missing" ] &&
	 [ -z "$(find "$s" -name "*.o" -o -name "*.cmd" -o -name "*.ko" -o -name "*.mod*")" ]'
pkg_check "its dkms.conf: PACKAGE_VERSION=\"$ver\"" \
	'grep -qx "PACKAGE_VERSION=\"$ver\"" "$s/dkms.conf" && grep -qx "PACKAGE_NAME=\"krcore\"" "$s/dkms.conf"'
pkg_finish
