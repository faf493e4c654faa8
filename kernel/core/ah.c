// SPDX-License-Identifier: GPL-2.0
/*
 * ah.c - address handles to other nodes' control QPs, made from their
 * cards. A send in flight holds a reference on the AH it uses, so the
 * owner (a peer, a datagram stream) may replace it at any time; the
 * last put destroys it, in process context (destroying an AH may sleep).
 */
#include <linux/etherdevice.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "core/core.h"

static void krc_ah_release(struct kref *ref)
{
	struct krc_ah *ah = container_of(ref, struct krc_ah, ref);

	rdma_destroy_ah(ah->ah, RDMA_DESTROY_AH_SLEEPABLE);
	kfree(ah);
	krc_obj_destroyed(KRC_OBJ_AH);
}

void krc_ah_get(struct krc_ah *ah)
{
	kref_get(&ah->ref);
}

/* Process context: destroying an AH may sleep. */
void krc_ah_put(struct krc_ah *ah)
{
	if (ah)
		kref_put(&ah->ref, krc_ah_release);
}

/* An AH over @port to the node of @card. Process context. */
struct krc_ah *krc_ah_create(struct krc_port *port, const struct krcore_card *card)
{
	struct krc_device *dev = port->dev;
	struct rdma_ah_attr attr = {};
	union ib_gid dgid;
	struct krc_ah *ah;
	int sgid_index;

	mutex_lock(&dev->lock);
	sgid_index = port->gid_index;
	mutex_unlock(&dev->lock);
	if (sgid_index < 0)
		return ERR_PTR(-ENODEV);

	ah = kzalloc(sizeof(*ah), GFP_KERNEL);
	if (!ah)
		return ERR_PTR(-ENOMEM);
	kref_init(&ah->ref);
	memcpy(ah->mac, card->mac, ETH_ALEN);
	memcpy(dgid.raw, card->gid, sizeof(dgid.raw));
	attr.type = rdma_ah_find_type(dev->ibdev, port->port_num);
	rdma_ah_set_port_num(&attr, port->port_num);
	rdma_ah_set_grh(&attr, &dgid, 0, sgid_index, 64, 0);
	/* Kernel callers on RoCE give the destination MAC themselves. */
	memcpy(attr.roce.dmac, card->mac, ETH_ALEN);
	ah->ah = rdma_create_ah(dev->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah->ah)) {
		int ret = PTR_ERR(ah->ah);

		kfree(ah);
		return ERR_PTR(ret);
	}
	krc_obj_created(KRC_OBJ_AH);
	return ah;
}
