// SPDX-License-Identifier: GPL-2.0
/*
 * dg_tx.c - the requester of the datagram transport (dgram.c has the
 * overview): one ordered stream per peer (struct krc_dg_tx).
 *
 * A request is cut into segments of one datagram each; a WRITE or SEND
 * payload is gathered by the NIC straight from the caller's registered
 * memory (its lkeys, the PD is the node's). Each VQ with requests waiting
 * takes turns of KRC_DG_QUANTUM datagrams. Replies may come in any order;
 * the stream retires them in order (done_work) and copies READ data and
 * atomic results into the caller's registration, through the pages
 * krcore pinned (never the process's mapping), then completes the VQ's
 * request. Unanswered datagrams are repeated from the oldest (go-back-N)
 * with exponential backoff; a peer that answers none of dg_retries
 * repeats fails every outstanding request with KRCORE_WC_RETRY_EXC_ERR.
 */
#include <linux/jiffies.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "data/dg.h"

static void krc_dg_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_dg_tx *tx = container_of(wc->wr_cqe, struct krc_dg_tx,
					    cqe);
	unsigned long flags;

	krc_ctrl_ud_done(cq);
	/*
	 * Under the queue's lock: the stream is freed once the count is
	 * zero, and krc_dg_peer_free() takes this lock before it frees.
	 */
	spin_lock_irqsave(&tx->wq.lock, flags);
	if (atomic_dec_and_test(&tx->tx_posted))
		wake_up_locked(&tx->wq);
	spin_unlock_irqrestore(&tx->wq.lock, flags);
}

/* (Re)transmit the datagram of window index @i. Caller holds tx->lock. */
static void krc_dg_xmit(struct krc_dg_tx *tx, u32 i)
{
	struct krc_dg_ent *e = &tx->ent[i];
	struct ib_sge sge[1 + KRCORE_MAX_SGE];
	struct krcore_sge sl[KRCORE_MAX_SGE];
	struct ib_ud_wr wr = {};
	int n = 0, k, ret;

	lockdep_assert_held(&tx->lock);
	sge[0].addr = tx->hdrs_dma + i * KRC_DG_HDR_SIZE;
	sge[0].length = KRC_DG_HDR_SIZE;
	sge[0].lkey = krc_dg_lkey();
	if (krc_dg_op_has_payload(e->opcode) && e->len) {
		const struct krcore_wr *u = &e->vq->slots[e->slot].wr;

		n = krc_dg_slice(u->sg_list, u->num_sge, e->off, e->len, sl,
				 KRCORE_MAX_SGE);
		if (n < 0)
			n = 0;	/* cannot happen: the check summed the SGEs */
		for (k = 0; k < n; k++) {
			sge[1 + k].addr = sl[k].addr;
			sge[1 + k].length = sl[k].length;
			sge[1 + k].lkey = sl[k].lkey;
		}
	}
	wr.wr.wr_cqe = &tx->cqe;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = 1 + n;
	wr.ah = tx->ah->ah;
	wr.remote_qpn = tx->qpn;
	wr.remote_qkey = tx->qkey;
	e->sent = jiffies;
	e->sent_ns = ktime_get_ns();
	e->xmits++;
	atomic_inc(&tx->tx_posted);
	ret = krc_ctrl_post_ud(&wr);
	if (ret) {
		/* Lost, as far as the protocol knows: repeated on timeout. */
		atomic_dec(&tx->tx_posted);
		krc_event(KRC_EV_DG_TX_FULL);
	}
}

/*
 * The repeat timeout: the measured round trip (smoothed, with 4 times its
 * variation, RFC 6298) but at least dg_rto_ms, doubled with every repeat,
 * at most 40 x dg_rto_ms: a peer that answers nothing fails its requests
 * within (dg_retries + 1) x 40 x dg_rto_ms.
 */
static unsigned long krc_dg_rto(struct krc_dg_tx *tx)
{
	u64 floor_us = (u64)max(krc_param_dg_rto_ms, 1U) * 1000;
	u64 us = max_t(u64, floor_us, (u64)tx->srtt_us + 4ULL * tx->rttvar_us);

	us = min_t(u64, us << min(tx->tries, 5U), 40 * floor_us);
	return usecs_to_jiffies(us) + 1;
}

/* A first transmission's round trip (never a repeat's: Karn). */
static void krc_dg_rtt_sample(struct krc_dg_tx *tx, const struct krc_dg_ent *e)
{
	u64 d = (ktime_get_ns() - e->sent_ns) / 1000;
	u32 us = min_t(u64, d, U32_MAX / 8);

	if (e->xmits != 1)
		return;
	if (!tx->srtt_us) {
		tx->srtt_us = us;
		tx->rttvar_us = us / 2;
		return;
	}
	tx->rttvar_us = (3 * tx->rttvar_us +
			 (tx->srtt_us > us ? tx->srtt_us - us :
					     us - tx->srtt_us)) / 4;
	tx->srtt_us = (7 * tx->srtt_us + us) / 8;
}

static void krc_dg_arm(struct krc_dg_tx *tx)
{
	kref_get(&tx->peer->ref);
	if (!mod_delayed_work(krc_wq, &tx->rto_work, krc_dg_rto(tx)))
		return;
	krc_peer_put(tx->peer);	/* it was pending: it had a reference */
}

/* May a request of @op be cut between two turns? */
static bool krc_dg_splittable(u8 op)
{
	return op == KRCORE_WR_READ || op == KRCORE_WR_WRITE;
}

/*
 * Send the next segment of request @s of @vq into the window (there is
 * room). True if it was the request's last. Caller holds tx->lock.
 */
static bool krc_dg_send_segment(struct krc_dg_tx *tx, struct krc_vqueue *vq,
				struct krc_slot *s)
{
	u16 slot = s - vq->slots;
	u32 i = tx->tail % KRC_DG_W;
	struct krc_dg_ent *e = &tx->ent[i];
	bool atomic = s->wr.opcode == KRCORE_WR_ATOMIC_CAS ||
		      s->wr.opcode == KRCORE_WR_ATOMIC_FAA;
	u32 len = atomic ? 8 : min_t(u32, s->len - s->dg_off, tx->seg);
	bool last = s->dg_off + len >= s->len || atomic;
	struct krc_dg_hdr h = {
		.type = KRC_DG_REQ,
		.opcode = s->wr.opcode,
		.flags = last ? KRC_DG_F_LAST : 0,
		.seq = tx->tail,
		.len = len,
		.stream = tx->stream,
		.dst_incarnation = tx->dst_incarnation,
		.remote_addr = s->wr.remote_addr + s->dg_off,
		.rkey = s->wr.rkey,
		.dst_port = vq->port,
		.src_port = vq->bound_port,
		.compare_add = s->wr.compare_add,
		.swap = s->wr.swap,
	};

	lockdep_assert_held(&tx->lock);
	switch (s->wr.opcode) {
	case KRCORE_WR_SEND:
	case KRCORE_WR_SEND_IMM:
		h.remote_addr = s->dg_off;	/* the offset */
		break;
	case KRCORE_WR_READ:
	case KRCORE_WR_WRITE:
	case KRCORE_WR_WRITE_IMM:
		/* The whole request, checked with every segment. */
		h.compare_add = s->len;
		h.swap = s->wr.remote_addr;
		break;
	}
	if (last)
		h.imm_data = s->wr.imm_data;
	memset(e, 0, sizeof(*e));
	e->cookie = krc_cookie_make(vq->id, slot, s->gen);
	e->vq = vq;
	e->slot = slot;
	e->opcode = s->wr.opcode;
	e->last = last;
	e->used = true;
	e->seq = tx->tail;
	e->off = s->dg_off;
	e->len = len;
	krc_dg_encode(&h, tx->hdrs + i * KRC_DG_HDR_SIZE);
	ib_dma_sync_single_for_device(krc_dg_ibdev(), tx->hdrs_dma +
				      i * KRC_DG_HDR_SIZE, KRC_DG_HDR_SIZE,
				      DMA_TO_DEVICE);
	s->dg_last_seq = tx->tail;
	s->dg_inflight++;
	tx->tail++;
	s->dg_off += len;
	krc_dg_xmit(tx, i);
	krc_event(KRC_EV_DG_REQ_SENT);
	krc_peer_count(tx->peer, KRC_PS_DG_SENT, 1);
	return last;
}

/*
 * Fill the window from the VQs' queues, a datagram per segment, each VQ
 * in turn (at most KRC_DG_QUANTUM datagrams a turn, but never between
 * two segments of a request that cannot be cut). Caller holds tx->lock.
 */
static void krc_dg_pump(struct krc_dg_tx *tx)
{
	bool was_idle = tx->head == tx->tail;

	lockdep_assert_held(&tx->lock);
	while (tx->tail - tx->head < KRC_DG_W) {
		struct krc_vqueue *vq;
		struct krc_slot *s;
		bool last;

		vq = list_first_entry_or_null(&tx->active, struct krc_vqueue,
					      dg_active);
		if (!vq)
			break;
		s = list_first_entry_or_null(&vq->dg_queue, struct krc_slot,
					     dg_node);
		if (!s) {		/* cannot happen: never left so */
			list_del_init(&vq->dg_active);
			tx->turn = 0;
			continue;
		}
		last = krc_dg_send_segment(tx, vq, s);
		tx->turn++;
		if (last) {
			list_del_init(&s->dg_node);
			tx->queued--;
		} else if (!krc_dg_splittable(s->wr.opcode)) {
			continue;	/* its next segment comes first */
		}
		if (tx->turn < KRC_DG_QUANTUM && !list_empty(&vq->dg_queue))
			continue;
		/* The turn is over: to the back of the line, or out. */
		tx->turn = 0;
		list_del_init(&vq->dg_active);
		if (!list_empty(&vq->dg_queue))
			list_add_tail(&vq->dg_active, &tx->active);
	}
	if (was_idle && tx->head != tx->tail) {
		tx->tries = 0;
		krc_dg_arm(tx);
	}
}

/*
 * Complete @vq's request in @slot with a remote access error without
 * sending it (krc_dg_push()): the process's fault, as on RC.
 */
static void krc_dg_refuse(struct krc_vqueue *vq, u16 slot)
{
	struct krc_slot *s = &vq->slots[slot];
	struct krc_sq_ent se = {
		.cookie = krc_cookie_make(vq->id, slot, s->gen),
		.vq = vq,
		.slot = slot,
	};

	krc_event(KRC_EV_DG_PROC_FAULTS);
	krc_peer_count(vq->peer, KRC_PS_WR_ERRORS, 1);
	krc_proc_note_break(vq->proc);
	krc_dp_complete(&se, KRCORE_WC_REM_ACCESS_ERR, 0);
}

/*
 * Send the checked, reserved requests @slots[0..@n) of @vq (its lock held)
 * on the stream to its peer, behind what is already waiting. Returns how
 * many were taken (all, unless the stream is being reset: *reason).
 */
int krc_dg_push(struct krc_vqueue *vq, const u16 *slots, int n, u32 *reason)
{
	struct krc_dg_tx *tx = vq->peer->dgtx;
	u16 refused[KRC_PUSH_BATCH];
	int i, nref = 0, queued = 0;
	unsigned long flags;

	lockdep_assert_held(&vq->lock);
	spin_lock_irqsave(&tx->lock, flags);
	if (tx->failing || tx->stopping) {
		spin_unlock_irqrestore(&tx->lock, flags);
		/* A new stream is moments away (EAGAIN), unless stopping. */
		*reason = tx->stopping ? KRCORE_R_NOT_CONNECTED :
					 KRCORE_R_QP_FULL;
		return 0;
	}
	/* The peer's backlog is bounded: what does not fit, later. */
	if (tx->queued + n > READ_ONCE(krc_param_dg_backlog)) {
		n = READ_ONCE(krc_param_dg_backlog) > tx->queued ?
		    READ_ONCE(krc_param_dg_backlog) - tx->queued : 0;
		*reason = KRCORE_R_QP_FULL;
		krc_event(KRC_EV_DG_BACKLOG_FULL);
	}
	for (i = 0; i < n; i++) {
		struct krc_slot *s = &vq->slots[slots[i]];

		/*
		 * A remote range the responder's decoder refuses would be
		 * dropped there unanswered, and the whole stream, every
		 * process's requests to the peer, would fail for it: it
		 * fails here, alone, as the responder's range check would
		 * fail it.
		 */
		if (!krc_dg_req_range_ok(s->wr.opcode, s->wr.remote_addr,
					 s->len) && nref < ARRAY_SIZE(refused)) {
			refused[nref++] = slots[i];
			continue;
		}
		s->dg_vq = vq;
		s->dg_off = 0;
		s->dg_err = 0;
		s->dg_inflight = 0;
		s->dg_last_seq = 0;
		list_add_tail(&s->dg_node, &vq->dg_queue);
		queued++;
	}
	tx->queued += queued;
	if (queued && list_empty(&vq->dg_active))
		list_add_tail(&vq->dg_active, &tx->active);
	atomic64_add(n, &tx->requests);
	krc_dg_pump(tx);
	spin_unlock_irqrestore(&tx->lock, flags);
	krc_send_now();
	for (i = 0; i < nref; i++)
		krc_dg_refuse(vq, refused[i]);
	return n;
}

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
 * Every request of the stream failed: start a new one (the responder
 * starts over at 0), aimed at the peer's card as it is now (it may have
 * reloaded: a new control QP and incarnation). krcore's workqueue.
 */
static void krc_dg_restart(struct krc_dg_tx *tx)
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
	if (tx->head == tx->tail && tx->failing) {
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
static void krc_dg_done_work(struct work_struct *work)
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
static void krc_dg_rto_work(struct work_struct *work)
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

/* The stream to @peer, made on first use. Process context. */
int krc_dg_open(struct krc_peer *peer)
{
	struct ib_device *ibdev = krc_dg_ibdev();
	struct krc_dg_tx *tx;
	struct krc_ah *ah;
	u32 qpn, qkey;

	if (READ_ONCE(peer->dgtx))
		return 0;
	ah = krc_peer_ah_get(peer, &qpn, &qkey);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	tx = kzalloc(sizeof(*tx), GFP_KERNEL);
	if (!tx)
		goto nomem;
	spin_lock(&peer->lock);
	tx->dst_incarnation = peer->card.incarnation;
	tx->seg = krc_dg_seg_for(&peer->card);
	spin_unlock(&peer->lock);
	tx->hdrs = kcalloc(KRC_DG_W, KRC_DG_HDR_SIZE, GFP_KERNEL);
	tx->data = kvcalloc(KRC_DG_W, tx->seg, GFP_KERNEL);
	if (!tx->hdrs || !tx->data)
		goto nomem;
	tx->hdrs_dma = ib_dma_map_single(ibdev, tx->hdrs,
					 KRC_DG_W * KRC_DG_HDR_SIZE,
					 DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, tx->hdrs_dma))
		goto nomem;
	spin_lock_init(&tx->lock);
	init_waitqueue_head(&tx->wq);
	INIT_DELAYED_WORK(&tx->rto_work, krc_dg_rto_work);
	INIT_WORK(&tx->done_work, krc_dg_done_work);
	INIT_LIST_HEAD(&tx->active);
	INIT_LIST_HEAD(&tx->failed);
	tx->cqe.done = krc_dg_tx_done;
	tx->peer = peer;
	tx->stream = get_random_u64() | 1;
	tx->ah = ah;
	tx->qpn = qpn;
	tx->qkey = qkey;
	if (cmpxchg(&peer->dgtx, NULL, tx)) {
		/* Another connect made it first. */
		ib_dma_unmap_single(ibdev, tx->hdrs_dma,
				    KRC_DG_W * KRC_DG_HDR_SIZE, DMA_TO_DEVICE);
		kfree(tx->hdrs);
		kvfree(tx->data);
		kfree(tx);
		krc_ah_put(ah);
	}
	return 0;
nomem:
	if (tx) {
		kfree(tx->hdrs);
		kvfree(tx->data);
	}
	kfree(tx);
	krc_ah_put(ah);
	return -ENOMEM;
}

/* A VQ joins or leaves the datagram path of its peer. */
void krc_dg_vq_join(struct krc_vqueue *vq)
{
	atomic_inc(&vq->peer->dgtx->nvqs);
	vq->dgram = true;
	krc_event(KRC_EV_DG_VQS_JOINED);
}

void krc_dg_vq_leave(struct krc_vqueue *vq)
{
	if (!vq->dgram)
		return;
	atomic_dec(&vq->peer->dgtx->nvqs);
	vq->dgram = false;
}

u32 krc_dg_vqs(struct krc_peer *peer)
{
	struct krc_dg_tx *tx = READ_ONCE(peer->dgtx);

	return tx ? atomic_read(&tx->nvqs) : 0;
}

u64 krc_dg_requests(struct krc_peer *peer)
{
	struct krc_dg_tx *tx = READ_ONCE(peer->dgtx);

	return tx ? atomic64_read(&tx->requests) : 0;
}
