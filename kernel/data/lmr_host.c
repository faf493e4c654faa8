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
 * A MEM_SET (a memset of any byte value over any range of a region the
 * holder may write) and a MEM_COPY (memmove from a region the holder may
 * read to one it may write, both here) are done by this CPU on krc_wq,
 * nothing but the request crossing the network; each holds a reference
 * on its regions, so a free meanwhile revokes the key at once and frees
 * the pages after it. The last KRC_LMR_SETS of them into a region are
 * remembered: a retransmitted one is answered, never done twice (a copy
 * between overlapping ranges done twice would not be the same).
 *
 * Regions are freed by their holder (MEM_FREE), when the holder's
 * incarnation is gone (its GOODBYE, or a card of a new one: the conn
 * layer's peer_forget), when the holder is no longer a member of the
 * MetaServer's directory (the sweep, every lmr_sweep_ms), and when this
 * node stops. Deregistering a region's MR invalidates its rkey before
 * its pages are freed; the locks on a region (lock_host.c) go before it.
 *
 * Locks: krc_lmrh.lock (the regions, the pool's use) is taken in process
 * context only, inside krc_lockh.lock (lock_host.c), never around an
 * allocation (a send under it takes no lock of this file); gone_lock (the
 * incarnations to reclaim) in any context.
 */
#include <linux/delay.h>
#include <linux/slab.h>

#include "data/data.h"

/* A region's iova: its id in the top bits, the offset below 2^40. */
#define KRC_LMR_IOVA_SHIFT	40
#define KRC_LMR_ID_MAX		0xffffffU

/* The last MEM_SETs and MEM_COPYs into a region, for retransmissions. */
/* The ALLOCs of the last regions freed: a late copy makes no new one. */
#define KRC_LMR_TOMBS		64
#define KRC_LMR_SETS		8

struct krc_lmr_region {
	struct list_head node;		/* krc_lmrh.regions */
	struct kref ref;		/* the list's, each memset's */
	struct work_struct work;	/* the allocation */
	struct krc_peer *peer;		/* the holder's, while allocating */
	u32 id;
	u8 holder[16];
	u64 holder_inc;
	u64 req_id;			/* of the holder's MEM_ALLOC */
	u64 length;
	u64 charge;			/* on the pool */
	u32 access;			/* KRCORE_ACCESS_REMOTE_* */
	bool ready;			/* registered, answered */
	struct krc_kmem mem;
	struct list_head names;		/* struct krc_lmr_name: live, pending */
	struct list_head dead_names;	/* unlinked with it: destroy's */
	u64 unpublished[KRC_LMR_SETS];	/* UNPUBLISHes done: their req_ids */
	u32 unpublished_next;
	struct {
		u8 gid[16];		/* the caller: any node with a name */
		u64 inc;
		u64 req_id;
		int status;		/* -EINPROGRESS while it runs */
	} sets[KRC_LMR_SETS];
	u32 set_next;
};

/*
 * A name the region is published under (MEM_PUBLISH): one more
 * registration of its memory with exactly the name's rights, and the
 * name's slot in the names table (name_table.c). Pending (mr NULL) while
 * krc_wq registers it; on the region's names list until revoked.
 */
struct krc_lmr_name {
	struct list_head node;		/* r->names, r->dead_names */
	struct krc_lmr_region *r;	/* its region (no reference) */
	struct work_struct work;	/* the registration */
	struct krc_peer *peer;		/* the holder's, while pending */
	struct ib_mr *mr;		/* NULL while pending */
	u32 access;
	u32 slot;
	u64 req_id;			/* of the MEM_PUBLISH */
	bool dead;			/* pending, and its region went */
	char name[KRC_NAME_LEN];
};

/* A MEM_SET or MEM_COPY, done by the CPU on krc_wq. */
struct krc_lmr_set_job {
	struct work_struct work;
	struct krc_lmr_region *r;	/* a reference (the destination) */
	struct krc_lmr_region *src;	/* COPY: a reference, else NULL */
	u64 src_off;
	struct krc_peer *peer;		/* the caller's, a reference */
	u64 inc;			/* the caller's incarnation */
	u64 req_id;
	u64 off;
	u64 len;
	u8 value;
};

/* An incarnation of a holder that is gone (peer_forget). */
struct krc_lmr_gone {
	struct list_head node;
	u8 gid[16];
	u64 incarnation;
};

static struct {
	struct mutex lock;		/* regions, used, last_id, running */
	struct list_head regions;
	struct xarray rkeys;		/* rkey -> ready region (datagrams) */
	struct xarray nkeys;		/* rkey -> a ready name's struct */
	u64 used;			/* bytes charged */
	u32 last_id;
	struct {
		u8 holder[16];
		u64 holder_inc;
		u64 req_id;
	} tombs[KRC_LMR_TOMBS];
	u32 tomb_next;
	bool running;
	spinlock_t gone_lock;		/* gone */
	struct list_head gone;
	struct work_struct reclaim_work;
	struct delayed_work sweep_work;
} krc_lmrh = {
	.lock = __MUTEX_INITIALIZER(krc_lmrh.lock),
	.regions = LIST_HEAD_INIT(krc_lmrh.regions),
	.rkeys = XARRAY_INIT(krc_lmrh.rkeys, 0),
	.nkeys = XARRAY_INIT(krc_lmrh.nkeys, 0),
	.gone_lock = __SPIN_LOCK_UNLOCKED(krc_lmrh.gone_lock),
	.gone = LIST_HEAD_INIT(krc_lmrh.gone),
};

static int krc_lmr_ib_access(u32 access)
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

static void krc_lmrh_send(struct krc_peer *peer, struct krc_ctrl_msg *msg)
{
	msg->card = krc_node.card;
	if (krc_peer_send(peer, msg))
		pr_warn_ratelimited("krcore: remote memory answer not sent\n");
}

static void krc_lmrh_reply(struct krc_peer *peer, u8 type, u64 req_id,
			   int status, const struct krc_lmr_region *r,
			   u32 region)
{
	struct krc_ctrl_msg msg;

	krc_lmrh_fill(&msg, type, req_id, status, r, region);
	krc_lmrh_send(peer, &msg);
}

static void krc_lmrh_release(struct kref *ref)
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

/*
 * Name @n leaves the table and the keys (krc_lmrh.lock held): peers no
 * longer find it, datagrams no longer reach the region with its key. Its
 * MR, and so the key itself, goes after (krc_lmrh_name_free()).
 */
static void krc_lmrh_name_unlink(struct krc_lmr_name *n)
{
	lockdep_assert_held(&krc_lmrh.lock);
	xa_erase(&krc_lmrh.nkeys, n->mr->rkey);
	krc_names_drop(n->slot);
	list_del(&n->node);
	krc_event(KRC_EV_NAME_DROPS);
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

static void krc_lmrh_op_work(struct work_struct *work)
{
	struct krc_lmr_set_job *j = container_of(work, struct krc_lmr_set_job,
						 work);
	struct krc_lmr_region *r = j->r;
	u32 i;

	if (j->src)
		krc_kmem_copy(&r->mem, j->off, &j->src->mem, j->src_off,
			      j->len);
	else
		krc_kmem_set(&r->mem, j->off, j->len, j->value);
	mutex_lock(&krc_lmrh.lock);
	for (i = 0; i < KRC_LMR_SETS; i++)
		if (r->sets[i].req_id == j->req_id &&
		    r->sets[i].inc == j->inc &&
		    !memcmp(r->sets[i].gid, j->peer->gid, 16))
			r->sets[i].status = 0;
	mutex_unlock(&krc_lmrh.lock);
	krc_event(j->src ? KRC_EV_LMR_COPIES : KRC_EV_LMR_SETS);
	krc_lmrh_reply(j->peer, j->src ? KRC_MSG_MEM_COPY_REP :
		       KRC_MSG_MEM_SET_REP, j->req_id, 0, NULL, r->id);
	if (j->src)
		kref_put(&j->src->ref, krc_lmrh_release);
	kref_put(&r->ref, krc_lmrh_release);
	krc_peer_put(j->peer);
	kfree(j);
}

static struct krc_lmr_region *krc_lmrh_find(u32 id)
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
static int krc_lmrh_op_check(struct krc_lmr_region *r,
			     const struct krc_ctrl_msg *m, u32 right, u64 off,
			     u64 len)
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

/* A SET or COPY seen before gets its earlier answer: 1, *dup set. */
static int krc_lmrh_op_dup(struct krc_lmr_region *r,
			   const struct krc_ctrl_msg *m, int *dup)
{
	u32 i;

	for (i = 0; i < KRC_LMR_SETS; i++) {
		/* req_ids are the caller's: named with its node, incarnation */
		if (r->sets[i].req_id == m->req_id &&
		    r->sets[i].inc == m->card.incarnation &&
		    !memcmp(r->sets[i].gid, m->card.gid, 16)) {
			*dup = r->sets[i].status;
			return 1;
		}
	}
	return 0;
}

/*
 * MEM_SET and MEM_COPY: checked here, done by this CPU on krc_wq. A copy
 * moves bytes between two regions of the same holder on this node (or
 * inside one), as memmove.
 */
static void krc_lmrh_on_op(struct krc_peer *peer,
			   const struct krc_ctrl_msg *m)
{
	bool copy = m->type == KRC_MSG_MEM_COPY;
	u8 rep = copy ? KRC_MSG_MEM_COPY_REP : KRC_MSG_MEM_SET_REP;
	struct krc_lmr_region *r, *src = NULL;
	struct krc_lmr_set_job *j = NULL;
	int ret, dup = 0;

	if (m->dst_incarnation &&
	    m->dst_incarnation != krc_node.card.incarnation) {
		ret = -ESTALE;	/* the region went with that incarnation */
		goto answer;
	}
	mutex_lock(&krc_lmrh.lock);
	r = krc_lmrh_find(m->region);
	ret = krc_lmrh_op_check(r, m, KRCORE_ACCESS_REMOTE_WRITE, m->addr,
				m->length);
	if (!ret && copy) {
		src = krc_lmrh_find(m->src_region);
		ret = krc_lmrh_op_check(src, m, KRCORE_ACCESS_REMOTE_READ,
					m->src_off, m->length);
	}
	if (!ret && krc_lmrh_op_dup(r, m, &dup)) {
		mutex_unlock(&krc_lmrh.lock);
		if (dup == -EINPROGRESS)
			return;		/* its answer comes when it is done */
		ret = dup;
		goto answer;
	}
	if (!ret) {
		j = kzalloc(sizeof(*j), GFP_KERNEL);
		if (!j)
			ret = -ENOMEM;
	}
	if (ret) {
		mutex_unlock(&krc_lmrh.lock);
		goto answer;
	}
	r->sets[r->set_next].req_id = m->req_id;
	r->sets[r->set_next].inc = m->card.incarnation;
	memcpy(r->sets[r->set_next].gid, m->card.gid, 16);
	r->sets[r->set_next].status = -EINPROGRESS;
	r->set_next = (r->set_next + 1) % KRC_LMR_SETS;
	kref_get(&r->ref);
	j->r = r;
	if (src) {
		kref_get(&src->ref);
		j->src = src;
		j->src_off = m->src_off;
	}
	kref_get(&peer->ref);
	j->peer = peer;
	j->req_id = m->req_id;
	j->inc = m->card.incarnation;
	j->off = m->addr;
	j->len = m->length;
	j->value = m->access;
	INIT_WORK(&j->work, krc_lmrh_op_work);
	queue_work(krc_wq, &j->work);
	mutex_unlock(&krc_lmrh.lock);
	return;
answer:
	if (ret)	/* not a repeat of one done: that is no refusal */
		krc_event(KRC_EV_LMR_SET_REFUSED);
	krc_lmrh_reply(peer, rep, m->req_id, ret, NULL, m->region);
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
static void krc_lmrh_on_publish(struct krc_peer *peer,
				const struct krc_ctrl_msg *m)
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
static void krc_lmrh_on_unpublish(struct krc_peer *peer,
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
