// SPDX-License-Identifier: GPL-2.0
/*
 * node.c - this node, as the control plane sees it: started at module
 * load on the primary port (main.c), stopped at unload or when that
 * device goes away.
 *
 * Start: the card, the control UD QP, the kernel's own QP (core/kqp.c)
 * and the node page; then the layers above start theirs, and the node is
 * open. Teardown: closed first (the gate, below), the layers above let
 * go of what they hold, then stop undoes start.
 */
#include <linux/slab.h>

#include "control/control.h"
#include "card.h"

struct krc_node krc_node = {
	.lock = __MUTEX_INITIALIZER(krc_node.lock),
	.gate = __RWSEM_INITIALIZER(krc_node.gate),
};

/*
 * A VQ call that uses the device: -ENODEV when the node is down, else the
 * gate is held (for reading) until krc_node_leave(), so that the device
 * cannot go away under the call.
 */
int krc_node_enter(void)
{
	down_read(&krc_node.gate);
	if (READ_ONCE(krc_node.up))
		return 0;
	up_read(&krc_node.gate);
	return -ENODEV;
}

/* krc_node_enter() for work that must not wait for a teardown: -EAGAIN. */
int krc_node_try_enter(void)
{
	if (!down_read_trylock(&krc_node.gate))
		return -EAGAIN;
	if (READ_ONCE(krc_node.up))
		return 0;
	up_read(&krc_node.gate);
	return -ENODEV;
}

void krc_node_leave(void)
{
	up_read(&krc_node.gate);
}

struct ib_mr *krc_node_reg_mr(struct scatterlist *sg, int nents,
			      unsigned int page_size, int access, u64 iova)
{
	if (!krc_node.kqp)
		return ERR_PTR(-ENODEV);
	return krc_kqp_reg_mr(krc_node.kqp, sg, nents, page_size, access,
			      iova);
}

/*
 * The node area (common/names.h, KRC_NODE_AREA): our card, then the table
 * of the names our regions are published under (data/lmr_name_host.c), for
 * peers to READ (krctl probe, KRCORE_IOC_LMR_LOOKUP). Remote READ only:
 * nothing but this kernel writes it.
 */
#define KRC_NODE_AREA_ORDER	get_order(KRC_NODE_AREA)

static int krc_node_page_start(struct krc_node *node)
{
	struct ib_device *ibdev = node->dev->ibdev;
	struct scatterlist sg;
	struct ib_mr *mr;

	node->page = (void *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
					      KRC_NODE_AREA_ORDER);
	if (!node->page)
		return -ENOMEM;
	krc_card_encode(&node->card, node->page);
	sg_init_one(&sg, node->page, KRC_NODE_AREA);
	if (!ib_dma_map_sg(ibdev, &sg, 1, DMA_BIDIRECTIONAL)) {
		free_pages((unsigned long)node->page, KRC_NODE_AREA_ORDER);
		node->page = NULL;
		return -ENOMEM;
	}
	node->page_dma = sg_dma_address(&sg);
	mr = krc_node_reg_mr(&sg, 1, KRC_NODE_AREA, IB_ACCESS_REMOTE_READ,
			     node->page_dma);
	if (IS_ERR(mr)) {
		ib_dma_unmap_sg(ibdev, &sg, 1, DMA_BIDIRECTIONAL);
		free_pages((unsigned long)node->page, KRC_NODE_AREA_ORDER);
		node->page = NULL;
		return PTR_ERR(mr);
	}
	node->page_mr = mr;
	return 0;
}

static void krc_node_page_stop(struct krc_node *node)
{
	struct scatterlist sg;

	if (node->page_mr) {
		ib_dereg_mr(node->page_mr);
		krc_obj_destroyed(KRC_OBJ_MR);
		node->page_mr = NULL;
	}
	if (node->page) {
		sg_init_one(&sg, node->page, KRC_NODE_AREA);
		sg_dma_address(&sg) = node->page_dma;
		ib_dma_unmap_sg(node->dev->ibdev, &sg, 1, DMA_BIDIRECTIONAL);
		free_pages((unsigned long)node->page, KRC_NODE_AREA_ORDER);
		node->page = NULL;
	}
}

int krc_node_start(struct krc_node *node)
{
	struct krc_port *port;
	int ret;

	lockdep_assert_held(&node->lock);
	port = krc_primary_get();
	if (!port)
		return -ENODEV;
	/* The gate is open while the node is down: calls see ENODEV. */
	node->dev = port->dev;
	node->port = port;
	ret = krc_port_card(&node->card);
	if (ret)
		return ret;
	ret = krc_ctrl_start(node);
	if (ret)
		return ret;
	node->kqp = krc_kqp_create(port);
	if (IS_ERR(node->kqp)) {
		ret = PTR_ERR(node->kqp);
		node->kqp = NULL;
		return ret;
	}
	return krc_node_page_start(node);
}

void krc_node_open(struct krc_node *node)
{
	lockdep_assert_held(&node->lock);
	/* Let the handshake and VQ calls see the node from now on. */
	WRITE_ONCE(node->up, true);
}

/* Down, and no VQ call using the device is in or gets in. */
void krc_node_close(struct krc_node *node)
{
	lockdep_assert_held(&node->lock);
	WRITE_ONCE(node->up, false);
	down_write(&node->gate);
}

/*
 * Undo krc_node_start() (all of it or what of it was done) once the
 * layers above have let go, and open the gate that krc_node_close()
 * took: calls fail with ENODEV from then on.
 */
void krc_node_stop(struct krc_node *node)
{
	lockdep_assert_held(&node->lock);
	lockdep_assert_held_write(&node->gate);
	krc_node_page_stop(node);
	krc_kqp_destroy(node->kqp);
	node->kqp = NULL;
	krc_ctrl_stop(node);
	/* The control QP's last completions and rx work are done. */
	flush_workqueue(krc_wq);
	if (node->dev)
		krc_device_put(node->dev);
	node->dev = NULL;
	node->port = NULL;
	up_write(&node->gate);
}
