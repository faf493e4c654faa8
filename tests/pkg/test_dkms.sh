#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# scripts/dkms-build.sh: DKMS builds krcore.ko from the tree 'make
# install-dkms' makes (dkms/dkms.conf), for the guest kernel, in a private
# DKMS tree under build/dkms: the module is built for that kernel, has the
# sources' version and every parameter, and nothing lands in /usr/src,
# /var/lib/dkms or /lib/modules. It leaves build/dkms/<kernel>/krcore.ko
# for the cluster test t_dkms. Needs root (dkms) and the dkms package.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || pkg_skip "needs root (dkms)"
command -v dkms >/dev/null || pkg_skip "no dkms (make deps)"
kver=$(scripts/kver.sh) || pkg_skip "no kernel with headers (make deps)"
ver=$(sed -n 's/^#define KRC_VERSION[[:space:]]*"\(.*\)"/\1/p' kernel/core/core.h)
tmp=$(mktemp -d /tmp/krc-pkg-dkms.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ko=$BUILD/dkms/$kver/krcore.ko

pkg_host_state >"$tmp/before"
pkg_check "scripts/dkms-build.sh $kver" 'rm -f "$ko" && sh scripts/dkms-build.sh "$kver"'
pkg_check "krcore.ko for $kver, version $ver, signed with the private key" \
	'[ "$(modinfo -F vermagic "$ko" | cut -d " " -f 1)" = "$kver" ] &&
	 [ "$(modinfo -F version "$ko")" = "$ver" ] &&
	 [ "$(modinfo -F signer "$ko")" = "DKMS module signing key" ] &&
	 [ -f "$BUILD/dkms/mok.key" ]'
pkg_check "the same parameters as the sources declare" \
	'[ "$(modinfo -F parm "$ko" | cut -d: -f1 | sort)" = \
	   "$(sed -n "s/.*module_param\(_named\|_cb\)(\([a-z_0-9]*\),.*/\2/p" \
		$(find kernel -name "*.c" ! -name "*.mod.c") | sort)" ]'
pkg_host_state >"$tmp/after"
pkg_check "nothing written outside build/dkms" 'diff "$tmp/before" "$tmp/after"'
pkg_finish
