// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_flood - the bounds of a shared send queue and of completion rings
 * hold under a flood, and nothing is lost. Four VQs of this process on
 * one shared QP. 1: each in turn posts 512 READs of 64 KiB at once: the
 * first two get their share of the send queue (VQ_FULL), the next ones
 * QP_FULL once qp_depth requests are outstanding; all complete, in
 * order. 2: without reading a completion, each VQ is pushed until its
 * completion ring would be full: exactly ring entries complete, none
 * lost. 3: 5000 small READs the normal way, round robin.
 *
 *   dp_flood ADDR INFO
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dp/helpers.h"

#define FLOOD_VQS	4

struct flood {
	struct krc_vq *vq[FLOOD_VQS];
	struct krcore_qconnect qc[FLOOD_VQS];
	uint8_t *buf;
	struct krc_mr mr;
	struct krcore_wr small[64];
	int posted[FLOOD_VQS];
	int got[FLOOD_VQS];
};

/* 1: 512 big READs from each VQ in turn: VQ_FULL, then QP_FULL. */
static int flood_queue(struct flood *f, const struct dp_remote *r,
		       struct krcore_wr *wr)
{
	unsigned long depth = dp_param("qp_depth");
	unsigned long share = depth * dp_param("vq_qp_share") / 100;
	int total = 0, qpfull = 0, n, i, v, early;
	struct krcore_cqe cqe[64];

	for (i = 0; i < 512; i++)
		fill(&wr[i], KRCORE_WR_READ, f->buf + (i % 16) * (64 << 10),
		     f->mr.lkey, 64 << 10, r->addr + (i % 32) * (64 << 10),
		     r->rkey, (uint64_t)i);
	for (v = 0; v < FLOOD_VQS; v++) {
		const struct krcore_qpush *res;

		n = krc_qpush(f->vq[v], wr, 512);
		res = krc_qpush_result(f->vq[v]);
		f->posted[v] = n > 0 ? n : 0;
		/*
		 * A READ that completed while the batch was being posted gave
		 * its place back: its completion is in the ring by now.
		 */
		early = dp_ring_available(f->vq[v]);
		printf(DP_TAG ": flood: VQ %d: 512 READs of 64 KiB: %d posted "
		       "(%d done meanwhile), then %s\n",
		       v, f->posted[v], early, krc_errmsg());
		if (n >= 512 || (n < 0 && n != -EAGAIN) || res->error != EAGAIN)
			FAIL("flood: VQ %d: qpush of 512 returned %d (error %u)",
			     v, n, res->error);
		if (v < 2 && (f->posted[v] < (int)share || early < 0 ||
			      f->posted[v] > (int)share + early ||
			      res->reason != KRCORE_R_VQ_FULL))
			FAIL("flood: VQ %d: %d posted, %d done (reason %u), "
			     "want %lu outstanding, VQ_FULL",
			     v, f->posted[v], early, res->reason, share);
		if (res->reason == KRCORE_R_QP_FULL && !qpfull++ &&
		    total + f->posted[v] < (int)depth)
			FAIL("flood: QP_FULL with %d posted in all, the queue holds %lu",
			     total + f->posted[v], depth);
		total += f->posted[v];
	}
	if (!qpfull)
		FAIL("flood: the shared send queue (%lu) never refused a request: %d posted",
		     depth, total);
	else
		printf(DP_TAG ": flood: %d VQs refused with QP_FULL, %d posted in all\n",
		       qpfull, total);
	for (v = 0; v < FLOOD_VQS; v++) {
		while (f->got[v] < f->posted[v]) {
			n = krc_qpop_wait(f->vq[v], cqe, 64, 30000);
			if (n <= 0) {
				FAIL("flood: VQ %d: %d of %d completions", v,
				     f->got[v], f->posted[v]);
				return 1;
			}
			for (i = 0; i < n; i++)
				if (cqe[i].status ||
				    cqe[i].wr_id != (uint64_t)f->got[v] + i)
					FAIL("flood: VQ %d: completion %llu status %u",
					     v, (unsigned long long)cqe[i].wr_id,
					     cqe[i].status);
			f->got[v] += n;
		}
	}
	return 0;
}

/* 2: fill each VQ's completion ring without reading it. */
static void flood_rings(struct flood *f)
{
	uint32_t entries = dp_ring_header(f->vq[0], f->qc[0].ring_size).entries;
	struct krcore_cqe cqe[64];
	int round, v, n, i;

	memset(f->posted, 0, sizeof(f->posted));
	for (round = 0; round < 20000; round++) {
		int full = 0;

		for (v = 0; v < FLOOD_VQS; v++) {
			n = krc_qpush(f->vq[v], f->small, 64);
			if (n > 0)
				f->posted[v] += n;
			else if (n != -EAGAIN)
				FAIL("flood: qpush: %s", krc_errmsg());
			full += f->posted[v] >= (int)entries;
		}
		if (full == FLOOD_VQS)
			break;
		usleep(1000);
	}
	for (v = 0; v < FLOOD_VQS; v++) {
		/* All complete into the ring; none may be lost. */
		for (i = 0; i < 300 && dp_ring_available(f->vq[v]) < f->posted[v]; i++)
			usleep(100000);
		f->got[v] = 0;
		while ((n = krc_qpop(f->vq[v], cqe, 64)) > 0) {
			for (i = 0; i < n; i++)
				if (cqe[i].status)
					FAIL("flood: status %u", cqe[i].status);
			f->got[v] += n;
		}
		if (f->posted[v] != (int)entries || f->got[v] != f->posted[v])
			FAIL("flood: VQ %d: %d posted unread, %d completions, ring of %u",
			     v, f->posted[v], f->got[v], entries);
	}
	printf(DP_TAG ": flood: unread, each VQ took its ring's %u entries, all completed\n",
	       entries);
}

/* 3: the normal way, round robin, until 5000 were posted. */
static void flood_steady(struct flood *f)
{
	int total = 0, done = 0, again = 0, round, v, n, i;
	struct krcore_cqe cqe[64];

	for (round = 0; (total < 5000 || done < total) && round < 100000; round++) {
		v = round % FLOOD_VQS;
		if (total < 5000) {
			n = krc_qpush(f->vq[v], f->small, 64);
			if (n == -EAGAIN)
				again++;
			else if (n < 0)
				FAIL("flood: qpush: %s", krc_errmsg());
			else
				total += n;
		}
		n = krc_qpop_wait(f->vq[v], cqe, 64, total > done ? 10 : 0);
		if (n < 0) {
			FAIL("flood: qpop: %s", krc_errmsg());
			break;
		}
		for (i = 0; i < n; i++)
			if (cqe[i].status)
				FAIL("flood: completion status %u", cqe[i].status);
		done += n;
	}
	if (done != total)
		FAIL("flood: %d posted, %d completed", total, done);
	printf(DP_TAG ": flood: %d posted, %d completed, %d EAGAIN\n", total,
	       done, again);
}

static int do_flood(const char *addr, const struct dp_remote *r)
{
	static struct flood f;
	struct krcore_wr *wr = calloc(512, sizeof(*wr));
	int v, i;

	for (v = 0; v < FLOOD_VQS; v++) {
		f.vq[v] = tp_connect(addr, 0, &f.qc[v]);
		if (f.qc[v].conn_id != f.qc[0].conn_id)
			FAIL("flood: VQ %d on connection %u, VQ 0 on %u", v,
			     f.qc[v].conn_id, f.qc[0].conn_id);
	}
	/* A registration serves every VQ of the process. */
	f.buf = dp_reg(f.vq[0], MIB_MR, &f.mr);
	if (!wr || !f.buf)
		return 1;
	if (flood_queue(&f, r, wr))
		return 1;
	for (i = 0; i < 64; i++)
		fill(&f.small[i], KRCORE_WR_READ, f.buf + i * 64, f.mr.lkey, 64,
		     r->addr + i * 64, r->rkey, (uint64_t)i);
	flood_rings(&f);
	flood_steady(&f);
	for (v = 0; v < FLOOD_VQS; v++)
		krc_vq_close(f.vq[v]);
	free(wr);
	return dp_status();
}

int main(int argc, char **argv)
{
	return dp_run(argc, argv, "dp_flood ADDR INFO", do_flood);
}
