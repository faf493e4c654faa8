#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The layers of krcore.ko run one way: data uses conn, conn uses control,
# everything uses core, and main.c (the top) uses them all. A layer reaches
# up only through handlers the layer above registered (README.md,
# "Architecture"). This checks it, twice:
#
#   includes  every #include "LAYER/..." of a file of kernel/LAYER0/ names
#             LAYER0 itself or a layer below it; no file reaches another
#             directory with "../" (but the ABI header, ../include/uapi/);
#   symbols   (once the module is built) no object file of a layer has an
#             undefined symbol that an object file of a layer above it
#             defines: calls, variables, everything the linker resolves.
#
# Allowed exceptions, "FILE SYMBOL-OR-HEADER reason", one per line below;
# each must say why. There are none.
EXCEPTIONS=''
#
#   scripts/layers.sh        prints what climbs; exit 0 only if nothing does
set -u
cd "$(dirname "$0")/../kernel" || exit 2

rank() {
	case "$1" in
	core/*) echo 0 ;;
	control/*) echo 1 ;;
	conn/*) echo 2 ;;
	data/*) echo 3 ;;
	main.*) echo 4 ;;
	*) echo 9 ;;
	esac
}

excepted() {
	printf '%s\n' "$EXCEPTIONS" | grep -q "^$1 $2 "
}

bad=0
files=0
refs=0
for f in main.c core/*.[ch] control/*.[ch] conn/*.[ch] data/*.[ch]; do
	[ -f "$f" ] || continue
	files=$((files + 1))
	r=$(rank "$f")
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		refs=$((refs + 1))
		case "$inc" in
		../include/uapi/*) continue ;;
		../*)
			excepted "$f" "$inc" && continue
			echo "layers: $f includes \"$inc\": outside its layer's reach"
			bad=$((bad + 1))
			continue ;;
		*/*) ;;
		*) continue ;;	# common/ (portable C below every layer)
		esac
		ri=$(rank "$inc")
		if [ "$ri" -gt "$r" ]; then
			excepted "$f" "$inc" && continue
			echo "layers: $f includes \"$inc\", a layer above its own"
			bad=$((bad + 1))
		fi
	done
done

# Symbols: who defines what, then who uses what.
objs=$(ls main.o core/*.o control/*.o conn/*.o data/*.o 2>/dev/null)
nsyms=0
if [ -n "$objs" ]; then
	defs=$(for o in $objs; do
		nm --defined-only -g "$o" | awk -v f="${o%.o}" '{print $3, f}'
	done)
	for o in $objs; do
		f=${o%.o}
		r=$(rank "$f")
		for s in $(nm -u "$o" | awk '{print $2}'); do
			d=$(printf '%s\n' "$defs" | awk -v s="$s" '$1 == s {print $2; exit}')
			[ -n "$d" ] || continue
			nsyms=$((nsyms + 1))
			if [ "$(rank "$d")" -gt "$r" ]; then
				excepted "$f.c" "$s" && continue
				echo "layers: $f.c uses $s of $d.c, a layer above its own"
				bad=$((bad + 1))
			fi
		done
	done
fi
if [ "$bad" -ne 0 ]; then
	echo "layers: $bad upward references"
	exit 1
fi
echo "layers: $files files, $refs includes and $nsyms symbol references, none upward"
