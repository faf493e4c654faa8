// SPDX-License-Identifier: GPL-2.0
/*
 * kop.c - kernel-issued work requests (kops): a MetaServer lookup, a
 * probe, a fast registration, a datagram request's execution. Posted on
 * some QP, then waited for (krc_kop_wait) or completed by a callback
 * (done_fn). The completion may come after the waiter gave up, so a kop
 * is reference counted: the waiter's, and one for the posted request.
 */
#include <linux/slab.h>

#include "core/core.h"

struct krc_kop *krc_kop_alloc(struct ib_device *ibdev, size_t len,
			      enum dma_data_direction dir)
{
	struct krc_kop *kop = kzalloc(sizeof(*kop), GFP_KERNEL);

	if (!kop)
		return NULL;
	init_completion(&kop->done);
	refcount_set(&kop->ref, 1);
	kop->ibdev = ibdev;
	kop->status = -EINPROGRESS;
	if (len) {
		kop->buf = kzalloc(len, GFP_KERNEL);
		if (!kop->buf)
			goto err;
		kop->dma = ib_dma_map_single(ibdev, kop->buf, len, dir);
		if (ib_dma_mapping_error(ibdev, kop->dma)) {
			kfree(kop->buf);
			goto err;
		}
		kop->len = len;
		kop->dir = dir;
	}
	return kop;
err:
	kfree(kop);
	return NULL;
}

void krc_kop_put(struct krc_kop *kop)
{
	if (!refcount_dec_and_test(&kop->ref))
		return;
	if (kop->buf) {
		ib_dma_unmap_single(kop->ibdev, kop->dma, kop->len, kop->dir);
		kfree(kop->buf);
	}
	kfree(kop);
}

int krc_kop_wait(struct krc_kop *kop, unsigned long timeout_ms)
{
	if (!wait_for_completion_timeout(&kop->done,
					 msecs_to_jiffies(timeout_ms)))
		return -ETIMEDOUT;
	if (kop->buf)
		ib_dma_sync_single_for_cpu(kop->ibdev, kop->dma, kop->len,
					   kop->dir);
	if (kop->status < 0)
		return kop->status;
	return kop->status == IB_WC_SUCCESS ? 0 : -EIO;
}

/* A kop's request completed (any context): its waiter or callback. */
void krc_kop_complete(struct krc_kop *kop, struct ib_wc *wc)
{
	kop->status = wc->status;
	kop->byte_len = wc->byte_len;
	if (kop->done_fn)
		kop->done_fn(kop);
	else
		complete(&kop->done);
	krc_kop_put(kop);
}

/* ib_cqe done callback of kops posted on CQs that ib_core polls. */
void krc_kop_cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_kop *kop = container_of(wc->wr_cqe, struct krc_kop, cqe);

	krc_kop_complete(kop, wc);
}
