#!/bin/sh
# nodes: 3
# Debian's Open MPI, unmodified, over krcore (docs/ucx.md): mpirun on
# node0 starts one rank on each of three nodes through tools/krc-rsh (the
# nodes have no ssh), its pml ucx restricted to the krcore transport
# (UCX_TLS=krcore,self); tests/progs/mpi_check runs point-to-point sends
# of 8 B to 1 MiB around the ring, an allreduce and alltoalls, every
# byte checked on every rank.
. "$KRC_REPO/tests/cluster/lib.sh"

if [ "$KRC_NODE" = 0 ]; then
	check "module loads" 'krc_load meta_host=1'
	barrier meta
else
	barrier meta
	check "module loads" "krc_load meta_server=$(node_ip 0)"
fi
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
export KRC_RUN
"$KRC_REPO/tools/krc-rsh" -serve "$(node_ip "$KRC_NODE")" &
served=$!
barrier served

if [ "$KRC_NODE" = 0 ]; then
	hosts="$(node_ip 0):1,$(node_ip 1):1,$(node_ip 2):1"
	timeout 600 mpirun --allow-run-as-root -np 3 --host "$hosts" \
		--mca plm_rsh_agent "$KRC_REPO/tools/krc-rsh" \
		--mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include eth0 \
		--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
		--mca btl self --mca osc ^ucx \
		-x LD_PRELOAD="$KRC_REPO/build/ucx/libuct_krcore.so" \
		-x UCX_TLS=krcore,self -x UCX_LOG_LEVEL=info \
		"$KRC_TBIN/mpi_check" >"$KRC_RUN/mpi.out" 2>&1
	rc=$?
	cat "$KRC_RUN/mpi.out"
	check "mpirun over three nodes exits 0" '[ $rc = 0 ]'
	check "three ranks" 'grep -qx "mpi_check: 3 ranks" "$KRC_RUN/mpi.out"'
	for what in "ring send/recv of 8 bytes" "ring send/recv of 4000 bytes" \
		"ring send/recv of 65536 bytes" "ring send/recv of 1048576 bytes" \
		"allreduce of 4096 int64 sums" "alltoall of 4000 bytes per pair" \
		"alltoall of 65536 bytes per pair"; do
		check "MPI: $what, every byte" \
			'grep -qx "ok: $what" "$KRC_RUN/mpi.out"'
	done
	check "no FAIL" '! grep -q "^FAIL" "$KRC_RUN/mpi.out"'
	# UCX's own word (UCX_LOG_LEVEL=info) on the lanes it chose
	check "every rank's UCX chose krcore for its peers" \
		'[ "$(grep -c "ep_cfg\[[0-9]*\]: tag(krcore/krcore)" "$KRC_RUN/mpi.out")" -ge 3 ]'
	for n in 0 1 2; do
		: >"$KRC_RUN/rsh/$(node_ip $n)/stop"
	done
fi
barrier done 700
wait "$served"
check "module unloads (every VQ of MPI closed)" krc_unload
check "kernel log clean" dmesg_clean
finish
