// SPDX-License-Identifier: GPL-2.0
/*
 * kqp.c - RC queue pairs of the kernel's own.
 *
 * krc_qp_connect() takes an RC QP from INIT to RTS toward a remote QP:
 * the step every pooled connection (conn/) and the kernel QP share.
 *
 * A kqp is an RC QP connected to itself on a port, on which only the
 * kernel posts: fast registrations of kernel memory (the node page, the
 * MetaServer table) and the READs of a MetaServer table on this very
 * node. No process posts on it, so no process can break it. Its requests
 * are kops: ib_core polls its CQ (softirq) and each completion calls the
 * kop back through its ib_cqe.
 */
#include <linux/etherdevice.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "core/core.h"

#define KRC_KQP_DEPTH	64

int krc_qp_connect(struct ib_qp *qp, struct krc_port *port, const u8 gid[16],
		   const u8 mac[ETH_ALEN], enum ib_mtu mtu, u32 remote_qpn,
		   u32 remote_psn, u32 sq_psn)
{
	struct ib_device *ibdev = port->dev->ibdev;
	struct ib_qp_attr attr = {};
	union ib_gid dgid;
	int sgid_index;
	int ret;

	memcpy(dgid.raw, gid, sizeof(dgid.raw));
	mutex_lock(&port->dev->lock);
	sgid_index = port->gid_index;
	mutex_unlock(&port->dev->lock);
	if (sgid_index < 0)
		return -ENODEV;

	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = mtu;
	attr.dest_qp_num = remote_qpn;
	attr.rq_psn = remote_psn;
	attr.max_dest_rd_atomic = min_t(int, 16, ibdev->attrs.max_qp_rd_atom);
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(ibdev, port->port_num);
	rdma_ah_set_port_num(&attr.ah_attr, port->port_num);
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, sgid_index, 64, 0);
	memcpy(attr.ah_attr.roce.dmac, mac, ETH_ALEN);
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret) {
		pr_warn("krcore: qp %u: RTR failed: %d\n", qp->qp_num, ret);
		return ret;
	}

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = sq_psn;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = min_t(int, 16, ibdev->attrs.max_qp_init_rd_atom);
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		pr_warn("krcore: qp %u: RTS failed: %d\n", qp->qp_num, ret);
	return ret;
}

/* A request of the kqp completed (softirq): the kop, then the count. */
static void krc_kqp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_kop *kop = container_of(wc->wr_cqe, struct krc_kop, cqe);
	struct krc_kqp *kqp = cq->cq_context;

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("krcore: kernel qp %u: %s\n",
				    kqp->qp->qp_num,
				    ib_wc_status_msg(wc->status));
	krc_kop_complete(kop, wc);
	/* Last: krc_kqp_destroy() frees the kqp once ib_free_cq() is done. */
	if (atomic_dec_and_test(&kqp->outstanding))
		wake_up(&kqp->wq);
}

static int krc_kqp_init_state(struct krc_kqp *kqp, u32 port_num)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = port_num,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
	};

	return ib_modify_qp(kqp->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

struct krc_kqp *krc_kqp_create(struct krc_port *port)
{
	struct krc_device *dev = port->dev;
	struct ib_qp_init_attr init = {};
	enum ib_mtu mtu;
	struct krc_kqp *kqp;
	u8 gid[16], mac[ETH_ALEN];
	u32 psn;
	int ret;

	kqp = kzalloc(sizeof(*kqp), GFP_KERNEL);
	if (!kqp)
		return ERR_PTR(-ENOMEM);
	kqp->ibdev = dev->ibdev;
	kqp->pd = dev->pd;
	spin_lock_init(&kqp->lock);
	atomic_set(&kqp->outstanding, 0);
	init_waitqueue_head(&kqp->wq);

	kqp->cq = ib_alloc_cq(dev->ibdev, kqp, KRC_KQP_DEPTH + 1, 0,
			      IB_POLL_SOFTIRQ);
	if (IS_ERR(kqp->cq)) {
		ret = PTR_ERR(kqp->cq);
		kqp->cq = NULL;
		goto err;
	}
	krc_obj_created(KRC_OBJ_CQ);
	init.send_cq = kqp->cq;
	init.recv_cq = kqp->cq;
	init.qp_type = IB_QPT_RC;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.cap.max_send_wr = KRC_KQP_DEPTH;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_wr = 1;
	init.cap.max_recv_sge = 1;
	kqp->qp = ib_create_qp(dev->pd, &init);
	if (IS_ERR(kqp->qp)) {
		ret = PTR_ERR(kqp->qp);
		kqp->qp = NULL;
		goto err;
	}
	krc_obj_created(KRC_OBJ_QP);
	ret = krc_kqp_init_state(kqp, port->port_num);
	if (ret)
		goto err;
	mutex_lock(&dev->lock);
	memcpy(gid, port->gid.raw, sizeof(gid));
	ether_addr_copy(mac, port->mac);
	mtu = port->active_mtu;
	mutex_unlock(&dev->lock);
	psn = get_random_u32() & 0xffffff;
	ret = krc_qp_connect(kqp->qp, port, gid, mac, mtu, kqp->qp->qp_num,
			     psn, psn);
	if (ret)
		goto err;
	return kqp;
err:
	pr_err("krcore: cannot create the kernel's QP: %d\n", ret);
	krc_kqp_destroy(kqp);
	return ERR_PTR(ret);
}

/* Flush what is posted (each kop completes), then free. Process context. */
void krc_kqp_destroy(struct krc_kqp *kqp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (!kqp)
		return;
	spin_lock_irq(&kqp->lock);
	kqp->dead = true;
	spin_unlock_irq(&kqp->lock);
	if (kqp->qp) {
		ib_modify_qp(kqp->qp, &attr, IB_QP_STATE);
		if (!wait_event_timeout(kqp->wq,
					!atomic_read(&kqp->outstanding),
					msecs_to_jiffies(5000)))
			pr_err("krcore: kernel qp %u: %d requests never completed\n",
			       kqp->qp->qp_num, atomic_read(&kqp->outstanding));
		ib_destroy_qp(kqp->qp);
		krc_obj_destroyed(KRC_OBJ_QP);
	}
	if (kqp->cq) {
		ib_free_cq(kqp->cq);
		krc_obj_destroyed(KRC_OBJ_CQ);
	}
	kfree(kqp);
}

int krc_kqp_post(struct krc_kqp *kqp, struct krc_kop *kop,
		 struct ib_send_wr *wr)
{
	unsigned long flags;
	int ret;

	kop->cqe.done = krc_kqp_done;
	wr->wr_cqe = &kop->cqe;
	wr->send_flags |= IB_SEND_SIGNALED;
	refcount_inc(&kop->ref);
	spin_lock_irqsave(&kqp->lock, flags);
	atomic_inc(&kqp->outstanding);
	if (kqp->dead)
		ret = -ENOTCONN;
	else
		ret = ib_post_send(kqp->qp, wr, NULL);
	if (ret)
		atomic_dec(&kqp->outstanding);
	spin_unlock_irqrestore(&kqp->lock, flags);
	if (ret)
		krc_kop_put(kop);
	else
		krc_send_now();
	return ret;
}

int krc_kqp_read(struct krc_kqp *kqp, struct krc_kop *kop, u64 raddr,
		 u32 rkey, u32 len)
{
	struct ib_sge sge = {
		.addr = kop->dma,
		.length = len,
		.lkey = kqp->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_READ,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = raddr,
		.rkey = rkey,
	};

	if (len > kop->len)
		return -EINVAL;
	return krc_kqp_post(kqp, kop, &wr.wr);
}

struct ib_mr *krc_kqp_reg_mr(struct krc_kqp *kqp, struct scatterlist *sg,
			     int nents, unsigned int page_size, int access,
			     u64 iova)
{
	struct ib_reg_wr reg = {};
	struct krc_kop *kop;
	struct ib_mr *mr;
	int n, ret;

	mr = ib_alloc_mr(kqp->pd, IB_MR_TYPE_MEM_REG, nents);
	if (IS_ERR(mr))
		return mr;
	krc_obj_created(KRC_OBJ_MR);
	n = ib_map_mr_sg(mr, sg, nents, NULL, page_size);
	if (n != nents) {
		ret = n < 0 ? n : -EINVAL;
		goto err;
	}
	/* Peers address it from @iova: no kernel address leaves the node. */
	mr->iova = iova;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	kop = krc_kop_alloc(kqp->ibdev, 0, DMA_NONE);
	if (!kop) {
		ret = -ENOMEM;
		goto err;
	}
	reg.wr.opcode = IB_WR_REG_MR;
	reg.mr = mr;
	reg.key = mr->rkey;
	reg.access = access;
	ret = krc_kqp_post(kqp, kop, &reg.wr);
	if (!ret)
		ret = krc_kop_wait(kop, 5000);
	krc_kop_put(kop);
	if (ret)
		goto err;
	return mr;
err:
	pr_err("krcore: memory registration failed: %d\n", ret);
	ib_dereg_mr(mr);
	krc_obj_destroyed(KRC_OBJ_MR);
	return ERR_PTR(ret);
}
