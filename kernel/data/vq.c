// SPDX-License-Identifier: GPL-2.0
/*
 * vq.c - /dev/krcore: every open is a virtual queue (VQ); requests are
 * ioctl()s on its file descriptor, numbered by include/uapi/krcore.h.
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
#include <linux/xarray.h>

#include "krcore.h"
#include "card.h"

/* Every VQ by id: the VQ part of the cookies. */
static DEFINE_XARRAY_ALLOC1(krc_vqs);
static u32 krc_vq_next;
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

static int krc_vq_open(struct inode *inode, struct file *file)
{
	struct krc_vqueue *vq;
	int ret;

	if (atomic_inc_return(&krc_nvqs) > krc_param_max_vqs) {
		atomic_dec(&krc_nvqs);
		return -EMFILE;
	}
	vq = kzalloc(sizeof(*vq), GFP_KERNEL_ACCOUNT);
	if (!vq) {
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
	INIT_LIST_HEAD(&vq->dg_queue);
	INIT_LIST_HEAD(&vq->dg_active);
	INIT_WORK(&vq->close_work, krc_vq_close_work);
	vq->owner_tgid = task_tgid_nr(current);
	vq->mm = current->mm;
	if (vq->mm) {
		vq->proc = krc_proc_get(vq->mm);
		if (IS_ERR(vq->proc)) {
			ret = PTR_ERR(vq->proc);
			vq->proc = NULL;
			goto err;
		}
	}
	ret = xa_alloc_cyclic(&krc_vqs, &vq->id, vq,
			      XA_LIMIT(1, KRC_COOKIE_VQ_MAX), &krc_vq_next,
			      GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -EBUSY ? -EMFILE : ret;
		goto err;
	}
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

/* Caller holds vq->lock (recovery moves VQs under it too). */
static void krc_vq_unbind(struct krc_vqueue *vq)
{
	struct krc_conn *conn = vq->conn;
	unsigned long flags;

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
	krc_peer_put(vq->peer);
	vq->peer = NULL;
}

static void krc_vq_free(struct kref *ref)
{
	struct krc_vqueue *vq = container_of(ref, struct krc_vqueue, ref);

	krc_vq_free_port(vq);
	krc_vq_dp_free(vq);
	krc_proc_put(vq->proc);
	mutex_destroy(&vq->lock);
	kfree(vq);
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
	xa_erase(&krc_vqs, vq->id);
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
	unsigned long id;

	xa_for_each(&krc_vqs, id, vq) {
		mutex_lock(&vq->lock);
		WRITE_ONCE(vq->gone, true);
		krc_vq_unbind(vq);
		krc_vq_dp_unmap(vq);
		mutex_unlock(&vq->lock);
		wake_up_all(&vq->wq);
	}
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
	if (!mem)
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

static long krc_ioc_version(void __user *uarg)
{
	struct krcore_version v = {
		.abi_version = KRCORE_ABI_VERSION,
	};

	strscpy(v.module_version, KRC_VERSION, sizeof(v.module_version));
	return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long krc_ioc_query_card(void __user *uarg)
{
	struct krcore_card card;
	int ret = -ENODEV;

	/* The complete card (control QP included) once the node is up. */
	mutex_lock(&krc_node.lock);
	if (krc_node.up) {
		card = krc_node.card;
		ret = 0;
	}
	mutex_unlock(&krc_node.lock);
	if (ret)
		ret = krc_node_card(&card);
	if (ret)
		return ret;
	return copy_to_user(uarg, &card, sizeof(card)) ? -EFAULT : 0;
}

static long krc_ioc_query_port(void __user *uarg)
{
	struct krcore_port_info info;
	u32 index;
	int ret;

	if (get_user(index, (u32 __user *)uarg))
		return -EFAULT;
	ret = krc_port_info(index, &info);
	if (ret)
		return ret;
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long krc_ioc_node_info(void __user *uarg)
{
	struct krcore_node_info info;

	krc_node_fill_info(&info);
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long krc_ioc_peer_info(void __user *uarg)
{
	struct krcore_peer_info info;
	u32 index;
	int ret;

	if (get_user(index, (u32 __user *)uarg))
		return -EFAULT;
	ret = krc_peer_fill_info(index, &info);
	if (ret)
		return ret;
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

/*
 * A peer's traffic counters add up every process's requests to it: they
 * tell one user what others do (who talks to whom, how much). Only an
 * operator of the node (CAP_NET_ADMIN) reads them (docs/trust-model.md);
 * the peer list itself (cards, connections) is the MetaServer's public
 * table and stays open to every user of /dev/krcore.
 */
static long krc_ioc_peer_stats(void __user *uarg)
{
	struct krcore_peer_stats st;
	u32 hdr[2];
	int ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (copy_from_user(hdr, uarg, sizeof(hdr)))
		return -EFAULT;
	if (hdr[1])
		return -EINVAL;
	ret = krc_peer_fill_stats(hdr[0], &st);
	if (ret)
		return ret;
	return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long krc_ioc_lookup(void __user *uarg)
{
	struct krcore_lookup lk;
	int ret;

	if (copy_from_user(&lk, uarg, sizeof(lk)))
		return -EFAULT;
	if (lk.flags & ~KRCORE_LOOKUP_F_NOCACHE || krc_gid_is_zero(lk.gid))
		return -EINVAL;
	lk.path = 0;
	lk.reads = 0;
	lk.reserved = 0;
	lk.elapsed_ns = 0;
	memset(&lk.card, 0, sizeof(lk.card));
	ret = krc_connect_lookup(lk.gid, lk.flags, &lk);
	if (copy_to_user(uarg, &lk, sizeof(lk)))
		return -EFAULT;
	return ret;
}

/*
 * The errnos the ABI header lists for KRCORE_IOC_QCONNECT; whatever else
 * the layers below (MetaServer READs, the peer's NAK, the device) return
 * is EIO, so that the list stays complete.
 */
static int krc_qconnect_errno(int ret)
{
	switch (ret) {
	case 0:
	case -EISCONN:
	case -ENXIO:
	case -EHOSTUNREACH:
	case -ETIMEDOUT:
	case -ESTALE:
	case -EBUSY:
	case -ENOSPC:
	case -ECONNRESET:
	case -EINTR:
	case -ENODEV:
	case -EINVAL:
	case -EPERM:
	case -EFAULT:
	case -ENOMEM:
		return ret;
	default:
		return -EIO;
	}
}

/*
 * Commands of older ABIs whose structure has grown since (the size is part
 * of the command number): served as the header promises, on the prefix
 * they know. ABI 2's QCONNECT had no ring_size and depth, ABI 3's QWAIT
 * no messages and reserved.
 */
#define KRCORE_IOC_QCONNECT_ABI2 \
	_IOC(_IOC_READ | _IOC_WRITE, KRCORE_IOC_MAGIC, 0x06, \
	     offsetof(struct krcore_qconnect, ring_size))
#define KRCORE_IOC_QWAIT_ABI3 \
	_IOC(_IOC_READ | _IOC_WRITE, KRCORE_IOC_MAGIC, 0x0b, \
	     offsetof(struct krcore_qwait, messages))
static_assert(offsetof(struct krcore_qconnect, ring_size) == 120);
static_assert(offsetof(struct krcore_qwait, messages) == 8);

static long krc_ioc_qconnect(struct krc_vqueue *vq, void __user *uarg,
			     size_t usize)
{
	struct krcore_qconnect qc = {};
	struct krc_peer *peer;
	struct krc_conn *conn;
	unsigned long tmo;
	int ret, tries;

	if (copy_from_user(&qc, uarg, usize))
		return -EFAULT;
	/* A port names a 16-bit port of the peer: never truncate it. */
	if (qc.flags & ~KRCORE_QCONNECT_F_RC || qc.port > 0xffff)
		return -EINVAL;
	tmo = qc.timeout_ms ? qc.timeout_ms : krc_param_connect_timeout_ms;
	tmo = min_t(unsigned long, tmo, KRC_CONNECT_TIMEOUT_MAX_MS);
	qc.path = 0;
	qc.conn_id = 0;
	qc.qpn = 0;
	qc.reads = 0;
	qc.attempts = 0;
	qc.elapsed_ns = 0;
	qc.ring_size = 0;
	qc.depth = 0;
	memset(&qc.card, 0, sizeof(qc.card));

	if (mutex_lock_killable(&vq->lock))
		return -EINTR;
	if (vq->conn || vq->dgram) {
		ret = -EISCONN;
	} else if (!vq->proc) {
		ret = -EPERM;		/* a kernel thread */
	} else {
		ret = vq->slots ? 0 : krc_vq_dp_init(vq);
		/*
		 * The connection picked may fail before the VQ joins it;
		 * its recovery would not see the VQ: pick again.
		 */
		for (tries = 0; !ret; tries++) {
			qc.path = 0;
			ret = krc_connect(qc.gid, tmo, &qc, &peer, &conn);
			if (ret)
				break;
			if (!conn) {
				/* The datagram path (dgram.c). */
				krc_peer_put(vq->peer);
				vq->peer = peer;
				krc_dg_vq_join(vq);
				vq->port = qc.port;
				vq->check.has_port = qc.port != 0;
				qc.ring_size = vq->ring_size;
				qc.depth = vq->depth;
				break;
			}
			if (krc_vq_attach(vq, conn)) {
				krc_conn_put(conn);
				/* Reconnecting after recovery lost the peer. */
				krc_peer_put(vq->peer);
				vq->peer = peer;
				vq->port = qc.port;
				vq->check.has_port = qc.port != 0;
				qc.ring_size = vq->ring_size;
				qc.depth = vq->depth;
				break;
			}
			krc_conn_put(conn);
			krc_peer_put(peer);
			if (tries >= 3 || fatal_signal_pending(current))
				ret = -ECONNRESET;
		}
	}
	mutex_unlock(&vq->lock);
	ret = krc_qconnect_errno(ret);
	if (ret)
		krc_event(KRC_EV_QCONNECT_FAILED);
	else if (qc.path & KRCORE_PATH_LOCAL)
		krc_event(KRC_EV_QCONNECT_LOCAL);
	else if (qc.path & KRCORE_PATH_DATAGRAM)
		krc_event(KRC_EV_QCONNECT_DATAGRAM);
	else if (qc.path & KRCORE_PATH_HANDSHAKE)
		krc_event(KRC_EV_QCONNECT_HANDSHAKE);
	else if (qc.path & KRCORE_PATH_LOOKUP)
		krc_event(KRC_EV_QCONNECT_LOOKUP);
	else
		krc_event(KRC_EV_QCONNECT_POOLED);
	if (copy_to_user(uarg, &qc, usize))
		return -EFAULT;
	return ret;
}

static long krc_ioc_probe(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_probe pr = {};
	struct krc_conn *conn;
	struct krc_kop *kop;
	u64 start;
	int ret;

	mutex_lock(&vq->lock);
	conn = vq->conn;
	if (conn)
		kref_get(&conn->ref);
	mutex_unlock(&vq->lock);
	if (!conn)
		return -ENOTCONN;
	ret = -EOPNOTSUPP;
	if (!conn->probe_rkey || conn->probe_len < KRCORE_CARD_SIZE)
		goto out;
	ret = -ENOMEM;
	kop = krc_kop_alloc(krc_node.dev->ibdev, KRCORE_CARD_SIZE,
			    DMA_FROM_DEVICE);
	if (!kop)
		goto out;
	start = ktime_get_ns();
	ret = krc_conn_read(conn, kop, conn->probe_addr, conn->probe_rkey,
			    KRCORE_CARD_SIZE);
	if (!ret)
		ret = krc_kop_wait(kop, 2000);
	/*
	 * A slow answer is not a dead connection: other processes share
	 * it. A READ that failed already failed the connection (conn.c);
	 * one that never completes is the watchdog's (recovery.c).
	 */
	pr.elapsed_ns = ktime_get_ns() - start;
	if (!ret)
		ret = krc_card_decode(kop->buf, &pr.card) ? -EBADMSG : 0;
	krc_kop_put(kop);
	krc_event(KRC_EV_PROBES);
	if (!ret && copy_to_user(uarg, &pr, sizeof(pr)))
		ret = -EFAULT;
out:
	krc_conn_put(conn);
	return ret;
}

static long krc_ioc_reg_mr(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_reg_mr req;
	int ret;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = krc_mr_reg(vq->proc, &req);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		krc_mr_dereg(vq->proc, req.lkey);
		return -EFAULT;
	}
	return 0;
}

static long krc_ioc_dereg_mr(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_dereg_mr req;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	return krc_mr_dereg(vq->proc, req.lkey);
}

/*
 * A qpush that failed as a whole, before any request was looked at (not
 * the VQ's owner, device gone, killed): done 0, the errno, reason OK.
 */
static long krc_qpush_fail(void __user *uarg, long err)
{
	struct krcore_qpush __user *u = uarg;

	if (put_user(0, &u->done) || put_user((u32)-err, &u->error) ||
	    put_user(KRCORE_R_OK, &u->reason))
		return -EFAULT;
	return err;
}

static long krc_ioc_qpush(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_qpush req;
	long ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!vq->proc)
		return krc_qpush_fail(uarg, -EACCES);
	req.error = 0;
	ret = krc_vq_push(vq, u64_to_user_ptr(req.wrs), req.count, &req);
	/* All posted: the count is the answer, nothing to copy back. */
	if (!ret)
		return req.done;
	if (!req.error)
		return krc_qpush_fail(uarg, ret);
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return ret;
}

/* Connected: on a pooled connection or on the datagram path. */
static bool krc_vq_connected(struct krc_vqueue *vq)
{
	return READ_ONCE(vq->conn) || READ_ONCE(vq->dgram);
}

static bool krc_vq_ready(struct krc_vqueue *vq, struct krcore_qwait *w)
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

static long krc_ioc_qwait(struct krc_vqueue *vq, void __user *uarg, size_t usize)
{
	struct krcore_qwait req = {};
	long ret = 0;

	if (copy_from_user(&req, uarg, usize))
		return -EFAULT;
	if (!vq->ring && !vq->rring) {
		req.available = 0;
		req.messages = 0;
		return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT :
							       -ENOTCONN;
	}
	if (!krc_vq_ready(vq, &req) && req.timeout_ms) {
		ret = wait_event_interruptible_timeout
			(vq->wq, krc_vq_ready(vq, &req),
			 msecs_to_jiffies(req.timeout_ms));
		if (ret == -ERESTARTSYS)
			ret = -EINTR;
		else if (ret > 0)
			ret = 0;
	}
	if (!ret && !req.available && !req.messages) {
		if (READ_ONCE(vq->gone))
			ret = -ENODEV;
		else
			ret = krc_vq_connected(vq) || vq->rring ? -ETIMEDOUT :
								  -ENOTCONN;
	}
	if (copy_to_user(uarg, &req, usize))
		return -EFAULT;
	return ret;
}

static long krc_ioc_qbind(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_qbind req;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	mutex_lock(&vq->lock);
	ret = krc_vq_bind_port(vq, req.port, &req.ring_size);
	mutex_unlock(&vq->lock);
	if (!ret && copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/*
 * Commands that use the node's device enter its gate: device removal
 * waits for them, and they fail with ENODEV once it is gone (or once this
 * VQ lost it).
 */
static int krc_vq_enter(struct krc_vqueue *vq)
{
	int ret = krc_node_enter();

	if (!ret && READ_ONCE(vq->gone)) {
		krc_node_leave();
		ret = -ENODEV;
	}
	return ret;
}

static long krc_vq_ioctl_dev(struct krc_vqueue *vq, unsigned int cmd,
			     void __user *uarg)
{
	switch (cmd) {
	case KRCORE_IOC_LOOKUP:
		return krc_ioc_lookup(uarg);
	case KRCORE_IOC_QCONNECT:
	case KRCORE_IOC_QCONNECT_ABI2:
		return krc_ioc_qconnect(vq, uarg, _IOC_SIZE(cmd));
	case KRCORE_IOC_PROBE:
		return krc_ioc_probe(vq, uarg);
	case KRCORE_IOC_REG_MR:
		return krc_ioc_reg_mr(vq, uarg);
	case KRCORE_IOC_DEREG_MR:
		return krc_ioc_dereg_mr(vq, uarg);
	case KRCORE_IOC_QPUSH:
		return krc_ioc_qpush(vq, uarg);
	case KRCORE_IOC_QBIND:
		return krc_ioc_qbind(vq, uarg);
	default:
		return -ENOTTY;
	}
}

static long krc_vq_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct krc_vqueue *vq = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	switch (cmd) {
	case KRCORE_IOC_VERSION:
		ret = krc_ioc_version(uarg);
		break;
	case KRCORE_IOC_QUERY_CARD:
		ret = krc_ioc_query_card(uarg);
		break;
	case KRCORE_IOC_QUERY_PORT:
		ret = krc_ioc_query_port(uarg);
		break;
	case KRCORE_IOC_NODE_INFO:
		ret = krc_ioc_node_info(uarg);
		break;
	case KRCORE_IOC_PEER_INFO:
		ret = krc_ioc_peer_info(uarg);
		break;
	case KRCORE_IOC_PEER_STATS:
		ret = krc_ioc_peer_stats(uarg);
		break;
	case KRCORE_IOC_QWAIT:
	case KRCORE_IOC_QWAIT_ABI3:
		ret = krc_ioc_qwait(vq, uarg, _IOC_SIZE(cmd));
		break;
	case KRCORE_IOC_LOOKUP:
	case KRCORE_IOC_QCONNECT:
	case KRCORE_IOC_QCONNECT_ABI2:
	case KRCORE_IOC_PROBE:
	case KRCORE_IOC_REG_MR:
	case KRCORE_IOC_DEREG_MR:
	case KRCORE_IOC_QPUSH:
	case KRCORE_IOC_QBIND:
		ret = krc_vq_enter(vq);
		if (ret) {
			if (cmd == KRCORE_IOC_QPUSH)
				ret = krc_qpush_fail(uarg, ret);
			break;
		}
		ret = krc_vq_ioctl_dev(vq, cmd, uarg);
		krc_node_leave();
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	if (ret < 0)
		krc_event(KRC_EV_IOCTL_ERRORS);
	return ret;
}

/*
 * poll(2)/epoll: EPOLLIN when the completion ring or the receive ring has
 * entries, EPOLLOUT when the VQ can take a request, EPOLLHUP when it has
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
