// SPDX-License-Identifier: GPL-2.0
/*
 * recv.c - two-sided messages over the shared QPs.
 *
 * Every pooled QP of the node receives into one shared receive queue
 * (SRQ) of kernel buffers, re-posted as soon as their message is copied
 * out, so a QP never runs out of receives whatever the processes do. A
 * SEND carries a 16-byte header naming the destination port; a WRITE_IMM
 * names it in the upper half of its immediate. The message goes to the VQ
 * bound to that port, into its receive ring (mapped by the process): one
 * copy, in the completion path. A message for a port nobody bound, or for
 * ring that has no slot for it, is dropped and counted. Senders send
 * only into slots the port lent them (flow.c), so the second happens
 * only to a sender outside the protocol; one slow receiver holds back
 * only its own senders and never stalls the shared QP.
 */
#include <linux/capability.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "data/data.h"

#define KRC_SRQ_BUF	4096
#define KRC_RECV_SLOTS	64

/* Bound ports: port -> VQ (RCU: looked up in the completion path). */
static DEFINE_XARRAY(krc_ports);

struct krc_srq_buf {
	void *buf;
	u64 dma;
};

/* The receive queue shared by every pooled QP, and its buffers. */
struct krc_srq {
	struct ib_srq *srq;
	u32 n;
	struct krc_srq_buf bufs[];
};

/* Set while the node starts, cleared when it stops (node->lock). */
static struct krc_srq *krc_recv_srq;

static int krc_srq_post(struct krc_srq *s, u32 i)
{
	struct ib_sge sge = {
		.addr = s->bufs[i].dma,
		.length = KRC_SRQ_BUF,
		.lkey = krc_node.dev->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = krc_cookie_make(0, i, 0),
		.sg_list = &sge,
		.num_sge = 1,
	};

	ib_dma_sync_single_for_device(krc_node.dev->ibdev, s->bufs[i].dma,
				      KRC_SRQ_BUF, DMA_FROM_DEVICE);
	return ib_post_srq_recv(s->srq, &wr, NULL);
}

int krc_recv_start(struct krc_node *node)
{
	struct ib_device *ibdev = node->dev->ibdev;
	struct ib_srq_init_attr init = {};
	u32 n = min_t(u32, krc_param_srq_depth, ibdev->attrs.max_srq_wr);
	struct krc_srq *s;
	u32 i;
	int ret;

	if (!ibdev->attrs.max_srq || !n)
		return 0;	/* no SRQ: two-sided messages unsupported */
	s = kzalloc(struct_size(s, bufs, n), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	init.attr.max_wr = n;
	init.attr.max_sge = 1;
	init.srq_type = IB_SRQT_BASIC;
	s->srq = ib_create_srq(node->dev->pd, &init);
	if (IS_ERR(s->srq)) {
		ret = PTR_ERR(s->srq);
		kfree(s);
		return ret;
	}
	krc_obj_created(KRC_OBJ_SRQ);
	krc_recv_srq = s;
	for (i = 0; i < n; i++) {
		s->bufs[i].buf = kmalloc(KRC_SRQ_BUF, GFP_KERNEL);
		if (!s->bufs[i].buf)
			return -ENOMEM;
		s->bufs[i].dma = ib_dma_map_single(ibdev, s->bufs[i].buf,
						   KRC_SRQ_BUF, DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ibdev, s->bufs[i].dma)) {
			kfree(s->bufs[i].buf);
			s->bufs[i].buf = NULL;
			return -ENOMEM;
		}
		s->n = i + 1;
		ret = krc_srq_post(s, i);
		if (ret)
			return ret;
	}
	/* Every pooled QP made from now on receives from it. */
	krc_conn_use_srq(s->srq);
	return 0;
}

/* After every QP that used it is gone. */
void krc_recv_stop(struct krc_node *node)
{
	struct krc_srq *s = krc_recv_srq;
	u32 i;

	if (!s)
		return;
	krc_conn_use_srq(NULL);
	krc_recv_srq = NULL;
	ib_destroy_srq(s->srq);
	krc_obj_destroyed(KRC_OBJ_SRQ);
	for (i = 0; i < s->n; i++) {
		ib_dma_unmap_single(node->dev->ibdev, s->bufs[i].dma,
				    KRC_SRQ_BUF, DMA_FROM_DEVICE);
		kfree(s->bufs[i].buf);
	}
	kfree(s);
}

/*
 * Copy a message into @vq's receive ring (any context). The ring's header
 * is mapped writable into the process: every size, index and offset used
 * here is the kernel's own copy (vq->rentries, vq->rslot, vq->rprod,
 * vq->rdropped). Only the consumer index is read from the mapping, and
 * a lying consumer can only make the process lose its own messages.
 */
static void krc_recv_deliver(struct krc_vqueue *vq, const u8 src_gid[16],
			     u8 opcode, const struct krc_data_hdr *h,
			     const void *data, u32 len)
{
	struct krcore_recv_ring *r = vq->rring;
	struct krcore_msg *m;
	unsigned long flags;
	u32 i;

	if (len > vq->rslot && data)
		len = vq->rslot;	/* cannot happen: SRQ buffers are smaller */
	spin_lock_irqsave(&vq->rlock, flags);
	/* Only into a slot lent to the sending node (flow.c). */
	if (READ_ONCE(vq->closing) || !vq->flow_in ||
	    krc_flow_arrive(vq, src_gid, &i)) {
		vq->rdropped++;
		WRITE_ONCE(r->dropped, vq->rdropped);
		spin_unlock_irqrestore(&vq->rlock, flags);
		krc_event(KRC_EV_MSG_DROPPED);
		return;
	}
	m = &vq->rmsgs[i];
	if (data && len)
		memcpy(vq->rdata + (size_t)i * vq->rslot, data, len);
	m->len = len;
	m->imm_data = h->imm_data;
	m->opcode = opcode;
	m->flags = h->flags;
	m->src_port = h->src_port;
	m->reserved = 0;
	memcpy(m->src_gid, src_gid, 16);
	/* The entry and its data before the index that publishes them. */
	smp_store_release(&r->producer, vq->rprod);
	/* Under the lock: the VQ may be freed as soon as it is dropped. */
	if (wq_has_sleeper(&vq->wq))
		wake_up(&vq->wq);
	spin_unlock_irqrestore(&vq->rlock, flags);
	krc_event(KRC_EV_MSG_RECEIVED);
}

/* A completion of the SRQ, on @conn's CQ (any context). */
void krc_recv_dispatch(struct krc_conn *conn, struct ib_wc *wc)
{
	struct krc_srq *s = READ_ONCE(krc_recv_srq);
	u32 i = krc_cookie_slot(wc->wr_id);
	struct krc_data_hdr h = {};
	struct krc_vqueue *vq;
	const void *data = NULL;
	u8 opcode;
	u32 len;

	if (!s || i >= s->n)
		return;
	if (wc->status != IB_WC_SUCCESS)
		goto repost;
	ib_dma_sync_single_for_cpu(krc_node.dev->ibdev, s->bufs[i].dma,
				   KRC_SRQ_BUF, DMA_FROM_DEVICE);
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
		u32 imm = be32_to_cpu(wc->ex.imm_data);

		opcode = KRCORE_WR_WRITE_IMM;
		h.dst_port = imm >> 16;
		h.imm_data = imm & 0xffff;
		h.flags = KRCORE_MSG_F_IMM;
		len = wc->byte_len;
	} else if (!krc_data_hdr_decode(s->bufs[i].buf, wc->byte_len, &h)) {
		opcode = h.flags & KRCORE_MSG_F_IMM ? KRCORE_WR_SEND_IMM :
						      KRCORE_WR_SEND;
		data = (u8 *)s->bufs[i].buf + KRC_DATA_HDR_SIZE;
		len = wc->byte_len - KRC_DATA_HDR_SIZE;
	} else {
		krc_event(KRC_EV_CTRL_RX_BAD);
		goto repost;
	}
	rcu_read_lock();
	vq = xa_load(&krc_ports, h.dst_port);
	if (vq)
		krc_recv_deliver(vq, conn->peer ? conn->peer->gid :
				 krc_node.card.gid, opcode, &h, data, len);
	else
		krc_event(KRC_EV_MSG_NO_PORT);
	rcu_read_unlock();
repost:
	if (krc_srq_post(s, i))
		pr_warn_ratelimited("krcore: cannot re-post a receive buffer\n");
}

/*
 * A message that came another way (the datagram transport): to the VQ
 * bound to its port, if any. Any context.
 */
void krc_recv_deliver_port(const u8 src_gid[16], u8 opcode,
			   const struct krc_data_hdr *h, const void *data,
			   u32 len)
{
	struct krc_vqueue *vq;

	rcu_read_lock();
	vq = xa_load(&krc_ports, h->dst_port);
	if (vq)
		krc_recv_deliver(vq, src_gid, opcode, h, data, len);
	else
		krc_event(KRC_EV_MSG_NO_PORT);
	rcu_read_unlock();
}

/* Bind @port to @vq and make its receive ring. */
int krc_vq_bind_port(struct krc_vqueue *vq, u32 port, u32 *ring_size)
{
	size_t off = PAGE_SIZE, ent = KRC_RECV_SLOTS * sizeof(struct krcore_msg);
	struct krcore_recv_ring *r;
	int ret;

	if (!port || port > 0xffff)
		return -EINVAL;
	if (vq->bound_port)
		return -EISCONN;
	if (!READ_ONCE(krc_recv_srq))
		return -EOPNOTSUPP;
	/* As for IP: the ports below 1024 are the administrator's. */
	if (port < 1024 && !capable(CAP_NET_BIND_SERVICE))
		return -EACCES;
	if (!vq->proc)
		return -EPERM;
	vq->rring_size = PAGE_ALIGN(off + ent) + KRC_RECV_SLOTS * KRC_SRQ_BUF;
	vq->rring_mem = krc_ring_alloc(vq->rring_size);
	if (!vq->rring_mem)
		return -ENOMEM;
	r = vq->rring_mem;
	/* The kernel's copies: what the process sees is only a copy. */
	vq->rentries = KRC_RECV_SLOTS;
	vq->rslot = KRC_SRQ_BUF;
	vq->rdropped = 0;
	r->entries = KRC_RECV_SLOTS;
	r->slot_size = KRC_SRQ_BUF;
	r->entry_offset = off;
	r->data_offset = PAGE_ALIGN(off + ent);
	r->size = vq->rring_size;
	vq->rmsgs = vq->rring_mem + off;
	vq->rdata = vq->rring_mem + PAGE_ALIGN(off + ent);
	vq->rring = r;
	ret = krc_flow_in_create(vq, port, KRC_RECV_SLOTS);
	if (!ret) {
		ret = -EMFILE;
		if (atomic_inc_return(&vq->proc->nports) <=
		    krc_param_max_ports_per_proc)
			ret = xa_insert(&krc_ports, port, vq, GFP_KERNEL);
		if (ret) {
			atomic_dec(&vq->proc->nports);
			krc_flow_in_destroy(vq);
		}
	}
	if (ret) {
		vq->rring = NULL;
		vfree(vq->rring_mem);
		vq->rring_mem = NULL;
		return ret == -EBUSY ? -EADDRINUSE : ret;
	}
	vq->bound_port = port;
	*ring_size = vq->rring_size;
	mutex_lock(&vq->map_lock);
	vq->map_rring = vq->rring_mem;	/* bound: mmap may have it */
	mutex_unlock(&vq->map_lock);
	return 0;
}

/* Closing: no new message for @vq once this returns. */
void krc_vq_unbind_port(struct krc_vqueue *vq)
{
	if (!vq->bound_port)
		return;
	xa_erase(&krc_ports, vq->bound_port);
	atomic_dec(&vq->proc->nports);
	vq->bound_port = 0;
	synchronize_rcu();	/* a delivery in flight is done */
	/* Its senders learn that the port is gone. */
	krc_flow_in_destroy(vq);
}

struct krc_vqueue *krc_port_vq_get(u32 port)
{
	struct krc_vqueue *vq;

	rcu_read_lock();
	vq = xa_load(&krc_ports, port);
	if (vq && !kref_get_unless_zero(&vq->ref))
		vq = NULL;
	rcu_read_unlock();
	return vq;
}

void krc_vq_free_port(struct krc_vqueue *vq)
{
	vfree(vq->rring_mem);
	vq->rring_mem = NULL;
	vq->rring = NULL;
}
