// SPDX-License-Identifier: GPL-2.0
/*
 * dg_exec.c - the executor of the datagram transport: a peer's request,
 * checked by the responder (dg_rx.c) against the kernel's own table of
 * registrations (the rkey names memory a process of this node registered
 * through krcore, with the access the opcode needs, the whole range of
 * the request inside it), is executed by the RNIC on the executor QP: a
 * kernel-owned RC QP connected to itself, in no pool, on which no process
 * posts. Keys, bounds and access are enforced by the hardware too, and
 * atomics stay RNIC atomics. Admission keeps the executor's send queue
 * from overflowing (dg_exec_busy). The executor fails only if the RNIC
 * refuses a request the software check let through; the next request
 * then gets a new one.
 */
#include <linux/slab.h>

#include "data/dg.h"

/* Requests on every peer's executor QP (its send queue's room). */
static atomic_t krc_dg_execs = ATOMIC_INIT(0);

static u32 krc_dg_exec_cap(void)
{
	struct ib_device *ibdev = krc_dg_ibdev();

	return min_t(u32, krc_param_qp_depth, ibdev->attrs.max_qp_wr);
}

/* Does a request of @op run on the executor QP (not a SEND)? */
bool krc_dg_op_executes(u8 op)
{
	return op != KRCORE_WR_SEND && op != KRCORE_WR_SEND_IMM;
}

/* Is the executor's send queue taken (every peer's requests together)? */
bool krc_dg_exec_full(void)
{
	return atomic_read(&krc_dg_execs) >= krc_dg_exec_cap();
}

static struct krc_conn *krc_dg_exec_qp;	/* under krc_dg_exec_lock */
static DEFINE_MUTEX(krc_dg_exec_lock);

/* The executor (a reference), made again if it broke. Process context. */
static struct krc_conn *krc_dg_exec_conn(void)
{
	struct krc_conn *conn, *old;

	mutex_lock(&krc_dg_exec_lock);
	conn = krc_dg_exec_qp;
	if (conn && krc_conn_usable(conn)) {
		kref_get(&conn->ref);
		mutex_unlock(&krc_dg_exec_lock);
		return conn;
	}
	old = conn;
	conn = krc_conn_loopback();
	if (!IS_ERR(conn)) {
		krc_dg_exec_qp = conn;
		kref_get(&conn->ref);
	} else {
		krc_dg_exec_qp = NULL;
	}
	mutex_unlock(&krc_dg_exec_lock);
	/* Its recovery (which holds its own reference) destroys it. */
	krc_conn_put(old);
	return conn;
}

/* The node starts: the executor now, so that a broken RNIC shows at once. */
int krc_dg_start(void)
{
	struct krc_conn *conn = krc_dg_exec_conn();

	if (IS_ERR(conn))
		return PTR_ERR(conn);
	krc_conn_put(conn);
	return 0;
}

/* The node stops: the executor goes (what it still runs is flushed). */
void krc_dg_exec_stop(void)
{
	struct krc_conn *conn;

	mutex_lock(&krc_dg_exec_lock);
	conn = krc_dg_exec_qp;
	krc_dg_exec_qp = NULL;
	mutex_unlock(&krc_dg_exec_lock);
	if (conn) {
		krc_conn_kill(conn);
		krc_conn_put(conn);
	}
}

/* The executor QP finished one request (its CQ's context). */
static void krc_dg_exec_done(struct krc_kop *kop)
{
	struct krc_dg_rx *rx = kop->ctx;
	struct krc_peer *peer = rx->peer;
	struct krc_dg_rent *r = &rx->ent[kop->idx];
	unsigned long flags;

	spin_lock_irqsave(&rx->lock, flags);
	if (r->state == KRC_DG_R_EXEC && r->seq == kop->seq) {
		if (kop->status == IB_WC_SUCCESS)
			r->status = KRCORE_WC_SUCCESS;
		else if (kop->status == IB_WC_WR_FLUSH_ERR)
			r->status = KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
		else
			r->status = kop->status;
		if (r->mr)
			krc_mr_put_inflight(r->mr);
		if (r->lmr)
			krc_lmrh_put(r->lmr);
		r->mr = NULL;
		r->lmr = NULL;
		ib_dma_sync_single_for_cpu(krc_dg_ibdev(), rx->buf_dma +
					   (size_t)kop->idx * rx->slot,
					   rx->slot, DMA_BIDIRECTIONAL);
		r->state = KRC_DG_R_READY;
		krc_dg_retire(rx);
	}
	spin_unlock_irqrestore(&rx->lock, flags);
	/*
	 * No krc_send_now() here: this runs in the executor CQ's handler
	 * with its lock held and interrupts off; the replies go out at the
	 * next softirq (this one, mostly).
	 */
	atomic_dec(&krc_dg_execs);
	atomic_dec(&rx->exec);
	krc_peer_put(peer);
}

/* The access a remote request needs of the memory it names. */
static u32 krc_dg_access(u8 op)
{
	switch (op) {
	case KRCORE_WR_READ:
		return KRCORE_ACCESS_REMOTE_READ;
	case KRCORE_WR_WRITE:
	case KRCORE_WR_WRITE_IMM:
		return KRCORE_ACCESS_REMOTE_WRITE;
	default:
		return KRCORE_ACCESS_REMOTE_ATOMIC;
	}
}

/*
 * Fault injection (fault_dg_exec_delay_ms): the executor as a slow RNIC
 * would be, its requests posted only that long after they were taken,
 * all at once. A post its queue has no room for fails the request
 * (flushed: NOT_EXECUTED_OR_UNKNOWN), as it would on a node without the
 * admission above.
 */
struct krc_dg_later {
	struct list_head node;
	struct krc_conn *exec;
	struct krc_kop *kop;
	union krc_ib_wr w;
	struct ib_sge sge;
};

static LIST_HEAD(krc_dg_later_list);
static DEFINE_SPINLOCK(krc_dg_later_lock);

static void krc_dg_later_work_fn(struct work_struct *work)
{
	struct krc_dg_later *d, *tmp;
	LIST_HEAD(todo);

	spin_lock_bh(&krc_dg_later_lock);
	list_splice_init(&krc_dg_later_list, &todo);
	spin_unlock_bh(&krc_dg_later_lock);
	list_for_each_entry_safe(d, tmp, &todo, node) {
		d->w.send.sg_list = &d->sge;
		if (krc_conn_post_kop(d->exec, d->kop, &d->w.send)) {
			d->kop->status = IB_WC_WR_FLUSH_ERR;
			d->kop->done_fn(d->kop);
		}
		krc_conn_put(d->exec);
		krc_kop_put(d->kop);
		kfree(d);
	}
	krc_send_now();
}

static DECLARE_DELAYED_WORK(krc_dg_later_work, krc_dg_later_work_fn);

static int krc_dg_exec_later(struct krc_conn *exec, struct krc_kop *kop,
			     const union krc_ib_wr *w, const struct ib_sge *sge)
{
	struct krc_dg_later *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return -ENOMEM;
	kref_get(&exec->ref);
	refcount_inc(&kop->ref);
	d->exec = exec;
	d->kop = kop;
	d->w = *w;
	d->sge = *sge;
	spin_lock_bh(&krc_dg_later_lock);
	list_add_tail(&d->node, &krc_dg_later_list);
	spin_unlock_bh(&krc_dg_later_lock);
	queue_delayed_work(krc_wq, &krc_dg_later_work,
			   msecs_to_jiffies(READ_ONCE(krc_fault_dg_exec_delay_ms)));
	return 0;
}

/* The node stops: what the fault held is posted (and flushed) now. */
void krc_dg_exit(void)
{
	mod_delayed_work(krc_wq, &krc_dg_later_work, 0);
	flush_delayed_work(&krc_dg_later_work);
}

static void krc_dg_exec_let_go(struct krc_umr *mr, struct krc_lmr_region *lmr)
{
	if (mr)
		krc_mr_put_inflight(mr);
	if (lmr)
		krc_lmrh_put(lmr);
}

/*
 * Execute request @h (slot @i, payload already in the slot) on the
 * executor QP. Returns 0 (it completes in krc_dg_exec_done) or the
 * status it completes with at once. Process context, rx->lock not held.
 */
u32 krc_dg_exec(struct krc_dg_rx *rx, u32 i, const struct krc_dg_hdr *h)
{
	u64 data_dma = rx->buf_dma + (size_t)i * rx->slot + KRC_DG_HDR_SIZE;
	struct krc_dg_rent *r = &rx->ent[i];
	union krc_ib_wr w = {};
	struct krc_conn *exec;
	struct krc_kop *kop;
	struct krc_lmr_region *lmr = NULL;
	u32 access = krc_dg_access(h->opcode);
	struct krc_umr *mr;
	struct ib_sge sge;
	u64 start, len;
	int ret;

	/*
	 * The whole request's range (the header names it, the decoder put
	 * this segment inside it): a request is refused all of it or none,
	 * as an RDMA responder refuses one at its first packet. The key
	 * names a process's registration or a remote memory region.
	 */
	if (h->opcode == KRCORE_WR_READ || h->opcode == KRCORE_WR_WRITE ||
	    h->opcode == KRCORE_WR_WRITE_IMM) {
		start = h->swap;
		len = h->compare_add;
	} else {
		start = h->remote_addr;
		len = h->len;
	}
	mr = krc_mr_remote_get(h->rkey, start, len, access);
	if (!mr)
		lmr = krc_lmrh_remote_get(h->rkey, start, len, access);
	if (!mr && !lmr) {
		krc_event(KRC_EV_DG_RKEY_REFUSED);
		return KRCORE_WC_REM_ACCESS_ERR;
	}
	exec = krc_dg_exec_conn();
	if (IS_ERR(exec)) {
		krc_dg_exec_let_go(mr, lmr);
		return KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
	}
	kop = krc_kop_alloc(krc_dg_ibdev(), 0, DMA_NONE);
	if (!kop) {
		krc_conn_put(exec);
		krc_dg_exec_let_go(mr, lmr);
		return KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
	}
	kop->done_fn = krc_dg_exec_done;
	kop->ctx = rx;
	kop->idx = i;
	kop->seq = h->seq;
	r->mr = mr;
	r->lmr = lmr;
	sge.addr = data_dma;
	sge.length = h->len;
	sge.lkey = krc_dg_lkey();
	w.send.sg_list = &sge;
	w.send.num_sge = 1;
	switch (h->opcode) {
	case KRCORE_WR_READ:
		w.send.opcode = IB_WR_RDMA_READ;
		break;
	case KRCORE_WR_WRITE:
	case KRCORE_WR_WRITE_IMM:
		w.send.opcode = IB_WR_RDMA_WRITE;
		break;
	case KRCORE_WR_ATOMIC_CAS:
		w.send.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
		w.atomic.compare_add = h->compare_add;
		w.atomic.swap = h->swap;
		break;
	default:
		w.send.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		w.atomic.compare_add = h->compare_add;
		break;
	}
	if (h->opcode == KRCORE_WR_ATOMIC_CAS ||
	    h->opcode == KRCORE_WR_ATOMIC_FAA) {
		w.atomic.remote_addr = h->remote_addr;
		w.atomic.rkey = h->rkey;
	} else {
		w.rdma.remote_addr = h->remote_addr;
		w.rdma.rkey = h->rkey;
	}
	kref_get(&rx->peer->ref);
	atomic_inc(&rx->exec);
	atomic_inc(&krc_dg_execs);
	ib_dma_sync_single_for_device(krc_dg_ibdev(), data_dma, h->len,
				      DMA_BIDIRECTIONAL);
	if (READ_ONCE(krc_fault_dg_exec_delay_ms) > 0)
		ret = krc_dg_exec_later(exec, kop, &w, &sge);
	else
		ret = krc_conn_post_kop(exec, kop, &w.send);
	krc_conn_put(exec);
	krc_kop_put(kop);
	if (ret) {
		atomic_dec(&krc_dg_execs);
		atomic_dec(&rx->exec);
		krc_peer_put(rx->peer);
		r->mr = NULL;
		r->lmr = NULL;
		krc_dg_exec_let_go(mr, lmr);
		return KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
	}
	krc_event(KRC_EV_DG_EXECUTED);
	krc_send_now();
	return 0;
}
