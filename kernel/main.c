// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - krcore.ko: a microsecond-scale RDMA control plane.
 *
 * Module load pre-initialises the context of every RDMA device (device.c)
 * and opens /dev/krcore (vq.c), whose every open is a virtual queue.
 */
#include <linux/module.h>
#include <linux/random.h>

#include "krcore.h"

char *krc_param_ibdev;
module_param_named(ibdev, krc_param_ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev,
		 "RDMA device whose port gives the node's card (default: first active RoCE port)");

int krc_param_gid_index = -1;
module_param_named(gid_index, krc_param_gid_index, int, 0444);
MODULE_PARM_DESC(gid_index,
		 "GID table index of the node's address (default -1: the RoCE v2 GID of the port's IPv4 address)");

uint krc_param_node_id;
module_param_named(node_id, krc_param_node_id, uint, 0444);
MODULE_PARM_DESC(node_id,
		 "Cluster-unique node id (default 0: the node's IPv4 address as a number)");

u64 krc_incarnation;

static int __init krc_init(void)
{
	int ret;

	/* A fresh, non-zero incarnation tells peers that this load is new. */
	do {
		krc_incarnation = get_random_u64();
	} while (!krc_incarnation);

	ret = krc_stats_init();
	if (ret)
		return ret;
	ret = krc_device_init();
	if (ret)
		goto err_stats;
	ret = krc_chardev_init();
	if (ret)
		goto err_device;
	pr_info("krcore: loaded, version %s, ABI %d, incarnation %016llx\n",
		KRC_VERSION, KRCORE_ABI_VERSION, krc_incarnation);
	return 0;

err_device:
	krc_device_exit();
err_stats:
	krc_stats_exit();
	return ret;
}

static void __exit krc_exit(void)
{
	krc_chardev_exit();
	krc_device_exit();
	krc_stats_exit();
	if (!krc_stats_report_leaks())
		pr_info("krcore: unloaded, every object freed\n");
}

module_init(krc_init);
module_exit(krc_exit);

MODULE_AUTHOR("krcore developers");
MODULE_DESCRIPTION("krcore: microsecond-scale RDMA control plane with virtual queues over shared QPs");
MODULE_LICENSE("GPL");
MODULE_VERSION(KRC_VERSION);
