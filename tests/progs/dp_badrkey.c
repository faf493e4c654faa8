// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_badrkey - a remote access error is this process's alone: a READ
 * with a bad rkey completes REM_ACCESS_ERR, and the VQ goes on working
 * (on a recovered connection), the server's data read right. Beside it
 * the cluster scripts run other processes (dp_steady) that must see no
 * error.
 *
 *   dp_badrkey ADDR INFO
 */
#include <stdio.h>

#include "dp/helpers.h"

static int do_badrkey(const char *addr, const struct dp_remote *r)
{
	struct krc_vq *vq = dp_connect(addr);
	struct krc_mr mr;
	uint8_t *buf = dp_reg(vq, 4096, &mr);
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	int st;

	if (!buf)
		return 1;
	fill(&wr, KRCORE_WR_READ, buf, mr.lkey, 64, r->addr, r->rkey ^ 0x777700, 99);
	st = dp_one(vq, &wr, &cqe);
	if (st != KRCORE_WC_REM_ACCESS_ERR)
		FAIL("bad rkey: status %d (%s), expected remote access error", st,
		     krc_wc_status_str((uint32_t)st));
	else
		printf(DP_TAG ": bad rkey: %s\n", krc_wc_status_str(cqe.status));
	/* The VQ goes on working (on a recovered connection). */
	if (krc_read_sync(vq, buf, mr.lkey, 64, r->addr, r->rkey, 20000) ||
	    buf[0] != tp_pattern(0))
		FAIL("after the error the VQ does not work: %s", krc_errmsg());
	krc_vq_close(vq);
	return dp_status();
}

int main(int argc, char **argv)
{
	return dp_run(argc, argv, "dp_badrkey ADDR INFO", do_badrkey);
}
