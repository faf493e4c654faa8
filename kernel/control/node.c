// SPDX-License-Identifier: GPL-2.0
/*
 * node.c - this node's control plane: started at module load on the
 * primary port, stopped at unload or when that device goes away.
 *
 * Start order: card, control UD QP, spare QPs, the loopback connection
 * (a QP connected to itself: the node's own peer, and the QP on which
 * kernel memory is registered), the node page, the MetaServer table if
 * this node hosts it, the MetaServer client. Stop is the reverse, after
 * saying goodbye to every known node.
 */
#include <linux/slab.h>

#include "krcore.h"
#include "card.h"

struct krc_node krc_node = {
	.lock = __MUTEX_INITIALIZER(krc_node.lock),
	.exec_lock = __MUTEX_INITIALIZER(krc_node.exec_lock),
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

void krc_node_leave(void)
{
	up_read(&krc_node.gate);
}

static bool krc_node_stopped;	/* module unload under way */
static DEFINE_SPINLOCK(krc_node_kick_lock);	/* stopped against kicks */

static void krc_node_start_work(struct work_struct *work)
{
	krc_node_start();
}

static DECLARE_WORK(krc_node_kick_work, krc_node_start_work);

/*
 * A device or an address appeared: the control plane may start now.
 * Not on krc_wq: starting takes node->lock, and a teardown under
 * node->lock flushes krc_wq (found by lockdep on the debug kernel).
 * Any context.
 */
void krc_node_kick(void)
{
	unsigned long flags;

	spin_lock_irqsave(&krc_node_kick_lock, flags);
	if (!READ_ONCE(krc_node.up) && !krc_node_stopped)
		queue_work(system_unbound_wq, &krc_node_kick_work);
	spin_unlock_irqrestore(&krc_node_kick_lock, flags);
}

/*
 * Register kernel memory described by the DMA-mapped @sg (each entry
 * @page_size long and aligned, but the last) with @access, by a fast
 * registration work request on the loopback connection.
 */
struct ib_mr *krc_node_reg_mr(struct scatterlist *sg, int nents,
			      unsigned int page_size, int access)
{
	struct krc_node *node = &krc_node;
	struct ib_reg_wr reg = {};
	struct krc_kop *kop;
	struct ib_mr *mr;
	int n, ret;

	mr = ib_alloc_mr(node->dev->pd, IB_MR_TYPE_MEM_REG, nents);
	if (IS_ERR(mr))
		return mr;
	krc_obj_created(KRC_OBJ_MR);
	n = ib_map_mr_sg(mr, sg, nents, NULL, page_size);
	if (n != nents) {
		ret = n < 0 ? n : -EINVAL;
		goto err;
	}
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	kop = krc_kop_alloc(node->dev->ibdev, 0, DMA_NONE);
	if (!kop) {
		ret = -ENOMEM;
		goto err;
	}
	reg.wr.opcode = IB_WR_REG_MR;
	reg.mr = mr;
	reg.key = mr->rkey;
	reg.access = access;
	ret = krc_conn_post_kop(node->self, kop, &reg.wr);
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

/* A QP of this node connected to itself. */
static struct krc_conn *krc_node_loopback(struct krc_node *node)
{
	struct krc_conn *conn;
	int ret;

	conn = krc_conn_create();
	if (IS_ERR(conn))
		return conn;
	ret = krc_conn_rtr_rts(conn, &node->card, conn->qpn, conn->psn);
	if (ret) {
		krc_conn_kill(conn);
		krc_conn_put(conn);
		return ERR_PTR(ret);
	}
	conn->state = KRC_CONN_READY;
	conn->remote_incarnation = krc_incarnation;
	conn->initiator = true;
	if (node->page_mr) {
		conn->probe_addr = node->page_mr->iova;
		conn->probe_rkey = node->page_mr->rkey;
		conn->probe_len = KRCORE_CARD_SIZE;
	}
	return conn;
}

/*
 * A new loopback connection in the pool of the node's own peer, for VQs
 * that connect to this node (their first one, or after one of them broke
 * the last one). Returns it with a reference for the caller. Process
 * context; the node is up.
 */
struct krc_conn *krc_node_loopback_connect(void)
{
	struct krc_node *node = &krc_node;
	struct krc_conn *conn;
	int ret;

	if (!node->self_peer)
		return ERR_PTR(-ENODEV);
	conn = krc_node_loopback(node);
	if (IS_ERR(conn))
		return conn;
	kref_get(&conn->ref);
	ret = krc_peer_attach(node->self_peer, conn);
	if (ret) {
		krc_conn_kill(conn);
		krc_conn_put(conn);
		krc_conn_put(conn);
		return ERR_PTR(ret);
	}
	krc_event(KRC_EV_LOOPBACK_CREATED);
	return conn;
}

/*
 * The executor of datagram requests (dgram.c): a loopback QP of the
 * kernel's, in no pool, on which no process posts. It fails only if the
 * RNIC refuses a request the software check let through; then the next
 * request gets a new one. Returns it with a reference. Process context.
 */
struct krc_conn *krc_node_exec_conn(void)
{
	struct krc_node *node = &krc_node;
	struct krc_conn *conn, *old = NULL;

	mutex_lock(&node->exec_lock);
	conn = node->exec;
	if (conn && krc_conn_usable(conn)) {
		kref_get(&conn->ref);
		mutex_unlock(&node->exec_lock);
		return conn;
	}
	if (!READ_ONCE(node->up)) {
		mutex_unlock(&node->exec_lock);
		return ERR_PTR(-ENODEV);
	}
	old = conn;
	conn = krc_node_loopback(node);
	if (!IS_ERR(conn)) {
		node->exec = conn;
		kref_get(&conn->ref);
	} else {
		node->exec = NULL;
	}
	mutex_unlock(&node->exec_lock);
	/* Its recovery (which holds its own reference) destroys it. */
	krc_conn_put(old);
	return conn;
}

static void krc_node_exec_stop(struct krc_node *node)
{
	struct krc_conn *conn;

	mutex_lock(&node->exec_lock);
	conn = node->exec;
	node->exec = NULL;
	mutex_unlock(&node->exec_lock);
	if (conn) {
		krc_conn_kill(conn);
		krc_conn_put(conn);
	}
}

/*
 * The kernel's own loopback QP (node->self): fast registrations and
 * MetaServer lookups on the host ride on it. It is in no pool: no VQ
 * ever posts on it, so no process can break it.
 */
static int krc_node_self_start(struct krc_node *node)
{
	struct krc_conn *conn;
	struct krc_peer *peer;

	conn = krc_node_loopback(node);
	if (IS_ERR(conn))
		return PTR_ERR(conn);
	node->self = conn;
	peer = krc_peer_get(node->card.gid, true);
	if (IS_ERR(peer))
		return PTR_ERR(peer);
	krc_peer_set_card(peer, &node->card);
	node->self_peer = peer;
	return 0;
}

/* The node page: our card, for peers to READ (krctl probe). */
static int krc_node_page_start(struct krc_node *node)
{
	struct ib_device *ibdev = node->dev->ibdev;
	struct scatterlist sg;
	struct ib_mr *mr;

	node->page = (void *)get_zeroed_page(GFP_KERNEL);
	if (!node->page)
		return -ENOMEM;
	krc_card_encode(&node->card, node->page);
	sg_init_one(&sg, node->page, PAGE_SIZE);
	if (!ib_dma_map_sg(ibdev, &sg, 1, DMA_BIDIRECTIONAL)) {
		free_page((unsigned long)node->page);
		node->page = NULL;
		return -ENOMEM;
	}
	node->page_dma = sg_dma_address(&sg);
	mr = krc_node_reg_mr(&sg, 1, PAGE_SIZE, IB_ACCESS_REMOTE_READ);
	if (IS_ERR(mr)) {
		ib_dma_unmap_sg(ibdev, &sg, 1, DMA_BIDIRECTIONAL);
		free_page((unsigned long)node->page);
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
		sg_init_one(&sg, node->page, PAGE_SIZE);
		sg_dma_address(&sg) = node->page_dma;
		ib_dma_unmap_sg(node->dev->ibdev, &sg, 1, DMA_BIDIRECTIONAL);
		free_page((unsigned long)node->page);
		node->page = NULL;
	}
}

/*
 * Stop the control plane and let go of the device. VQ calls using the
 * device are waited for (the gate), every connection is killed (their
 * requests complete), then every VQ and every user registration lets go
 * of the device: calls on them fail with ENODEV from then on.
 */
static void krc_node_teardown(struct krc_node *node)
{
	WRITE_ONCE(node->up, false);
	down_write(&node->gate);
	krc_hs_exit();
	krc_rc_exit();
	if (node->ctrl)
		krc_hs_goodbye_all();
	krc_meta_stop(node);
	krc_meta_host_stop(node);
	krc_key_forget();
	krc_dg_exit();
	krc_peers_drop_all();
	krc_node_exec_stop(node);
	krc_spares_drain();
	krc_node_page_stop(node);
	if (node->self) {
		krc_conn_kill(node->self);
		krc_conn_put(node->self);
		node->self = NULL;
	}
	krc_peer_put(node->self_peer);
	node->self_peer = NULL;
	/* Connections and peers freed in the background, then the AHs. */
	flush_workqueue(krc_wq);
	krc_vqs_disassociate();
	krc_procs_disassociate();
	flush_workqueue(krc_wq);
	krc_recv_stop(node);
	krc_ctrl_stop(node);
	flush_workqueue(krc_wq);
	krc_device_put(node->dev);
	node->dev = NULL;
	node->port = NULL;
	up_write(&node->gate);
}

int krc_node_start(void)
{
	struct krc_node *node = &krc_node;
	struct krc_port *port;
	struct krc_conn *conn;
	int ret;

	mutex_lock(&node->lock);
	if (node->up || krc_node_stopped) {
		mutex_unlock(&node->lock);
		return 0;
	}
	port = krc_primary_get();
	if (!port) {
		mutex_unlock(&node->lock);
		return -ENODEV;
	}
	node->dev = port->dev;
	node->port = port;
	ret = krc_node_card(&node->card);
	if (ret)
		goto err;
	ret = krc_ctrl_start(node);
	if (ret)
		goto err;
	ret = krc_recv_start(node);
	if (ret)
		goto err;
	/* Let the handshake see traffic from now on. */
	WRITE_ONCE(node->up, true);
	krc_spares_fill();
	ret = krc_node_self_start(node);
	if (ret)
		goto err;
	ret = krc_node_page_start(node);
	if (ret)
		goto err;
	/* The first loopback connection of the pool (VQs to this node). */
	conn = krc_node_loopback_connect();
	if (IS_ERR(conn)) {
		ret = PTR_ERR(conn);
		goto err;
	}
	krc_conn_put(conn);
	conn = krc_node_exec_conn();
	if (IS_ERR(conn)) {
		ret = PTR_ERR(conn);
		goto err;
	}
	krc_conn_put(conn);
	/* Without it the node runs, but joins no MetaServer (key.c). */
	krc_key_load();
	if (krc_param_meta_host) {
		ret = krc_meta_host_start(node);
		if (ret)
			goto err;
	}
	ret = krc_meta_start(node);
	if (ret)
		goto err;
	mutex_unlock(&node->lock);
	pr_info("krcore: node %pI6 up: node id %u, control QP %u, %d spare QPs\n",
		node->card.gid, node->card.node_id, node->card.ud_qpn,
		krc_spares_count());
	return 0;
err:
	pr_err("krcore: control plane did not start: %d\n", ret);
	krc_node_teardown(node);
	mutex_unlock(&node->lock);
	return ret;
}

void krc_node_stop(void)
{
	struct krc_node *node = &krc_node;

	spin_lock_irq(&krc_node_kick_lock);
	krc_node_stopped = true;	/* no kick queues the work from now on */
	spin_unlock_irq(&krc_node_kick_lock);
	cancel_work_sync(&krc_node_kick_work);
	mutex_lock(&node->lock);
	if (node->dev)
		krc_node_teardown(node);
	mutex_unlock(&node->lock);
}

/* @dev is going away: if it carries the control plane, stop it. */
void krc_node_device_removed(struct krc_device *dev)
{
	struct krc_node *node = &krc_node;

	mutex_lock(&node->lock);
	if (node->dev == dev) {
		pr_warn("krcore: primary device removed, control plane stopped\n");
		krc_node_teardown(node);
	}
	mutex_unlock(&node->lock);
}

void krc_node_fill_info(struct krcore_node_info *info)
{
	struct krc_node *node = &krc_node;

	memset(info, 0, sizeof(*info));
	mutex_lock(&node->lock);
	if (node->up) {
		info->flags |= KRCORE_NODE_F_UP;
		info->card = node->card;
		info->spares = krc_spares_count();
		krc_peers_count(&info->peers, &info->conns);
		krc_meta_info(info);
		krc_meta_host_info(info);
	}
	info->pool_size = krc_param_pool_size;
	mutex_unlock(&node->lock);
}
