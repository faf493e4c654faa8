#!/bin/sh
# nodes: 2
# timeout: 600
# The ABI contract (issue 8 part 3): every statement of
# include/uapi/krcore.h that can be provoked on two nodes, checked against
# the running module by tests/progs/abi_contract.c (one "ok:"/"FAIL:"
# line per statement): sizes and command numbers, VERSION, unknown
# commands, every qconnect errno that can be provoked (EHOSTUNREACH while
# the MetaServer is away, EBUSY from a peer at its half-open cap,
# ETIMEDOUT, ESTALE, ENOSPC, ENXIO, EINVAL for flags, zero GID and ports
# above 65535, EFAULT, EISCONN), qpush's errno/reason for every malformed
# request and its write-back on every -1 path (an unreadable array, EFAULT
# mid-batch, EAGAIN, EBUSY/THROTTLED, a forked child's EACCES), ring and
# mapping rules, QWAIT's returns, a READ's byte_len, the culprit VQ of a
# remote access error staying usable, loopback rkeys, two-sided messages,
# the DATAGRAM path's outputs (under dg_policy 3) and F_RC keeping a
# qconnect off it (every RC statement asks F_RC: they hold whatever the
# default).
# The data-plane doc must say what the header says about over-long
# requests. qconnect's 60 s timeout cap and its EINTR take a minute more:
# `ABI_SLOW=1 abi_contract main ...` on a node checks them.
. "$KRC_REPO/tests/cluster/lib.sh"
META=$(node_ip 0)
INFO=$KRC_RUN/srv.info
AC=$KRC_TBIN/abi_contract

if [ "$KRC_NODE" = 0 ]; then
	barrier nometa 200
	check "module loads" 'krc_load meta_host=1'
	# The busy check: this node refuses every handshake (half-open cap).
	param max_half_open 0
	"$KRC_TBIN/dp_serve" "$INFO" &
	srv=$!
	barrier up
	barrier busy
	param max_half_open 256
	barrier uncapped
	barrier done 400
	touch "$INFO.stop"
	check "server process done" "wait $srv"
else
	check "sizes, command numbers and limits of the header" '"$AC" static'
	# The MetaServer is not loaded yet: no card can be looked up.
	check "module loads before the MetaServer" "krc_load meta_server=$META"
	check "qconnect with the MetaServer away" '"$AC" nometa "$META"'
	barrier nometa 200
	barrier up
	check "registered with the MetaServer" \
		'wait_for 60 "krctl status | grep -q \"metaserver: registered\""'
	check "qconnect to a peer at its half-open cap" '"$AC" busy "$META"'
	barrier busy
	barrier uncapped
	doc=$(tr '\n' ' ' <"$KRC_REPO/docs/data-plane.md" | tr -s ' ')
	check "docs/data-plane.md: an over-long READ/WRITE is EMSGSIZE/TOO_LONG, as in the header" \
		'echo "$doc" | grep -q "total length (1 GiB for READ/WRITE, 4080 B for SEND: EMSGSIZE, reason TOO_LONG)" &&
		 grep -q "EMSGSIZE      longer than the connection carries" "$KRC_REPO/include/uapi/krcore.h"'
	check "every other statement of the header, against the module" \
		'"$AC" main "$META" "$INFO" "$KRC_IP"'
	barrier done 400
fi
barrier end
check "every VQ closed" 'eq "$(counter vq_created)" "$(counter vq_destroyed)"'
check "module unloads" krc_unload
check "kernel log clean" dmesg_clean
finish
