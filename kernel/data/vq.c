// SPDX-License-Identifier: GPL-2.0
/*
 * vq.c - /dev/krcore: every open is a virtual queue (VQ). Its life: open,
 * connect (attach to a connection, or the datagram path), close (idle
 * first: its outstanding requests complete), the mapping of its rings,
 * poll; its requests are ioctl()s (ioctl.c).
 *
 * Lifetime: the file holds the first reference; a connection's list
 * holds none (the VQ holds one on the connection instead), recovery and
 * the RC cap take one while they move it (krc_conn_first_vq()). The last
 * put frees what the VQ owns, in process context.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/bitmap.h>

#include "data/data.h"
#include "card.h"

/*
 * Every open VQ, and the ids in use (the VQ part of the cookies: unique
 * among open VQs, handed out cyclically). A bitmap and a list, not an
 * xarray: a process's only VQ would allocate and free the xarray's nodes
 * at every open and close.
 */
static DEFINE_SPINLOCK(krc_vqs_lock);
static LIST_HEAD(krc_vqs);
static DECLARE_BITMAP(krc_vq_ids, KRC_COOKIE_VQ_MAX + 1);
static u32 krc_vq_next = 1;
static atomic_t krc_nvqs = ATOMIC_INIT(0);	/* open VQs of the node */

static void krc_vq_free(struct kref *ref);
static void krc_vq_close_work(struct work_struct *work);

void krc_vq_get(struct krc_vqueue *vq)
{
	kref_get(&vq->ref);
}

/* Process context: the last put frees what the VQ owns. */
void krc_vq_put(struct krc_vqueue *vq)
{
	kref_put(&vq->ref, krc_vq_free);
}

/* An id for @vq, on the list of open VQs; -EMFILE: none left. */
static int krc_vq_id_get(struct krc_vqueue *vq)
{
	const unsigned long max = KRC_COOKIE_VQ_MAX + 1;
	unsigned long id;

	spin_lock(&krc_vqs_lock);
	id = find_next_zero_bit(krc_vq_ids, max, krc_vq_next);
	if (id >= max)
		id = find_next_zero_bit(krc_vq_ids, max, 1);
	if (id < max) {
		__set_bit(id, krc_vq_ids);
		krc_vq_next = id + 1;
		vq->id = id;
		list_add(&vq->all_node, &krc_vqs);
	}
	spin_unlock(&krc_vqs_lock);
	return id < max ? 0 : -EMFILE;
}

static void krc_vq_id_put(struct krc_vqueue *vq)
{
	spin_lock(&krc_vqs_lock);
	list_del_init(&vq->all_node);
	__clear_bit(vq->id, krc_vq_ids);
	spin_unlock(&krc_vqs_lock);
}

static int krc_vq_open(struct inode *inode, struct file *file)
{
	struct krc_proc *proc = NULL;
	struct krc_vqueue *vq;
	int ret;

	if (atomic_inc_return(&krc_nvqs) > krc_param_max_vqs) {
		atomic_dec(&krc_nvqs);
		return -EMFILE;
	}
	if (current->mm) {
		proc = krc_proc_get(current->mm);
		if (IS_ERR(proc)) {
			atomic_dec(&krc_nvqs);
			return PTR_ERR(proc);
		}
	}
	/* The memory of this process's last VQ, or new. */
	vq = proc ? krc_proc_take_vq(proc) : NULL;
	if (!vq)
		vq = kzalloc(sizeof(*vq), GFP_KERNEL_ACCOUNT);
	if (!vq) {
		krc_proc_put(proc);
		atomic_dec(&krc_nvqs);
		return -ENOMEM;
	}
	kref_init(&vq->ref);
	mutex_init(&vq->lock);
	mutex_init(&vq->map_lock);
	spin_lock_init(&vq->dlock);
	spin_lock_init(&vq->rlock);
	init_waitqueue_head(&vq->wq);
	INIT_LIST_HEAD(&vq->conn_node);
	INIT_LIST_HEAD(&vq->all_node);
	INIT_LIST_HEAD(&vq->dg_queue);
	INIT_LIST_HEAD(&vq->dg_active);
	INIT_WORK(&vq->close_work, krc_vq_close_work);
	vq->owner_tgid = task_tgid_nr(current);
	vq->mm = current->mm;
	vq->proc = proc;
	ret = krc_vq_id_get(vq);
	if (ret)
		goto err;
	file->private_data = vq;
	krc_obj_created(KRC_OBJ_VQ);
	return 0;
err:
	krc_proc_put(vq->proc);
	kfree(vq);
	atomic_dec(&krc_nvqs);
	return ret;
}

/*
 * Bind @vq to @conn (vq->lock held) unless @conn already failed: recovery
 * moves only the VQs it finds on a connection, so a VQ must never join
 * one whose recovery may have started. Takes a reference on @conn.
 */
bool krc_vq_attach(struct krc_vqueue *vq, struct krc_conn *conn)
{
	unsigned long flags;
	bool ok;

	lockdep_assert_held(&vq->lock);
	spin_lock_irqsave(&conn->lock, flags);
	ok = !conn->failing && !conn->dead && !conn->closing;
	if (ok) {
		kref_get(&conn->ref);
		atomic_inc(&conn->nvqs);
		list_add(&vq->conn_node, &conn->vqs);
		WRITE_ONCE(vq->conn, conn);
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	return ok;
}

/*
 * The first VQ bound to @conn, with a reference (NULL: none). Who moves
 * VQs off a connection (recovery, the RC cap) takes them one at a time
 * this way, then re-checks under the VQ's own lock that it is still
 * there: a VQ being closed leaves the list under the same locks.
 */
struct krc_vqueue *krc_conn_first_vq(struct krc_conn *conn)
{
	unsigned long flags;
	struct krc_vqueue *vq;

	spin_lock_irqsave(&conn->lock, flags);
	vq = list_first_entry_or_null(&conn->vqs, struct krc_vqueue, conn_node);
	if (vq)
		krc_vq_get(vq);
	spin_unlock_irqrestore(&conn->lock, flags);
	return vq;
}

/* Caller holds vq->lock (recovery moves VQs under it too). */
void krc_vq_unbind(struct krc_vqueue *vq)
{
	struct krc_conn *conn = vq->conn;
	unsigned long flags;

	lockdep_assert_held(&vq->lock);
	if (conn) {
		spin_lock_irqsave(&conn->lock, flags);
		list_del_init(&vq->conn_node);
		spin_unlock_irqrestore(&conn->lock, flags);
		atomic_dec(&conn->nvqs);
		krc_conn_put(conn);
		vq->conn = NULL;
	}
	if (vq->dgram)
		krc_dg_vq_leave(vq);
	vq->flow = NULL;	/* the peer's: it goes with the peer */
	krc_peer_put(vq->peer);
	vq->peer = NULL;
}

static void krc_vq_free(struct kref *ref)
{
	struct krc_vqueue *vq = container_of(ref, struct krc_vqueue, ref);
	struct krc_proc *proc = vq->proc;

	krc_vq_free_port(vq);
	krc_vq_dp_free(vq);
	krc_prio_vq_gone(vq);
	mutex_destroy(&vq->lock);
	/* Its memory for the process's next VQ, or freed. */
	if (!proc || !krc_proc_keep_vq(proc, vq))
		kfree(vq);
	krc_proc_put(proc);
	atomic_dec(&krc_nvqs);
	krc_obj_destroyed(KRC_OBJ_VQ);
}

/*
 * What is left of a closed VQ once its last request completed (or at
 * once, if none was outstanding): off its connection or datagram path,
 * then freed with the file's reference. Process context.
 */
static void krc_vq_close_finish(struct krc_vqueue *vq)
{
	krc_vq_id_put(vq);
	mutex_lock(&vq->lock);
	krc_vq_unbind(vq);
	mutex_unlock(&vq->lock);
	/*
	 * A completion that retired the last request may still be inside
	 * the VQ's lock (its wake-up): let it leave before the VQ goes.
	 */
	spin_lock_irq(&vq->dlock);
	spin_unlock_irq(&vq->dlock);
	krc_vq_put(vq);
}

static void krc_vq_close_work(struct work_struct *work)
{
	krc_vq_close_finish(container_of(work, struct krc_vqueue, close_work));
}

/*
 * The last request of a closed VQ completed (complete.c, vq->dlock
 * held): the rest of the close, in process context.
 */
void krc_vq_closed_idle(struct krc_vqueue *vq)
{
	vq->close_pending = false;
	queue_work(krc_wq, &vq->close_work);
}

/*
 * Close a VQ without waiting for its requests: nothing it posted is
 * written to its ring any more, what it queued on the datagram path and
 * never sent fails now, and what is on a shared connection completes
 * there as it comes (a connection others use is never failed for it).
 * Its registrations stay pinned and the VQ stays until then.
 */
static int krc_vq_release(struct inode *inode, struct file *file)
{
	struct krc_vqueue *vq = file->private_data;
	bool idle;

	/* Device removal does not run beside the release (krc_node_gate). */
	down_read(&krc_node.gate);
	krc_vq_unbind_port(vq);
	mutex_lock(&vq->lock);
	spin_lock_irq(&vq->dlock);
	vq->closing = true;
	spin_unlock_irq(&vq->dlock);
	if (vq->dgram)
		krc_dg_vq_abandon(vq);
	/* Nothing is written to a ring of the process's from now on. */
	if (vq->uring_pages) {
		/* Ordered after the last entry written (dlock above). */
		smp_store_release(&vq->ring->released, 1);
	}
	mutex_unlock(&vq->lock);
	spin_lock_irq(&vq->dlock);
	idle = !vq->inflight;
	vq->close_pending = !idle;
	spin_unlock_irq(&vq->dlock);
	up_read(&krc_node.gate);
	if (idle)
		krc_vq_close_finish(vq);
	else
		krc_event(KRC_EV_VQ_CLOSED_BUSY);
	return 0;
}

/*
 * The node's device went away (node teardown, under krc_node.gate held
 * for writing, after every connection was killed and recovered): every
 * VQ lets go of the device; from now on its calls fail with ENODEV.
 */
void krc_vqs_disassociate(void)
{
	struct krc_vqueue *vq;
	LIST_HEAD(todo);

	/* One at a time off @todo, back on the list; a close takes it off. */
	spin_lock(&krc_vqs_lock);
	list_splice_init(&krc_vqs, &todo);
	while ((vq = list_first_entry_or_null(&todo, struct krc_vqueue,
					      all_node))) {
		list_move(&vq->all_node, &krc_vqs);
		krc_vq_get(vq);
		spin_unlock(&krc_vqs_lock);
		mutex_lock(&vq->lock);
		WRITE_ONCE(vq->gone, true);
		krc_vq_unbind(vq);
		krc_vq_dp_unmap(vq);
		mutex_unlock(&vq->lock);
		wake_up_all(&vq->wq);
		krc_vq_put(vq);
		spin_lock(&krc_vqs_lock);
	}
	spin_unlock(&krc_vqs_lock);
}

/*
 * Ring memory: zeroed, charged to the caller's memory cgroup, mapped into
 * the process page by page (vmalloc_user() cannot be charged).
 */
void *krc_ring_alloc(size_t size)
{
	return __vmalloc(PAGE_ALIGN(size), GFP_KERNEL_ACCOUNT | __GFP_ZERO);
}

static int krc_ring_map(struct vm_area_struct *vma, void *mem, size_t size)
{
	unsigned long off;
	int ret;

	for (off = 0; off < size; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(mem + off));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The completion ring (pgoff KRCORE_MMAP_RING) and the receive ring
 * (KRCORE_MMAP_RECV): shared mappings of their exact size, never
 * executable. What the process writes there is read back by the kernel
 * only as the consumer index.
 */
static int krc_vq_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct krc_vqueue *vq = file->private_data;
	unsigned long size = vma->vm_end - vma->vm_start;
	void *mem;
	int ret;

	if (vma->vm_pgoff != KRCORE_MMAP_RING &&
	    vma->vm_pgoff != KRCORE_MMAP_RECV)
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* Not vq->lock: mmap_lock is held here (lockdep, debug kernel). */
	mutex_lock(&vq->map_lock);
	mem = vma->vm_pgoff == KRCORE_MMAP_RING ? vq->map_ring : vq->map_rring;
	if (vma->vm_pgoff == KRCORE_MMAP_RING && READ_ONCE(vq->uring_pages))
		ret = -EINVAL;	/* the ring is the process's own memory */
	else if (!mem)
		ret = -ENOTCONN;
	else if (size != (vma->vm_pgoff == KRCORE_MMAP_RING ? vq->ring_size :
			  vq->rring_size))
		ret = -EINVAL;
	else
		ret = krc_ring_map(vma, mem, size);
	if (!ret)
		vma->vm_flags = (vma->vm_flags & ~VM_MAYEXEC) |
				VM_DONTEXPAND | VM_DONTDUMP;
	mutex_unlock(&vq->map_lock);
	return ret;
}

/* Connected: on a pooled connection or on the datagram path. */
bool krc_vq_connected(struct krc_vqueue *vq)
{
	return READ_ONCE(vq->conn) || READ_ONCE(vq->dgram);
}

/* Anything for QWAIT or poll to report (counts in @w)? */
bool krc_vq_ready(struct krc_vqueue *vq, struct krcore_qwait *w)
{
	struct krcore_recv_ring *r = vq->rring;

	w->available = vq->ring ? krc_ring_used(READ_ONCE(vq->prod),
						READ_ONCE(vq->ring->consumer),
						vq->entries) : 0;
	w->messages = r ? krc_ring_used(READ_ONCE(vq->rprod),
					READ_ONCE(r->consumer), vq->rentries) : 0;
	return w->available || w->messages || READ_ONCE(vq->gone) ||
	       (!r && !krc_vq_connected(vq));
}

/*
 * poll(2)/epoll: EPOLLIN when the completion ring or the receive ring has
 * entries, EPOLLOUT when the VQ can take a request, EPOLLWRBAND when it
 * can send a message to its port (flow.c, whose wait queue it also
 * waits on), EPOLLHUP when it has
 * no connection any more (recovery found no way to the peer) and nothing
 * to read, EPOLLERR|EPOLLHUP when its device went away. Every change that
 * can set a bit wakes vq->wq (completions, messages, recovery, device
 * removal), so edge-triggered epoll misses nothing.
 */
static __poll_t krc_vq_poll(struct file *file, poll_table *wait)
{
	struct krc_vqueue *vq = file->private_data;
	struct krcore_qwait w;
	__poll_t mask = 0;

	poll_wait(file, &vq->wq, wait);
	if (READ_ONCE(vq->gone))
		mask |= EPOLLERR | EPOLLHUP;
	krc_vq_ready(vq, &w);
	if (w.available || w.messages)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (krc_vq_connected(vq)) {
		if (READ_ONCE(vq->inflight) < vq->depth)
			mask |= EPOLLOUT | EPOLLWRNORM;
		mask |= krc_flow_poll(vq, file, wait);
	} else if (READ_ONCE(vq->slots) && !vq->rring && !w.available) {
		mask |= EPOLLHUP;
	}
	return mask;
}

static const struct file_operations krc_vq_fops = {
	.owner = THIS_MODULE,
	.open = krc_vq_open,
	.release = krc_vq_release,
	.unlocked_ioctl = krc_vq_ioctl,
	.mmap = krc_vq_mmap,
	.poll = krc_vq_poll,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice krc_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "krcore",
	.fops = &krc_vq_fops,
	.mode = 0660,
};

/*
 * The handlers through which the layers below reach the data layer,
 * registered once at load, before any connection or datagram exists.
 */
static void krc_data_peer_stop(struct krc_peer *peer)
{
	krc_dg_peer_stop(peer);
	krc_flow_peer_stop(peer);
}

static void krc_data_peer_free(struct krc_peer *peer)
{
	krc_dg_peer_free(peer);
	krc_flow_peer_free(peer);
}

static const struct krc_conn_ops krc_data_conn_ops = {
	.complete = krc_dp_dispatch,
	.recv = krc_recv_dispatch,
	.recover = krc_recover,
	.gone = krc_dp_conn_gone,
	.move_vqs = krc_vqs_to_dgram,
	.peer_dg_vqs = krc_dg_vqs,
	.peer_stop = krc_data_peer_stop,
	.peer_free = krc_data_peer_free,
	.flow_msg = krc_flow_msg,
	.mem_msg = krc_lmr_msg,
	.peer_forget = krc_lmrh_peer_forget,
};

void krc_data_init(void)
{
	krc_dp_cache_init();
	krc_conn_set_ops(&krc_data_conn_ops);
	krc_ctrl_on_dgram(krc_dg_recv);
}

int krc_chardev_init(void)
{
	int ret;

	krc_miscdev.groups = krc_stats_groups;
	ret = misc_register(&krc_miscdev);
	if (ret)
		pr_err("krcore: cannot register /dev/krcore: %d\n", ret);
	return ret;
}

void krc_chardev_exit(void)
{
	misc_deregister(&krc_miscdev);
}
