// SPDX-License-Identifier: GPL-2.0
/*
 * meta_host.c - the MetaServer: this node hosts the table of every
 * member's card (module parameter meta_host=1).
 *
 * The table (common/meta_table.h) is kernel memory registered for remote
 * READ: members look cards up with one-sided READs and this CPU never
 * answers a lookup. It is made of physically contiguous chunks (2 MiB
 * when possible) mapped contiguously for the CPU (vmap) and for the RNIC
 * (one fast-registered MR whose pages are the chunks).
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
 */
#include <linux/inet.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include <net/ipv6.h>

#include "control/control.h"
#include "card.h"
#include "meta_fill.h"
#include "meta_table.h"

#define KRC_META_RX	8
#define KRC_META_TX	8
#define KRC_META_MAX_ORDER	9	/* 2 MiB chunks */
#define KRC_META_FILL_MAX	BIT(20)		/* 10.200.0.0/12 */
/* A new connection must sign a request within this time. */
#define KRC_META_AUTH_MS	5000
#define KRC_META_PENDING_MAX	32
#define KRC_META_PENDING_PER_SRC	2

struct krc_meta_member {
	struct list_head node;		/* on host->pending or host->members */
	struct krc_meta_host *host;
	struct rdma_cm_id *id;
	struct ib_cq *cq;
	spinlock_t lock;		/* tx_free, dead, kick */
	bool dead;
	bool kick;			/* it lied: disconnect it */
	bool authed;			/* signed a request (members_lock) */
	struct delayed_work auth_work;	/* the deadline, or the kick */
	struct krc_nonces nonces;	/* of this connection */
	u32 node_id;
	u8 gid[16];			/* where its connection comes from */
	struct list_head tx_free;
	struct krc_msgbuf rx[KRC_META_RX];
	struct krc_msgbuf tx[KRC_META_TX];
};

struct krc_meta_host {
	struct mutex lock;		/* table writes */
	struct krc_mt_geom geom;
	void *table;			/* vmap of the chunks */
	struct page **chunks;
	u32 nchunks;
	unsigned int order;
	struct sg_table sgt;
	bool sg_mapped;
	struct ib_mr *mr;
	u32 used;			/* cards in the table */
	struct rdma_cm_id *listen;
	spinlock_t members_lock;	/* the lists and their counts, authed */
	struct list_head members;	/* signed a request */
	u32 nmembers;
	struct list_head pending;	/* not yet */
	u32 npending;
	struct krc_mt_desc desc;
};

static void krc_meta_table_free(struct krc_meta_host *h)
{
	struct ib_device *ibdev = krc_node.dev->ibdev;
	u32 i;

	if (h->mr) {
		ib_dereg_mr(h->mr);
		krc_obj_destroyed(KRC_OBJ_MR);
	}
	if (h->sg_mapped)
		ib_dma_unmap_sg(ibdev, h->sgt.sgl, h->nchunks, DMA_BIDIRECTIONAL);
	sg_free_table(&h->sgt);
	if (h->table)
		vunmap(h->table);
	for (i = 0; i < h->nchunks; i++)
		if (h->chunks[i])
			__free_pages(h->chunks[i], h->order);
	kfree(h->chunks);
	h->chunks = NULL;
	h->nchunks = 0;
	h->table = NULL;
	h->mr = NULL;
	h->sg_mapped = false;
}

/* Chunks of 2 MiB (or smaller if memory is fragmented), as few as the
 * device's fast registration page list allows.
 */
static int krc_meta_table_alloc(struct krc_meta_host *h, size_t bytes)
{
	struct ib_device *ibdev = krc_node.dev->ibdev;
	u32 max_sg = ibdev->attrs.max_fast_reg_page_list_len;
	struct scatterlist *sg;
	struct page **pages;
	u32 npages, i, k;
	int order;

	for (order = min_t(int, get_order(bytes), KRC_META_MAX_ORDER);
	     order >= 0; order--) {
		size_t chunk = PAGE_SIZE << order;

		h->nchunks = DIV_ROUND_UP(bytes, chunk);
		if (h->nchunks > max_sg)
			return -E2BIG;
		h->order = order;
		h->chunks = kcalloc(h->nchunks, sizeof(*h->chunks), GFP_KERNEL);
		if (!h->chunks)
			return -ENOMEM;
		for (i = 0; i < h->nchunks; i++) {
			h->chunks[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO |
						   __GFP_NOWARN, order);
			if (!h->chunks[i])
				break;
		}
		if (i == h->nchunks)
			break;
		krc_meta_table_free(h);
	}
	if (order < 0)
		return -ENOMEM;

	npages = h->nchunks << h->order;
	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < h->nchunks; i++)
		for (k = 0; k < (1U << h->order); k++)
			pages[(i << h->order) + k] = h->chunks[i] + k;
	h->table = vmap(pages, npages, VM_MAP, PAGE_KERNEL);
	kvfree(pages);
	if (!h->table)
		return -ENOMEM;

	if (sg_alloc_table(&h->sgt, h->nchunks, GFP_KERNEL))
		return -ENOMEM;
	for_each_sg(h->sgt.sgl, sg, h->nchunks, i)
		sg_set_page(sg, h->chunks[i], PAGE_SIZE << h->order, 0);
	if (ib_dma_map_sg(ibdev, h->sgt.sgl, h->nchunks, DMA_BIDIRECTIONAL) !=
	    h->nchunks)
		return -ENOMEM;
	h->sg_mapped = true;
	h->mr = krc_node_reg_mr(h->sgt.sgl, h->nchunks, PAGE_SIZE << h->order,
				IB_ACCESS_REMOTE_READ);
	if (IS_ERR(h->mr)) {
		int ret = PTR_ERR(h->mr);

		h->mr = NULL;
		return ret;
	}
	return 0;
}

/* Table writes: serialised here, each slot under its seqlock. */
int krc_meta_host_register(const struct krcore_card *card, u32 *slot)
{
	struct krc_meta_host *h = krc_node.meta_host;
	struct krcore_card old;
	u32 first, count;
	bool fresh;
	int ret;

	if (!h)
		return -ENODEV;
	mutex_lock(&h->lock);
	/* New entry or update in place? (for the count of cards) */
	krc_mt_window(&h->geom, card->gid, &first, &count);
	for (;;) {
		ret = krc_mt_scan((u8 *)h->table + krc_mt_slot_offset(first),
				  first, count, &h->geom, card->gid, &old, NULL);
		if (ret != -EINPROGRESS)
			break;
		first += count;
		count = min_t(u32, KRC_MT_WINDOW, h->geom.nphys - first);
	}
	fresh = ret == -ENOENT;
	ret = krc_mt_insert(h->table, &h->geom, card, slot);
	if (!ret && fresh)
		h->used++;
	mutex_unlock(&h->lock);
	if (!ret)
		krc_event(KRC_EV_META_REGISTERED);
	return ret;
}

int krc_meta_host_deregister(const struct krcore_card *card)
{
	struct krc_meta_host *h = krc_node.meta_host;
	int ret;

	if (!h)
		return -ENODEV;
	mutex_lock(&h->lock);
	ret = krc_mt_remove(h->table, &h->geom, card->gid, card->incarnation);
	if (!ret)
		h->used--;
	mutex_unlock(&h->lock);
	if (!ret)
		krc_event(KRC_EV_META_DEREGISTERED);
	return ret;
}

/*
 * Testing: register @n synthetic cards, at addresses 10.200.0.0 + i
 * (i < n), as if that many members had registered, so that lookups in a
 * full table can be measured on a small cluster. Stops at the first card
 * the table refuses (-ENOSPC when it is full).
 */
static int krc_meta_host_fill(u32 n)
{
	struct krcore_card card = {
		.card_version = KRCORE_CARD_VERSION,
		.flags = KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4,
		.mac = { 0x02, 0x00, 0x0a, 0xc8 },
		.ud_qkey = krc_param_ctrl_qkey,
		.port_num = 1,
		.active_mtu = 3,
	};
	u8 ip[4];
	u32 i, slot;
	int ret = 0;

	mutex_lock(&krc_node.lock);
	if (!krc_node.up || !krc_node.meta_host) {
		mutex_unlock(&krc_node.lock);
		return -ENODEV;
	}
	card.incarnation = krc_incarnation ^ 0x5a5a5a5a5a5a5a5aULL;
	for (i = 0; i < n; i++) {
		krc_fill_ip(i, ip);
		krc_gid_from_ipv4(card.gid, ip);
		card.mac[4] = ip[2];
		card.mac[5] = ip[3];
		card.node_id = krc_gid_node_id(card.gid);
		card.ud_qpn = krc_fill_qpn(i);
		ret = krc_meta_host_register(&card, &slot);
		if (ret)
			break;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	mutex_unlock(&krc_node.lock);
	pr_info("krcore: meta: test_meta_fill: %u synthetic cards registered (%d)\n",
		i, ret);
	return ret;
}

static int krc_test_meta_fill_set(const char *val, const struct kernel_param *kp)
{
	u32 n;
	int ret = kstrtou32(val, 0, &n);

	if (ret)
		return ret;
	if (n > KRC_META_FILL_MAX)
		return -ERANGE;
	return krc_meta_host_fill(n);
}

static const struct kernel_param_ops krc_test_meta_fill_ops = {
	.set = krc_test_meta_fill_set,
};

module_param_cb(test_meta_fill, &krc_test_meta_fill_ops, NULL, 0200);
MODULE_PARM_DESC(test_meta_fill,
		 "Testing (MetaServer host): register this many synthetic cards, addresses 10.200.0.0 + i (at most 1048576)");

/* Where a member on this very node READs the table (loopback). */
int krc_meta_host_where(struct krc_mt_geom *geom, u64 *addr, u32 *rkey)
{
	struct krc_meta_host *h = krc_node.meta_host;

	if (!h)
		return -ENODEV;
	*geom = h->geom;
	*addr = h->mr->iova;
	*rkey = h->mr->rkey;
	return 0;
}

void krc_meta_host_info(struct krcore_node_info *info)
{
	struct krc_meta_host *h = krc_node.meta_host;

	if (!h)
		return;
	info->flags |= KRCORE_NODE_F_META_HOST;
	mutex_lock(&h->lock);
	info->meta_used = h->used;
	mutex_unlock(&h->lock);
}

/* Members: one RC connection each. */

static void krc_member_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_msgbuf *b = container_of(wc->wr_cqe, struct krc_msgbuf, cqe);
	struct krc_meta_member *m = b->ctx;

	spin_lock(&m->lock);
	list_add(&b->node, &m->tx_free);
	spin_unlock(&m->lock);
}

static void krc_member_reply(struct krc_meta_member *m, u64 req_id,
			     int status, u32 slot)
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
		return;
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
	if (ret)
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
		}
	}
	spin_unlock(&h->members_lock);
	if (ret)
		krc_event(KRC_EV_META_REFUSED);
	return ret;
}

/* The deadline of a pending connection, or the kick of a liar. */
static void krc_member_auth_work(struct work_struct *work)
{
	struct krc_meta_member *m = container_of(to_delayed_work(work),
						 struct krc_meta_member,
						 auth_work);
	bool go, late;

	spin_lock(&m->lock);
	late = !READ_ONCE(m->authed) && !m->kick;
	go = !m->dead && (m->kick || late);
	spin_unlock(&m->lock);
	if (!go)
		return;
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
		ret = krc_meta_host_register(&msg.card, &slot);
		krc_member_reply(m, msg.req_id, -ret, slot);
	} else {
		ret = krc_meta_host_deregister(&msg.card);
		krc_member_reply(m, msg.req_id, -ret, 0);
	}
	spin_lock(&m->lock);
	if (!m->dead && krc_msgbuf_post_recv(m->id->qp, b))
		pr_warn_ratelimited("krcore: meta: cannot re-post a receive\n");
	spin_unlock(&m->lock);
}

/* Stop a member and destroy its QP (its cm_id stays). */
static void krc_member_free_qp(struct krc_meta_member *m)
{
	/* It may be disconnecting m->id: done before the id goes. */
	cancel_delayed_work_sync(&m->auth_work);
	spin_lock(&m->lock);
	m->dead = true;
	spin_unlock(&m->lock);
	if (m->id->qp) {
		rdma_destroy_qp(m->id);
		krc_obj_destroyed(KRC_OBJ_QP);
	}
}

/* Free a member's CQ and buffers, and the member: its id is not used. */
static void krc_member_free_rest(struct krc_meta_member *m)
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

static int krc_meta_host_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev)
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
		if (m == (void *)h || !krc_member_unlink(h, m))
			return 0;	/* stop owns it */
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
			rdma_disconnect(id);
		krc_member_free(m);
		return 1;
	default:
		return 0;
	}
}

int krc_meta_host_start(struct krc_node *node)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(krc_param_meta_port),
	};
	struct krc_meta_host *h;
	size_t bytes;
	int ret;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	mutex_init(&h->lock);
	spin_lock_init(&h->members_lock);
	INIT_LIST_HEAD(&h->members);
	INIT_LIST_HEAD(&h->pending);
	krc_mt_geom_init(&h->geom, krc_param_meta_slots, get_random_u64(),
			 krc_incarnation);
	node->meta_host = h;
	bytes = krc_mt_bytes(&h->geom);
	ret = krc_meta_table_alloc(h, bytes);
	if (ret) {
		pr_err("krcore: meta: cannot allocate a %zu-byte table: %d\n",
		       bytes, ret);
		goto err;
	}
	ret = krc_mt_format(h->table, &h->geom);
	if (ret)
		goto err;
	h->desc.addr = h->mr->iova;
	h->desc.rkey = h->mr->rkey;
	h->desc.nslots = h->geom.nslots;
	h->desc.nphys = h->geom.nphys;
	h->desc.seed = h->geom.seed;
	h->desc.incarnation = h->geom.incarnation;

	h->listen = rdma_create_id(&init_net, krc_meta_host_cm, h, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(h->listen)) {
		ret = PTR_ERR(h->listen);
		h->listen = NULL;
		goto err;
	}
	ret = rdma_bind_addr(h->listen, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(h->listen, 128);
	if (ret) {
		pr_err("krcore: meta: cannot listen on port %u: %d\n",
		       krc_param_meta_port, ret);
		goto err;
	}
	pr_info("krcore: meta: hosting a table of %u slots (%zu KiB in %u chunks), port %u\n",
		h->geom.nslots, bytes >> 10, h->nchunks, krc_param_meta_port);
	return 0;
err:
	krc_meta_host_stop(node);
	return ret;
}

void krc_meta_host_stop(struct krc_node *node)
{
	struct krc_meta_host *h = node->meta_host;
	struct krc_meta_member *m;
	struct rdma_cm_id *id;

	if (!h)
		return;
	if (h->listen)
		rdma_destroy_id(h->listen);
	for (;;) {
		spin_lock(&h->members_lock);
		m = list_first_entry_or_null(&h->members,
					     struct krc_meta_member, node);
		if (!m)
			m = list_first_entry_or_null(&h->pending,
						     struct krc_meta_member,
						     node);
		if (m) {
			/* Ours from here on (krc_member_unlink()). */
			list_del_init(&m->node);
			if (m->authed)
				h->nmembers--;
			else
				h->npending--;
		}
		spin_unlock(&h->members_lock);
		if (!m)
			break;
		id = m->id;
		rdma_disconnect(id);
		krc_member_free_qp(m);
		/*
		 * Waits for a handler still running on the id (it may look
		 * at the member): only then does the member go.
		 */
		rdma_destroy_id(id);
		krc_member_free_rest(m);
	}
	node->meta_host = NULL;
	krc_meta_table_free(h);
	kfree(h);
}
