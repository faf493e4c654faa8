// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flow.c - flow control of two-sided messages between two nodes
 * (flow.h): the sender's credit and its ASKs, the receiver's channels,
 * grants, arrivals and consumption over the ring's ledger (credit.h).
 */
#include "flow.h"

/* Is epoch @a newer than @b (serial number arithmetic, 0 is none)? */
static bool krc_flow_epoch_newer(u32 a, u32 b)
{
	return a && (!b || (s32)(a - b) > 0);
}

void krc_flow_tx_init(struct krc_flow_tx *f)
{
	memset(f, 0, sizeof(*f));
	f->ask_rto = KRC_FLOW_ASK_MIN_MS;
}

u64 krc_flow_tx_credit(const struct krc_flow_tx *f)
{
	return f->granted - f->sent;
}

int krc_flow_tx_take(struct krc_flow_tx *f)
{
	if (f->error)
		return f->error;
	if (f->granted == f->sent) {
		if (f->waiting != (u32)~0u)
			f->waiting++;
		return -EAGAIN;
	}
	f->sent++;
	return 0;
}

void krc_flow_tx_untake(struct krc_flow_tx *f)
{
	if (f->sent)
		f->sent--;
}

bool krc_flow_tx_ask_due(struct krc_flow_tx *f, u64 now_ms,
			 struct krc_flow_ask *a)
{
	if (f->error || !f->waiting || f->granted != f->sent)
		return false;
	if (f->asking) {
		if (now_ms - f->ask_at < f->ask_rto)
			return false;
		/* Unanswered: the ASK or its GRANT was lost. */
		f->ask_rto = f->ask_rto * 2 > KRC_FLOW_ASK_MAX_MS ?
			     KRC_FLOW_ASK_MAX_MS : f->ask_rto * 2;
	}
	f->asking = true;
	f->ask_at = now_ms;
	a->epoch = f->epoch;
	a->sent = f->sent;
	a->want = f->waiting > KRC_FLOW_WANT_MIN ? f->waiting :
						    KRC_FLOW_WANT_MIN;
	return true;
}

bool krc_flow_tx_retry(struct krc_flow_tx *f)
{
	if (!f->error)
		return false;
	f->error = 0;
	f->granted = f->sent;
	f->waiting = 1;
	f->asking = false;
	f->ask_rto = KRC_FLOW_ASK_MIN_MS;
	return true;
}

int krc_flow_tx_grant(struct krc_flow_tx *f, const struct krc_flow_grant *g)
{
	switch (g->status) {
	case KRC_FLOW_OK:
		break;
	case KRC_FLOW_NOPORT:
		/* Whatever was lent in that epoch is void: the ring is gone. */
		f->answers++;
		f->error = -ECONNREFUSED;
		f->granted = f->sent;
		f->asking = false;
		f->waiting = 0;
		return -ECONNREFUSED;
	case KRC_FLOW_BUSY:
		f->answers++;
		return -EBUSY;	/* the backoff runs on */
	default:
		return 0;	/* not a status we know: as if lost */
	}
	if (krc_flow_epoch_newer(g->epoch, f->epoch)) {
		/* A new channel at the receiver: nothing sent in it yet. */
		f->epoch = g->epoch;
		f->sent = 0;
		f->granted = g->granted;
	} else if (g->epoch == f->epoch && f->epoch && g->granted > f->granted) {
		f->granted = g->granted;
	} else {
		return 0;	/* old, repeated, or not about our epoch */
	}
	f->answers++;
	f->asking = false;
	f->ask_rto = KRC_FLOW_ASK_MIN_MS;
	f->waiting = 0;
	f->error = 0;
	return f->granted - f->sent > 0x7fffffff ? 0x7fffffff :
						      (int)(f->granted - f->sent);
}

void krc_flow_rx_init(struct krc_flow_rx *rx, struct krc_credit_ch *ledger_ch,
		      struct krc_flow_rx_ch *ch, u32 nch, u16 *owner,
		      u32 slots, u32 first_epoch, u32 grace_ms)
{
	krc_credit_init(&rx->ledger, ledger_ch, nch, slots);
	memset(ch, 0, sizeof(*ch) * nch);
	memset(owner, 0, sizeof(*owner) * slots);
	rx->ch = ch;
	rx->owner = owner;
	rx->prod = 0;
	rx->cons = 0;
	rx->next_epoch = first_epoch ? first_epoch : 1;
	rx->grace_ms = grace_ms;
}

static bool krc_flow_rx_open_ch(const struct krc_flow_rx *rx, u32 i)
{
	return rx->ledger.ch[i].state == KRC_CREDIT_CH_OPEN;
}

int krc_flow_rx_find(const struct krc_flow_rx *rx, const u8 gid[16],
		     u64 incarnation)
{
	u32 i;

	for (i = 0; i < rx->ledger.nch; i++)
		if (krc_flow_rx_open_ch(rx, i) &&
		    rx->ch[i].incarnation == incarnation &&
		    !memcmp(rx->ch[i].gid, gid, 16))
			return (int)i;
	return -ENOENT;
}

void krc_flow_rx_close(struct krc_flow_rx *rx, u32 chan)
{
	if (chan >= rx->ledger.nch || !krc_flow_rx_open_ch(rx, chan))
		return;
	krc_credit_close(&rx->ledger, chan);
	/* Its held messages stay until consumed; it is found no more. */
	memset(rx->ch[chan].gid, 0, 16);
	rx->ch[chan].epoch = 0;
}

/*
 * A channel that can go without anyone noticing: nothing lent or held,
 * hence nothing of its sender's in flight (G == A and S <= G). What it
 * wants it asks again for, and gets in a new channel (a new epoch).
 */
static int krc_flow_rx_reclaim(struct krc_flow_rx *rx)
{
	u32 i;

	for (i = 0; i < rx->ledger.nch; i++) {
		const struct krc_credit_ch *c = &rx->ledger.ch[i];

		if (c->state == KRC_CREDIT_CH_OPEN && !c->credit &&
		    !c->held) {
			krc_flow_rx_close(rx, i);
			return 0;
		}
	}
	return -ENOSPC;
}

static int krc_flow_rx_open(struct krc_flow_rx *rx, const u8 gid[16],
			    u64 incarnation)
{
	struct krc_flow_rx_ch *c;
	u32 i;
	int ret;

	/* Another incarnation of the same node: the old one is gone. */
	for (i = 0; i < rx->ledger.nch; i++)
		if (krc_flow_rx_open_ch(rx, i) &&
		    !memcmp(rx->ch[i].gid, gid, 16))
			krc_flow_rx_close(rx, i);
	ret = krc_credit_open(&rx->ledger);
	if (ret == -ENOSPC && !krc_flow_rx_reclaim(rx))
		ret = krc_credit_open(&rx->ledger);
	if (ret < 0)
		return ret;
	c = &rx->ch[ret];
	memcpy(c->gid, gid, 16);
	c->incarnation = incarnation;
	c->epoch = rx->next_epoch;
	rx->next_epoch = rx->next_epoch + 1 ? rx->next_epoch + 1 : 1;
	c->granted = 0;
	c->arrived = 0;
	c->gap_since = 0;
	c->gap_sent = 0;
	return ret;
}

/* What the ASK says was sent, against what arrived (flow.h). */
static void krc_flow_rx_reconcile(struct krc_flow_rx *rx, u32 chan,
				  const struct krc_flow_ask *a, u64 now_ms)
{
	struct krc_flow_rx_ch *c = &rx->ch[chan];
	u64 sent = a->sent;

	if (a->epoch != c->epoch)
		return;		/* counts of another epoch say nothing here */
	if (sent > c->granted)
		sent = c->granted;	/* more than lent: not believed */
	if (sent <= c->arrived) {
		c->gap_since = 0;
		return;
	}
	if (!c->gap_since) {
		c->gap_since = now_ms + 1;
		c->gap_sent = sent;
		return;
	}
	if (now_ms + 1 - c->gap_since < rx->grace_ms)
		return;
	/*
	 * What was sent before the gap was seen has had the grace to
	 * arrive; what did not is lost. Arrivals of later messages count
	 * too, so this forgets at most the lost ones, never one in flight.
	 */
	if (c->gap_sent > c->arrived &&
	    !krc_credit_forget(&rx->ledger, chan,
			       (u32)(c->gap_sent - c->arrived)))
		c->arrived = c->gap_sent;
	/* A new window for what was sent since. */
	c->gap_since = sent > c->arrived ? now_ms + 1 : 0;
	c->gap_sent = sent;
}

int krc_flow_rx_ask(struct krc_flow_rx *rx, const u8 gid[16], u64 incarnation,
		    const struct krc_flow_ask *a, u64 now_ms,
		    struct krc_flow_grant *g)
{
	int chan = krc_flow_rx_find(rx, gid, incarnation);
	int lent;

	if (chan < 0)
		chan = krc_flow_rx_open(rx, gid, incarnation);
	if (chan < 0) {
		g->epoch = 0;
		g->granted = 0;
		g->status = KRC_FLOW_BUSY;
		return -ENOSPC;
	}
	krc_flow_rx_reconcile(rx, chan, a, now_ms);
	lent = krc_credit_ask(&rx->ledger, chan, a->want);
	if (lent > 0)
		rx->ch[chan].granted += lent;
	g->epoch = rx->ch[chan].epoch;
	g->granted = rx->ch[chan].granted;
	g->status = KRC_FLOW_OK;
	return chan;
}

int krc_flow_rx_arrive(struct krc_flow_rx *rx, u32 chan, u32 *slot)
{
	u32 slots = rx->ledger.slots;
	bool lent;
	int ret;

	if (chan >= rx->ledger.nch || !krc_flow_rx_open_ch(rx, chan))
		return -EINVAL;
	if (rx->prod - rx->cons >= slots)
		return -ENOBUFS;	/* cannot happen: the ledger has none free */
	lent = rx->ledger.ch[chan].credit > 0;
	ret = krc_credit_arrive(&rx->ledger, chan);
	if (ret)
		return ret;
	/* One it was lent a slot for; a late one was counted when forgotten. */
	if (lent)
		rx->ch[chan].arrived++;
	*slot = rx->prod & (slots - 1);
	rx->owner[*slot] = (u16)chan;
	rx->prod++;
	return 0;
}

u32 krc_flow_rx_consumed(struct krc_flow_rx *rx, u32 consumer)
{
	u32 n = consumer - rx->cons, i;

	if (n > rx->prod - rx->cons)
		return 0;
	for (i = 0; i < n; i++) {
		u32 slot = rx->cons & (rx->ledger.slots - 1);

		krc_credit_consumed(&rx->ledger, rx->owner[slot]);
		/*
		 * Its sender's window stays open: the slot is wanted back
		 * (and goes to it, or in turn to another that waits).
		 */
		krc_credit_want(&rx->ledger, rx->owner[slot], 1);
		rx->cons++;
	}
	return n;
}

int krc_flow_rx_next_grant(struct krc_flow_rx *rx, u32 *chan,
			   struct krc_flow_grant *g)
{
	u32 n;

	if (!krc_credit_next_grant(&rx->ledger, chan, &n))
		return 0;
	rx->ch[*chan].granted += n;
	g->epoch = rx->ch[*chan].epoch;
	g->granted = rx->ch[*chan].granted;
	g->status = KRC_FLOW_OK;
	return 1;
}

bool krc_flow_rx_grant_due(const struct krc_flow_rx *rx)
{
	return krc_credit_grant_due(&rx->ledger);
}

bool krc_flow_rx_ok(const struct krc_flow_rx *rx)
{
	const struct krc_credit *l = &rx->ledger;
	u64 held = 0;
	u32 i, j, in_ring;

	if (!krc_credit_ok(l) || rx->prod - rx->cons > l->slots)
		return false;
	for (i = 0; i < l->nch; i++) {
		const struct krc_credit_ch *c = &l->ch[i];

		held += c->held;
		/* What is lent and not used is what it was granted and
		 * did not send (or lose).
		 */
		if (c->state == KRC_CREDIT_CH_OPEN &&
		    (rx->ch[i].arrived > rx->ch[i].granted ||
		     c->credit != rx->ch[i].granted - rx->ch[i].arrived))
			return false;
		for (j = rx->cons, in_ring = 0; j != rx->prod; j++)
			in_ring += rx->owner[j & (l->slots - 1)] == i;
		if (in_ring != c->held)
			return false;
	}
	return held == rx->prod - rx->cons;
}
