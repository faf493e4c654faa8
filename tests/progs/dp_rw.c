// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_rw - one-sided requests move the right bytes: a VQ to ADDR READs the
 * server's pattern, WRITEs a fresh one and READs it back, 8 B to 1 MiB;
 * then FAA and CAS (one that succeeds, one that fails) with their
 * results checked, and a synchronous READ.
 *
 *   dp_rw ADDR INFO        INFO: the "addr rkey" of a dp_serve buffer
 */
#include <stdio.h>
#include <string.h>

#include "dp/helpers.h"

static int do_rw(const char *addr, const struct dp_remote *r)
{
	static const uint32_t sizes[] = { 8, 64, 4096, 65536, 1 << 20 };
	struct krc_vq *vq = dp_connect(addr);
	struct krc_mr ms, md, mw;
	uint8_t *src = dp_reg(vq, MIB_MR, &ms), *dst = dp_reg(vq, MIB_MR, &md);
	uint64_t *word = dp_reg(vq, 4096, &mw), id = 1;
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	uint32_t i, s;

	if (!src || !dst || !word)
		return 1;
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		uint32_t len = sizes[s];

		/* READ the server's pattern. */
		memset(dst, 0, len);
		fill(&wr, KRCORE_WR_READ, dst, md.lkey, len, r->addr + 13 * s, r->rkey, id++);
		if (dp_one(vq, &wr, &cqe))
			FAIL("READ %u: %s", len, krc_wc_status_str(cqe.status));
		for (i = 0; i < len; i++)
			if (dst[i] != tp_pattern(13 * s + i)) {
				FAIL("READ %u: byte %u is %u, expected %u", len, i,
				     dst[i], tp_pattern(13 * s + i));
				break;
			}
		if (cqe.byte_len != len)
			FAIL("READ %u: byte_len %u", len, cqe.byte_len);
		/* WRITE a fresh pattern to the second half, READ it back. */
		for (i = 0; i < len; i++)
			src[i] = (uint8_t)(i * 31 + len + s);
		fill(&wr, KRCORE_WR_WRITE, src, ms.lkey, len, r->addr + HALF, r->rkey, id++);
		if (dp_one(vq, &wr, &cqe))
			FAIL("WRITE %u: %s", len, krc_wc_status_str(cqe.status));
		memset(dst, 0, len);
		fill(&wr, KRCORE_WR_READ, dst, md.lkey, len, r->addr + HALF, r->rkey, id++);
		if (dp_one(vq, &wr, &cqe))
			FAIL("READ back %u: %s", len, krc_wc_status_str(cqe.status));
		if (memcmp(src, dst, len))
			FAIL("WRITE %u: data read back differs", len);
		printf(DP_TAG ": READ, WRITE and read-back of %u bytes ok\n", len);
	}
	/* Atomics on a word of the server: set it, FAA, CAS. */
	word[1] = 1000;
	fill(&wr, KRCORE_WR_WRITE, &word[1], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	if (dp_one(vq, &wr, &cqe))
		FAIL("atomic setup: %s", krc_wc_status_str(cqe.status));
	fill(&wr, KRCORE_WR_ATOMIC_FAA, &word[0], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	wr.compare_add = 5;
	if (dp_one(vq, &wr, &cqe) || word[0] != 1000)
		FAIL("FAA returned %llu (status %u), expected 1000",
		     (unsigned long long)word[0], cqe.status);
	fill(&wr, KRCORE_WR_ATOMIC_CAS, &word[0], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	wr.compare_add = 1005;
	wr.swap = 42;
	if (dp_one(vq, &wr, &cqe) || word[0] != 1005)
		FAIL("CAS returned %llu, expected 1005", (unsigned long long)word[0]);
	fill(&wr, KRCORE_WR_ATOMIC_CAS, &word[0], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	wr.compare_add = 1005;	/* fails: the word is 42 now */
	wr.swap = 7;
	if (dp_one(vq, &wr, &cqe) || word[0] != 42)
		FAIL("failing CAS returned %llu, expected 42", (unsigned long long)word[0]);
	fill(&wr, KRCORE_WR_READ, &word[2], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	if (dp_one(vq, &wr, &cqe) || word[2] != 42)
		FAIL("word after atomics is %llu, expected 42", (unsigned long long)word[2]);
	else
		printf(DP_TAG ": FAA and CAS ok\n");
	/* A synchronous helper round. */
	if (krc_read_sync(vq, dst, md.lkey, 8, r->addr, r->rkey, 10000) ||
	    dst[0] != tp_pattern(0))
		FAIL("krc_read_sync: %s", krc_errmsg());
	krc_vq_close(vq);
	return dp_status();
}

int main(int argc, char **argv)
{
	return dp_run(argc, argv, "dp_rw ADDR INFO", do_rw);
}
