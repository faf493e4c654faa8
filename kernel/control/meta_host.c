// SPDX-License-Identifier: GPL-2.0
/*
 * meta_host.c - the MetaServer: this node hosts the table of every
 * member's card (module parameter meta_host=1).
 *
 * The table (common/meta_table.h) is kernel memory registered for remote
 * READ: members look cards up with one-sided READs and this CPU never
 * answers a lookup. It is made of physically contiguous chunks (2 MiB
 * when possible, kmem.c) mapped contiguously for the CPU (vmap) and for
 * the RNIC (one fast-registered MR whose pages are the chunks).
 *
 * This file: the table, its writes (each slot under its seqlock
 * protocol), where a member on this node READs it, and hosting started
 * and stopped. Members change the table only over their connections to
 * this node (meta_member.c); meta_host.h has what the two files share.
 */
#include <linux/inet.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/rdma_cm.h>

#include "control/meta_host.h"
#include "card.h"
#include "meta_fill.h"
#include "meta_table.h"

#define KRC_META_FILL_MAX	BIT(20)		/* 10.200.0.0/12 */

static void krc_meta_table_free(struct krc_meta_host *h)
{
	if (h->table)
		vunmap(h->table);
	h->table = NULL;
	krc_kmem_free(&h->mem);
	h->mr = NULL;
}

/* The table: registered for remote READ (kmem.c), mapped for the CPU. */
static int krc_meta_table_alloc(struct krc_meta_host *h, size_t bytes)
{
	int ret;

	ret = krc_kmem_alloc(&h->mem, bytes, IB_ACCESS_REMOTE_READ,
			     KRC_KMEM_IOVA_DMA);
	if (ret)
		return ret;
	h->mr = h->mem.mr;
	h->table = krc_kmem_vmap(&h->mem);
	return h->table ? 0 : -ENOMEM;
}

/* Table writes: serialised here (h->lock), each slot under its seqlock. */
static int krc_meta_host_put(struct krc_meta_host *h,
			     const struct krcore_card *card, u32 *slot)
{
	struct krcore_card old;
	u32 first, count;
	bool fresh;
	int ret;

	lockdep_assert_held(&h->lock);
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
	if (!ret)
		krc_event(KRC_EV_META_REGISTERED);
	return ret;
}

static int krc_meta_host_drop(struct krc_meta_host *h,
			      const struct krcore_card *card)
{
	int ret;

	lockdep_assert_held(&h->lock);
	ret = krc_mt_remove(h->table, &h->geom, card->gid, card->incarnation);
	if (!ret) {
		h->used--;
		krc_event(KRC_EV_META_DEREGISTERED);
	}
	return ret;
}

int krc_meta_host_register(const struct krcore_card *card, u32 *slot)
{
	struct krc_meta_host *h = krc_node.meta_host;
	int ret;

	if (!h)
		return -ENODEV;
	mutex_lock(&h->lock);
	ret = krc_meta_host_put(h, card, slot);
	mutex_unlock(&h->lock);
	return ret;
}

int krc_meta_host_deregister(const struct krcore_card *card)
{
	struct krc_meta_host *h = krc_node.meta_host;
	int ret;

	if (!h)
		return -ENODEV;
	mutex_lock(&h->lock);
	ret = krc_meta_host_drop(h, card);
	mutex_unlock(&h->lock);
	return ret;
}

int krc_meta_host_register_from(struct krc_meta_member *m,
				const struct krcore_card *card, u32 *slot)
{
	struct krc_meta_host *h = m->host;
	struct krc_meta_member *o;
	int ret;

	mutex_lock(&h->lock);
	ret = krc_meta_host_put(h, card, slot);
	if (!ret) {
		/* The entry is this registration's, no older connection's. */
		spin_lock(&h->members_lock);
		list_for_each_entry(o, &h->members, node)
			if (!memcmp(o->gid, m->gid, 16))
				o->owns_card = false;
		spin_unlock(&h->members_lock);
		m->owns_card = true;
		m->card = *card;
	}
	mutex_unlock(&h->lock);
	return ret;
}

int krc_meta_host_deregister_from(struct krc_meta_member *m,
				  const struct krcore_card *card)
{
	struct krc_meta_host *h = m->host;
	int ret;

	mutex_lock(&h->lock);
	ret = krc_meta_host_drop(h, card);
	if (ret != -ESTALE)
		m->owns_card = false;
	mutex_unlock(&h->lock);
	return ret;
}

void krc_meta_host_member_gone(struct krc_meta_member *m)
{
	struct krc_meta_host *h = m->host;
	bool linked;

	mutex_lock(&h->lock);
	spin_lock(&h->members_lock);
	linked = !list_empty(&m->node);
	spin_unlock(&h->members_lock);
	/* Unlinked: the host is stopping, and the table goes with it. */
	if (linked && m->owns_card && !krc_meta_host_drop(h, &m->card))
		pr_info("krcore: meta: the card of %pI6 (node %u) removed: its connection is gone\n",
			m->gid, m->node_id);
	m->owns_card = false;
	mutex_unlock(&h->lock);
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
		h->geom.nslots, bytes >> 10, h->mem.nchunks, krc_param_meta_port);
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
