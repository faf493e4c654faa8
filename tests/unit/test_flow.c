// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_flow.c - flow control between two nodes (common/flow.h): a sender
 * sends only what it was granted, a lost ASK or GRANT only delays, old
 * grants are ignored, a port nobody bound refuses, messages lost in
 * flight give their slots back after the grace time (not before), a new
 * incarnation starts a new channel, a full table reclaims an idle one;
 * and a simulation of several sender nodes over a network that loses
 * and reorders control messages and loses a few data messages (sent
 * again), against a receiver that consumes slowly: no message is ever
 * refused, the ring never overflows, all arrive. No VM needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"

#define NCH	4
#define SLOTS	8
#define GRACE	500

struct rx_fix {
	struct krc_credit_ch lch[NCH];
	struct krc_flow_rx_ch ch[NCH];
	u16 owner[SLOTS];
	struct krc_flow_rx rx;
};

static void rx_fix_init(struct rx_fix *f)
{
	krc_flow_rx_init(&f->rx, f->lch, f->ch, NCH, f->owner, SLOTS, 7, GRACE);
}

static const u8 gid_a[16] = { 0xfe, 0x80, [15] = 1 };
static const u8 gid_b[16] = { 0xfe, 0x80, [15] = 2 };

/* The sender asks (it must be due) and the receiver answers. */
static int ask_and_grant(struct krc_flow_tx *tx, struct rx_fix *r,
			 const u8 *gid, u64 inc, u64 now)
{
	struct krc_flow_grant g;
	struct krc_flow_ask a;
	int chan;

	assert_true(krc_flow_tx_ask_due(tx, now, &a));
	chan = krc_flow_rx_ask(&r->rx, gid, inc, &a, now, &g);
	krc_flow_tx_grant(tx, &g);
	assert_true(krc_flow_rx_ok(&r->rx));
	return chan;
}

static void test_first_ask_window_then_wait(void **state)
{
	struct krc_flow_tx tx;
	struct rx_fix r;
	u32 slot, i;
	int chan;

	(void)state;
	rx_fix_init(&r);
	krc_flow_tx_init(&tx);
	/* no credit before the first grant: held back, an ASK is due */
	assert_int_equal(krc_flow_tx_take(&tx), -EAGAIN);
	chan = ask_and_grant(&tx, &r, gid_a, 1, 0);
	assert_int_equal(chan, 0);
	/* alone: lent the whole ring (want is at least KRC_FLOW_WANT_MIN) */
	assert_int_equal(tx.epoch, 7);
	assert_int_equal(krc_flow_tx_credit(&tx), SLOTS);
	for (i = 0; i < SLOTS; i++) {
		assert_int_equal(krc_flow_tx_take(&tx), 0);
		assert_int_equal(krc_flow_rx_arrive(&r.rx, chan, &slot), 0);
		assert_int_equal(slot, i);
	}
	assert_int_equal(krc_flow_tx_take(&tx), -EAGAIN);
	assert_true(krc_flow_rx_ok(&r.rx));
	/* the ASK finds the ring full: nothing lent, the answer comes anyway */
	ask_and_grant(&tx, &r, gid_a, 1, 1);
	assert_int_equal(krc_flow_tx_credit(&tx), 0);
	/* two consumed: the receiver grants them on its own */
	assert_int_equal(krc_flow_rx_consumed(&r.rx, 2), 2);
	{
		struct krc_flow_grant g;
		u32 c;

		assert_int_equal(krc_flow_rx_next_grant(&r.rx, &c, &g), 1);
		assert_int_equal(c, chan);
		assert_int_equal(g.granted, SLOTS + 2);
		assert_int_equal(krc_flow_rx_next_grant(&r.rx, &c, &g), 0);
		assert_int_equal(krc_flow_tx_grant(&tx, &g), 2);
	}
	assert_int_equal(krc_flow_tx_take(&tx), 0);
	assert_int_equal(krc_flow_rx_arrive(&r.rx, chan, &slot), 0);
	assert_int_equal(slot, 0);	/* wrapped onto the consumed slot */
	assert_true(krc_flow_rx_ok(&r.rx));
}

static void test_lost_grant_and_old_grants(void **state)
{
	struct krc_flow_grant g, g_old;
	struct krc_flow_tx tx;
	struct krc_flow_ask a;
	struct rx_fix r;
	u32 slot;

	(void)state;
	rx_fix_init(&r);
	krc_flow_tx_init(&tx);
	assert_int_equal(krc_flow_tx_take(&tx), -EAGAIN);
	assert_true(krc_flow_tx_ask_due(&tx, 100, &a));
	/* outstanding: not due again before its backoff */
	assert_false(krc_flow_tx_ask_due(&tx, 100 + KRC_FLOW_ASK_MIN_MS - 1, &a));
	/* the receiver answers, the GRANT is lost */
	assert_int_equal(krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 100, &g), 0);
	g_old = g;
	assert_true(krc_flow_tx_ask_due(&tx, 100 + KRC_FLOW_ASK_MIN_MS, &a));
	assert_int_equal(tx.ask_rto, 2 * KRC_FLOW_ASK_MIN_MS);
	/* asked again (epoch still 0): the same channel, nothing lent twice */
	assert_int_equal(krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 120, &g), 0);
	assert_int_equal(g.epoch, g_old.epoch);
	assert_int_equal(g.granted, g_old.granted);
	assert_int_equal(r.rx.ledger.free, 0);
	assert_int_equal(krc_flow_tx_grant(&tx, &g), SLOTS);
	assert_int_equal(tx.ask_rto, KRC_FLOW_ASK_MIN_MS);
	/* the repeated GRANT, then an older epoch's: nothing changes */
	assert_int_equal(krc_flow_tx_grant(&tx, &g_old), 0);
	g_old.epoch = 6;
	g_old.granted = 1000;
	assert_int_equal(krc_flow_tx_grant(&tx, &g_old), 0);
	assert_int_equal(krc_flow_tx_credit(&tx), SLOTS);
	assert_int_equal(krc_flow_tx_take(&tx), 0);
	assert_int_equal(krc_flow_rx_arrive(&r.rx, 0, &slot), 0);
	assert_true(krc_flow_rx_ok(&r.rx));
}

static void test_noport_and_untake(void **state)
{
	struct krc_flow_grant g = { .status = KRC_FLOW_NOPORT };
	struct krc_flow_tx tx;
	struct krc_flow_ask a;

	(void)state;
	krc_flow_tx_init(&tx);
	assert_int_equal(krc_flow_tx_take(&tx), -EAGAIN);
	assert_true(krc_flow_tx_ask_due(&tx, 0, &a));
	assert_int_equal(krc_flow_tx_grant(&tx, &g), -ECONNREFUSED);
	assert_int_equal(krc_flow_tx_take(&tx), -ECONNREFUSED);
	assert_false(krc_flow_tx_ask_due(&tx, 10000, &a));
	assert_int_equal(tx.answers, 1);
	/* a retry asks again at once; refused again, then granted */
	assert_true(krc_flow_tx_retry(&tx));
	assert_false(krc_flow_tx_retry(&tx));
	assert_true(krc_flow_tx_ask_due(&tx, 10001, &a));
	assert_int_equal(krc_flow_tx_grant(&tx, &g), -ECONNREFUSED);
	assert_int_equal(tx.answers, 2);
	assert_true(krc_flow_tx_retry(&tx));
	assert_true(krc_flow_tx_ask_due(&tx, 10002, &a));
	g.status = KRC_FLOW_OK;
	g.epoch = 3;
	g.granted = 2;
	assert_int_equal(krc_flow_tx_grant(&tx, &g), 2);
	assert_int_equal(tx.answers, 3);
	assert_int_equal(krc_flow_tx_take(&tx), 0);
	krc_flow_tx_untake(&tx);
	assert_int_equal(krc_flow_tx_credit(&tx), 2);
	/* BUSY: the backoff runs on */
	g.status = KRC_FLOW_BUSY;
	assert_int_equal(krc_flow_tx_grant(&tx, &g), -EBUSY);
	/* a port unbound while slots were lent: their credit is void */
	g.status = KRC_FLOW_NOPORT;
	assert_int_equal(krc_flow_tx_grant(&tx, &g), -ECONNREFUSED);
	assert_int_equal(krc_flow_tx_credit(&tx), 0);
	assert_true(krc_flow_tx_retry(&tx));
	assert_int_equal(krc_flow_tx_take(&tx), -EAGAIN);
	assert_true(krc_flow_tx_ask_due(&tx, 20000, &a));
	assert_int_equal(a.sent, 0);
}

static void test_lost_in_flight_after_grace(void **state)
{
	struct krc_flow_grant g;
	struct krc_flow_tx tx;
	struct krc_flow_ask a;
	struct rx_fix r;
	u32 slot, i;

	(void)state;
	rx_fix_init(&r);
	krc_flow_tx_init(&tx);
	assert_int_equal(krc_flow_tx_take(&tx), -EAGAIN);
	ask_and_grant(&tx, &r, gid_a, 1, 0);
	/* eight sent: five arrive, three are flushed by a failing QP */
	for (i = 0; i < SLOTS; i++)
		assert_int_equal(krc_flow_tx_take(&tx), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(krc_flow_rx_arrive(&r.rx, 0, &slot), 0);
	assert_int_equal(krc_flow_rx_consumed(&r.rx, 5), 5);
	/* the five consumed slots wait for a want: the sender asks */
	assert_int_equal(krc_flow_tx_take(&tx), -EAGAIN);
	assert_true(krc_flow_tx_ask_due(&tx, 1000, &a));
	assert_int_equal(a.sent, SLOTS);
	krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 1000, &g);
	/* the three may still be in flight: their slots stay lent */
	assert_int_equal(r.rx.ch[0].arrived, 5);
	assert_int_equal(r.rx.ledger.ch[0].credit, 3 + 5);
	krc_flow_tx_grant(&tx, &g);
	assert_int_equal(krc_flow_tx_credit(&tx), 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(krc_flow_tx_take(&tx), 0);
	assert_int_equal(krc_flow_tx_take(&tx), -EAGAIN);
	/* within the grace: still lent */
	assert_true(krc_flow_tx_ask_due(&tx, 1000 + GRACE - 1, &a));
	krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 1000 + GRACE - 1, &g);
	assert_int_equal(r.rx.ch[0].arrived, 5);
	assert_int_equal(r.rx.ledger.free, 0);
	/* past it: the three are taken as lost and lent again */
	assert_true(krc_flow_tx_ask_due(&tx, 1000 + GRACE + 100, &a));
	krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 1000 + GRACE + 100, &g);
	assert_int_equal(r.rx.ch[0].arrived, SLOTS);
	assert_true(krc_flow_rx_ok(&r.rx));
	assert_int_equal(krc_flow_tx_grant(&tx, &g), 3);
	/* the five sent after the grant arrive, then three more fit */
	for (i = 0; i < 5 + 3; i++) {
		if (i >= 5)
			assert_int_equal(krc_flow_tx_take(&tx), 0);
		assert_int_equal(krc_flow_rx_arrive(&r.rx, 0, &slot), 0);
	}
	assert_true(krc_flow_rx_ok(&r.rx));
}

static void test_ask_cannot_claim_more_than_lent(void **state)
{
	struct krc_flow_grant g;
	struct krc_flow_ask a;
	struct rx_fix r;

	(void)state;
	rx_fix_init(&r);
	a.epoch = 0;
	a.sent = 0;
	a.want = 2;
	assert_int_equal(krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 0, &g), 0);
	assert_int_equal(g.granted, 2);
	/* a lying sender: "sent" far beyond what it was lent, wants it all */
	a.epoch = g.epoch;
	a.sent = ~0ull;
	a.want = ~0u;
	krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 0, &g);
	krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 10 * GRACE, &g);
	/* forgotten at most what it was lent, never more than the ring */
	assert_true(r.rx.ch[0].arrived <= r.rx.ch[0].granted);
	assert_true(r.rx.ledger.ch[0].credit <= SLOTS);
	assert_true(krc_flow_rx_ok(&r.rx));
}

static void test_incarnation_and_table(void **state)
{
	struct krc_flow_grant g;
	struct krc_flow_ask a = { .want = 1 };
	struct rx_fix r;
	u8 gid[16];
	u32 slot, i;
	int chan;

	(void)state;
	rx_fix_init(&r);
	chan = krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 0, &g);
	assert_int_equal(chan, 0);
	assert_int_equal(krc_flow_rx_arrive(&r.rx, chan, &slot), 0);
	/* node A reloads: its old channel closes (its message stays) */
	assert_int_equal(krc_flow_rx_ask(&r.rx, gid_a, 2, &a, 0, &g), 1);
	assert_int_equal(krc_flow_rx_find(&r.rx, gid_a, 1), -ENOENT);
	assert_int_equal(krc_flow_rx_find(&r.rx, gid_a, 2), 1);
	assert_int_equal(krc_flow_rx_arrive(&r.rx, 0, &slot), -EINVAL);
	assert_int_equal(r.rx.ledger.ch[0].state, KRC_CREDIT_CH_CLOSING);
	assert_int_equal(krc_flow_rx_consumed(&r.rx, 1), 1);
	assert_int_equal(r.rx.ledger.ch[0].state, KRC_CREDIT_CH_FREE);
	/* fill the table: each holds a credit, so none can be reclaimed */
	for (i = 0; i < NCH - 1; i++) {
		memcpy(gid, gid_b, 16);
		gid[14] = (u8)i;
		assert_true(krc_flow_rx_ask(&r.rx, gid, 1, &a, 0, &g) >= 0);
	}
	memcpy(gid, gid_b, 16);
	gid[14] = 0x77;
	assert_int_equal(krc_flow_rx_ask(&r.rx, gid, 1, &a, 0, &g), -ENOSPC);
	assert_int_equal(g.status, KRC_FLOW_BUSY);
	/* one sender uses its credit and it is consumed: idle, reclaimed */
	chan = krc_flow_rx_find(&r.rx, gid_a, 2);
	assert_int_equal(krc_flow_rx_arrive(&r.rx, (u32)chan, &slot), 0);
	assert_int_equal(krc_flow_rx_consumed(&r.rx, 2), 1);
	assert_int_equal(krc_flow_rx_ask(&r.rx, gid, 1, &a, 0, &g), chan);
	assert_int_equal(krc_flow_rx_find(&r.rx, gid_a, 2), -ENOENT);
	assert_true(krc_flow_rx_ok(&r.rx));
}

static void test_consumer_outside_ignored(void **state)
{
	struct krc_flow_grant g;
	struct krc_flow_ask a = { .want = 4 };
	struct rx_fix r;
	u32 slot;

	(void)state;
	rx_fix_init(&r);
	krc_flow_rx_ask(&r.rx, gid_a, 1, &a, 0, &g);
	assert_int_equal(krc_flow_rx_arrive(&r.rx, 0, &slot), 0);
	assert_int_equal(krc_flow_rx_arrive(&r.rx, 0, &slot), 0);
	assert_int_equal(krc_flow_rx_consumed(&r.rx, 3), 0);	/* ahead */
	assert_int_equal(krc_flow_rx_consumed(&r.rx, ~0u), 0);	/* behind */
	assert_int_equal(r.rx.ledger.ch[0].held, 2);
	assert_int_equal(krc_flow_rx_consumed(&r.rx, 1), 1);
	assert_int_equal(krc_flow_rx_consumed(&r.rx, 0), 0);	/* backwards */
	assert_int_equal(r.rx.ledger.ch[0].held, 1);
	assert_true(krc_flow_rx_ok(&r.rx));
}

/* ---- simulation ---- */

#define SIM_NODES	3
#define SIM_NET		64
#define SIM_MSGS	200

/* xorshift64*, fixed seed */
static u64 rnd(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

struct pkt {
	int used;
	int kind;		/* 0 data, 1 ask, 2 grant */
	int node;
	u64 due;
	struct krc_flow_ask a;
	struct krc_flow_grant g;
};

static struct pkt *net_put(struct pkt *net, u64 now, u64 *seed)
{
	int i;

	for (i = 0; i < SIM_NET; i++)
		if (!net[i].used) {
			memset(&net[i], 0, sizeof(net[i]));
			net[i].used = 1;
			net[i].due = now + 1 + rnd(seed) % 30;
			return &net[i];
		}
	fail_msg("network full");
	return NULL;
}

/* A GRANT on its way to the node of @to. */
static void grant_out(struct pkt *net, u64 now, u64 *seed,
		      u8 gid[SIM_NODES][16], const u8 *to,
		      const struct krc_flow_grant *g)
{
	struct pkt *q;
	int n;

	for (n = 0; n < SIM_NODES; n++)
		if (!memcmp(gid[n], to, 16))
			break;
	assert_true(n < SIM_NODES);
	q = net_put(net, now, seed);
	q->kind = 2;
	q->node = n;
	q->g = *g;
}

static void test_simulation(void **state)
{
	struct krc_flow_tx tx[SIM_NODES];
	struct pkt net[SIM_NET];
	struct rx_fix r;
	u32 sent[SIM_NODES] = { 0 }, got[SIM_NODES] = { 0 };
	u8 gid[SIM_NODES][16];
	u64 seed = 0x9e3779b97f4a7c15ULL, now;
	u32 cons = 0, total = 0, i, slot;
	int n, round;

	(void)state;
	for (round = 0; round < 20; round++) {
		memset(net, 0, sizeof(net));
		memset(sent, 0, sizeof(sent));
		memset(got, 0, sizeof(got));
		rx_fix_init(&r);
		cons = 0;
		total = 0;
		for (n = 0; n < SIM_NODES; n++) {
			krc_flow_tx_init(&tx[n]);
			memcpy(gid[n], gid_a, 16);
			gid[n][13] = (u8)n;
		}
		for (now = 1; total < SIM_NODES * SIM_MSGS; now++) {
			assert_true(now < 200000);
			/* senders: send while they have credit, ask otherwise */
			for (n = 0; n < SIM_NODES; n++) {
				struct krc_flow_ask a;

				while (sent[n] < SIM_MSGS && rnd(&seed) % 4 &&
				       !krc_flow_tx_take(&tx[n])) {
					struct pkt *p = net_put(net, now, &seed);

					p->kind = 0;
					p->node = n;
					sent[n]++;
				}
				if (krc_flow_tx_ask_due(&tx[n], now, &a) &&
				    rnd(&seed) % 4) {	/* a quarter lost */
					struct pkt *p = net_put(net, now, &seed);

					p->kind = 1;
					p->node = n;
					p->a = a;
				}
			}
			/* the network: due packets, in any order */
			for (i = 0; i < SIM_NET; i++) {
				struct pkt *p = &net[i];
				int chan;

				if (!p->used || p->due > now)
					continue;
				p->used = 0;
				if (p->kind == 0 && !(rnd(&seed) % 40)) {
					/* flushed by a failing QP: sent again */
					sent[p->node]--;
				} else if (p->kind == 0) {
					chan = krc_flow_rx_find(&r.rx, gid[p->node], 1);
					assert_true(chan >= 0);
					/* never refused: it was lent a slot */
					assert_int_equal(krc_flow_rx_arrive(&r.rx, chan,
									    &slot), 0);
					got[p->node]++;
				} else if (p->kind == 1) {
					struct krc_flow_grant g;
					int node = p->node;
					struct pkt *q;

					krc_flow_rx_ask(&r.rx, gid[node], 1,
							&p->a, now, &g);
					if (rnd(&seed) % 4) {
						/* (may reuse *p) */
						q = net_put(net, now, &seed);
						q->kind = 2;
						q->node = node;
						q->g = g;
					}
				} else {
					krc_flow_tx_grant(&tx[p->node], &p->g);
				}
				assert_true(krc_flow_rx_ok(&r.rx));
			}
			/* a slow receiver: consumes one in three ticks */
			if (r.rx.prod != cons && !(rnd(&seed) % 3)) {
				struct krc_flow_grant g;
				u32 c;

				cons++;
				total++;
				assert_int_equal(krc_flow_rx_consumed(&r.rx, cons), 1);
				while (krc_flow_rx_next_grant(&r.rx, &c, &g))
					if (rnd(&seed) % 4)	/* else lost */
						grant_out(net, now, &seed, gid,
							  r.rx.ch[c].gid, &g);
			}
		}
		for (n = 0; n < SIM_NODES; n++) {
			assert_int_equal(sent[n], SIM_MSGS);
			assert_int_equal(got[n], SIM_MSGS);
		}
		assert_int_equal(r.rx.prod, SIM_NODES * SIM_MSGS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_ask_window_then_wait),
		cmocka_unit_test(test_lost_grant_and_old_grants),
		cmocka_unit_test(test_noport_and_untake),
		cmocka_unit_test(test_lost_in_flight_after_grace),
		cmocka_unit_test(test_ask_cannot_claim_more_than_lent),
		cmocka_unit_test(test_incarnation_and_table),
		cmocka_unit_test(test_consumer_outside_ignored),
		cmocka_unit_test(test_simulation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
