// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_credit.c - the receive ring's ledger (common/credit.h): a message
 * that is taken always has a slot, one that is refused waits and is
 * granted once slots are consumed, shares are fair, a closed sender's
 * slots return; random operations against the invariant. No VM needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "credit.h"

#define NCH	8

/* xorshift64*, fixed seed */
static u64 rnd(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* Grant until none is left; the total lent to @want_ch (or -1: any). */
static u32 drain_grants(struct krc_credit *l, int want_ch)
{
	u32 ch, n, total = 0;

	while (krc_credit_next_grant(l, &ch, &n)) {
		assert_true(n > 0);
		if (want_ch < 0 || (u32)want_ch == ch)
			total += n;
	}
	return total;
}

static void test_one_sender_fills_then_waits(void **state)
{
	struct krc_credit_ch ch[NCH];
	struct krc_credit l;
	int a, i;

	(void)state;
	krc_credit_init(&l, ch, NCH, 4);
	a = krc_credit_open(&l);
	assert_int_equal(a, 0);
	/* alone, its share is the ring: four messages taken, no credit asked */
	for (i = 0; i < 4; i++)
		assert_int_equal(krc_credit_arrive(&l, a), 0);
	assert_int_equal(l.free, 0);
	/* the fifth is refused, not dropped: the sender waits */
	assert_int_equal(krc_credit_arrive(&l, a), -ENOBUFS);
	assert_int_equal(ch[a].want, 1);
	assert_int_equal(drain_grants(&l, -1), 0);
	/* one consumed: that slot is lent to the waiting sender */
	assert_int_equal(krc_credit_consumed(&l, a), 0);
	assert_int_equal(drain_grants(&l, a), 1);
	assert_int_equal(ch[a].credit, 1);
	assert_int_equal(ch[a].want, 0);
	/* its resend uses the credit */
	assert_int_equal(krc_credit_arrive(&l, a), 0);
	assert_int_equal(ch[a].credit, 0);
	assert_int_equal(ch[a].held, 4);
	assert_true(krc_credit_ok(&l));
}

static void test_slow_receiver_bounds_each_sender(void **state)
{
	struct krc_credit_ch ch[NCH];
	struct krc_credit l;
	int a, b, i, took_b = 0;

	(void)state;
	krc_credit_init(&l, ch, NCH, 8);
	a = krc_credit_open(&l);
	b = krc_credit_open(&l);
	/* a asks for the whole ring while alone */
	assert_int_equal(krc_credit_ask(&l, a, 8), 8);
	/* b arrives: nothing is free, it waits, refused but not lost */
	assert_int_equal(krc_credit_arrive(&l, b), -ENOBUFS);
	assert_int_equal(krc_credit_share(&l), 4);
	/* a sends 8; the receiver consumes 4 of them */
	for (i = 0; i < 8; i++)
		assert_int_equal(krc_credit_arrive(&l, a), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(krc_credit_consumed(&l, a), 0);
	/* a still holds 4 (its share): the freed slots go to b, up to its share */
	assert_int_equal(krc_credit_ask(&l, a, 8), 0);
	took_b = (int)drain_grants(&l, b);
	assert_int_equal(took_b, 1);	/* it waited for one message */
	assert_int_equal(krc_credit_ask(&l, b, 8), 3);
	assert_int_equal(ch[b].credit, 4);
	assert_int_equal(ch[a].credit + ch[a].held, 4);
	assert_true(krc_credit_ok(&l));
}

static void test_close_returns_credit(void **state)
{
	struct krc_credit_ch ch[NCH];
	struct krc_credit l;
	int a, b;

	(void)state;
	krc_credit_init(&l, ch, NCH, 6);
	a = krc_credit_open(&l);
	assert_int_equal(krc_credit_ask(&l, a, 4), 4);
	assert_int_equal(krc_credit_arrive(&l, a), 0);
	assert_int_equal(krc_credit_close(&l, a), 0);
	/* its 3 unused credits are back; its message stays until consumed */
	assert_int_equal(l.free, 5);
	assert_int_equal(ch[a].state, KRC_CREDIT_CH_CLOSING);
	assert_int_equal(krc_credit_arrive(&l, a), -EINVAL);
	assert_int_equal(krc_credit_ask(&l, a, 1), -EINVAL);
	assert_int_equal(krc_credit_close(&l, a), -EINVAL);
	/* the entry is not reused while it holds a message */
	b = krc_credit_open(&l);
	assert_int_not_equal(b, a);
	assert_int_equal(krc_credit_consumed(&l, a), 0);
	assert_int_equal(ch[a].state, KRC_CREDIT_CH_FREE);
	assert_int_equal(krc_credit_consumed(&l, a), -EINVAL);
	assert_int_equal(l.free, 6);
	assert_true(krc_credit_ok(&l));
}

static void test_bad_channels(void **state)
{
	struct krc_credit_ch ch[2];
	struct krc_credit l;
	u32 c, n;

	(void)state;
	krc_credit_init(&l, ch, 2, 3);
	assert_int_equal(krc_credit_arrive(&l, 0), -EINVAL);	/* not open */
	assert_int_equal(krc_credit_arrive(&l, 2), -EINVAL);
	assert_int_equal(krc_credit_arrive(&l, 0xffffffffU), -EINVAL);
	assert_int_equal(krc_credit_consumed(&l, 0), -EINVAL);
	assert_int_equal(krc_credit_open(&l), 0);
	assert_int_equal(krc_credit_open(&l), 1);
	assert_int_equal(krc_credit_open(&l), -ENOSPC);
	assert_int_equal(krc_credit_consumed(&l, 0), -EINVAL);	/* none held */
	/* asking for more than the ring is asking for the ring */
	assert_int_equal(krc_credit_ask(&l, 0, 0xffffffffU), 3);
	assert_int_equal(ch[0].want, 0);
	assert_int_equal(krc_credit_next_grant(&l, &c, &n), 0);
	assert_true(krc_credit_ok(&l));
}

/* Each waiting sender is served in turn, none twice before the others. */
static void test_grants_round_robin(void **state)
{
	struct krc_credit_ch ch[NCH];
	struct krc_credit l;
	u32 c, n, got[NCH] = { 0 };
	int s[4], i, k;

	(void)state;
	krc_credit_init(&l, ch, NCH, 4);
	for (i = 0; i < 4; i++)
		s[i] = krc_credit_open(&l);
	/* s0 fills the ring; the others are refused and wait */
	assert_int_equal(krc_credit_ask(&l, s[0], 4), 4);
	for (i = 1; i < 4; i++)
		assert_int_equal(krc_credit_arrive(&l, s[i]), -ENOBUFS);
	for (k = 0; k < 4; k++)
		assert_int_equal(krc_credit_arrive(&l, s[0]), 0);
	/* the receiver consumes 3: one slot each for s1, s2, s3 */
	for (k = 0; k < 3; k++)
		assert_int_equal(krc_credit_consumed(&l, s[0]), 0);
	while (krc_credit_next_grant(&l, &c, &n))
		got[c] += n;
	assert_int_equal(got[s[0]], 0);
	for (i = 1; i < 4; i++)
		assert_int_equal(got[s[i]], 1);
	assert_true(krc_credit_ok(&l));
}

/* One slot freed at a time goes to the waiters in turn, not twice to one. */
static void test_grants_alternate(void **state)
{
	struct krc_credit_ch ch[NCH];
	struct krc_credit l;
	u32 c, n;
	int a, b, d, k;

	(void)state;
	krc_credit_init(&l, ch, NCH, 6);
	a = krc_credit_open(&l);
	b = krc_credit_open(&l);
	d = krc_credit_open(&l);
	assert_int_equal(krc_credit_ask(&l, a, 6), 6);
	for (k = 0; k < 6; k++)
		assert_int_equal(krc_credit_arrive(&l, a), 0);
	assert_int_equal(krc_credit_ask(&l, b, 6), 0);
	assert_int_equal(krc_credit_ask(&l, d, 6), 0);
	assert_int_equal(krc_credit_share(&l), 2);
	for (k = 0; k < 4; k++) {
		assert_int_equal(krc_credit_consumed(&l, a), 0);
		assert_int_equal(krc_credit_next_grant(&l, &c, &n), 1);
		assert_int_equal(n, 1);
		assert_int_equal(c, (u32)(k % 2 ? d : b));
		assert_int_equal(krc_credit_next_grant(&l, &c, &n), 0);
	}
	/* both at their share: a freed slot waits for a channel under it */
	assert_int_equal(krc_credit_consumed(&l, a), 0);
	assert_int_equal(krc_credit_next_grant(&l, &c, &n), 0);
	assert_int_equal(l.free, 1);
	assert_true(krc_credit_ok(&l));
}

/*
 * A sender whose receiver keeps up (each message consumed before the
 * next, its slot wanted back as common/flow.c does) is granted once per
 * half window, never runs out, and a sender out of credit is granted at
 * once.
 */
static void test_grants_in_batches(void **state)
{
	struct krc_credit_ch ch[NCH];
	struct krc_credit l;
	u32 c, n, grants = 0;
	int a, b, k;

	(void)state;
	krc_credit_init(&l, ch, NCH, 64);
	a = krc_credit_open(&l);
	assert_int_equal(krc_credit_ask(&l, a, 16), 16);
	for (k = 1; k <= 80; k++) {
		assert_int_equal(krc_credit_arrive(&l, a), 0);
		assert_int_equal(krc_credit_consumed(&l, a), 0);
		assert_int_equal(krc_credit_want(&l, a, 1), 0);
		if (k % 8) {
			/* credit left beyond what it wants back: not yet */
			assert_false(krc_credit_grant_due(&l));
			assert_int_equal(krc_credit_next_grant(&l, &c, &n), 0);
			assert_int_equal(ch[a].credit, 16 - k % 8);
			continue;
		}
		assert_true(krc_credit_grant_due(&l));
		assert_int_equal(krc_credit_next_grant(&l, &c, &n), 1);
		assert_int_equal(c, (u32)a);
		assert_int_equal(n, 8);
		assert_int_equal(krc_credit_next_grant(&l, &c, &n), 0);
		assert_false(krc_credit_grant_due(&l));
		assert_int_equal(ch[a].credit, 16);
		grants++;
	}
	assert_int_equal(grants, 10);	/* 80 messages, 10 grants */
	/* another sender, refused once it holds its share: */
	b = krc_credit_open(&l);
	assert_int_equal(krc_credit_ask(&l, b, 64), 32);	/* its share */
	for (k = 0; k < 32; k++)
		assert_int_equal(krc_credit_arrive(&l, b), 0);
	assert_int_equal(krc_credit_arrive(&l, b), -ENOBUFS);
	assert_false(krc_credit_grant_due(&l));	/* at its share */
	/* one of its messages consumed: it waits, so it is due at once */
	assert_int_equal(krc_credit_consumed(&l, b), 0);
	assert_true(krc_credit_grant_due(&l));
	assert_int_equal(krc_credit_next_grant(&l, &c, &n), 1);
	assert_int_equal(c, (u32)b);
	assert_true(krc_credit_ok(&l));
}

/*
 * Random senders, receivers and closes against a model: every message
 * taken is counted once in the ring; the ring never holds more than its
 * slots; nothing is taken beyond credit plus share; the ledger stays
 * consistent; at the end, with everything consumed and closed, all slots
 * are free.
 */
static void test_random_against_model(void **state)
{
	struct krc_credit_ch ch[NCH];
	struct krc_credit l;
	u64 seed = 0x6b72636f7265ULL;
	u32 slots, in_ring, taken, refused, consumed;
	int it, round;

	(void)state;
	for (round = 0; round < 50; round++) {
		int open[NCH];
		u32 held[NCH] = { 0 };
		u32 i, c, n;

		slots = 1 + (u32)(rnd(&seed) % 64);
		krc_credit_init(&l, ch, NCH, slots);
		memset(open, 0, sizeof(open));
		in_ring = 0;
		taken = 0;
		refused = 0;
		consumed = 0;
		for (it = 0; it < 5000; it++) {
			u32 op = (u32)(rnd(&seed) % 6);
			u32 k = (u32)(rnd(&seed) % NCH);

			switch (op) {
			case 0:
				if (!open[k] && ch[k].state == KRC_CREDIT_CH_FREE) {
					int r = krc_credit_open(&l);

					assert_true(r >= 0);
					open[r] = 1;
				}
				break;
			case 1:
			case 2: {
				u32 before = ch[k].credit + ch[k].held;
				u32 credit = ch[k].credit;
				u32 act = l.active + (before || ch[k].want ? 0 : 1);
				u32 share = slots / act ? slots / act : 1;
				int r = krc_credit_arrive(&l, k);

				if (!open[k]) {
					assert_int_equal(r, -EINVAL);
					break;
				}
				if (r == 0) {
					held[k]++;
					in_ring++;
					taken++;
					/* beyond credit only within the share */
					assert_true(credit || before < share);
				} else {
					assert_int_equal(r, -ENOBUFS);
					/* refused only if no credit and no room */
					assert_int_equal(credit, 0);
					assert_true(before >= share || !l.free);
					refused++;
				}
				break;
			}
			case 3:
				if (held[k]) {
					assert_int_equal(krc_credit_consumed(&l, k), 0);
					held[k]--;
					in_ring--;
					consumed++;
				} else {
					assert_int_equal(krc_credit_consumed(&l, k),
							 -EINVAL);
				}
				/* as common/flow.c does: the slot is wanted back */
				if (open[k] && rnd(&seed) % 2)
					assert_int_equal(krc_credit_want(&l, k, 1), 0);
				while (krc_credit_next_grant(&l, &c, &n))
					assert_true(open[c] && n >= 1);
				assert_false(krc_credit_grant_due(&l));
				/* nobody out of credit is left waiting for a slot */
				for (i = 0; i < NCH; i++)
					assert_false(ch[i].state == KRC_CREDIT_CH_OPEN &&
						     ch[i].want && !ch[i].credit &&
						     l.free &&
						     ch[i].held < krc_credit_share(&l));
				break;
			case 4:
				if (open[k]) {
					int r = krc_credit_ask(&l, k,
							       (u32)(rnd(&seed) % 8));

					assert_true(r >= 0);
				}
				break;
			case 5:
				if (open[k] && rnd(&seed) % 8 == 0) {
					assert_int_equal(krc_credit_close(&l, k), 0);
					open[k] = 0;
				}
				break;
			}
			assert_true(in_ring <= slots);
			for (i = 0; i < NCH; i++)
				assert_int_equal(ch[i].held, held[i]);
			assert_true(krc_credit_ok(&l));
		}
		for (i = 0; i < NCH; i++) {
			while (held[i]) {
				assert_int_equal(krc_credit_consumed(&l, i), 0);
				held[i]--;
				consumed++;
			}
			if (open[i])
				assert_int_equal(krc_credit_close(&l, i), 0);
		}
		assert_int_equal(consumed, taken);
		assert_int_equal(l.free, slots);
		assert_int_equal(l.active, 0);
		assert_true(krc_credit_ok(&l));
		assert_true(refused > 0 || slots > 8);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_sender_fills_then_waits),
		cmocka_unit_test(test_slow_receiver_bounds_each_sender),
		cmocka_unit_test(test_close_returns_credit),
		cmocka_unit_test(test_bad_channels),
		cmocka_unit_test(test_grants_round_robin),
		cmocka_unit_test(test_grants_alternate),
		cmocka_unit_test(test_grants_in_batches),
		cmocka_unit_test(test_random_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
