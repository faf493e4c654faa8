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
 * The requester (dg_tx.c) cuts a request into segments of one datagram
 * each; its other half (dg_ack.c) repeats unanswered ones (go-back-N) and
 * completes the VQ's request when every segment is answered. The
 * responder (dg_rx.c) takes a peer's datagrams in stream order only and
 * replies in that order, caching replies so that a repeat is answered
 * without executing anything twice; it has READs, WRITEs and atomics
 * executed by the RNIC on a kernel-owned QP (dg_exec.c), after checking
 * them against the kernel's own table of registrations.
 *
 * This file: where a datagram comes from (a node's control QP, or it is
 * dropped), handing it to the requester or the responder, and a peer's
 * streams at its end. dg.h has what the five files share.
 */
#include <linux/delay.h>
#include <linux/random.h>

#include "data/dg.h"

/* The payload of one datagram between us and a node of @card. */
u32 krc_dg_seg_for(const struct krcore_card *card)
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
struct krc_ah *krc_dg_readdress(struct krc_peer *peer, spinlock_t *lock,
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

/* Teardown (the peer's last reference, process context) */

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
