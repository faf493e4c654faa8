#!/bin/sh
# nodes: 1
# The module/library ABI check (include/uapi/krcore.h, "Versioning"):
# libkrcore built for a newer ABI than the module's is refused at
# krc_vq_open() with EPROTO and a clear message; users built against the
# frozen ABI 2 and ABI 3 headers (raw ioctls, no libkrcore) run on this
# newer module: lookup and qconnect (ABI 2), memory registration, the
# completion ring, qpush and qwait with data checked (ABI 3).
. "$KRC_REPO/tests/cluster/lib.sh"

check "module loads (MetaServer here)" 'krc_load meta_host=1'
cur=$(sed -n 's/^#define KRCORE_ABI_VERSION[[:space:]]*//p' "$KRC_REPO/include/uapi/krcore.h")
log "current ABI $cur"

out=$("$KRC_TBIN/abi_check")
rc=$?
echo "$out"
check "the library as built opens a VQ" \
	'[ $rc -eq 0 ] && eq "$(kv open "$out")" 0'
check "it and the module speak ABI $cur" \
	'eq "$(kv lib_abi "$out")" "$cur" && eq "$(kv module_abi "$out")" "$cur"'

out=$("$KRC_TBIN/abi_check_next")
rc=$?
echo "$out"
check "a library built for ABI $((cur + 1)) says so" \
	'eq "$(kv lib_abi "$out")" $((cur + 1))'
check "it is refused: EPROTO" '[ $rc -ne 0 ] && eq "$(kv open "$out")" -71'
check "with a clear message (module too old: ABI $cur < $((cur + 1)))" \
	'echo "$out" | grep -q "^msg=krcore.ko .* has ABI $cur < $((cur + 1)): too old (Protocol error)$"'

for old in 2 3; do
	out=$("$KRC_TBIN/abi_old$old" "$KRC_IP")
	rc=$?
	echo "$out"
	check "ABI $old user: built against the frozen ABI $old header" \
		'echo "$out" | grep -qx "built against ABI $old"'
	check "ABI $old user: every step works on the ABI $cur module" \
		'[ $rc -eq 0 ] && ! echo "$out" | grep -q "^FAIL"'
	check "ABI $old user: connected" 'echo "$out" | grep -qx "ok: QCONNECT"'
done
check "ABI 3 user: WRITE and READ data checked" \
	'echo "$out" | grep -qx "ok: the WRITE wrote and the READ read the data"'
check "ABI 3 user: its QWAIT works" \
	'echo "$out" | grep -qx "ok: QWAIT (the ABI.s 8-byte structure)"'

check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
