// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_wr_check.c - the malformed-request check of every work request
 * (common/wr_check.c), no VM needed: each opcode in a valid form, each
 * rejection with its errno and reason, the documented order of the
 * checks, the reason tables, and a randomized comparison with a reference
 * written here from the documentation of wr_check.h and the UAPI header.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wr_check.h"
#include "wr_ref.h"

/* The caller's registrations, keyed by lkey. */
#define LK_RW		0x1100	/* read/write, 64 KiB */
#define LK_RO		0x2200	/* no LOCAL_WRITE, 4 KiB */
#define LK_BIG		0x3300	/* read/write, 2 GiB */
#define LK_TOP		0x4400	/* read/write, ends at the last byte of u64 */
#define LK_ZERO		0x5500	/* read/write, starts at address 0 */
#define LK_BAD		0xdead	/* never registered */

#define ACC_ALL		(KRCORE_ACCESS_LOCAL_WRITE | KRCORE_ACCESS_REMOTE_READ | \
			 KRCORE_ACCESS_REMOTE_WRITE | KRCORE_ACCESS_REMOTE_ATOMIC)
#define ACC_RO		(KRCORE_ACCESS_REMOTE_READ | KRCORE_ACCESS_REMOTE_WRITE)

struct reg {
	u32 lkey;
	struct krc_mr_view mr;
};

static const struct reg regs[] = {
	{ LK_RW, { 0x10000, 0x10000, ACC_ALL } },
	{ LK_RO, { 0x40000, 0x1000, ACC_RO } },
	{ LK_BIG, { 0x7fff00000000ULL, 1ULL << 31, KRCORE_ACCESS_LOCAL_WRITE } },
	{ LK_TOP, { 0xffffffffffff0000ULL, 0xffff, KRCORE_ACCESS_LOCAL_WRITE } },
	{ LK_ZERO, { 0, 0x1000, KRCORE_ACCESS_LOCAL_WRITE } },
};

/* lkeys the random requests draw from: registered or not */
static const u32 some_lkeys[] = {
	LK_RW, LK_RO, LK_BIG, LK_TOP, LK_ZERO, LK_BAD, 0, 0xffffffff, LK_RW + 1,
};

static const struct krc_mr_view *find_reg(u32 lkey)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(regs); i++)
		if (regs[i].lkey == lkey)
			return &regs[i].mr;
	return NULL;
}

/* The find_mr callback: @arg must be the table above. */
static const struct krc_mr_view *fake_find_mr(void *arg, u32 lkey)
{
	assert_ptr_equal(arg, regs);
	return find_reg(lkey);
}

static struct krc_check_ctx good_ctx(void)
{
	struct krc_check_ctx c;

	memset(&c, 0, sizeof(c));
	c.connected = true;
	c.has_port = true;
	c.atomics = true;
	c.max_sge = KRCORE_MAX_SGE;
	c.max_msg = KRCORE_MAX_MSG;
	c.find_mr = fake_find_mr;
	c.arg = (void *)regs;
	return c;
}

/*
 * A valid request of @op with @n SGEs: SGE i is 64 bytes at offset
 * 0x100 * i of LK_RW (atomics: one SGE of 8 bytes, remote 8-aligned).
 */
static struct krcore_wr good_wr(u8 op, u8 n)
{
	struct krcore_wr w;
	u8 i;

	memset(&w, 0, sizeof(w));
	w.wr_id = 0x1122334455667788ULL;
	w.opcode = op;
	w.flags = KRCORE_WR_SIGNALED;
	w.num_sge = n;
	w.imm_data = 0xabcd;
	w.remote_addr = 0x7f0000001000ULL;
	w.rkey = 0x77;
	w.compare_add = 1;
	w.swap = 2;
	for (i = 0; i < n && i < KRCORE_MAX_SGE; i++) {
		w.sg_list[i].addr = 0x10000 + 0x100 * i;
		w.sg_list[i].length = ref_op_atomic(op) ? 8 : 64;
		w.sg_list[i].lkey = LK_RW;
	}
	return w;
}

static const char *reason_name(u32 r)
{
	static const char * const names[] = {
		"OK", "OPCODE", "FLAGS", "RESERVED", "NUM_SGE", "ZERO_LENGTH",
		"TOO_LONG", "ATOMIC_SIZE", "ATOMIC_ALIGN", "LKEY", "RANGE",
		"ACCESS", "NOT_CONNECTED", "NO_PORT", "UNSUPPORTED", "VQ_FULL",
		"QP_FULL", "RECOVERING", "IMM", "FAULT", "THROTTLED", "RKEY",
		"NO_CREDIT", "REFUSED",
	};

	return r < ARRAY_SIZE(names) ? names[r] : "(out of range)";
}

static void dump_wr(const struct krcore_wr *w, const struct krc_check_ctx *c)
{
	int i;

	print_message("ctx: connected %d has_port %d atomics %d max_sge %u max_msg %#llx\n",
		      c->connected, c->has_port, c->atomics, c->max_sge,
		      (unsigned long long)c->max_msg);
	print_message("wr: opcode %u flags %#x num_sge %u reserved0 %u reserved1 %#x\n",
		      w->opcode, w->flags, w->num_sge, w->reserved0, w->reserved1);
	print_message("    remote_addr %#llx imm_data %#x\n",
		      (unsigned long long)w->remote_addr, w->imm_data);
	for (i = 0; i < KRCORE_MAX_SGE; i++)
		print_message("  sge[%d]: addr %#llx length %#x lkey %#x\n", i,
			      (unsigned long long)w->sg_list[i].addr,
			      w->sg_list[i].length, w->sg_list[i].lkey);
}

#define expect_ok(w, c, len)		check_ok(w, c, len, __LINE__)
#define expect_fail(w, c, r)		check_fail(w, c, r, __LINE__)

static void check_ok(const struct krcore_wr *w, const struct krc_check_ctx *c,
		     u64 want_len, int line)
{
	u32 reason = 0xbad;
	u64 len = 0xbad;
	int rc = krc_wr_check(w, c, &reason, &len);

	if (rc || reason != KRCORE_R_OK || len != want_len) {
		dump_wr(w, c);
		fail_msg("line %d: want 0, OK, len %llu; got %d, %s (%u), len %llu",
			 line, (unsigned long long)want_len, rc, reason_name(reason),
			 reason, (unsigned long long)len);
	}
}

static void check_fail(const struct krcore_wr *w, const struct krc_check_ctx *c,
		       u32 want, int line)
{
	u32 reason = 0xbad;
	u64 len = 0xbad;
	int rc = krc_wr_check(w, c, &reason, &len);

	if (rc != ref_errno(want) || reason != want) {
		dump_wr(w, c);
		fail_msg("line %d: want %d, %s; got %d, %s (%u)", line,
			 ref_errno(want), reason_name(want), rc, reason_name(reason), reason);
	}
}

static const u8 rdma_ops[] = {
	KRCORE_WR_READ, KRCORE_WR_WRITE, KRCORE_WR_WRITE_IMM,
	KRCORE_WR_SEND, KRCORE_WR_SEND_IMM,
};

static const u8 all_ops[] = {
	KRCORE_WR_READ, KRCORE_WR_WRITE, KRCORE_WR_WRITE_IMM, KRCORE_WR_SEND,
	KRCORE_WR_SEND_IMM, KRCORE_WR_ATOMIC_CAS, KRCORE_WR_ATOMIC_FAA,
};

static void test_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct krcore_sge), 16);
	assert_int_equal(sizeof(struct krcore_wr), 48 + 16 * KRCORE_MAX_SGE);
	assert_int_equal(KRCORE_R_RECOVERING, 17);
	assert_int_equal(KRCORE_R_IMM, 18);
	assert_int_equal(KRCORE_R_FAULT, 19);
	assert_int_equal(KRCORE_R_THROTTLED, 20);
	assert_int_equal(KRCORE_R_RKEY, 21);
	assert_int_equal(KRCORE_R_NO_CREDIT, 22);
	assert_int_equal(KRCORE_R_REFUSED, 23);
	assert_int_equal(KRCORE_R_MAX, 24);
}

static void test_accepts_every_opcode(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i;
	u8 n;
	u64 sum;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rdma_ops); i++) {
		for (n = 1; n <= KRCORE_MAX_SGE; n++) {
			w = good_wr(rdma_ops[i], n);
			expect_ok(&w, &c, 64 * n);
			/* lengths differ: *len is their sum */
			w.sg_list[0].length = 1;
			sum = 1 + 64 * (n - 1);
			if (n > 1) {
				w.sg_list[n - 1].length = 200;
				sum += 200 - 64;
			}
			expect_ok(&w, &c, sum);
			/*
			 * every flag, remote fields are not checked, nor is
			 * the immediate but WRITE_IMM's 16 bits
			 */
			w.flags = KRCORE_WR_SIGNALED | KRCORE_WR_FENCE;
			w.remote_addr = 0xffffffffffffffffULL;
			w.rkey = 0;
			w.imm_data = rdma_ops[i] == KRCORE_WR_WRITE_IMM ?
				     0xffff : 0xffffffff;
			expect_ok(&w, &c, sum);
			w.flags = 0;
			expect_ok(&w, &c, sum);
		}
	}
	for (i = 0; i < 2; i++) {
		u8 op = i ? KRCORE_WR_ATOMIC_FAA : KRCORE_WR_ATOMIC_CAS;

		w = good_wr(op, 1);
		expect_ok(&w, &c, 8);
		w.remote_addr = 0;
		expect_ok(&w, &c, 8);
		w.remote_addr = 0xfffffffffffffff8ULL;
		expect_ok(&w, &c, 8);
		/* the local buffer of an atomic need not be aligned */
		w.sg_list[0].addr = 0x10003;
		w.flags = KRCORE_WR_FENCE;
		expect_ok(&w, &c, 8);
		/* no port needed */
		c.has_port = false;
		expect_ok(&w, &c, 8);
		c = good_ctx();
	}
	/* SGEs beyond num_sge are ignored, whatever they hold */
	w = good_wr(KRCORE_WR_WRITE, 1);
	w.sg_list[1].length = 0;
	w.sg_list[2].lkey = LK_BAD;
	w.sg_list[3].addr = 1;
	w.sg_list[3].length = 0xffffffff;
	expect_ok(&w, &c, 64);
	w = good_wr(KRCORE_WR_READ, 4);
	expect_ok(&w, &c, 256);
	/* the registrations at both ends of the address space */
	w = good_wr(KRCORE_WR_READ, 2);
	w.sg_list[0].addr = 0;
	w.sg_list[0].length = 0x1000;
	w.sg_list[0].lkey = LK_ZERO;
	w.sg_list[1].addr = 0xffffffffffff0000ULL;
	w.sg_list[1].length = 0xffff;
	w.sg_list[1].lkey = LK_TOP;
	expect_ok(&w, &c, 0x10fff);
	w.sg_list[1].addr = 0xfffffffffffffffeULL;
	w.sg_list[1].length = 1;
	expect_ok(&w, &c, 0x1001);
}

static void test_bad_opcode_flags_reserved(void **state)
{
	static const u8 bad_ops[] = { 0, 8, 9, 0x7f, 0x80, 0x81, 255 };
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i;
	int bit;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_ops); i++) {
		w = good_wr(KRCORE_WR_WRITE, 1);
		w.opcode = bad_ops[i];
		expect_fail(&w, &c, KRCORE_R_OPCODE);
	}
	for (i = 0; i < ARRAY_SIZE(all_ops); i++) {
		for (bit = 2; bit < 8; bit++) {
			w = good_wr(all_ops[i], 1);
			w.flags = (u8)(1U << bit);
			expect_fail(&w, &c, KRCORE_R_FLAGS);
			w.flags |= KRCORE_WR_SIGNALED | KRCORE_WR_FENCE;
			expect_fail(&w, &c, KRCORE_R_FLAGS);
		}
		w.flags = 0xff;
		expect_fail(&w, &c, KRCORE_R_FLAGS);

		w = good_wr(all_ops[i], 1);
		w.reserved0 = 1;
		expect_fail(&w, &c, KRCORE_R_RESERVED);
		w.reserved0 = 0x80;
		expect_fail(&w, &c, KRCORE_R_RESERVED);
		w.reserved0 = 0;
		w.reserved1 = 1;
		expect_fail(&w, &c, KRCORE_R_RESERVED);
		w.reserved1 = 0x80000000;
		expect_fail(&w, &c, KRCORE_R_RESERVED);
		w.reserved0 = 0xff;
		w.reserved1 = 0xffffffff;
		expect_fail(&w, &c, KRCORE_R_RESERVED);
	}
}

static void test_not_connected(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i;

	(void)state;
	c.connected = false;
	for (i = 0; i < ARRAY_SIZE(all_ops); i++) {
		w = good_wr(all_ops[i], 1);
		expect_fail(&w, &c, KRCORE_R_NOT_CONNECTED);
	}
}

static void test_num_sge(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i;
	u32 max;
	u8 n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(all_ops); i++) {
		w = good_wr(all_ops[i], 1);
		w.num_sge = 0;
		expect_fail(&w, &c, KRCORE_R_NUM_SGE);
		w.num_sge = KRCORE_MAX_SGE + 1;
		expect_fail(&w, &c, KRCORE_R_NUM_SGE);
		w.num_sge = 255;
		expect_fail(&w, &c, KRCORE_R_NUM_SGE);
	}
	/* a connection allowing fewer SGEs than the ABI */
	for (max = 0; max < KRCORE_MAX_SGE; max++) {
		c = good_ctx();
		c.max_sge = max;
		for (i = 0; i < ARRAY_SIZE(rdma_ops); i++) {
			for (n = 1; n <= KRCORE_MAX_SGE; n++) {
				w = good_wr(rdma_ops[i], n);
				if (n <= max)
					expect_ok(&w, &c, 64 * n);
				else
					expect_fail(&w, &c, KRCORE_R_NUM_SGE);
			}
		}
		w = good_wr(KRCORE_WR_ATOMIC_CAS, 1);
		if (max)
			expect_ok(&w, &c, 8);
		else
			expect_fail(&w, &c, KRCORE_R_NUM_SGE);
	}
	/* a context claiming more than the ABI is held to the ABI */
	c = good_ctx();
	c.max_sge = 64;
	w = good_wr(KRCORE_WR_WRITE, KRCORE_MAX_SGE);
	expect_ok(&w, &c, 64 * KRCORE_MAX_SGE);
	w.num_sge = KRCORE_MAX_SGE + 1;
	expect_fail(&w, &c, KRCORE_R_NUM_SGE);
}

static void test_zero_length(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(all_ops); i++) {
		w = good_wr(all_ops[i], 1);
		w.sg_list[0].length = 0;
		expect_fail(&w, &c, KRCORE_R_ZERO_LENGTH);
	}
	for (i = 0; i < ARRAY_SIZE(rdma_ops); i++) {
		for (k = 0; k < KRCORE_MAX_SGE; k++) {
			w = good_wr(rdma_ops[i], KRCORE_MAX_SGE);
			w.sg_list[k].length = 0;
			expect_fail(&w, &c, KRCORE_R_ZERO_LENGTH);
			/* even with an unregistered lkey in that SGE */
			w.sg_list[k].lkey = LK_BAD;
			expect_fail(&w, &c, KRCORE_R_ZERO_LENGTH);
		}
	}
}

static void set_lengths(struct krcore_wr *w, u32 a, u32 b, u32 c, u32 d)
{
	const u32 len[KRCORE_MAX_SGE] = { a, b, c, d };
	u64 addr = 0x7fff00000000ULL;
	int i;

	w->num_sge = 0;
	for (i = 0; i < KRCORE_MAX_SGE && len[i]; i++) {
		w->sg_list[i].addr = addr;
		w->sg_list[i].length = len[i];
		w->sg_list[i].lkey = LK_BIG;
		addr += len[i];
		w->num_sge++;
	}
}

static void test_too_long(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i;

	(void)state;
	/* READ, WRITE, WRITE_IMM: ctx.max_msg, exact boundary */
	for (i = 0; i < 3; i++) {
		c = good_ctx();
		c.max_msg = 4096;
		w = good_wr(rdma_ops[i], 1);
		set_lengths(&w, 4096, 0, 0, 0);
		expect_ok(&w, &c, 4096);
		set_lengths(&w, 4097, 0, 0, 0);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		set_lengths(&w, 1024, 1024, 1024, 1024);
		expect_ok(&w, &c, 4096);
		set_lengths(&w, 1024, 1024, 1024, 1025);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		/* the SEND limit does not apply to them */
		set_lengths(&w, 4000, 81, 0, 0);
		expect_ok(&w, &c, 4081);

		/* the ABI's limit */
		c.max_msg = KRCORE_MAX_MSG;
		set_lengths(&w, KRCORE_MAX_MSG, 0, 0, 0);
		expect_ok(&w, &c, KRCORE_MAX_MSG);
		set_lengths(&w, KRCORE_MAX_MSG + 1, 0, 0, 0);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		set_lengths(&w, KRCORE_MAX_MSG / 2, KRCORE_MAX_MSG / 4,
			    KRCORE_MAX_MSG / 4 - 1, 1);
		expect_ok(&w, &c, KRCORE_MAX_MSG);
		set_lengths(&w, KRCORE_MAX_MSG / 2, KRCORE_MAX_MSG / 4,
			    KRCORE_MAX_MSG / 4, 1);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		/* sums above 4 GiB do not wrap around (as a u32 sum would) */
		set_lengths(&w, 0x80000000, 0x80000000, 0x10, 0);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		set_lengths(&w, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		set_lengths(&w, 0xffffffff, 1, 0, 0);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		/* a context claiming more than the ABI is held to the ABI */
		c.max_msg = 0xffffffffffffffffULL;
		set_lengths(&w, KRCORE_MAX_MSG, 0, 0, 0);
		expect_ok(&w, &c, KRCORE_MAX_MSG);
		set_lengths(&w, KRCORE_MAX_MSG + 1, 0, 0, 0);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		c.max_msg = (u64)KRCORE_MAX_MSG * 4;
		set_lengths(&w, 0x80000000, 0x80000000, 0, 0);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
	}
	/* SEND, SEND_IMM: KRCORE_MAX_SEND, whatever ctx.max_msg is */
	for (i = 3; i < 5; i++) {
		c = good_ctx();
		w = good_wr(rdma_ops[i], 1);
		set_lengths(&w, KRCORE_MAX_SEND, 0, 0, 0);
		expect_ok(&w, &c, KRCORE_MAX_SEND);
		set_lengths(&w, KRCORE_MAX_SEND + 1, 0, 0, 0);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		set_lengths(&w, 1000, 1000, 1000, KRCORE_MAX_SEND - 3000);
		expect_ok(&w, &c, KRCORE_MAX_SEND);
		set_lengths(&w, 1000, 1000, 1000, KRCORE_MAX_SEND - 2999);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		set_lengths(&w, 0x80000000, 0x80000000, 1, 0);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		c.max_msg = 1024;	/* the READ/WRITE limit */
		set_lengths(&w, KRCORE_MAX_SEND, 0, 0, 0);
		expect_ok(&w, &c, KRCORE_MAX_SEND);
		c.max_msg = 0xffffffffffffffffULL;
		set_lengths(&w, KRCORE_MAX_SEND + 1, 0, 0, 0);
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
	}
}

static void test_atomic_size_align_support(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	int i, k;

	(void)state;
	for (i = 0; i < 2; i++) {
		u8 op = i ? KRCORE_WR_ATOMIC_FAA : KRCORE_WR_ATOMIC_CAS;

		c = good_ctx();
		w = good_wr(op, 2);
		w.sg_list[0].length = 4;
		w.sg_list[1].length = 4;
		expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);
		w = good_wr(op, 4);
		expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);
		w = good_wr(op, 1);
		w.sg_list[0].length = 4;
		expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);
		w.sg_list[0].length = 16;
		expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);
		w.sg_list[0].length = 1;
		expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);
		w.sg_list[0].length = 7;
		expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);
		w.sg_list[0].length = 9;
		expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);
		/* the total length is checked first */
		c.max_msg = 8;
		w.sg_list[0].length = 16;
		expect_fail(&w, &c, KRCORE_R_TOO_LONG);
		c.max_msg = 16;
		expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);
		c.max_msg = 8;
		w.sg_list[0].length = 8;
		expect_ok(&w, &c, 8);

		c = good_ctx();
		for (k = 1; k < 8; k++) {
			w = good_wr(op, 1);
			w.remote_addr = 0x7f0000001000ULL + k;
			expect_fail(&w, &c, KRCORE_R_ATOMIC_ALIGN);
			w.remote_addr = 0xfffffffffffffff8ULL + k;
			expect_fail(&w, &c, KRCORE_R_ATOMIC_ALIGN);
			w.remote_addr = k;
			expect_fail(&w, &c, KRCORE_R_ATOMIC_ALIGN);
		}
		/* size before alignment */
		w.sg_list[0].length = 4;
		expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);

		c.atomics = false;
		w = good_wr(op, 1);
		expect_fail(&w, &c, KRCORE_R_UNSUPPORTED);
		/* alignment before support */
		w.remote_addr |= 4;
		expect_fail(&w, &c, KRCORE_R_ATOMIC_ALIGN);
	}
	/* the other opcodes need neither atomics nor alignment */
	c = good_ctx();
	c.atomics = false;
	for (i = 0; i < (int)ARRAY_SIZE(rdma_ops); i++) {
		w = good_wr(rdma_ops[i], 1);
		w.remote_addr = 0x1003;
		w.sg_list[0].length = 12;
		expect_ok(&w, &c, 12);
	}
}

static void test_no_port(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i;

	(void)state;
	c.has_port = false;
	for (i = 0; i < ARRAY_SIZE(all_ops); i++) {
		u8 op = all_ops[i];

		w = good_wr(op, 1);
		if (op == KRCORE_WR_SEND || op == KRCORE_WR_SEND_IMM ||
		    op == KRCORE_WR_WRITE_IMM)
			expect_fail(&w, &c, KRCORE_R_NO_PORT);
		else
			expect_ok(&w, &c, w.sg_list[0].length);
		/* with a port, all of them go */
		c.has_port = true;
		expect_ok(&w, &c, w.sg_list[0].length);
		c.has_port = false;
	}
	/* before the lkeys are looked at */
	w = good_wr(KRCORE_WR_SEND, 2);
	w.sg_list[0].lkey = LK_BAD;
	expect_fail(&w, &c, KRCORE_R_NO_PORT);
	w.opcode = KRCORE_WR_WRITE_IMM;
	expect_fail(&w, &c, KRCORE_R_NO_PORT);
	/* and before the WRITE_IMM immediate */
	w = good_wr(KRCORE_WR_WRITE_IMM, KRCORE_MAX_SGE);
	w.imm_data = 0x10000;
	expect_fail(&w, &c, KRCORE_R_NO_PORT);
	w.sg_list[3].addr = 0x20000;
	expect_fail(&w, &c, KRCORE_R_NO_PORT);
	/* a WRITE_IMM needs a port, yet is held to the WRITE limit */
	w = good_wr(KRCORE_WR_WRITE_IMM, 1);
	w.sg_list[0].lkey = LK_BIG;
	w.sg_list[0].addr = 0x7fff00000000ULL;
	w.sg_list[0].length = KRCORE_MAX_SEND + 1;	/* a WRITE's limit */
	expect_fail(&w, &c, KRCORE_R_NO_PORT);
	c.has_port = true;
	expect_ok(&w, &c, KRCORE_MAX_SEND + 1);
}

/*
 * KRCORE_R_IMM: the immediate of a WRITE_IMM fits in 16 bits (the other
 * 16 name the port); the immediate of every other opcode is not checked.
 */
static void test_write_imm_immediate(void **state)
{
	static const u32 good_imm[] = { 0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff };
	static const u32 bad_imm[] = {
		0x10000, 0x10001, 0x1ffff, 0x20000, 0xffff0000, 0x80000000,
		0x7fffffff, 0xfffeffff, 0xffffffff,
	};
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i, k;
	u8 n;

	(void)state;
	for (n = 1; n <= KRCORE_MAX_SGE; n++) {
		for (k = 0; k < ARRAY_SIZE(good_imm); k++) {
			w = good_wr(KRCORE_WR_WRITE_IMM, n);
			w.imm_data = good_imm[k];
			expect_ok(&w, &c, 64 * n);
		}
		for (k = 0; k < ARRAY_SIZE(bad_imm); k++) {
			w = good_wr(KRCORE_WR_WRITE_IMM, n);
			w.imm_data = bad_imm[k];
			expect_fail(&w, &c, KRCORE_R_IMM);
		}
	}
	/* every other opcode: any immediate */
	for (i = 0; i < ARRAY_SIZE(all_ops); i++) {
		u8 op = all_ops[i];

		if (op == KRCORE_WR_WRITE_IMM)
			continue;
		for (k = 0; k < ARRAY_SIZE(bad_imm); k++) {
			w = good_wr(op, 1);
			w.imm_data = bad_imm[k];
			expect_ok(&w, &c, w.sg_list[0].length);
		}
	}
	/* an accepted one turns into a rejected one by opcode alone */
	w = good_wr(KRCORE_WR_SEND_IMM, 1);
	w.imm_data = 0x10000;
	expect_ok(&w, &c, 64);
	w.opcode = KRCORE_WR_READ;
	expect_ok(&w, &c, 64);
	w.opcode = KRCORE_WR_WRITE;
	expect_ok(&w, &c, 64);
	w.opcode = KRCORE_WR_WRITE_IMM;
	expect_fail(&w, &c, KRCORE_R_IMM);

	/* after every check before it ... */
	w = good_wr(KRCORE_WR_WRITE_IMM, 1);
	w.imm_data = 0xffffffff;
	w.opcode = 0;
	expect_fail(&w, &c, KRCORE_R_OPCODE);
	w.opcode = KRCORE_WR_WRITE_IMM;
	w.flags = 0x10;
	expect_fail(&w, &c, KRCORE_R_FLAGS);
	w.flags = 0;
	w.reserved0 = 1;
	expect_fail(&w, &c, KRCORE_R_RESERVED);
	w.reserved0 = 0;
	c.connected = false;
	expect_fail(&w, &c, KRCORE_R_NOT_CONNECTED);
	c.connected = true;
	w.num_sge = 0;
	expect_fail(&w, &c, KRCORE_R_NUM_SGE);
	w.num_sge = 1;
	w.sg_list[0].length = 0;
	expect_fail(&w, &c, KRCORE_R_ZERO_LENGTH);
	w.sg_list[0].length = 64;
	c.max_msg = 63;
	expect_fail(&w, &c, KRCORE_R_TOO_LONG);
	c.max_msg = 64;
	c.has_port = false;
	expect_fail(&w, &c, KRCORE_R_NO_PORT);
	c.has_port = true;
	expect_fail(&w, &c, KRCORE_R_IMM);
	/* ... and before the SGE lookups: lkey, range, access */
	c = good_ctx();
	c.atomics = false;	/* a WRITE_IMM does not need atomics */
	w.remote_addr = 0x1003;
	w.sg_list[0].lkey = LK_BAD;
	expect_fail(&w, &c, KRCORE_R_IMM);
	w.sg_list[0].lkey = LK_RW;
	w.sg_list[0].addr = 0x30000;
	expect_fail(&w, &c, KRCORE_R_IMM);
	w.imm_data = 0xffff;
	expect_fail(&w, &c, KRCORE_R_RANGE);
	w.sg_list[0].addr = 0x10000;
	expect_ok(&w, &c, 64);
	/* a read-only registration is fine for a WRITE_IMM */
	w.sg_list[0].lkey = LK_RO;
	w.sg_list[0].addr = 0x40000;
	expect_ok(&w, &c, 64);
	w.imm_data = 0x10000;
	expect_fail(&w, &c, KRCORE_R_IMM);
	/* the SGE of every position */
	for (k = 0; k < KRCORE_MAX_SGE; k++) {
		w = good_wr(KRCORE_WR_WRITE_IMM, KRCORE_MAX_SGE);
		w.imm_data = 0x10000;
		w.sg_list[k].lkey = LK_BAD;
		expect_fail(&w, &c, KRCORE_R_IMM);
		w.imm_data = 0xffff;
		expect_fail(&w, &c, KRCORE_R_LKEY);
	}
}

static void test_lkey(void **state)
{
	static const u32 bad[] = { LK_BAD, 0, 0xffffffff, LK_RW + 1, LK_RW - 1 };
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i, b;
	int k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(all_ops); i++) {
		int n = ref_op_atomic(all_ops[i]) ? 1 : KRCORE_MAX_SGE;

		for (k = 0; k < n; k++) {
			for (b = 0; b < ARRAY_SIZE(bad); b++) {
				w = good_wr(all_ops[i], n);
				w.sg_list[k].lkey = bad[b];
				expect_fail(&w, &c, KRCORE_R_LKEY);
			}
		}
	}
}

static void test_range(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(all_ops); i++) {
		int n = ref_op_atomic(all_ops[i]) ? 1 : KRCORE_MAX_SGE;
		u32 l = ref_op_atomic(all_ops[i]) ? 8 : 64;

		for (k = 0; k < n; k++) {
			w = good_wr(all_ops[i], n);
			/* starts one byte before LK_RW */
			w.sg_list[k].addr = 0x10000 - 1;
			expect_fail(&w, &c, KRCORE_R_RANGE);
			w.sg_list[k].addr = 0;
			expect_fail(&w, &c, KRCORE_R_RANGE);
			/* ends at / one byte after its end */
			w.sg_list[k].addr = 0x20000 - l;
			expect_ok(&w, &c, (u64)l * n);
			w.sg_list[k].addr = 0x20000 - l + 1;
			expect_fail(&w, &c, KRCORE_R_RANGE);
			w.sg_list[k].addr = 0x20000;
			expect_fail(&w, &c, KRCORE_R_RANGE);
			/* inside another registration than its lkey's */
			w.sg_list[k].addr = 0x40000;
			expect_fail(&w, &c, KRCORE_R_RANGE);
			/* wrapping around the end of the address space */
			w.sg_list[k].addr = 0xfffffffffffffff8ULL;
			expect_fail(&w, &c, KRCORE_R_RANGE);
			w.sg_list[k].addr = 0xffffffffffffffffULL;
			expect_fail(&w, &c, KRCORE_R_RANGE);
		}
	}
	/*
	 * LK_ZERO covers [0, 0x1000): addr + length wraps to a small value
	 * inside it, only the wrap check can reject this.
	 */
	w = good_wr(KRCORE_WR_WRITE, 1);
	w.sg_list[0].lkey = LK_ZERO;
	w.sg_list[0].addr = 0xfffffffffffffff0ULL;
	w.sg_list[0].length = 0x20;
	expect_fail(&w, &c, KRCORE_R_RANGE);
	w.sg_list[0].addr = 0xffffffffffffffffULL;
	w.sg_list[0].length = 1;
	expect_fail(&w, &c, KRCORE_R_RANGE);
	w.sg_list[0].addr = 0xfffffffffff00001ULL;
	w.sg_list[0].length = 0xfffff;		/* end is exactly 0 */
	expect_fail(&w, &c, KRCORE_R_RANGE);
	w.sg_list[0].addr = 0;
	w.sg_list[0].length = 0x1000;
	expect_ok(&w, &c, 0x1000);
	w.sg_list[0].length = 0x1001;
	expect_fail(&w, &c, KRCORE_R_RANGE);
	/* LK_TOP ends at 2^64 - 1: its last byte is fine, one more wraps */
	w.sg_list[0].lkey = LK_TOP;
	w.sg_list[0].addr = 0xfffffffffffffffeULL;
	w.sg_list[0].length = 1;
	expect_ok(&w, &c, 1);
	w.sg_list[0].length = 2;
	expect_fail(&w, &c, KRCORE_R_RANGE);
	w.sg_list[0].addr = 0xffffffffffff0000ULL;
	w.sg_list[0].length = 0xffff;
	expect_ok(&w, &c, 0xffff);
	w.sg_list[0].addr = 0xfffffffffffeffffULL;
	expect_fail(&w, &c, KRCORE_R_RANGE);
	/* a length above the registration's, with its start right */
	w = good_wr(KRCORE_WR_READ, 1);
	w.sg_list[0].length = 0x10001;
	expect_fail(&w, &c, KRCORE_R_RANGE);
}

static void test_access(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(all_ops); i++) {
		u8 op = all_ops[i];
		int n = ref_op_atomic(op) ? 1 : KRCORE_MAX_SGE;
		bool writes = op == KRCORE_WR_READ || ref_op_atomic(op);

		for (k = 0; k < n; k++) {
			w = good_wr(op, n);
			w.sg_list[k].lkey = LK_RO;
			w.sg_list[k].addr = 0x40000 + 8 * k;
			if (writes)
				expect_fail(&w, &c, KRCORE_R_ACCESS);
			else
				expect_ok(&w, &c, (u64)w.sg_list[0].length * n);
		}
		/* every SGE read-only */
		w = good_wr(op, n);
		for (k = 0; k < n; k++) {
			w.sg_list[k].lkey = LK_RO;
			w.sg_list[k].addr = 0x41000 - w.sg_list[k].length;
		}
		if (writes)
			expect_fail(&w, &c, KRCORE_R_ACCESS);
		else
			expect_ok(&w, &c, (u64)w.sg_list[0].length * n);
	}
}

/*
 * The order of wr_check.h: a request with many faults reports the first;
 * remove them one at a time and the next one shows.
 */
static void test_check_order(void **state)
{
	struct krc_check_ctx c = good_ctx();
	struct krcore_wr w;

	(void)state;
	/* an atomic with every fault an atomic can have */
	memset(&w, 0, sizeof(w));
	w.opcode = 0;
	w.flags = 0x40;
	w.reserved0 = 1;
	w.num_sge = 0;
	w.remote_addr = 0x1001;
	w.sg_list[0].addr = 0x3f000;	/* before LK_RO */
	w.sg_list[0].length = 0;
	w.sg_list[0].lkey = LK_BAD;
	c.connected = false;
	c.atomics = false;
	c.has_port = false;
	c.max_msg = 8;
	expect_fail(&w, &c, KRCORE_R_OPCODE);
	w.opcode = KRCORE_WR_ATOMIC_CAS;
	expect_fail(&w, &c, KRCORE_R_FLAGS);
	w.flags = KRCORE_WR_SIGNALED;
	expect_fail(&w, &c, KRCORE_R_RESERVED);
	w.reserved0 = 0;
	expect_fail(&w, &c, KRCORE_R_NOT_CONNECTED);
	c.connected = true;
	expect_fail(&w, &c, KRCORE_R_NUM_SGE);
	w.num_sge = 1;
	expect_fail(&w, &c, KRCORE_R_ZERO_LENGTH);
	w.sg_list[0].length = 16;
	expect_fail(&w, &c, KRCORE_R_TOO_LONG);
	c.max_msg = 4096;
	expect_fail(&w, &c, KRCORE_R_ATOMIC_SIZE);
	w.sg_list[0].length = 8;
	expect_fail(&w, &c, KRCORE_R_ATOMIC_ALIGN);
	w.remote_addr = 0x1000;
	expect_fail(&w, &c, KRCORE_R_UNSUPPORTED);
	c.atomics = true;
	expect_fail(&w, &c, KRCORE_R_LKEY);
	w.sg_list[0].lkey = LK_RO;
	expect_fail(&w, &c, KRCORE_R_RANGE);
	w.sg_list[0].addr = 0x40000;
	expect_fail(&w, &c, KRCORE_R_ACCESS);
	w.sg_list[0].lkey = LK_RW;
	w.sg_list[0].addr = 0x10000;
	expect_ok(&w, &c, 8);

	/* a SEND with every fault a SEND can have */
	c = good_ctx();
	w = good_wr(KRCORE_WR_SEND, KRCORE_MAX_SGE);
	w.opcode = 255;
	w.flags = 0x84;
	w.reserved1 = 5;
	w.num_sge = 0;
	w.sg_list[2].length = 0;
	w.sg_list[0].length = KRCORE_MAX_SEND;
	w.sg_list[3].lkey = LK_BAD;
	w.sg_list[1].addr = 0x20000;
	c.connected = false;
	c.has_port = false;
	expect_fail(&w, &c, KRCORE_R_OPCODE);
	w.opcode = KRCORE_WR_SEND;
	expect_fail(&w, &c, KRCORE_R_FLAGS);
	w.flags = 0;
	expect_fail(&w, &c, KRCORE_R_RESERVED);
	w.reserved1 = 0;
	expect_fail(&w, &c, KRCORE_R_NOT_CONNECTED);
	c.connected = true;
	expect_fail(&w, &c, KRCORE_R_NUM_SGE);
	w.num_sge = KRCORE_MAX_SGE;
	expect_fail(&w, &c, KRCORE_R_ZERO_LENGTH);
	w.sg_list[2].length = 1;
	expect_fail(&w, &c, KRCORE_R_TOO_LONG);
	w.sg_list[0].length = 64;
	expect_fail(&w, &c, KRCORE_R_NO_PORT);
	c.has_port = true;
	/* SGE by SGE: the range of SGE 1 before the lkey of SGE 3 */
	expect_fail(&w, &c, KRCORE_R_RANGE);
	w.sg_list[1].addr = 0x10100;
	expect_fail(&w, &c, KRCORE_R_LKEY);
	w.sg_list[3].lkey = LK_RW;
	expect_ok(&w, &c, 64 + 64 + 1 + 64);

	/* a WRITE_IMM with every fault a WRITE_IMM can have */
	c = good_ctx();
	w = good_wr(KRCORE_WR_WRITE_IMM, 2);
	w.opcode = 0x83;
	w.flags = 0x20;
	w.reserved0 = 9;
	w.reserved1 = 9;
	w.num_sge = 7;
	w.sg_list[1].length = 0;
	w.sg_list[0].length = 8192;
	w.imm_data = 0x12345678;
	w.remote_addr = 0x1001;		/* not an atomic: not checked */
	w.sg_list[0].lkey = LK_BAD;
	w.sg_list[1].addr = 0x1ffff;
	c.connected = false;
	c.has_port = false;
	c.atomics = false;		/* not an atomic: not needed */
	c.max_msg = 4096;
	expect_fail(&w, &c, KRCORE_R_OPCODE);
	w.opcode = KRCORE_WR_WRITE_IMM;
	expect_fail(&w, &c, KRCORE_R_FLAGS);
	w.flags = KRCORE_WR_FENCE;
	expect_fail(&w, &c, KRCORE_R_RESERVED);
	w.reserved0 = 0;
	expect_fail(&w, &c, KRCORE_R_RESERVED);
	w.reserved1 = 0;
	expect_fail(&w, &c, KRCORE_R_NOT_CONNECTED);
	c.connected = true;
	expect_fail(&w, &c, KRCORE_R_NUM_SGE);
	w.num_sge = 2;
	expect_fail(&w, &c, KRCORE_R_ZERO_LENGTH);
	w.sg_list[1].length = 1;
	expect_fail(&w, &c, KRCORE_R_TOO_LONG);
	c.max_msg = 8193;
	expect_fail(&w, &c, KRCORE_R_NO_PORT);
	c.has_port = true;
	expect_fail(&w, &c, KRCORE_R_IMM);
	w.imm_data = 0x5678;
	expect_fail(&w, &c, KRCORE_R_LKEY);
	w.sg_list[0].lkey = LK_RW;
	/* SGE 0 fine, SGE 1 (0x1ffff, 1 byte) is LK_RW's last byte */
	expect_ok(&w, &c, 8193);
	w.sg_list[1].length = 2;
	c.max_msg = 8194;
	expect_fail(&w, &c, KRCORE_R_RANGE);

	/* a bad opcode hides a bad lkey; not connected hides SGE faults */
	c = good_ctx();
	w = good_wr(KRCORE_WR_READ, 1);
	w.opcode = 8;
	w.sg_list[0].lkey = LK_BAD;
	expect_fail(&w, &c, KRCORE_R_OPCODE);
	w.opcode = KRCORE_WR_READ;
	c.connected = false;
	expect_fail(&w, &c, KRCORE_R_NOT_CONNECTED);
	w.num_sge = 0;
	expect_fail(&w, &c, KRCORE_R_NOT_CONNECTED);
	w.num_sge = 1;
	w.sg_list[0].length = 0;
	expect_fail(&w, &c, KRCORE_R_NOT_CONNECTED);

	/* per SGE: the access of SGE 0 before the lkey of SGE 1 */
	c = good_ctx();
	w = good_wr(KRCORE_WR_READ, 2);
	w.sg_list[0].lkey = LK_RO;
	w.sg_list[0].addr = 0x40000;
	w.sg_list[1].lkey = LK_BAD;
	expect_fail(&w, &c, KRCORE_R_ACCESS);
	/* and the lkey of SGE 0 before the range of SGE 1 */
	w = good_wr(KRCORE_WR_WRITE, 2);
	w.sg_list[0].lkey = LK_BAD;
	w.sg_list[1].addr = 1;
	expect_fail(&w, &c, KRCORE_R_LKEY);
}

static void test_reason_tables(void **state)
{
	const char *s, *seen[KRCORE_R_MAX];
	u32 r, k;

	(void)state;
	for (r = 0; r < KRCORE_R_MAX; r++) {
		if (-krc_reason_errno(r) != ref_errno(r))
			fail_msg("krc_reason_errno(%s) = %d, documented %d",
				 reason_name(r), krc_reason_errno(r), -ref_errno(r));
		s = krc_reason_str(r);
		assert_non_null(s);
		if (!strcmp(s, "?") || !s[0])
			fail_msg("no text for %s", reason_name(r));
		for (k = 0; k < r; k++)
			if (!strcmp(seen[k], s))
				fail_msg("%s and %s share \"%s\"", reason_name(k),
					 reason_name(r), s);
		seen[r] = s;
	}
	assert_int_equal(krc_reason_errno(KRCORE_R_OK), 0);
	assert_int_equal(krc_reason_errno(KRCORE_R_IMM), EINVAL);
	assert_int_equal(krc_reason_errno(KRCORE_R_NO_PORT), EDESTADDRREQ);
	assert_string_equal(krc_reason_str(KRCORE_R_IMM),
			    "WRITE_IMM immediate beyond 16 bits");
	/* out of range: "?", and never success */
	for (r = KRCORE_R_MAX; r < KRCORE_R_MAX + 300; r++) {
		assert_string_equal(krc_reason_str(r), "?");
		assert_int_not_equal(krc_reason_errno(r), 0);
	}
	assert_string_equal(krc_reason_str(0x80000000), "?");
	assert_string_equal(krc_reason_str(0xffffffff), "?");
	assert_int_not_equal(krc_reason_errno(0xffffffff), 0);
}

static void test_opcode_properties(void **state)
{
	unsigned int op;

	(void)state;
	for (op = 0; op < 256; op++) {
		bool writes = op == KRCORE_WR_READ || op == KRCORE_WR_ATOMIC_CAS ||
			      op == KRCORE_WR_ATOMIC_FAA;
		bool idem = op == KRCORE_WR_READ || op == KRCORE_WR_WRITE;

		if (krc_wr_writes_local((u8)op) != writes)
			fail_msg("krc_wr_writes_local(%u) != %d", op, writes);
		if (krc_wr_idempotent((u8)op) != idem)
			fail_msg("krc_wr_idempotent(%u) != %d", op, idem);
	}
}

/* ---- the randomized comparison with a reference ---- */

/* splitmix64, fixed seed: every run tests the same requests */
static u64 rnd(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u32 below(u64 *s, u32 n)
{
	return (u32)(rnd(s) % n);
}

/* The shared reference, over the table above. */
static const struct krc_mr_view *ref_find(const void *arg, u32 lkey)
{
	return find_reg(lkey);
}

/* A random valid request and its context. */
static void random_valid(u64 *s, struct krcore_wr *w, struct krc_check_ctx *c)
{
	static const u32 rw_keys[] = { LK_RW, LK_BIG, LK_TOP, LK_ZERO };
	u8 op = all_ops[below(s, ARRAY_SIZE(all_ops))];
	bool send = op == KRCORE_WR_SEND || op == KRCORE_WR_SEND_IMM;
	u64 budget;
	u32 i, len;

	*c = good_ctx();
	c->has_port = send || op == KRCORE_WR_WRITE_IMM || below(s, 2);
	c->atomics = ref_op_atomic(op) || below(s, 2);
	c->max_sge = below(s, 4) ? KRCORE_MAX_SGE : 1 + below(s, KRCORE_MAX_SGE);
	switch (below(s, 4)) {
	case 0:
		c->max_msg = KRCORE_MAX_MSG;
		break;
	case 1:
		c->max_msg = 4096;
		break;
	case 2:
		c->max_msg = 8 + below(s, 1 << 20);
		break;
	default:
		c->max_msg = 8 + below(s, KRCORE_MAX_MSG - 7);
		break;
	}
	for (i = 0; i < sizeof(*w); i++)
		((u8 *)w)[i] = (u8)rnd(s);	/* unused SGEs hold garbage */
	w->opcode = op;
	w->flags = (u8)below(s, 4);
	w->reserved0 = 0;
	w->reserved1 = 0;
	w->num_sge = (u8)(ref_op_atomic(op) ? 1 : 1 + below(s, c->max_sge));
	if (ref_op_atomic(op))
		w->remote_addr &= ~7ULL;
	/* a WRITE_IMM's immediate fits 16 bits; the others' are garbage */
	if (op == KRCORE_WR_WRITE_IMM)
		w->imm_data = below(s, 4) ? below(s, 0x10000) : 0xffff;
	budget = send ? KRCORE_MAX_SEND : c->max_msg;
	for (i = 0; i < w->num_sge; i++) {
		const struct reg *r = regs;
		u32 key;
		u64 room;

		/* a READ or an atomic needs LOCAL_WRITE */
		if (ref_op_writes(op))
			key = rw_keys[below(s, ARRAY_SIZE(rw_keys))];
		else
			key = regs[below(s, ARRAY_SIZE(regs))].lkey;
		while (r->lkey != key)
			r++;
		/* leave a byte for each SGE after this one */
		room = budget - (w->num_sge - 1 - i);
		if (room > r->mr.length)
			room = r->mr.length;
		if (room > 0xffffffff)
			room = 0xffffffff;
		if (ref_op_atomic(op))
			len = 8;
		else if (below(s, 4))
			len = 1 + below(s, room < 256 ? (u32)room : 256);
		else
			len = 1 + (u32)(rnd(s) % room);
		budget -= len;
		w->sg_list[i].lkey = r->lkey;
		w->sg_list[i].length = len;
		w->sg_list[i].addr = r->mr.addr + rnd(s) % (r->mr.length - len + 1);
	}
}

static u32 interesting_u32(u64 *s)
{
	static const u32 v[] = {
		0, 1, 2, 7, 8, 9, 16, 64, 4095, 4096, KRCORE_MAX_SEND,
		KRCORE_MAX_SEND + 1, 0xffff, 0x10000, 0x10001, KRCORE_MAX_MSG,
		KRCORE_MAX_MSG + 1, 0x7fffffff, 0x80000000, 0xfffffff8, 0xffffffff,
	};

	return below(s, 2) ? v[below(s, ARRAY_SIZE(v))] : (u32)rnd(s);
}

/* Change one thing of a valid request or of its context. */
static void mutate(u64 *s, struct krcore_wr *w, struct krc_check_ctx *c)
{
	u32 k = below(s, KRCORE_MAX_SGE);
	struct krcore_sge *g = &w->sg_list[k];
	const struct krc_mr_view *mr;

	switch (below(s, 21)) {
	case 0:
		w->opcode = below(s, 2) ? (u8)rnd(s) : (u8)below(s, 10);
		break;
	case 1:		/* another opcode, same buffers */
		w->opcode = all_ops[below(s, ARRAY_SIZE(all_ops))];
		break;
	case 2:
		w->flags = below(s, 2) ? (u8)rnd(s) : (u8)(1U << below(s, 8));
		break;
	case 3:
		w->reserved0 = (u8)rnd(s);
		break;
	case 4:
		w->reserved1 = below(s, 2) ? (u32)rnd(s) : 1U << below(s, 32);
		break;
	case 5:
		c->connected = !c->connected;
		break;
	case 6:
		c->has_port = !c->has_port;
		break;
	case 7:
		c->atomics = !c->atomics;
		break;
	case 8:
		c->max_sge = below(s, KRCORE_MAX_SGE + 3);
		break;
	case 9: {
		u64 sum = 0;
		u32 i;

		for (i = 0; i < w->num_sge && i < KRCORE_MAX_SGE; i++)
			sum += w->sg_list[i].length;
		if (below(s, 2))
			c->max_msg = sum + below(s, 3) - 1;
		else
			c->max_msg = below(s, 2) ? below(s, 64) : interesting_u32(s);
		/* now and then a context beyond the ABI's limit */
		if (below(s, 8) == 0)
			c->max_msg = (u64)KRCORE_MAX_MSG << below(s, 34);
		else if (c->max_msg > KRCORE_MAX_MSG)
			c->max_msg = KRCORE_MAX_MSG;
		break;
	}
	case 10:
		w->num_sge = below(s, 2) ? (u8)below(s, KRCORE_MAX_SGE + 3) : (u8)rnd(s);
		break;
	case 11:
	case 12:
		switch (below(s, 4)) {
		case 0:
			g->length = 0;
			break;
		case 1:
			g->length += below(s, 17) - 8;
			break;
		default:
			g->length = interesting_u32(s);
			break;
		}
		break;
	case 13:
	case 14:
		mr = find_reg(g->lkey);
		switch (below(s, 5)) {
		case 0:
			g->addr += (u64)below(s, 33) - 16;
			break;
		case 1:		/* near the registration's start or end */
			if (mr)
				g->addr = mr->addr + below(s, 5) - 2;
			break;
		case 2:
			if (mr)
				g->addr = mr->addr + mr->length - g->length +
					  below(s, 5) - 2;
			break;
		case 3:
			g->addr = 0 - (u64)below(s, 0x20000);
			break;
		default:
			g->addr = rnd(s);
			break;
		}
		break;
	case 15:
	case 16:
		g->lkey = below(s, 8) ? some_lkeys[below(s, ARRAY_SIZE(some_lkeys))] :
					(u32)rnd(s);
		break;
	case 17:
		w->remote_addr ^= 1ULL << below(s, 4);
		break;
	case 18: {	/* swap two SGEs */
		struct krcore_sge t = *g;
		u32 j = below(s, KRCORE_MAX_SGE);

		*g = w->sg_list[j];
		w->sg_list[j] = t;
		break;
	}
	case 19:	/* the immediate, near and far from 16 bits */
		switch (below(s, 3)) {
		case 0:
			w->imm_data = 0xffff + below(s, 3);
			break;
		case 1:
			w->imm_data ^= 1U << below(s, 32);
			break;
		default:
			w->imm_data = interesting_u32(s);
			break;
		}
		break;
	default:	/* anything, the context kept */
		for (k = 0; k < sizeof(*w); k++)
			((u8 *)w)[k] = (u8)rnd(s);
		if (below(s, 2)) {
			w->opcode = (u8)(1 + below(s, 7));
			w->flags &= 3;
			w->reserved0 = 0;
			w->reserved1 = 0;
			w->num_sge = (u8)(1 + below(s, KRCORE_MAX_SGE));
		}
		break;
	}
}

static void test_vs_reference(void **state)
{
	unsigned long hits[KRCORE_R_MAX] = { 0 };
	struct krc_check_ctx c;
	struct krcore_wr w;
	u64 seed = 0x6b72636f7265ULL, len, want_len;
	u32 reason, want, n, r;
	int i, rc;

	(void)state;
	for (i = 0; i < 200000; i++) {
		random_valid(&seed, &w, &c);
		want_len = 0;
		if (ref_check(&w, &c, ref_find, NULL, &want_len) != KRCORE_R_OK) {
			dump_wr(&w, &c);
			fail_msg("iteration %d: the generator made an invalid request", i);
		}
		/* 10% valid, 70% one change, 20% two or three */
		n = below(&seed, 10);
		n = n == 0 ? 0 : n < 8 ? 1 : 2 + below(&seed, 2);
		while (n--)
			mutate(&seed, &w, &c);

		want_len = 0xbad;
		want = ref_check(&w, &c, ref_find, NULL, &want_len);
		reason = 0xbad;
		len = 0xbad;
		rc = krc_wr_check(&w, &c, &reason, &len);
		if (rc != ref_errno(want) || reason != want ||
		    (want == KRCORE_R_OK && len != want_len)) {
			dump_wr(&w, &c);
			fail_msg("iteration %d: reference %s len %llu; got %d %s (%u) len %llu",
				 i, reason_name(want), (unsigned long long)want_len, rc,
				 reason_name(reason), reason, (unsigned long long)len);
		}
		hits[want]++;
	}
	/* every reason the check can give was reached many times */
	for (r = KRCORE_R_OK; r < KRCORE_R_MAX; r++) {
		bool checked = r <= KRCORE_R_UNSUPPORTED || r == KRCORE_R_IMM;

		if (checked && hits[r] < 200)
			fail_msg("reason %s reached %lu times only", reason_name(r), hits[r]);
		/* VQ_FULL, QP_FULL, RECOVERING: the poster's, not the check's */
		if (!checked && hits[r])
			fail_msg("the reference gave %s", reason_name(r));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_accepts_every_opcode),
		cmocka_unit_test(test_bad_opcode_flags_reserved),
		cmocka_unit_test(test_not_connected),
		cmocka_unit_test(test_num_sge),
		cmocka_unit_test(test_zero_length),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_atomic_size_align_support),
		cmocka_unit_test(test_no_port),
		cmocka_unit_test(test_write_imm_immediate),
		cmocka_unit_test(test_lkey),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_access),
		cmocka_unit_test(test_check_order),
		cmocka_unit_test(test_reason_tables),
		cmocka_unit_test(test_opcode_properties),
		cmocka_unit_test(test_vs_reference),
	};

	return cmocka_run_group_tests_name("wr_check", tests, NULL, NULL);
}
