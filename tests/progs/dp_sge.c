// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_sge - multi-SGE requests move every SGE's bytes: a WRITE gathered
 * from 4 SGEs of two registrations, READ back scattered into 3 SGEs,
 * then the server's pattern READ into 4 SGEs; the lengths and every
 * byte checked.
 *
 *   dp_sge ADDR INFO
 */
#include <stdio.h>
#include <string.h>

#include "dp/helpers.h"

static int do_sge(const char *addr, const struct dp_remote *r)
{
	static const uint32_t wo[4] = { 100, 8192 + 7, 4000, 8192 + 5000 };
	static const uint32_t wl[4] = { 300, 1000, 96, 2700 };
	static const uint32_t ro[3] = { 16384 + 1, 16384 + 8192 + 333, 16384 + 3000 };
	static const uint32_t rl[3] = { 1500, 1596, 1000 };
	struct krc_vq *vq = dp_connect(addr);
	uint8_t *buf = tp_xalloc(32768), expect[4096];
	uint64_t raddr = r->addr + MIXED_OFF + 65536;
	struct krc_mr m[4];
	struct krcore_cqe c;
	struct krcore_wr wr;
	uint32_t i, k, at;

	/* Four registrations: two to WRITE from, two to READ into. */
	for (i = 0; i < 4; i++)
		if (krc_reg_mr(vq, buf + i * 8192, 8192, KRCORE_ACCESS_LOCAL_WRITE,
			       &m[i]) < 0) {
			FAIL("sge: reg_mr: %s", krc_errmsg());
			return 1;
		}
	for (i = 0; i < 16384; i++)
		buf[i] = (uint8_t)(i * 13 + 5);
	fill(&wr, KRCORE_WR_WRITE, NULL, 0, 0, raddr, r->rkey, 1);
	wr.num_sge = 4;
	for (i = 0, at = 0; i < 4; at += wl[i], i++) {
		wr.sg_list[i].addr = (uintptr_t)buf + wo[i];
		wr.sg_list[i].length = wl[i];
		wr.sg_list[i].lkey = m[wo[i] / 8192].lkey;
		memcpy(expect + at, buf + wo[i], wl[i]);
	}
	if (dp_one(vq, &wr, &c))
		FAIL("sge: WRITE of 4 SGEs: %s", krc_wc_status_str(c.status));
	fill(&wr, KRCORE_WR_READ, NULL, 0, 0, raddr, r->rkey, 2);
	wr.num_sge = 3;
	for (i = 0; i < 3; i++) {
		wr.sg_list[i].addr = (uintptr_t)buf + ro[i];
		wr.sg_list[i].length = rl[i];
		wr.sg_list[i].lkey = m[ro[i] / 8192].lkey;
	}
	if (dp_one(vq, &wr, &c) || c.byte_len != 4096)
		FAIL("sge: READ into 3 SGEs: %s, %u bytes",
		     krc_wc_status_str(c.status), c.byte_len);
	for (i = 0, at = 0; i < 3; at += rl[i], i++)
		for (k = 0; k < rl[i]; k++)
			if (buf[ro[i] + k] != expect[at + k]) {
				FAIL("sge: byte %u of SGE %u read back wrong", k, i);
				return 1;
			}
	/* A READ of the server's pattern into 4 SGEs. */
	fill(&wr, KRCORE_WR_READ, NULL, 0, 0, r->addr + 777, r->rkey, 3);
	wr.num_sge = 4;
	for (i = 0; i < 4; i++) {
		wr.sg_list[i].addr = (uintptr_t)buf + 16384 + i * 4096 + i;
		wr.sg_list[i].length = 1000 + i * 10;
		wr.sg_list[i].lkey = m[2 + i / 2].lkey;
	}
	if (dp_one(vq, &wr, &c) || c.byte_len != 4060)
		FAIL("sge: READ into 4 SGEs: %s, %u bytes",
		     krc_wc_status_str(c.status), c.byte_len);
	for (i = 0, at = 777; i < 4; at += 1000 + i * 10, i++)
		for (k = 0; k < 1000 + i * 10; k++)
			if (buf[16384 + i * 4096 + i + k] != tp_pattern(at + k)) {
				FAIL("sge: 4-SGE READ: SGE %u byte %u wrong", i, k);
				return 1;
			}
	if (!dp_failures)
		printf(DP_TAG ": sge: WRITE of 4 SGEs, READs into 3 and 4 SGEs, data checked\n");
	krc_vq_close(vq);
	return dp_status();
}

int main(int argc, char **argv)
{
	return dp_run(argc, argv, "dp_sge ADDR INFO", do_sge);
}
