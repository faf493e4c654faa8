// SPDX-License-Identifier: GPL-2.0
/*
 * lmr_host.c - remote memory regions this node owns: memory that a
 * process of another node (the holder) allocated here with no process of
 * this node involved (KRCORE_IOC_LMR_ALLOC there, lmr.c; the MEM_*
 * messages of common/proto.h over the control QPs).
 *
 * A MEM_ALLOC is charged to the pool (module parameter lmr_pool_mb)
 * before anything is allocated: a full pool answers ENOSPC and costs
 * nothing. The memory (control/kmem.c: zeroed chunks, one fast-registered
 * MR with exactly the rights asked for) is allocated on krc_wq, not on
 * the control QP's receive path, so a large region does not hold up
 * handshakes. Peers address a region from an iova made of its id, never
 * a kernel address.
 *
 * A region is named by its id, but only the node and incarnation that
 * allocated it may free it; a retransmitted MEM_ALLOC (same holder,
 * incarnation and req_id) gets the same answer, never a second region.
 * MEM_SET and MEM_COPY are done here by this CPU (lmr_op_host.c), names
 * are published and revoked by lmr_name_host.c; the structures, the lock
 * order and the lifetimes they share are in lmr_host.h.
 *
 * Regions are freed by their holder (MEM_FREE), when the holder's
 * incarnation is gone (its GOODBYE, or a card of a new one: the conn
 * layer's peer_forget), when the holder is no longer a member of the
 * MetaServer's directory (the sweep, every lmr_sweep_ms), and when this
 * node stops. Deregistering a region's MR invalidates its rkey before
 * its pages are freed; the locks on a region (lock_host.c) go before it.
 *
 * Locks: see lmr_host.h.
 */
#include <linux/delay.h>
#include <linux/slab.h>

#include "data/lmr_host.h"

/* An incarnation of a holder that is gone (peer_forget). */
struct krc_lmr_gone {
	struct list_head node;
	u8 gid[16];
	u64 incarnation;
};

struct krc_lmrh_state krc_lmrh = {
	.lock = __MUTEX_INITIALIZER(krc_lmrh.lock),
	.regions = LIST_HEAD_INIT(krc_lmrh.regions),
	.rkeys = XARRAY_INIT(krc_lmrh.rkeys, 0),
	.nkeys = XARRAY_INIT(krc_lmrh.nkeys, 0),
	.gone_lock = __SPIN_LOCK_UNLOCKED(krc_lmrh.gone_lock),
	.gone = LIST_HEAD_INIT(krc_lmrh.gone),
};

int krc_lmr_ib_access(u32 access)
{
	int ib = 0;

	if (access & KRCORE_ACCESS_REMOTE_READ)
		ib |= IB_ACCESS_REMOTE_READ;
	if (access & KRCORE_ACCESS_REMOTE_WRITE)
		ib |= IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE;
	if (access & KRCORE_ACCESS_REMOTE_ATOMIC)
		ib |= IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE;
	return ib;
}

static void krc_lmrh_fill(struct krc_ctrl_msg *msg, u8 type, u64 req_id,
			  int status, const struct krc_lmr_region *r,
			  u32 region)
{
	memset(msg, 0, sizeof(*msg));
	msg->type = type;
	msg->req_id = req_id;
	msg->status = -status;
	msg->region = region;
	if (r && !status) {
		msg->region = r->id;
		msg->access = r->access;
		msg->rkey = r->mem.mr->rkey;
		msg->length = r->length;
		msg->addr = r->mem.mr->iova;
	}
}

void krc_lmrh_send(struct krc_peer *peer, struct krc_ctrl_msg *msg)
{
	msg->card = krc_node.card;
	if (krc_peer_send(peer, msg))
		pr_warn_ratelimited("krcore: remote memory answer not sent\n");
}

void krc_lmrh_reply(struct krc_peer *peer, u8 type, u64 req_id, int status,
		    const struct krc_lmr_region *r, u32 region)
{
	struct krc_ctrl_msg msg;

	krc_lmrh_fill(&msg, type, req_id, status, r, region);
	krc_lmrh_send(peer, &msg);
}

void krc_lmrh_release(struct kref *ref)
{
	struct krc_lmr_region *r = container_of(ref, struct krc_lmr_region,
						ref);

	krc_kmem_free(&r->mem);
	if (r->peer)
		krc_peer_put(r->peer);
	kfree(r);
	krc_obj_destroyed(KRC_OBJ_LMR);
}

/*
 * A region off the list: its key dies with its MR now, its pages once no
 * memset uses them.
 */
static void krc_lmrh_destroy(struct krc_lmr_region *r)
{
	struct krc_lmr_name *n, *tmp;

	if (r->ready)
		krc_lockh_region_gone(r->id, 0);
	list_for_each_entry_safe(n, tmp, &r->dead_names, node) {
		list_del(&n->node);
		krc_kmem_unreg(n->mr);
		kfree(n);
		krc_obj_destroyed(KRC_OBJ_LMR_NAME);
	}
	krc_kmem_revoke(&r->mem);
	kref_put(&r->ref, krc_lmrh_release);
}

/* Off the list, the keys and the pool (krc_lmrh.lock held). */
static void krc_lmrh_unlink(struct krc_lmr_region *r)
{
	struct krc_lmr_name *n, *tmp;
	u32 t = krc_lmrh.tomb_next;

	lockdep_assert_held(&krc_lmrh.lock);
	memcpy(krc_lmrh.tombs[t].holder, r->holder, 16);
	krc_lmrh.tombs[t].holder_inc = r->holder_inc;
	krc_lmrh.tombs[t].req_id = r->req_id;
	krc_lmrh.tomb_next = (t + 1) % KRC_LMR_TOMBS;
	list_del_init(&r->node);
	if (r->ready)
		xa_erase(&krc_lmrh.rkeys, r->mem.mr->rkey);
	krc_lmrh.used -= r->charge;
	/* Its names go with it: the ready ones now, the pending when done. */
	list_for_each_entry_safe(n, tmp, &r->names, node) {
		if (!n->mr) {
			n->dead = true;
			continue;
		}
		krc_lmrh_name_unlink(n);
		list_add_tail(&n->node, &r->dead_names);
	}
}

static void krc_lmrh_release_work(struct work_struct *work)
{
	struct krc_lmr_region *r = container_of(work, struct krc_lmr_region,
						work);

	krc_lmrh_release(&r->ref);
}

/*
 * A datagram request's region (dg_exec.c): the ready region of @rkey
 * whose rights include @access and whose range holds [@addr, @addr +
 * @len), held (krc_lmrh_put() when done), or NULL. Process context.
 */
struct krc_lmr_region *krc_lmrh_remote_get(u32 rkey, u64 addr, u64 len,
					   u32 access)
{
	struct krc_lmr_region *r;
	u64 iova;

	struct krc_lmr_name *n;
	u32 rights = 0;

	mutex_lock(&krc_lmrh.lock);
	r = xa_load(&krc_lmrh.rkeys, rkey);
	if (r) {
		rights = r->access;
	} else {
		n = xa_load(&krc_lmrh.nkeys, rkey);
		if (n) {
			r = n->r;
			rights = n->access;
		}
	}
	if (r) {
		iova = r->mem.mr->iova;
		if ((rights & access) != access || addr < iova ||
		    len > r->length || addr - iova > r->length - len)
			r = NULL;
		else
			kref_get(&r->ref);
	}
	mutex_unlock(&krc_lmrh.lock);
	return r;
}

/*
 * Is @rkey the key of a ready region here, or of one of its names? Any
 * context (RCU: no lock).
 */
bool krc_lmrh_is_key(u32 rkey)
{
	return xa_load(&krc_lmrh.rkeys, rkey) || xa_load(&krc_lmrh.nkeys, rkey);
}

/* The rights of @rkey on region @r: its own key's, a name's, or 0. */
static u32 krc_lmrh_key_rights(struct krc_lmr_region *r, u32 rkey)
{
	struct krc_lmr_name *n;

	lockdep_assert_held(&krc_lmrh.lock);
	if (r->mem.mr && r->mem.mr->rkey == rkey)
		return r->access;
	list_for_each_entry(n, &r->names, node)
		if (n->mr && n->mr->rkey == rkey)
			return n->access;
	return 0;
}

/*
 * May a holder of @rkey lock the word at @off of region @id (lock_host.c)?
 * 0, or ESTALE (no such region now), EACCES (another key, or no
 * REMOTE_ATOMIC right), ERANGE (past its end). Process context.
 */
int krc_lmrh_lockable(u32 id, u32 rkey, u64 off)
{
	struct krc_lmr_region *r;
	int ret = -ESTALE;

	mutex_lock(&krc_lmrh.lock);
	list_for_each_entry(r, &krc_lmrh.regions, node) {
		if (r->id != id || !r->ready)
			continue;
		if (!(krc_lmrh_key_rights(r, rkey) &
		      KRCORE_ACCESS_REMOTE_ATOMIC))
			ret = -EACCES;
		else if (off > r->length - 8 || r->length < 8)
			ret = -ERANGE;
		else
			ret = 0;
		break;
	}
	mutex_unlock(&krc_lmrh.lock);
	return ret;
}

/* Let go of a region krc_lmrh_remote_get() gave; any context. */
void krc_lmrh_put(struct krc_lmr_region *r)
{
	if (!refcount_dec_and_test(&r->ref.refcount))
		return;
	/* Its MR went at its unlink; its pages go in process context. */
	INIT_WORK(&r->work, krc_lmrh_release_work);
	queue_work(krc_wq, &r->work);
}

static void krc_lmrh_alloc_work(struct work_struct *work)
{
	struct krc_lmr_region *r = container_of(work, struct krc_lmr_region,
						work);
	struct krc_peer *peer = r->peer;
	struct krc_ctrl_msg rep;
	int ret = -ENODEV;

	if (READ_ONCE(krc_lmrh.running))
		ret = krc_kmem_alloc(&r->mem, r->length,
				     krc_lmr_ib_access(r->access),
				     (u64)r->id << KRC_LMR_IOVA_SHIFT);
	mutex_lock(&krc_lmrh.lock);
	r->peer = NULL;
	if (!ret && !krc_lmrh.running)
		ret = -ENODEV;
	if (ret) {
		krc_lmrh_unlink(r);
		mutex_unlock(&krc_lmrh.lock);
		krc_event(KRC_EV_LMR_REFUSED);
		krc_lmrh_reply(peer, KRC_MSG_MEM_ALLOC_REP, r->req_id,
			       ret == -E2BIG ? -E2BIG : -ENOMEM, NULL, 0);
		krc_lmrh_destroy(r);
		krc_peer_put(peer);
		return;
	}
	ret = xa_err(xa_store(&krc_lmrh.rkeys, r->mem.mr->rkey, r,
			      GFP_KERNEL));
	if (ret) {
		krc_lmrh_unlink(r);
		mutex_unlock(&krc_lmrh.lock);
		krc_event(KRC_EV_LMR_REFUSED);
		krc_lmrh_reply(peer, KRC_MSG_MEM_ALLOC_REP, r->req_id, -ENOMEM,
			       NULL, 0);
		krc_lmrh_destroy(r);
		krc_peer_put(peer);
		return;
	}
	r->ready = true;
	krc_event(KRC_EV_LMR_ALLOCS);
	krc_lmrh_fill(&rep, KRC_MSG_MEM_ALLOC_REP, r->req_id, 0, r, 0);
	mutex_unlock(&krc_lmrh.lock);
	/*
	 * Fault injection: a late answer. The holder's copies of the ALLOC
	 * meanwhile find the region ready and are answered first.
	 */
	if (READ_ONCE(krc_fault_lmr_alloc_delay_ms) > 0)
		msleep(min_t(int, krc_fault_lmr_alloc_delay_ms, 10000));
	krc_lmrh_send(peer, &rep);
	krc_peer_put(peer);
}

static struct krc_lmr_region *krc_lmrh_find_req(const struct krc_ctrl_msg *m)
{
	struct krc_lmr_region *r;

	list_for_each_entry(r, &krc_lmrh.regions, node)
		if (r->req_id == m->req_id &&
		    r->holder_inc == m->card.incarnation &&
		    !memcmp(r->holder, m->card.gid, 16))
			return r;
	return NULL;
}

/* Was @m's ALLOC made into a region that is freed already? */
static bool krc_lmrh_was_freed(const struct krc_ctrl_msg *m)
{
	u32 i;

	for (i = 0; i < KRC_LMR_TOMBS; i++)
		if (krc_lmrh.tombs[i].req_id == m->req_id &&
		    krc_lmrh.tombs[i].holder_inc == m->card.incarnation &&
		    !memcmp(krc_lmrh.tombs[i].holder, m->card.gid, 16))
			return true;
	return false;
}

static bool krc_lmrh_id_used(u32 id)
{
	struct krc_lmr_region *r;

	list_for_each_entry(r, &krc_lmrh.regions, node)
		if (r->id == id)
			return true;
	return false;
}

/* The next free id, 1 .. KRC_LMR_ID_MAX (krc_lmrh.lock held). */
static u32 krc_lmrh_next_id(void)
{
	u32 i, id = krc_lmrh.last_id;

	for (i = 0; i < KRC_LMR_ID_MAX; i++) {
		id = id % KRC_LMR_ID_MAX + 1;
		if (!krc_lmrh_id_used(id)) {
			krc_lmrh.last_id = id;
			return id;
		}
	}
	return 0;
}

static void krc_lmrh_on_alloc(struct krc_peer *peer,
			      const struct krc_ctrl_msg *m)
{
	u64 pool = (u64)krc_param_lmr_pool_mb << 20;
	struct krc_lmr_region *r;
	u64 charge;
	int ret;

	if (m->dst_incarnation &&
	    m->dst_incarnation != krc_node.card.incarnation) {
		krc_lmrh_reply(peer, KRC_MSG_MEM_ALLOC_REP, m->req_id, -ESTALE,
			       NULL, 0);
		return;
	}
	charge = krc_kmem_charge(m->length);
	mutex_lock(&krc_lmrh.lock);
	r = krc_lmrh_find_req(m);
	if (r) {
		/* A retransmission: the same answer, or one to come. */
		if (r->ready) {
			krc_event(KRC_EV_LMR_ALLOC_COPIES);
			krc_lmrh_reply(peer, KRC_MSG_MEM_ALLOC_REP, m->req_id,
				       0, r, 0);
		}
		mutex_unlock(&krc_lmrh.lock);
		return;
	}
	if (krc_lmrh_was_freed(m)) {
		/* a copy that came late: its region was made and freed */
		mutex_unlock(&krc_lmrh.lock);
		return;
	}
	ret = -ENODEV;
	if (!krc_lmrh.running)
		goto refuse;
	ret = -ENOSPC;
	if (charge > pool || krc_lmrh.used > pool - charge)
		goto refuse;
	ret = -ENOMEM;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		goto refuse;
	r->id = krc_lmrh_next_id();
	if (!r->id) {
		kfree(r);
		goto refuse;
	}
	krc_obj_created(KRC_OBJ_LMR);
	kref_init(&r->ref);
	INIT_LIST_HEAD(&r->names);
	INIT_LIST_HEAD(&r->dead_names);
	INIT_WORK(&r->work, krc_lmrh_alloc_work);
	memcpy(r->holder, m->card.gid, 16);
	r->holder_inc = m->card.incarnation;
	r->req_id = m->req_id;
	r->length = m->length;
	r->charge = charge;
	r->access = m->access;
	r->peer = krc_peer_get(peer->gid, false);
	if (!r->peer) {
		kfree(r);
		krc_obj_destroyed(KRC_OBJ_LMR);
		goto refuse;
	}
	list_add_tail(&r->node, &krc_lmrh.regions);
	krc_lmrh.used += charge;
	queue_work(krc_wq, &r->work);
	mutex_unlock(&krc_lmrh.lock);
	if (krc_param_lmr_sweep_ms)
		mod_delayed_work(krc_wq, &krc_lmrh.sweep_work,
				 msecs_to_jiffies(krc_param_lmr_sweep_ms));
	return;
refuse:
	mutex_unlock(&krc_lmrh.lock);
	krc_event(KRC_EV_LMR_REFUSED);
	krc_lmrh_reply(peer, KRC_MSG_MEM_ALLOC_REP, m->req_id, ret, NULL, 0);
}

static void krc_lmrh_on_free(struct krc_peer *peer,
			     const struct krc_ctrl_msg *m)
{
	struct krc_lmr_region *r, *found = NULL;
	int ret = -ENOENT;

	mutex_lock(&krc_lmrh.lock);
	list_for_each_entry(r, &krc_lmrh.regions, node) {
		if (r->id != m->region)
			continue;
		/* Only the incarnation that allocated it frees it. */
		if (memcmp(r->holder, m->card.gid, 16) ||
		    r->holder_inc != m->card.incarnation)
			ret = -EPERM;
		else if (!r->ready)
			ret = -EBUSY;
		else
			found = r;
		break;
	}
	if (m->dst_incarnation &&
	    m->dst_incarnation != krc_node.card.incarnation) {
		found = NULL;
		ret = -ENOENT;	/* a region of another incarnation: gone */
	}
	if (found) {
		krc_lmrh_unlink(found);
		ret = 0;
	}
	mutex_unlock(&krc_lmrh.lock);
	if (found) {
		krc_lmrh_destroy(found);
		krc_event(KRC_EV_LMR_FREES);
	} else {
		krc_event(KRC_EV_LMR_FREE_STRAY);
	}
	krc_lmrh_reply(peer, KRC_MSG_MEM_FREE_REP, m->req_id, ret, NULL,
		       m->region);
}

struct krc_lmr_region *krc_lmrh_find(u32 id)
{
	struct krc_lmr_region *r;

	list_for_each_entry(r, &krc_lmrh.regions, node)
		if (r->id == id)
			return r;
	return NULL;
}

/*
 * May @m's holder use @r with @right over [@off, @off + @len)? 0, or why
 * not (both below 2^40: no overflow).
 */
int krc_lmrh_op_check(struct krc_lmr_region *r, const struct krc_ctrl_msg *m,
		      u32 right, u64 off, u64 len)
{
	u32 rights = r ? r->access : 0;

	if (!r)		/* a name's key outlived its region: stale */
		return m->rkey ? -ESTALE : -ENOENT;
	if (!r->ready)
		return -EBUSY;
	if (m->rkey) {
		/* a name's key, looked up: its rights; a revoked one: none */
		rights = krc_lmrh_key_rights(r, m->rkey);
		if (!rights)
			return -ESTALE;
	} else if (memcmp(r->holder, m->card.gid, 16) ||
		   r->holder_inc != m->card.incarnation) {
		return -EPERM;
	}
	if (!(rights & right))
		return -EACCES;
	if (off + len > r->length)
		return -ERANGE;
	return 0;
}

/* MEM_* but the locks' (the conn layer's mem_msg, via lmr.c). */
void krc_lmrh_msg(struct krc_peer *peer, const struct krc_ctrl_msg *msg)
{
	switch (msg->type) {
	case KRC_MSG_MEM_ALLOC:
		krc_lmrh_on_alloc(peer, msg);
		break;
	case KRC_MSG_MEM_SET:
	case KRC_MSG_MEM_COPY:
		krc_lmrh_on_op(peer, msg);
		break;
	case KRC_MSG_MEM_PUBLISH:
		krc_lmrh_on_publish(peer, msg);
		break;
	case KRC_MSG_MEM_UNPUBLISH:
		krc_lmrh_on_unpublish(peer, msg);
		break;
	case KRC_MSG_MEM_LOOKUP:
		krc_lmrh_on_lookup(peer, msg);
		break;
	default:
		krc_lmrh_on_free(peer, msg);
		break;
	}
}

/*
 * Free the ready regions that @keep says no longer have a holder;
 * process context.
 */
static void krc_lmrh_reclaim(bool (*keep)(const struct krc_lmr_region *r,
					  void *arg), void *arg)
{
	struct krc_lmr_region *r, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&krc_lmrh.lock);
	list_for_each_entry_safe(r, tmp, &krc_lmrh.regions, node) {
		if (!r->ready || keep(r, arg))
			continue;
		krc_lmrh_unlink(r);
		list_add_tail(&r->node, &dead);
	}
	mutex_unlock(&krc_lmrh.lock);
	list_for_each_entry_safe(r, tmp, &dead, node) {
		list_del(&r->node);
		krc_lmrh_destroy(r);
		krc_event(KRC_EV_LMR_RECLAIMED);
	}
}

static bool krc_lmrh_not_gone(const struct krc_lmr_region *r, void *arg)
{
	const struct krc_lmr_gone *g = arg;

	return r->holder_inc != g->incarnation || memcmp(r->holder, g->gid, 16);
}

static void krc_lmrh_reclaim_work(struct work_struct *work)
{
	struct krc_lmr_gone *g;

	for (;;) {
		spin_lock_bh(&krc_lmrh.gone_lock);
		g = list_first_entry_or_null(&krc_lmrh.gone,
					     struct krc_lmr_gone, node);
		if (g)
			list_del(&g->node);
		spin_unlock_bh(&krc_lmrh.gone_lock);
		if (!g)
			return;
		krc_lmrh_reclaim(krc_lmrh_not_gone, g);
		krc_lockh_forget(g->gid, g->incarnation);
		kfree(g);
	}
}

/* An incarnation of @peer is gone (the conn layer's peer_forget). */
void krc_lmrh_peer_forget(struct krc_peer *peer, u64 incarnation)
{
	struct krc_lmr_gone *g;

	if (list_empty_careful(&krc_lmrh.regions))
		return;
	g = kmalloc(sizeof(*g), GFP_ATOMIC);
	if (!g)
		return;		/* the membership sweep finds them */
	memcpy(g->gid, peer->gid, 16);
	g->incarnation = incarnation;
	spin_lock_bh(&krc_lmrh.gone_lock);
	list_add_tail(&g->node, &krc_lmrh.gone);
	spin_unlock_bh(&krc_lmrh.gone_lock);
	queue_work(krc_wq, &krc_lmrh.reclaim_work);
}

static bool krc_lmrh_member(const struct krc_lmr_region *r, void *arg)
{
	const struct krc_members_view *v = arg;
	u32 i;

	for (i = 0; i < v->n; i++)
		if (!memcmp(v->m[i].gid, r->holder, 16))
			return v->m[i].incarnation == r->holder_inc;
	return false;
}

/*
 * Holders that left the MetaServer's membership (a crash, a cut link: no
 * GOODBYE) lose their regions. Without a MetaServer, or with a list this
 * node cannot read now, nothing is freed.
 */
static void krc_lmrh_sweep_work(struct work_struct *work)
{
	struct krc_members_view v;
	unsigned int ms = READ_ONCE(krc_param_lmr_sweep_ms);
	int ret;

	if (!ms || list_empty_careful(&krc_lmrh.regions))
		return;
	ret = krc_node_try_enter();
	if (!ret) {
		ret = krc_meta_members(krc_param_members_list_max, ms, &v);
		krc_node_leave();
	}
	if (!ret) {
		if (v.n == v.count) {
			krc_lmrh_reclaim(krc_lmrh_member, &v);
			krc_lockh_sweep(&v);
		}
		kvfree(v.m);
	}
	if (READ_ONCE(krc_lmrh.running))
		mod_delayed_work(krc_wq, &krc_lmrh.sweep_work,
				 msecs_to_jiffies(ms));
}

void krc_lmrh_start(void)
{
	INIT_WORK(&krc_lmrh.reclaim_work, krc_lmrh_reclaim_work);
	INIT_DELAYED_WORK(&krc_lmrh.sweep_work, krc_lmrh_sweep_work);
	mutex_lock(&krc_lmrh.lock);
	krc_lmrh.running = true;
	mutex_unlock(&krc_lmrh.lock);
	krc_names_reset();
}

/* The node stops: no allocation is left running, every region goes. */
void krc_lmrh_stop(void)
{
	struct krc_lmr_region *r, *tmp;
	struct krc_lmr_gone *g, *gt;
	LIST_HEAD(dead);

	mutex_lock(&krc_lmrh.lock);
	if (!krc_lmrh.running) {
		mutex_unlock(&krc_lmrh.lock);
		return;
	}
	krc_lmrh.running = false;
	mutex_unlock(&krc_lmrh.lock);
	cancel_delayed_work_sync(&krc_lmrh.sweep_work);
	cancel_work_sync(&krc_lmrh.reclaim_work);
	/* Allocations under way see !running and take themselves off. */
	flush_workqueue(krc_wq);
	mutex_lock(&krc_lmrh.lock);
	list_for_each_entry_safe(r, tmp, &krc_lmrh.regions, node) {
		krc_lmrh_unlink(r);
		list_add_tail(&r->node, &dead);
	}
	mutex_unlock(&krc_lmrh.lock);
	list_for_each_entry_safe(r, tmp, &dead, node) {
		list_del(&r->node);
		krc_lmrh_destroy(r);
	}
	krc_lockh_stop();
	spin_lock_bh(&krc_lmrh.gone_lock);
	list_for_each_entry_safe(g, gt, &krc_lmrh.gone, node) {
		list_del(&g->node);
		kfree(g);
	}
	spin_unlock_bh(&krc_lmrh.gone_lock);
}
