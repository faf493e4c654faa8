// SPDX-License-Identifier: GPL-2.0
/*
 * mr.c - processes and their memory registrations.
 *
 * A registration pins a range of the caller's memory with ib_reg_user_mr
 * (zero-copy; the pages are charged to the caller's RLIMIT_MEMLOCK) in
 * the node's PD. It belongs to the process (its mm): every VQ the process
 * opened may use its lkey, no other process may (the request check looks
 * the lkey up in the caller's table only). Each request that names a
 * registration holds it; deregistration, explicit or at the process's
 * last close, first waits until no request uses it, so the RNIC never
 * touches memory that was given back.
 */
#include <linux/hashtable.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "krcore.h"

#define KRC_MR_DRAIN_MS	30000

static DEFINE_HASHTABLE(krc_procs, 8);
static DEFINE_MUTEX(krc_procs_lock);

struct krc_proc *krc_proc_get(struct mm_struct *mm)
{
	struct krc_proc *proc;

	mutex_lock(&krc_procs_lock);
	hash_for_each_possible(krc_procs, proc, hnode, (unsigned long)mm) {
		if (proc->mm == mm) {
			kref_get(&proc->ref);
			mutex_unlock(&krc_procs_lock);
			return proc;
		}
	}
	proc = kzalloc(sizeof(*proc), GFP_KERNEL);
	if (proc) {
		kref_init(&proc->ref);
		mmgrab(mm);
		proc->mm = mm;
		mutex_init(&proc->lock);
		xa_init(&proc->mrs);
		init_waitqueue_head(&proc->wq);
		hash_add(krc_procs, &proc->hnode, (unsigned long)mm);
		krc_obj_created(KRC_OBJ_PROC);
	}
	mutex_unlock(&krc_procs_lock);
	return proc;
}

/* Wait until no request uses @mr, then give it back. */
static void krc_mr_destroy(struct krc_proc *proc, struct krc_mr *mr)
{
	if (!wait_event_timeout(proc->wq, !atomic_read(&mr->inflight),
				msecs_to_jiffies(KRC_MR_DRAIN_MS)))
		pr_err("krcore: registration %x still in use after %d ms\n",
		       mr->ibmr->lkey, KRC_MR_DRAIN_MS);
	ib_dereg_mr(mr->ibmr);
	/* A request check may still be looking at it (under RCU). */
	kfree_rcu(mr, rcu);
	krc_obj_destroyed(KRC_OBJ_USER_MR);
}

static void krc_proc_unhash(struct kref *ref)
{
	hash_del(&container_of(ref, struct krc_proc, ref)->hnode);
}

/* Process context: the last put deregisters every remaining MR. */
void krc_proc_put(struct krc_proc *proc)
{
	struct krc_mr *mr;
	unsigned long lkey;

	if (!proc || !kref_put_mutex(&proc->ref, krc_proc_unhash,
				     &krc_procs_lock))
		return;
	mutex_unlock(&krc_procs_lock);
	xa_for_each(&proc->mrs, lkey, mr) {
		WRITE_ONCE(mr->dying, true);
		xa_erase(&proc->mrs, lkey);
		krc_mr_destroy(proc, mr);
	}
	xa_destroy(&proc->mrs);
	mmdrop(proc->mm);
	kfree(proc);
	krc_obj_destroyed(KRC_OBJ_PROC);
}

static int krc_ib_access(u32 access)
{
	int flags = 0;

	if (access & KRCORE_ACCESS_LOCAL_WRITE)
		flags |= IB_ACCESS_LOCAL_WRITE;
	if (access & KRCORE_ACCESS_REMOTE_READ)
		flags |= IB_ACCESS_REMOTE_READ;
	if (access & KRCORE_ACCESS_REMOTE_WRITE)
		flags |= IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE;
	if (access & KRCORE_ACCESS_REMOTE_ATOMIC)
		flags |= IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE;
	return flags;
}

/* Register @req's range of the caller's memory (current->mm == proc->mm). */
int krc_mr_reg(struct krc_proc *proc, struct krcore_reg_mr *req)
{
	const u32 known = KRCORE_ACCESS_LOCAL_WRITE | KRCORE_ACCESS_REMOTE_READ |
			  KRCORE_ACCESS_REMOTE_WRITE | KRCORE_ACCESS_REMOTE_ATOMIC;
	struct krc_node *node = &krc_node;
	struct krc_mr *mr;
	int ret;

	if (!req->length || req->access & ~known || req->reserved ||
	    req->addr + req->length < req->addr)
		return -EINVAL;
	if (!READ_ONCE(node->up))
		return -ENODEV;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	atomic_set(&mr->inflight, 0);
	mr->proc = proc;
	mr->view.addr = req->addr;
	mr->view.length = req->length;
	mr->view.access = req->access;
	if (req->access & (KRCORE_ACCESS_REMOTE_WRITE | KRCORE_ACCESS_REMOTE_ATOMIC))
		mr->view.access |= KRCORE_ACCESS_LOCAL_WRITE;
	mr->ibmr = ib_reg_user_mr(node->dev->pd, req->addr, req->length,
				  req->addr, krc_ib_access(req->access));
	if (IS_ERR(mr->ibmr)) {
		ret = PTR_ERR(mr->ibmr);
		kfree(mr);
		return ret;
	}
	mutex_lock(&proc->lock);
	ret = xa_insert(&proc->mrs, mr->ibmr->lkey, mr, GFP_KERNEL);
	mutex_unlock(&proc->lock);
	if (ret) {
		ib_dereg_mr(mr->ibmr);
		kfree(mr);
		return ret;
	}
	krc_obj_created(KRC_OBJ_USER_MR);
	req->lkey = mr->ibmr->lkey;
	req->rkey = mr->ibmr->rkey;
	return 0;
}

int krc_mr_dereg(struct krc_proc *proc, u32 lkey)
{
	struct krc_mr *mr;

	mutex_lock(&proc->lock);
	mr = xa_load(&proc->mrs, lkey);
	if (mr) {
		/* No new request can hold it from here on (krc_mr_hold). */
		WRITE_ONCE(mr->dying, true);
		/* Pairs with krc_mr_hold(): it sees dying or we see its count. */
		smp_mb();
		xa_erase(&proc->mrs, lkey);
	}
	mutex_unlock(&proc->lock);
	if (!mr)
		return -ENOKEY;
	krc_mr_destroy(proc, mr);
	return 0;
}

/*
 * The request check's lookup: this process's registration of @lkey.
 * Under rcu_read_lock(); the caller then holds it with krc_mr_hold().
 */
const struct krc_mr_view *krc_mr_find(void *arg, u32 lkey)
{
	struct krc_proc *proc = arg;
	struct krc_mr *mr = xa_load(&proc->mrs, lkey);

	return mr && !READ_ONCE(mr->dying) ? &mr->view : NULL;
}

/* Count a request that uses @mr; false if it is being deregistered. */
bool krc_mr_hold(struct krc_mr *mr)
{
	atomic_inc(&mr->inflight);
	/* Pairs with krc_mr_dereg(): we see dying or it sees our count. */
	smp_mb__after_atomic();
	if (!READ_ONCE(mr->dying))
		return true;
	krc_mr_put_inflight(mr);
	return false;
}

/* A request that used @mr completed (any context). */
void krc_mr_put_inflight(struct krc_mr *mr)
{
	if (atomic_dec_and_test(&mr->inflight) && READ_ONCE(mr->dying))
		wake_up_all(&mr->proc->wq);
}
