// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_wr_check.c - libFuzzer target for krc_wr_check() (common/wr_check.c).
 * The input is a check context (connection, limits, up to four
 * registrations) then a work request, little-endian:
 *
 *   0      mode: bit 0 connected, 1 has_port, 2 atomics, 3 SGE addresses
 *          are offsets from their registration, 4 SGE lengths < 8 KiB,
 *          5 remote_addr 8-aligned, 6 max_msg taken as is (else modulo
 *          KRCORE_MAX_MSG + 1), 7 lkeys are indexes into the registrations
 *   1      max_sge (low 3 bits)
 *   2      number of registrations (modulo 5)
 *   3-10   max_msg
 *   11-94  four registrations of 21 bytes: lkey 4, addr 8, length 8,
 *          access 1 (length is cut so that addr + length < 2^64)
 *   95-206 struct krcore_wr, field by field (missing bytes are 0)
 *
 * Whatever the verdict, it must be the one of a reference written from the
 * documentation, its errno the one of its reason, and an accepted request
 * must be safe to post: every SGE inside the registration it names, a
 * SEND or WRITE_IMM with a remote port, a WRITE_IMM immediate of 16 bits...
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wr_check.h"
#include "wr_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NREG		4
#define REG_SIZE	21
#define HDR_SIZE	(11 + NREG * REG_SIZE)
#define WR_SIZE		(48 + 16 * KRCORE_MAX_SGE)

enum {
	M_CONNECTED	= 1 << 0,
	M_HAS_PORT	= 1 << 1,
	M_ATOMICS	= 1 << 2,
	M_REBASE	= 1 << 3,
	M_SHORT		= 1 << 4,
	M_ALIGN		= 1 << 5,
	M_RAW_MAX_MSG	= 1 << 6,
	M_KEY_INDEX	= 1 << 7,
};

struct table {
	u32 lkey[NREG];
	struct krc_mr_view mr[NREG];
	u32 n;
	const struct krcore_wr *wr;	/* the request being checked */
};

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* The caller's registration with @lkey: the first one that has it. */
static const struct krc_mr_view *lookup(const struct table *t, u32 lkey)
{
	u32 i;

	for (i = 0; i < t->n; i++)
		if (t->lkey[i] == lkey)
			return &t->mr[i];
	return NULL;
}

static const struct krc_mr_view *find_mr(void *arg, u32 lkey)
{
	const struct table *t = arg;
	bool in_use = false;
	u32 i;

	/* asked only for the lkey of an SGE in use */
	for (i = 0; i < t->wr->num_sge && i < KRCORE_MAX_SGE; i++)
		in_use |= t->wr->sg_list[i].lkey == lkey;
	check(in_use);
	return lookup(t, lkey);
}

static const struct krc_mr_view *ref_find(const void *arg, u32 lkey)
{
	return lookup(arg, lkey);
}

/* What an accepted request guarantees to whoever posts it. */
static void check_accepted(const struct krcore_wr *w, const struct krc_check_ctx *c,
			   const struct table *t, u64 len)
{
	u64 sum = 0;
	u32 i;

	check(ref_op_known(w->opcode));
	check(!(w->flags & ~(KRCORE_WR_SIGNALED | KRCORE_WR_FENCE)));
	check(!w->reserved0 && !w->reserved1);
	check(c->connected);
	check(w->num_sge >= 1 && w->num_sge <= KRCORE_MAX_SGE &&
	      w->num_sge <= c->max_sge);
	for (i = 0; i < w->num_sge; i++) {
		const struct krcore_sge *g = &w->sg_list[i];
		const struct krc_mr_view *mr = lookup(t, g->lkey);

		check(g->length > 0);
		check(mr && ref_inside(mr, g->addr, g->length));
		check(g->addr + g->length > g->addr);	/* no wrap-around */
		check(!ref_op_writes(w->opcode) || (mr->access & KRCORE_ACCESS_LOCAL_WRITE));
		sum += g->length;
	}
	check(len == sum);
	if (ref_op_send(w->opcode))
		check(len <= KRCORE_MAX_SEND && c->has_port);
	else
		check(len <= c->max_msg && len <= KRCORE_MAX_MSG);
	if (ref_op_to_port(w->opcode))
		check(c->has_port);
	if (w->opcode == KRCORE_WR_WRITE_IMM)
		check(w->imm_data <= 0xffff);
	if (ref_op_atomic(w->opcode))
		check(w->num_sge == 1 && len == 8 && !(w->remote_addr & 7) && c->atomics);
}

static u64 get64(const u8 *p)
{
	return krc_get_le64(p);
}

static void parse(const u8 *in, struct krc_check_ctx *c, struct table *t,
		  struct krcore_wr *w)
{
	const u8 *p = in + 11, *q = in + HDR_SIZE;
	u8 mode = in[0];
	u32 i;

	memset(c, 0, sizeof(*c));
	c->connected = mode & M_CONNECTED;
	c->has_port = mode & M_HAS_PORT;
	c->atomics = mode & M_ATOMICS;
	c->max_sge = in[1] & 7;
	c->max_msg = get64(in + 3);
	if (!(mode & M_RAW_MAX_MSG))
		c->max_msg %= (u64)KRCORE_MAX_MSG + 1;
	c->find_mr = find_mr;
	c->arg = t;

	memset(t, 0, sizeof(*t));
	t->n = in[2] % (NREG + 1);
	for (i = 0; i < NREG; i++, p += REG_SIZE) {
		t->lkey[i] = krc_get_le32(p);
		t->mr[i].addr = get64(p + 4);
		t->mr[i].length = get64(p + 12);
		t->mr[i].access = p[20];
		/*
		 * krc_wr_check() compares with mr->addr + mr->length: a
		 * registration must end below 2^64 (REG_MR's job to refuse)
		 */
		if (t->mr[i].length > ~0ULL - t->mr[i].addr)
			t->mr[i].length = ~0ULL - t->mr[i].addr;
	}

	memset(w, 0, sizeof(*w));
	w->wr_id = get64(q);
	w->opcode = q[8];
	w->flags = q[9];
	w->num_sge = q[10];
	w->reserved0 = q[11];
	w->imm_data = krc_get_le32(q + 12);
	w->remote_addr = get64(q + 16);
	w->rkey = krc_get_le32(q + 24);
	w->reserved1 = krc_get_le32(q + 28);
	w->compare_add = get64(q + 32);
	w->swap = get64(q + 40);
	for (i = 0; i < KRCORE_MAX_SGE; i++) {
		struct krcore_sge *g = &w->sg_list[i];
		const u8 *s = q + 48 + 16 * i;
		const struct krc_mr_view *mr;

		g->addr = get64(s);
		g->length = krc_get_le32(s + 8);
		g->lkey = krc_get_le32(s + 12);
		if ((mode & M_KEY_INDEX) && t->n)
			g->lkey = t->lkey[g->lkey % t->n];
		if (mode & M_SHORT)
			g->length &= 0x1fff;
		mr = lookup(t, g->lkey);
		/* low 16 bits: a signed offset from its start, or its end */
		if ((mode & M_REBASE) && mr)
			g->addr = (g->addr & 0x10000 ? mr->addr + mr->length : mr->addr) +
				  (u64)(s64)(int16_t)g->addr;
	}
	if (mode & M_ALIGN)
		w->remote_addr &= ~7ULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u8 in[HDR_SIZE + WR_SIZE];
	struct krc_check_ctx c;
	struct krcore_wr w, copy;
	struct table t;
	u32 reason, reason2, want;
	u64 len, len2, want_len = 0;
	int rc;

	memset(in, 0, sizeof(in));
	memcpy(in, data, size < sizeof(in) ? size : sizeof(in));
	parse(in, &c, &t, &w);
	t.wr = &w;
	copy = w;

	reason = 0xbad;
	len = 0xbad;
	rc = krc_wr_check(&w, &c, &reason, &len);
	check(!memcmp(&w, &copy, sizeof(w)));	/* the request is not touched */

	/* the verdict and its errno agree */
	check(reason < KRCORE_R_MAX);
	check(rc <= 0);
	check((rc == 0) == (reason == KRCORE_R_OK));
	check(-rc == krc_reason_errno(reason));
	check(rc == ref_errno(reason));
	/* VQ_FULL, QP_FULL, RECOVERING: the poster's, not the check's */
	check(reason <= KRCORE_R_UNSUPPORTED || reason == KRCORE_R_IMM);
	check(krc_reason_str(reason) && strcmp(krc_reason_str(reason), "?"));
	if (rc == 0)
		check_accepted(&w, &c, &t, len);

	/* the reference's verdict */
	want = ref_check(&w, &c, ref_find, &t, &want_len);
	check(reason == want);
	check(want != KRCORE_R_OK || len == want_len);

	/* a pure function */
	check(krc_wr_check(&w, &c, &reason2, &len2) == rc && reason2 == reason);
	check(rc || len2 == len);
	return 0;
}
