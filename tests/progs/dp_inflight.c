// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_inflight - a process killed with requests in flight: it keeps 32
 * READs of 32 KiB in flight until killed, every call checked, and
 * touches DIR/inflight.ready once requests are in flight. The cluster
 * script kills it (SIGKILL) and checks that its VQ and registrations are
 * gone and the pool keeps working.
 *
 *   dp_inflight ADDR INFO DIR
 */
#include <errno.h>
#include <stdio.h>

#include "dp/helpers.h"

static int do_inflight(const char *addr, const struct dp_remote *r,
		       const char *dir)
{
	struct krc_vq *vq = dp_connect(addr);
	struct krc_mr mr;
	uint8_t *buf = dp_reg(vq, MIB_MR, &mr);
	struct krcore_cqe cqe[64];
	struct krcore_wr wr[32];
	unsigned long posted = 0, done = 0;
	int i, n, ready = 0;

	if (!buf)
		return 1;
	for (i = 0; i < 32; i++)
		fill(&wr[i], KRCORE_WR_READ, buf + i * 32768, mr.lkey, 32768,
		     r->addr + i * 32768, r->rkey, (uint64_t)i);
	for (;;) {
		n = krc_qpush(vq, wr, 32);
		if (n < 0 && n != -EAGAIN) {
			FAIL("inflight: qpush: %s", krc_errmsg());
			return 1;
		}
		if (n > 0)
			posted += (unsigned long)n;
		if (!ready && posted > done) {
			printf(DP_TAG ": %lu READs in flight\n", posted - done);
			fflush(stdout);
			dp_touch(dir, "inflight.ready");
			ready = 1;
		}
		n = krc_qpop(vq, cqe, 64);
		if (n < 0) {
			FAIL("inflight: qpop: %s", krc_errmsg());
			return 1;
		}
		for (i = 0; i < n; i++)
			if (cqe[i].status) {
				FAIL("inflight: READ failed: %s",
				     krc_wc_status_str(cqe[i].status));
				return 1;
			}
		done += (unsigned long)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct dp_remote r;

	if (dp_args(argc, argv, 4, "dp_inflight ADDR INFO DIR", &r))
		return 2;
	return do_inflight(argv[1], &r, argv[3]);
}
