// SPDX-License-Identifier: GPL-2.0
/*
 * dg_rx.c - the responder of the datagram transport (dgram.c has the
 * overview): one stream per requesting peer (struct krc_dg_rx).
 *
 * A datagram is taken only from a node's control QP (dgram.c checks its
 * source), in stream order only: the next one is executed (dg_exec.c) or,
 * for a SEND, delivered at retirement; an early one is answered with a
 * NAK asking for the expected one; a repeat of one already answered gets
 * its cached reply again, never a second execution. Replies go in stream
 * order (krc_dg_retire()). Streams of peers dropped lately are buried
 * (their ids kept a while), so a late repeat cannot start one again.
 */
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "data/dg.h"

static void krc_dg_rx_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_dg_rx *rx = container_of(wc->wr_cqe, struct krc_dg_rx,
					    cqe);

	krc_ctrl_ud_done(cq);
	atomic_dec(&rx->tx_posted);
}

/*
 * Send the @len bytes encoded in slot @i to the requester: 0, or the
 * post's error (the send queue full: the requester repeats). rx->lock
 * held; any context.
 */
static int krc_dg_rx_send(struct krc_dg_rx *rx, u32 i, u32 len)
{
	struct ib_ud_wr wr = {};
	struct ib_sge sge;

	ib_dma_sync_single_for_device(krc_dg_ibdev(),
				      rx->buf_dma + (size_t)i * rx->slot,
				      len, DMA_BIDIRECTIONAL);
	sge.addr = rx->buf_dma + (size_t)i * rx->slot;
	sge.length = len;
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
		return -ENOMEM;
	}
	return 0;
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

	lockdep_assert_held(&rx->lock);
	krc_dg_encode(&h, rx->buf + (size_t)i * rx->slot);
	if (krc_dg_rx_send(rx, i, KRC_DG_HDR_SIZE + r->len)) {
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

	lockdep_assert_held(&rx->lock);
	if (rx->ent[i].state == KRC_DG_R_EXEC ||
	    rx->ent[i].state == KRC_DG_R_READY)
		return;
	/* The slot's cached reply goes; a repeat of it is too old by now. */
	rx->ent[i].state = KRC_DG_R_FREE;
	krc_dg_encode(&h, rx->buf + (size_t)i * rx->slot);
	if (!krc_dg_rx_send(rx, i, KRC_DG_HDR_SIZE))
		krc_event(KRC_EV_DG_NAK_SENT);
}

/*
 * Reply to what is ready, in stream order, delivering messages on the
 * way. rx->lock held; any context.
 */
void krc_dg_retire(struct krc_dg_rx *rx)
{
	lockdep_assert_held(&rx->lock);
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

void krc_dg_bury(const u8 gid[16], u64 stream)
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

void krc_dg_on_req(struct krc_peer *peer, u32 src_qp,
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
	    krc_dg_exec_full()) {
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
