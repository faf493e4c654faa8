// SPDX-License-Identifier: GPL-2.0
/*
 * meta_client.c - a member's side of the MetaServer: its connection.
 *
 * At load the member connects to meta_server:meta_port with kernel
 * rdma_cm (a one-time bootstrap, not the hot path), learns where the table
 * is from the accept's private data and registers its card with one RPC.
 * Lookups READ the table over that connection (meta_lookup.c).
 *
 * When the MetaServer goes away the member keeps its cached cards and
 * pooled connections, answers lookups of unknown nodes with EHOSTUNREACH
 * and reconnects in the background (and registers again: the MetaServer
 * may have restarted with an empty table). At unload it deregisters.
 * A node that hosts the table itself registers directly, with no
 * connection, and reads it locally.
 *
 * The cluster key (key.c, common/auth.h) authenticates both ends: our
 * hello carries a fresh nonce, the table descriptor of the accept must
 * carry the MetaServer's MAC over it and both nonces (else we READ no
 * card from it), and every request and reply is signed. Without a key
 * the member does not connect at all.
 */
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/slab.h>
#include <rdma/rdma_cm.h>

#include "control/meta_client.h"
#include "meta_table.h"

#define KRC_MC_CONNECT_MS	5000
#define KRC_MC_RPC_MS		2000
#define KRC_MC_BACKOFF_MAX_MS	4000

struct krc_meta_client krc_mc = {
	.lock = __MUTEX_INITIALIZER(krc_mc.lock),
	.cur_lock = __SPIN_LOCK_UNLOCKED(krc_mc.cur_lock),
	.kop_lock = __SPIN_LOCK_UNLOCKED(krc_mc.kop_lock),
};

static void krc_mc_conn_release(struct kref *ref)
{
	kfree(container_of(ref, struct krc_mc_conn, ref));
	krc_obj_destroyed(KRC_OBJ_META_CONN);
}

void krc_mc_conn_put(struct krc_mc_conn *mc)
{
	if (mc)
		kref_put(&mc->ref, krc_mc_conn_release);
}

struct krc_mc_conn *krc_mc_get_cur(void)
{
	struct krc_mc_conn *mc;

	spin_lock_bh(&krc_mc.cur_lock);
	mc = krc_mc.cur;
	if (mc)
		kref_get(&mc->ref);
	spin_unlock_bh(&krc_mc.cur_lock);
	return mc;
}

void krc_mc_schedule_reconnect(void)
{
	if (!READ_ONCE(krc_mc.stopping) && !krc_mc.local)
		queue_delayed_work(krc_wq, &krc_mc.reconnect,
				   msecs_to_jiffies(krc_mc.backoff_ms));
}

/* Completions (softirq). */

static void krc_mc_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_msgbuf *b = container_of(wc->wr_cqe, struct krc_msgbuf, cqe);
	struct krc_mc_conn *mc = b->ctx;
	struct krc_ctrl_msg msg;

	const u8 *key = krc_key();

	if (wc->status != IB_WC_SUCCESS)
		return;
	krc_msgbuf_sync(mc->id->qp, b);
	if (krc_msg_decode(b->buf, wc->byte_len, &msg) ||
	    msg.type != KRC_MSG_META_REPLY) {
		krc_event(KRC_EV_CTRL_RX_BAD);
	} else if (!key || !krc_msg_check_mac(&msg, key, &mc->nonces,
					      KRC_MAC_HOST)) {
		/* Not from the MetaServer we authenticated: no answer. */
		krc_event(KRC_EV_META_AUTH_FAILED);
		pr_warn_ratelimited("krcore: a MetaServer reply without the cluster key's MAC, ignored\n");
	} else {
		/* The host's word: a reply, or a keepalive (req_id 0). */
		WRITE_ONCE(mc->heard, jiffies);
		if (msg.req_id && msg.req_id == READ_ONCE(mc->rpc_id)) {
			mc->rpc_reply = msg;
			complete(&mc->rpc_done);
		}
	}
	spin_lock_bh(&mc->lock);
	if (!mc->dead)
		krc_msgbuf_post_recv(mc->id->qp, b);
	spin_unlock_bh(&mc->lock);
}

static void krc_mc_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_msgbuf *b = container_of(wc->wr_cqe, struct krc_msgbuf, cqe);
	struct krc_mc_conn *mc = b->ctx;

	atomic_dec(&mc->outstanding);
}

/* rdma_cm events of a connection to the MetaServer. */
static int krc_mc_create_qp(struct krc_mc_conn *mc)
{
	struct ib_device *ibdev = krc_node.dev->ibdev;
	struct ib_qp_init_attr init = {};
	int i, ret;

	if (mc->id->device != ibdev)
		return -EXDEV;
	mc->cq = ib_alloc_cq(ibdev, mc, 64, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(mc->cq)) {
		ret = PTR_ERR(mc->cq);
		mc->cq = NULL;
		return ret;
	}
	krc_obj_created(KRC_OBJ_CQ);
	init.send_cq = mc->cq;
	init.recv_cq = mc->cq;
	init.qp_type = IB_QPT_RC;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.cap.max_send_wr = 32;
	init.cap.max_recv_wr = KRC_MC_RX;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	ret = rdma_create_qp(mc->id, krc_node.dev->pd, &init);
	if (ret)
		return ret;
	krc_obj_created(KRC_OBJ_QP);
	for (i = 0; i < KRC_MC_RX; i++) {
		ret = krc_msgbuf_alloc(ibdev, &mc->rx[i], KRC_MSG_SIZE,
				       DMA_FROM_DEVICE, krc_mc_rx_done, mc);
		if (!ret)
			ret = krc_msgbuf_post_recv(mc->id->qp, &mc->rx[i]);
		if (ret)
			return ret;
	}
	return krc_msgbuf_alloc(ibdev, &mc->tx, KRC_MSG_SIZE, DMA_TO_DEVICE,
				krc_mc_tx_done, mc);
}

static void krc_mc_cm_done(struct krc_mc_conn *mc, int status)
{
	if (completion_done(&mc->cm_done))
		return;
	mc->cm_status = status;
	complete(&mc->cm_done);
}

/* Does the accept's descriptor carry the MAC of a holder of our key? */
static bool krc_mc_desc_authentic(struct krc_mc_conn *mc,
				  const struct rdma_cm_event *ev)
{
	const u8 *key = krc_key();

	if (key && krc_mt_desc_check_mac(ev->param.conn.private_data, key,
					 mc->nonces.member))
		return true;
	krc_event(KRC_EV_META_AUTH_FAILED);
	pr_warn_ratelimited("krcore: MetaServer %pI4 did not prove it holds the cluster key: not used\n",
			    &krc_mc.dst.sin_addr);
	return false;
}

static int krc_mc_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct krc_mc_conn *mc = id->context;
	struct rdma_conn_param param = {};
	struct krc_meta_hello hello;
	u8 hbuf[KRC_CM_HELLO_SIZE];
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, 2000);
		if (ret)
			krc_mc_cm_done(mc, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = krc_mc_create_qp(mc);
		if (!ret) {
			hello.node_id = krc_node.card.node_id;
			hello.incarnation = krc_incarnation;
			get_random_bytes(mc->nonces.member, KRC_NONCE_LEN);
			memcpy(hello.nonce, mc->nonces.member, KRC_NONCE_LEN);
			krc_meta_hello_encode(&hello, hbuf);
			param.private_data = hbuf;
			param.private_data_len = sizeof(hbuf);
			param.initiator_depth =
				min_t(int, 16, krc_node.dev->ibdev->attrs.max_qp_init_rd_atom);
			/*
			 * 6, not 7: rxe takes 7 for "retry for ever", and
			 * the host's side of the connection takes its count
			 * from here: a member that dies must make the host's
			 * keepalive fail (meta_member.c).
			 */
			param.retry_count = 6;
			param.rnr_retry_count = 7;
			ret = rdma_connect_locked(id, &param);
		}
		if (ret)
			krc_mc_cm_done(mc, ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = krc_mt_desc_decode(ev->param.conn.private_data,
					 ev->param.conn.private_data_len,
					 &mc->desc);
		if (!ret && !krc_mc_desc_authentic(mc, ev)) {
			ret = -EACCES;
			memset(&mc->desc, 0, sizeof(mc->desc));
		}
		if (!ret) {
			memcpy(mc->nonces.host, mc->desc.nonce, KRC_NONCE_LEN);
			mc->geom.nslots = mc->desc.nslots;
			mc->geom.nphys = mc->desc.nphys;
			mc->geom.seed = mc->desc.seed;
			mc->geom.incarnation = mc->desc.incarnation;
		}
		krc_mc_cm_done(mc, ret);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		krc_mc_cm_done(mc, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_REJECTED:
		krc_mc_cm_done(mc, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		krc_mc_cm_done(mc, -ECONNRESET);
		spin_lock_bh(&mc->lock);
		mc->dead = true;
		spin_unlock_bh(&mc->lock);
		if (mc == READ_ONCE(krc_mc.cur)) {
			pr_warn("krcore: MetaServer %pI4 disconnected\n",
				&krc_mc.dst.sin_addr);
			krc_event(KRC_EV_META_DISCONNECTS);
			krc_mc_schedule_reconnect();
		}
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Tear a connection down: no new posts, flush what is posted (every
 * waiter gets its completion), destroy. Process context, not a handler.
 */
static void krc_mc_conn_destroy(struct krc_mc_conn *mc)
{
	struct ib_device *ibdev = krc_node.dev->ibdev;
	int i;

	spin_lock_bh(&mc->lock);
	mc->dead = true;
	spin_unlock_bh(&mc->lock);
	if (mc->id) {
		rdma_disconnect(mc->id);
		for (i = 0; i < 400 && atomic_read(&mc->outstanding) > 0; i++)
			usleep_range(5000, 10000);
		if (mc->id->qp) {
			rdma_destroy_qp(mc->id);
			krc_obj_destroyed(KRC_OBJ_QP);
		}
	}
	if (mc->cq) {
		ib_free_cq(mc->cq);
		krc_obj_destroyed(KRC_OBJ_CQ);
	}
	if (mc->id)
		rdma_destroy_id(mc->id);
	for (i = 0; i < KRC_MC_RX; i++)
		krc_msgbuf_free(ibdev, &mc->rx[i]);
	krc_msgbuf_free(ibdev, &mc->tx);
	krc_mc_conn_put(mc);
}

static int krc_mc_rpc(struct krc_mc_conn *mc, struct krc_ctrl_msg *req,
		      struct krc_ctrl_msg *rep)
{
	int ret;

	const u8 *key = krc_key();

	if (!key)
		return -ENOKEY;
	req->req_id = ++krc_mc.rpc_seq;
	req->card = krc_node.card;
	/* Fault injection: speak for another address (the host refuses). */
	if (READ_ONCE(krc_fault_meta_foreign_card))
		req->card.gid[15] ^= 0x40;
	krc_msg_sign(req, key, &mc->nonces, KRC_MAC_MEMBER);
	/* Fault injection: a MAC the host cannot verify. */
	if (krc_fault_take(&krc_fault_meta_bad_mac))
		req->mac[0] ^= 1;
	reinit_completion(&mc->rpc_done);
	WRITE_ONCE(mc->rpc_id, req->req_id);
	spin_lock_bh(&mc->lock);
	if (mc->dead) {
		ret = -ENOTCONN;
	} else {
		atomic_inc(&mc->outstanding);
		ret = krc_msgbuf_send(mc->id->qp, &mc->tx, req);
		if (ret)
			atomic_dec(&mc->outstanding);
	}
	spin_unlock_bh(&mc->lock);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&mc->rpc_done,
					 msecs_to_jiffies(KRC_MC_RPC_MS)))
		return -ETIMEDOUT;
	*rep = mc->rpc_reply;
	return -(int)rep->status;
}

/* Connect and register; on success the connection becomes current. */
static int krc_mc_connect(void)
{
	struct krc_ctrl_msg req = { .type = KRC_MSG_META_REGISTER }, rep;
	struct krc_mc_conn *mc;
	int ret;

	if (!krc_key()) {
		/* Nothing to prove who we are with (key.c said why). */
		krc_event(KRC_EV_META_NO_KEY);
		return -ENOKEY;
	}
	mc = kzalloc(sizeof(*mc), GFP_KERNEL);
	if (!mc)
		return -ENOMEM;
	krc_obj_created(KRC_OBJ_META_CONN);
	kref_init(&mc->ref);
	spin_lock_init(&mc->lock);
	init_completion(&mc->cm_done);
	init_completion(&mc->rpc_done);
	krc_mc.state = KRCORE_META_CONNECTING;

	mc->id = rdma_create_id(&init_net, krc_mc_cm_handler, mc, RDMA_PS_TCP,
				IB_QPT_RC);
	if (IS_ERR(mc->id)) {
		ret = PTR_ERR(mc->id);
		mc->id = NULL;
		goto err;
	}
	ret = rdma_resolve_addr(mc->id, (struct sockaddr *)&krc_mc.src,
				(struct sockaddr *)&krc_mc.dst, 2000);
	if (ret)
		goto err;
	if (!wait_for_completion_timeout(&mc->cm_done,
					 msecs_to_jiffies(KRC_MC_CONNECT_MS)))
		ret = -ETIMEDOUT;
	else
		ret = mc->cm_status;
	if (ret)
		goto err;

	ret = krc_mc_rpc(mc, &req, &rep);
	if (ret)
		goto err;
	WRITE_ONCE(mc->heard, jiffies);
	spin_lock_bh(&krc_mc.cur_lock);
	krc_mc.cur = mc;
	krc_mc.geom = mc->geom;
	spin_unlock_bh(&krc_mc.cur_lock);
	krc_mc.state = KRCORE_META_REGISTERED;
	krc_mc.backoff_ms = 100;
	krc_event(KRC_EV_META_CONNECTS);
	if (krc_param_prewarm)
		queue_work(krc_wq, &krc_mc.prewarm);
	pr_info("krcore: registered with MetaServer %pI4 (table of %u slots, slot %u)\n",
		&krc_mc.dst.sin_addr, mc->geom.nslots, rep.slot);
	return 0;
err:
	krc_mc.state = KRCORE_META_DOWN;
	krc_mc_conn_destroy(mc);
	return ret;
}

/* Retire the current connection, if any. Caller holds krc_mc.lock. */
static void krc_mc_retire(void)
{
	struct krc_mc_conn *mc;

	lockdep_assert_held(&krc_mc.lock);
	spin_lock_bh(&krc_mc.cur_lock);
	mc = krc_mc.cur;
	krc_mc.cur = NULL;
	spin_unlock_bh(&krc_mc.cur_lock);
	if (mc)
		krc_mc_conn_destroy(mc);
}

static void krc_mc_reconnect_work(struct work_struct *work)
{
	int ret;

	mutex_lock(&krc_mc.lock);
	if (krc_mc.stopping) {
		mutex_unlock(&krc_mc.lock);
		return;
	}
	krc_mc_retire();
	krc_event(KRC_EV_META_RECONNECTS);
	ret = krc_mc_connect();
	if (ret) {
		krc_mc.backoff_ms = min(krc_mc.backoff_ms * 2,
					(unsigned int)KRC_MC_BACKOFF_MAX_MS);
		krc_mc_schedule_reconnect();
	}
	mutex_unlock(&krc_mc.lock);
}

/*
 * The host SENDs a keepalive every meta_keepalive_ms: after eight periods
 * without a word from it (its node went away, or it dropped us and our
 * card after a keepalive it could not deliver), connect and register again.
 */
static void krc_mc_watch_work(struct work_struct *work)
{
	unsigned int ms = READ_ONCE(krc_param_meta_keepalive_ms);
	struct krc_mc_conn *mc;

	if (READ_ONCE(krc_mc.stopping))
		return;
	mc = krc_mc_get_cur();
	if (mc && ms && time_after(jiffies, READ_ONCE(mc->heard) +
				   msecs_to_jiffies(8 * ms))) {
		krc_event(KRC_EV_META_SILENT);
		pr_warn("krcore: MetaServer %pI4 silent for %u ms: reconnecting\n",
			&krc_mc.dst.sin_addr, 8 * ms);
		spin_lock_bh(&mc->lock);
		mc->dead = true;
		spin_unlock_bh(&mc->lock);
		krc_mc_schedule_reconnect();
	}
	krc_mc_conn_put(mc);
	queue_delayed_work(krc_wq, &krc_mc.watch, msecs_to_jiffies(ms ?: 1000));
}

int krc_meta_start(struct krc_node *node)
{
	const char *srv = krc_param_meta_server;
	__be32 ip;
	int ret;

	INIT_DELAYED_WORK(&krc_mc.reconnect, krc_mc_reconnect_work);
	INIT_DELAYED_WORK(&krc_mc.watch, krc_mc_watch_work);
	INIT_WORK(&krc_mc.prewarm, krc_mc_prewarm_work);
	spin_lock(&krc_mc.kop_lock);
	krc_mc.kop_gen++;	/* no buffer of an earlier start is kept */
	spin_unlock(&krc_mc.kop_lock);
	krc_mc.stopping = false;
	krc_mc.local = false;
	krc_mc.backoff_ms = 100;
	if (!srv || !*srv) {
		if (!krc_param_meta_host) {
			krc_mc.state = KRCORE_META_NONE;
			return 0;
		}
		ip = 0;
	} else if (!in4_pton(srv, -1, (u8 *)&ip, -1, NULL)) {
		pr_err("krcore: meta_server=%s is not an IPv4 address\n", srv);
		return -EINVAL;
	}
	if (krc_param_meta_host &&
	    (!ip || !memcmp(&ip, node->card.gid + 12, 4))) {
		/* We host the table: register directly, read it locally. */
		u32 slot;

		ret = krc_meta_host_register(&node->card, &slot);
		if (ret)
			return ret;
		krc_mc.local = true;
		memcpy(krc_mc.gid, node->card.gid, 16);
		krc_mc.state = KRCORE_META_REGISTERED;
		if (krc_param_prewarm)
			queue_work(krc_wq, &krc_mc.prewarm);
		return 0;
	}
	memset(krc_mc.gid, 0, 10);
	krc_mc.gid[10] = 0xff;
	krc_mc.gid[11] = 0xff;
	memcpy(krc_mc.gid + 12, &ip, 4);
	krc_mc.dst.sin_family = AF_INET;
	krc_mc.dst.sin_addr.s_addr = ip;
	krc_mc.dst.sin_port = htons(krc_param_meta_port);
	krc_mc.src.sin_family = AF_INET;
	memcpy(&krc_mc.src.sin_addr.s_addr, node->card.gid + 12, 4);

	mutex_lock(&krc_mc.lock);
	ret = krc_mc_connect();
	if (ret) {
		pr_warn("krcore: MetaServer %pI4:%u unreachable (%d), retrying in the background\n",
			&ip, krc_param_meta_port, ret);
		krc_mc_schedule_reconnect();
	}
	mutex_unlock(&krc_mc.lock);
	queue_delayed_work(krc_wq, &krc_mc.watch, msecs_to_jiffies(1000));
	return 0;
}

void krc_meta_stop(struct krc_node *node)
{
	struct krc_ctrl_msg req = { .type = KRC_MSG_META_DEREGISTER }, rep;
	struct krc_mc_conn *mc;
	struct krc_kop *kop;

	mutex_lock(&krc_mc.lock);
	krc_mc.stopping = true;
	mutex_unlock(&krc_mc.lock);
	spin_lock(&krc_mc.kop_lock);
	kop = krc_mc.kop;
	krc_mc.kop = NULL;
	krc_mc.kop_gen++;
	spin_unlock(&krc_mc.kop_lock);
	if (kop)
		krc_kop_put(kop);
	cancel_delayed_work_sync(&krc_mc.reconnect);
	cancel_delayed_work_sync(&krc_mc.watch);
	cancel_work_sync(&krc_mc.prewarm);

	mutex_lock(&krc_mc.lock);
	if (krc_mc.local) {
		krc_meta_host_deregister(&node->card);
	} else {
		mc = krc_mc_get_cur();
		if (mc && krc_mc_rpc(mc, &req, &rep))
			pr_warn("krcore: deregistration from the MetaServer failed\n");
		krc_mc_conn_put(mc);
		krc_mc_retire();
	}
	krc_mc.local = false;
	krc_mc.state = KRCORE_META_NONE;
	mutex_unlock(&krc_mc.lock);
	krc_meta_members_forget();
}

void krc_meta_info(struct krcore_node_info *info)
{
	struct krc_mc_conn *mc = krc_mc_get_cur();

	info->meta_state = krc_mc.state;
	memcpy(info->meta_gid, krc_mc.gid, 16);
	if (mc) {
		info->meta_nslots = mc->geom.nslots;
		info->meta_incarnation = mc->geom.incarnation;
		krc_mc_conn_put(mc);
	} else if (krc_mc.local) {
		struct krc_mt_geom geom;
		u64 addr;
		u32 rkey;

		if (!krc_meta_host_where(&geom, &addr, &rkey)) {
			info->meta_nslots = geom.nslots;
			info->meta_incarnation = geom.incarnation;
		}
	}
}
