#!/bin/sh
# Build the tiny initramfs of a test node: busybox-static, the guest kernel's
# virtio and 9p modules (uncompressed, dependencies first) and our /init.
# usage: mkinitramfs.sh KERNEL_VERSION OUTPUT [MODULE_BASE]
# MODULE_BASE: the modules are under MODULE_BASE/lib/modules (the debug
# kernel's build/debug-kernel/mods; default /).
set -eu
kver=$1
out=$2
base=${3:-/}
here=$(cd "$(dirname "$0")" && pwd)
mods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
netfs fscache 9pnet 9pnet_virtio 9p"

[ -x /bin/busybox ] || { echo "mkinitramfs: busybox-static missing (make deps)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib/modules" "$tmp/proc" "$tmp/sys" "$tmp/dev"
cp /bin/busybox "$tmp/bin/busybox"
cp "$here/initramfs-init" "$tmp/init"
chmod 755 "$tmp/init"
for m in $mods; do
	f=$(modinfo -b "$base" -k "$kver" -F filename "$m" 2>/dev/null) || true
	if [ -z "$f" ] || [ ! -f "$f" ]; then
		# Built into this kernel: nothing to load.
		continue
	fi
	case "$f" in
	*.ko) cp "$f" "$tmp/lib/modules/$m.ko" ;;
	*.ko.xz) xz -dc "$f" >"$tmp/lib/modules/$m.ko" ;;
	*.ko.zst) zstd -qdc "$f" >"$tmp/lib/modules/$m.ko" ;;
	*) echo "mkinitramfs: unknown module format $f" >&2; exit 1 ;;
	esac
	echo "$m" >>"$tmp/modules.order"
done
touch "$tmp/modules.order"
(cd "$tmp" && find . | cpio -o -H newc --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
