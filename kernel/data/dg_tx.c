// SPDX-License-Identifier: GPL-2.0
/*
 * dg_tx.c - the requester of the datagram transport (dgram.c has the
 * overview): one ordered stream per peer (struct krc_dg_tx).
 *
 * A request is cut into segments of one datagram each; a WRITE or SEND
 * payload is gathered by the NIC straight from the caller's registered
 * memory (its lkeys, the PD is the node's). Each VQ with requests waiting
 * takes turns of KRC_DG_QUANTUM datagrams.
 *
 * This file: a peer's stream made, requests queued, cut and sent, and
 * the repeat timeout, from the measured round trip. What comes back
 * (replies, NAKs, or nothing) is dg_ack.c's: repeats and completions.
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
void krc_dg_xmit(struct krc_dg_tx *tx, u32 i)
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
unsigned long krc_dg_rto(struct krc_dg_tx *tx)
{
	u64 floor_us = (u64)max(krc_param_dg_rto_ms, 1U) * 1000;
	u64 us = max_t(u64, floor_us, (u64)tx->srtt_us + 4ULL * tx->rttvar_us);

	us = min_t(u64, us << min(tx->tries, 5U), 40 * floor_us);
	return usecs_to_jiffies(us) + 1;
}

/* A first transmission's round trip (never a repeat's: Karn). */
void krc_dg_rtt_sample(struct krc_dg_tx *tx, const struct krc_dg_ent *e)
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

void krc_dg_arm(struct krc_dg_tx *tx)
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
void krc_dg_pump(struct krc_dg_tx *tx)
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

/* The stream to @peer, made on first use. Process context. */
int krc_dg_open(struct krc_peer *peer)
{
	struct ib_device *ibdev = krc_dg_ibdev();
	struct krc_dg_tx *tx;
	struct krc_ah *ah;
	u32 qpn, qkey;

	tx = READ_ONCE(peer->dgtx);
	if (tx) {
		krc_dg_retarget_stale(tx);
		return 0;
	}
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
