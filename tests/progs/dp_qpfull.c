// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_qpfull - the shared send queue is bounded across VQs at exactly
 * qp_depth: qp_depth / share VQs fill it with READs of QPF_LEN (share =
 * qp_depth * vq_qp_share / 100 each, the last one less one); one more
 * VQ posting 3 gets 1 in, then EAGAIN/QP_FULL, then 0; a full VQ gets
 * VQ_FULL. All complete; then the extra VQ's 3 go in.
 *
 *   dp_qpfull ADDR INFO
 */
#include <errno.h>
#include <stdio.h>

#include "dp/helpers.h"

/*
 * Long enough that none completes while this process posts them all
 * (128 KiB was not, on a quiet host; 4 MiB took minutes): 31 x 1 MiB.
 */
#define QPF_LEN		(1024u * 1024)

static int do_qpfull(const char *addr, const struct dp_remote *r)
{
	unsigned long depth = dp_param("qp_depth");
	unsigned long share = depth * dp_param("vq_qp_share") / 100;
	int nvq = share ? (int)(depth / share) : 0, v, n, i;
	struct krcore_qconnect qc[17];
	struct krc_vq *vq[17];
	struct krcore_wr wr[64];
	struct krcore_cqe c[64];
	const struct krcore_qpush *res;
	uint8_t *buf;
	struct krc_mr mr;

	if (nvq < 2 || nvq > 16 || share > 64 || depth % share) {
		FAIL("qpfull: qp_depth %lu with a share of %lu: not a test", depth,
		     share);
		return 1;
	}
	for (v = 0; v <= nvq; v++) {
		vq[v] = tp_connect(addr, 0, &qc[v]);
		if (qc[v].conn_id != qc[0].conn_id)
			FAIL("qpfull: VQ %d on connection %u, not %u", v,
			     qc[v].conn_id, qc[0].conn_id);
	}
	buf = dp_reg(vq[0], QPF_LEN + 4096, &mr);
	if (!buf)
		return 1;
	for (i = 0; i < 64; i++)
		fill(&wr[i], KRCORE_WR_READ, buf, mr.lkey, QPF_LEN, r->addr,
		     r->rkey, (uint64_t)i);
	/* depth - 1 requests outstanding, spread over nvq VQs. */
	for (v = 0; v < nvq; v++) {
		int want = (int)share - (v == nvq - 1);

		n = krc_qpush(vq[v], wr, (unsigned int)want);
		if (n != want)
			FAIL("qpfull: VQ %d: %d of %d posted: %s", v, n, want,
			     krc_errmsg());
	}
	/* The extra VQ: 1 of 3 fits, then the shared queue is full. */
	n = krc_qpush(vq[nvq], wr, 3);
	res = krc_qpush_result(vq[nvq]);
	if (n != 1 || res->done != 1 || res->error != EAGAIN ||
	    res->reason != KRCORE_R_QP_FULL)
		FAIL("qpfull: 3 with 1 slot free: ret %d done %u error %u reason %u",
		     n, res->done, res->error, res->reason);
	else
		printf(DP_TAG ": qpfull: %lu of %d VQs, qp_depth %lu: 1 of 3 more posted, %s\n",
		       depth - 1, nvq, depth, krc_errmsg());
	n = krc_qpush(vq[nvq], wr, 1);
	res = krc_qpush_result(vq[nvq]);
	if (n != -EAGAIN || res->done != 0 || res->reason != KRCORE_R_QP_FULL)
		FAIL("qpfull: a full shared queue: ret %d done %u reason %u", n,
		     res->done, res->reason);
	n = krc_qpush(vq[0], wr, 1);
	res = krc_qpush_result(vq[0]);
	if (n != -EAGAIN || res->done != 0 || res->reason != KRCORE_R_VQ_FULL)
		FAIL("qpfull: a VQ at its share: ret %d done %u reason %u, expected VQ_FULL",
		     n, res->done, res->reason);
	for (v = 0; v <= nvq; v++) {
		int want = v == nvq ? 1 : (int)share - (v == nvq - 1);

		dp_reap(vq[v], c, want, 0, 120);
		for (i = 0; i < want; i++)
			if (c[i].status || c[i].byte_len != QPF_LEN)
				FAIL("qpfull: VQ %d READ %d: %s, %u bytes", v, i,
				     krc_wc_status_str(c[i].status), c[i].byte_len);
	}
	n = krc_qpush(vq[nvq], wr, 3);
	if (n != 3)
		FAIL("qpfull: once drained, 3 READs: %d: %s", n, krc_errmsg());
	else if (dp_reap(vq[nvq], c, 3, 0, 120) == 3)
		printf(DP_TAG ": qpfull: drained, then 3 posted and completed\n");
	for (v = 0; v <= nvq; v++)
		krc_vq_close(vq[v]);
	return dp_status();
}

int main(int argc, char **argv)
{
	return dp_run(argc, argv, "dp_qpfull ADDR INFO", do_qpfull);
}
