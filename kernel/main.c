// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - krcore.ko: a microsecond-scale RDMA control plane.
 *
 * The top of the module: it loads and unloads the four layers and starts
 * and stops the node across them, calling down into each in order:
 *
 *   data/     /dev/krcore and its VQs, registrations, requests, datagrams
 *   conn/     pooled RC connections to peers, handshakes, the RC cap
 *   control/  this node: card, control UD QP, cluster key, MetaServer
 *   core/     devices and ports, parameters, counters, kernel requests
 *
 * Each layer uses only those below it; a lower one reaches up only
 * through the handlers an upper one registered at load (the data layer's
 * connection ops, the handlers of the control QP, a MetaServer scan's
 * card handler) and through the device hooks this file registers.
 *
 * The node starts when the module loads, or later when a device or an
 * address appears (kick); it stops at unload or when its device goes.
 */
#include <linux/module.h>

#include "data/data.h"

static bool krc_node_stopped;	/* module unload under way */
static DEFINE_SPINLOCK(krc_kick_lock);	/* stopped against kicks */

/*
 * Stop the node and let go of the device. VQ calls using the device are
 * waited for (the gate), every connection is killed (their requests
 * complete), then every VQ and every user registration lets go of the
 * device: calls on them fail with ENODEV from then on.
 */
static void krc_teardown(struct krc_node *node)
{
	krc_node_close(node);
	krc_hs_exit();
	krc_rc_exit();
	if (node->ctrl)
		krc_hs_goodbye_all();
	krc_lmr_stop();
	krc_meta_stop(node);
	krc_meta_host_stop(node);
	krc_key_forget();
	krc_dg_exit();
	krc_peers_drop_all();
	krc_dg_exec_stop();
	krc_spares_drain();
	krc_loopback_stop();
	/* Connections and peers freed in the background, then the AHs. */
	flush_workqueue(krc_wq);
	krc_vqs_disassociate();
	krc_dp_cache_close();
	krc_procs_disassociate();
	flush_workqueue(krc_wq);
	krc_recv_stop(node);
	krc_node_stop(node);
}

static int krc_start(struct krc_node *node)
{
	int ret;

	ret = krc_node_start(node);
	if (!ret)
		ret = krc_recv_start(node);
	if (ret)
		return ret;
	krc_node_open(node);
	krc_dp_cache_open();
	krc_lmr_start();
	krc_spares_fill();
	ret = krc_loopback_start();
	if (!ret)
		ret = krc_dg_start();
	if (ret)
		return ret;
	/* Without it the node runs, but joins no MetaServer (key.c). */
	krc_key_load();
	if (krc_param_meta_host) {
		ret = krc_meta_host_start(node);
		if (ret)
			return ret;
	}
	return krc_meta_start(node);
}

static int krc_up(void)
{
	struct krc_node *node = &krc_node;
	int ret;

	mutex_lock(&node->lock);
	if (node->up || krc_node_stopped) {
		mutex_unlock(&node->lock);
		return 0;
	}
	ret = krc_start(node);
	if (ret == -ENODEV && !node->dev) {
		mutex_unlock(&node->lock);
		return ret;	/* no port: nothing was started */
	}
	if (ret) {
		pr_err("krcore: control plane did not start: %d\n", ret);
		krc_teardown(node);
	} else {
		pr_info("krcore: node %pI6 up: node id %u, control QP %u, %d spare QPs\n",
			node->card.gid, node->card.node_id, node->card.ud_qpn,
			krc_spares_count());
	}
	mutex_unlock(&node->lock);
	return ret;
}

static void krc_up_work(struct work_struct *work)
{
	krc_up();
}

static DECLARE_WORK(krc_kick_work, krc_up_work);

/*
 * A device or an address appeared: the node may start now. Not on
 * krc_wq: starting takes node->lock, and a teardown under node->lock
 * flushes krc_wq (found by lockdep on the debug kernel). Any context.
 */
static void krc_kick(void)
{
	unsigned long flags;

	spin_lock_irqsave(&krc_kick_lock, flags);
	if (!READ_ONCE(krc_node.up) && !krc_node_stopped)
		queue_work(system_unbound_wq, &krc_kick_work);
	spin_unlock_irqrestore(&krc_kick_lock, flags);
}

/* @dev is going away: if it carries the node, stop it. */
static void krc_removed(struct krc_device *dev)
{
	struct krc_node *node = &krc_node;

	mutex_lock(&node->lock);
	if (node->dev == dev) {
		pr_warn("krcore: primary device removed, control plane stopped\n");
		krc_teardown(node);
	}
	mutex_unlock(&node->lock);
}

static const struct krc_device_hooks krc_hooks = {
	.kick = krc_kick,
	.removed = krc_removed,
};

static void krc_down(void)
{
	struct krc_node *node = &krc_node;

	spin_lock_irq(&krc_kick_lock);
	krc_node_stopped = true;	/* no kick queues the work from now on */
	spin_unlock_irq(&krc_kick_lock);
	cancel_work_sync(&krc_kick_work);
	mutex_lock(&node->lock);
	if (node->dev)
		krc_teardown(node);
	mutex_unlock(&node->lock);
}

/* The control plane could not start at load: say why, once. */
static void krc_warn_no_port(void)
{
	if (krc_param_ibdev && *krc_param_ibdev)
		pr_warn("krcore: ibdev=%s: no such RDMA device with an active RoCE port and address: /dev/krcore answers ENODEV until it appears\n",
			krc_param_ibdev);
	else
		pr_warn("krcore: no active RoCE port with an address: /dev/krcore answers ENODEV until one appears\n");
}

static int __init krc_init(void)
{
	int ret;

	ret = krc_core_init();
	if (ret)
		return ret;
	/* Upward handlers first: conn/ with control/, data/ with both. */
	ret = krc_conn_layer_init();
	if (ret)
		goto err_core;
	krc_data_init();
	krc_device_set_hooks(&krc_hooks);
	ret = krc_device_init();
	if (ret)
		goto err_conn;
	/* No RDMA port yet is not fatal: /dev/krcore answers ENODEV. */
	if (krc_up() == -ENODEV)
		krc_warn_no_port();
	ret = krc_chardev_init();
	if (ret)
		goto err_device;
	pr_info("krcore: loaded, version %s, ABI %d, incarnation %016llx\n",
		KRC_VERSION, KRCORE_ABI_VERSION, krc_incarnation);
	return 0;

err_device:
	krc_down();
	krc_device_exit();
err_conn:
	krc_conn_layer_exit();
err_core:
	krc_core_exit();
	krc_stats_exit();
	return ret;
}

static void __exit krc_exit(void)
{
	krc_chardev_exit();
	krc_down();
	krc_device_exit();
	krc_conn_layer_exit();
	/* The last VQs' closes may have run in the background. */
	flush_workqueue(krc_wq);
	krc_procs_idle_drain();
	krc_core_exit();
	if (!krc_stats_report_leaks())
		pr_info("krcore: unloaded, every object freed\n");
	krc_stats_exit();
}

module_init(krc_init);
module_exit(krc_exit);

MODULE_AUTHOR("krcore developers");
MODULE_DESCRIPTION("krcore: microsecond-scale RDMA control plane with virtual queues over shared QPs");
MODULE_LICENSE("GPL");
MODULE_VERSION(KRC_VERSION);
