// SPDX-License-Identifier: GPL-2.0
/*
 * lmr_name_host.c - the names of the regions this node owns (lmr_host.h):
 * MEM_PUBLISH and MEM_UNPUBLISH from a region's holder. A name is one more
 * registration of the region's memory with exactly the name's rights (the
 * RNIC checks them: a read-only name's key cannot write), and a slot in
 * this node's names table (name_table.c), which any node reads with one
 * READ (lmr_name.c). UNPUBLISH takes the name out of the table, then
 * deregisters its MR, so its key dies at once for everyone, and the locks
 * taken with it go (lock_host.c); a region's names go with it. MEM_LOOKUP
 * answers, for a node with no RC connection to READ over, what that READ
 * would find.
 */
#include <linux/slab.h>

#include "data/lmr_host.h"

/*
 * Name @n leaves the table and the keys (krc_lmrh.lock held): peers no
 * longer find it, datagrams no longer reach the region with its key. Its
 * MR, and so the key itself, goes after (krc_lmrh_name_free()).
 */
void krc_lmrh_name_unlink(struct krc_lmr_name *n)
{
	lockdep_assert_held(&krc_lmrh.lock);
	xa_erase(&krc_lmrh.nkeys, n->mr->rkey);
	krc_names_drop(n->slot);
	list_del(&n->node);
	krc_event(KRC_EV_NAME_DROPS);
}

/* A PUBLISH's answer: the name's key and rights, or a status. */
static void krc_lmrh_name_reply(struct krc_peer *peer, u64 req_id, int status,
				const struct krc_lmr_name *n, u32 region)
{
	struct krc_ctrl_msg msg = {
		.type = KRC_MSG_MEM_PUBLISH_REP,
		.req_id = req_id,
		.status = -status,
		.region = region,
	};

	if (!status) {
		msg.access = n->access;
		msg.rkey = n->mr->rkey;
		msg.length = n->r->length;
		msg.addr = n->mr->iova;
	} else {
		krc_event(KRC_EV_NAME_REFUSED);
	}
	krc_lmrh_send(peer, &msg);
}

/*
 * A name's registration, on krc_wq: the region's memory once more with
 * the name's rights, then its entry in the table, then the answer.
 */
static void krc_lmrh_name_work(struct work_struct *work)
{
	struct krc_lmr_name *n = container_of(work, struct krc_lmr_name, work);
	struct krc_lmr_region *r = n->r;
	struct krc_peer *peer = n->peer;
	struct krc_name_entry e = {};
	struct ib_mr *mr;
	int ret = 0;

	mr = krc_kmem_reg(&r->mem, krc_lmr_ib_access(n->access),
			  (u64)r->id << KRC_LMR_IOVA_SHIFT);
	mutex_lock(&krc_lmrh.lock);
	n->peer = NULL;
	if (IS_ERR(mr))
		ret = PTR_ERR(mr) == -E2BIG ? -E2BIG : -ENOMEM;
	else if (n->dead)
		ret = -ESTALE;		/* its region went meanwhile */
	else
		ret = xa_err(xa_store(&krc_lmrh.nkeys, mr->rkey, n,
				      GFP_KERNEL));
	if (ret) {
		list_del(&n->node);
		krc_names_drop(n->slot);
		mutex_unlock(&krc_lmrh.lock);
		if (!IS_ERR(mr))
			krc_kmem_unreg(mr);
		krc_lmrh_name_reply(peer, n->req_id, ret, NULL, r->id);
		kfree(n);
		krc_obj_destroyed(KRC_OBJ_LMR_NAME);
		goto out;
	}
	n->mr = mr;
	memcpy(e.name, n->name, KRC_NAME_LEN);
	e.access = n->access;
	e.region = r->id;
	e.rkey = mr->rkey;
	e.length = r->length;
	e.addr = mr->iova;
	krc_names_write(n->slot, &e);
	krc_event(KRC_EV_NAME_PUBLISHES);
	krc_lmrh_name_reply(peer, n->req_id, 0, n, r->id);
	mutex_unlock(&krc_lmrh.lock);
out:
	krc_peer_put(peer);
	kref_put(&r->ref, krc_lmrh_release);
}

/* The name @name of region @r, or NULL (krc_lmrh.lock held). */
static struct krc_lmr_name *krc_lmrh_name_find(struct krc_lmr_region *r,
					       const char *name)
{
	struct krc_lmr_name *n;

	list_for_each_entry(n, &r->names, node)
		if (!memcmp(n->name, name, KRC_NAME_LEN))
			return n;
	return NULL;
}

/*
 * MEM_PUBLISH: the holder of a region publishes it under a name, with
 * rights it has. Checked here; registered on krc_wq.
 */
void krc_lmrh_on_publish(struct krc_peer *peer, const struct krc_ctrl_msg *m)
{
	struct krc_lmr_region *r;
	struct krc_lmr_name *n;
	int ret;

	if (m->dst_incarnation &&
	    m->dst_incarnation != krc_node.card.incarnation) {
		krc_lmrh_name_reply(peer, m->req_id, -ESTALE, NULL, m->region);
		return;
	}
	mutex_lock(&krc_lmrh.lock);
	r = krc_lmrh_find(m->region);
	ret = krc_lmrh_op_check(r, m, m->access, 0, 0);
	if (!krc_lmrh.running)
		ret = -ENODEV;
	if (!ret && (m->access & ~r->access))
		ret = -EACCES;	/* more than the region's rights */
	n = ret ? NULL : krc_lmrh_name_find(r, m->name);
	if (n && n->req_id == m->req_id) {
		/* A retransmission: the same answer, or one to come. */
		if (n->mr)
			krc_lmrh_name_reply(peer, m->req_id, 0, n, r->id);
		mutex_unlock(&krc_lmrh.lock);
		return;
	}
	if (n)
		ret = -EEXIST;
	if (!ret) {
		n = kzalloc(sizeof(*n), GFP_KERNEL);
		if (!n)
			ret = -ENOMEM;
	}
	if (!ret) {
		ret = krc_names_reserve(m->name, m->card.gid, &n->slot);
		if (ret)
			kfree(n);
	}
	if (ret) {
		mutex_unlock(&krc_lmrh.lock);
		krc_lmrh_name_reply(peer, m->req_id, ret, NULL, m->region);
		return;
	}
	krc_obj_created(KRC_OBJ_LMR_NAME);
	memcpy(n->name, m->name, KRC_NAME_LEN);
	n->r = r;
	n->access = m->access;
	n->req_id = m->req_id;
	kref_get(&peer->ref);
	n->peer = peer;
	kref_get(&r->ref);
	list_add_tail(&n->node, &r->names);
	INIT_WORK(&n->work, krc_lmrh_name_work);
	queue_work(krc_wq, &n->work);
	mutex_unlock(&krc_lmrh.lock);
}

/* Was @req_id an UNPUBLISH of @r done already (a copy of it)? */
static bool krc_lmrh_unpublished(struct krc_lmr_region *r, u64 req_id)
{
	u32 i;

	for (i = 0; i < KRC_LMR_SETS; i++)
		if (r->unpublished[i] == req_id)
			return true;
	return false;
}

/*
 * MEM_UNPUBLISH: the holder revokes a name. It leaves the table, then its
 * MR is deregistered (its key dies), and the locks taken with it go.
 */
void krc_lmrh_on_unpublish(struct krc_peer *peer,
			   const struct krc_ctrl_msg *m)
{
	struct krc_lmr_name *n = NULL;
	struct krc_lmr_region *r;
	u32 rkey = 0, id = 0;
	int ret = -ESTALE;

	if (m->dst_incarnation &&
	    m->dst_incarnation != krc_node.card.incarnation)
		goto answer;
	mutex_lock(&krc_lmrh.lock);
	r = krc_lmrh_find(m->region);
	ret = krc_lmrh_op_check(r, m, KRC_LMR_RIGHTS, 0, 0);
	if (!ret) {
		n = krc_lmrh_name_find(r, m->name);
		if (!n)
			ret = krc_lmrh_unpublished(r, m->req_id) ? 0 : -ENOENT;
		else if (!n->mr)
			ret = -EBUSY;	/* its PUBLISH is still registering */
	}
	if (!ret && n) {
		id = r->id;
		rkey = n->mr->rkey;
		krc_lmrh_name_unlink(n);
		r->unpublished[r->unpublished_next] = m->req_id;
		r->unpublished_next = (r->unpublished_next + 1) % KRC_LMR_SETS;
	}
	mutex_unlock(&krc_lmrh.lock);
	if (!ret && n) {
		krc_lockh_region_gone(id, rkey);
		krc_kmem_unreg(n->mr);
		kfree(n);
		krc_obj_destroyed(KRC_OBJ_LMR_NAME);
	}
answer:
	if (ret && ret != -ENOENT)
		krc_event(KRC_EV_NAME_REFUSED);
	krc_lmrh_reply(peer, KRC_MSG_MEM_UNPUBLISH_REP, m->req_id, ret, NULL,
		       m->region);
}

/*
 * MEM_LOOKUP: a node that has no RC connection to READ the table over (a
 * VQ on the datagram path) asks for a name. The answer is what its READ
 * would find, nothing more: any node that may send us a control message
 * may READ the table too.
 */
void krc_lmrh_on_lookup(struct krc_peer *peer, const struct krc_ctrl_msg *m)
{
	struct krc_ctrl_msg msg = {
		.type = KRC_MSG_MEM_LOOKUP_REP,
		.req_id = m->req_id,
	};
	struct krc_name_entry e;
	int ret;

	/*
	 * The table is in the node page, freed when the node stops: only
	 * while the host runs (its stop waits for this lock), else no
	 * answer (the asker times out, as with a node that is gone).
	 */
	mutex_lock(&krc_lmrh.lock);
	ret = krc_lmrh.running ? krc_names_lookup(m->name, &e) : -ESHUTDOWN;
	mutex_unlock(&krc_lmrh.lock);
	if (ret == -ESHUTDOWN)
		return;
	krc_event(KRC_EV_NAME_ANSWERED);
	if (ret) {
		msg.status = -ret;
	} else {
		msg.region = e.region;
		msg.access = e.access;
		msg.rkey = e.rkey;
		msg.length = e.length;
		msg.addr = e.addr;
	}
	krc_lmrh_send(peer, &msg);
}
