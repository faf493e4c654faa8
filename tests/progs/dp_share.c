// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_share - processes sharing a pooled connection each get their own
 * completions: PROCS processes post N batches of 8 READs each, side by
 * side (only some signaled); every completion must be one of the
 * process's own signaled requests of that batch, successful, and every
 * READ's data right.
 *
 *   dp_share ADDR INFO PROCS N
 */
#include <stdio.h>

#include "dp/helpers.h"

/* One process: batches of READs of its own regions. */
static int share_worker(const char *addr, const struct dp_remote *r, int me,
			int batches)
{
	struct krc_vq *vq = dp_connect(addr);
	struct krc_mr mr;
	uint8_t *buf = dp_reg(vq, 1 << 16, &mr);
	struct krcore_wr wr[8];
	struct krcore_cqe cqe[8];
	int b, i, got, n;

	if (!buf)
		return 1;
	for (b = 0; b < batches; b++) {
		for (i = 0; i < 8; i++) {
			uint32_t off = (uint32_t)((me * 8 + i) * 64 + b) % (HALF - 64);

			fill(&wr[i], KRCORE_WR_READ, buf + i * 64, mr.lkey, 64,
			     r->addr + off, r->rkey,
			     ((uint64_t)me << 32) | ((uint64_t)b << 8) | i);
			/* Only every other request asks for a completion. */
			if (i % 2 == 0 && i != 7)
				wr[i].flags = 0;
		}
		n = krc_qpush(vq, wr, 8);
		if (n != 8) {
			FAIL("worker %d: qpush %d: %s", me, n, krc_errmsg());
			return 1;
		}
		for (got = 0; got < 4; ) {
			n = krc_qpop_wait(vq, cqe, 8, 20000);
			if (n <= 0) {
				FAIL("worker %d: completions missing", me);
				return 1;
			}
			for (i = 0; i < n; i++) {
				uint64_t id = cqe[i].wr_id;
				uint64_t k = id & 0xff;

				if ((int)(id >> 32) != me ||
				    ((id >> 8) & 0xffffff) != (uint64_t)b ||
				    !(k % 2 || k == 7) || cqe[i].status)
					FAIL("worker %d got completion %llx status %u",
					     me, (unsigned long long)id, cqe[i].status);
			}
			got += n;
		}
		for (i = 0; i < 8; i++) {
			uint32_t off = (uint32_t)((me * 8 + i) * 64 + b) % (HALF - 64);
			int k;

			for (k = 0; k < 64; k++)
				if (buf[i * 64 + k] != tp_pattern(off + k)) {
					FAIL("worker %d batch %d: wrong data", me, b);
					return 1;
				}
		}
	}
	krc_vq_close(vq);
	return dp_status();
}

int main(int argc, char **argv)
{
	struct dp_remote r;

	if (dp_args(argc, argv, 5, "dp_share ADDR INFO PROCS N", &r))
		return 2;
	return dp_forked(atoi(argv[3]), share_worker, argv[1], &r, atoi(argv[4]));
}
