// SPDX-License-Identifier: GPL-2.0
/*
 * meta_member.c - the members of the MetaServer this node hosts, as the
 * host sees them: one RC connection each (meta_host.c has the table).
 *
 * Members connect once, at module load, with kernel rdma_cm to meta_port;
 * the accept carries the table's address, rkey and geometry. Over that RC
 * connection they SEND register/deregister requests (their card), which
 * this CPU applies to the table under the seqlock protocol of each slot.
 *
 * Only a node's kernel may change the table (common/auth.h): the hello
 * and the accept carry fresh nonces, the accept's descriptor is signed
 * with the cluster key, and so is every request and every reply. A new
 * connection is pending until its first correctly signed request; one
 * that sends a wrong MAC, or none within KRC_META_AUTH_MS, is
 * disconnected. Pending connections are few (KRC_META_PENDING_MAX, and
 * KRC_META_PENDING_PER_SRC from one address), so no one without the key
 * can hold the members' places. A member speaks only for the address its
 * connection comes from.
 *
 * A member's card lives as long as its connection: every meta_keepalive_ms
 * the host SENDs each member a signed reply to no request (req_id 0, which
 * no request of a member carries); one the RNIC cannot deliver (the node
 * crashed or is cut off) makes the host remove the card that member
 * registered and disconnect it, and so does any other end of its
 * connection. The member, hearing nothing for eight periods, reconnects and
 * registers again (meta_client.c).
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include <net/ipv6.h>

#include "control/meta_host.h"

/* A new connection must sign a request within this time. */
#define KRC_META_AUTH_MS	5000
#define KRC_META_PENDING_MAX	32
#define KRC_META_PENDING_PER_SRC	2
/*
 * The ACK timeout of a member's QP, 4.096 us * 2^17 = 0.5 s (rdma_cm may
 * leave it 0 on RoCE: no retransmission, so an undelivered keepalive
 * would never fail); with the 6 retries the member's connect asks for
 * (meta_client.c), a member is given up after about 4 s without an ACK.
 */
#define KRC_META_ACK_TIMEOUT	17

static void krc_member_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_msgbuf *b = container_of(wc->wr_cqe, struct krc_msgbuf, cqe);
	struct krc_meta_member *m = b->ctx;
	bool lost;

	spin_lock(&m->lock);
	list_add(&b->node, &m->tx_free);
	/* Not delivered: the member is gone (a flush follows the first). */
	lost = wc->status != IB_WC_SUCCESS &&
	       wc->status != IB_WC_WR_FLUSH_ERR && !m->lost && !m->dead;
	if (lost)
		m->lost = true;
	spin_unlock(&m->lock);
	if (lost)
		mod_delayed_work(krc_wq, &m->auth_work, 0);
}

/* SEND a signed reply (req_id 0: a keepalive): 0 or -errno. */
static int krc_member_send(struct krc_meta_member *m, u64 req_id, int status,
			   u32 slot)
{
	struct krc_ctrl_msg rep = {
		.type = KRC_MSG_META_REPLY,
		.req_id = req_id,
		.card = krc_node.card,
		.status = status,
		.slot = slot,
	};
	const u8 *key = krc_key();
	struct krc_msgbuf *b;
	int ret = -ENOBUFS;

	if (!key)
		return -ENOKEY;
	krc_msg_sign(&rep, key, &m->nonces, KRC_MAC_HOST);
	spin_lock(&m->lock);
	b = list_first_entry_or_null(&m->tx_free, struct krc_msgbuf, node);
	if (b && !m->dead) {
		list_del(&b->node);
		ret = krc_msgbuf_send(m->id->qp, b, &rep);
		if (ret)
			list_add(&b->node, &m->tx_free);
	}
	spin_unlock(&m->lock);
	return ret;
}

static void krc_member_reply(struct krc_meta_member *m, u64 req_id,
			     int status, u32 slot)
{
	int ret = krc_member_send(m, req_id, status, slot);

	if (ret && ret != -ENOKEY)
		pr_warn_ratelimited("krcore: meta: cannot reply to node %u: %d\n",
				    m->node_id, ret);
}

/*
 * Disconnect @m (it lied, or never proved it holds the key): its later
 * messages are ignored, rdma_cm's DISCONNECTED frees it. Any context.
 */
static void krc_member_kick(struct krc_meta_member *m, const char *why)
{
	bool first;

	spin_lock(&m->lock);
	first = !m->kick && !m->dead;
	m->kick = true;
	spin_unlock(&m->lock);
	if (!first)
		return;
	krc_event(KRC_EV_META_AUTH_FAILED);
	pr_warn_ratelimited("krcore: meta: %s from %pI6 (node %u): disconnected\n",
			    why, m->gid, m->node_id);
	mod_delayed_work(krc_wq, &m->auth_work, 0);
}

/*
 * Does @msg carry the MAC of this connection under the cluster key? The
 * first such request makes @m a member (if there is room): 0, -EACCES
 * (no key, wrong MAC) or -ENOSPC.
 */
static int krc_member_check(struct krc_meta_member *m,
			    const struct krc_ctrl_msg *msg)
{
	struct krc_meta_host *h = m->host;
	const u8 *key = krc_key();
	bool first = false;
	int ret = 0;

	if (!key || !krc_msg_check_mac(msg, key, &m->nonces, KRC_MAC_MEMBER))
		return -EACCES;

	spin_lock(&h->members_lock);
	if (!m->authed && !list_empty(&m->node)) {
		if (h->nmembers >= krc_param_meta_max_members) {
			ret = -ENOSPC;
		} else {
			list_move_tail(&m->node, &h->members);
			h->npending--;
			h->nmembers++;
			m->authed = true;
			first = true;
		}
	}
	spin_unlock(&h->members_lock);
	if (ret)
		krc_event(KRC_EV_META_REFUSED);
	if (first)
		queue_delayed_work(krc_wq, &m->ka_work, 0);
	return ret;
}

/* The keepalive: a signed reply to no request, every meta_keepalive_ms. */
static void krc_member_ka_work(struct work_struct *work)
{
	struct krc_meta_member *m = container_of(to_delayed_work(work),
						 struct krc_meta_member,
						 ka_work);
	unsigned int ms = READ_ONCE(krc_param_meta_keepalive_ms);

	if (READ_ONCE(m->dead) || READ_ONCE(m->kick) || READ_ONCE(m->lost))
		return;
	/* No buffer free: the ones in flight will tell whether it is alive. */
	if (ms && !krc_member_send(m, 0, 0, 0))
		krc_event(KRC_EV_META_KEEPALIVES);
	/* Off: look again in a second whether it was turned on. */
	queue_delayed_work(krc_wq, &m->ka_work, msecs_to_jiffies(ms ?: 1000));
}

/* The deadline of a pending connection, or the kick of a liar. */
static void krc_member_auth_work(struct work_struct *work)
{
	struct krc_meta_member *m = container_of(to_delayed_work(work),
						 struct krc_meta_member,
						 auth_work);
	bool go, late, lost;

	spin_lock(&m->lock);
	lost = m->lost && !m->kick;
	late = !READ_ONCE(m->authed) && !m->kick && !lost;
	go = !m->dead && (m->kick || late || lost);
	spin_unlock(&m->lock);
	if (!go)
		return;
	if (lost) {
		krc_event(KRC_EV_META_MEMBERS_LOST);
		pr_warn_ratelimited("krcore: meta: node %u (%pI6) does not take a keepalive: its card removed, disconnected\n",
				    m->node_id, m->gid);
		krc_meta_host_member_gone(m);
	}
	if (late) {
		krc_event(KRC_EV_META_AUTH_TIMEOUTS);
		pr_warn_ratelimited("krcore: meta: a connection from %pI6 signed nothing in %u ms: disconnected\n",
				    m->gid, KRC_META_AUTH_MS);
	}
	/* Its QP goes to error; DISCONNECTED follows and frees it. */
	rdma_disconnect(m->id);
}

static void krc_member_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_msgbuf *b = container_of(wc->wr_cqe, struct krc_msgbuf, cqe);
	struct krc_meta_member *m = b->ctx;
	struct krc_ctrl_msg msg;
	u32 slot = 0;
	int ret;

	/* A dead member's id may be gone already (krc_meta_host_stop). */
	if (wc->status != IB_WC_SUCCESS || READ_ONCE(m->dead) ||
	    READ_ONCE(m->kick))
		return;
	krc_msgbuf_sync(m->id->qp, b);
	ret = krc_msg_decode(b->buf, wc->byte_len, &msg);
	if (!ret && msg.type != KRC_MSG_META_REGISTER &&
	    msg.type != KRC_MSG_META_DEREGISTER)
		ret = -EBADMSG;
	if (ret) {
		krc_event(KRC_EV_CTRL_RX_BAD);
		krc_member_kick(m, "a malformed request");
		return;
	}
	ret = krc_member_check(m, &msg);
	if (ret == -EACCES) {
		krc_member_kick(m, "a request without the cluster key's MAC");
		return;
	}
	if (ret) {
		/* Signed, but no room for one more member. */
		krc_member_reply(m, msg.req_id, -ret, 0);
		krc_member_kick(m, "one member too many");
		return;
	}
	if (memcmp(msg.card.gid, m->gid, 16)) {
		/* A member speaks only for the address it connects from. */
		krc_event(KRC_EV_META_REFUSED);
		pr_warn_ratelimited("krcore: meta: node %u tried to change the card of %pI6, refused\n",
				    m->node_id, msg.card.gid);
		krc_member_reply(m, msg.req_id, EPERM, 0);
	} else if (msg.type == KRC_MSG_META_REGISTER) {
		ret = krc_meta_host_register_from(m, &msg.card, &slot);
		krc_member_reply(m, msg.req_id, -ret, slot);
	} else {
		ret = krc_meta_host_deregister_from(m, &msg.card);
		krc_member_reply(m, msg.req_id, -ret, 0);
	}
	spin_lock(&m->lock);
	if (!m->dead && krc_msgbuf_post_recv(m->id->qp, b))
		pr_warn_ratelimited("krcore: meta: cannot re-post a receive\n");
	spin_unlock(&m->lock);
}

/* Stop a member and destroy its QP (its cm_id stays). */
void krc_member_free_qp(struct krc_meta_member *m)
{
	/* It may be disconnecting m->id: done before the id goes. */
	spin_lock(&m->lock);
	m->dead = true;
	spin_unlock(&m->lock);
	cancel_delayed_work_sync(&m->auth_work);
	cancel_delayed_work_sync(&m->ka_work);
	if (m->id->qp) {
		rdma_destroy_qp(m->id);
		krc_obj_destroyed(KRC_OBJ_QP);
	}
}

/* Free a member's CQ and buffers, and the member: its id is not used. */
void krc_member_free_rest(struct krc_meta_member *m)
{
	struct ib_device *ibdev = krc_node.dev->ibdev;
	int i;

	if (m->cq) {
		ib_free_cq(m->cq);
		krc_obj_destroyed(KRC_OBJ_CQ);
	}
	for (i = 0; i < KRC_META_RX; i++)
		krc_msgbuf_free(ibdev, &m->rx[i]);
	for (i = 0; i < KRC_META_TX; i++)
		krc_msgbuf_free(ibdev, &m->tx[i]);
	/* Testing: keep the memory, so that the unload reports a leak. */
	if (krc_fault_take(&krc_fault_leak_member))
		return;
	kfree(m);
	krc_obj_destroyed(KRC_OBJ_META_MEMBER);
}

/* Free a member's QP, CQ and buffers, and the member (not its cm_id). */
static void krc_member_free(struct krc_meta_member *m)
{
	krc_member_free_qp(m);
	krc_member_free_rest(m);
}

/* The address a passive cm_id's connection comes from, as a GID. */
static void krc_member_source(struct rdma_cm_id *id, u8 gid[16])
{
	struct sockaddr *sa = (struct sockaddr *)&id->route.addr.dst_addr;

	memset(gid, 0, 16);
	if (sa->sa_family == AF_INET)
		ipv6_addr_set_v4mapped(((struct sockaddr_in *)sa)->sin_addr.s_addr,
				       (struct in6_addr *)gid);
	else if (sa->sa_family == AF_INET6)
		memcpy(gid, &((struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

/*
 * Room for one more pending connection from @gid? Counts it (0), or
 * -ENOSPC. Members that signed count against meta_max_members.
 */
static int krc_meta_pending_take(struct krc_meta_host *h, const u8 gid[16])
{
	struct krc_meta_member *m;
	u32 same = 0;
	int ret = 0;

	spin_lock(&h->members_lock);
	list_for_each_entry(m, &h->pending, node)
		if (!memcmp(m->gid, gid, 16))
			same++;
	if (h->nmembers >= krc_param_meta_max_members ||
	    h->npending >= KRC_META_PENDING_MAX ||
	    same >= KRC_META_PENDING_PER_SRC)
		ret = -ENOSPC;
	else
		h->npending++;
	spin_unlock(&h->members_lock);
	return ret;
}

static void krc_meta_pending_put(struct krc_meta_host *h)
{
	spin_lock(&h->members_lock);
	h->npending--;
	spin_unlock(&h->members_lock);
}

static int krc_member_accept(struct krc_meta_host *h, struct rdma_cm_id *id,
			     struct rdma_cm_event *ev)
{
	struct ib_device *ibdev = krc_node.dev->ibdev;
	struct ib_qp_init_attr init = {};
	struct rdma_conn_param param = {};
	u8 desc[KRC_MT_DESC_SIZE], gid[16];
	struct krc_meta_hello hello;
	struct krc_mt_desc d;
	struct krc_meta_member *m;
	const u8 *key = krc_key();
	int i, ret;

	ret = krc_meta_hello_decode(ev->param.conn.private_data,
				    ev->param.conn.private_data_len, &hello);
	if (ret || id->device != ibdev) {
		krc_event(KRC_EV_CTRL_RX_BAD);
		if (ret == -EPROTO)
			pr_warn_ratelimited("krcore: meta: a member of another protocol version (no cluster key?) refused\n");
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return ret ? ret : -EINVAL;
	}
	if (!key) {
		krc_event(KRC_EV_META_NO_KEY);
		pr_warn_ratelimited("krcore: meta: no cluster key here: node %u refused\n",
				    hello.node_id);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return -ENOKEY;
	}
	krc_member_source(id, gid);
	ret = krc_meta_pending_take(h, gid);
	if (ret) {
		krc_event(KRC_EV_META_REFUSED);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return ret;
	}
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		krc_meta_pending_put(h);
		return -ENOMEM;
	}
	krc_obj_created(KRC_OBJ_META_MEMBER);
	m->host = h;
	m->id = id;
	m->node_id = hello.node_id;
	memcpy(m->gid, gid, 16);
	memcpy(m->nonces.member, hello.nonce, KRC_NONCE_LEN);
	get_random_bytes(m->nonces.host, KRC_NONCE_LEN);
	spin_lock_init(&m->lock);
	INIT_LIST_HEAD(&m->tx_free);
	INIT_LIST_HEAD(&m->node);
	INIT_DELAYED_WORK(&m->auth_work, krc_member_auth_work);
	INIT_DELAYED_WORK(&m->ka_work, krc_member_ka_work);
	id->context = m;

	m->cq = ib_alloc_cq(ibdev, m, KRC_META_RX + KRC_META_TX + 1, 0,
			    IB_POLL_WORKQUEUE);
	if (IS_ERR(m->cq)) {
		ret = PTR_ERR(m->cq);
		m->cq = NULL;
		goto err;
	}
	krc_obj_created(KRC_OBJ_CQ);
	init.send_cq = m->cq;
	init.recv_cq = m->cq;
	init.qp_type = IB_QPT_RC;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.cap.max_send_wr = KRC_META_TX;
	init.cap.max_recv_wr = KRC_META_RX;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	ret = rdma_create_qp(id, krc_node.dev->pd, &init);
	if (ret)
		goto err;
	krc_obj_created(KRC_OBJ_QP);
	for (i = 0; i < KRC_META_RX; i++) {
		ret = krc_msgbuf_alloc(ibdev, &m->rx[i], KRC_MSG_SIZE,
				       DMA_FROM_DEVICE, krc_member_rx_done, m);
		if (!ret)
			ret = krc_msgbuf_post_recv(id->qp, &m->rx[i]);
		if (ret)
			goto err;
	}
	for (i = 0; i < KRC_META_TX; i++) {
		ret = krc_msgbuf_alloc(ibdev, &m->tx[i], KRC_MSG_SIZE,
				       DMA_TO_DEVICE, krc_member_tx_done, m);
		if (ret)
			goto err;
		list_add(&m->tx[i].node, &m->tx_free);
	}

	d = h->desc;
	memcpy(d.nonce, m->nonces.host, KRC_NONCE_LEN);
	krc_mt_desc_encode(&d, desc);
	krc_mt_desc_sign(desc, key, m->nonces.member);
	param.private_data = desc;
	param.private_data_len = sizeof(desc);
	param.responder_resources = min_t(int, 16, ibdev->attrs.max_qp_rd_atom);
	param.initiator_depth = 0;
	param.rnr_retry_count = 7;
	ret = rdma_set_ack_timeout(id, KRC_META_ACK_TIMEOUT);
	if (!ret)
		ret = rdma_accept(id, &param);
	if (ret)
		goto err;
	spin_lock(&h->members_lock);
	list_add(&m->node, &h->pending);
	spin_unlock(&h->members_lock);
	queue_delayed_work(krc_wq, &m->auth_work,
			   msecs_to_jiffies(KRC_META_AUTH_MS));
	return 0;
err:
	pr_warn("krcore: meta: cannot accept node %u: %d\n", hello.node_id, ret);
	id->context = h;
	krc_member_free(m);
	krc_meta_pending_put(h);
	return ret;
}

/* True if @m was still on the list: then the caller owns its teardown. */
static bool krc_member_unlink(struct krc_meta_host *h,
			      struct krc_meta_member *m)
{
	bool owned = false;

	spin_lock(&h->members_lock);
	if (!list_empty(&m->node)) {
		list_del_init(&m->node);
		if (m->authed)
			h->nmembers--;
		else
			h->npending--;
		owned = true;
	}
	spin_unlock(&h->members_lock);
	return owned;
}

int krc_meta_host_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct krc_meta_host *h = krc_node.meta_host;
	struct krc_meta_member *m;

	if (!h)
		return 0;
	if (id == h->listen) {
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			pr_warn("krcore: meta: device removed under the listener\n");
		return 0;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* Non-zero: rdma_cm destroys the new id. */
		return krc_member_accept(h, id, ev) ? 1 : 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		m = id->context;
		krc_event(KRC_EV_META_MEMBERS_ACCEPTED);
		pr_info("krcore: meta: node %u connected\n", m->node_id);
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		m = id->context;
		if (m == (void *)h)
			return 0;
		/* Its card goes with it (unless stop owns it: then the table). */
		krc_meta_host_member_gone(m);
		if (!krc_member_unlink(h, m))
			return 0;	/* stop owns it */
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
			rdma_disconnect(id);
		krc_member_free(m);
		return 1;
	default:
		return 0;
	}
}
