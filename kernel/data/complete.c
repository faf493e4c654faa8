// SPDX-License-Identifier: GPL-2.0
/*
 * complete.c - completions of VQ requests: from a shared QP's CQ to the
 * completion ring of the one VQ that posted each request.
 *
 * RC completes a QP's requests in order: a completion retires every
 * request posted before it on that QP, signaled or not, so the shared send
 * queue is a FIFO of cookies and a completion pops it up to its own. Each
 * popped request is checked against its VQ (the VQ id and the slot's
 * generation in the cookie) before anything is written; completions the
 * user did not ask for are not written; a request that failed always is.
 *
 * When a completion reports an error the QP is in error: the request that
 * failed gets its real status; every later one is moved aside (as the
 * flushed completions come in) for recovery.c, which re-posts or fails
 * them on a re-established connection.
 */
#include <linux/memcontrol.h>
#include <linux/vmalloc.h>

#include "data/data.h"

/*
 * Entry @idx of @vq's ring: in the kernel's ring, or in the process's own
 * pages (ABI 14; entries never straddle a page: entry_offset is a page).
 */
static struct krcore_cqe *krc_ring_entry(struct krc_vqueue *vq, u32 idx)
{
	size_t off;

	if (!vq->uring_pages)
		return &vq->cqes[idx];
	off = PAGE_SIZE + (size_t)idx * sizeof(struct krcore_cqe);
	return page_address(vq->uring_pages[off >> PAGE_SHIFT]) +
	       offset_in_page(off);
}

/* Write one completion into the ring of @vq. Caller holds vq->dlock. */
static void krc_ring_write(struct krc_vqueue *vq, const struct krc_slot *s,
			   u32 status, u32 byte_len)
{
	struct krcore_cqe *cqe = krc_ring_entry(vq, vq->prod &
						(vq->entries - 1));

	lockdep_assert_held(&vq->dlock);
	cqe->wr_id = s->wr.wr_id;
	cqe->status = status;
	cqe->opcode = s->wr.opcode;
	cqe->flags = 0;
	cqe->reserved = 0;
	cqe->byte_len = byte_len;
	cqe->imm_data = 0;
	cqe->reserved1 = 0;
	vq->prod++;
	/* The entry before the index that publishes it. */
	smp_store_release(&vq->ring->producer, vq->prod);
}

/* Retire the slot at the head of @vq's order. Caller holds vq->dlock. */
static void krc_slot_retire(struct krc_vqueue *vq, u16 slot)
{
	struct krc_slot *s = &vq->slots[slot];
	int k;

	lockdep_assert_held(&vq->dlock);
	if (!vq->closing &&
	    (s->status != KRCORE_WC_SUCCESS || (s->wr.flags & KRCORE_WR_SIGNALED)))
		krc_ring_write(vq, s, s->status, s->byte_len);
	for (k = 0; k < s->wr.num_sge; k++) {
		if (s->mrs[k])
			krc_mr_put_inflight(s->mrs[k]);
		s->mrs[k] = NULL;
	}
	s->busy = false;
	s->done = false;
	vq->free[vq->nfree++] = slot;
	vq->inflight--;
	vq->inflight_bytes -= s->len;
	krc_proc_inflight_sub(vq->proc, 1, s->len);
}

/*
 * Complete request @e with @status (KRCORE_WC_*). Requests retire in the
 * order they were posted on the VQ: this one and every completed one
 * after it, up to the first still outstanding, are written to the ring
 * (if wanted) and give back their slots and registrations. Any context.
 */
void krc_dp_complete(struct krc_sq_ent *e, u32 status, u32 byte_len)
{
	struct krc_vqueue *vq = e->vq;
	unsigned long flags;
	struct krc_slot *s;
	bool retired = false;
	u16 slot;

	spin_lock_irqsave(&vq->dlock, flags);
	s = &vq->slots[e->slot];
	if (!s->busy || s->done ||
	    krc_cookie_make(vq->id, e->slot, s->gen) != e->cookie) {
		spin_unlock_irqrestore(&vq->dlock, flags);
		krc_event(KRC_EV_STRAY_COMPLETIONS);
		return;
	}
	s->done = true;
	s->status = status;
	s->byte_len = byte_len ? byte_len : s->len;
	while (krc_order_first(&vq->order, &slot) && vq->slots[slot].done) {
		krc_slot_retire(vq, slot);
		krc_order_pop(&vq->order);
		retired = true;
	}
	if (!retired)
		krc_event(KRC_EV_WR_HELD);
	/* A closed VQ's last request: the rest of its close, now. */
	if (retired && vq->close_pending && !vq->inflight)
		krc_vq_closed_idle(vq);
	/*
	 * Wake under the lock: once inflight reaches 0 a closing VQ may be
	 * freed, and its release waits for this lock to be free first.
	 */
	if (retired && wq_has_sleeper(&vq->wq))
		wake_up(&vq->wq);
	spin_unlock_irqrestore(&vq->dlock, flags);
	if (status != KRCORE_WC_SUCCESS)
		krc_event(KRC_EV_WR_ERRORS);
}

static u32 krc_wc_status(enum ib_wc_status st)
{
	/* enum krcore_wc_status takes the RDMA status values as they are. */
	return st;
}

/*
 * Did the request itself cause the error (a bad key, address, access or
 * length), rather than the path to the peer? Such a process is throttled
 * if it keeps breaking shared connections.
 */
bool krc_wc_is_process_fault(enum ib_wc_status st)
{
	switch (st) {
	case IB_WC_LOC_LEN_ERR:
	case IB_WC_LOC_PROT_ERR:
	case IB_WC_LOC_ACCESS_ERR:
	case IB_WC_REM_INV_REQ_ERR:
	case IB_WC_REM_ACCESS_ERR:
	case IB_WC_REM_OP_ERR:
	case IB_WC_MW_BIND_ERR:
		return true;
	default:
		return false;
	}
}

/*
 * A completion of a VQ request on @conn (any context, conn->cq_lock held).
 */
void krc_dp_dispatch(struct krc_conn *conn, struct ib_wc *wc)
{
	unsigned long flags;
	u32 n, i, pos;
	bool first_error = false;

	spin_lock_irqsave(&conn->lock, flags);
	n = conn->sq_tail - conn->sq_head;
	for (pos = 0; pos < n; pos++)
		if (conn->sq[(conn->sq_head + pos) % conn->sq_size].cookie ==
		    wc->wr_id)
			break;
	if (pos == n) {
		/* Not posted here (already retired, or not ours at all). */
		spin_unlock_irqrestore(&conn->lock, flags);
		krc_event(KRC_EV_STRAY_COMPLETIONS);
		return;
	}
	if (!conn->failing && wc->status != IB_WC_SUCCESS) {
		conn->failing = true;
		first_error = true;
	}
	conn->progress = jiffies;
	for (i = 0; i <= pos; i++) {
		struct krc_sq_ent *e = &conn->sq[conn->sq_head % conn->sq_size];
		bool own = i == pos;

		conn->sq_head++;
		conn->sq_bytes -= e->len;
		krc_prio_retire(conn, e);
		if (!conn->failing || (first_error && !own)) {
			/* Done: before an error, in order, they succeeded. */
			krc_dp_complete(e, KRCORE_WC_SUCCESS,
					own ? wc->byte_len : 0);
		} else if (first_error && wc->status != IB_WC_WR_FLUSH_ERR) {
			/* The request that broke the QP: its own status. */
			conn->culprit = e->vq;
			krc_peer_count(conn->peer, KRC_PS_WR_ERRORS, 1);
			if (krc_wc_is_process_fault(wc->status)) {
				krc_event(KRC_EV_CONN_BREAKS);
				krc_proc_note_break(e->vq->proc);
			}
			krc_dp_complete(e, krc_wc_status(wc->status), 0);
		} else {
			/* Flushed: recovery decides. */
			conn->rec[conn->nrec++] = *e;
		}
	}
	if (conn->failing && conn->sq_head == conn->sq_tail)
		wake_up(&conn->drain_wq);
	spin_unlock_irqrestore(&conn->lock, flags);
	/*
	 * Recovery takes over, unless the connection is already going (its
	 * last reference gone: krc_conn_free_work() then completes what
	 * was set aside).
	 */
	if (first_error && kref_get_unless_zero(&conn->ref)) {
		pr_warn_ratelimited("krcore: conn %u (qp %u) failed: %s; recovering\n",
				    conn->id, conn->qpn,
				    ib_wc_status_msg(wc->status));
		if (!queue_work(krc_wq, &conn->recover_work))
			krc_conn_put(conn);
	}
}

/*
 * @conn goes (its last reference, its QP destroyed): a VQ request still
 * on it or set aside for a recovery that will not come completes now,
 * flushed. Nothing of it reaches the hardware any more.
 */
void krc_dp_conn_gone(struct krc_conn *conn)
{
	unsigned long flags;
	u32 i, n = 0;

	spin_lock_irqsave(&conn->lock, flags);
	for (i = 0; i < conn->nrec; i++, n++)
		krc_dp_complete(&conn->rec[i], KRCORE_WC_FLUSHED, 0);
	conn->nrec = 0;
	while (conn->sq_head != conn->sq_tail) {
		struct krc_sq_ent *e = &conn->sq[conn->sq_head++ % conn->sq_size];

		conn->sq_bytes -= e->len;
		krc_prio_retire(conn, e);
		krc_dp_complete(e, KRCORE_WC_FLUSHED, 0);
		n++;
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (n)
		pr_warn("krcore: conn %u went with %u requests on it: flushed\n",
			conn->id, n);
}

/*
 * Allocate @vq's data plane for @depth requests (the cache had none),
 * without its ring.
 */
static int krc_vq_dp_alloc(struct krc_vqueue *vq, struct ib_device *ibdev,
			   u32 depth)
{
	vq->slots = kvcalloc(depth, sizeof(*vq->slots), GFP_KERNEL_ACCOUNT);
	vq->free = kvcalloc(depth, sizeof(*vq->free), GFP_KERNEL_ACCOUNT);
	vq->order.ids = kvcalloc(krc_order_size(depth), sizeof(u16),
				 GFP_KERNEL_ACCOUNT);
	vq->scratch = kzalloc(sizeof(*vq->scratch), GFP_KERNEL_ACCOUNT);
	vq->spare = krc_dp_spare_alloc();
	vq->hdrs = kcalloc(depth, KRC_DATA_HDR_SIZE, GFP_KERNEL_ACCOUNT);
	if (vq->hdrs) {
		vq->hdrs_dma = ib_dma_map_single(ibdev, vq->hdrs,
						 depth * KRC_DATA_HDR_SIZE,
						 DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ibdev, vq->hdrs_dma)) {
			kfree(vq->hdrs);
			vq->hdrs = NULL;
		} else {
			vq->dma_dev = ibdev;
		}
	}
	if (!vq->slots || !vq->free || !vq->order.ids || !vq->scratch ||
	    !vq->hdrs || !vq->spare)
		return -ENOMEM;
	return 0;
}

/*
 * Pin the process's @npages at @addr as @vq's ring (ABI 14), counted in
 * its pinned memory like a registration's (RLIMIT_MEMLOCK).
 */
static int krc_uring_pin(struct krc_vqueue *vq, u64 addr, u32 npages)
{
	struct mm_struct *mm = current->mm;
	struct page **pages;
	int got, i, ret;

	if (!mm || mm != vq->mm)
		return -EINVAL;
	pages = npages <= ARRAY_SIZE(vq->uring_inline) ? vq->uring_inline :
		kcalloc(npages, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return -ENOMEM;
	if (atomic64_add_return(npages, &mm->pinned_vm) >
	    rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT && !capable(CAP_IPC_LOCK)) {
		ret = -ENOMEM;
		goto err;
	}
	got = pin_user_pages_fast(addr, npages, FOLL_WRITE | FOLL_LONGTERM,
				  pages);
	if (got != npages) {
		if (got > 0)
			unpin_user_pages(pages, got);
		ret = -EFAULT;
		goto err;
	}
	for (i = 0; i < npages; i++) {
		if (PageHighMem(pages[i])) {	/* entries need page_address() */
			unpin_user_pages(pages, npages);
			ret = -EINVAL;
			goto err;
		}
	}
	vq->uring_pages = pages;
	vq->uring_npages = npages;
	vq->uring_addr = addr;
	return 0;
err:
	atomic64_sub(npages, &mm->pinned_vm);
	if (pages != vq->uring_inline)
		kfree(pages);
	return ret;
}

static void krc_uring_unpin(struct krc_vqueue *vq)
{
	if (!vq->uring_pages)
		return;
	unpin_user_pages_dirty_lock(vq->uring_pages, vq->uring_npages, true);
	atomic64_sub(vq->uring_npages, &vq->mm->pinned_vm);
	if (vq->uring_pages != vq->uring_inline)
		kfree(vq->uring_pages);
	vq->uring_pages = NULL;
}

/*
 * The data plane of a VQ, made when it first connects: a closed VQ's from
 * the cache (dp_cache.c) if there is one for the caller's memory cgroup.
 * Its ring is the kernel's (@addr 0), or @len bytes of the caller's own
 * memory at @addr (ABI 14; EMSGSIZE and the size it needs in @need if
 * that is too small).
 */
static int krc_vq_dp_init(struct krc_vqueue *vq, u64 addr, u32 len, u32 *need)
{
	struct ib_device *ibdev = krc_node.dev->ibdev;
	u32 depth = clamp_t(u32, krc_param_vq_depth, 1, 4096);
	u32 entries = roundup_pow_of_two(2 * depth);
	size_t off = PAGE_SIZE;
	size_t size = PAGE_ALIGN(off + entries * sizeof(struct krcore_cqe));
	bool taken;
	int ret;
	u32 i;

	if (addr && len < size) {
		*need = size;
		return -EMSGSIZE;
	}
	if (addr) {
		ret = krc_uring_pin(vq, addr, size >> PAGE_SHIFT);
		if (ret)
			return ret;
	}
	vq->depth = depth;
	vq->entries = entries;
	vq->memcg = get_mem_cgroup_from_mm(current->mm);
	taken = krc_dp_cache_take(vq, depth, ibdev, vq->memcg);
	ret = taken ? 0 : krc_vq_dp_alloc(vq, ibdev, depth);
	vq->ring_size = size;
	if (!ret && !vq->uring_pages) {
		if (!vq->ring_mem)
			vq->ring_mem = krc_ring_alloc(size);	/* zeroed */
		else
			memset(vq->ring_mem, 0, size);
		ret = vq->ring_mem ? 0 : -ENOMEM;
	}
	if (ret) {
		krc_vq_dp_free(vq);
		return ret;
	}
	krc_order_init(&vq->order, vq->order.ids, krc_order_size(depth));
	for (i = 0; i < depth; i++)
		vq->free[i] = depth - 1 - i;
	/* What the request check needs, fixed for the VQ's life. */
	vq->check.atomics = ibdev->attrs.atomic_cap != IB_ATOMIC_NONE;
	/* A SEND takes one more SGE on the wire: the kernel's header. */
	vq->check.max_sge = min_t(u32, KRCORE_MAX_SGE,
				  ibdev->attrs.max_send_sge - 1);
	vq->check.max_msg = KRCORE_MAX_MSG;
	vq->nfree = depth;
	if (vq->uring_pages) {
		/* The header only: no entry is read before it is written. */
		vq->ring = page_address(vq->uring_pages[0]);
		memset(vq->ring, 0, sizeof(*vq->ring));
	} else {
		vq->ring = vq->ring_mem;
		vq->cqes = vq->ring_mem + off;
	}
	vq->ring->entries = entries;
	vq->ring->depth = depth;
	vq->ring->entry_offset = off;
	vq->ring->size = size;
	if (!vq->uring_pages) {
		mutex_lock(&vq->map_lock);
		vq->map_ring = vq->ring_mem;	/* complete: mmap may have it */
		mutex_unlock(&vq->map_lock);
	}
	return 0;
}

/*
 * The VQ's data plane for a qconnect: made at the first, with the ring it
 * names (@addr: krc_vq_dp_init()); a later one must name the same ring,
 * and only the process whose memory it is may use it (a child with the
 * descriptor would have completions written into its parent's memory).
 */
int krc_vq_dp_ring(struct krc_vqueue *vq, u64 addr, u32 len, u32 *need)
{
	if (!vq->slots)
		return krc_vq_dp_init(vq, addr, len, need);
	if (addr != vq->uring_addr || (addr && current->mm != vq->mm))
		return -EINVAL;
	return 0;
}

/* Let go of the device: the SEND headers' DMA mapping. */
void krc_vq_dp_unmap(struct krc_vqueue *vq)
{
	if (vq->dma_dev)
		ib_dma_unmap_single(vq->dma_dev, vq->hdrs_dma,
				    vq->depth * KRC_DATA_HDR_SIZE, DMA_TO_DEVICE);
	vq->dma_dev = NULL;
}

/* @vq goes: its data plane to the cache, or freed. */
void krc_vq_dp_free(struct krc_vqueue *vq)
{
	krc_uring_unpin(vq);
	vq->ring = NULL;
	if (krc_dp_cache_give(vq))
		return;
	mem_cgroup_put(vq->memcg);
	vq->memcg = NULL;
	krc_vq_dp_unmap(vq);
	kfree(vq->hdrs);
	vq->hdrs = NULL;
	kvfree(vq->slots);
	kvfree(vq->free);
	kvfree(vq->order.ids);
	kfree(vq->scratch);
	vfree(vq->ring_mem);
	kfree(vq->spare);
	vq->spare = NULL;
	vq->slots = NULL;
	vq->free = NULL;
	vq->order.ids = NULL;
	vq->scratch = NULL;
	vq->ring_mem = NULL;
	vq->ring = NULL;
}
