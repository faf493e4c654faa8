// SPDX-License-Identifier: BSD-2-Clause
/*
 * dg_faa - fetch-and-adds that must each execute exactly once, across a
 * stream that fails and is replaced (tests/cluster/t_dg_hostile.sh).
 *
 *   dg_faa PEER INFO N FAIL_AT
 *
 * On a VQ to PEER (INFO: its dp_serve buffer; the counter is 1 KiB
 * before its end, clear of the dp_* scenarios' areas): first a READ whose
 * reply fails this node's stream (fault_dg_fail_after=1, as a reloaded peer's
 * STALE reply does), so that the first FAA is the first datagram of a new
 * stream; then one FAA +1 at a time, N of them (the first returns the
 * counter before them); before the FAIL_AT-th the stream is failed again
 * the same way: that FAA executed but completes NOT_EXECUTED_OR_UNKNOWN,
 * and the ones after it go on a third stream (where the peer, with
 * fault_dg_replay_old, gets the first FAA's datagram once more). Then the
 * counter is READ. Prints
 *   dg_faa: before=B after=A ok=K unknown=U other=O
 * The counter must have moved by exactly N: no FAA lost, none twice.
 */
#include "tp.h"

#define COUNT_OFF	(TP_SRV_SIZE - 1024)

static void set_param(const char *name, const char *val)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/krcore/parameters/%s", name);
	f = fopen(path, "w");
	if (!f || fputs(val, f) < 0 || fclose(f))
		tp_die("dg_faa: cannot set %s", name);
}

static uint64_t read_counter(struct krc_vq *vq, uint64_t *buf, uint32_t lkey,
			     uint64_t a, uint32_t k)
{
	if (krc_read_sync(vq, buf, lkey, 8, a, k, 60000))
		tp_die("dg_faa: READ of the counter: %s", krc_errmsg());
	return *buf;
}

int main(int argc, char **argv)
{
	unsigned int n, fail_at, i, ok = 0, unknown = 0, other = 0;
	uint64_t raddr, before, after, *buf;
	struct krcore_qconnect qc;
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	struct krc_vq *vq;
	struct krc_mr mr;
	uint32_t rkey;

	if (argc != 5)
		tp_die("usage: dg_faa PEER INFO N FAIL_AT");
	n = (unsigned int)atoi(argv[3]);
	fail_at = (unsigned int)atoi(argv[4]);
	tp_read_info(argv[2], &raddr, &rkey);
	vq = tp_connect(argv[1], 0, &qc);
	if (!(qc.path & KRCORE_PATH_DATAGRAM))
		tp_die("dg_faa: not on the datagram path");
	buf = tp_reg(vq, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr);
	/* A new stream: the READ's reply fails the one it went on. */
	set_param("fault_dg_fail_after", "1");
	krc_read_sync(vq, buf, mr.lkey, 8, raddr + COUNT_OFF, rkey, 60000);
	before = ~0ULL;
	for (i = 1; i <= n; i++) {
		if (i == fail_at)
			set_param("fault_dg_fail_after", "1");
		tp_wr(&wr, KRCORE_WR_ATOMIC_FAA, buf + 1, mr.lkey, 8,
		      raddr + COUNT_OFF, rkey, i, KRCORE_WR_SIGNALED);
		wr.compare_add = 1;
		tp_push(vq, &wr, 1);
		if (tp_pop(vq, &cqe, 1, 60000) != 1)
			tp_die("dg_faa: FAA %u never completed", i);
		if (i == 1 && cqe.status == KRCORE_WC_SUCCESS)
			before = buf[1];
		if (cqe.status == KRCORE_WC_SUCCESS)
			ok++;
		else if (cqe.status == KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN)
			unknown++;
		else
			other++;
	}
	after = read_counter(vq, buf, mr.lkey, raddr + COUNT_OFF, rkey);
	printf("dg_faa: before=%llu after=%llu ok=%u unknown=%u other=%u\n",
	       (unsigned long long)before, (unsigned long long)after, ok,
	       unknown, other);
	krc_vq_close(vq);
	return 0;
}
