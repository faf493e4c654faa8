// SPDX-License-Identifier: GPL-2.0
/*
 * lock.c - the locks this node's processes take on words of remote memory
 * (KRCORE_IOC_LOCK, KRCORE_IOC_UNLOCK; the owner's side, which keeps the
 * queue, is lock_host.c).
 *
 * A lock is a call to the region's owner (lmr.c's calls: sent again until
 * answered): a MEM_LOCK that the owner answers when the lock is this
 * caller's, with its grant number. A caller that stops waiting (timeout,
 * signal) sends a MEM_UNLOCK with the call's req_id, its ticket, which
 * takes it out of the owner's queue, or gives the lock back if it was
 * granted meanwhile. A grant that finds no waiter and no holder here is
 * an orphan and is given back the same way; a copy of a grant taken
 * already is recognised (lmr.c's answered calls, and the tickets held
 * here) and changes nothing.
 *
 * A lock taken belongs to the process (its handle is an index in
 * proc->locks). When the process's last VQ closes, whatever it still
 * holds is released: a process that is killed holding a lock does not
 * keep it from the others. A node that goes away loses its locks at the
 * owner (its GOODBYE, or the owner's membership sweep: lock_host.c).
 *
 * Locks: krc_lockc.held and proc->locks are xarrays with their own locks.
 */
#include <linux/slab.h>

#include "data/data.h"

#define KRC_LOCK_OFF_MASK	(KRCORE_LMR_MAX_LEN - 1)

/* A lock a process holds. */
struct krc_lock_held {
	u8 gid[16];			/* the owner */
	u64 owner_inc;
	u32 region;
	u32 rkey;
	u64 off;
	u64 ticket;			/* the req_id of the MEM_LOCK granted */
};

static struct {
	struct xarray held;		/* ticket -> struct krc_lock_held */
} krc_lockc = {
	.held = XARRAY_INIT(krc_lockc.held, 0),
};

/* End the lock (or the wait) of @ticket at the owner @peer, unwaited. */
static void krc_lock_unlock_async(struct krc_peer *peer, u64 inc, u32 region,
				  u32 rkey, u64 off, u64 ticket)
{
	struct krc_ctrl_msg msg = {
		.type = KRC_MSG_MEM_UNLOCK,
		.dst_incarnation = inc,
		.region = region,
		.rkey = rkey,
		.addr = off,
		.length = ticket,
	};

	if (!krc_lmr_call(peer, &msg, krc_param_lmr_timeout_ms, false))
		krc_event(KRC_EV_LOCK_UNLOCK_LOST);
}

/* A grant nobody here waits for or holds (lmr.c): given back. */
void krc_lock_orphan(struct krc_peer *peer, const struct krc_ctrl_msg *m)
{
	if (xa_load(&krc_lockc.held, m->req_id))
		return;		/* a copy of a grant a process holds */
	krc_event(KRC_EV_LOCK_ORPHANS);
	krc_lock_unlock_async(peer, m->card.incarnation, m->region, m->rkey,
			      m->addr, m->req_id);
}

static u32 krc_lock_count(struct krc_proc *proc)
{
	struct krc_lock_held *h;
	unsigned long i;
	u32 n = 0;

	xa_for_each(&proc->locks, i, h)
		n++;
	return n;
}

/* The granted call @c becomes a lock of @proc: its handle, or -errno. */
static int krc_lock_keep(struct krc_proc *proc, const struct krc_lmr_call *c,
			 u32 *handle)
{
	struct krc_lock_held *h = kzalloc(sizeof(*h), GFP_KERNEL);
	int ret;

	if (!h)
		return -ENOMEM;
	memcpy(h->gid, c->peer->gid, 16);
	h->owner_inc = c->rep.card.incarnation;
	h->region = c->msg.region;
	h->rkey = c->msg.rkey;
	h->off = c->msg.addr;
	h->ticket = c->msg.req_id;
	ret = xa_insert(&krc_lockc.held, h->ticket, h, GFP_KERNEL);
	if (ret) {
		kfree(h);
		return -ENOMEM;
	}
	ret = xa_alloc(&proc->locks, handle, h,
		       XA_LIMIT(1, max(krc_param_lmr_max_per_proc, 1U)),
		       GFP_KERNEL);
	if (ret) {
		xa_erase(&krc_lockc.held, h->ticket);
		kfree(h);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	krc_obj_created(KRC_OBJ_LOCK_HELD);
	return 0;
}

/* Forget @h (off proc->locks already) and end it at its owner. */
static void krc_lock_drop(struct krc_lock_held *h)
{
	struct krc_peer *peer;

	xa_erase(&krc_lockc.held, h->ticket);
	krc_obj_destroyed(KRC_OBJ_LOCK_HELD);
	peer = krc_peer_get(h->gid, false);
	if (peer && !IS_ERR(peer)) {
		krc_lock_unlock_async(peer, h->owner_inc, h->region, h->rkey,
				      h->off, h->ticket);
		krc_peer_put(peer);
	}
	kfree(h);
}

long krc_ioc_lock(struct krc_vqueue *vq, void __user *uarg)
{
	struct krc_ctrl_msg msg = { .type = KRC_MSG_MEM_LOCK };
	struct krc_lmr_call *c;
	struct krcore_lock lk;
	struct krc_peer *peer;
	u32 handle = 0;
	int ret;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&lk, uarg, sizeof(lk)))
		return -EFAULT;
	msg.region = lk.addr / KRCORE_LMR_MAX_LEN;
	msg.addr = lk.addr & KRC_LOCK_OFF_MASK;
	msg.rkey = lk.rkey;
	if (lk.reserved || (lk.addr & 7) || !msg.region ||
	    lk.timeout_ms > KRCORE_LMR_MAX_WAIT_MS)
		return -EINVAL;
	if (krc_lock_count(vq->proc) >= krc_param_lmr_max_per_proc)
		return -EMFILE;
	ret = krc_vq_enter(vq);
	if (ret)
		return ret;
	peer = krc_lmr_owner(lk.gid);
	if (IS_ERR(peer)) {
		krc_node_leave();
		return PTR_ERR(peer);
	}
	spin_lock(&peer->lock);
	msg.dst_incarnation = peer->card.incarnation;
	spin_unlock(&peer->lock);
	c = krc_lmr_call(peer, &msg, lk.timeout_ms ? lk.timeout_ms :
			 krc_param_lmr_timeout_ms, true);
	krc_peer_put(peer);
	krc_node_leave();
	if (!c)
		return -ENODEV;
	/* The wait is outside the gate: a teardown does not wait for it. */
	ret = krc_lmr_wait(c);
	if (!ret && c->rep.status) {
		ret = -c->rep.status;
		krc_lmr_call_put(c);
		return ret;
	}
	if (!ret)
		ret = krc_lock_keep(vq->proc, c, &handle);
	else
		krc_event(KRC_EV_LOCK_GAVE_UP);
	lk.grant = c->rep.length;
	lk.handle = handle;
	if (!ret && copy_to_user(uarg, &lk, sizeof(lk))) {
		xa_erase(&krc_lockc.held, c->msg.req_id);
		kfree(xa_erase(&vq->proc->locks, handle));
		krc_obj_destroyed(KRC_OBJ_LOCK_HELD);
		ret = -EFAULT;
	}
	/* Not granted in time, or not kept: out of the queue, or given back. */
	if (ret)
		krc_lock_unlock_async(c->peer, msg.dst_incarnation, msg.region,
				      msg.rkey, msg.addr, c->msg.req_id);
	krc_lmr_call_put(c);
	return ret;
}

long krc_ioc_unlock(struct krc_vqueue *vq, void __user *uarg)
{
	struct krc_ctrl_msg msg = { .type = KRC_MSG_MEM_UNLOCK };
	struct krc_lock_held *h;
	struct krcore_unlock u;
	struct krc_lmr_call *c;
	u8 owner[16];
	int ret;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&u, uarg, sizeof(u)))
		return -EFAULT;
	if (u.reserved || u.timeout_ms > KRCORE_LMR_MAX_WAIT_MS)
		return -EINVAL;
	h = u.handle ? xa_erase(&vq->proc->locks, u.handle) : NULL;
	if (!h)
		return -ENOENT;
	xa_erase(&krc_lockc.held, h->ticket);
	krc_obj_destroyed(KRC_OBJ_LOCK_HELD);
	msg.dst_incarnation = h->owner_inc;
	msg.region = h->region;
	msg.rkey = h->rkey;
	msg.addr = h->off;
	msg.length = h->ticket;
	memcpy(owner, h->gid, 16);
	kfree(h);
	ret = krc_vq_enter(vq);
	if (ret)
		return ret;	/* the node stopped: its locks went */
	c = krc_lmr_call_owner(owner, &msg, u.timeout_ms);
	if (IS_ERR(c))
		return PTR_ERR(c);
	if (!c)
		return -ETIMEDOUT;
	ret = krc_lmr_wait(c);
	/* Not confirmed: it goes on, unwaited, for another lmr_timeout_ms. */
	if (ret == -EINTR || ret == -ETIMEDOUT)
		krc_lock_unlock_async(c->peer, msg.dst_incarnation, msg.region,
				      msg.rkey, msg.addr, msg.length);
	if (!ret && c->rep.status)
		ret = -c->rep.status;
	krc_lmr_call_put(c);
	return ret;
}

/* The process's last VQ closed: it holds no lock any more. */
void krc_lock_proc_release(struct krc_proc *proc)
{
	struct krc_lock_held *h;
	unsigned long i;

	xa_for_each(&proc->locks, i, h) {
		xa_erase(&proc->locks, i);
		krc_lock_drop(h);
	}
}
