// SPDX-License-Identifier: GPL-2.0
/*
 * lmr.c - remote memory regions this node's processes hold: memory they
 * allocated on other nodes (KRCORE_IOC_LMR_ALLOC, _FREE; the owner's side
 * is lmr_host.c).
 *
 * An allocation or a free is a call: a MEM_ALLOC or MEM_FREE sent to the
 * owner's control QP and sent again (100 ms, doubling up to 1 s) until
 * its answer arrives or its deadline passes. The owner answers a
 * retransmitted ALLOC with the region it already made, so a call makes
 * at most one region, and answers each copy: a copy of an answer already
 * taken is recognised (the last KRC_LMR_ANSWERED ALLOCs answered) and
 * dropped. An answer that arrives when nobody waits for it any more (the
 * caller timed out or was interrupted) is an orphan, and its region is
 * freed at once.
 *
 * A region belongs to the process (its struct krc_proc, like its
 * registrations): its handle is an index in proc->lmrs. When the
 * process's last VQ closes, every region it still holds is freed by a
 * call nobody waits for. Data moves with the VQs' own READ, WRITE and
 * atomic requests: the owner's RNIC checks the rkey and its rights.
 *
 * Locks: krc_lmrc.lock (the calls), process context only; a send under it
 * takes no lock of this file. A process's handles are in its xarray.
 */
#include <linux/slab.h>

#include "data/data.h"

#define KRC_LMR_RTO_MS		100
#define KRC_LMR_RTO_MAX_MS	1000
/*
 * ALLOCs, and LOCKs, answered lately: a copy of their answer is no
 * orphan. One ring each, so that many locks do not push an ALLOC out.
 */
#define KRC_LMR_ANSWERED	64

static struct {
	struct mutex lock;		/* calls, next_req, running */
	struct list_head calls;
	u64 next_req;
	u64 answered[2][KRC_LMR_ANSWERED];	/* req_ids: ALLOC, LOCK */
	u32 answered_next[2];
	bool running;
	struct delayed_work resend_work;
} krc_lmrc = {
	.lock = __MUTEX_INITIALIZER(krc_lmrc.lock),
	.calls = LIST_HEAD_INIT(krc_lmrc.calls),
};

void krc_lmr_call_put(struct krc_lmr_call *c)
{
	if (!refcount_dec_and_test(&c->ref))
		return;
	krc_peer_put(c->peer);
	kfree(c);
}

static void krc_lmr_send(struct krc_lmr_call *c)
{
	c->msg.card = krc_node.card;
	if (krc_peer_send(c->peer, &c->msg))
		pr_warn_ratelimited("krcore: remote memory request not sent\n");
}

/*
 * A new call to @peer (a reference is taken) of @msg, on the list and
 * sent once; @waited: the caller keeps a reference and waits on ->done.
 * NULL when the node stops or memory is short.
 */
struct krc_lmr_call *krc_lmr_call(struct krc_peer *peer,
				  const struct krc_ctrl_msg *msg,
				  unsigned int timeout_ms, bool waited)
{
	struct krc_lmr_call *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return NULL;
	kref_get(&peer->ref);
	c->peer = peer;
	c->msg = *msg;
	c->rto_ms = KRC_LMR_RTO_MS;
	c->next_send = jiffies + msecs_to_jiffies(c->rto_ms);
	c->deadline = jiffies + msecs_to_jiffies(timeout_ms);
	init_completion(&c->done);
	refcount_set(&c->ref, waited ? 2 : 1);
	mutex_lock(&krc_lmrc.lock);
	if (!krc_lmrc.running) {
		mutex_unlock(&krc_lmrc.lock);
		refcount_set(&c->ref, 1);
		krc_lmr_call_put(c);
		return NULL;
	}
	c->msg.req_id = ++krc_lmrc.next_req;
	list_add_tail(&c->node, &krc_lmrc.calls);
	mutex_unlock(&krc_lmrc.lock);
	krc_lmr_send(c);
	mod_delayed_work(krc_wq, &krc_lmrc.resend_work,
			 msecs_to_jiffies(KRC_LMR_RTO_MS));
	return c;
}

/* Free region @region of the owner @peer (incarnation @inc), unwaited. */
static void krc_lmr_free_async(struct krc_peer *peer, u64 inc, u32 region)
{
	struct krc_ctrl_msg msg = {
		.type = KRC_MSG_MEM_FREE,
		.dst_incarnation = inc,
		.region = region,
	};

	if (!krc_lmr_call(peer, &msg, krc_param_lmr_timeout_ms, false))
		krc_event(KRC_EV_LMR_FREE_LOST);
}

/* Send again what is due, give up on what is late. */
static void krc_lmr_resend_work(struct work_struct *work)
{
	struct krc_lmr_call *c, *tmp;
	unsigned long now = jiffies, next = now + HZ;
	LIST_HEAD(late);

	mutex_lock(&krc_lmrc.lock);
	list_for_each_entry_safe(c, tmp, &krc_lmrc.calls, node) {
		if (time_after_eq(now, c->deadline)) {
			/* off the list here: its waiter then finds it gone */
			list_del_init(&c->node);
			list_add_tail(&c->gone, &late);
			continue;
		}
		if (time_before(now, c->next_send)) {
			if (time_before(c->next_send, next))
				next = c->next_send;
			continue;
		}
		c->rto_ms = min(c->rto_ms * 2, KRC_LMR_RTO_MAX_MS);
		c->next_send = now + msecs_to_jiffies(c->rto_ms);
		if (time_before(c->next_send, next))
			next = c->next_send;
		krc_event(KRC_EV_LMR_RETRANSMITS);
		krc_lmr_send(c);
	}
	if (!list_empty(&krc_lmrc.calls) && krc_lmrc.running)
		mod_delayed_work(krc_wq, &krc_lmrc.resend_work,
				 max_t(long, next - jiffies, 1));
	mutex_unlock(&krc_lmrc.lock);
	list_for_each_entry_safe(c, tmp, &late, gone) {
		list_del(&c->gone);
		if (c->msg.type == KRC_MSG_MEM_FREE)
			krc_event(KRC_EV_LMR_FREE_LOST);
		else if (c->msg.type == KRC_MSG_MEM_UNLOCK)
			krc_event(KRC_EV_LOCK_UNLOCK_LOST);
		complete(&c->done);
		krc_lmr_call_put(c);
	}
}

/*
 * An answer of the owner @peer (each answer's type is its request's plus
 * one). An ALLOC's or LOCK's call is always waited for, and leaves the
 * list when its caller stops waiting: such an answer that finds no call
 * is an orphan, and what it gave (a region, a lock) is given back.
 */
static void krc_lmr_on_reply(struct krc_peer *peer,
			     const struct krc_ctrl_msg *m)
{
	u8 want = m->type - 1;
	bool kept = want == KRC_MSG_MEM_ALLOC || want == KRC_MSG_MEM_LOCK;
	struct krc_lmr_call *c, *found = NULL;
	bool copy = false;
	u32 i, ring, *next;

	mutex_lock(&krc_lmrc.lock);
	list_for_each_entry(c, &krc_lmrc.calls, node) {
		if (c->msg.req_id == m->req_id && c->msg.type == want &&
		    c->peer == peer) {
			found = c;
			list_del_init(&c->node);
			found->rep = *m;
			found->answered = true;
			break;
		}
	}
	ring = want == KRC_MSG_MEM_LOCK;
	next = &krc_lmrc.answered_next[ring];
	if (found && kept) {
		krc_lmrc.answered[ring][*next] = m->req_id;
		*next = (*next + 1) % KRC_LMR_ANSWERED;
	}
	/*
	 * The owner answers each copy of a retransmitted ALLOC or LOCK: a
	 * second answer to a call answered already is no orphan (its region
	 * or lock is the caller's now).
	 */
	for (i = 0; !found && kept && i < KRC_LMR_ANSWERED; i++)
		if (krc_lmrc.answered[ring][i] == m->req_id)
			copy = true;
	mutex_unlock(&krc_lmrc.lock);
	if (found) {
		complete(&found->done);
		krc_lmr_call_put(found);	/* the list's */
	} else if (want == KRC_MSG_MEM_ALLOC && !m->status && !copy) {
		krc_event(KRC_EV_LMR_ORPHANS);
		krc_lmr_free_async(peer, m->card.incarnation, m->region);
	} else if (want == KRC_MSG_MEM_LOCK && !m->status && !copy) {
		krc_lock_orphan(peer, m);
	}
}

/* Every MEM_* message (the conn layer's mem_msg). */
void krc_lmr_msg(struct krc_peer *peer, const struct krc_ctrl_msg *msg)
{
	switch (msg->type) {
	case KRC_MSG_MEM_ALLOC:
	case KRC_MSG_MEM_FREE:
	case KRC_MSG_MEM_SET:
	case KRC_MSG_MEM_COPY:
	case KRC_MSG_MEM_PUBLISH:
	case KRC_MSG_MEM_UNPUBLISH:
	case KRC_MSG_MEM_LOOKUP:
		krc_lmrh_msg(peer, msg);
		break;
	case KRC_MSG_MEM_LOCK:
	case KRC_MSG_MEM_UNLOCK:
		krc_lockh_msg(peer, msg);
		break;
	default:
		krc_lmr_on_reply(peer, msg);
		break;
	}
}

/*
 * Wait for @c's answer up to its deadline: 0 (c->rep holds it),
 * -ETIMEDOUT or -EINTR. The call is off the list on return either way,
 * and an answer that arrives later finds no waiter.
 */
int krc_lmr_wait(struct krc_lmr_call *c)
{
	long left = (long)(c->deadline - jiffies);
	bool answered;

	if (left > 0 &&
	    wait_for_completion_interruptible_timeout(&c->done, left) < 0)
		left = -1;
	mutex_lock(&krc_lmrc.lock);
	answered = c->answered;
	if (!list_empty(&c->node)) {
		list_del_init(&c->node);
		krc_lmr_call_put(c);	/* the list's */
	}
	mutex_unlock(&krc_lmrc.lock);
	if (answered)
		return 0;
	return left < 0 ? -EINTR : -ETIMEDOUT;
}

/* The owner @gid's peer with a card, under the gate; ERR_PTR on error. */
struct krc_peer *krc_lmr_owner(const u8 gid[16])
{
	struct krc_peer *peer = krc_peer_get(gid, true);
	u32 reads = 0;
	int ret = 0;

	if (IS_ERR(peer))
		return peer;
	if (!READ_ONCE(peer->card_valid) && krc_peer_refresh(peer, &reads))
		ret = -EHOSTUNREACH;
	if (ret) {
		krc_peer_put(peer);
		return ERR_PTR(ret);
	}
	return peer;
}

/*
 * A waited call of @msg to the owner @gid, started under the gate, which
 * it leaves: the call (NULL when the node stops or memory is short), or
 * ERR_PTR when the owner has no card (krc_lmr_owner(): READ again after
 * its GOODBYE, so a reloaded owner answers ESTALE for its old regions).
 */
struct krc_lmr_call *krc_lmr_call_owner(const u8 gid[16],
					const struct krc_ctrl_msg *msg,
					u32 timeout_ms)
{
	struct krc_peer *peer = krc_lmr_owner(gid);
	struct krc_lmr_call *c;

	if (IS_ERR(peer)) {
		krc_node_leave();
		return ERR_CAST(peer);
	}
	c = krc_lmr_call(peer, msg, timeout_ms ?: krc_param_lmr_timeout_ms,
			 true);
	krc_peer_put(peer);
	krc_node_leave();
	return c;
}

/* A copy of @src in the process's table: its index in *handle. */
int krc_lmr_keep_handle(struct krc_proc *proc, const struct krc_lmr_handle *src,
			u32 *handle)
{
	struct krc_lmr_handle *h = kmemdup(src, sizeof(*src), GFP_KERNEL);
	int ret;

	if (!h)
		return -ENOMEM;
	ret = xa_alloc(&proc->lmrs, handle, h,
		       XA_LIMIT(1, max(krc_param_lmr_max_per_proc, 1U)),
		       GFP_KERNEL);
	if (ret) {
		kfree(h);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	krc_obj_created(KRC_OBJ_LMR_HANDLE);
	return 0;
}

static int krc_lmr_keep(struct krc_proc *proc, struct krc_peer *peer,
			const struct krc_ctrl_msg *rep, u32 *handle)
{
	struct krc_lmr_handle h = {
		.owner_inc = rep->card.incarnation,
		.region = rep->region,
		.access = rep->access,
		.length = rep->length,
	};

	memcpy(h.gid, peer->gid, 16);
	return krc_lmr_keep_handle(proc, &h, handle);
}

long krc_ioc_lmr_alloc(struct krc_vqueue *vq, void __user *uarg)
{
	struct krc_ctrl_msg msg = { .type = KRC_MSG_MEM_ALLOC };
	struct krcore_lmr_alloc a;
	struct krc_lmr_call *c;
	struct krc_peer *peer;
	unsigned int timeout;
	u32 handle = 0;
	int ret;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (!a.length || a.length > KRCORE_LMR_MAX_LEN || a.reserved ||
	    !a.access || (a.access & ~(u32)KRC_LMR_RIGHTS) ||
	    a.timeout_ms > KRCORE_LMR_MAX_WAIT_MS)
		return -EINVAL;
	if (krc_lmr_count(vq->proc) >= krc_param_lmr_max_per_proc)
		return -EMFILE;
	timeout = a.timeout_ms ? a.timeout_ms : krc_param_lmr_timeout_ms;
	ret = krc_vq_enter(vq);
	if (ret)
		return ret;
	peer = krc_lmr_owner(a.gid);
	if (IS_ERR(peer)) {
		krc_node_leave();
		return PTR_ERR(peer);
	}
	msg.length = a.length;
	msg.access = a.access;
	spin_lock(&peer->lock);
	msg.dst_incarnation = peer->card.incarnation;
	spin_unlock(&peer->lock);
	c = krc_lmr_call(peer, &msg, timeout, true);
	krc_peer_put(peer);
	krc_node_leave();
	if (!c)
		return -ENODEV;
	/* The wait is outside the gate: a teardown does not wait for it. */
	ret = krc_lmr_wait(c);
	if (!ret && c->rep.status)
		ret = -c->rep.status;
	if (ret) {
		krc_lmr_call_put(c);
		return ret;
	}
	ret = krc_lmr_keep(vq->proc, c->peer, &c->rep, &handle);
	a.addr = c->rep.addr;
	a.rkey = c->rep.rkey;
	a.region = c->rep.region;
	a.incarnation = c->rep.card.incarnation;
	a.handle = handle;
	if (!ret && copy_to_user(uarg, &a, sizeof(a)))
		ret = -EFAULT;
	if (ret) {
		if (handle) {
			kfree(xa_erase(&vq->proc->lmrs, handle));
			krc_obj_destroyed(KRC_OBJ_LMR_HANDLE);
		}
		krc_lmr_free_async(c->peer, c->rep.card.incarnation,
				   c->rep.region);
	}
	krc_lmr_call_put(c);
	return ret;
}

long krc_ioc_lmr_free(struct krc_vqueue *vq, void __user *uarg)
{
	struct krc_ctrl_msg msg = { .type = KRC_MSG_MEM_FREE };
	struct krcore_lmr_free f;
	struct krc_lmr_handle *h;
	struct krc_lmr_call *c;
	int ret;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&f, uarg, sizeof(f)))
		return -EFAULT;
	if (f.reserved)
		return -EINVAL;
	h = f.handle ? xa_erase(&vq->proc->lmrs, f.handle) : NULL;
	if (!h)
		return -ENOENT;
	krc_obj_destroyed(KRC_OBJ_LMR_HANDLE);
	if (h->named) {
		kfree(h);	/* looked up: not this process's to free */
		return 0;
	}
	msg.dst_incarnation = h->owner_inc;
	msg.region = h->region;
	ret = krc_vq_enter(vq);
	if (ret) {
		kfree(h);
		return ret;	/* the node stopped: its regions went */
	}
	c = krc_lmr_call_owner(h->gid, &msg, 0);
	kfree(h);
	if (IS_ERR(c))
		return PTR_ERR(c);
	if (!c)
		return -ETIMEDOUT;
	ret = krc_lmr_wait(c);
	/* Not confirmed: it goes on, unwaited, for another lmr_timeout_ms. */
	if (ret == -EINTR || ret == -ETIMEDOUT)
		krc_lmr_free_async(c->peer, msg.dst_incarnation, msg.region);
	/* ENOENT: freed by an earlier copy of this call, or the owner reloaded */
	if (!ret && c->rep.status && c->rep.status != ENOENT)
		ret = -c->rep.status;
	krc_lmr_call_put(c);
	return ret;
}

/*
 * A waited call of @msg to the owner @gid, outside the gate: 0 or -errno;
 * the answer in *@rep if asked for.
 */
int krc_lmr_ask(struct krc_vqueue *vq, const u8 gid[16],
		const struct krc_ctrl_msg *msg, u32 timeout_ms,
		struct krc_ctrl_msg *rep)
{
	int ret = krc_vq_enter(vq);

	return ret ? ret : krc_lmr_ask_gated(gid, msg, timeout_ms, rep);
}

/* krc_lmr_ask(), started under the gate, which it leaves. */
int krc_lmr_ask_gated(const u8 gid[16], const struct krc_ctrl_msg *msg,
		      u32 timeout_ms, struct krc_ctrl_msg *rep)
{
	struct krc_lmr_call *c;
	int ret;

	c = krc_lmr_call_owner(gid, msg, timeout_ms);
	if (IS_ERR(c))
		return PTR_ERR(c);
	if (!c)
		return -EHOSTUNREACH;
	ret = krc_lmr_wait(c);
	if (!ret && c->rep.status)
		ret = -c->rep.status;
	if (!ret && rep)
		*rep = c->rep;
	krc_lmr_call_put(c);
	return ret;
}

/*
 * The checks of a memset or copy on the process's own copy of a region
 * (from the owner's answer), done again by the owner: 0, -EACCES without
 * @right, -ERANGE past its end.
 */
static int krc_lmr_op_ok(const struct krc_lmr_handle *h, u32 right, u64 off,
			 u64 len)
{
	if (!(h->access & right))
		return -EACCES;
	if (off > h->length || len > h->length - off)
		return -ERANGE;
	return 0;
}

/* A memset at the owner. */
long krc_ioc_lmr_set(struct krc_vqueue *vq, void __user *uarg)
{
	struct krc_ctrl_msg msg = { .type = KRC_MSG_MEM_SET };
	struct krcore_lmr_set st;
	struct krc_lmr_handle *h;
	u8 owner[16];
	int ret = 0;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&st, uarg, sizeof(st)))
		return -EFAULT;
	if (st.reserved || st.value > 0xff || !st.length ||
	    st.timeout_ms > KRCORE_LMR_MAX_WAIT_MS)
		return -EINVAL;
	xa_lock(&vq->proc->lmrs);
	h = xa_load(&vq->proc->lmrs, st.handle);
	if (h) {
		memcpy(owner, h->gid, 16);
		msg.dst_incarnation = h->owner_inc;
		msg.region = h->region;
		msg.rkey = h->rkey;	/* a name's: the owner checks it */
		ret = krc_lmr_op_ok(h, KRCORE_ACCESS_REMOTE_WRITE, st.offset,
				    st.length);
	}
	xa_unlock(&vq->proc->lmrs);
	if (!h)
		return -ENOENT;
	if (ret)
		return ret;
	msg.addr = st.offset;
	msg.length = st.length;
	msg.access = st.value;
	return krc_lmr_ask(vq, owner, &msg, st.timeout_ms, NULL);
}

/* A copy at the owner, between two regions of this process there. */
long krc_ioc_lmr_copy(struct krc_vqueue *vq, void __user *uarg)
{
	struct krc_ctrl_msg msg = { .type = KRC_MSG_MEM_COPY };
	struct krc_lmr_handle *d, *s;
	struct krcore_lmr_copy cp;
	u8 owner[16];
	int ret = 0;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&cp, uarg, sizeof(cp)))
		return -EFAULT;
	if (cp.reserved || !cp.length || cp.timeout_ms > KRCORE_LMR_MAX_WAIT_MS)
		return -EINVAL;
	xa_lock(&vq->proc->lmrs);
	d = xa_load(&vq->proc->lmrs, cp.dst_handle);
	s = xa_load(&vq->proc->lmrs, cp.src_handle);
	if (d && s) {
		memcpy(owner, d->gid, 16);
		msg.dst_incarnation = d->owner_inc;
		msg.region = d->region;
		msg.src_region = s->region;
		if (memcmp(d->gid, s->gid, 16) || d->owner_inc != s->owner_inc)
			ret = -EXDEV;	/* not yet: two owners */
		else if (d->named || s->named)
			ret = -EPERM;	/* the holder's own regions only */
		else
			ret = krc_lmr_op_ok(d, KRCORE_ACCESS_REMOTE_WRITE,
					    cp.dst_offset, cp.length) ?:
			      krc_lmr_op_ok(s, KRCORE_ACCESS_REMOTE_READ,
					    cp.src_offset, cp.length);
	}
	xa_unlock(&vq->proc->lmrs);
	if (!d || !s)
		return -ENOENT;
	if (ret)
		return ret;
	msg.addr = cp.dst_offset;
	msg.src_off = cp.src_offset;
	msg.length = cp.length;
	return krc_lmr_ask(vq, owner, &msg, cp.timeout_ms, NULL);
}

u32 krc_lmr_count(struct krc_proc *proc)
{
	struct krc_lmr_handle *h;
	unsigned long i;
	u32 n = 0;

	xa_for_each(&proc->lmrs, i, h)
		n++;
	return n;
}

/* The process's last VQ closed: free every region it still holds. */
void krc_lmr_proc_release(struct krc_proc *proc)
{
	struct krc_lmr_handle *h;
	struct krc_peer *peer;
	unsigned long i;

	xa_for_each(&proc->lmrs, i, h) {
		xa_erase(&proc->lmrs, i);
		krc_obj_destroyed(KRC_OBJ_LMR_HANDLE);
		peer = h->named ? NULL : krc_peer_get(h->gid, false);
		if (peer && !IS_ERR(peer)) {
			krc_lmr_free_async(peer, h->owner_inc, h->region);
			krc_peer_put(peer);
		}
		kfree(h);
	}
}

void krc_lmr_start(void)
{
	INIT_DELAYED_WORK(&krc_lmrc.resend_work, krc_lmr_resend_work);
	mutex_lock(&krc_lmrc.lock);
	krc_lmrc.running = true;
	mutex_unlock(&krc_lmrc.lock);
	krc_lmrh_start();
}

/* The node stops: every call ends (waiters get ETIMEDOUT or an answer). */
void krc_lmr_stop(void)
{
	struct krc_lmr_call *c, *tmp;
	LIST_HEAD(calls);

	mutex_lock(&krc_lmrc.lock);
	krc_lmrc.running = false;
	list_for_each_entry_safe(c, tmp, &krc_lmrc.calls, node) {
		list_del_init(&c->node);
		list_add_tail(&c->gone, &calls);
	}
	mutex_unlock(&krc_lmrc.lock);
	cancel_delayed_work_sync(&krc_lmrc.resend_work);
	list_for_each_entry_safe(c, tmp, &calls, gone) {
		list_del(&c->gone);
		complete(&c->done);
		krc_lmr_call_put(c);
	}
	krc_lmrh_stop();
}
