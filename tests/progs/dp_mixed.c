// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_mixed - a shared QP that fails under mixed traffic: a staller VQ
 * posts STALL_N READs of STALL_LEN, then NVQ VQs post MIXED_N requests
 * each behind them on the same shared QP, all from this process in
 * consecutive calls; while the staller has not completed (so that all
 * are outstanding) the connection is failed (fault_conn_error). READs
 * and WRITEs must be re-posted and succeed (data checked, the WRITEs
 * found in remote memory), atomics, SEND and WRITE_IMM complete
 * NOT_EXECUTED_OR_UNKNOWN, every VQ moved exactly once. Prints the
 * exact counts the kernel must report ("dp_test: mixed: expect ...").
 * On the debug kernel the staller is 6 READs of 2 MiB: its qpushes are
 * slower there than the wire, and 1 MiB, then 3 MiB of READs were seen
 * to complete in part before the three VQs had posted (t_dp_faults
 * raises proc_max_bytes for it).
 *
 *   dp_mixed ADDR INFO NVQ PORT
 */
#include <stdio.h>

#include "dp/helpers.h"

#define MIXED_N		8
#define STALL_N		4
#define STALL_MAX	6
#define STALL_LEN	(256u << 10)

static const uint8_t mixed_ops[MIXED_N] = {
	KRCORE_WR_READ, KRCORE_WR_WRITE, KRCORE_WR_ATOMIC_FAA, KRCORE_WR_SEND,
	KRCORE_WR_READ, KRCORE_WR_WRITE, KRCORE_WR_ATOMIC_CAS,
	KRCORE_WR_WRITE_IMM,
};

struct mixed_vq {
	struct krc_vq *vq;
	struct krcore_qconnect qc;
	uint8_t *buf;
	struct krc_mr mr;
	struct krcore_wr wr[MIXED_N];
};

/* VQ @me's batch: READ, WRITE, FAA, SEND, READ, WRITE, CAS, WRITE_IMM. */
static void mixed_prepare(struct mixed_vq *m, const struct dp_remote *r, int me)
{
	uint64_t base = r->addr + MIXED_OFF + (uint64_t)me * 4096;
	int i, k;

	for (i = 0; i < MIXED_N; i++) {
		uint8_t *l = m->buf + i * 128;
		struct krcore_wr *w = &m->wr[i];

		switch (mixed_ops[i]) {
		case KRCORE_WR_READ:
			fill(w, KRCORE_WR_READ, l, m->mr.lkey, 64,
			     r->addr + me * 4096 + i * 64, r->rkey, i);
			break;
		case KRCORE_WR_WRITE:
		case KRCORE_WR_WRITE_IMM:
			for (k = 0; k < 64; k++)
				l[k] = dp_wpat(me + 100, i, k);
			fill(w, mixed_ops[i], l, m->mr.lkey, 64, base + i * 64,
			     r->rkey, i);
			w->imm_data = mixed_ops[i] == KRCORE_WR_WRITE_IMM ? 0x55 : 0;
			break;
		case KRCORE_WR_SEND:
			fill(w, KRCORE_WR_SEND, l, m->mr.lkey, 32, 0, 0, i);
			break;
		default:	/* atomics on words of this VQ's region */
			fill(w, mixed_ops[i], l, m->mr.lkey, 8, base + 2048 + i * 8,
			     r->rkey, i);
			w->compare_add = 1;
			break;
		}
	}
}

/* VQ @me after the failure: statuses, data, the WRITEs in remote memory. */
static void mixed_verify(struct mixed_vq *m, const struct dp_remote *r, int me)
{
	uint64_t base = r->addr + MIXED_OFF + (uint64_t)me * 4096;
	struct krcore_cqe c[MIXED_N];
	int i, k;

	dp_reap(m->vq, c, MIXED_N, 0, 120);
	for (i = 0; i < MIXED_N; i++) {
		uint8_t op = mixed_ops[i];
		uint32_t want = op == KRCORE_WR_READ || op == KRCORE_WR_WRITE ?
				KRCORE_WC_SUCCESS : KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;

		if (c[i].status != want || c[i].opcode != op)
			FAIL("mixed VQ %d: request %d (opcode %u): %s, expected %s",
			     me, i, op, krc_wc_status_str(c[i].status),
			     krc_wc_status_str(want));
		if (op != KRCORE_WR_READ || c[i].status)
			continue;
		for (k = 0; k < 64; k++)
			if (m->buf[i * 128 + k] != tp_pattern(me * 4096 + i * 64 + k)) {
				FAIL("mixed VQ %d: READ %d: wrong data", me, i);
				break;
			}
	}
	/* The re-posted WRITEs wrote their data. */
	if (krc_read_sync(m->vq, m->buf + 4096, m->mr.lkey, 512, base, r->rkey,
			  20000))
		FAIL("mixed VQ %d: read back: %s", me, krc_errmsg());
	for (i = 0; i < MIXED_N; i++) {
		if (mixed_ops[i] != KRCORE_WR_WRITE)
			continue;
		for (k = 0; k < 64; k++)
			if (m->buf[4096 + i * 64 + k] != dp_wpat(me + 100, i, k)) {
				FAIL("mixed VQ %d: WRITE %d not in remote memory", me, i);
				break;
			}
	}
	if (dp_ring_header(m->vq, m->qc.ring_size).recoveries != 1)
		FAIL("mixed VQ %d: not moved exactly once", me);
}

static int do_mixed(const char *addr, const struct dp_remote *r, int nvq,
		    uint32_t port)
{
	struct mixed_vq *m = calloc((size_t)nvq, sizeof(*m));
	int stall_n = dp_scale() > 1 ? 6 : STALL_N;
	uint32_t stall_len = STALL_LEN * (dp_scale() > 1 ? 8 : 1);
	struct krcore_cqe c[STALL_MAX];
	struct krcore_wr wr[STALL_MAX];
	struct krcore_qconnect qc;
	struct krc_vq *vq = tp_connect(addr, 0, &qc);
	struct krc_mr mr;
	/* A page more: see fair_greedy.c (rxe_mr_copy at a map's end). */
	uint8_t *buf = dp_reg(vq, stall_len + 4096, &mr);
	int v, i, waiting;

	if (!m || !buf)
		return 1;
	for (v = 0; v < nvq; v++) {
		m[v].vq = tp_connect(addr, port, &m[v].qc);
		if (m[v].qc.conn_id != qc.conn_id)
			FAIL("mixed: VQ %d on connection %u, not %u", v,
			     m[v].qc.conn_id, qc.conn_id);
		m[v].buf = dp_reg(m[v].vq, 8192, &m[v].mr);
		if (!m[v].buf)
			return 1;
		mixed_prepare(&m[v], r, v);
	}
	for (i = 0; i < stall_n; i++)
		fill(&wr[i], KRCORE_WR_READ, buf, mr.lkey, stall_len, r->addr,
		     r->rkey, (uint64_t)i);
	if (krc_qpush(vq, wr, stall_n) != stall_n)
		FAIL("mixed: staller: %s", krc_errmsg());
	for (v = 0; v < nvq; v++)
		if (krc_qpush(m[v].vq, m[v].wr, MIXED_N) != MIXED_N)
			FAIL("mixed: VQ %d: qpush: %s", v, krc_errmsg());
	/* Nothing of the staller completed: all requests are outstanding. */
	waiting = dp_ring_available(vq);
	if (waiting != 0)
		FAIL("mixed: %d staller READs done before the fault: counts inexact",
		     waiting);
	dp_set_param("fault_conn_error", qc.conn_id);
	dp_reap(vq, c, stall_n, 0, 300);
	for (i = 0; i < stall_n; i++)
		if (c[i].status || c[i].byte_len != stall_len)
			FAIL("mixed: staller READ %d: %s", i,
			     krc_wc_status_str(c[i].status));
	if (dp_ring_header(vq, qc.ring_size).recoveries != 1)
		FAIL("mixed: the staller's VQ was not moved exactly once");
	for (v = 0; v < nvq; v++) {
		mixed_verify(&m[v], r, v);
		krc_vq_close(m[v].vq);
	}
	if (!dp_failures)
		printf(DP_TAG ": mixed: %d VQs: READ/WRITE re-posted, data ok, others not\n",
		       nvq);
	printf(DP_TAG ": mixed: expect reposted=%d not_executed=%d\n",
	       stall_n + nvq * 4, nvq * 4);
	krc_vq_close(vq);
	free(m);
	return dp_status();
}

int main(int argc, char **argv)
{
	struct dp_remote r;

	if (dp_args(argc, argv, 5, "dp_mixed ADDR INFO NVQ PORT", &r))
		return 2;
	return do_mixed(argv[1], &r, atoi(argv[3]), (uint32_t)atoi(argv[4]));
}
