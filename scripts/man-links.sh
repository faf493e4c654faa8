#!/bin/sh
# Print "NAME PAGE" for every name that a man page of man/ lists in its
# NAME section besides its own: 'make install' links NAME to PAGE (both
# file names, e.g. "krc_qconnect_gid.3 krc_qconnect.3").
set -eu
cd "$(dirname "$0")/.."
for page in man/*.[1-9]; do
	base=${page##*/}
	sec=${base##*.}
	# The NAME section: "name1, name2, ... \- what they do".
	names=$(sed -n '/^\.SH NAME/,/^\.SH /{/^\.SH /d;p;}' "$page" | tr '\n' ' ' |
		sed 's/ *\\-.*//' | tr ',' ' ')
	for name in $names; do
		[ "$name.$sec" = "$base" ] || echo "$name.$sec $base"
	done
done
