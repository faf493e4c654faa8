#!/bin/sh
# Run the kernel's checkpatch.pl (from Debian's linux-source tarball,
# extracted once into build/checkpatch) on the given C files, or on every
# C file of the project. Exit 0 only if it finds no error and no warning.
set -eu
cd "$(dirname "$0")/.."
dir=build/checkpatch
cp=$(find "$dir" -name checkpatch.pl 2>/dev/null | head -n 1)
if [ -z "$cp" ]; then
	tarball=$(ls /usr/src/linux-source-*.tar.* 2>/dev/null | sort -V | tail -n 1)
	[ -n "$tarball" ] || { echo "checkpatch: no /usr/src/linux-source-*.tar.* (make deps)" >&2; exit 2; }
	mkdir -p "$dir"
	tar -xf "$tarball" -C "$dir" --wildcards '*/scripts/checkpatch.pl' \
		'*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
	cp=$(find "$dir" -name checkpatch.pl | head -n 1)
fi
if [ $# -eq 0 ]; then
	set -- $(git ls-files '*.c' '*.h' 2>/dev/null || find kernel common lib tools tests bench include -name '*.[ch]')
fi
# User-space code follows the kernel style too, minus kernel-only rules.
perl "$cp" --no-tree --quiet --show-types --strict -f \
	--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES,PREFER_KERNEL_TYPES,NEW_TYPEDEFS,CAMELCASE,PREFER_DEFINED_ATTRIBUTE_MACRO,SPLIT_STRING,COMMIT_MESSAGE \
	"$@"
