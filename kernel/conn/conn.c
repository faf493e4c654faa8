// SPDX-License-Identifier: GPL-2.0
/*
 * conn.c - pooled RC connections: a QP and its CQ, their states, the
 * spare QPs kept ready in INIT, and kernel-issued work requests (kops).
 *
 * A connection is created (QP in INIT) in the background and parked in
 * the spare list; a handshake takes one and moves it to RTR/RTS. Every
 * work request posted on a pooled QP carries a cookie as wr_id, never a
 * pointer that user space chose: bit 0 clear is a kop (a kernel request
 * waited for synchronously); bit 0 set is reserved for VQ requests.
 *
 * Teardown: krc_conn_kill() stops new posts, moves the QP to ERR so that
 * every outstanding request completes (flushed), polls until none is left
 * and destroys QP and CQ; the memory goes with the last reference.
 */
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "krcore.h"

static LIST_HEAD(krc_spares);
static DEFINE_SPINLOCK(krc_spares_lock);
static int krc_nspares;
static bool krc_spares_enabled;
static DECLARE_WAIT_QUEUE_HEAD(krc_spares_wq);
static struct work_struct krc_spares_work;
static atomic_t krc_conn_ids = ATOMIC_INIT(0);

/* Kernel-issued work requests. */

struct krc_kop *krc_kop_alloc(struct ib_device *ibdev, size_t len,
			      enum dma_data_direction dir)
{
	struct krc_kop *kop = kzalloc(sizeof(*kop), GFP_KERNEL);

	if (!kop)
		return NULL;
	init_completion(&kop->done);
	refcount_set(&kop->ref, 1);
	kop->ibdev = ibdev;
	kop->status = -EINPROGRESS;
	if (len) {
		kop->buf = kzalloc(len, GFP_KERNEL);
		if (!kop->buf)
			goto err;
		kop->dma = ib_dma_map_single(ibdev, kop->buf, len, dir);
		if (ib_dma_mapping_error(ibdev, kop->dma)) {
			kfree(kop->buf);
			goto err;
		}
		kop->len = len;
		kop->dir = dir;
	}
	return kop;
err:
	kfree(kop);
	return NULL;
}

void krc_kop_put(struct krc_kop *kop)
{
	if (!refcount_dec_and_test(&kop->ref))
		return;
	if (kop->buf) {
		ib_dma_unmap_single(kop->ibdev, kop->dma, kop->len, kop->dir);
		kfree(kop->buf);
	}
	kfree(kop);
}

int krc_kop_wait(struct krc_kop *kop, unsigned long timeout_ms)
{
	if (!wait_for_completion_timeout(&kop->done,
					 msecs_to_jiffies(timeout_ms)))
		return -ETIMEDOUT;
	if (kop->buf)
		ib_dma_sync_single_for_cpu(kop->ibdev, kop->dma, kop->len,
					   kop->dir);
	if (kop->status < 0)
		return kop->status;
	return kop->status == IB_WC_SUCCESS ? 0 : -EIO;
}

static void krc_kop_complete(struct krc_kop *kop, struct ib_wc *wc)
{
	kop->status = wc->status;
	kop->byte_len = wc->byte_len;
	if (kop->done_fn)
		kop->done_fn(kop);
	else
		complete(&kop->done);
	krc_kop_put(kop);
}

/* Completions of pooled QPs. */

static void krc_conn_dispatch(struct krc_conn *conn, struct ib_wc *wc)
{
	bool failed = wc->status != IB_WC_SUCCESS &&
		      wc->status != IB_WC_WR_FLUSH_ERR;

	if (krc_cookie_is_vq(wc->wr_id) && !krc_cookie_vq(wc->wr_id)) {
		krc_recv_dispatch(conn, wc);	/* a receive of the SRQ */
	} else if (krc_cookie_is_vq(wc->wr_id)) {
		/* First: the request that failed gets its own status. */
		krc_dp_dispatch(conn, wc);
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
	krc_dp_conn_gone(conn);
	krc_conn_free(conn);
}

static void krc_rtu_work_fn(struct work_struct *work);

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
	INIT_DELAYED_WORK(&conn->rtu_work, krc_rtu_work_fn);
	INIT_WORK(&conn->recover_work, krc_recover_work);
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
	/* Receives come from the node's SRQ (recv.c). */
	if (node->srq) {
		init.srq = node->srq->srq;
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

/*
 * The first VQ bound to @conn, with a reference (NULL: none). Who moves
 * VQs off a connection (recovery, the RC cap) takes them one at a time
 * this way, then re-checks under the VQ's own lock that it is still
 * there: a VQ being closed leaves the list under the same locks.
 */
struct krc_vqueue *krc_conn_first_vq(struct krc_conn *conn)
{
	unsigned long flags;
	struct krc_vqueue *vq;

	spin_lock_irqsave(&conn->lock, flags);
	vq = list_first_entry_or_null(&conn->vqs, struct krc_vqueue, conn_node);
	if (vq)
		krc_vq_get(vq);
	spin_unlock_irqrestore(&conn->lock, flags);
	return vq;
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
	struct ib_device *ibdev = node->dev->ibdev;
	struct ib_qp_attr attr = {};
	union ib_gid dgid;
	int sgid_index;
	int ret;

	memcpy(dgid.raw, peer->gid, sizeof(dgid.raw));
	mutex_lock(&node->dev->lock);
	sgid_index = node->port->gid_index;
	mutex_unlock(&node->dev->lock);
	if (sgid_index < 0)
		return -ENODEV;

	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = min_t(u32, node->card.active_mtu, peer->active_mtu);
	attr.dest_qp_num = remote_qpn;
	attr.rq_psn = remote_psn;
	attr.max_dest_rd_atomic = min_t(int, 16, ibdev->attrs.max_qp_rd_atom);
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(ibdev, node->port->port_num);
	rdma_ah_set_port_num(&attr.ah_attr, node->port->port_num);
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, sgid_index, 64, 0);
	memcpy(attr.ah_attr.roce.dmac, peer->mac, ETH_ALEN);
	ret = ib_modify_qp(conn->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret) {
		pr_warn("krcore: conn %u: RTR failed: %d\n", conn->id, ret);
		return ret;
	}

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = conn->psn;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = min_t(int, 16, ibdev->attrs.max_qp_init_rd_atom);
	ret = ib_modify_qp(conn->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (ret) {
		pr_warn("krcore: conn %u: RTS failed: %d\n", conn->id, ret);
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

/* The initiator repeats its RTU until the peer acknowledges it. */
static void krc_rtu_work_fn(struct work_struct *work)
{
	struct krc_conn *conn = container_of(to_delayed_work(work),
					     struct krc_conn, rtu_work);
	struct krc_ctrl_msg msg = {};

	if (conn->rtu_acked || !conn->peer || READ_ONCE(conn->dead))
		return;
	if (conn->rtu_tries++ >= krc_param_hs_retries) {
		krc_event(KRC_EV_HS_RTU_GIVEUP);
		return;
	}
	msg.type = KRC_MSG_RTU;
	msg.card = krc_node.card;
	msg.qpn = conn->qpn;
	msg.peer_qpn = conn->remote_qpn;
	if (!krc_ctrl_send(conn->peer, &msg))
		krc_event(KRC_EV_HS_RTU_SENT);
	queue_delayed_work(krc_wq, &conn->rtu_work,
			   msecs_to_jiffies(krc_param_hs_timeout_ms <<
					    min(conn->rtu_tries, 4)));
}

/* Spares: RC QPs in INIT, made in the background. */

static void krc_spares_work_fn(struct work_struct *work)
{
	struct krc_conn *conn;
	bool added;

	for (;;) {
		spin_lock(&krc_spares_lock);
		added = krc_spares_enabled && krc_nspares < krc_param_spare_qps;
		spin_unlock(&krc_spares_lock);
		if (!added)
			return;
		conn = krc_conn_create();
		if (IS_ERR(conn))
			return;
		spin_lock(&krc_spares_lock);
		if (krc_spares_enabled) {
			list_add_tail(&conn->node, &krc_spares);
			krc_nspares++;
			conn = NULL;
		}
		spin_unlock(&krc_spares_lock);
		if (conn) {
			krc_conn_kill(conn);
			krc_conn_put(conn);
			return;
		}
		krc_event(KRC_EV_SPARES_CREATED);
		wake_up_all(&krc_spares_wq);
	}
}

static bool krc_spare_pop(struct krc_conn **connp)
{
	spin_lock(&krc_spares_lock);
	*connp = list_first_entry_or_null(&krc_spares, struct krc_conn, node);
	if (*connp) {
		list_del_init(&(*connp)->node);
		krc_nspares--;
	}
	spin_unlock(&krc_spares_lock);
	return *connp || !krc_spares_enabled;
}

struct krc_conn *krc_spare_take(unsigned long timeout_ms)
{
	struct krc_conn *conn;

	/*
	 * The refill waits for krc_spares_refill() at the end of the
	 * handshake: a QP made meanwhile would hold the CPU while the
	 * request and its answer are under way. Unless none is left.
	 */
	krc_spare_pop(&conn);
	if (!conn) {
		queue_work(krc_wq, &krc_spares_work);
		krc_event(KRC_EV_SPARES_WAITED);
		wait_event_timeout(krc_spares_wq, krc_spare_pop(&conn),
				   msecs_to_jiffies(timeout_ms));
	}
	if (conn)
		krc_event(KRC_EV_SPARES_TAKEN);
	return conn;
}

/* Make spares again, up to spare_qps, in the background. */
void krc_spares_refill(void)
{
	if (READ_ONCE(krc_nspares) < krc_param_spare_qps)
		queue_work(krc_wq, &krc_spares_work);
}

void krc_spares_fill(void)
{
	spin_lock(&krc_spares_lock);
	krc_spares_enabled = true;
	spin_unlock(&krc_spares_lock);
	/* The first batch is made now, so that the first connect finds them. */
	krc_spares_work_fn(&krc_spares_work);
}

int krc_spares_count(void)
{
	return READ_ONCE(krc_nspares);
}

int krc_conn_init(void)
{
	INIT_WORK(&krc_spares_work, krc_spares_work_fn);
	return 0;
}

/* Stop refilling and destroy every spare. */
void krc_spares_drain(void)
{
	struct krc_conn *conn;

	spin_lock(&krc_spares_lock);
	krc_spares_enabled = false;
	spin_unlock(&krc_spares_lock);
	wake_up_all(&krc_spares_wq);
	cancel_work_sync(&krc_spares_work);
	for (;;) {
		spin_lock(&krc_spares_lock);
		conn = list_first_entry_or_null(&krc_spares, struct krc_conn,
						node);
		if (conn) {
			list_del_init(&conn->node);
			krc_nspares--;
		}
		spin_unlock(&krc_spares_lock);
		if (!conn)
			break;
		krc_conn_kill(conn);
		krc_conn_put(conn);
	}
}
