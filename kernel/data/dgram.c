// SPDX-License-Identifier: GPL-2.0
/*
 * dgram.c - the datagram transport of VQs (common/dgram.h has the wire
 * format and the protocol rules).
 *
 * A VQ that connects to a peer with no ready pooled RC connection is
 * served at once: its requests travel as datagrams over the nodes'
 * control UD QPs, in one ordered stream per peer (struct krc_dg_tx), and
 * the peer's kernel executes them (struct krc_dg_rx) and answers.
 *
 * Requester: a request is cut into segments of one datagram each; a WRITE
 * or SEND payload is gathered by the NIC straight from the caller's
 * registered memory (its lkeys, the PD is the node's). Replies may come
 * in any order; the stream retires them in order (a work item on krcore's
 * workqueue) and copies READ data and atomic results into the caller's
 * registration (the range passed the request check, so it lies inside a
 * registration of the caller's with LOCAL_WRITE, whose pages krcore
 * pinned: the copy never goes through the process's mapping), then
 * completes the VQ's request. Unanswered datagrams are repeated from the
 * oldest (go-back-N) with exponential backoff; a peer that answers none
 * of dg_retries repeats fails every outstanding request of the stream
 * with KRCORE_WC_RETRY_EXC_ERR.
 *
 * Responder: a datagram is taken only from the control QP of a node whose
 * card we hold, or whose card the MetaServer holds (one READ, once); in
 * stream order only; its rkey must name memory a process of this node
 * registered through krcore with the access the opcode needs, the range
 * inside it (checked against the kernel's own table), and the request is
 * then executed by the RNIC on the node's executor QP, a kernel-owned RC
 * QP connected to itself: keys, bounds and access are enforced by the
 * hardware too, and atomics stay RNIC atomics. Replies are sent in stream
 * order and cached until the window has passed them, so a repeat is
 * answered without executing anything twice.
 */
#include <linux/jiffies.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "krcore.h"
#include "dgram.h"

#define KRC_DG_W	KRC_DG_WINDOW
/* Datagrams one VQ sends in a row before the next VQ's turn. */
#define KRC_DG_QUANTUM	8
/*
 * Buffers are sized for the port's MTU: a responder slot holds the reply
 * header, then one datagram's payload (either way); a requester keeps one
 * reply payload per window entry. About 2 x 64 KiB per peer with a
 * 1024-byte MTU, made when a stream is first used.
 */

/* Requester: one outstanding datagram. */
struct krc_dg_ent {
	u64 cookie;			/* the VQ request's */
	struct krc_vqueue *vq;
	u16 slot;
	u8 opcode;
	bool last;			/* the request's last segment */
	bool used;
	bool replied;
	u32 seq;
	u32 off;			/* of the segment in the request */
	u32 len;
	u32 status;
	u32 data_len;			/* reply payload, in data[] */
	u32 xmits;			/* transmissions */
	unsigned long sent;		/* jiffies of the last transmission */
	u64 sent_ns;
};

struct krc_dg_tx {
	struct ib_cqe cqe;		/* send completions */
	spinlock_t lock;
	struct krc_peer *peer;		/* its owner */
	u64 stream;
	u64 dst_incarnation;
	u32 head;			/* oldest outstanding seq */
	u32 tail;			/* next seq */
	u32 seg;			/* payload bytes per datagram */
	u32 tries;			/* repeats of the oldest */
	u32 srtt_us;			/* smoothed round trip (RFC 6298) */
	u32 rttvar_us;
	bool failing;			/* every entry failed: reset when drained */
	bool stopping;
	struct krc_ah *ah;		/* to the peer's control QP ... */
	u32 qpn;
	u32 qkey;
	struct krc_ah *old_ah;		/* ... and the one before a reload */
	atomic_t tx_posted;
	atomic_t nvqs;			/* VQs on the datagram path */
	atomic64_t requests;		/* VQ requests sent (RC policy) */
	/*
	 * Requests not (all) sent yet, each VQ's in its own queue
	 * (vq->dg_queue, in order); the VQs with some, in turn (vq->dg_active
	 * on this list): each turn sends at most KRC_DG_QUANTUM datagrams, so
	 * no VQ waits behind another's backlog. A READ or WRITE may be cut
	 * between turns; a SEND or WRITE_IMM never is (the responder puts a
	 * SEND together, and delivers a WRITE_IMM's immediate after its
	 * other segments, in stream order).
	 */
	struct list_head active;
	u32 turn;			/* datagrams sent in the current turn */
	u32 queued;			/* requests queued, at most dg_backlog */
	struct list_head failed;	/* requests failed before being sent */
	struct krc_dg_ent ent[KRC_DG_W];
	u8 *hdrs;			/* KRC_DG_W headers, DMA-mapped */
	u64 hdrs_dma;
	u8 *data;			/* KRC_DG_W reply payloads */
	struct delayed_work rto_work;
	struct work_struct done_work;
	wait_queue_head_t wq;
};

/* Responder: one datagram of a peer's stream, executed or executing. */
enum krc_dg_rstate {
	KRC_DG_R_FREE,
	KRC_DG_R_EXEC,			/* on the executor QP */
	KRC_DG_R_READY,			/* result known, reply not sent yet */
	KRC_DG_R_DONE,			/* replied (cached for repeats) */
};

struct krc_dg_rent {
	u8 state;
	u8 opcode;
	u8 flags;
	u32 seq;
	u32 status;
	u32 len;			/* reply payload */
	struct krc_data_hdr mhdr;	/* a message to deliver at retirement */
	u32 mlen;
	void *msg;			/* its data (kmalloc'ed, multi-segment) */
	bool deliver;
	struct krc_umr *mr;		/* held while executing */
	bool last;			/* its request's last segment */
};

struct krc_dg_rx {
	struct ib_cqe cqe;		/* reply send completions */
	spinlock_t lock;
	struct krc_peer *peer;
	u64 stream;
	u32 expected;			/* next seq to execute */
	u32 nak_seq;			/* the last NAK asked for this one */
	bool nak_sent;
	u32 retire;			/* next seq to reply to, in order */
	u32 wimm_err;			/* a segment of this WRITE_IMM failed */
	bool started;
	struct krc_dg_rent ent[KRC_DG_W];
	u8 *buf;			/* KRC_DG_W slots, DMA-mapped */
	u64 buf_dma;
	u8 *asm_buf;			/* a multi-segment SEND being assembled */
	u32 asm_len;
	struct krc_ah *ah;		/* to the peer's control QP ... */
	u32 qpn;
	u32 qkey;
	struct krc_ah *old_ah;		/* ... and the one before a reload */
	u32 seg;			/* payload bytes a datagram may carry */
	u32 slot;			/* bytes of a slot of buf */
	atomic_t tx_posted;
	atomic_t exec;			/* on the executor QP */
};

static struct ib_device *krc_dg_ibdev(void)
{
	return krc_node.dev->ibdev;
}

static u32 krc_dg_lkey(void)
{
	return krc_node.dev->pd->local_dma_lkey;
}

/* Requests on every peer's executor QP (its send queue's room). */
static atomic_t krc_dg_execs = ATOMIC_INIT(0);

static u32 krc_dg_exec_cap(void)
{
	struct ib_device *ibdev = krc_dg_ibdev();

	return min_t(u32, krc_param_qp_depth, ibdev->attrs.max_qp_wr);
}

/* Does a request of @op run on the executor QP (not a SEND)? */
static bool krc_dg_op_executes(u8 op)
{
	return op != KRCORE_WR_SEND && op != KRCORE_WR_SEND_IMM;
}

/* The payload of one datagram between us and a node of @card. */
static u32 krc_dg_seg_for(const struct krcore_card *card)
{
	enum ib_mtu mtu = krc_node.port->active_mtu;
	u32 bytes;

	if (card->active_mtu >= IB_MTU_256 && card->active_mtu <= IB_MTU_4096)
		mtu = min_t(enum ib_mtu, mtu, card->active_mtu);
	bytes = ib_mtu_enum_to_int(mtu);
	if (bytes <= KRC_DG_HDR_SIZE)
		bytes = 256;
	return min_t(u32, bytes - KRC_DG_HDR_SIZE, KRC_DG_MAX_PAYLOAD);
}

/*
 * The peer reloaded (a new control QP): aim at it from now on. Sends
 * still posted may use the old address handle: it is kept until the
 * next change or the end. Process context; returns the handle to put,
 * if any, once @lock is dropped.
 */
static struct krc_ah *krc_dg_readdress(struct krc_peer *peer, spinlock_t *lock,
				       struct krc_ah **ahp, struct krc_ah **oldp,
				       u32 *qpnp, u32 *qkeyp)
{
	struct krc_ah *ah, *put = NULL;
	unsigned long flags;
	u32 qpn, qkey;

	ah = krc_peer_ah_get(peer, &qpn, &qkey);
	if (IS_ERR(ah))
		return NULL;
	spin_lock_irqsave(lock, flags);
	if (*qpnp == qpn && *ahp == ah) {
		put = ah;	/* nothing changed */
	} else {
		/*
		 * The one before the last change: a send posted that long
		 * ago has completed (rxe copies the address at post time).
		 */
		put = *oldp;
		*oldp = *ahp;
		*ahp = ah;
		*qpnp = qpn;
		*qkeyp = qkey;
		krc_event(KRC_EV_DG_READDRESSED);
	}
	spin_unlock_irqrestore(lock, flags);
	return put;
}

/* ---------------------------------------------------------------- */
/* Requester                                                         */

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
 * Send the checked, reserved requests @slots[0..@n) of @vq (its lock held)
 * on the stream to its peer, behind what is already waiting. Returns how
 * many were taken (all, unless the stream is being reset: *reason).
 */
int krc_dg_push(struct krc_vqueue *vq, const u16 *slots, int n, u32 *reason)
{
	struct krc_dg_tx *tx = vq->peer->dgtx;
	unsigned long flags;
	int i;

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

		s->dg_vq = vq;
		s->dg_off = 0;
		s->dg_err = 0;
		s->dg_inflight = 0;
		s->dg_last_seq = 0;
		list_add_tail(&s->dg_node, &vq->dg_queue);
	}
	tx->queued += n;
	if (n && list_empty(&vq->dg_active))
		list_add_tail(&vq->dg_active, &tx->active);
	atomic64_add(n, &tx->requests);
	krc_dg_pump(tx);
	spin_unlock_irqrestore(&tx->lock, flags);
	krc_send_now();
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

static void krc_dg_kick_done(struct krc_dg_tx *tx)
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
static void krc_dg_fail_all(struct krc_dg_tx *tx, u32 status)
{
	struct krc_vqueue *vq, *tmp;
	u32 s;

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
static void krc_dg_on_rep(struct krc_peer *peer, const struct krc_dg_hdr *h,
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

/* ---------------------------------------------------------------- */
/* Responder                                                         */

static void krc_dg_rx_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_dg_rx *rx = container_of(wc->wr_cqe, struct krc_dg_rx,
					    cqe);

	krc_ctrl_ud_done(cq);
	atomic_dec(&rx->tx_posted);
}

/* Send the reply cached in slot @i. rx->lock held; any context. */
static void krc_dg_reply(struct krc_dg_rx *rx, u32 i)
{
	struct krc_dg_rent *r = &rx->ent[i];
	struct krc_dg_hdr h = {
		.type = KRC_DG_REP,
		.opcode = r->opcode,
		.flags = r->flags & KRC_DG_F_STALE,
		.seq = r->seq,
		.len = r->len,
		.stream = rx->stream,
		.dst_incarnation = krc_incarnation,
		.status = r->status,
	};
	u8 *slot = rx->buf + (size_t)i * rx->slot;
	struct ib_ud_wr wr = {};
	struct ib_sge sge;

	krc_dg_encode(&h, slot);
	ib_dma_sync_single_for_device(krc_dg_ibdev(),
				      rx->buf_dma + (size_t)i * rx->slot,
				      KRC_DG_HDR_SIZE + r->len,
				      DMA_BIDIRECTIONAL);
	sge.addr = rx->buf_dma + (size_t)i * rx->slot;
	sge.length = KRC_DG_HDR_SIZE + r->len;
	sge.lkey = krc_dg_lkey();
	wr.wr.wr_cqe = &rx->cqe;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.ah = rx->ah->ah;
	wr.remote_qpn = rx->qpn;
	wr.remote_qkey = rx->qkey;
	atomic_inc(&rx->tx_posted);
	if (krc_ctrl_post_ud(&wr)) {
		atomic_dec(&rx->tx_posted);
		krc_event(KRC_EV_DG_TX_FULL);
		return;
	}
	krc_event(KRC_EV_DG_REP_SENT);
}

/*
 * Ask the requester to send again from rx->expected. The header goes in
 * the slot of the datagram expected (its last use is answered, its new
 * one not executed yet). rx->lock held.
 */
static void krc_dg_nak(struct krc_dg_rx *rx, u8 opcode)
{
	u32 i = rx->expected % KRC_DG_W;
	struct krc_dg_hdr h = {
		.type = KRC_DG_REP,
		.opcode = opcode,
		.flags = KRC_DG_F_NAK,
		.seq = rx->expected,
		.stream = rx->stream,
		.dst_incarnation = krc_incarnation,
	};
	struct ib_ud_wr wr = {};
	struct ib_sge sge;

	if (rx->ent[i].state == KRC_DG_R_EXEC ||
	    rx->ent[i].state == KRC_DG_R_READY)
		return;
	/* The slot's cached reply goes; a repeat of it is too old by now. */
	rx->ent[i].state = KRC_DG_R_FREE;
	krc_dg_encode(&h, rx->buf + (size_t)i * rx->slot);
	ib_dma_sync_single_for_device(krc_dg_ibdev(),
				      rx->buf_dma + (size_t)i * rx->slot,
				      KRC_DG_HDR_SIZE, DMA_BIDIRECTIONAL);
	sge.addr = rx->buf_dma + (size_t)i * rx->slot;
	sge.length = KRC_DG_HDR_SIZE;
	sge.lkey = krc_dg_lkey();
	wr.wr.wr_cqe = &rx->cqe;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.ah = rx->ah->ah;
	wr.remote_qpn = rx->qpn;
	wr.remote_qkey = rx->qkey;
	atomic_inc(&rx->tx_posted);
	if (krc_ctrl_post_ud(&wr)) {
		atomic_dec(&rx->tx_posted);
		return;
	}
	krc_event(KRC_EV_DG_NAK_SENT);
}

/*
 * Reply to what is ready, in stream order, delivering messages on the
 * way. rx->lock held; any context.
 */
static void krc_dg_retire(struct krc_dg_rx *rx)
{
	while (rx->retire != rx->expected) {
		u32 i = rx->retire % KRC_DG_W;
		struct krc_dg_rent *r = &rx->ent[i];

		if (r->state != KRC_DG_R_READY)
			break;
		/*
		 * A WRITE_IMM's segments come in a row (the requester never
		 * cuts one): if one failed, the rest fail with it and the
		 * immediate is not delivered, as on RC.
		 */
		if (r->opcode == KRCORE_WR_WRITE_IMM) {
			if (r->status != KRCORE_WC_SUCCESS && !rx->wimm_err)
				rx->wimm_err = r->status;
			else if (r->status == KRCORE_WC_SUCCESS && rx->wimm_err)
				r->status = rx->wimm_err;
			if (r->last)
				rx->wimm_err = 0;
		} else {
			rx->wimm_err = 0;
		}
		if (r->deliver && r->status == KRCORE_WC_SUCCESS) {
			const void *data = r->msg ? r->msg :
				rx->buf + (size_t)i * rx->slot +
				KRC_DG_HDR_SIZE;

			krc_recv_deliver_port(rx->peer->gid, r->opcode,
					      &r->mhdr,
					      r->opcode == KRCORE_WR_WRITE_IMM ?
					      NULL : data, r->mlen);
		}
		kfree(r->msg);
		r->msg = NULL;
		r->deliver = false;
		r->len = krc_dg_op_returns_data(r->opcode) &&
			 r->status == KRCORE_WC_SUCCESS ? r->len : 0;
		r->state = KRC_DG_R_DONE;
		krc_dg_reply(rx, i);
		rx->retire++;
	}
}

/* The executor QP finished one request (its CQ's context). */
static void krc_dg_exec_done(struct krc_kop *kop)
{
	struct krc_dg_rx *rx = kop->ctx;
	struct krc_peer *peer = rx->peer;
	struct krc_dg_rent *r = &rx->ent[kop->idx];
	unsigned long flags;

	spin_lock_irqsave(&rx->lock, flags);
	if (r->state == KRC_DG_R_EXEC && r->seq == kop->seq) {
		if (kop->status == IB_WC_SUCCESS)
			r->status = KRCORE_WC_SUCCESS;
		else if (kop->status == IB_WC_WR_FLUSH_ERR)
			r->status = KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
		else
			r->status = kop->status;
		if (r->mr)
			krc_mr_put_inflight(r->mr);
		r->mr = NULL;
		ib_dma_sync_single_for_cpu(krc_dg_ibdev(), rx->buf_dma +
					   (size_t)kop->idx * rx->slot,
					   rx->slot, DMA_BIDIRECTIONAL);
		r->state = KRC_DG_R_READY;
		krc_dg_retire(rx);
	}
	spin_unlock_irqrestore(&rx->lock, flags);
	/*
	 * No krc_send_now() here: this runs in the executor CQ's handler
	 * with its lock held and interrupts off; the replies go out at the
	 * next softirq (this one, mostly).
	 */
	atomic_dec(&krc_dg_execs);
	atomic_dec(&rx->exec);
	krc_peer_put(peer);
}

/* The access a remote request needs of the memory it names. */
static u32 krc_dg_access(u8 op)
{
	switch (op) {
	case KRCORE_WR_READ:
		return KRCORE_ACCESS_REMOTE_READ;
	case KRCORE_WR_WRITE:
	case KRCORE_WR_WRITE_IMM:
		return KRCORE_ACCESS_REMOTE_WRITE;
	default:
		return KRCORE_ACCESS_REMOTE_ATOMIC;
	}
}

/*
 * Fault injection (fault_dg_exec_delay_ms): the executor as a slow RNIC
 * would be, its requests posted only that long after they were taken,
 * all at once. A post its queue has no room for fails the request
 * (flushed: NOT_EXECUTED_OR_UNKNOWN), as it would on a node without the
 * admission above.
 */
struct krc_dg_later {
	struct list_head node;
	struct krc_conn *exec;
	struct krc_kop *kop;
	union krc_ib_wr w;
	struct ib_sge sge;
};

static LIST_HEAD(krc_dg_later_list);
static DEFINE_SPINLOCK(krc_dg_later_lock);

static void krc_dg_later_work_fn(struct work_struct *work)
{
	struct krc_dg_later *d, *tmp;
	LIST_HEAD(todo);

	spin_lock_bh(&krc_dg_later_lock);
	list_splice_init(&krc_dg_later_list, &todo);
	spin_unlock_bh(&krc_dg_later_lock);
	list_for_each_entry_safe(d, tmp, &todo, node) {
		d->w.send.sg_list = &d->sge;
		if (krc_conn_post_kop(d->exec, d->kop, &d->w.send)) {
			d->kop->status = IB_WC_WR_FLUSH_ERR;
			d->kop->done_fn(d->kop);
		}
		krc_conn_put(d->exec);
		krc_kop_put(d->kop);
		kfree(d);
	}
	krc_send_now();
}

static DECLARE_DELAYED_WORK(krc_dg_later_work, krc_dg_later_work_fn);

static int krc_dg_exec_later(struct krc_conn *exec, struct krc_kop *kop,
			     const union krc_ib_wr *w, const struct ib_sge *sge)
{
	struct krc_dg_later *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return -ENOMEM;
	kref_get(&exec->ref);
	refcount_inc(&kop->ref);
	d->exec = exec;
	d->kop = kop;
	d->w = *w;
	d->sge = *sge;
	spin_lock_bh(&krc_dg_later_lock);
	list_add_tail(&d->node, &krc_dg_later_list);
	spin_unlock_bh(&krc_dg_later_lock);
	queue_delayed_work(krc_wq, &krc_dg_later_work,
			   msecs_to_jiffies(READ_ONCE(krc_fault_dg_exec_delay_ms)));
	return 0;
}

/* The node stops: what the fault held is posted (and flushed) now. */
void krc_dg_exit(void)
{
	mod_delayed_work(krc_wq, &krc_dg_later_work, 0);
	flush_delayed_work(&krc_dg_later_work);
}

/*
 * Execute request @h (slot @i, payload already in the slot) on the
 * executor QP. Returns 0 (it completes in krc_dg_exec_done) or the
 * status it completes with at once. Process context, rx->lock not held.
 */
static u32 krc_dg_exec(struct krc_dg_rx *rx, u32 i, const struct krc_dg_hdr *h)
{
	u64 data_dma = rx->buf_dma + (size_t)i * rx->slot + KRC_DG_HDR_SIZE;
	struct krc_dg_rent *r = &rx->ent[i];
	union krc_ib_wr w = {};
	struct krc_conn *exec;
	struct krc_kop *kop;
	struct krc_umr *mr;
	struct ib_sge sge;
	int ret;

	/*
	 * The whole request's range (the header names it, the decoder put
	 * this segment inside it): a request is refused all of it or none,
	 * as an RDMA responder refuses one at its first packet.
	 */
	if (h->opcode == KRCORE_WR_READ || h->opcode == KRCORE_WR_WRITE ||
	    h->opcode == KRCORE_WR_WRITE_IMM)
		mr = krc_mr_remote_get(h->rkey, h->swap, h->compare_add,
				       krc_dg_access(h->opcode));
	else
		mr = krc_mr_remote_get(h->rkey, h->remote_addr, h->len,
				       krc_dg_access(h->opcode));
	if (!mr) {
		krc_event(KRC_EV_DG_RKEY_REFUSED);
		return KRCORE_WC_REM_ACCESS_ERR;
	}
	exec = krc_node_exec_conn();
	if (IS_ERR(exec)) {
		krc_mr_put_inflight(mr);
		return KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
	}
	kop = krc_kop_alloc(krc_dg_ibdev(), 0, DMA_NONE);
	if (!kop) {
		krc_conn_put(exec);
		krc_mr_put_inflight(mr);
		return KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
	}
	kop->done_fn = krc_dg_exec_done;
	kop->ctx = rx;
	kop->idx = i;
	kop->seq = h->seq;
	r->mr = mr;
	sge.addr = data_dma;
	sge.length = h->len;
	sge.lkey = krc_dg_lkey();
	w.send.sg_list = &sge;
	w.send.num_sge = 1;
	switch (h->opcode) {
	case KRCORE_WR_READ:
		w.send.opcode = IB_WR_RDMA_READ;
		break;
	case KRCORE_WR_WRITE:
	case KRCORE_WR_WRITE_IMM:
		w.send.opcode = IB_WR_RDMA_WRITE;
		break;
	case KRCORE_WR_ATOMIC_CAS:
		w.send.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
		w.atomic.compare_add = h->compare_add;
		w.atomic.swap = h->swap;
		break;
	default:
		w.send.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		w.atomic.compare_add = h->compare_add;
		break;
	}
	if (h->opcode == KRCORE_WR_ATOMIC_CAS ||
	    h->opcode == KRCORE_WR_ATOMIC_FAA) {
		w.atomic.remote_addr = h->remote_addr;
		w.atomic.rkey = h->rkey;
	} else {
		w.rdma.remote_addr = h->remote_addr;
		w.rdma.rkey = h->rkey;
	}
	kref_get(&rx->peer->ref);
	atomic_inc(&rx->exec);
	atomic_inc(&krc_dg_execs);
	ib_dma_sync_single_for_device(krc_dg_ibdev(), data_dma, h->len,
				      DMA_BIDIRECTIONAL);
	if (READ_ONCE(krc_fault_dg_exec_delay_ms) > 0)
		ret = krc_dg_exec_later(exec, kop, &w, &sge);
	else
		ret = krc_conn_post_kop(exec, kop, &w.send);
	krc_conn_put(exec);
	krc_kop_put(kop);
	if (ret) {
		atomic_dec(&krc_dg_execs);
		atomic_dec(&rx->exec);
		krc_peer_put(rx->peer);
		r->mr = NULL;
		krc_mr_put_inflight(mr);
		return KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
	}
	krc_event(KRC_EV_DG_EXECUTED);
	krc_send_now();
	return 0;
}

static int krc_dg_rx_open(struct krc_peer *peer)
{
	struct ib_device *ibdev = krc_dg_ibdev();
	struct krc_dg_rx *rx;
	struct krc_ah *ah;
	u32 qpn, qkey;

	if (READ_ONCE(peer->dgrx))
		return 0;
	ah = krc_peer_ah_get(peer, &qpn, &qkey);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	rx = kzalloc(sizeof(*rx), GFP_KERNEL);
	if (!rx)
		goto nomem;
	/* Nothing longer than our port's MTU reaches us. */
	rx->seg = krc_dg_seg_for(&krc_node.card);
	rx->slot = KRC_DG_HDR_SIZE + rx->seg;
	rx->buf = kvzalloc((size_t)KRC_DG_W * rx->slot, GFP_KERNEL);
	if (!rx->buf)
		goto nomem;
	rx->buf_dma = ib_dma_map_single(ibdev, rx->buf,
					(size_t)KRC_DG_W * rx->slot,
					DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, rx->buf_dma))
		goto nomem;
	spin_lock_init(&rx->lock);
	rx->cqe.done = krc_dg_rx_tx_done;
	rx->peer = peer;
	rx->ah = ah;
	rx->qpn = qpn;
	rx->qkey = qkey;
	peer->dgrx = rx;	/* only ctrl.c's one receive context sets it */
	return 0;
nomem:
	if (rx)
		kvfree(rx->buf);
	kfree(rx);
	krc_ah_put(ah);
	return -ENOMEM;
}

/*
 * A new request of @peer's stream: take its payload, check it, start
 * executing it. Process context (ctrl.c), rx->lock not held.
 */
static void krc_dg_on_next(struct krc_dg_rx *rx, const struct krc_dg_hdr *h,
			   const u8 *payload)
{
	u32 i = h->seq % KRC_DG_W;
	struct krc_dg_rent *r = &rx->ent[i];
	u8 *data = rx->buf + (size_t)i * rx->slot + KRC_DG_HDR_SIZE;
	bool send = h->opcode == KRCORE_WR_SEND ||
		    h->opcode == KRCORE_WR_SEND_IMM;
	unsigned long flags;
	u32 status = 0;

	spin_lock_irqsave(&rx->lock, flags);
	kfree(r->msg);
	memset(r, 0, sizeof(*r));
	r->seq = h->seq;
	r->opcode = h->opcode;
	r->state = KRC_DG_R_EXEC;
	r->len = h->len;
	r->last = h->flags & KRC_DG_F_LAST;
	rx->expected++;
	spin_unlock_irqrestore(&rx->lock, flags);

	if (krc_dg_op_has_payload(h->opcode) && h->len)
		memcpy(data, payload, h->len);
	r->mhdr.dst_port = h->dst_port;
	r->mhdr.src_port = h->src_port;
	r->mhdr.imm_data = h->imm_data;
	if (send) {
		/* Segments come in order: put the message together. */
		if (h->remote_addr == 0 && (h->flags & KRC_DG_F_LAST)) {
			r->mlen = h->len;
		} else {
			if (h->remote_addr == 0) {
				kfree(rx->asm_buf);
				rx->asm_buf = kmalloc(KRCORE_MAX_SEND, GFP_KERNEL);
				rx->asm_len = 0;
			}
			if (!rx->asm_buf || h->remote_addr != rx->asm_len ||
			    h->len > KRCORE_MAX_SEND - rx->asm_len) {
				status = KRCORE_WC_REM_INV_REQ_ERR;
			} else {
				memcpy(rx->asm_buf + rx->asm_len, payload,
				       h->len);
				rx->asm_len += h->len;
			}
			if (!status && (h->flags & KRC_DG_F_LAST)) {
				r->msg = rx->asm_buf;
				r->mlen = rx->asm_len;
				rx->asm_buf = NULL;
			}
		}
		r->deliver = !status && (h->flags & KRC_DG_F_LAST);
		r->mhdr.flags = h->opcode == KRCORE_WR_SEND_IMM ?
				KRCORE_MSG_F_IMM : 0;
		r->status = status;
		r->len = 0;
		status = status ? status : KRCORE_WC_SUCCESS;
		goto ready;
	}
	if (h->opcode == KRCORE_WR_WRITE_IMM && (h->flags & KRC_DG_F_LAST)) {
		r->deliver = true;
		r->mhdr.flags = KRCORE_MSG_F_IMM;
		r->mhdr.imm_data = h->imm_data & 0xffff;
		r->mlen = min_t(u64, h->compare_add, KRCORE_MAX_MSG);
	}
	status = krc_dg_exec(rx, i, h);
	if (!status)
		return;
ready:
	spin_lock_irqsave(&rx->lock, flags);
	r->status = status;
	r->state = KRC_DG_R_READY;
	krc_dg_retire(rx);
	spin_unlock_irqrestore(&rx->lock, flags);
	krc_send_now();
}

/*
 * Streams that ran here, remembered beyond their peer entry: a datagram
 * of one of them that comes again late (after the requester moved to a
 * new stream, or after this node dropped and re-made the peer's entry)
 * would otherwise start it anew and execute its first requests twice.
 * A requester repeats a datagram for at most (dg_retries + 1) x 40 x
 * dg_rto_ms (14 s by default); a stream is remembered KRC_DG_GRAVE_MS,
 * the last KRC_DG_GRAVES of them.
 */
#define KRC_DG_GRAVES		1024
#define KRC_DG_GRAVE_MS		60000

struct krc_dg_grave {
	u8 gid[16];
	u64 stream;
	unsigned long at;		/* jiffies; 0: free */
};

static struct krc_dg_grave krc_dg_graves[KRC_DG_GRAVES];
static u32 krc_dg_grave_next;
static DEFINE_SPINLOCK(krc_dg_grave_lock);

static void krc_dg_bury(const u8 gid[16], u64 stream)
{
	struct krc_dg_grave *g;
	unsigned long flags;

	spin_lock_irqsave(&krc_dg_grave_lock, flags);
	g = &krc_dg_graves[krc_dg_grave_next++ % KRC_DG_GRAVES];
	memcpy(g->gid, gid, 16);
	g->stream = stream;
	g->at = jiffies | 1;
	spin_unlock_irqrestore(&krc_dg_grave_lock, flags);
}

static bool krc_dg_buried(const u8 gid[16], u64 stream)
{
	unsigned long flags, old = msecs_to_jiffies(KRC_DG_GRAVE_MS);
	bool found = false;
	u32 i;

	spin_lock_irqsave(&krc_dg_grave_lock, flags);
	for (i = 0; i < KRC_DG_GRAVES && !found; i++) {
		struct krc_dg_grave *g = &krc_dg_graves[i];

		found = g->at && g->stream == stream &&
			time_before(jiffies, g->at + old) &&
			!memcmp(g->gid, gid, 16);
	}
	spin_unlock_irqrestore(&krc_dg_grave_lock, flags);
	return found;
}

static void krc_dg_on_req(struct krc_peer *peer, u32 src_qp,
			  const struct krc_dg_hdr *h, const u8 *payload)
{
	struct krc_dg_rx *rx;
	unsigned long flags;
	u32 i;

	krc_event(KRC_EV_DG_REQ_RECV);
	if (krc_dg_rx_open(peer)) {
		krc_event(KRC_EV_DG_RX_DROPPED);
		return;
	}
	rx = peer->dgrx;
	if (READ_ONCE(rx->qpn) != src_qp)
		krc_ah_put(krc_dg_readdress(peer, &rx->lock, &rx->ah,
					    &rx->old_ah, &rx->qpn, &rx->qkey));
	if (h->len > rx->seg) {
		krc_event(KRC_EV_DG_RX_BAD);
		return;
	}
	spin_lock_irqsave(&rx->lock, flags);
	if (!rx->started || h->stream != rx->stream) {
		/*
		 * A stream that ran here before (its datagrams repeated
		 * late, after a newer stream or a new peer entry): never
		 * again, whatever its sequence number.
		 */
		if (krc_dg_buried(peer->gid, h->stream)) {
			spin_unlock_irqrestore(&rx->lock, flags);
			krc_event(KRC_EV_DG_OLD_STREAM);
			return;
		}
		/* A new stream starts at 0 and only once the old one is quiet. */
		if (h->seq != 0 || rx->retire != rx->expected) {
			struct krc_dg_rent *r = &rx->ent[rx->retire % KRC_DG_W];

			if (rx->retire != rx->expected)
				pr_info_ratelimited("krcore: a new datagram stream waits for the old one: seq %u of %u, state %u, op %u\n",
						    rx->retire, rx->expected,
						    r->state, r->opcode);
			spin_unlock_irqrestore(&rx->lock, flags);
			krc_event(KRC_EV_DG_RX_NEW_STREAM_WAIT);
			return;
		}
		if (rx->started)
			krc_dg_bury(peer->gid, rx->stream);
		rx->started = true;
		rx->nak_sent = false;
		rx->wimm_err = 0;
		rx->stream = h->stream;
		rx->expected = 0;
		rx->retire = 0;
		for (i = 0; i < KRC_DG_W; i++) {
			kfree(rx->ent[i].msg);
			rx->ent[i].msg = NULL;
			rx->ent[i].state = KRC_DG_R_FREE;
		}
		kfree(rx->asm_buf);
		rx->asm_buf = NULL;
	}
	i = h->seq % KRC_DG_W;
	switch (krc_dg_seq_classify(rx->expected, h->seq)) {
	case KRC_DG_SEQ_NEXT:
		break;
	case KRC_DG_SEQ_DUP:
		/* Answered from the cache, never executed again. */
		krc_event(KRC_EV_DG_DUPS);
		if (rx->ent[i].state == KRC_DG_R_DONE &&
		    rx->ent[i].seq == h->seq)
			krc_dg_reply(rx, i);
		else
			krc_event(KRC_EV_DG_DUP_PENDING);
		if (rx->ent[i].state != KRC_DG_R_DONE &&
		    rx->retire != rx->expected)
			pr_info_ratelimited("krcore: datagram %u repeated, not answered yet (slot %u seq %u state %u; oldest unanswered %u state %u, next %u)\n",
					    h->seq, i, rx->ent[i].seq,
					    rx->ent[i].state, rx->retire,
					    rx->ent[rx->retire % KRC_DG_W].state,
					    rx->expected);
		spin_unlock_irqrestore(&rx->lock, flags);
		krc_send_now();
		return;
	case KRC_DG_SEQ_AHEAD:
		/* One lost: ask for it again now, once per gap. */
		krc_event(KRC_EV_DG_RX_OUT_OF_ORDER);
		if (!rx->nak_sent || rx->nak_seq != rx->expected) {
			rx->nak_sent = true;
			rx->nak_seq = rx->expected;
			krc_dg_nak(rx, h->opcode);
		}
		spin_unlock_irqrestore(&rx->lock, flags);
		krc_send_now();
		return;
	default:
		spin_unlock_irqrestore(&rx->lock, flags);
		krc_event(KRC_EV_DG_RX_OUT_OF_ORDER);
		return;
	}
	if (rx->ent[i].state == KRC_DG_R_EXEC ||
	    rx->ent[i].state == KRC_DG_R_READY) {
		/* The slot's last use is not answered yet: later. */
		spin_unlock_irqrestore(&rx->lock, flags);
		krc_event(KRC_EV_DG_RX_SLOT_BUSY);
		return;
	}
	/*
	 * The executor QP is every peer's: a request that needs it waits
	 * (dropped, repeated by its sender) while it is full, rather than
	 * failing there (dg_exec_busy).
	 */
	if (krc_dg_op_executes(h->opcode) &&
	    atomic_read(&krc_dg_execs) >= krc_dg_exec_cap()) {
		spin_unlock_irqrestore(&rx->lock, flags);
		krc_event(KRC_EV_DG_EXEC_BUSY);
		return;
	}
	if (h->dst_incarnation != krc_incarnation) {
		/* Meant for a previous life of this node: say so, once. */
		struct krc_dg_rent *r = &rx->ent[i];

		memset(r, 0, sizeof(*r));
		r->seq = h->seq;
		r->opcode = h->opcode;
		r->flags = KRC_DG_F_STALE;
		r->status = KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
		r->state = KRC_DG_R_READY;
		rx->expected++;
		krc_dg_retire(rx);
		spin_unlock_irqrestore(&rx->lock, flags);
		krc_send_now();
		return;
	}
	spin_unlock_irqrestore(&rx->lock, flags);
	krc_dg_on_next(rx, h, payload);
}

/*
 * Which known node sent this datagram? Its source (GID in the GRH, QPN)
 * must be the control QP of the card we hold for that GID, or of the card
 * the MetaServer holds (one READ, then cached; source.c bounds what such
 * READs cost). Returns the peer, ERR_PTR(-EHOSTUNREACH) when the sender's
 * card is unknown here and the MetaServer cannot be read (the sender's RC
 * handshake, started behind its datagrams, brings its card),
 * ERR_PTR(-EAGAIN) when the check must wait (source.c's limits), or
 * ERR_PTR(-EPERM). Nothing is kept of a sender that does not pass.
 * Process context (ctrl.c).
 */
static struct krc_peer *krc_dg_source(const u8 gid[16], u32 src_qp)
{
	struct krcore_card card;
	struct krc_peer *peer;
	bool ok, known = false;
	u32 reads = 0;
	int ret;

	peer = krc_peer_get(gid, false);
	if (IS_ERR(peer))
		peer = NULL;
	if (peer) {
		spin_lock(&peer->lock);
		known = peer->card_valid;
		ok = known && peer->card.ud_qpn == src_qp;
		spin_unlock(&peer->lock);
		if (ok)
			return peer;
	}
	ret = krc_src_lookup(peer, gid, &card, &reads);
	/* Not the QP of the card we hold, and checked lately: spoofed. */
	if (ret == -EAGAIN && known)
		ret = -EPERM;
	if (!ret && card.ud_qpn != src_qp && !peer) {
		/* A node's address, not its control QP: not a node. */
		krc_src_miss(gid);
		ret = -EPERM;
	}
	if (ret) {
		krc_peer_put(peer);
		return ERR_PTR(ret == -EHOSTUNREACH || ret == -EAGAIN ? ret :
			       -EPERM);
	}
	if (!peer) {
		peer = krc_peer_get(gid, true);
		if (IS_ERR(peer))
			return ERR_PTR(-EPERM);
	}
	/* The MetaServer's card is the node's, whoever sent this. */
	krc_peer_set_card(peer, &card);
	if (card.ud_qpn != src_qp) {
		krc_peer_put(peer);
		return ERR_PTR(-EPERM);
	}
	krc_event(KRC_EV_DG_VERIFIED);
	return peer;
}

/*
 * Fault injection for tests: drop or repeat received datagrams, each with
 * probability 1/N (at random: a fixed pattern can starve go-back-N).
 */
static int krc_dg_fault(void)
{
	int drop = READ_ONCE(krc_fault_dg_drop_every);
	int dup = READ_ONCE(krc_fault_dg_dup_every);

	if (drop > 0 && !get_random_u32_below(drop))
		return -1;
	if (dup > 0 && !get_random_u32_below(dup))
		return 1;
	return 0;
}

/*
 * Fault injection for tests (fault_dg_replay_old): the first datagram of
 * every stream is kept (a copy per stream start, whether the fault is on
 * or not); when the next stream of the same node starts and the fault is
 * on, the old one comes again (as a late repeat would): it must not run
 * again. rx_work's context, one datagram at a time: a static copy.
 */
static struct {
	u8 gid[16];
	u64 stream;
	size_t len;
	u8 buf[KRC_DG_HDR_SIZE + KRC_DG_MAX_PAYLOAD];
} krc_dg_kept;

static void krc_dg_fault_replay(struct krc_peer *peer, u32 src_qp,
				const u8 *buf, size_t len,
				const struct krc_dg_hdr *h)
{
	struct krc_dg_hdr old;

	if (len > sizeof(krc_dg_kept.buf))
		return;
	if (READ_ONCE(krc_fault_dg_replay_old) > 0 && krc_dg_kept.len &&
	    !memcmp(krc_dg_kept.gid, peer->gid, 16) &&
	    krc_dg_kept.stream != h->stream &&
	    !krc_dg_decode(krc_dg_kept.buf, krc_dg_kept.len, &old) &&
	    krc_fault_take(&krc_fault_dg_replay_old)) {
		krc_event(KRC_EV_DG_FAULT_REPLAYED);
		krc_dg_on_req(peer, src_qp, &old,
			      krc_dg_kept.buf + KRC_DG_HDR_SIZE);
	}
	memcpy(krc_dg_kept.gid, peer->gid, 16);
	krc_dg_kept.stream = h->stream;
	memcpy(krc_dg_kept.buf, buf, len);
	krc_dg_kept.len = len;
}

/*
 * A datagram of the transport arrived on the control QP from (@gid,
 * @src_qp): @buf (@len bytes, after the GRH). Process context, one at a
 * time (ctrl.c).
 */
void krc_dg_recv(const u8 gid[16], u32 src_qp, const u8 *buf, size_t len)
{
	struct krc_dg_hdr h;
	struct krc_peer *peer;
	int fault, times;

	if (krc_dg_decode(buf, len, &h)) {
		krc_event(KRC_EV_DG_RX_BAD);
		return;
	}
	fault = krc_dg_fault();
	if (fault < 0) {
		krc_event(KRC_EV_DG_FAULT_DROPPED);
		return;
	}
	peer = krc_dg_source(gid, src_qp);
	if (PTR_ERR_OR_ZERO(peer) == -EAGAIN)
		return;		/* counted by source.c */
	if (PTR_ERR_OR_ZERO(peer) == -EHOSTUNREACH) {
		/* Not hostile: unknown until its handshake's card arrives. */
		krc_event(KRC_EV_DG_RX_UNVERIFIED);
		pr_notice_ratelimited("krcore: a datagram from a node whose card is unknown here while the MetaServer is unreachable, dropped until its handshake\n");
		return;
	}
	if (IS_ERR(peer)) {
		krc_event(KRC_EV_DG_RX_SPOOFED);
		pr_warn_ratelimited("krcore: a datagram from a QP that is no node's control QP, dropped\n");
		return;
	}
	for (times = fault > 0 ? 2 : 1; times; times--) {
		if (peer->local)
			break;
		if (h.type == KRC_DG_REQ)
			krc_dg_on_req(peer, src_qp, &h,
				      buf + KRC_DG_HDR_SIZE);
		else
			krc_dg_on_rep(peer, &h, buf + KRC_DG_HDR_SIZE);
	}
	if (h.type == KRC_DG_REQ && h.seq == 0 && !peer->local)
		krc_dg_fault_replay(peer, src_qp, buf, len, &h);
	krc_peer_put(peer);
}

/* ---------------------------------------------------------------- */
/* Teardown (the peer's last reference, process context)             */

void krc_dg_peer_free(struct krc_peer *peer)
{
	struct ib_device *ibdev = krc_node.dev ? krc_dg_ibdev() : NULL;
	struct krc_dg_tx *tx = peer->dgtx;
	struct krc_dg_rx *rx = peer->dgrx;
	u32 i;

	if (tx) {
		/* Its works hold the peer: none runs or is queued now. */
		if (!wait_event_timeout(tx->wq, !atomic_read(&tx->tx_posted),
					msecs_to_jiffies(5000))) {
			/* Never free what a posted send still names. */
			pr_err("krcore: a datagram stream's sends never completed: leaked\n");
			tx = NULL;
		} else {
			/* The last completion has left its critical section. */
			spin_lock_irq(&tx->wq.lock);
			spin_unlock_irq(&tx->wq.lock);
		}
	}
	if (tx) {
		if (ibdev)
			ib_dma_unmap_single(ibdev, tx->hdrs_dma,
					    KRC_DG_W * KRC_DG_HDR_SIZE,
					    DMA_TO_DEVICE);
		krc_ah_put(tx->ah);
		krc_ah_put(tx->old_ah);
		kfree(tx->hdrs);
		kvfree(tx->data);
		kfree(tx);
		peer->dgtx = NULL;
	}
	if (rx) {
		for (i = 0; i < 250 && atomic_read(&rx->tx_posted); i++)
			msleep(20);
		if (atomic_read(&rx->tx_posted)) {
			pr_err("krcore: a datagram responder's replies never completed: leaked\n");
			return;
		}
	}
	if (rx) {
		if (rx->started)
			krc_dg_bury(peer->gid, rx->stream);
		for (i = 0; i < KRC_DG_W; i++)
			kfree(rx->ent[i].msg);
		kfree(rx->asm_buf);
		if (ibdev)
			ib_dma_unmap_single(ibdev, rx->buf_dma,
					    (size_t)KRC_DG_W * rx->slot,
					    DMA_BIDIRECTIONAL);
		krc_ah_put(rx->ah);
		krc_ah_put(rx->old_ah);
		kvfree(rx->buf);
		kfree(rx);
		peer->dgrx = NULL;
	}
}

/*
 * Stop the stream to @peer (the node goes down): every outstanding
 * request fails, no timer runs any more.
 */
void krc_dg_peer_stop(struct krc_peer *peer)
{
	struct krc_dg_tx *tx = READ_ONCE(peer->dgtx);
	unsigned long flags;

	if (!tx)
		return;
	spin_lock_irqsave(&tx->lock, flags);
	tx->stopping = true;
	krc_dg_fail_all(tx, KRCORE_WC_UNREACHABLE);
	spin_unlock_irqrestore(&tx->lock, flags);
	if (cancel_delayed_work_sync(&tx->rto_work))
		krc_peer_put(peer);
	krc_dg_kick_done(tx);
	flush_work(&tx->done_work);
}
