// SPDX-License-Identifier: GPL-2.0
/*
 * source.c - who sent this? A control message or a datagram from a node
 * whose card we do not hold (or whose card names another QP) is checked
 * against the MetaServer with one RDMA READ, at a bounded cost, so that a
 * flood of them from anyone with a verbs QP and many addresses cannot
 * starve the members' handshakes, closes and datagrams (all taken one at
 * a time by the control QP's receive work, ctrl.c):
 *
 *   - a known node (a card cached) is READ again at most once a second
 *     (peer->verify_after): enough to follow a reload;
 *   - for a sender we know nothing of, an answer "no such card" (or a
 *     card that is not the sender's) is remembered for
 *     KRC_SRC_NEG_MS (the negative cache, bounded: KRC_SRC_NEG_SETS x
 *     KRC_SRC_NEG_WAYS addresses), and all such senders together cost at
 *     most src_lookup_rate READs per second (a token bucket);
 *   - nothing is kept of a sender that did not pass (no peer entry).
 * What was refused is dropped and counted (src_negative, src_limited);
 * a real node's message is repeated by its sender, and passes once its
 * card is in the table.
 */
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>

#include "conn/conn.h"

#define KRC_SRC_NEG_SETS	256
#define KRC_SRC_NEG_WAYS	4
#define KRC_SRC_NEG_MS		1000

static uint krc_param_src_lookup_rate = 50;
module_param_named(src_lookup_rate, krc_param_src_lookup_rate, uint, 0644);
MODULE_PARM_DESC(src_lookup_rate,
		 "MetaServer READs per second, at most, to check senders whose card this node does not hold (default 50; a second's worth may come at once)");

struct krc_src_neg {
	u8 gid[16];
	unsigned long until;		/* jiffies; 0: free */
};

static struct krc_src_neg krc_src_neg[KRC_SRC_NEG_SETS][KRC_SRC_NEG_WAYS];
static DEFINE_SPINLOCK(krc_src_lock);	/* the cache and the bucket */
static u64 krc_src_tokens;		/* x HZ: one lookup is HZ */
static unsigned long krc_src_refill;	/* jiffies of the last refill */

static struct krc_src_neg *krc_src_set(const u8 gid[16])
{
	return krc_src_neg[jhash(gid, 16, 0x6b72) % KRC_SRC_NEG_SETS];
}

/* Is @gid known not to be a node (or not the sender it claims)? */
static bool krc_src_negative(const u8 gid[16], unsigned long now)
{
	struct krc_src_neg *set = krc_src_set(gid);
	int i;

	for (i = 0; i < KRC_SRC_NEG_WAYS; i++)
		if (set[i].until && time_before(now, set[i].until) &&
		    !memcmp(set[i].gid, gid, 16))
			return true;
	return false;
}

/* Remember that @gid is no node we can verify, for KRC_SRC_NEG_MS. */
void krc_src_miss(const u8 gid[16])
{
	unsigned long now = jiffies;
	struct krc_src_neg *set = krc_src_set(gid), *e = NULL;
	int i;

	spin_lock_bh(&krc_src_lock);
	for (i = 0; i < KRC_SRC_NEG_WAYS; i++) {
		if (!memcmp(set[i].gid, gid, 16)) {
			e = &set[i];
			break;
		}
		/* Else a free or expired way, else the one that ends first. */
		if (!e || !set[i].until || time_after_eq(now, set[i].until) ||
		    (e->until && time_before(set[i].until, e->until)))
			e = &set[i];
	}
	memcpy(e->gid, gid, 16);
	e->until = now + msecs_to_jiffies(KRC_SRC_NEG_MS);
	spin_unlock_bh(&krc_src_lock);
}

/* One lookup's worth of the unknown senders' budget, if there is one. */
static bool krc_src_token(unsigned long now)
{
	u64 rate = READ_ONCE(krc_param_src_lookup_rate);
	u64 cap = rate * HZ;

	if (!rate)
		return true;	/* no limit */
	krc_src_tokens = min(cap, krc_src_tokens +
			     (u64)(now - krc_src_refill) * rate);
	krc_src_refill = now;
	if (krc_src_tokens < HZ)
		return false;
	krc_src_tokens -= HZ;
	return true;
}

/*
 * READ the card of @gid from the MetaServer to check a sender: @peer is
 * what we know of that node (NULL: nothing). Returns 0 (the table's card
 * in @card), -EAGAIN when the limits say not now (drop the message),
 * -ENXIO (no such node, remembered), -EHOSTUNREACH, or another lookup
 * error. Process context.
 */
int krc_src_lookup(struct krc_peer *peer, const u8 gid[16],
		   struct krcore_card *card, u32 *reads)
{
	unsigned long now = jiffies;
	bool known = peer && READ_ONCE(peer->card_valid);
	int ret = 0;

	if (known) {
		if (time_before(now, READ_ONCE(peer->verify_after)))
			ret = -EAGAIN;
		else
			WRITE_ONCE(peer->verify_after, now + HZ);
	} else {
		spin_lock_bh(&krc_src_lock);
		if (krc_src_negative(gid, now))
			ret = -ENXIO;
		else if (!krc_src_token(now))
			ret = -EAGAIN;
		spin_unlock_bh(&krc_src_lock);
		if (ret)
			krc_event(ret == -ENXIO ? KRC_EV_SRC_NEGATIVE :
				  KRC_EV_SRC_LIMITED);
	}
	if (ret)
		return ret;
	krc_event(KRC_EV_SRC_LOOKUPS);
	ret = krc_meta_lookup(gid, card, reads);
	if (!ret && memcmp(card->gid, gid, 16))
		ret = -ENXIO;	/* cannot happen: the table is by address */
	if (ret == -ENXIO && !known)
		krc_src_miss(gid);
	return ret;
}

void krc_src_init(void)
{
	krc_src_refill = jiffies;
	krc_src_tokens = (u64)krc_param_src_lookup_rate * HZ;
}
