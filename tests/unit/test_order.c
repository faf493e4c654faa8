// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_order.c - a VQ's requests in post order (common/order.h): append,
 * take back, retire in order; the 32-bit indices wrapping; a full ring
 * refuses; checked against a plain reference queue. No VM needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

/* xorshift64*, fixed seed */
static u64 rnd(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static void test_size(void **state)
{
	(void)state;
	assert_int_equal(krc_order_size(1), 1);
	assert_int_equal(krc_order_size(2), 2);
	assert_int_equal(krc_order_size(3), 4);
	assert_int_equal(krc_order_size(256), 256);
	assert_int_equal(krc_order_size(257), 512);
	assert_int_equal(krc_order_size(4096), 4096);
	assert_int_equal(krc_order_size(65536), 65536);
}

static void test_fifo(void **state)
{
	struct krc_order o;
	u16 ids[4], id;

	(void)state;
	krc_order_init(&o, ids, krc_order_size(3));
	assert_false(krc_order_first(&o, &id));
	assert_true(krc_order_push(&o, 7));
	assert_true(krc_order_push(&o, 3));
	assert_true(krc_order_push(&o, 9));
	assert_true(krc_order_push(&o, 1));
	/* full: refused, nothing overwritten */
	assert_false(krc_order_push(&o, 5));
	assert_int_equal(krc_order_count(&o), 4);
	assert_true(krc_order_first(&o, &id));
	assert_int_equal(id, 7);
	krc_order_pop(&o);
	assert_true(krc_order_first(&o, &id));
	assert_int_equal(id, 3);
	krc_order_pop(&o);
	krc_order_pop(&o);
	krc_order_pop(&o);
	assert_false(krc_order_first(&o, &id));
	/* popping an empty ring changes nothing */
	krc_order_pop(&o);
	assert_int_equal(krc_order_count(&o), 0);
}

static void test_unpush(void **state)
{
	struct krc_order o;
	u16 ids[8], id;
	const u16 last2[] = { 5, 6 }, wrong[] = { 6, 5 };

	(void)state;
	krc_order_init(&o, ids, 8);
	assert_true(krc_order_push(&o, 4));
	assert_true(krc_order_push(&o, 5));
	assert_true(krc_order_push(&o, 6));
	/* not the last ones in their order: refused, nothing changed */
	assert_false(krc_order_unpush(&o, wrong, 2));
	assert_false(krc_order_unpush(&o, last2, 4));
	assert_int_equal(krc_order_count(&o), 3);
	assert_true(krc_order_unpush(&o, last2, 2));
	assert_int_equal(krc_order_count(&o), 1);
	assert_true(krc_order_unpush(&o, last2, 0));
	assert_true(krc_order_first(&o, &id));
	assert_int_equal(id, 4);
}

/* Indices that wrap around 2^32 in the middle of the ring. */
static void test_wrap(void **state)
{
	struct krc_order o;
	u16 ids[4], id;
	const u16 back[] = { 12 };
	u32 i;

	(void)state;
	krc_order_init(&o, ids, 4);
	o.head = 0xfffffffeU;
	o.tail = o.head;
	for (i = 0; i < 4; i++)
		assert_true(krc_order_push(&o, (u16)(10 + i)));
	assert_false(krc_order_push(&o, 99));
	assert_int_equal(o.tail, 2);
	for (i = 0; i < 2; i++) {
		assert_true(krc_order_first(&o, &id));
		assert_int_equal(id, 10 + i);
		krc_order_pop(&o);
	}
	assert_true(krc_order_push(&o, 14));
	assert_false(krc_order_unpush(&o, back, 1));
	assert_true(krc_order_first(&o, &id));
	assert_int_equal(id, 12);
	assert_int_equal(krc_order_count(&o), 3);
}

/*
 * Random traffic against a reference: reserve batches, take some back,
 * complete in random order; what the ring retires (only done ones, from
 * the head) must be exactly the post order.
 */
static void test_random(void **state)
{
	enum { DEPTH = 24, ROUNDS = 200000 };
	u16 ids[32], batch[DEPTH], free_ids[DEPTH], posted[1 << 16], id;
	bool done[DEPTH] = { false };
	u32 nfree = DEPTH, npost = 0, nret = 0, i, k;
	struct krc_order o;
	u64 seed = 0x9e3779b97f4a7c15ULL;
	int r;

	(void)state;
	krc_order_init(&o, ids, krc_order_size(DEPTH));
	o.head = 0xffffff00U;	/* wrap during the run */
	o.tail = o.head;
	for (i = 0; i < DEPTH; i++)
		free_ids[i] = (u16)i;
	for (r = 0; r < ROUNDS; r++) {
		u32 n = rnd(&seed) % 4;

		/* reserve up to n, give back a random tail of them */
		for (k = 0; k < n && nfree; k++) {
			batch[k] = free_ids[--nfree];
			assert_true(krc_order_push(&o, batch[k]));
		}
		if (k && rnd(&seed) % 3 == 0) {
			u32 back = (u32)(rnd(&seed) % (k + 1));

			assert_true(krc_order_unpush(&o, batch + k - back, back));
			for (i = 0; i < back; i++)
				free_ids[nfree++] = batch[k - 1 - i];
			k -= back;
		}
		for (i = 0; i < k; i++)
			posted[npost++ & 0xffff] = batch[i];
		/* complete a random outstanding one */
		if (krc_order_count(&o)) {
			u32 pick = (u32)(rnd(&seed) % krc_order_count(&o));

			done[o.ids[(o.head + pick) & o.mask]] = true;
		}
		/* retire what can be, in order */
		while (krc_order_first(&o, &id) && done[id]) {
			assert_int_equal(id, posted[nret++ & 0xffff]);
			done[id] = false;
			free_ids[nfree++] = id;
			krc_order_pop(&o);
		}
		assert_int_equal(krc_order_count(&o) + nfree, DEPTH);
		assert_int_equal(npost - nret, krc_order_count(&o));
	}
	assert_true(nret > ROUNDS / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_unpush),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
