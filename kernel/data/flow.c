// SPDX-License-Identifier: GPL-2.0
/*
 * flow.c - flow control of two-sided messages: a SEND, SEND_IMM or
 * WRITE_IMM goes only into a slot of the receiving ring that its kernel
 * lent to this node (the protocol is common/flow.c; docs/messages.md).
 *
 * Receiver: a bound port (struct krc_flow_in, made at bind) lends its
 * ring's slots to the nodes that ask (FLOW_ASK), answers each ask with a
 * FLOW_GRANT, sees what arrives (recv.c) and what the process consumed,
 * and grants freed slots to the nodes that wait. When the port is
 * unbound, every node it lent to is told (a GRANT saying ECONNREFUSED).
 *
 * Sender: one struct krc_flow_out per (peer, port), shared by all the
 * VQs of this node that send there, kept while the peer is (so its
 * counts never restart behind the receiver's back). qpush takes one
 * credit per message (send.c); without one the request is refused with
 * KRCORE_R_NO_CREDIT and an ASK goes out, repeated with backoff until a
 * GRANT answers. KRCORE_IOC_FLOW_WAIT sleeps until a credit comes.
 * A refusal (the port not bound) ends a VQ that had sent to the port:
 * the process it talked to is gone, and a new one bound to the port must
 * not get the rest of its conversation (an RPC caller's call sent again
 * would run a second time); a new VQ reaches it. A VQ that has not sent
 * yet asks again at its first send: the port may be bound since.
 *
 * Control messages go over the control UD QP, signed with the cluster
 * key (control/ctrl.c) and from a node whose card is held or verified
 * (conn/handshake.c); to this node itself they are handed over directly.
 * Everything a message says is bounded by common/flow.c before use.
 *
 * Locks: krc_flows_lock (the table of flows) and a flow's lock are
 * leaves; the receiver's state is under vq->rlock (irqsave: arrivals come
 * in the completion path). No message is sent under any of them.
 */
#include <linux/hashtable.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "data/data.h"
#include "flow.h"

struct krc_flow_out {
	struct hlist_node hnode;	/* krc_flows, under krc_flows_lock */
	struct krc_peer *peer;		/* no reference: freed with the peer */
	u16 port;
	spinlock_t lock;		/* what follows */
	u64 incarnation;		/* the peer's, when tx started */
	struct krc_flow_tx tx;
	bool dead;			/* the peer left */
	u32 refusals;			/* NOPORT answers heard */
	wait_queue_head_t wq;		/* FLOW_WAIT: a credit, or an error */
	struct delayed_work ask_work;	/* sends (and repeats) the ASK */
};

struct krc_flow_in {
	struct krc_flow_rx rx;
	u16 port;
	struct krc_vqueue *vq;
	struct work_struct grant_work;	/* grants of consumed slots */
	struct krc_credit_ch *lch;
	struct krc_flow_rx_ch *ch;
	u16 *owner;
};

/* One message to send once the locks are dropped. */
struct krc_flow_note {
	u8 gid[16];
	u64 incarnation;
	struct krc_flow_grant g;
};

/* Ports of one peer this node sends messages to, at most. */
#define KRC_FLOW_MAX_PER_PEER	1024

static DEFINE_HASHTABLE(krc_flows, 8);
static DEFINE_SPINLOCK(krc_flows_lock);
static atomic_t krc_flow_epochs;	/* where the next port's epochs start */

static bool krc_wr_is_msg(const struct krcore_wr *wr)
{
	return wr->opcode == KRCORE_WR_SEND ||
	       wr->opcode == KRCORE_WR_SEND_IMM ||
	       wr->opcode == KRCORE_WR_WRITE_IMM;
}

static u64 krc_flow_now(void)
{
	return jiffies_to_msecs(jiffies);
}

static u32 krc_flow_key(const struct krc_peer *peer, u16 port)
{
	return hash_ptr(peer, 16) ^ port;
}

/* The receiver's handler, for a message this node sends itself. */
static void krc_flow_on_msg(struct krc_peer *peer,
			    const struct krc_ctrl_msg *msg);

static void krc_flow_send(struct krc_peer *peer, struct krc_ctrl_msg *msg)
{
	msg->card = krc_node.card;
	if (peer->local) {
		/* To ourselves: no network, the same checks. */
		krc_flow_on_msg(peer, msg);
		return;
	}
	if (krc_peer_send(peer, msg))
		pr_warn_ratelimited("krcore: flow control message not sent\n");
}

/* ---- sender ---- */

static void krc_flow_ask_work(struct work_struct *work)
{
	struct krc_flow_out *f = container_of(to_delayed_work(work),
					      struct krc_flow_out, ask_work);
	struct krc_ctrl_msg msg = { .type = KRC_MSG_FLOW_ASK };
	struct krc_flow_ask a;
	bool due;

	spin_lock_bh(&f->lock);
	due = !f->dead && krc_flow_tx_ask_due(&f->tx, krc_flow_now(), &a);
	msg.dst_incarnation = f->incarnation;
	spin_unlock_bh(&f->lock);
	if (!due)
		return;
	msg.port = f->port;
	msg.epoch = a.epoch;
	msg.want = a.want;
	msg.count = a.sent;
	krc_event(KRC_EV_FLOW_ASKS_SENT);
	krc_flow_send(f->peer, &msg);
	/* Unanswered, it goes again after its backoff. */
	spin_lock_bh(&f->lock);
	if (f->tx.asking && !f->dead)
		mod_delayed_work(krc_wq, &f->ask_work,
				 msecs_to_jiffies(f->tx.ask_rto));
	spin_unlock_bh(&f->lock);
}

static struct krc_flow_out *krc_flow_find(struct krc_peer *peer, u16 port)
{
	struct krc_flow_out *f;

	hash_for_each_possible(krc_flows, f, hnode, krc_flow_key(peer, port))
		if (f->peer == peer && f->port == port)
			return f;
	return NULL;
}

/* Under krc_flows_lock: the flows to @peer. */
static u32 krc_flow_count(const struct krc_peer *peer)
{
	struct krc_flow_out *f;
	u32 n = 0;
	int bkt;

	hash_for_each(krc_flows, bkt, f, hnode)
		n += f->peer == peer;
	return n;
}

/*
 * The flow of @vq (its peer and port), made on first use; NULL when no
 * memory, or when this node already sends to KRC_FLOW_MAX_PER_PEER ports
 * of that peer (a flow lives as long as the peer: its counts must never
 * restart behind the receiver's back, so their number is bounded).
 */
static struct krc_flow_out *krc_flow_of(struct krc_vqueue *vq)
{
	struct krc_flow_out *f, *fresh;

	if (vq->flow)
		return vq->flow;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return NULL;
	spin_lock(&krc_flows_lock);
	f = krc_flow_find(vq->peer, vq->port);
	if (!f && krc_flow_count(vq->peer) >= KRC_FLOW_MAX_PER_PEER) {
		spin_unlock(&krc_flows_lock);
		kfree(fresh);
		return NULL;
	}
	if (!f) {
		f = fresh;
		fresh = NULL;
		f->peer = vq->peer;
		f->port = vq->port;
		spin_lock_init(&f->lock);
		krc_flow_tx_init(&f->tx);
		init_waitqueue_head(&f->wq);
		INIT_DELAYED_WORK(&f->ask_work, krc_flow_ask_work);
		hash_add(krc_flows, &f->hnode, krc_flow_key(f->peer, f->port));
		krc_obj_created(KRC_OBJ_FLOW);
	}
	spin_unlock(&krc_flows_lock);
	kfree(fresh);
	vq->flow = f;
	return f;
}

/* Under f->lock: the peer reloaded since tx started: start again. */
static void krc_flow_check_incarnation(struct krc_flow_out *f, u64 inc)
{
	if (f->incarnation == inc)
		return;
	krc_flow_tx_init(&f->tx);
	f->incarnation = inc;
}

static u64 krc_flow_peer_incarnation(struct krc_peer *peer)
{
	u64 inc;

	spin_lock(&peer->lock);
	inc = peer->card_valid ? peer->card.incarnation : 0;
	spin_unlock(&peer->lock);
	return inc;
}

/*
 * Under f->lock: must a send wait for the receiver's answer first? When
 * it never answered this flow, or refused it last time (a process may
 * have bound the port since: ask again, as a new qconnect would).
 */
static bool krc_flow_unsure(struct krc_flow_out *f)
{
	return !f->dead && (!f->tx.epoch || f->tx.error);
}

/*
 * Under f->lock: was the port's process that @vq sent to refused since
 * (it went away)? Then so is @vq, for good.
 */
static bool krc_flow_reset(const struct krc_vqueue *vq,
			   const struct krc_flow_out *f)
{
	return vq->flow_sent && vq->flow_refusals != f->refusals;
}

/* Has an answer come (or the peer gone) since @seen answers? */
static bool krc_flow_heard(struct krc_flow_out *f, u32 seen)
{
	bool done;

	spin_lock_bh(&f->lock);
	done = f->tx.answers != seen || f->dead;
	spin_unlock_bh(&f->lock);
	return done;
}

/* Under f->lock: ask now if sends wait and no ASK is out. */
static bool krc_flow_want(struct krc_flow_out *f)
{
	if (!f->tx.waiting && !krc_flow_tx_credit(&f->tx))
		f->tx.waiting = 1;
	return !f->tx.asking && !f->dead && !f->tx.error;
}

int krc_flow_prefetch(struct krc_vqueue *vq)
{
	struct krc_flow_out *f;
	bool ask;

	lockdep_assert_held(&vq->lock);
	if (!vq->peer)
		return 0;
	f = krc_flow_of(vq);
	if (!f)
		return -ENOSPC;
	spin_lock_bh(&f->lock);
	krc_flow_check_incarnation(f, krc_flow_peer_incarnation(vq->peer));
	/* A refused flow asks again at its first send (krc_flow_take). */
	ask = !f->tx.epoch && !f->tx.error && !f->dead && krc_flow_want(f);
	spin_unlock_bh(&f->lock);
	if (ask)
		mod_delayed_work(krc_wq, &f->ask_work, 0);
	return 0;
}

int krc_flow_take(struct krc_vqueue *vq, const struct krcore_wr *wrs, int n,
		  u32 *reason)
{
	struct krc_flow_out *f;
	bool ask = false, took = false;
	int i, ret = 0;
	u64 inc;

	for (i = 0; i < n && !krc_wr_is_msg(&wrs[i]); i++)
		;
	if (i == n || !vq->peer)
		return n;
	f = krc_flow_of(vq);
	if (!f) {
		*reason = KRCORE_R_NO_CREDIT;
		return i;
	}
	inc = krc_flow_peer_incarnation(vq->peer);
	spin_lock_bh(&f->lock);
	krc_flow_check_incarnation(f, inc);
	if (krc_flow_reset(vq, f)) {
		spin_unlock_bh(&f->lock);
		*reason = KRCORE_R_REFUSED;
		krc_event(KRC_EV_FLOW_REFUSED);
		return i;
	}
	if (krc_flow_unsure(f)) {
		/*
		 * This node's first message to the port: its first slots
		 * are part of connecting to it (asked for at qconnect), so
		 * the send waits for the answer, as qconnect waits for a
		 * handshake; likewise after a refusal, which may no longer
		 * hold. Later, without a slot: EAGAIN.
		 */
		u32 seen = f->tx.answers;

		krc_flow_tx_retry(&f->tx);
		ask = krc_flow_want(f);
		spin_unlock_bh(&f->lock);
		if (ask)
			mod_delayed_work(krc_wq, &f->ask_work, 0);
		wait_event_killable_timeout(f->wq, krc_flow_heard(f, seen),
					    msecs_to_jiffies(krc_param_connect_timeout_ms));
		ask = false;
		spin_lock_bh(&f->lock);
	}
	for (i = 0; i < n; i++) {
		if (!krc_wr_is_msg(&wrs[i]))
			continue;
		ret = f->dead ? -ECONNRESET : krc_flow_tx_take(&f->tx);
		if (ret)
			break;
		took = true;
	}
	if (ret == -EAGAIN && !f->tx.asking)
		ask = true;
	if (took && !vq->flow_sent) {
		vq->flow_sent = true;
		vq->flow_refusals = f->refusals;
	}
	spin_unlock_bh(&f->lock);
	if (ask)
		mod_delayed_work(krc_wq, &f->ask_work, 0);
	if (i < n) {
		if (ret == -EAGAIN) {
			*reason = KRCORE_R_NO_CREDIT;
			krc_event(KRC_EV_FLOW_NO_CREDIT);
		} else {
			*reason = KRCORE_R_REFUSED;
			krc_event(KRC_EV_FLOW_REFUSED);
		}
	}
	return i;
}

void krc_flow_untake(struct krc_vqueue *vq, const struct krcore_wr *wrs,
		     int n)
{
	struct krc_flow_out *f = vq->flow;
	int i;

	if (!f)
		return;
	spin_lock_bh(&f->lock);
	for (i = 0; i < n; i++)
		if (krc_wr_is_msg(&wrs[i]))
			krc_flow_tx_untake(&f->tx);
	spin_unlock_bh(&f->lock);
}

static bool krc_flow_can_send(struct krc_flow_out *f, long *ret, u64 *credit)
{
	bool done;

	spin_lock_bh(&f->lock);
	*credit = krc_flow_tx_credit(&f->tx);
	*ret = f->dead ? -ECONNRESET : f->tx.error;
	done = *credit || *ret;
	spin_unlock_bh(&f->lock);
	return done;
}

long krc_flow_wait(struct krc_vqueue *vq, struct krcore_flow_wait *w)
{
	struct krc_flow_out *f;
	long ret = 0, left;
	u64 credit = 0;
	bool ask;

	mutex_lock(&vq->lock);
	f = vq->peer && vq->port ? krc_flow_of(vq) : NULL;
	mutex_unlock(&vq->lock);
	if (!f)
		return vq->peer && vq->port ? -ENOMEM : -ENOTCONN;
	/* Waiting is wanting: an ASK goes if none is out (again if refused). */
	spin_lock_bh(&f->lock);
	if (krc_flow_reset(vq, f)) {
		spin_unlock_bh(&f->lock);
		return -ECONNREFUSED;
	}
	krc_flow_tx_retry(&f->tx);
	ask = !krc_flow_tx_credit(&f->tx) && krc_flow_want(f);
	spin_unlock_bh(&f->lock);
	if (ask)
		mod_delayed_work(krc_wq, &f->ask_work, 0);
	left = wait_event_interruptible_timeout(f->wq,
						krc_flow_can_send(f, &ret, &credit),
						msecs_to_jiffies(w->timeout_ms));
	if (left < 0)
		return -EINTR;
	w->credit = (u32)min_t(u64, credit, U32_MAX);
	if (ret)
		return ret;
	return credit ? 0 : -ETIMEDOUT;
}

/*
 * poll(2) of a VQ that sends to a port: EPOLLWRBAND when a message can go
 * (a slot is lent, or the port refused and qpush will say so).
 */
__poll_t krc_flow_poll(struct krc_vqueue *vq, struct file *file,
		       poll_table *wait)
{
	struct krc_flow_out *f = READ_ONCE(vq->flow);
	__poll_t mask = 0;

	if (!f)
		return 0;
	poll_wait(file, &f->wq, wait);
	spin_lock_bh(&f->lock);
	if (krc_flow_tx_credit(&f->tx) || f->tx.error || f->dead)
		mask = EPOLLWRBAND;
	spin_unlock_bh(&f->lock);
	return mask;
}

static void krc_flow_on_grant(struct krc_peer *peer,
			      const struct krc_ctrl_msg *msg)
{
	struct krc_flow_grant g = {
		.epoch = msg->epoch,
		.granted = msg->count,
		.status = msg->status,
	};
	struct krc_flow_out *f;
	int ret = 0;

	krc_event(KRC_EV_FLOW_GRANTS_RECV);
	if (msg->dst_incarnation != krc_incarnation) {
		krc_event(KRC_EV_FLOW_STALE);
		return;
	}
	spin_lock_bh(&krc_flows_lock);
	f = krc_flow_find(peer, msg->port);
	if (f) {
		u32 seen;

		spin_lock(&f->lock);
		seen = f->tx.answers;
		/* From the incarnation we asked, and no other. */
		if (msg->card.incarnation == f->incarnation)
			ret = krc_flow_tx_grant(&f->tx, &g);
		else
			krc_event(KRC_EV_FLOW_STALE);
		if (ret == -ECONNREFUSED)
			f->refusals++;
		if (f->tx.answers != seen)
			ret = ret ? ret : 1;
		spin_unlock(&f->lock);
		if (ret)
			wake_up_all(&f->wq);
		if (ret == -EBUSY)
			krc_event(KRC_EV_FLOW_BUSY);
	}
	spin_unlock_bh(&krc_flows_lock);
}

/* The peer left: its flows fail their waiters. */
void krc_flow_peer_stop(struct krc_peer *peer)
{
	struct krc_flow_out *f;
	int bkt;

	spin_lock_bh(&krc_flows_lock);
	hash_for_each(krc_flows, bkt, f, hnode) {
		if (f->peer != peer)
			continue;
		spin_lock(&f->lock);
		f->dead = true;
		spin_unlock(&f->lock);
		wake_up_all(&f->wq);
	}
	spin_unlock_bh(&krc_flows_lock);
}

/* The peer's last reference: its flows go (no VQ uses them any more). */
void krc_flow_peer_free(struct krc_peer *peer)
{
	struct krc_flow_out *f;
	struct hlist_node *tmp;
	HLIST_HEAD(gone);
	int bkt;

	spin_lock_bh(&krc_flows_lock);
	hash_for_each_safe(krc_flows, bkt, tmp, f, hnode) {
		if (f->peer != peer)
			continue;
		hash_del(&f->hnode);
		spin_lock(&f->lock);
		f->dead = true;
		spin_unlock(&f->lock);
		hlist_add_head(&f->hnode, &gone);
	}
	spin_unlock_bh(&krc_flows_lock);
	hlist_for_each_entry_safe(f, tmp, &gone, hnode) {
		cancel_delayed_work_sync(&f->ask_work);
		kfree(f);
		krc_obj_destroyed(KRC_OBJ_FLOW);
	}
}

/* ---- receiver ---- */

/* Under vq->rlock: what the process consumed (its index, clamped). */
static u32 krc_flow_in_absorb(struct krc_flow_in *in)
{
	struct krc_vqueue *vq = in->vq;

	return krc_flow_rx_consumed(&in->rx, READ_ONCE(vq->rring->consumer));
}

/*
 * Under vq->rlock: the grant work runs only when it has a GRANT to send
 * (common/credit.h batches them), not on every message.
 */
static void krc_flow_in_kick(struct krc_flow_in *in)
{
	if (krc_flow_rx_grant_due(&in->rx))
		queue_work(krc_wq, &in->grant_work);
}

/* Under vq->rlock: tell the process whether senders wait for slots. */
static void krc_flow_in_flag(struct krc_flow_in *in)
{
	const struct krc_credit *l = &in->rx.ledger;
	u32 i, flags = 0;

	/* A sender with nothing lent sends nothing that would tell us. */
	for (i = 0; i < l->nch; i++)
		if (l->ch[i].state == KRC_CREDIT_CH_OPEN && l->ch[i].want &&
		    !l->ch[i].credit)
			flags = KRCORE_RECV_F_CREDIT;
	WRITE_ONCE(in->vq->rring->flags, flags);
	if (!flags)
		return;
	/*
	 * The process stores its consumer index, then reads the flag
	 * (lib/dataplane.c, a full fence between): we store the flag,
	 * then read the index again, so that a slot consumed just before
	 * the flag was seen is not missed by both.
	 */
	smp_mb();
	krc_flow_in_absorb(in);
	krc_flow_in_kick(in);
}

/* Send @n notes as GRANTs for @port; process context, no lock held. */
static void krc_flow_send_grants(const struct krc_flow_note *notes, u32 n,
				 u16 port)
{
	u32 i;

	for (i = 0; i < n; i++) {
		struct krc_ctrl_msg msg = {
			.type = KRC_MSG_FLOW_GRANT,
			.dst_incarnation = notes[i].incarnation,
			.status = notes[i].g.status,
			.port = port,
			.epoch = notes[i].g.epoch,
			.count = notes[i].g.granted,
		};
		struct krc_peer *peer = krc_peer_get(notes[i].gid, false);

		if (IS_ERR_OR_NULL(peer))
			continue;
		krc_event(KRC_EV_FLOW_GRANTS_SENT);
		krc_flow_send(peer, &msg);
		krc_peer_put(peer);
	}
}

/* Under vq->rlock: the grants of freed slots, into @notes (up to @max). */
static u32 krc_flow_in_grants(struct krc_flow_in *in,
			      struct krc_flow_note *notes, u32 max)
{
	u32 n = 0, chan;

	while (n < max &&
	       krc_flow_rx_next_grant(&in->rx, &chan, &notes[n].g)) {
		memcpy(notes[n].gid, in->ch[chan].gid, 16);
		notes[n].incarnation = in->ch[chan].incarnation;
		n++;
	}
	krc_flow_in_flag(in);
	return n;
}

#define KRC_FLOW_NOTES	16

static void krc_flow_grant_work(struct work_struct *work)
{
	struct krc_flow_in *in = container_of(work, struct krc_flow_in,
					      grant_work);
	struct krc_flow_note notes[KRC_FLOW_NOTES];
	unsigned long flags;
	u32 n;

	do {
		spin_lock_irqsave(&in->vq->rlock, flags);
		krc_flow_in_absorb(in);
		n = krc_flow_in_grants(in, notes, KRC_FLOW_NOTES);
		spin_unlock_irqrestore(&in->vq->rlock, flags);
		krc_flow_send_grants(notes, n, in->port);
	} while (n == KRC_FLOW_NOTES);
}

int krc_flow_in_create(struct krc_vqueue *vq, u16 port, u32 slots)
{
	u32 nch = clamp_t(u32, krc_param_flow_channels, 1, 1024);
	struct krc_flow_in *in;

	in = kzalloc(sizeof(*in), GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	in->lch = kvcalloc(nch, sizeof(*in->lch), GFP_KERNEL);
	in->ch = kvcalloc(nch, sizeof(*in->ch), GFP_KERNEL);
	in->owner = kvcalloc(slots, sizeof(*in->owner), GFP_KERNEL);
	if (!in->lch || !in->ch || !in->owner) {
		kvfree(in->lch);
		kvfree(in->ch);
		kvfree(in->owner);
		kfree(in);
		return -ENOMEM;
	}
	in->vq = vq;
	in->port = port;
	INIT_WORK(&in->grant_work, krc_flow_grant_work);
	/* Epochs of a port bound again never repeat an old binding's. */
	krc_flow_rx_init(&in->rx, in->lch, in->ch, nch, in->owner, slots,
			 (u32)atomic_add_return(0x10000, &krc_flow_epochs),
			 krc_param_flow_grace_ms);
	vq->flow_in = in;
	return 0;
}

/*
 * The port is unbound (no delivery runs any more): every node it lent
 * to learns that it is refused, and the state goes. Process context.
 */
void krc_flow_in_destroy(struct krc_vqueue *vq)
{
	struct krc_flow_in *in = vq->flow_in;
	struct krc_flow_note *notes;
	u32 i, n = 0;

	if (!in)
		return;
	/* Unpublished first: nothing queues its work after the cancel. */
	spin_lock_irq(&vq->rlock);
	vq->flow_in = NULL;	/* an ASK under way now answers NOPORT */
	spin_unlock_irq(&vq->rlock);
	cancel_work_sync(&in->grant_work);
	notes = kcalloc(in->rx.ledger.nch, sizeof(*notes), GFP_KERNEL);
	for (i = 0; notes && i < in->rx.ledger.nch; i++) {
		if (in->lch[i].state != KRC_CREDIT_CH_OPEN)
			continue;
		memcpy(notes[n].gid, in->ch[i].gid, 16);
		notes[n].incarnation = in->ch[i].incarnation;
		notes[n].g.epoch = in->ch[i].epoch;
		notes[n].g.granted = in->ch[i].granted;
		notes[n].g.status = KRC_FLOW_NOPORT;
		n++;
	}
	if (notes)
		krc_flow_send_grants(notes, n, in->port);
	kfree(notes);
	kvfree(in->lch);
	kvfree(in->ch);
	kvfree(in->owner);
	kfree(in);
}

int krc_flow_arrive(struct krc_vqueue *vq, const u8 src_gid[16], u32 *slot)
{
	struct krc_flow_in *in = vq->flow_in;
	int ret = 0;
	u32 i;

	lockdep_assert_held(&vq->rlock);
	krc_flow_in_absorb(in);
	/* At most one open channel per node (a new incarnation closes). */
	for (i = 0; i < in->rx.ledger.nch; i++)
		if (in->lch[i].state == KRC_CREDIT_CH_OPEN &&
		    !memcmp(in->ch[i].gid, src_gid, 16))
			break;
	if (i == in->rx.ledger.nch ||
	    krc_flow_rx_arrive(&in->rx, i, slot)) {
		krc_event(KRC_EV_MSG_REFUSED);
		ret = -ENOBUFS;
	} else {
		vq->rprod = in->rx.prod;
	}
	/* After the arrival: a sender it left without credit is due. */
	krc_flow_in_kick(in);
	return ret;
}

/*
 * KRCORE_IOC_QCONSUMED. Only vq->rlock: a thread of the process may be
 * sending on the same VQ (vq->lock) while another consumes.
 */
void krc_flow_consumed(struct krc_vqueue *vq)
{
	struct krc_flow_in *in;
	unsigned long flags;

	spin_lock_irqsave(&vq->rlock, flags);
	in = vq->flow_in;
	/* Queued while published: the unbind's cancel waits for it. */
	if (in) {
		krc_flow_in_absorb(in);
		krc_flow_in_kick(in);
	}
	spin_unlock_irqrestore(&vq->rlock, flags);
}

static void krc_flow_on_ask(struct krc_peer *peer,
			    const struct krc_ctrl_msg *msg)
{
	struct krc_flow_ask a = {
		.epoch = msg->epoch,
		.sent = msg->count,
		.want = msg->want,
	};
	struct krc_flow_note note = {};
	struct krc_flow_in *in;
	struct krc_vqueue *vq;
	unsigned long flags;
	u64 before, lost = 0;
	int chan;

	krc_event(KRC_EV_FLOW_ASKS_RECV);
	if (msg->dst_incarnation != krc_incarnation) {
		krc_event(KRC_EV_FLOW_STALE);
		return;
	}
	memcpy(note.gid, msg->card.gid, 16);
	note.incarnation = msg->card.incarnation;
	note.g.status = KRC_FLOW_NOPORT;
	vq = krc_port_vq_get(msg->port);
	if (vq) {
		spin_lock_irqsave(&vq->rlock, flags);
		/* Cleared under vq->rlock when the port is unbound. */
		in = vq->flow_in;
		if (in) {
			krc_flow_in_absorb(in);
			chan = krc_flow_rx_find(&in->rx, note.gid,
						note.incarnation);
			before = chan >= 0 ? in->ch[chan].arrived : 0;
			if (chan >= 0 && krc_flow_rx_ask(&in->rx, note.gid,
							 note.incarnation, &a,
							 krc_flow_now(),
							 &note.g) == chan)
				lost = in->ch[chan].arrived - before;
			else if (chan < 0)
				krc_flow_rx_ask(&in->rx, note.gid,
						note.incarnation, &a,
						krc_flow_now(), &note.g);
			krc_flow_in_flag(in);
		}
		spin_unlock_irqrestore(&vq->rlock, flags);
		krc_vq_put(vq);
	}
	if (lost)
		krc_event_add(KRC_EV_FLOW_LOST, lost);
	if (note.g.status == KRC_FLOW_BUSY)
		krc_event(KRC_EV_FLOW_BUSY);
	krc_flow_send_grants(&note, 1, msg->port);
}

static void krc_flow_on_msg(struct krc_peer *peer,
			    const struct krc_ctrl_msg *msg)
{
	if (msg->type == KRC_MSG_FLOW_ASK)
		krc_flow_on_ask(peer, msg);
	else
		krc_flow_on_grant(peer, msg);
}

/* conn/'s handler (struct krc_conn_ops): a FLOW message from @peer. */
void krc_flow_msg(struct krc_peer *peer, const struct krc_ctrl_msg *msg)
{
	krc_flow_on_msg(peer, msg);
}
