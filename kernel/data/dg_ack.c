// SPDX-License-Identifier: GPL-2.0
/*
 * dg_ack.c - what comes back to the requester of the datagram transport
 * (dg_tx.c sends): replies, NAKs, or nothing, and the completions of the
 * VQs' requests.
 *
 * Replies may come in any order; the stream retires them in order
 * (done_work) and copies READ data and atomic results into the caller's
 * registration, through the pages krcore pinned (never the process's
 * mapping), then completes the VQ's request. Unanswered datagrams are
 * repeated from the oldest (go-back-N) with exponential backoff; a peer
 * that answers none of dg_retries repeats fails every outstanding request
 * with KRCORE_WC_RETRY_EXC_ERR, and the stream starts anew once drained.
 * Requests that will not be sent (their VQ closes, the stream fails) are
 * abandoned here too.
 */
#include <linux/jiffies.h>
#include <linux/random.h>

#include "data/dg.h"

/*
 * Put a reply's @e->data_len bytes of @src at bytes [@e->off, ...) of
 * @e's request: into the pinned pages of the registrations its SGEs name
 * (which the request holds until it completes), never through the
 * process's mapping (mr.c). 0, or -EFAULT.
 */
static int krc_dg_copy_out(struct krc_dg_ent *e, const u8 *src)
{
	struct krc_slot *s = &e->vq->slots[e->slot];
	const struct krcore_wr *u = &s->wr;
	u64 from = e->off, to = from + e->data_len, pos = 0;
	int k;

	for (k = 0; k < u->num_sge && k < KRCORE_MAX_SGE && pos < to; k++) {
		u64 end = pos + u->sg_list[k].length;

		if (end > from) {
			u64 lo = max(pos, from), hi = min(end, to);

			if (!s->mrs[k] ||
			    krc_mr_copy_in(s->mrs[k], u->sg_list[k].addr +
					   (lo - pos), src + (lo - from),
					   (u32)(hi - lo)))
				return -EFAULT;
		}
		pos = end;
	}
	return pos >= to ? 0 : -EFAULT;
}

/*
 * Aim @tx at its peer's card as it is now and start a new stream (the
 * responder starts over at 0), if the stream is drained and @failed says
 * whether it is after every request failed. krcore's workqueue or a
 * qconnect: process context.
 */
static void krc_dg_retarget(struct krc_dg_tx *tx, bool failed)
{
	struct krc_peer *peer = tx->peer;
	unsigned long flags;
	struct krc_ah *put;
	u64 inc;

	put = krc_dg_readdress(peer, &tx->lock, &tx->ah, &tx->old_ah,
			       &tx->qpn, &tx->qkey);
	krc_ah_put(put);
	spin_lock(&peer->lock);
	inc = peer->card.incarnation;
	spin_unlock(&peer->lock);
	spin_lock_irqsave(&tx->lock, flags);
	if (tx->head == tx->tail && tx->failing == failed) {
		tx->failing = false;
		tx->stream = get_random_u64() | 1;
		tx->dst_incarnation = inc;
		tx->head = 0;
		tx->tail = 0;
		tx->tries = 0;
		wake_up(&tx->wq);
	}
	spin_unlock_irqrestore(&tx->lock, flags);
}

/*
 * Every request of the stream failed: start a new one, aimed at the
 * peer's card as it is now (it may have reloaded: a new control QP and
 * incarnation).
 */
static void krc_dg_restart(struct krc_dg_tx *tx)
{
	krc_dg_retarget(tx, true);
}

/*
 * A qconnect found the stream aimed at an incarnation the peer's card no
 * longer has (it reloaded and said goodbye, and the card was read again):
 * aim it at the new one now, if nothing is in flight, rather than let the
 * next requests go to a control QP that is gone and fail first.
 * Requests in flight still fail, and krc_dg_restart() retargets then.
 */
void krc_dg_retarget_stale(struct krc_dg_tx *tx)
{
	struct krc_peer *peer = tx->peer;
	bool stale;

	spin_lock(&peer->lock);
	stale = peer->card_valid &&
		peer->card.incarnation != READ_ONCE(tx->dst_incarnation);
	spin_unlock(&peer->lock);
	if (stale) {
		krc_event(KRC_EV_DG_RETARGETED);
		krc_dg_retarget(tx, false);
	}
}

/* Complete the requests that failed before all of them was sent. */
static void krc_dg_complete_failed(struct krc_dg_tx *tx)
{
	unsigned long flags;
	struct krc_slot *s;

	for (;;) {
		struct krc_sq_ent se = {};
		struct krc_vqueue *vq;

		spin_lock_irqsave(&tx->lock, flags);
		s = list_first_entry_or_null(&tx->failed, struct krc_slot,
					     dg_node);
		if (s)
			list_del_init(&s->dg_node);
		spin_unlock_irqrestore(&tx->lock, flags);
		if (!s)
			break;
		vq = s->dg_vq;
		se.vq = vq;
		se.slot = s - vq->slots;
		se.cookie = krc_cookie_make(vq->id, se.slot, s->gen);
		if (s->dg_err != KRCORE_WC_SUCCESS)
			krc_peer_count(tx->peer, KRC_PS_WR_ERRORS, 1);
		krc_dp_complete(&se, s->dg_err, 0);
	}
}

/*
 * Retire replied datagrams in order: copy their data to the callers and
 * complete the VQ requests they finish. krcore's workqueue (the copies
 * go into the registrations' pinned pages).
 *
 * A request completes with its last datagram in the window, never
 * before: until then its slot stays busy, so its VQ (which waits for its
 * busy slots before it is freed) outlives every datagram that names it.
 * A segment that fails marks the request (the slot's dg_err); the later
 * segments' data are not copied and the request completes with the first
 * failure.
 */
void krc_dg_done_work(struct work_struct *work)
{
	struct krc_dg_tx *tx = container_of(work, struct krc_dg_tx,
					    done_work);
	unsigned long flags;

	for (;;) {
		struct krc_dg_ent e;
		struct krc_sq_ent se;
		struct krc_slot *s;
		u32 i, status;
		bool done;

		spin_lock_irqsave(&tx->lock, flags);
		i = tx->head % KRC_DG_W;
		if (tx->head == tx->tail || !tx->ent[i].replied) {
			bool reset = tx->head == tx->tail && tx->failing;

			spin_unlock_irqrestore(&tx->lock, flags);
			if (reset)
				krc_dg_restart(tx);
			break;
		}
		e = tx->ent[i];
		s = &e.vq->slots[e.slot];
		status = s->dg_err ? s->dg_err : e.status;
		spin_unlock_irqrestore(&tx->lock, flags);

		if (status == KRCORE_WC_SUCCESS && e.data_len &&
		    krc_dg_copy_out(&e, tx->data + i * tx->seg))
			status = KRCORE_WC_LOC_PROT_ERR;

		/*
		 * Whether this datagram completes its request is decided
		 * here, under the lock: a stream that fails meanwhile, or a
		 * VQ that closes, makes a partly sent request's last
		 * datagram in the window its last (krc_dg_abandon()).
		 */
		spin_lock_irqsave(&tx->lock, flags);
		if (status != KRCORE_WC_SUCCESS && !s->dg_err)
			s->dg_err = status;
		s->dg_inflight--;
		done = tx->ent[i].last;
		status = s->dg_err;
		tx->ent[i].used = false;
		tx->head++;
		tx->tries = 0;
		if (!tx->failing)
			krc_dg_pump(tx);
		spin_unlock_irqrestore(&tx->lock, flags);
		krc_send_now();

		if (done) {
			se.cookie = e.cookie;
			se.vq = e.vq;
			se.slot = e.slot;
			se.len = 0;
			if (status != KRCORE_WC_SUCCESS)
				krc_peer_count(tx->peer, KRC_PS_WR_ERRORS, 1);
			/*
			 * A bad rkey (or range, or access) is the process's
			 * fault, as on RC: it counts toward its throttling,
			 * so guessing keys costs the same on both paths.
			 */
			if (krc_wc_is_process_fault(status)) {
				krc_event(KRC_EV_DG_PROC_FAULTS);
				krc_proc_note_break(e.vq->proc);
			}
			krc_dp_complete(&se, status, 0);
		}
	}
	krc_dg_complete_failed(tx);
	krc_peer_put(tx->peer);
}

void krc_dg_kick_done(struct krc_dg_tx *tx)
{
	kref_get(&tx->peer->ref);
	if (!queue_work(krc_wq, &tx->done_work))
		krc_peer_put(tx->peer);
}

/*
 * Request @s of @vq, queued, will not be sent (any more): it fails with
 * @status. A request partly sent completes with its last datagram in the
 * window, whatever that one's answer; one with none there (or none sent)
 * completes from the failed list (done_work). tx->lock held.
 */
static void krc_dg_abandon(struct krc_dg_tx *tx, struct krc_slot *s,
			   u32 status)
{
	lockdep_assert_held(&tx->lock);
	list_del_init(&s->dg_node);
	tx->queued--;
	if (!s->dg_err)
		s->dg_err = status;
	if (s->dg_off && s->dg_inflight) {
		struct krc_dg_ent *last = &tx->ent[s->dg_last_seq % KRC_DG_W];

		last->last = true;
		krc_event(KRC_EV_DG_PARTIAL_FAILED);
		return;
	}
	list_add_tail(&s->dg_node, &tx->failed);
}

/* Every queued request of @vq fails with @status. tx->lock held. */
static void krc_dg_abandon_vq(struct krc_dg_tx *tx, struct krc_vqueue *vq,
			      u32 status)
{
	struct krc_slot *slot, *tmp;

	lockdep_assert_held(&tx->lock);
	list_for_each_entry_safe(slot, tmp, &vq->dg_queue, dg_node)
		krc_dg_abandon(tx, slot, status);
	if (!list_empty(&vq->dg_active)) {
		/* Its turn, if it had it, is over. */
		if (list_first_entry(&tx->active, struct krc_vqueue, dg_active) ==
		    vq)
			tx->turn = 0;
		list_del_init(&vq->dg_active);
	}
}

/* Every outstanding datagram of @tx fails with @status. tx->lock held. */
void krc_dg_fail_all(struct krc_dg_tx *tx, u32 status)
{
	struct krc_vqueue *vq, *tmp;
	u32 s;

	lockdep_assert_held(&tx->lock);
	list_for_each_entry_safe(vq, tmp, &tx->active, dg_active)
		krc_dg_abandon_vq(tx, vq, status);
	for (s = tx->head; s != tx->tail; s++) {
		struct krc_dg_ent *e = &tx->ent[s % KRC_DG_W];

		if (!e->replied) {
			e->replied = true;
			e->status = status;
			e->data_len = 0;
		}
	}
	tx->failing = true;
}

/*
 * @vq is closing: what it queued and did not send fails now (flushed),
 * what is in the window completes as it comes. Its lock held; any
 * context.
 */
void krc_dg_vq_abandon(struct krc_vqueue *vq)
{
	struct krc_dg_tx *tx = vq->peer ? READ_ONCE(vq->peer->dgtx) : NULL;
	unsigned long flags;

	if (!tx)
		return;
	spin_lock_irqsave(&tx->lock, flags);
	krc_dg_abandon_vq(tx, vq, KRCORE_WC_FLUSHED);
	spin_unlock_irqrestore(&tx->lock, flags);
	krc_dg_kick_done(tx);
}

/* Repeat what is unanswered; give up after dg_retries repeats. */
void krc_dg_rto_work(struct work_struct *work)
{
	struct krc_dg_tx *tx = container_of(to_delayed_work(work),
					    struct krc_dg_tx, rto_work);
	unsigned long flags, now = jiffies;
	bool kick = false;
	u32 s;

	spin_lock_irqsave(&tx->lock, flags);
	if (tx->head == tx->tail || tx->failing) {
		spin_unlock_irqrestore(&tx->lock, flags);
		goto out;
	}
	s = tx->head;
	if (tx->ent[s % KRC_DG_W].replied ||
	    time_before(now, tx->ent[s % KRC_DG_W].sent + krc_dg_rto(tx))) {
		/*
		 * Answered, not retired yet (done_work is on its way: no
		 * silence to count), or sent again lately: wait.
		 */
		krc_dg_arm(tx);
		spin_unlock_irqrestore(&tx->lock, flags);
		goto out;
	}
	if (tx->tries >= krc_param_dg_retries) {
		krc_event(KRC_EV_DG_TIMEOUTS);
		krc_peer_count(tx->peer, KRC_PS_WR_TIMEOUTS, 1);
		pr_warn_ratelimited("krcore: datagram stream to a peer: no answer after %u repeats, %u datagrams failed (oldest %u: %s)\n",
				    tx->tries, tx->tail - tx->head, s,
				    tx->ent[s % KRC_DG_W].replied ?
				    "answered" : "unanswered");
		krc_dg_fail_all(tx, KRCORE_WC_RETRY_EXC_ERR);
		kick = true;
	} else {
		/* What went out a timeout ago (the rest may still come). */
		u64 rto_ns = (u64)jiffies_to_usecs(krc_dg_rto(tx)) * 1000;
		u64 now_ns = ktime_get_ns();

		tx->tries++;
		for (; s != tx->tail; s++) {
			struct krc_dg_ent *e = &tx->ent[s % KRC_DG_W];

			if (e->replied || (s != tx->head &&
					   now_ns - e->sent_ns < rto_ns))
				continue;
			krc_dg_xmit(tx, s % KRC_DG_W);
			krc_event(KRC_EV_DG_RETRANSMITS);
			krc_peer_count(tx->peer, KRC_PS_DG_RETRANSMITS, 1);
		}
		krc_dg_arm(tx);
	}
	spin_unlock_irqrestore(&tx->lock, flags);
	krc_send_now();
	if (kick) {
		krc_dg_kick_done(tx);
		krc_peer_suspect(tx->peer);
	}
out:
	krc_peer_put(tx->peer);
}

/*
 * The peer lost datagram @h->seq (it got a later one): send the
 * unanswered ones again from there, unless they went out again lately
 * (within half a round trip: this NAK may be for the previous round).
 * tx->lock held.
 */
static void krc_dg_on_nak(struct krc_dg_tx *tx, const struct krc_dg_hdr *h)
{
	u64 now = ktime_get_ns();
	u32 s;

	lockdep_assert_held(&tx->lock);
	if (h->stream != tx->stream || tx->failing ||
	    (u32)(h->seq - tx->head) >= tx->tail - tx->head)
		return;
	s = h->seq;
	if (tx->ent[s % KRC_DG_W].replied ||
	    now - tx->ent[s % KRC_DG_W].sent_ns < tx->srtt_us * 500ULL)
		return;
	krc_event(KRC_EV_DG_NAK_RECV);
	for (; s != tx->tail; s++) {
		struct krc_dg_ent *e = &tx->ent[s % KRC_DG_W];

		/* Sent before the gap was seen: dropped as ahead of it. */
		if (e->replied || now - e->sent_ns < tx->srtt_us * 500ULL)
			continue;
		krc_dg_xmit(tx, s % KRC_DG_W);
		krc_event(KRC_EV_DG_RETRANSMITS);
		krc_peer_count(tx->peer, KRC_PS_DG_RETRANSMITS, 1);
	}
}

/* A reply from @peer (authenticated). Process context (ctrl.c). */
void krc_dg_on_rep(struct krc_peer *peer, const struct krc_dg_hdr *h,
		   const u8 *payload)
{
	struct krc_dg_tx *tx = READ_ONCE(peer->dgtx);
	unsigned long flags;
	struct krc_dg_ent *e;
	bool kick = false;
	u32 i;

	if (!tx)
		return;
	spin_lock_irqsave(&tx->lock, flags);
	if (h->flags & KRC_DG_F_NAK) {
		krc_dg_on_nak(tx, h);
		spin_unlock_irqrestore(&tx->lock, flags);
		krc_send_now();
		return;
	}
	i = h->seq % KRC_DG_W;
	e = &tx->ent[i];
	if (h->stream != tx->stream || !e->used || e->seq != h->seq ||
	    e->replied || (u32)(h->seq - tx->head) >= tx->tail - tx->head) {
		spin_unlock_irqrestore(&tx->lock, flags);
		krc_event(KRC_EV_DG_REP_STRAY);
		return;
	}
	krc_event(KRC_EV_DG_REP_RECV);
	krc_dg_rtt_sample(tx, e);
	if (krc_fault_countdown(&krc_fault_dg_fail_after)) {
		/* Testing: the stream fails here, as for a reloaded peer. */
		krc_event(KRC_EV_DG_FAULT_FAILED);
		krc_dg_fail_all(tx, KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN);
		spin_unlock_irqrestore(&tx->lock, flags);
		krc_dg_kick_done(tx);
		return;
	}
	if (h->flags & KRC_DG_F_STALE) {
		/* The peer reloaded: nothing of ours reached the new one. */
		krc_event(KRC_EV_DG_STALE);
		krc_dg_fail_all(tx, KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN);
		spin_unlock_irqrestore(&tx->lock, flags);
		krc_dg_kick_done(tx);
		krc_peer_suspect(peer);
		return;
	}
	e->status = h->status;
	e->data_len = 0;
	if (h->status == KRCORE_WC_SUCCESS &&
	    krc_dg_op_returns_data(e->opcode)) {
		u32 want = e->opcode == KRCORE_WR_READ ? e->len : 8;

		if (h->len != want) {
			e->status = KRCORE_WC_REM_OP_ERR;
		} else {
			memcpy(tx->data + i * tx->seg, payload,
			       h->len);
			e->data_len = h->len;
		}
	}
	e->replied = true;
	kick = h->seq == tx->head;
	spin_unlock_irqrestore(&tx->lock, flags);
	if (kick)
		krc_dg_kick_done(tx);
}
