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
 *
 * A registration the kernel may write into itself (LOCAL_WRITE: the
 * target of a datagram READ or atomic, dgram.c) also has its pages pinned
 * by krcore, so that those results go where an RNIC would put them: into
 * the registered pages, whatever the process maps there later, and
 * without touching its address space (a mapping that blocks on a fault
 * would otherwise block everyone's completions).
 */
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "data/data.h"

static DEFINE_HASHTABLE(krc_procs, 8);
static DEFINE_MUTEX(krc_procs_lock);
/* rkey -> registration with remote access, of every process (dgram.c). */
static DEFINE_XARRAY(krc_rkeys);
/*
 * Deregistrations waiting for a registration's last request. One queue
 * for all, never freed: the request that completes last may run after
 * the registration and its process are gone, so it touches neither.
 */
static DECLARE_WAIT_QUEUE_HEAD(krc_mr_wq);

/*
 * Processes whose last VQ closed: everything they held is given back,
 * their context (and the mm_struct it holds, never reused meanwhile)
 * waits up to KRC_PROC_IDLE for the same process's next VQ, which takes
 * it instead of allocating one (a process that opens and closes one VQ
 * at a time). It keeps its throttle: closing every VQ does not reset it.
 */
#define KRC_PROC_IDLE		HZ
#define KRC_PROC_IDLE_MAX	64
static DEFINE_SPINLOCK(krc_procs_idle_lock);
static LIST_HEAD(krc_procs_idle);
static u32 krc_nprocs_idle;
static void krc_procs_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(krc_procs_reap_work, krc_procs_reap);

static void krc_proc_init(struct krc_proc *proc)
{
	kref_init(&proc->ref);
	mutex_init(&proc->lock);
	spin_lock_init(&proc->ilock);
	xa_init(&proc->mrs);
	xa_init(&proc->rkeys);
	xa_init_flags(&proc->lmrs, XA_FLAGS_ALLOC1);
	xa_init_flags(&proc->locks, XA_FLAGS_ALLOC1);
	proc->wrs = 0;
	proc->bytes = 0;
	atomic_set(&proc->nports, 0);
	atomic_set(&proc->high_vqs, 0);
	atomic_set(&proc->nvqs, 1);
}

/* The idle context of @mm, taken off the idle list; NULL if none. */
static struct krc_proc *krc_proc_idle_take(struct mm_struct *mm)
{
	struct krc_proc *proc, *found = NULL;

	spin_lock(&krc_procs_idle_lock);
	list_for_each_entry(proc, &krc_procs_idle, idle_node) {
		if (proc->mm == mm) {
			list_del(&proc->idle_node);
			krc_nprocs_idle--;
			found = proc;
			break;
		}
	}
	spin_unlock(&krc_procs_idle_lock);
	return found;
}

static void krc_proc_free(struct krc_proc *proc)
{
	kfree(proc->spare_vq);
	mmdrop(proc->mm);
	kfree(proc);
	krc_obj_destroyed(KRC_OBJ_PROC);
}

/* @proc gave everything back: idle, or freed if too many are. */
static void krc_proc_idle(struct krc_proc *proc)
{
	bool kept = false;

	proc->idle_since = jiffies;
	spin_lock(&krc_procs_idle_lock);
	if (krc_nprocs_idle < KRC_PROC_IDLE_MAX) {
		list_add(&proc->idle_node, &krc_procs_idle);
		if (!krc_nprocs_idle++)
			mod_delayed_work(krc_wq, &krc_procs_reap_work,
					 KRC_PROC_IDLE);
		kept = true;
	}
	spin_unlock(&krc_procs_idle_lock);
	if (!kept)
		krc_proc_free(proc);
}

/* Free the contexts idle since before @before (all: @all). */
static void krc_procs_idle_cut(unsigned long before, bool all)
{
	struct krc_proc *proc, *tmp;
	LIST_HEAD(old);

	spin_lock(&krc_procs_idle_lock);
	list_for_each_entry_safe_reverse(proc, tmp, &krc_procs_idle, idle_node) {
		if (!all && time_after(proc->idle_since, before))
			break;		/* the rest are newer */
		list_move(&proc->idle_node, &old);
		krc_nprocs_idle--;
	}
	if (krc_nprocs_idle)
		mod_delayed_work(krc_wq, &krc_procs_reap_work, KRC_PROC_IDLE);
	spin_unlock(&krc_procs_idle_lock);
	list_for_each_entry_safe(proc, tmp, &old, idle_node)
		krc_proc_free(proc);
}

static void krc_procs_reap(struct work_struct *work)
{
	krc_procs_idle_cut(jiffies - KRC_PROC_IDLE, false);
}

/* Module unload: every idle context freed (no VQ is left). */
void krc_procs_idle_drain(void)
{
	krc_procs_idle_cut(0, true);
	cancel_delayed_work_sync(&krc_procs_reap_work);
	krc_procs_idle_cut(0, true);
}

/*
 * The memory of @proc's last freed VQ, zeroed, for its next (charged to
 * the same process: no allocation); NULL if there is none.
 */
struct krc_vqueue *krc_proc_take_vq(struct krc_proc *proc)
{
	struct krc_vqueue *vq = xchg(&proc->spare_vq, NULL);

	if (vq)
		memset(vq, 0, sizeof(*vq));
	return vq;
}

/* Keep the memory of @vq (freed) for @proc's next VQ; false: free it. */
bool krc_proc_keep_vq(struct krc_proc *proc, struct krc_vqueue *vq)
{
	return !cmpxchg(&proc->spare_vq, NULL, vq);
}

/* The process of @mm, for one more of its VQs; ERR_PTR on error. */
struct krc_proc *krc_proc_get(struct mm_struct *mm)
{
	struct krc_proc *proc;

	mutex_lock(&krc_procs_lock);
	hash_for_each_possible(krc_procs, proc, hnode, (unsigned long)mm) {
		if (proc->mm == mm) {
			if (atomic_read(&proc->nvqs) >= krc_param_max_vqs_per_proc) {
				mutex_unlock(&krc_procs_lock);
				return ERR_PTR(-EMFILE);
			}
			atomic_inc(&proc->nvqs);
			kref_get(&proc->ref);
			mutex_unlock(&krc_procs_lock);
			return proc;
		}
	}
	proc = krc_proc_idle_take(mm);
	if (proc) {
		krc_proc_init(proc);	/* its mm still grabbed */
		hash_add(krc_procs, &proc->hnode, (unsigned long)mm);
		mutex_unlock(&krc_procs_lock);
		return proc;
	}
	proc = kzalloc(sizeof(*proc), GFP_KERNEL_ACCOUNT);
	if (proc) {
		mmgrab(mm);
		proc->mm = mm;
		krc_proc_init(proc);
		hash_add(krc_procs, &proc->hnode, (unsigned long)mm);
		krc_obj_created(KRC_OBJ_PROC);
	}
	mutex_unlock(&krc_procs_lock);
	return proc ? proc : ERR_PTR(-ENOMEM);
}

static void krc_mr_unpin(struct krc_umr *mr)
{
	if (!mr->pages)
		return;
	unpin_user_pages_dirty_lock(mr->pages, mr->npages, true);
	kvfree(mr->pages);
	mr->pages = NULL;
}

/* Pin the pages of @mr's range (the caller's memory, current->mm). */
static int krc_mr_pin(struct krc_umr *mr)
{
	u64 end = mr->view.addr + mr->view.length;
	unsigned long n, done = 0;
	int ret;

	mr->pg_start = mr->view.addr & PAGE_MASK;
	n = (PAGE_ALIGN(end) - mr->pg_start) >> PAGE_SHIFT;
	mr->pages = kvmalloc_array(n, sizeof(*mr->pages), GFP_KERNEL_ACCOUNT);
	if (!mr->pages)
		return -ENOMEM;
	while (done < n) {
		ret = pin_user_pages_fast(mr->pg_start + (done << PAGE_SHIFT),
					  min_t(unsigned long, n - done, INT_MAX),
					  FOLL_WRITE | FOLL_LONGTERM,
					  mr->pages + done);
		if (ret <= 0) {
			if (done)
				unpin_user_pages(mr->pages, done);
			kvfree(mr->pages);
			mr->pages = NULL;
			return ret ? ret : -EFAULT;
		}
		done += ret;
	}
	mr->npages = n;
	return 0;
}

/*
 * Write @len bytes of @src at @addr of @mr (inside its range: the
 * request check put it there) into its pinned pages. Process context
 * (any address space). 0, or -EFAULT if @mr has no pinned pages or the
 * range is not in it.
 */
int krc_mr_copy_in(struct krc_umr *mr, u64 addr, const void *src, u32 len)
{
	const struct krc_mr_view *v = &mr->view;
	u64 off;

	if (!mr->pages || addr < v->addr || len > v->length ||
	    addr - v->addr > v->length - len)
		return -EFAULT;
	off = addr - mr->pg_start;
	while (len) {
		unsigned int po = off & ~PAGE_MASK;
		unsigned int n = min_t(u32, len, PAGE_SIZE - po);
		void *p = kmap_local_page(mr->pages[off >> PAGE_SHIFT]);

		memcpy(p + po, src, n);
		kunmap_local(p);
		src += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Fail every connection on which a request that uses @mr is posted: the
 * QPs flush them, and recovery completes or re-posts them (a re-posted
 * request keeps holding @mr).
 */
static void krc_mr_fail_users(struct krc_umr *mr)
{
	krc_conns_fail_using(&mr->view);
}

/*
 * Wait until no request uses @mr, then give it back. The RNIC may use the
 * memory while a request is posted: it is never freed before. After
 * mr_drain_ms the connections still using it are failed, which completes
 * those requests within the recovery's bound; if even then they do not
 * complete, the registration is leaked rather than freed.
 */
static void krc_mr_destroy(struct krc_proc *proc, struct krc_umr *mr)
{
	if (!wait_event_timeout(krc_mr_wq, !atomic_read(&mr->inflight),
				msecs_to_jiffies(krc_param_mr_drain_ms))) {
		pr_warn("krcore: registration %x still in use after %u ms: failing its connections\n",
			mr->ibmr->lkey, krc_param_mr_drain_ms);
		krc_event(KRC_EV_MR_DRAIN_FORCED);
		krc_mr_fail_users(mr);
		if (!wait_event_timeout(krc_mr_wq, !atomic_read(&mr->inflight),
					msecs_to_jiffies(krc_param_connect_timeout_ms +
							 2 * krc_param_wr_timeout_ms +
							 10000))) {
			pr_err("krcore: registration %x: %d requests never completed, leaked\n",
			       mr->ibmr->lkey, atomic_read(&mr->inflight));
			return;
		}
	}
	ib_dereg_mr(mr->ibmr);
	krc_mr_unpin(mr);
	/* A request check may still be looking at it (under RCU). */
	kfree_rcu(mr, rcu);
	krc_obj_destroyed(KRC_OBJ_USER_MR);
}

static void krc_proc_unhash(struct kref *ref)
{
	hash_del(&container_of(ref, struct krc_proc, ref)->hnode);
}

static void krc_proc_dereg_all(struct krc_proc *proc)
{
	struct krc_umr *mr;
	unsigned long lkey;

	mutex_lock(&proc->lock);
	xa_for_each(&proc->mrs, lkey, mr) {
		WRITE_ONCE(mr->dying, true);
		xa_erase(&proc->mrs, lkey);
		if (xa_erase(&proc->rkeys, mr->ibmr->rkey))
			xa_erase(&krc_rkeys, mr->ibmr->rkey);
		mutex_unlock(&proc->lock);
		krc_mr_destroy(proc, mr);
		mutex_lock(&proc->lock);
	}
	mutex_unlock(&proc->lock);
}

/* Process context: the last put deregisters every remaining MR. */
void krc_proc_put(struct krc_proc *proc)
{
	if (!proc)
		return;
	atomic_dec(&proc->nvqs);
	if (!kref_put_mutex(&proc->ref, krc_proc_unhash, &krc_procs_lock))
		return;
	mutex_unlock(&krc_procs_lock);
	krc_proc_dereg_all(proc);
	krc_lock_proc_release(proc);
	xa_destroy(&proc->locks);
	krc_lmr_proc_release(proc);
	xa_destroy(&proc->lmrs);
	xa_destroy(&proc->mrs);
	xa_destroy(&proc->rkeys);
	krc_proc_idle(proc);
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
	struct krc_umr *mr;
	int ret;

	if (!req->length || req->access & ~known || req->reserved ||
	    req->addr + req->length < req->addr)
		return -EINVAL;
	if (!READ_ONCE(node->up))
		return -ENODEV;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
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
	if (mr->view.access & KRCORE_ACCESS_LOCAL_WRITE) {
		ret = krc_mr_pin(mr);
		if (ret) {
			ib_dereg_mr(mr->ibmr);
			kfree(mr);
			return ret;
		}
	}
	mutex_lock(&proc->lock);
	ret = xa_insert(&proc->mrs, mr->ibmr->lkey, mr, GFP_KERNEL);
	if (!ret && (req->access & ~KRCORE_ACCESS_LOCAL_WRITE)) {
		ret = xa_insert(&proc->rkeys, mr->ibmr->rkey, mr, GFP_KERNEL);
		if (!ret) {
			ret = xa_insert(&krc_rkeys, mr->ibmr->rkey, mr,
					GFP_KERNEL);
			if (ret)
				xa_erase(&proc->rkeys, mr->ibmr->rkey);
		}
		if (ret)
			xa_erase(&proc->mrs, mr->ibmr->lkey);
	}
	mutex_unlock(&proc->lock);
	if (ret) {
		ib_dereg_mr(mr->ibmr);
		krc_mr_unpin(mr);
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
	struct krc_umr *mr;

	mutex_lock(&proc->lock);
	mr = xa_load(&proc->mrs, lkey);
	if (mr) {
		/* No new request can hold it from here on (krc_mr_hold). */
		WRITE_ONCE(mr->dying, true);
		/* Pairs with krc_mr_hold(): it sees dying or we see its count. */
		smp_mb();
		xa_erase(&proc->mrs, lkey);
		if (xa_erase(&proc->rkeys, mr->ibmr->rkey))
			xa_erase(&krc_rkeys, mr->ibmr->rkey);
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
	struct krc_umr *mr = xa_load(&proc->mrs, lkey);

	return mr && !READ_ONCE(mr->dying) ? &mr->view : NULL;
}

/* Count a request that uses @mr; false if it is being deregistered. */
bool krc_mr_hold(struct krc_umr *mr)
{
	atomic_inc(&mr->inflight);
	/* Pairs with krc_mr_dereg(): we see dying or it sees our count. */
	smp_mb__after_atomic();
	if (!READ_ONCE(mr->dying))
		return true;
	krc_mr_put_inflight(mr);
	return false;
}

/*
 * A request that used @mr completed (any context). Nothing of @mr is
 * touched after the count: its deregistration may free it the moment it
 * sees zero. The waiter re-checks the count, so waking all is enough.
 */
void krc_mr_put_inflight(struct krc_umr *mr)
{
	if (atomic_dec_and_test(&mr->inflight) && wq_has_sleeper(&krc_mr_wq))
		wake_up_all(&krc_mr_wq);
}

/*
 * A request on a loopback connection names memory of this node by @rkey:
 * allowed only if the calling process registered it, with @access
 * (KRCORE_ACCESS_REMOTE_*), covering [@addr, @addr + @len). Under
 * rcu_read_lock(). Other nodes' keys cannot be checked here: see
 * docs/trust-model.md.
 */
bool krc_mr_remote_ok(struct krc_proc *proc, u32 rkey, u64 addr, u64 len,
		      u32 access)
{
	struct krc_umr *mr = xa_load(&proc->rkeys, rkey);
	const struct krc_mr_view *v;

	if (!mr || READ_ONCE(mr->dying))
		return false;
	v = &mr->view;
	if ((v->access & access) != access)
		return false;
	return addr >= v->addr && len <= v->length &&
	       addr - v->addr <= v->length - len;
}

/* A request of @proc broke a shared connection (a remote error). */
/*
 * A remote request's memory (dgram.c): the registration of @rkey, by any
 * process of this node, with @access, covering [@addr, @addr + @len),
 * held (krc_mr_put_inflight() when done), or NULL. Any context.
 */
struct krc_umr *krc_mr_remote_get(u32 rkey, u64 addr, u64 len, u32 access)
{
	const struct krc_mr_view *v;
	struct krc_umr *mr;

	rcu_read_lock();
	mr = xa_load(&krc_rkeys, rkey);
	if (mr) {
		v = &mr->view;
		if ((v->access & access) != access || addr < v->addr ||
		    len > v->length || addr - v->addr > v->length - len ||
		    !krc_mr_hold(mr))
			mr = NULL;
	}
	rcu_read_unlock();
	return mr;
}

void krc_proc_note_break(struct krc_proc *proc)
{
	unsigned long now = jiffies;
	unsigned long window = msecs_to_jiffies(krc_param_break_window_ms);

	if (!proc || !krc_param_break_limit)
		return;
	if (time_after(now, READ_ONCE(proc->break_start) + window)) {
		WRITE_ONCE(proc->break_start, now);
		atomic_set(&proc->breaks, 0);
	}
	if (atomic_inc_return(&proc->breaks) >= krc_param_break_limit) {
		WRITE_ONCE(proc->throttled_until, now + window);
		krc_event(KRC_EV_PROC_THROTTLED);
	}
}

/* Requests of @proc completed or given back (any context). */
void krc_proc_inflight_sub(struct krc_proc *proc, u32 wrs, u64 bytes)
{
	unsigned long flags;

	if (!proc)
		return;
	spin_lock_irqsave(&proc->ilock, flags);
	proc->wrs -= wrs;
	proc->bytes -= bytes;
	spin_unlock_irqrestore(&proc->ilock, flags);
}

/* Has @proc broken shared connections too often lately? */
bool krc_proc_throttled(struct krc_proc *proc)
{
	return krc_param_break_limit &&
	       time_before(jiffies, READ_ONCE(proc->throttled_until));
}

/*
 * The node's device is going (node teardown, krc_node.gate held for
 * writing, every connection already killed): every registration of every
 * process is given back now, before the PD goes.
 */
void krc_procs_disassociate(void)
{
	struct krc_proc *proc;
	int bkt;

	mutex_lock(&krc_procs_lock);
	hash_for_each(krc_procs, bkt, proc, hnode)
		krc_proc_dereg_all(proc);
	mutex_unlock(&krc_procs_lock);
}
