#!/bin/sh
# Print the version of the guest kernel: the newest kernel under /boot that has
# matching headers in /lib/modules/<version>/build. Never hard-coded.
set -eu
best=""
for img in /boot/vmlinuz-*; do
	[ -e "$img" ] || continue
	v=${img#/boot/vmlinuz-}
	[ -e "/lib/modules/$v/build/Makefile" ] || continue
	best=$(printf '%s\n%s\n' "$best" "$v" | sed '/^$/d' | sort -V | tail -n 1)
done
if [ -z "$best" ]; then
	echo "kver: no kernel image with matching headers (run 'make deps')" >&2
	exit 1
fi
echo "$best"
