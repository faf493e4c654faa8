// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_qp_state.c - the per-node QP state model (common/qp_state.c): the
 * formula of each scheme over a grid of cluster sizes, the SRC slides'
 * RC column reproduced (P = 20, 750 B per QP, MB = 2^20 bytes), the RC
 * cap's bounds, DC independent of N, one node alone, products that
 * saturate instead of wrapping, and the inputs it refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qp_state.h"

static const struct krc_qp_costs costs = {
	.rc = 750, .ud = 300, .dct = 1000, .dci = 500,
};

static struct krc_qp_cluster cluster(u64 n, u64 p)
{
	struct krc_qp_cluster c = {
		.nodes = n, .procs = p, .pool_size = 2, .rc_max = 64,
		.ctrl_ud = 1, .fixed_rc = 5,
	};

	return c;
}

static struct krc_qp_state state(enum krc_qp_scheme s,
				 const struct krc_qp_cluster *c,
				 const struct krc_qp_costs *k)
{
	struct krc_qp_state st;

	assert_int_equal(krc_qp_state(s, c, k, &st), 0);
	assert_int_equal(st.qps, st.rc_qps + st.ud_qps + st.dc_qps);
	return st;
}

static const u64 grid_n[] = { 1, 2, 32, 65, 66, 128, 512, 10000 };
static const u64 grid_p[] = { 1, 2, 8, 24, 48 };

static void test_verbs_rc(void **unused)
{
	struct krc_qp_cluster c;
	struct krc_qp_state st;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(grid_n); i++)
		for (j = 0; j < ARRAY_SIZE(grid_p); j++) {
			c = cluster(grid_n[i], grid_p[j]);
			st = state(KRC_QPS_VERBS_RC, &c, &costs);
			assert_int_equal(st.rc_qps,
					 grid_p[j] * grid_p[j] * (grid_n[i] - 1));
			assert_int_equal(st.ud_qps + st.dc_qps, 0);
			assert_int_equal(st.bytes, st.rc_qps * 750);
			assert_int_equal(st.rc_peers, grid_n[i] - 1);
			assert_int_equal(st.dg_peers, 0);
		}
}

/* The slides' RC column: 8.869, 36.335 and 146.198 MB at 32, 128, 512. */
static void test_src_seed_rc_column(void **unused)
{
	static const u64 n[] = { 32, 128, 512 };
	static const u64 milli_mib[] = { 8869, 36335, 146198 };
	struct krc_qp_costs k = { .rc = 750 };
	struct krc_qp_cluster c;
	struct krc_qp_state st;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(n); i++) {
		c = cluster(n[i], 20);
		st = state(KRC_QPS_VERBS_RC, &c, &k);
		assert_int_equal(st.bytes, 20 * 20 * (n[i] - 1) * 750);
		/* MiB with three decimals, rounded */
		assert_int_equal((st.bytes * 1000 + (1 << 19)) >> 20,
				 milli_mib[i]);
	}
}

static void test_pool(void **unused)
{
	struct krc_qp_cluster c;
	struct krc_qp_state st;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(grid_n); i++)
		for (j = 0; j < ARRAY_SIZE(grid_p); j++) {
			c = cluster(grid_n[i], grid_p[j]);
			st = state(KRC_QPS_POOL, &c, &costs);
			/* shared by the processes: P plays no part */
			assert_int_equal(st.rc_qps, 2 * (grid_n[i] - 1) + 5);
			assert_int_equal(st.ud_qps, 1);
			assert_int_equal(st.dc_qps, 0);
			assert_int_equal(st.bytes, st.rc_qps * 750 + 300);
			assert_int_equal(st.rc_peers, grid_n[i] - 1);
			assert_int_equal(st.dg_peers, 0);
		}
	c = cluster(100, 8);
	c.pool_size = 4;
	c.ctrl_ud = 2;
	c.fixed_rc = 0;
	st = state(KRC_QPS_POOL, &c, &costs);
	assert_int_equal(st.rc_qps, 4 * 99);
	assert_int_equal(st.ud_qps, 2);
	assert_int_equal(st.bytes, 4 * 99 * 750 + 2 * 300);
}

static void test_rc_cap(void **unused)
{
	struct krc_qp_state st, pool;
	struct krc_qp_cluster c;
	size_t i, j;
	u64 peers;

	for (i = 0; i < ARRAY_SIZE(grid_n); i++)
		for (j = 0; j < ARRAY_SIZE(grid_p); j++) {
			c = cluster(grid_n[i], grid_p[j]);
			st = state(KRC_QPS_RC_CAP, &c, &costs);
			pool = state(KRC_QPS_POOL, &c, &costs);
			peers = grid_n[i] - 1 < 64 ? grid_n[i] - 1 : 64;
			assert_int_equal(st.rc_peers, peers);
			assert_int_equal(st.dg_peers, grid_n[i] - 1 - peers);
			assert_int_equal(st.rc_qps, 2 * peers + 5);
			assert_int_equal(st.ud_qps, 1);
			assert_true(st.qps <= pool.qps);
			assert_true(st.bytes <= pool.bytes);
			if (grid_n[i] - 1 <= 64)
				assert_memory_equal(&st, &pool, sizeof(st));
		}
	/* no cap (rc_max 0): the pool's numbers */
	c = cluster(10000, 8);
	c.rc_max = 0;
	st = state(KRC_QPS_RC_CAP, &c, &costs);
	pool = state(KRC_QPS_POOL, &c, &costs);
	assert_memory_equal(&st, &pool, sizeof(st));
	/* a cap of one */
	c.rc_max = 1;
	st = state(KRC_QPS_RC_CAP, &c, &costs);
	assert_int_equal(st.rc_qps, 2 + 5);
	assert_int_equal(st.dg_peers, 9998);
}

static void test_dc(void **unused)
{
	struct krc_qp_cluster c;
	struct krc_qp_state st;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(grid_n); i++)
		for (j = 0; j < ARRAY_SIZE(grid_p); j++) {
			c = cluster(grid_n[i], grid_p[j]);
			st = state(KRC_QPS_DC, &c, &costs);
			assert_int_equal(st.dc_qps, 1 + grid_p[j]);
			assert_int_equal(st.rc_qps + st.ud_qps, 0);
			assert_int_equal(st.bytes, 1000 + 500 * grid_p[j]);
		}
}

/* One node alone: nobody to connect to, only krcore's fixed QPs. */
static void test_one_node(void **unused)
{
	struct krc_qp_cluster c = cluster(1, 48);
	struct krc_qp_state st;

	st = state(KRC_QPS_VERBS_RC, &c, &costs);
	assert_int_equal(st.qps, 0);
	assert_int_equal(st.bytes, 0);
	st = state(KRC_QPS_POOL, &c, &costs);
	assert_int_equal(st.rc_qps, 5);
	st = state(KRC_QPS_RC_CAP, &c, &costs);
	assert_int_equal(st.rc_qps, 5);
	assert_int_equal(st.dg_peers, 0);
}

/* More nodes never mean fewer QPs or bytes, whatever the scheme. */
static void test_monotonic(void **unused)
{
	struct krc_qp_state a, b;
	struct krc_qp_cluster c;
	size_t i, j;
	int s;

	for (s = 0; s < KRC_QPS_NR; s++)
		for (j = 0; j < ARRAY_SIZE(grid_p); j++)
			for (i = 1; i < ARRAY_SIZE(grid_n); i++) {
				c = cluster(grid_n[i - 1], grid_p[j]);
				a = state(s, &c, &costs);
				c = cluster(grid_n[i], grid_p[j]);
				b = state(s, &c, &costs);
				assert_true(b.qps >= a.qps);
				assert_true(b.bytes >= a.bytes);
			}
}

static void test_saturates(void **unused)
{
	struct krc_qp_costs big = {
		.rc = ~(u64)0 / 2, .ud = ~(u64)0, .dct = ~(u64)0,
		.dci = ~(u64)0,
	};
	struct krc_qp_cluster c = cluster(~(u64)0, ~(u64)0);
	struct krc_qp_state st;
	int s;

	assert_int_equal(krc_qp_mul_sat(1ULL << 32, 1ULL << 32), KRC_QP_SAT);
	assert_int_equal(krc_qp_mul_sat(1ULL << 31, 1ULL << 32), 1ULL << 63);
	assert_int_equal(krc_qp_add_sat(~(u64)0, 1), KRC_QP_SAT);
	assert_int_equal(krc_qp_add_sat(1, 2), 3);
	c.pool_size = ~(u64)0;
	c.rc_max = 0;
	for (s = 0; s < KRC_QPS_NR; s++) {
		assert_int_equal(krc_qp_state(s, &c, &big, &st), 0);
		assert_int_equal(st.qps, KRC_QP_SAT);
		assert_int_equal(st.bytes, KRC_QP_SAT);
	}
	/* the RC cap bounds the count however large the rest */
	c.rc_max = 10;
	c.pool_size = 2;
	assert_int_equal(krc_qp_state(KRC_QPS_RC_CAP, &c, &costs, &st), 0);
	assert_int_equal(st.rc_qps, 25);
}

static void test_refused(void **unused)
{
	struct krc_qp_cluster c = cluster(0, 8);
	struct krc_qp_state st;

	memset(&st, 0xa5, sizeof(st));
	assert_int_equal(krc_qp_state(KRC_QPS_VERBS_RC, &c, &costs, &st),
			 -EINVAL);
	assert_int_equal(st.qps, 0);
	c = cluster(8, 8);
	c.pool_size = 0;
	assert_int_equal(krc_qp_state(KRC_QPS_POOL, &c, &costs, &st), -EINVAL);
	assert_int_equal(krc_qp_state(KRC_QPS_RC_CAP, &c, &costs, &st),
			 -EINVAL);
	assert_int_equal(krc_qp_state(KRC_QPS_DC, &c, &costs, &st), 0);
	assert_int_equal(krc_qp_state(KRC_QPS_NR, &c, &costs, &st), -EINVAL);
	assert_int_equal(krc_qp_state((enum krc_qp_scheme)-1, &c, &costs, &st),
			 -EINVAL);
	assert_string_equal(krc_qp_scheme_name(KRC_QPS_VERBS_RC), "verbs_rc");
	assert_string_equal(krc_qp_scheme_name(KRC_QPS_POOL), "krcore_pool");
	assert_string_equal(krc_qp_scheme_name(KRC_QPS_RC_CAP),
			    "krcore_rc_cap");
	assert_string_equal(krc_qp_scheme_name(KRC_QPS_DC), "dc");
	assert_string_equal(krc_qp_scheme_name(KRC_QPS_NR), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verbs_rc),
		cmocka_unit_test(test_src_seed_rc_column),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_rc_cap),
		cmocka_unit_test(test_dc),
		cmocka_unit_test(test_one_node),
		cmocka_unit_test(test_monotonic),
		cmocka_unit_test(test_saturates),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
