// SPDX-License-Identifier: GPL-2.0
/*
 * lock_host.c - locks on the regions this node owns: the owner's side of
 * a distributed lock (MEM_LOCK and MEM_UNLOCK; the locker's side is
 * lock.c).
 *
 * A lock is named by a region of this node and an 8-aligned offset in
 * it: whoever holds a key of the region with the REMOTE_ATOMIC right (its
 * own, or a name's: lmr_name_host.c) may lock any of its words, as it may CAS
 * them. Each entry keeps the key it came with: its answers carry that key
 * and no other, and a name revoked takes the entries of its key along. The lock is a
 * queue kept here: its first entry holds the lock, the others wait in
 * the order their MEM_LOCK arrived (fair: nobody is passed over), and
 * each is granted with a MEM_LOCK_REP that carries its grant number.
 * An entry is named by its locker's node, incarnation and the req_id of
 * its MEM_LOCK (its ticket); a retransmitted MEM_LOCK finds its entry and
 * is answered again if granted, never queued twice. MEM_UNLOCK with the
 * ticket releases the lock (the next entry is granted) or takes a waiter
 * out of the queue.
 *
 * A lock never outlives what could release it: its entries go when their
 * locker's incarnation is gone (GOODBYE, a new card: peer_forget) or has
 * left the MetaServer's membership (the region sweep of lmr_host.c), and
 * every entry of a region's locks goes with the region (the waiters are
 * answered ESTALE). The locker's kernel releases what a process held when
 * its last VQ closes (lock.c). The number of entries is bounded (module
 * parameter lock_entries_max), and so is one node's share of them (a
 * quarter): past either a MEM_LOCK is refused with ENOSPC.
 *
 * Locks: krc_lockh.lock, process context only, taken outside
 * krc_lmrh.lock (krc_lmrh_lockable() takes that) and never under it.
 */
#include <linux/delay.h>
#include <linux/slab.h>

#include "data/data.h"

/* A locker in a lock's queue. */
struct krc_lock_entry {
	struct list_head node;		/* its lock's queue */
	struct krc_peer *peer;		/* the locker's node (a reference) */
	u8 gid[16];
	u64 inc;			/* the locker's incarnation */
	u64 ticket;			/* the req_id of its MEM_LOCK */
	u32 rkey;			/* the key it came with */
	u64 grant;			/* its grant number, 0 while it waits */
};

/* A word of a region with a holder or waiters; freed when empty. */
struct krc_lock_queue {
	struct list_head node;		/* krc_lockh.locks */
	u32 region;
	u64 off;
	u64 grants;			/* granted so far */
	struct list_head queue;		/* the holder first */
};

static struct {
	struct mutex lock;		/* locks, entries */
	struct list_head locks;
	u32 entries;
} krc_lockh = {
	.lock = __MUTEX_INITIALIZER(krc_lockh.lock),
	.locks = LIST_HEAD_INIT(krc_lockh.locks),
};

/* An answer; a LOCK_REP names the lock (region, rkey, offset). */
static void krc_lockh_reply(struct krc_peer *peer, u8 type, u64 req_id,
			    int status, u32 region, u32 rkey, u64 off,
			    u64 grant)
{
	struct krc_ctrl_msg msg = {
		.type = type,
		.req_id = req_id,
		.status = -status,
		.region = region,
	};

	if (type == KRC_MSG_MEM_LOCK_REP) {
		msg.rkey = rkey;
		msg.addr = off;
		msg.length = status ? 0 : grant;
	}
	msg.card = krc_node.card;
	if (krc_peer_send(peer, &msg))
		pr_warn_ratelimited("krcore: lock answer not sent\n");
}

static struct krc_lock_queue *krc_lockh_find(u32 region, u64 off)
{
	struct krc_lock_queue *l;

	list_for_each_entry(l, &krc_lockh.locks, node)
		if (l->region == region && l->off == off)
			return l;
	return NULL;
}

static struct krc_lock_entry *krc_lockh_entry(struct krc_lock_queue *l,
					      const u8 gid[16], u64 inc,
					      u64 ticket)
{
	struct krc_lock_entry *e;

	list_for_each_entry(e, &l->queue, node)
		if (e->ticket == ticket && e->inc == inc &&
		    !memcmp(e->gid, gid, 16))
			return e;
	return NULL;
}

/*
 * May node @gid queue one more entry? Not past lock_entries_max, nor past
 * a quarter of it of its own (counted only once the table is that full).
 */
static bool krc_lockh_room(const u8 gid[16])
{
	u32 max = READ_ONCE(krc_param_lock_entries_max), share = max / 4, n = 0;
	struct krc_lock_entry *e;
	struct krc_lock_queue *l;

	if (krc_lockh.entries >= max)
		return false;
	if (krc_lockh.entries < share)
		return true;
	list_for_each_entry(l, &krc_lockh.locks, node)
		list_for_each_entry(e, &l->queue, node)
			if (!memcmp(e->gid, gid, 16) && ++n >= share)
				return false;
	return true;
}

/* Fault injection: a grant that leaves late (krc_wq, so a stop waits). */
struct krc_lockh_late {
	struct work_struct work;
	struct krc_peer *peer;		/* a reference */
	struct krc_ctrl_msg msg;
};

static void krc_lockh_late_work(struct work_struct *work)
{
	struct krc_lockh_late *late = container_of(work, struct krc_lockh_late,
						   work);

	msleep(min_t(int, READ_ONCE(krc_fault_lock_grant_delay_ms), 10000));
	late->msg.card = krc_node.card;
	if (krc_peer_send(late->peer, &late->msg))
		pr_warn_ratelimited("krcore: lock answer not sent\n");
	krc_peer_put(late->peer);
	kfree(late);
}

/* The queue's first entry holds the lock: tell it (krc_lockh.lock held). */
static void krc_lockh_grant(struct krc_lock_queue *l)
{
	struct krc_lock_entry *e = list_first_entry(&l->queue,
						    struct krc_lock_entry,
						    node);
	struct krc_lockh_late *late = NULL;

	e->grant = ++l->grants;
	krc_event(KRC_EV_LOCK_GRANTS);
	/*
	 * Fault injection: the grant leaves late; the locker's LOCK goes
	 * again meanwhile and is answered at once, so the late grant is a
	 * copy of an answer taken (never an orphan).
	 */
	if (READ_ONCE(krc_fault_lock_grant_delay_ms) > 0)
		late = kzalloc(sizeof(*late), GFP_KERNEL);
	if (late) {
		INIT_WORK(&late->work, krc_lockh_late_work);
		kref_get(&e->peer->ref);
		late->peer = e->peer;
		late->msg = (struct krc_ctrl_msg) {
			.type = KRC_MSG_MEM_LOCK_REP, .req_id = e->ticket,
			.region = l->region, .rkey = e->rkey, .addr = l->off,
			.length = e->grant,
		};
		queue_work(krc_wq, &late->work);
		return;
	}
	krc_lockh_reply(e->peer, KRC_MSG_MEM_LOCK_REP, e->ticket, 0, l->region,
			e->rkey, l->off, e->grant);
}

/* Take @e out of its lock's queue and free it (krc_lockh.lock held). */
static void krc_lockh_unqueue(struct krc_lock_entry *e)
{
	list_del(&e->node);
	krc_peer_put(e->peer);
	kfree(e);
	krc_lockh.entries--;
	krc_obj_destroyed(KRC_OBJ_LOCK_ENTRY);
}

/*
 * After entries left @l: an empty lock goes; if its holder left
 * (@released), the next entry holds it now (krc_lockh.lock held).
 */
static void krc_lockh_settle(struct krc_lock_queue *l, bool released)
{
	if (list_empty(&l->queue)) {
		list_del(&l->node);
		kfree(l);
	} else if (released) {
		krc_lockh_grant(l);
	}
}

static void krc_lockh_on_lock(struct krc_peer *peer,
			      const struct krc_ctrl_msg *m)
{
	struct krc_lock_entry *e;
	struct krc_lock_queue *l;
	int ret;

	if (m->dst_incarnation &&
	    m->dst_incarnation != krc_node.card.incarnation) {
		ret = -ESTALE;	/* its region went with that incarnation */
		goto refuse;
	}
	mutex_lock(&krc_lockh.lock);
	ret = krc_lmrh_lockable(m->region, m->rkey, m->addr);
	if (ret)
		goto refuse_unlock;
	l = krc_lockh_find(m->region, m->addr);
	e = l ? krc_lockh_entry(l, m->card.gid, m->card.incarnation,
				m->req_id) : NULL;
	if (e) {
		/* A retransmission: granted again, or its turn comes. */
		if (e->grant) {
			krc_event(KRC_EV_LOCK_COPIES);
			krc_lockh_reply(peer, KRC_MSG_MEM_LOCK_REP, m->req_id,
					0, l->region, e->rkey, l->off,
					e->grant);
		}
		mutex_unlock(&krc_lockh.lock);
		return;
	}
	ret = -ENOSPC;
	if (!krc_lockh_room(m->card.gid))
		goto refuse_unlock;
	ret = -ENOMEM;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		goto refuse_unlock;
	if (!l) {
		l = kzalloc(sizeof(*l), GFP_KERNEL);
		if (!l) {
			kfree(e);
			goto refuse_unlock;
		}
		l->region = m->region;
		l->off = m->addr;
		INIT_LIST_HEAD(&l->queue);
		list_add_tail(&l->node, &krc_lockh.locks);
	}
	kref_get(&peer->ref);
	e->peer = peer;
	memcpy(e->gid, m->card.gid, 16);
	e->inc = m->card.incarnation;
	e->ticket = m->req_id;
	e->rkey = m->rkey;
	list_add_tail(&e->node, &l->queue);
	krc_lockh.entries++;
	krc_obj_created(KRC_OBJ_LOCK_ENTRY);
	if (list_is_singular(&l->queue))
		krc_lockh_grant(l);
	else
		krc_event(KRC_EV_LOCK_WAITS);
	mutex_unlock(&krc_lockh.lock);
	return;
refuse_unlock:
	mutex_unlock(&krc_lockh.lock);
refuse:
	krc_event(KRC_EV_LOCK_REFUSED);
	krc_lockh_reply(peer, KRC_MSG_MEM_LOCK_REP, m->req_id, ret, m->region,
			m->rkey, m->addr, 0);
}

/* Release the lock @m's ticket holds, or take that waiter out. */
static void krc_lockh_on_unlock(struct krc_peer *peer,
				const struct krc_ctrl_msg *m)
{
	struct krc_lock_entry *e = NULL;
	struct krc_lock_queue *l;
	int ret = -ESTALE;

	if (m->dst_incarnation &&
	    m->dst_incarnation != krc_node.card.incarnation)
		goto answer;
	mutex_lock(&krc_lockh.lock);
	l = krc_lockh_find(m->region, m->addr);
	if (l)
		e = krc_lockh_entry(l, m->card.gid, m->card.incarnation,
				    m->length);
	if (e && e->rkey != m->rkey)
		e = NULL;	/* a ticket is used with its own key only */
	if (e) {
		bool held = e->grant;

		krc_event(held ? KRC_EV_LOCK_RELEASES : KRC_EV_LOCK_CANCELS);
		krc_lockh_unqueue(e);
		krc_lockh_settle(l, held);
		ret = 0;
	} else {
		/* ESTALE: the region is gone; ENOENT: the ticket is */
		ret = krc_lmrh_lockable(m->region, m->rkey, m->addr) ?:
		      -ENOENT;
	}
	mutex_unlock(&krc_lockh.lock);
answer:
	krc_lockh_reply(peer, KRC_MSG_MEM_UNLOCK_REP, m->req_id, ret,
			m->region, 0, 0, 0);
}

/* MEM_LOCK and MEM_UNLOCK (lmr.c hands them here). */
void krc_lockh_msg(struct krc_peer *peer, const struct krc_ctrl_msg *msg)
{
	if (msg->type == KRC_MSG_MEM_LOCK)
		krc_lockh_on_lock(peer, msg);
	else
		krc_lockh_on_unlock(peer, msg);
}

/*
 * Take out every entry @gone says has no locker any more (@answer: tell
 * the waiters among them ESTALE); the locks they held pass on.
 */
static void krc_lockh_drop(bool (*gone)(const struct krc_lock_queue *l,
					const struct krc_lock_entry *e,
					const void *arg),
			   const void *arg, bool answer)
{
	struct krc_lock_entry *e, *et;
	struct krc_lock_queue *l, *lt;

	bool released;

	mutex_lock(&krc_lockh.lock);
	list_for_each_entry_safe(l, lt, &krc_lockh.locks, node) {
		/* All of them out first: none of them is granted on the way. */
		released = false;
		list_for_each_entry_safe(e, et, &l->queue, node) {
			if (!gone(l, e, arg))
				continue;
			if (answer && !e->grant)
				krc_lockh_reply(e->peer, KRC_MSG_MEM_LOCK_REP,
						e->ticket, -ESTALE, l->region,
						e->rkey, l->off, 0);
			krc_event(KRC_EV_LOCK_RECLAIMED);
			released |= !!e->grant;
			krc_lockh_unqueue(e);
		}
		krc_lockh_settle(l, released);
	}
	mutex_unlock(&krc_lockh.lock);
}

struct krc_lockh_region {
	u32 id;
	u32 rkey;
};

static bool krc_lockh_of_region(const struct krc_lock_queue *l,
				const struct krc_lock_entry *e,
				const void *arg)
{
	const struct krc_lockh_region *r = arg;

	return l->region == r->id && (!r->rkey || e->rkey == r->rkey);
}

/*
 * Region @id is gone (@rkey 0), or one of its keys (a publication
 * revoked): so are the locks taken with it. Process context.
 */
void krc_lockh_region_gone(u32 id, u32 rkey)
{
	struct krc_lockh_region r = { .id = id, .rkey = rkey };

	if (list_empty_careful(&krc_lockh.locks))
		return;
	krc_lockh_drop(krc_lockh_of_region, &r, true);
}

struct krc_lockh_inc {
	const u8 *gid;
	u64 inc;
};

static bool krc_lockh_of_inc(const struct krc_lock_queue *l,
			     const struct krc_lock_entry *e, const void *arg)
{
	const struct krc_lockh_inc *g = arg;

	return e->inc == g->inc && !memcmp(e->gid, g->gid, 16);
}

/* The incarnation @inc of node @gid is gone: its entries go. */
void krc_lockh_forget(const u8 gid[16], u64 inc)
{
	struct krc_lockh_inc g = { .gid = gid, .inc = inc };

	krc_lockh_drop(krc_lockh_of_inc, &g, false);
}

static bool krc_lockh_not_member(const struct krc_lock_queue *l,
				 const struct krc_lock_entry *e,
				 const void *arg)
{
	const struct krc_members_view *v = arg;
	u32 i;

	for (i = 0; i < v->n; i++)
		if (!memcmp(v->m[i].gid, e->gid, 16))
			return v->m[i].incarnation != e->inc;
	return true;
}

/* The entries of lockers that left the membership @v (complete) go. */
void krc_lockh_sweep(const struct krc_members_view *v)
{
	krc_lockh_drop(krc_lockh_not_member, v, false);
}

static bool krc_lockh_any(const struct krc_lock_queue *l,
			  const struct krc_lock_entry *e, const void *arg)
{
	return true;
}

/* The node stops: every lock goes, nobody is answered. */
void krc_lockh_stop(void)
{
	krc_lockh_drop(krc_lockh_any, NULL, false);
}
