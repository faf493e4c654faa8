/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krcore.h - types shared by the files of krcore.ko.
 *
 * Object model:
 *   krc_device   one per RDMA device (ib_client context): PD and ports.
 *   krc_port     one per port: attributes, the RoCE v2 GID, netdev MAC.
 *   krc_vq       one per open of /dev/krcore (a virtual queue).
 * The node's address card describes the primary port (module parameter
 * ibdev, else the first active port with a RoCE v2 GID).
 */
#ifndef KRC_KRCORE_H
#define KRC_KRCORE_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/if_ether.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "../include/uapi/krcore.h"
#include "stats.h"

#define KRC_VERSION	"0.1.0"

struct krc_device;

struct krc_port {
	struct krc_device *dev;
	u32 port_num;
	/* Below: guarded by dev->lock, refreshed by krc_port_refresh(). */
	enum ib_port_state state;
	enum ib_mtu active_mtu;
	int gid_index;			/* -1: no usable GID */
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	char netdev[IFNAMSIZ];
};

struct krc_device {
	struct list_head list;		/* on krc_devices, under krc_devices_lock */
	struct kref ref;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_event_handler event_handler;
	struct work_struct refresh_work;
	struct mutex lock;		/* guards the fields of ports[] */
	bool removing;
	u32 nports;
	struct krc_port ports[];	/* ports[i].port_num = first port + i */
};

/* A virtual queue: one per open file of /dev/krcore. */
struct krc_vq {
	struct mutex lock;		/* serialises the VQ's requests */
	pid_t owner_tgid;
};

/* Module parameters (main.c). */
extern char *krc_param_ibdev;
extern int krc_param_gid_index;
extern uint krc_param_node_id;

/* The node: its card and primary port (device.c). */
extern u64 krc_incarnation;

/* device.c */
int krc_device_init(void);
void krc_device_exit(void);
void krc_device_put(struct krc_device *dev);
struct krc_port *krc_primary_get(void);	/* holds a device reference */
int krc_node_card(struct krcore_card *card);
int krc_port_info(u32 index, struct krcore_port_info *info);

/* vq.c */
int krc_chardev_init(void);
void krc_chardev_exit(void);

#endif /* KRC_KRCORE_H */
