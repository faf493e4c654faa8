// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * credit.c - the receive ring's ledger of lent slots (credit.h).
 */
#include "credit.h"

static bool krc_credit_active(const struct krc_credit_ch *c)
{
	return c->state != KRC_CREDIT_CH_FREE &&
	       (c->credit || c->held || c->want);
}

/* After a change to @c that was active (@was) before it. */
static void krc_credit_account(struct krc_credit *l,
			       const struct krc_credit_ch *c, bool was)
{
	bool now = krc_credit_active(c);

	if (now && !was)
		l->active++;
	else if (!now && was)
		l->active--;
}

static struct krc_credit_ch *krc_credit_ch(struct krc_credit *l, u32 ch,
					   bool closing_ok)
{
	struct krc_credit_ch *c;

	if (ch >= l->nch)
		return NULL;
	c = &l->ch[ch];
	if (c->state == KRC_CREDIT_CH_OPEN ||
	    (closing_ok && c->state == KRC_CREDIT_CH_CLOSING))
		return c;
	return NULL;
}

static u32 krc_credit_share_of(const struct krc_credit *l, u32 active)
{
	u32 s;

	if (!active)
		return l->slots;
	s = l->slots / active;
	return s ? s : 1;
}

/* What @c may still take within its share (counting it as active). */
static u32 krc_credit_room(const struct krc_credit *l,
			   const struct krc_credit_ch *c)
{
	u32 share = krc_credit_share_of(l, l->active +
					(krc_credit_active(c) ? 0 : 1));
	u32 has = c->credit + c->held;

	return has < share ? share - has : 0;
}

void krc_credit_init(struct krc_credit *l, struct krc_credit_ch *ch,
		     u32 nch, u32 slots)
{
	u32 i;

	l->ch = ch;
	l->nch = nch;
	l->slots = slots;
	l->free = slots;
	l->active = 0;
	l->next = 0;
	for (i = 0; i < nch; i++) {
		ch[i].credit = 0;
		ch[i].held = 0;
		ch[i].want = 0;
		ch[i].state = KRC_CREDIT_CH_FREE;
	}
}

int krc_credit_open(struct krc_credit *l)
{
	u32 i;

	for (i = 0; i < l->nch; i++) {
		if (l->ch[i].state == KRC_CREDIT_CH_FREE) {
			l->ch[i].state = KRC_CREDIT_CH_OPEN;
			return (int)i;
		}
	}
	return -ENOSPC;
}

int krc_credit_close(struct krc_credit *l, u32 ch)
{
	struct krc_credit_ch *c = krc_credit_ch(l, ch, false);
	bool was;

	if (!c)
		return -EINVAL;
	was = krc_credit_active(c);
	l->free += c->credit;
	c->credit = 0;
	c->want = 0;
	c->state = c->held ? KRC_CREDIT_CH_CLOSING : KRC_CREDIT_CH_FREE;
	krc_credit_account(l, c, was);
	return 0;
}

u32 krc_credit_share(const struct krc_credit *l)
{
	return krc_credit_share_of(l, l->active);
}

int krc_credit_arrive(struct krc_credit *l, u32 ch)
{
	struct krc_credit_ch *c = krc_credit_ch(l, ch, false);
	bool was;
	int ret = 0;

	if (!c)
		return -EINVAL;
	was = krc_credit_active(c);
	if (c->credit) {
		c->credit--;
		c->held++;
	} else if (l->free && krc_credit_room(l, c)) {
		l->free--;
		c->held++;
	} else {
		if (c->want < l->slots)
			c->want++;
		ret = -ENOBUFS;
	}
	krc_credit_account(l, c, was);
	return ret;
}

int krc_credit_ask(struct krc_credit *l, u32 ch, u32 n)
{
	struct krc_credit_ch *c = krc_credit_ch(l, ch, false);
	u32 g;
	bool was;

	if (!c)
		return -EINVAL;
	if (n > l->slots)
		n = l->slots;
	was = krc_credit_active(c);
	g = krc_credit_room(l, c);
	if (g > n)
		g = n;
	if (g > l->free)
		g = l->free;
	c->credit += g;
	l->free -= g;
	c->want = n - g;
	krc_credit_account(l, c, was);
	return (int)g;
}

int krc_credit_forget(struct krc_credit *l, u32 ch, u32 n)
{
	struct krc_credit_ch *c = krc_credit_ch(l, ch, false);
	bool was;

	if (!c || c->credit < n)
		return -EINVAL;
	was = krc_credit_active(c);
	c->credit -= n;
	l->free += n;
	krc_credit_account(l, c, was);
	return 0;
}

int krc_credit_want(struct krc_credit *l, u32 ch, u32 n)
{
	struct krc_credit_ch *c = krc_credit_ch(l, ch, false);
	bool was;

	if (!c)
		return -EINVAL;
	was = krc_credit_active(c);
	c->want = n > l->slots - c->want ? l->slots : c->want + n;
	krc_credit_account(l, c, was);
	return 0;
}

int krc_credit_consumed(struct krc_credit *l, u32 ch)
{
	struct krc_credit_ch *c = krc_credit_ch(l, ch, true);
	bool was;

	if (!c || !c->held)
		return -EINVAL;
	was = krc_credit_active(c);
	c->held--;
	l->free++;
	if (c->state == KRC_CREDIT_CH_CLOSING && !c->held)
		c->state = KRC_CREDIT_CH_FREE;
	krc_credit_account(l, c, was);
	return 0;
}

/*
 * Is a grant to @c due? It wants slots and holds no more credit than it
 * wants back: a sender out of credit (it waits) at once, one that still
 * has credit once it has used half of its window. A sender whose
 * receiver keeps up is then granted once per half window, not once per
 * message (each GRANT is a signed control message), and never runs dry.
 */
static bool krc_credit_due(const struct krc_credit_ch *c)
{
	return c->state == KRC_CREDIT_CH_OPEN && c->want &&
	       c->credit <= c->want;
}

bool krc_credit_grant_due(const struct krc_credit *l)
{
	u32 i;

	for (i = 0; i < l->nch && l->free; i++)
		if (krc_credit_due(&l->ch[i]) && krc_credit_room(l, &l->ch[i]))
			return true;
	return false;
}

int krc_credit_next_grant(struct krc_credit *l, u32 *ch, u32 *n)
{
	u32 i, at, g;

	for (i = 0; i < l->nch && l->free; i++) {
		struct krc_credit_ch *c;

		at = (l->next + i) % l->nch;
		c = &l->ch[at];
		if (!krc_credit_due(c))
			continue;
		g = krc_credit_room(l, c);
		if (g > c->want)
			g = c->want;
		if (g > l->free)
			g = l->free;
		if (!g)
			continue;
		/* still active: it waited, and now holds credit */
		c->credit += g;
		c->want -= g;
		l->free -= g;
		l->next = (at + 1) % l->nch;
		*ch = at;
		*n = g;
		return 1;
	}
	return 0;
}

bool krc_credit_ok(const struct krc_credit *l)
{
	u64 sum = l->free;
	u32 i, active = 0;

	for (i = 0; i < l->nch; i++) {
		const struct krc_credit_ch *c = &l->ch[i];

		if (c->state == KRC_CREDIT_CH_FREE &&
		    (c->credit || c->held || c->want))
			return false;
		if (c->state == KRC_CREDIT_CH_CLOSING && (c->credit || c->want))
			return false;
		if (c->want > l->slots)
			return false;
		sum += (u64)c->credit + c->held;
		active += krc_credit_active(c);
	}
	return sum == l->slots && active == l->active;
}
