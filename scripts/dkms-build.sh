#!/bin/sh
# Build krcore.ko with DKMS, as the krcore-dkms package does, but in a
# private tree under $BUILD/dkms: nothing goes to /usr/src, /var/lib/dkms
# or /lib/modules (the module signing key DKMS makes is private too).
#   scripts/dkms-build.sh [KVER]     (default: scripts/kver.sh, the guest's)
# Leaves the module at $BUILD/dkms/<KVER>/krcore.ko, where the cluster
# test t_dkms looks for it. Needs root (dkms insists) and the dkms package.
set -eu
cd "$(dirname "$0")/.."
build=${BUILD:-build}
kver=${1:-$(scripts/kver.sh)}
command -v dkms >/dev/null || { echo "dkms-build: no dkms (make deps)" >&2; exit 2; }
ver=$(sed -n 's/^#define KRC_VERSION[[:space:]]*"\(.*\)"/\1/p' kernel/core/core.h)
[ -n "$ver" ] || { echo "dkms-build: no KRC_VERSION in kernel/core/core.h" >&2; exit 2; }
top=$(pwd)/$build/dkms
rm -rf "${top:?}/root" "${top:?}/tree" "${top:?}/$kver"
mkdir -p "$top/tree" "$top/$kver"
make -s install-dkms DESTDIR="$top/root"
# DKMS takes its signing key from the environment when the framework
# configuration names none (Debian's names none).
export mok_signing_key="$top/mok.key" mok_certificate="$top/mok.pub"
set -- --dkmstree "$top/tree" --sourcetree "$top/root/usr/src"
dkms add -m krcore -v "$ver" "$@" >"$top/dkms.log" 2>&1 &&
	dkms build -m krcore -v "$ver" -k "$kver" "$@" >>"$top/dkms.log" 2>&1 || {
	cat "$top/dkms.log"
	find "$top/tree" -name make.log -exec tail -n 30 {} \;
	echo "dkms-build: dkms failed for $kver" >&2
	exit 1
}
ko=$(find "$top/tree/krcore/$ver/$kver" -path '*/module/krcore.ko*' | head -n 1)
[ -n "$ko" ] || { echo "dkms-build: dkms built no krcore.ko for $kver" >&2; exit 1; }
cp "$ko" "$top/$kver/"
echo "$top/$kver/${ko##*/}"
