// SPDX-License-Identifier: GPL-2.0
/*
 * conn.c - one RC connection: a QP and its CQ, their states, failing.
 *
 * A connection is created (QP in INIT) in the background and parked in
 * the spare list (spares.c); a handshake takes one and moves it to
 * RTR/RTS (handshake.c). Every work request posted on a pooled QP carries
 * a cookie as wr_id, never a pointer that user space chose: bit 0 clear
 * is a kop (a kernel request: a probe, a datagram's execution); bit 0 set
 * a VQ request or a receive, whose completions go to the data layer's
 * handlers (struct krc_conn_ops).
 *
 * Failing: a request failed, the QP went to error or the watchdog found
 * it stalled: the connection is marked failing (no new request, no new
 * VQ) and recover_work hands it to the data layer's recovery, which moves
 * its requests and VQs elsewhere.
 *
 * Teardown: krc_conn_kill() stops new posts, moves the QP to ERR so that
 * every outstanding request completes (flushed), polls until none is left
 * and destroys QP and CQ; the memory goes with the last reference.
 */
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "conn/conn.h"

static atomic_t krc_conn_ids = ATOMIC_INIT(0);
/* Set at load, before any connection exists; never changed. */
const struct krc_conn_ops *krc_conn_ops;
static struct ib_srq *krc_conn_srq;	/* set while the node starts */

void krc_conn_set_ops(const struct krc_conn_ops *ops)
{
	krc_conn_ops = ops;
}

/* Receives of pooled QPs come from @srq (the data layer's); NULL: none. */
void krc_conn_use_srq(struct ib_srq *srq)
{
	krc_conn_srq = srq;
}

/* Completions of pooled QPs. */

static void krc_conn_dispatch(struct krc_conn *conn, struct ib_wc *wc)
{
	bool failed = wc->status != IB_WC_SUCCESS &&
		      wc->status != IB_WC_WR_FLUSH_ERR;

	if (krc_cookie_is_vq(wc->wr_id) && !krc_cookie_vq(wc->wr_id)) {
		krc_conn_ops->recv(conn, wc);	/* a receive of the SRQ */
	} else if (krc_cookie_is_vq(wc->wr_id)) {
		/* First: the request that failed gets its own status. */
		krc_conn_ops->complete(conn, wc);
	} else {
		WRITE_ONCE(conn->progress, jiffies);
		atomic_dec(&conn->outstanding);
		krc_kop_complete((struct krc_kop *)(uintptr_t)wc->wr_id, wc);
	}
	if (failed) {
		if (!krc_cookie_is_vq(wc->wr_id))
			pr_warn_ratelimited("krcore: conn %u (qp %u): %s\n",
					    conn->id, conn->qpn,
					    ib_wc_status_msg(wc->status));
		krc_conn_fail(conn);
	}
}

static void krc_conn_poll(struct krc_conn *conn)
{
	struct ib_wc wc[8];
	unsigned long flags;
	int n, i;

	spin_lock_irqsave(&conn->cq_lock, flags);
	do {
		/* A short batch means empty: the re-arm below double-checks. */
		do {
			n = ib_poll_cq(conn->cq, ARRAY_SIZE(wc), wc);
			for (i = 0; i < n; i++)
				krc_conn_dispatch(conn, &wc[i]);
		} while (n == ARRAY_SIZE(wc));
	} while (ib_req_notify_cq(conn->cq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS) > 0);
	spin_unlock_irqrestore(&conn->cq_lock, flags);
}

static void krc_conn_comp(struct ib_cq *cq, void *ctx)
{
	krc_conn_poll(ctx);
}

static void krc_conn_cq_event(struct ib_event *ev, void *ctx)
{
	struct krc_conn *conn = ctx;

	pr_warn("krcore: conn %u: CQ event %s\n", conn->id,
		ib_event_msg(ev->event));
}

static void krc_conn_qp_event(struct ib_event *ev, void *ctx)
{
	struct krc_conn *conn = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
	case IB_EVENT_SQ_DRAINED:
	case IB_EVENT_QP_LAST_WQE_REACHED:
		break;
	default:
		/*
		 * The QP went to error on its own (the responder side of a
		 * remote access error, a fatal error): recover it now, not
		 * at the next post. Any context.
		 */
		pr_warn_ratelimited("krcore: conn %u: QP event %s; recovering\n",
				    conn->id, ib_event_msg(ev->event));
		krc_event(KRC_EV_CONN_ASYNC_ERRORS);
		if (conn->state != KRC_CONN_SPARE)
			krc_conn_fail(conn);
		break;
	}
}

static void krc_conn_teardown(struct krc_conn *conn);

/* Requests still posted on @conn: kernel ones and VQ ones. */
static bool krc_conn_busy(struct krc_conn *conn)
{
	return atomic_read(&conn->outstanding) > 0 ||
	       READ_ONCE(conn->sq_head) != READ_ONCE(conn->sq_tail);
}

/* The last reference went in a context that cannot sleep: free here. */
static void krc_conn_free(struct krc_conn *conn)
{
	krc_hs_half_open_done(conn);
	krc_conn_untrack(conn);
	krc_peer_put(conn->peer);
	kvfree(conn->sq);
	kvfree(conn->rec);
	kfree(conn);
	krc_obj_destroyed(KRC_OBJ_CONN);
}

static void krc_conn_free_work(struct work_struct *work)
{
	struct krc_conn *conn = container_of(work, struct krc_conn, kill_work);

	krc_conn_teardown(conn);
	krc_conn_ops->gone(conn);
	krc_conn_free(conn);
}

/* The data layer's recovery, with the reference krc_conn_fail_async() took. */
static void krc_conn_recover_work(struct work_struct *work)
{
	struct krc_conn *conn = container_of(work, struct krc_conn,
					     recover_work);

	krc_conn_ops->recover(conn);
	krc_conn_put(conn);
}

struct krc_conn *krc_conn_create(void)
{
	struct krc_node *node = &krc_node;
	struct ib_device *ibdev = node->dev->ibdev;
	struct ib_cq_init_attr cq_attr = {};
	struct ib_qp_init_attr init = {};
	struct ib_qp_attr attr = {};
	u32 depth = krc_param_qp_depth;
	struct krc_conn *conn;
	int ret;

	depth = min_t(u32, depth, ibdev->attrs.max_qp_wr);
	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return ERR_PTR(-ENOMEM);
	conn->sq_size = depth;
	conn->sq = kvcalloc(depth, sizeof(*conn->sq), GFP_KERNEL);
	conn->rec = kvcalloc(depth, sizeof(*conn->rec), GFP_KERNEL);
	if (!conn->sq || !conn->rec) {
		kvfree(conn->sq);
		kvfree(conn->rec);
		kfree(conn);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&conn->ref);
	INIT_LIST_HEAD(&conn->node);
	spin_lock_init(&conn->cq_lock);
	spin_lock_init(&conn->lock);
	INIT_WORK(&conn->kill_work, krc_conn_free_work);
	INIT_DELAYED_WORK(&conn->rtu_work, krc_hs_rtu_work);
	INIT_WORK(&conn->recover_work, krc_conn_recover_work);
	init_waitqueue_head(&conn->drain_wq);
	INIT_LIST_HEAD(&conn->vqs);
	INIT_LIST_HEAD(&conn->all_node);
	atomic_set(&conn->outstanding, 0);
	conn->id = atomic_inc_return(&krc_conn_ids);
	conn->psn = get_random_u32() & 0xffffff;
	krc_obj_created(KRC_OBJ_CONN);

	cq_attr.cqe = 2 * depth + 1;
	conn->cq = ib_create_cq(ibdev, krc_conn_comp, krc_conn_cq_event, conn,
				&cq_attr);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		goto err;
	}
	krc_obj_created(KRC_OBJ_CQ);

	init.event_handler = krc_conn_qp_event;
	init.qp_context = conn;
	init.send_cq = conn->cq;
	init.recv_cq = conn->cq;
	init.qp_type = IB_QPT_RC;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.cap.max_send_wr = depth;
	init.cap.max_send_sge = min_t(u32, KRC_MAX_HW_SGE,
				      ibdev->attrs.max_send_sge);
	/* Receives come from the node's SRQ (data/recv.c). */
	if (krc_conn_srq) {
		init.srq = krc_conn_srq;
	} else {
		init.cap.max_recv_wr = 1;
		init.cap.max_recv_sge = 1;
	}
	conn->qp = ib_create_qp(node->dev->pd, &init);
	if (IS_ERR(conn->qp)) {
		ret = PTR_ERR(conn->qp);
		conn->qp = NULL;
		goto err;
	}
	krc_obj_created(KRC_OBJ_QP);
	conn->qpn = conn->qp->qp_num;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = node->port->port_num;
	attr.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			       IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC;
	ret = ib_modify_qp(conn->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		goto err;
	ib_req_notify_cq(conn->cq, IB_CQ_NEXT_COMP);
	krc_conn_track(conn);
	return conn;
err:
	pr_err_ratelimited("krcore: cannot create an RC connection: %d\n", ret);
	krc_conn_kill(conn);
	krc_conn_put(conn);
	return ERR_PTR(ret);
}

static void krc_conn_release(struct kref *ref)
{
	struct krc_conn *conn = container_of(ref, struct krc_conn, ref);

	/*
	 * The last reference may go in any context: QP, CQ and the peer's
	 * reference (its AH) go in process context.
	 */
	conn->dead = true;
	queue_work(krc_wq, &conn->kill_work);
}

void krc_conn_put(struct krc_conn *conn)
{
	if (conn)
		kref_put(&conn->ref, krc_conn_release);
}

bool krc_conn_usable(struct krc_conn *conn)
{
	return conn->state == KRC_CONN_READY && !READ_ONCE(conn->dead) &&
	       !READ_ONCE(conn->failing) && !READ_ONCE(conn->closing);
}

void krc_conn_set_error(struct krc_conn *conn)
{
	if (conn->state != KRC_CONN_ERROR && conn->state != KRC_CONN_SPARE) {
		conn->state = KRC_CONN_ERROR;
		krc_event(KRC_EV_CONN_ERRORS);
		krc_peer_count(conn->peer, KRC_PS_CONN_ERRORS, 1);
	}
}

/*
 * Fail @conn (any context): no new request goes on it, and recovery takes
 * over its outstanding requests and VQs (with a reference of its own).
 */
void krc_conn_fail_async(struct krc_conn *conn)
{
	unsigned long flags;
	bool start;

	spin_lock_irqsave(&conn->lock, flags);
	start = !conn->failing && !conn->dead;
	conn->failing = true;
	spin_unlock_irqrestore(&conn->lock, flags);
	if (!start)
		return;
	kref_get(&conn->ref);
	if (!queue_work(krc_wq, &conn->recover_work))
		krc_conn_put(conn);
}

/*
 * A request on @conn failed at the transport (or never completed): the
 * connection is unusable. Was the peer reloaded? Ask the MetaServer.
 */
void krc_conn_fail(struct krc_conn *conn)
{
	krc_conn_set_error(conn);
	krc_conn_fail_async(conn);
	if (conn->peer && !conn->peer->local)
		krc_peer_suspect(conn->peer);
}

/*
 * Destroy QP and CQ, completing every outstanding request first.
 * Process context; the caller holds a reference (or is the release).
 */
void krc_conn_kill(struct krc_conn *conn)
{
	spin_lock_irq(&conn->lock);
	conn->dead = true;
	spin_unlock_irq(&conn->lock);
	krc_conn_teardown(conn);
}

static void krc_conn_teardown(struct krc_conn *conn)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int i;

	cancel_delayed_work_sync(&conn->rtu_work);
	krc_rc_uncount(conn);
	/* The watchdog may be querying the QP's state (recovery.c). */
	wait_event(conn->drain_wq, !atomic_read(&conn->qp_users));
	if (conn->qp) {
		ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
		/* Flushed completions arrive for everything still posted. */
		for (i = 0; i < 2000 && krc_conn_busy(conn); i++) {
			krc_conn_poll(conn);
			if (krc_conn_busy(conn))
				usleep_range(500, 1000);
		}
		if (atomic_read(&conn->outstanding) > 0)
			pr_err("krcore: conn %u: %d requests never completed\n",
			       conn->id, atomic_read(&conn->outstanding));
		ib_destroy_qp(conn->qp);
		conn->qp = NULL;
		krc_obj_destroyed(KRC_OBJ_QP);
	}
	if (conn->cq) {
		ib_destroy_cq(conn->cq);
		conn->cq = NULL;
		krc_obj_destroyed(KRC_OBJ_CQ);
	}
}

/* Move an INIT QP to RTR then RTS, connected to @remote_qpn of @peer. */
int krc_conn_rtr_rts(struct krc_conn *conn, const struct krcore_card *peer,
		     u32 remote_qpn, u32 remote_psn)
{
	struct krc_node *node = &krc_node;
	int ret;

	ret = krc_qp_connect(conn->qp, node->port, peer->gid, peer->mac,
			     min_t(u32, node->card.active_mtu,
				   peer->active_mtu),
			     remote_qpn, remote_psn, conn->psn);
	if (ret) {
		pr_warn("krcore: conn %u: not connected: %d\n", conn->id, ret);
		return ret;
	}
	conn->remote_qpn = remote_qpn;
	conn->remote_psn = remote_psn;
	return 0;
}

/* Post @wr for @kop (which gains a reference for the completion). */
int krc_conn_post_kop(struct krc_conn *conn, struct krc_kop *kop,
		      struct ib_send_wr *wr)
{
	unsigned long flags;
	int ret;

	wr->wr_id = (u64)(uintptr_t)kop;
	wr->send_flags |= IB_SEND_SIGNALED;
	refcount_inc(&kop->ref);
	spin_lock_irqsave(&conn->lock, flags);
	/* An idle connection's clock starts with its first request. */
	if (!atomic_read(&conn->outstanding) && conn->sq_head == conn->sq_tail)
		conn->progress = jiffies;
	atomic_inc(&conn->outstanding);
	if (conn->dead)
		ret = -ENOTCONN;
	else
		ret = ib_post_send(conn->qp, wr, NULL);
	spin_unlock_irqrestore(&conn->lock, flags);
	if (ret) {
		atomic_dec(&conn->outstanding);
		krc_kop_put(kop);
	}
	return ret;
}

/* RDMA READ @len bytes at @raddr/@rkey into @kop's buffer; process context. */
int krc_conn_read(struct krc_conn *conn, struct krc_kop *kop, u64 raddr,
		  u32 rkey, u32 len)
{
	struct ib_sge sge = {
		.addr = kop->dma,
		.length = len,
		.lkey = krc_node.dev->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_READ,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = raddr,
		.rkey = rkey,
	};

	int ret;

	if (len > kop->len)
		return -EINVAL;
	ret = krc_conn_post_kop(conn, kop, &wr.wr);
	if (!ret)
		krc_send_now();
	return ret;
}

/*
 * The layer's load: its handlers registered with control/ (handshake
 * messages, cards of a MetaServer scan), the spare pool, the sender
 * check and the watchdog.
 */
static const struct krc_ctrl_handlers krc_conn_ctrl_handlers = {
	.msg_fast = krc_hs_recv_fast,
	.msg = krc_hs_recv,
};

int krc_conn_layer_init(void)
{
	krc_ctrl_on_msg(&krc_conn_ctrl_handlers);
	krc_meta_on_card(krc_peer_prewarm);
	krc_spares_init();
	krc_src_init();
	return krc_watchdog_init();
}

void krc_conn_layer_exit(void)
{
	krc_watchdog_exit();
}
