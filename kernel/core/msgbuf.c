// SPDX-License-Identifier: GPL-2.0
/*
 * msgbuf.c - DMA-mapped buffers for the kernel's own SEND/RECV traffic:
 * the control UD QP and the MetaServer connections.
 */
#include <linux/slab.h>

#include "core/core.h"

int krc_msgbuf_alloc(struct ib_device *ibdev, struct krc_msgbuf *b, size_t len,
		     enum dma_data_direction dir,
		     void (*done)(struct ib_cq *cq, struct ib_wc *wc), void *ctx)
{
	b->cqe.done = done;
	b->ctx = ctx;
	b->len = len;
	b->dir = dir;
	b->priv = NULL;
	INIT_LIST_HEAD(&b->node);
	b->buf = kzalloc(len, GFP_KERNEL);
	if (!b->buf)
		return -ENOMEM;
	b->dma = ib_dma_map_single(ibdev, b->buf, len, dir);
	if (ib_dma_mapping_error(ibdev, b->dma)) {
		kfree(b->buf);
		b->buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

void krc_msgbuf_free(struct ib_device *ibdev, struct krc_msgbuf *b)
{
	if (!b->buf)
		return;
	ib_dma_unmap_single(ibdev, b->dma, b->len, b->dir);
	kfree(b->buf);
	b->buf = NULL;
}

int krc_msgbuf_post_recv(struct ib_qp *qp, struct krc_msgbuf *b)
{
	struct ib_sge sge = {
		.addr = b->dma,
		.length = b->len,
		.lkey = qp->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &b->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ib_dma_sync_single_for_device(qp->device, b->dma, b->len, b->dir);
	return ib_post_recv(qp, &wr, NULL);
}

/* Make a received buffer readable by the CPU. */
void krc_msgbuf_sync(struct ib_qp *qp, struct krc_msgbuf *b)
{
	ib_dma_sync_single_for_cpu(qp->device, b->dma, b->len, b->dir);
}

/* SEND the encoded @msg from @b over the connected @qp. */
int krc_msgbuf_send(struct ib_qp *qp, struct krc_msgbuf *b,
		    const struct krc_ctrl_msg *msg)
{
	struct ib_sge sge = {
		.addr = b->dma,
		.length = KRC_MSG_SIZE,
		.lkey = qp->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &b->cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};

	krc_msg_encode(msg, b->buf);
	ib_dma_sync_single_for_device(qp->device, b->dma, b->len, b->dir);
	return ib_post_send(qp, &wr, NULL);
}
