// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_cookie.c - the wr_id cookie of a VQ's requests and the completion
 * ring's fill level (common/cookie.h), no VM needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cookie.h"

#define VQ_MAX		KRC_COOKIE_VQ_MAX
#define SLOT_MAX	KRC_COOKIE_SLOT_MASK
#define GEN_MAX		KRC_COOKIE_GEN_MASK

/* xorshift64*, fixed seed */
static u64 rnd(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static void test_layout(void **state)
{
	(void)state;
	/* the documented bit positions */
	assert_int_equal(KRC_COOKIE_GEN_BITS + KRC_COOKIE_SLOT_BITS + KRC_COOKIE_VQ_BITS + 1, 64);
	assert_int_equal(VQ_MAX, 0xfffff);
	assert_int_equal(SLOT_MAX, 0xffff);
	assert_int_equal(GEN_MAX, 0x7ffffff);
	assert_true(krc_cookie_make(0, 0, 0) == 1);
	assert_true(krc_cookie_make(0, 0, 1) == 0x3);
	assert_true(krc_cookie_make(0, 0, GEN_MAX) == 0xfffffff);
	assert_true(krc_cookie_make(0, 1, 0) == (1ULL << 28 | 1));
	assert_true(krc_cookie_make(0, SLOT_MAX, 0) == (0xffffULL << 28 | 1));
	assert_true(krc_cookie_make(1, 0, 0) == (1ULL << 44 | 1));
	assert_true(krc_cookie_make(VQ_MAX, 0, 0) == (0xfffffULL << 44 | 1));
	assert_true(krc_cookie_make(VQ_MAX, SLOT_MAX, GEN_MAX) == 0xffffffffffffffffULL);
	assert_true(krc_cookie_make(0x12345, 0xabcd, 0x1234567) ==
		    (0x12345ULL << 44 | 0xabcdULL << 28 | 0x1234567ULL << 1 | 1));
}

static void check_roundtrip(u32 vq, u32 slot, u32 gen)
{
	u64 c = krc_cookie_make(vq, slot, gen);

	if (krc_cookie_vq(c) != (vq & VQ_MAX) ||
	    krc_cookie_slot(c) != (slot & SLOT_MAX) ||
	    krc_cookie_gen(c) != (gen & GEN_MAX) || !(c & 1) || !krc_cookie_is_vq(c))
		fail_msg("make(%#x, %#x, %#x) = %#llx: vq %#x slot %#x gen %#x", vq, slot,
			 gen, (unsigned long long)c, krc_cookie_vq(c), krc_cookie_slot(c),
			 krc_cookie_gen(c));
}

static void test_roundtrip(void **state)
{
	static const u32 vqs[] = { 0, 1, 2, 0x7ffff, 0x80000, VQ_MAX - 1, VQ_MAX };
	static const u32 slots[] = { 0, 1, 2, 0x7fff, 0x8000, SLOT_MAX - 1, SLOT_MAX };
	static const u32 gens[] = { 0, 1, 2, 0x3ffffff, 0x4000000, GEN_MAX - 1, GEN_MAX };
	/* above each field's maximum: the bits that do not fit are dropped */
	static const u32 big[] = {
		0x100000, 0x100001, 0x10000, 0x18000, 0x8000000, 0x8000001,
		0x80000000, 0xfffffffe, 0xffffffff,
	};
	size_t a, b, c;
	u64 s = 0x636f6f6b6965ULL;
	int i;

	(void)state;
	for (a = 0; a < ARRAY_SIZE(vqs); a++)
		for (b = 0; b < ARRAY_SIZE(slots); b++)
			for (c = 0; c < ARRAY_SIZE(gens); c++)
				check_roundtrip(vqs[a], slots[b], gens[c]);
	for (a = 0; a < ARRAY_SIZE(big); a++) {
		check_roundtrip(big[a], 0, 0);
		check_roundtrip(0, big[a], 0);
		check_roundtrip(0, 0, big[a]);
		check_roundtrip(big[a], big[a], big[a]);
		check_roundtrip(big[a], 0x1234, 0x55);
	}
	/* a too large value never spills into its neighbour */
	assert_true(krc_cookie_make(0xffffffff, 0, 0) == (0xfffffULL << 44 | 1));
	assert_true(krc_cookie_make(0, 0xffffffff, 0) == (0xffffULL << 28 | 1));
	assert_true(krc_cookie_make(0, 0, 0xffffffff) == (0x7ffffffULL << 1 | 1));
	assert_int_equal(krc_cookie_vq(krc_cookie_make(VQ_MAX + 1, 7, 9)), 0);
	assert_int_equal(krc_cookie_slot(krc_cookie_make(3, SLOT_MAX + 1, 9)), 0);
	assert_int_equal(krc_cookie_gen(krc_cookie_make(3, 7, GEN_MAX + 1)), 0);
	assert_int_equal(krc_cookie_slot(krc_cookie_make(3, 0x12345, 9)), 0x2345);
	for (i = 0; i < 100000; i++) {
		u64 r = rnd(&s);

		check_roundtrip((u32)r, (u32)(r >> 16), (u32)(r >> 32));
	}
}

/* Any u64 splits into the three fields and is made again from them. */
static void test_decode_any(void **state)
{
	u64 s = 42, c;
	int i;

	(void)state;
	for (i = 0; i < 100000; i++) {
		c = rnd(&s) | 1;
		assert_true(krc_cookie_make(krc_cookie_vq(c), krc_cookie_slot(c),
					    krc_cookie_gen(c)) == c);
	}
	c = 0xffffffffffffffffULL;
	assert_int_equal(krc_cookie_vq(c), VQ_MAX);
	assert_int_equal(krc_cookie_slot(c), SLOT_MAX);
	assert_int_equal(krc_cookie_gen(c), GEN_MAX);
}

static void test_is_vq(void **state)
{
	static const u64 even[] = {
		0, 2, 8, 0x1000, 0xffff888012345678ULL, 0xffffffffffffff00ULL,
		0xfffffffffffffffeULL, 0x8000000000000000ULL,
	};
	static const u64 odd[] = {
		1, 3, 0xffff888012345679ULL, 0xffffffffffffffffULL,
		0x8000000000000001ULL,
	};
	long on_stack;
	void *heap = malloc(1);
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(even); i++)
		assert_false(krc_cookie_is_vq(even[i]));
	for (i = 0; i < ARRAY_SIZE(odd); i++)
		assert_true(krc_cookie_is_vq(odd[i]));
	/* pointers to kernel-internal requests are at least 2-aligned */
	assert_false(krc_cookie_is_vq((u64)(uintptr_t)&on_stack));
	assert_non_null(heap);
	assert_false(krc_cookie_is_vq((u64)(uintptr_t)heap));
	free(heap);
}

static void test_next_gen(void **state)
{
	static const u32 cases[][2] = {
		{ 0, 1 }, { 1, 2 }, { 2, 3 }, { 0x3ffffff, 0x4000000 },
		{ GEN_MAX - 1, GEN_MAX }, { GEN_MAX, 1 },
		/* a value beyond the field: masked, and still never 0 */
		{ GEN_MAX + 1, 1 }, { 0x8000002, 3 }, { 0xfffffffe, GEN_MAX },
		{ 0xffffffff, 1 },
	};
	u32 g, n, steps;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (krc_cookie_next_gen(cases[i][0]) != cases[i][1])
			fail_msg("next_gen(%#x) = %#x, want %#x", cases[i][0],
				 krc_cookie_next_gen(cases[i][0]), cases[i][1]);
	/*
	 * From 1, the generations run through every value 1 .. GEN_MAX
	 * exactly once before coming back to 1; none is 0 and each fits
	 * the cookie's field.
	 */
	g = 1;
	steps = 0;
	do {
		n = krc_cookie_next_gen(g);
		if (n == 0 || n > GEN_MAX || (n != g + 1 && !(g == GEN_MAX && n == 1)))
			fail_msg("next_gen(%#x) = %#x", g, n);
		g = n;
		steps++;
	} while (g != 1 && steps <= GEN_MAX);
	assert_int_equal(steps, GEN_MAX);
	/* and a zeroed slot (generation 0) never matches a live cookie */
	assert_int_not_equal(krc_cookie_gen(krc_cookie_make(5, 5, krc_cookie_next_gen(0))), 0);
	assert_int_not_equal(krc_cookie_gen(krc_cookie_make(5, 5, krc_cookie_next_gen(GEN_MAX))),
			     0);
}

static void test_ring_used(void **state)
{
	static const struct { u32 p, c, entries, used; } cases[] = {
		{ 0, 0, 8, 0 },
		{ 5, 3, 8, 2 },
		{ 8, 0, 8, 8 },			/* full */
		{ 1000, 1000, 64, 0 },
		{ 1000, 937, 64, 63 },
		{ 1000, 936, 64, 64 },
		/* u32 indexes wrap around */
		{ 2, 0xfffffffe, 8, 4 },
		{ 0, 0xfffffff8, 8, 8 },
		{ 0, 0xffffffff, 8, 1 },
		{ 0xffffffff, 0xffffffff, 8, 0 },
		{ 0x00000003, 0xfffffffd, 8, 6 },
		/* consumer ahead of the producer: a full ring */
		{ 3, 4, 8, 8 },
		{ 0, 1, 8, 8 },
		{ 0xfffffffe, 0, 8, 8 },
		{ 0xffffffff, 0, 8, 8 },
		{ 100, 0xffffffff, 8, 8 },
		{ 0, 0x80000000, 8, 8 },
		/* consumer more than @entries behind: a full ring */
		{ 100, 91, 8, 8 },
		{ 0x80000000, 0, 8, 8 },
		{ 5, 0xfffffff0, 8, 8 },
		{ 0x7fffffff, 0x80000000, 8, 8 },
		/* sizes at both ends */
		{ 1, 0, 1, 1 },
		{ 2, 0, 1, 1 },
		{ 0, 1, 1, 1 },
		{ 0x80000000, 0, 0x80000000, 0x80000000 },
		{ 0x80000001, 0, 0x80000000, 0x80000000 },
		{ 0x7fffffff, 0, 0x80000000, 0x7fffffff },
		{ 0, 1, 0x80000000, 0x80000000 },
	};
	u64 s = 7;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (krc_ring_used(cases[i].p, cases[i].c, cases[i].entries) != cases[i].used)
			fail_msg("ring_used(%#x, %#x, %u) = %u, want %u", cases[i].p,
				 cases[i].c, cases[i].entries,
				 krc_ring_used(cases[i].p, cases[i].c, cases[i].entries),
				 cases[i].used);
	/*
	 * Random: a consumer @k behind the producer (modulo 2^32) counts @k
	 * entries when k <= entries, else @entries.
	 */
	for (k = 0; k < 200000; k++) {
		u32 entries = 1U << (rnd(&s) % 32);
		u32 p = (u32)rnd(&s), behind, used;

		switch (rnd(&s) % 3) {
		case 0:
			behind = (u32)(rnd(&s) % ((u64)entries + 1));
			break;
		case 1:		/* just beyond the window, either side */
			behind = rnd(&s) & 1 ? entries + 1 : 0xffffffff;
			break;
		default:
			behind = (u32)rnd(&s);
			break;
		}
		used = krc_ring_used(p, p - behind, entries);
		if (used != (behind <= entries ? behind : entries))
			fail_msg("ring_used(%#x, %#x, %#x) = %#x", p, p - behind, entries, used);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_decode_any),
		cmocka_unit_test(test_is_vq),
		cmocka_unit_test(test_next_gen),
		cmocka_unit_test(test_ring_used),
	};

	return cmocka_run_group_tests_name("cookie", tests, NULL, NULL);
}
