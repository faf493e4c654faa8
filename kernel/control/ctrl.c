// SPDX-License-Identifier: GPL-2.0
/*
 * ctrl.c - the node's control UD QP: it carries the handshake messages
 * (common/proto.h) between nodes. Its QPN and QKey are in the node card.
 *
 * Receive buffers are posted at start and re-posted after each message;
 * messages are decoded and checked before the handshake sees them, so a
 * malformed or foreign datagram, or one without the cluster key's MAC
 * (common/auth.h), is counted and dropped; every message sent is signed. Receives complete
 * in softirq context: the answer to a handshake under way wakes its
 * waiter there and then; every other message (and every datagram of the
 * transport) is handed to rx_work, which takes them in order, one at a
 * time, in process context. Sends complete on ib_core's workqueue.
 */
#include <linux/ip.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <net/ipv6.h>

#include "control/control.h"
#include "dgram.h"

#define KRC_CTRL_RX	256
#define KRC_CTRL_TX	64
/* Send queue room for the datagram transport (dgram.c). */
#define KRC_CTRL_DG_TX	256
#define KRC_GRH_LEN	40
/*
 * A receive buffer takes any datagram the port can carry (GRH + 4096):
 * a smaller one would let any sender put the QP in error with a long
 * datagram (a local length error).
 */
#define KRC_CTRL_BUF	(KRC_GRH_LEN + 4096)

/* What rx_work needs of a receive completion it was handed. */
struct krc_ctrl_rxd {
	struct list_head node;		/* on krc_ctrl.rx_backlog */
	u32 byte_len;
	u32 src_qp;
	bool has_src;			/* gid is the sender's (ctrl.c) */
	bool dgram;			/* of the datagram transport */
	u8 gid[16];
	struct krc_ctrl_msg msg;		/* else: decoded and checked */
};

struct krc_ctrl {
	struct ib_device *ibdev;
	struct ib_cq *cq;		/* sends (workqueue) */
	struct ib_cq *rcq;		/* receives (softirq) */
	struct ib_qp *qp;
	u32 qkey;
	spinlock_t tx_lock;		/* tx_free, tx_busy, stopping */
	struct list_head tx_free;
	int tx_busy;
	bool stopping;
	bool recovering;		/* the QP went to error: reset it */
	struct work_struct recover_work;
	u32 port_num;
	atomic_t rx_posted;
	atomic_t dg_busy;		/* datagrams of dgram.c posted */
	spinlock_t dg_lock;		/* posting them (any context) */
	wait_queue_head_t wq;		/* tx_busy and rx_posted going down */
	spinlock_t rx_lock;		/* rx_backlog; _bh */
	struct list_head rx_backlog;	/* of rxd: received, not yet seen */
	struct work_struct rx_work;
	/* rx_work's: high priority, and may be flushed from krc_wq */
	struct workqueue_struct *rx_wq;
	/* ctx of every buffer is the ctrl; priv of a tx buffer is its AH */
	struct krc_msgbuf rx[KRC_CTRL_RX];
	struct krc_ctrl_rxd *rxd;	/* KRC_CTRL_RX: one per rx buffer */
	struct krc_msgbuf tx[KRC_CTRL_TX];
};

/* Set at load (main.c), before the control QP exists; never changed. */
static const struct krc_ctrl_handlers *krc_ctrl_msg_handlers;
static krc_ctrl_dgram_fn krc_ctrl_dgram_handler;

void krc_ctrl_on_msg(const struct krc_ctrl_handlers *h)
{
	krc_ctrl_msg_handlers = h;
}

void krc_ctrl_on_dgram(krc_ctrl_dgram_fn fn)
{
	krc_ctrl_dgram_handler = fn;
}

/*
 * One posted request of @ctrl came back: count it down under the wait
 * queue's lock, which krc_ctrl_flush() takes before the control QP and
 * its memory may go, so no completion touches them after (any context).
 */
static void krc_ctrl_put_posted(struct krc_ctrl *ctrl, atomic_t *count)
{
	unsigned long flags;

	spin_lock_irqsave(&ctrl->wq.lock, flags);
	if (atomic_dec_and_test(count))
		wake_up_locked(&ctrl->wq);
	spin_unlock_irqrestore(&ctrl->wq.lock, flags);
}

static int krc_ctrl_post_rx(struct krc_ctrl *ctrl, struct krc_msgbuf *b)
{
	int ret;

	atomic_inc(&ctrl->rx_posted);
	ret = krc_msgbuf_post_recv(ctrl->qp, b);
	if (ret)
		atomic_dec(&ctrl->rx_posted);
	return ret;
}

/* Fault injection for tests: drop received messages (of one type). */
static bool krc_ctrl_fault_drop(const struct krc_ctrl_msg *msg)
{
	int left = READ_ONCE(krc_fault_ctrl_drop_rx);
	int type = READ_ONCE(krc_fault_ctrl_drop_type);

	if (left <= 0 || (type && type != msg->type))
		return false;
	WRITE_ONCE(krc_fault_ctrl_drop_rx, left - 1);
	krc_event(KRC_EV_CTRL_RX_DROPPED);
	return true;
}

/*
 * Who really sent a datagram: the source GID from the 40 bytes in front of
 * its payload (RoCE v2 over IPv4: an IPv4 header in the last 20 of them,
 * else a GRH) and the source QPN, both set by the sending NIC, never by
 * the sender's software. False if there is no header to read.
 */
static bool krc_ctrl_source(const struct ib_wc *wc, const u8 *hdr, u8 gid[16])
{
	if (!(wc->wc_flags & IB_WC_GRH))
		return false;
	if ((wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE) &&
	    wc->network_hdr_type == RDMA_NETWORK_IPV4) {
		const struct iphdr *ip = (const struct iphdr *)(hdr + 20);

		ipv6_addr_set_v4mapped(ip->saddr, (struct in6_addr *)gid);
	} else {
		memcpy(gid, ((const struct ib_grh *)hdr)->sgid.raw, 16);
	}
	return true;
}

static void krc_ctrl_repost(struct krc_ctrl *ctrl, struct krc_msgbuf *b)
{
	if (!READ_ONCE(ctrl->stopping) && !READ_ONCE(ctrl->recovering) &&
	    krc_ctrl_post_rx(ctrl, b))
		pr_warn_ratelimited("krcore: cannot re-post a control receive\n");
}

/* Does @msg carry the control MAC of the cluster key? Any context. */
static bool krc_ctrl_authentic(const struct krc_ctrl_msg *msg)
{
	const u8 *key = krc_key();

	return key && krc_msg_ctrl_check(msg, key);
}

/*
 * Decode and check a control message (not a datagram of the transport)
 * in @b into rxd->msg; 0 when it may be handed on.
 */
static int krc_ctrl_check(struct krc_msgbuf *b, struct krc_ctrl_rxd *rxd)
{
	struct krc_ctrl_msg *msg = &rxd->msg;
	int ret = -EBADMSG;

	/* A UD receive starts with the 40-byte GRH (or IPv4 header). */
	if (rxd->byte_len >= KRC_GRH_LEN)
		ret = krc_msg_decode((u8 *)b->buf + KRC_GRH_LEN,
				     rxd->byte_len - KRC_GRH_LEN, msg);
	if (ret) {
		krc_event(KRC_EV_CTRL_RX_BAD);
		pr_warn_ratelimited("krcore: malformed control message (%d), dropped\n",
				    ret);
		return ret;
	}
	/*
	 * Every control message carries its sender's card: it must be the
	 * card of the node and QP the datagram came from. A process (local
	 * or remote) sending from a QP of its own, or a node sending for
	 * another, is dropped: only a node's control QP speaks for it.
	 */
	if (!rxd->has_src || memcmp(rxd->gid, msg->card.gid, 16) ||
	    rxd->src_qp != msg->card.ud_qpn) {
		krc_event(KRC_EV_CTRL_RX_SPOOFED);
		pr_warn_ratelimited("krcore: control message from a QP that is not the one of its card, dropped\n");
		return -EPERM;
	}
	/*
	 * And it must come from a kernel that holds the cluster key
	 * (common/auth.h): nothing else costs us a lookup or a state
	 * change. A node without a key takes nothing from the network.
	 */
	if (!krc_ctrl_authentic(msg)) {
		krc_event(KRC_EV_CTRL_RX_BAD_MAC);
		pr_warn_ratelimited("krcore: control message without the cluster key's MAC, dropped\n");
		return -EACCES;
	}
	return krc_ctrl_fault_drop(msg) ? -EAGAIN : 0;
}

/* What the receives handed on, in order; process context. */
static void krc_ctrl_rx_work(struct work_struct *work)
{
	struct krc_ctrl *ctrl = container_of(work, struct krc_ctrl, rx_work);
	struct krc_ctrl_rxd *rxd;
	struct krc_msgbuf *b;

	for (;;) {
		spin_lock_bh(&ctrl->rx_lock);
		rxd = list_first_entry_or_null(&ctrl->rx_backlog,
					       struct krc_ctrl_rxd, node);
		if (rxd)
			list_del_init(&rxd->node);
		spin_unlock_bh(&ctrl->rx_lock);
		if (!rxd)
			return;
		b = &ctrl->rx[rxd - ctrl->rxd];
		if (!rxd->dgram)
			krc_ctrl_msg_handlers->msg(&rxd->msg);
		else if (rxd->has_src)
			krc_ctrl_dgram_handler(rxd->gid, rxd->src_qp,
					       (u8 *)b->buf + KRC_GRH_LEN,
					       rxd->byte_len - KRC_GRH_LEN);
		else
			krc_event(KRC_EV_DG_RX_SPOOFED);
		krc_ctrl_repost(ctrl, b);
		cond_resched();
	}
}

/* A receive completed; softirq context. */
static void krc_ctrl_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_msgbuf *b = container_of(wc->wr_cqe, struct krc_msgbuf, cqe);
	struct krc_ctrl *ctrl = b->ctx;
	struct krc_ctrl_rxd *rxd = &ctrl->rxd[b - ctrl->rx];

	if (READ_ONCE(krc_fault_ctrl_reset) > 0 && wc->status == IB_WC_SUCCESS) {
		WRITE_ONCE(krc_fault_ctrl_reset, krc_fault_ctrl_reset - 1);
		wc->status = IB_WC_LOC_QP_OP_ERR;
	}
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			pr_warn_ratelimited("krcore: control receive: %s, resetting the control QP\n",
					    ib_wc_status_msg(wc->status));
			spin_lock_bh(&ctrl->tx_lock);
			if (!ctrl->stopping && !ctrl->recovering) {
				ctrl->recovering = true;
				queue_work(krc_wq, &ctrl->recover_work);
			}
			spin_unlock_bh(&ctrl->tx_lock);
		}
		goto done;
	}
	krc_msgbuf_sync(ctrl->qp, b);
	krc_event(KRC_EV_CTRL_RX);
	rxd->byte_len = wc->byte_len;
	rxd->src_qp = wc->src_qp;
	rxd->has_src = krc_ctrl_source(wc, b->buf, rxd->gid);
	/* The datagram transport of VQs shares the QP (dgram.c). */
	rxd->dgram = rxd->byte_len >= KRC_GRH_LEN + 4 &&
		     krc_get_le32((u8 *)b->buf + KRC_GRH_LEN) == KRC_DG_MAGIC;
	/*
	 * A control message is checked here, once: a bad one is dropped,
	 * the answer a handshake waits for wakes it now. Everything else
	 * (and every datagram of the transport) goes on in process context.
	 */
	if (!rxd->dgram &&
	    (krc_ctrl_check(b, rxd) ||
	     krc_ctrl_msg_handlers->msg_fast(&rxd->msg))) {
		krc_ctrl_repost(ctrl, b);
		goto done;
	}
	spin_lock_bh(&ctrl->rx_lock);
	list_add_tail(&rxd->node, &ctrl->rx_backlog);
	spin_unlock_bh(&ctrl->rx_lock);
	queue_work(ctrl->rx_wq, &ctrl->rx_work);
done:
	/*
	 * Last: whoever waits for the receives to drain (recovery, stop)
	 * then flushes rx_work knowing nothing more is handed to it.
	 */
	krc_ctrl_put_posted(ctrl, &ctrl->rx_posted);
}

static void krc_ctrl_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_msgbuf *b = container_of(wc->wr_cqe, struct krc_msgbuf, cqe);
	struct krc_ctrl *ctrl = b->ctx;
	struct krc_ah *ah = b->priv;

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("krcore: control send: %s\n",
				    ib_wc_status_msg(wc->status));
	b->priv = NULL;
	spin_lock_bh(&ctrl->tx_lock);
	list_add(&b->node, &ctrl->tx_free);
	ctrl->tx_busy--;
	/* Under tx_lock, which the flush takes before the QP may go. */
	wake_up(&ctrl->wq);
	spin_unlock_bh(&ctrl->tx_lock);
	krc_ah_put(ah);
}

/* Process context; the send holds a reference on @ah until it completes. */
int krc_ctrl_send(struct krc_ah *ah, u32 qpn, u32 qkey,
		  const struct krc_ctrl_msg *msg)
{
	struct krc_ctrl *ctrl = READ_ONCE(krc_node.ctrl);
	const u8 *key = krc_key();
	struct krc_ctrl_msg signed_msg;
	struct krc_msgbuf *b;
	struct ib_sge sge;
	struct ib_ud_wr wr = {};
	int ret;

	if (!ctrl)
		return -ENODEV;
	krc_ah_get(ah);

	spin_lock_bh(&ctrl->tx_lock);
	b = list_first_entry_or_null(&ctrl->tx_free, struct krc_msgbuf, node);
	if (b && !ctrl->stopping && !ctrl->recovering) {
		list_del(&b->node);
		ctrl->tx_busy++;
	} else {
		b = NULL;
	}
	spin_unlock_bh(&ctrl->tx_lock);
	if (!b) {
		krc_ah_put(ah);
		krc_event(KRC_EV_CTRL_TX_FULL);
		return -ENOBUFS;
	}

	/* Signed with the cluster key (without one, no node takes it). */
	signed_msg = *msg;
	if (key)
		krc_msg_ctrl_sign(&signed_msg, key);
	krc_msg_encode(&signed_msg, b->buf);
	ib_dma_sync_single_for_device(ctrl->ibdev, b->dma, b->len, b->dir);
	b->priv = ah;
	sge.addr = b->dma;
	sge.length = KRC_MSG_SIZE;
	sge.lkey = krc_node.dev->pd->local_dma_lkey;
	wr.wr.wr_cqe = &b->cqe;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.ah = ah->ah;
	wr.remote_qpn = qpn;
	wr.remote_qkey = qkey;
	ret = ib_post_send(ctrl->qp, &wr.wr, NULL);
	if (ret) {
		struct ib_wc wc = {
			.wr_cqe = &b->cqe,
			.status = IB_WC_WR_FLUSH_ERR,
		};

		pr_warn_ratelimited("krcore: control post failed: %d\n", ret);
		krc_ctrl_tx_done(ctrl->cq, &wc);
		return ret;
	}
	krc_send_now();
	krc_event(KRC_EV_CTRL_TX);
	return 0;
}

/*
 * Post a datagram of the transport (dgram.c; its wr_cqe is its own and
 * calls krc_ctrl_ud_done()). Any context. -ENODEV when the control QP is
 * down or being reset, -ENOBUFS when the transport's share of the send
 * queue is taken: the datagram counts as lost and is repeated later.
 */
int krc_ctrl_post_ud(struct ib_ud_wr *wr)
{
	struct krc_ctrl *ctrl = READ_ONCE(krc_node.ctrl);
	unsigned long flags;
	int ret;

	if (!ctrl)
		return -ENODEV;
	spin_lock_irqsave(&ctrl->dg_lock, flags);
	if (READ_ONCE(ctrl->stopping) || READ_ONCE(ctrl->recovering)) {
		ret = -ENODEV;
	} else if (atomic_read(&ctrl->dg_busy) >= KRC_CTRL_DG_TX) {
		ret = -ENOBUFS;
	} else {
		atomic_inc(&ctrl->dg_busy);
		ret = ib_post_send(ctrl->qp, &wr->wr, NULL);
		if (ret)
			atomic_dec(&ctrl->dg_busy);
	}
	spin_unlock_irqrestore(&ctrl->dg_lock, flags);
	return ret;
}

/* A datagram of the transport left (or was flushed): from its done(). */
void krc_ctrl_ud_done(struct ib_cq *cq)
{
	struct krc_ctrl *ctrl = cq->cq_context;

	krc_ctrl_put_posted(ctrl, &ctrl->dg_busy);
}

static int krc_ctrl_modify(struct krc_ctrl *ctrl, u32 port_num)
{
	struct ib_qp_attr attr = {};
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = port_num;
	attr.qkey = ctrl->qkey;
	ret = ib_modify_qp(ctrl->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTR;
	ret = ib_modify_qp(ctrl->qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	return ib_modify_qp(ctrl->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

/*
 * The control QP went to error (a datagram it could not take, a device
 * hiccup): flush it, take it back through RESET to RTS, keeping its QPN
 * (the one in our card), and post the receive buffers again.
 */
static void krc_ctrl_recover_work(struct work_struct *work)
{
	struct krc_ctrl *ctrl = container_of(work, struct krc_ctrl,
					     recover_work);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int i, ret;

	ib_modify_qp(ctrl->qp, &attr, IB_QP_STATE);
	if (!wait_event_timeout(ctrl->wq, READ_ONCE(ctrl->tx_busy) == 0 &&
				atomic_read(&ctrl->rx_posted) == 0 &&
				atomic_read(&ctrl->dg_busy) == 0,
				msecs_to_jiffies(5000))) {
		pr_err("krcore: control QP did not flush, not recovered\n");
		return;
	}
	/* Buffers handed to rx_work come back before all are posted anew. */
	flush_work(&ctrl->rx_work);
	attr.qp_state = IB_QPS_RESET;
	ret = ib_modify_qp(ctrl->qp, &attr, IB_QP_STATE);
	if (!ret)
		ret = krc_ctrl_modify(ctrl, ctrl->port_num);
	for (i = 0; !ret && i < KRC_CTRL_RX; i++)
		ret = krc_ctrl_post_rx(ctrl, &ctrl->rx[i]);
	if (ret) {
		pr_err("krcore: control QP recovery failed: %d\n", ret);
		return;
	}
	spin_lock_bh(&ctrl->tx_lock);
	ctrl->recovering = false;
	spin_unlock_bh(&ctrl->tx_lock);
	krc_event(KRC_EV_CTRL_RECOVERIES);
	pr_info("krcore: control QP %u recovered\n", ctrl->qp->qp_num);
}

/* Move the QP to ERR and wait until every posted request has come back. */
static void krc_ctrl_flush(struct krc_ctrl *ctrl)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	spin_lock_bh(&ctrl->tx_lock);
	ctrl->stopping = true;
	spin_unlock_bh(&ctrl->tx_lock);
	ib_modify_qp(ctrl->qp, &attr, IB_QP_STATE);
	if (!wait_event_timeout(ctrl->wq, READ_ONCE(ctrl->tx_busy) == 0 &&
				atomic_read(&ctrl->rx_posted) == 0 &&
				atomic_read(&ctrl->dg_busy) == 0,
				msecs_to_jiffies(5000)))
		pr_err("krcore: control QP did not flush\n");
	/* The last completions have left their locked sections. */
	spin_lock_irq(&ctrl->wq.lock);
	spin_unlock_irq(&ctrl->wq.lock);
	spin_lock_bh(&ctrl->tx_lock);
	spin_unlock_bh(&ctrl->tx_lock);
	flush_work(&ctrl->rx_work);
}

static void krc_ctrl_destroy(struct krc_ctrl *ctrl)
{
	int i;

	if (ctrl->qp) {
		ib_destroy_qp(ctrl->qp);
		krc_obj_destroyed(KRC_OBJ_QP);
	}
	if (ctrl->cq) {
		ib_free_cq(ctrl->cq);
		krc_obj_destroyed(KRC_OBJ_CQ);
	}
	if (ctrl->rcq) {
		ib_free_cq(ctrl->rcq);
		krc_obj_destroyed(KRC_OBJ_CQ);
	}
	if (ctrl->rx_wq)
		destroy_workqueue(ctrl->rx_wq);
	kvfree(ctrl->rxd);
	for (i = 0; i < KRC_CTRL_RX; i++)
		krc_msgbuf_free(ctrl->ibdev, &ctrl->rx[i]);
	for (i = 0; i < KRC_CTRL_TX; i++)
		krc_msgbuf_free(ctrl->ibdev, &ctrl->tx[i]);
	kfree(ctrl);
}

int krc_ctrl_start(struct krc_node *node)
{
	struct ib_device *ibdev = node->dev->ibdev;
	struct ib_qp_init_attr init = {};
	struct krc_ctrl *ctrl;
	struct ib_cq *cq;
	struct ib_qp *qp;
	int i, ret;

	ctrl = kzalloc(sizeof(*ctrl), GFP_KERNEL);
	if (!ctrl)
		return -ENOMEM;
	ctrl->ibdev = ibdev;
	ctrl->qkey = krc_param_ctrl_qkey;
	ctrl->port_num = node->port->port_num;
	INIT_WORK(&ctrl->recover_work, krc_ctrl_recover_work);
	INIT_WORK(&ctrl->rx_work, krc_ctrl_rx_work);
	spin_lock_init(&ctrl->rx_lock);
	INIT_LIST_HEAD(&ctrl->rx_backlog);
	spin_lock_init(&ctrl->tx_lock);
	spin_lock_init(&ctrl->dg_lock);
	INIT_LIST_HEAD(&ctrl->tx_free);
	init_waitqueue_head(&ctrl->wq);
	ctrl->rxd = kvcalloc(KRC_CTRL_RX, sizeof(*ctrl->rxd), GFP_KERNEL);
	ctrl->rx_wq = alloc_workqueue("krcore_ctrl_rx",
				      WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!ctrl->rxd || !ctrl->rx_wq) {
		ret = -ENOMEM;
		goto err;
	}

	cq = ib_alloc_cq(ibdev, ctrl, KRC_CTRL_TX + KRC_CTRL_DG_TX + 1, 0,
			 IB_POLL_WORKQUEUE);
	if (IS_ERR(cq)) {
		ret = PTR_ERR(cq);
		goto err;
	}
	ctrl->cq = cq;
	krc_obj_created(KRC_OBJ_CQ);
	cq = ib_alloc_cq(ibdev, ctrl, KRC_CTRL_RX + 1, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(cq)) {
		ret = PTR_ERR(cq);
		goto err;
	}
	ctrl->rcq = cq;
	krc_obj_created(KRC_OBJ_CQ);

	init.send_cq = ctrl->cq;
	init.recv_cq = ctrl->rcq;
	init.qp_type = IB_QPT_UD;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.cap.max_send_wr = KRC_CTRL_TX + KRC_CTRL_DG_TX;
	init.cap.max_recv_wr = KRC_CTRL_RX;
	/* A datagram: its header, then a payload slice of up to 4 SGEs. */
	init.cap.max_send_sge = min_t(u32, 1 + KRCORE_MAX_SGE,
				      ibdev->attrs.max_send_sge);
	init.cap.max_recv_sge = 1;
	qp = ib_create_qp(node->dev->pd, &init);
	if (IS_ERR(qp)) {
		ret = PTR_ERR(qp);
		goto err;
	}
	ctrl->qp = qp;
	krc_obj_created(KRC_OBJ_QP);
	ret = krc_ctrl_modify(ctrl, node->port->port_num);
	if (ret)
		goto err;

	for (i = 0; i < KRC_CTRL_RX; i++) {
		ret = krc_msgbuf_alloc(ibdev, &ctrl->rx[i], KRC_CTRL_BUF,
				       DMA_FROM_DEVICE, krc_ctrl_rx_done, ctrl);
		if (ret)
			goto err;
	}
	for (i = 0; i < KRC_CTRL_TX; i++) {
		ret = krc_msgbuf_alloc(ibdev, &ctrl->tx[i], KRC_MSG_SIZE,
				       DMA_TO_DEVICE, krc_ctrl_tx_done, ctrl);
		if (ret)
			goto err;
		list_add_tail(&ctrl->tx[i].node, &ctrl->tx_free);
	}
	for (i = 0; i < KRC_CTRL_RX; i++) {
		ret = krc_ctrl_post_rx(ctrl, &ctrl->rx[i]);
		if (ret) {
			krc_ctrl_flush(ctrl);
			goto err;
		}
	}
	node->card.ud_qpn = qp->qp_num;
	node->card.ud_qkey = ctrl->qkey;
	node->ctrl = ctrl;
	return 0;
err:
	pr_err("krcore: cannot start the control QP: %d\n", ret);
	krc_ctrl_destroy(ctrl);
	return ret;
}

void krc_ctrl_stop(struct krc_node *node)
{
	struct krc_ctrl *ctrl = node->ctrl;

	if (!ctrl)
		return;
	/* Let what is already posted (goodbyes) go out first. */
	wait_event_timeout(ctrl->wq, READ_ONCE(ctrl->tx_busy) == 0,
			   msecs_to_jiffies(1000));
	spin_lock_bh(&ctrl->tx_lock);
	ctrl->stopping = true;
	spin_unlock_bh(&ctrl->tx_lock);
	cancel_work_sync(&ctrl->recover_work);
	krc_ctrl_flush(ctrl);
	node->ctrl = NULL;
	krc_ctrl_destroy(ctrl);
}
