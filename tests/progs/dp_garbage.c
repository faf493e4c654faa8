// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_garbage - every malformed request is refused with its errno and its
 * reason, and nothing of it posted: a good READ broken one way at a time
 * (opcode, flags, reserved field, SGEs, lengths, atomics, keys, ranges,
 * access, a SEND without a port); a batch whose second request is bad
 * posts only the first; a VQ not connected refuses with ENOTCONN; after
 * all that the VQ still works.
 *
 *   dp_garbage ADDR INFO
 */
#include <errno.h>
#include <stdio.h>

#include "dp/helpers.h"

struct bad_case {
	const char *what;
	int errnum;
	uint32_t reason;
};

static const struct bad_case cases[] = {
	{ "unknown opcode", EINVAL, KRCORE_R_OPCODE },
	{ "unknown flags", EINVAL, KRCORE_R_FLAGS },
	{ "reserved field", EINVAL, KRCORE_R_RESERVED },
	{ "no SGE", EINVAL, KRCORE_R_NUM_SGE },
	{ "too many SGEs", EINVAL, KRCORE_R_NUM_SGE },
	{ "zero length", EINVAL, KRCORE_R_ZERO_LENGTH },
	{ "too long", EMSGSIZE, KRCORE_R_TOO_LONG },
	{ "atomic of 4 bytes", EINVAL, KRCORE_R_ATOMIC_SIZE },
	{ "misaligned atomic", EINVAL, KRCORE_R_ATOMIC_ALIGN },
	{ "foreign lkey", ENOKEY, KRCORE_R_LKEY },
	{ "outside the registration", EFAULT, KRCORE_R_RANGE },
	{ "READ into a read-only registration", EACCES, KRCORE_R_ACCESS },
	{ "SEND without a port", EDESTADDRREQ, KRCORE_R_NO_PORT },
};

/* Break a good READ the way bad case @c says. */
static void mutate(struct krcore_wr *wr, int c, const struct krc_mr *mr,
		   const struct krc_mr *ro, uint8_t *buf)
{
	switch (c) {
	case 0:
		wr->opcode = 99;
		break;
	case 1:
		wr->flags = 0x80;
		break;
	case 2:
		wr->reserved1 = 1;
		break;
	case 3:
		wr->num_sge = 0;
		break;
	case 4:
		wr->num_sge = KRCORE_MAX_SGE + 1;
		break;
	case 5:
		wr->sg_list[0].length = 0;
		break;
	case 6:
		wr->opcode = KRCORE_WR_SEND;
		wr->sg_list[0].length = 4096;
		break;
	case 7:
		wr->opcode = KRCORE_WR_ATOMIC_FAA;
		wr->sg_list[0].length = 4;
		break;
	case 8:
		wr->opcode = KRCORE_WR_ATOMIC_CAS;
		wr->sg_list[0].length = 8;
		wr->remote_addr += 3;
		break;
	case 9:
		wr->sg_list[0].lkey = mr->lkey ^ 0x5a5a00;
		break;
	case 10:
		wr->sg_list[0].addr = (uintptr_t)buf + 4090;
		break;
	case 11:
		wr->sg_list[0].addr = (uintptr_t)buf + 4096;
		wr->sg_list[0].lkey = ro->lkey;
		break;
	default:
		wr->opcode = KRCORE_WR_SEND;
		break;
	}
}

/* A batch: the good ones before a bad one are posted, not after. */
static void bad_batch(struct krc_vq *vq, const struct krcore_wr *good)
{
	struct krcore_wr b[3] = { *good, *good, *good };
	struct krcore_cqe cqe[4];
	int got = 0, n;

	b[1].opcode = 0;
	b[0].wr_id = 10;
	b[2].wr_id = 12;
	n = krc_qpush(vq, b, 3);
	if (n != 1)
		FAIL("batch with a bad second request: posted %d, expected 1", n);
	while (got < 1 && (n = krc_qpop_wait(vq, cqe, 4, 10000)) > 0)
		got += n;
	if (got != 1 || cqe[0].wr_id != 10 || cqe[0].status)
		FAIL("batch: completions %d, first wr_id %llu", got,
		     (unsigned long long)cqe[0].wr_id);
}

static int do_garbage(const char *addr, const struct dp_remote *r)
{
	struct krc_vq *vq = dp_connect(addr), *nc;
	uint8_t *buf = tp_xalloc(8192);
	struct krc_mr mr, ro;
	struct krcore_wr wr, good;
	const struct krcore_qpush *res;
	int n, c;

	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0 ||
	    krc_reg_mr(vq, buf + 4096, 4096, 0, &ro) < 0) {
		FAIL("reg_mr: %s", krc_errmsg());
		return 1;
	}
	fill(&good, KRCORE_WR_READ, buf, mr.lkey, 64, r->addr, r->rkey, 1);
	for (c = 0; c < (int)ARRAY_SIZE(cases); c++) {
		wr = good;
		mutate(&wr, c, &mr, &ro, buf);
		n = krc_qpush(vq, &wr, 1);
		res = krc_qpush_result(vq);
		if (n != -cases[c].errnum || res->done != 0 ||
		    res->reason != cases[c].reason)
			FAIL("%s: qpush %d (reason %u), expected %d (reason %u)",
			     cases[c].what, n, res->reason, -cases[c].errnum,
			     cases[c].reason);
		else
			printf(DP_TAG ": refused: %s: %s\n", cases[c].what,
			       krc_errmsg());
	}
	bad_batch(vq, &good);
	/* A VQ that is not connected. */
	if (krc_vq_open(&nc) == 0) {
		n = krc_qpush(nc, &good, 1);
		if (n != -ENOTCONN)
			FAIL("unconnected VQ: qpush %d, expected -ENOTCONN", n);
		krc_vq_close(nc);
	}
	/* And after all that the VQ works. */
	if (krc_read_sync(vq, buf, mr.lkey, 64, r->addr, r->rkey, 10000))
		FAIL("VQ broken after garbage: %s", krc_errmsg());
	krc_vq_close(vq);
	printf(DP_TAG ": garbage: %d failures\n", dp_failures);
	return dp_status();
}

int main(int argc, char **argv)
{
	return dp_run(argc, argv, "dp_garbage ADDR INFO", do_garbage);
}
