#!/bin/sh
# Compile portable files of common/ as a throwaway kernel module against the
# guest kernel headers, to prove they build in the kernel with -Werror.
#   scripts/kbuild-check.sh common/hash.c common/meta_table.c ...
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
kver=$(scripts/kver.sh)
dir=$(mktemp -d /tmp/krc-kbuild.XXXXXX)
trap 'rm -rf "$dir"' EXIT
objs=""
for f in "$@"; do
	b=$(basename "$f" .c)
	cp "$f" "$dir/$b.c"
	objs="$objs $b.o"
done
cp common/*.h "$dir/"
mkdir -p "$dir/include/uapi"
cp include/uapi/krcore.h "$dir/include/uapi/"
printf '#include <linux/module.h>\nMODULE_LICENSE("GPL");\n' >"$dir/krcchk_lic.c"
{
	echo "obj-m += krcchk.o"
	echo "krcchk-y :=$objs krcchk_lic.o"
	echo "ccflags-y := -I\$(src) -Werror"
} >"$dir/Kbuild"
sed -i 's#"\.\./include/uapi/krcore.h"#"include/uapi/krcore.h"#' "$dir"/*.h
make -s -C "/lib/modules/$kver/build" M="$dir" modules 2>&1 | grep -v "Skipping BTF\|^$" || true
test -f "$dir/krcchk.ko" && echo "kbuild-check: ok" && exit 0
echo "kbuild-check: FAILED"
exit 1
