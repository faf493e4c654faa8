// SPDX-License-Identifier: GPL-2.0
/*
 * device.c - the ib_client of krcore: per RDMA device, the context that
 * user-space verbs would build at every process start (PD, port attributes,
 * the RoCE v2 GID of the node's IP, the netdev MAC), built once at load.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "core/core.h"
#include "card.h"

static struct ib_client krc_client;
static const struct krc_device_hooks *krc_hooks;
static LIST_HEAD(krc_devices);
static DEFINE_MUTEX(krc_devices_lock);

static void krc_device_release(struct kref *ref)
{
	struct krc_device *dev = container_of(ref, struct krc_device, ref);

	ib_dealloc_pd(dev->pd);
	krc_obj_destroyed(KRC_OBJ_PD);
	kfree(dev);
	krc_obj_destroyed(KRC_OBJ_DEVICE);
}

void krc_device_put(struct krc_device *dev)
{
	kref_put(&dev->ref, krc_device_release);
}

/*
 * Choose the GID that names this node on @port: the RoCE v2 GID of an IPv4
 * address first, else a RoCE v2 IPv6 GID that is not link-local. Takes a
 * reference on the returned attribute; NULL if none.
 */
static const struct ib_gid_attr *krc_pick_gid(struct krc_port *port,
					      int tbl_len)
{
	struct ib_device *ibdev = port->dev->ibdev;
	const struct ib_gid_attr *best = NULL, *attr;
	int i;

	if (krc_param_gid_index >= 0) {
		attr = rdma_get_gid_attr(ibdev, port->port_num, krc_param_gid_index);
		return IS_ERR(attr) ? NULL : attr;
	}
	for (i = 0; i < tbl_len; i++) {
		attr = rdma_get_gid_attr(ibdev, port->port_num, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
		    rdma_link_local_addr((struct in6_addr *)attr->gid.raw)) {
			rdma_put_gid_attr(attr);
			continue;
		}
		if (ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw)) {
			if (best)
				rdma_put_gid_attr(best);
			return attr;
		}
		if (!best)
			best = attr;
		else
			rdma_put_gid_attr(attr);
	}
	return best;
}

/* Re-read the attributes, GID and MAC of @port. Caller holds dev->lock. */
static void krc_port_refresh(struct krc_port *port)
{
	struct ib_device *ibdev = port->dev->ibdev;
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	struct net_device *ndev;

	lockdep_assert_held(&port->dev->lock);
	port->gid_index = -1;
	memset(&port->gid, 0, sizeof(port->gid));
	eth_zero_addr(port->mac);
	port->netdev[0] = '\0';
	if (ib_query_port(ibdev, port->port_num, &pattr)) {
		port->state = IB_PORT_NOP;
		return;
	}
	port->state = pattr.state;
	port->active_mtu = pattr.active_mtu;
	if (!rdma_protocol_roce(ibdev, port->port_num))
		return;

	attr = krc_pick_gid(port, pattr.gid_tbl_len);
	if (!attr)
		return;
	port->gid_index = attr->index;
	port->gid = attr->gid;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (!IS_ERR(ndev)) {
		ether_addr_copy(port->mac, ndev->dev_addr);
		strscpy(port->netdev, ndev->name, sizeof(port->netdev));
	}
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	krc_event(KRC_EV_PORT_REFRESH);
}

static void krc_device_refresh(struct krc_device *dev)
{
	u32 i;

	mutex_lock(&dev->lock);
	for (i = 0; i < dev->nports; i++)
		krc_port_refresh(&dev->ports[i]);
	mutex_unlock(&dev->lock);
}

static void krc_refresh_work(struct work_struct *work)
{
	krc_device_refresh(container_of(work, struct krc_device, refresh_work));
	krc_hooks->kick();
}

static void krc_ib_event(struct ib_event_handler *handler,
			 struct ib_event *event)
{
	struct krc_device *dev = container_of(handler, struct krc_device,
					      event_handler);

	switch (event->event) {
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_GID_CHANGE:
	case IB_EVENT_LID_CHANGE:
		schedule_work(&dev->refresh_work);
		break;
	default:
		break;
	}
}

static int krc_add_one(struct ib_device *ibdev)
{
	u32 first = rdma_start_port(ibdev), last = rdma_end_port(ibdev);
	struct krc_device *dev;
	bool roce = false;
	u32 p;
	int ret;

	rdma_for_each_port(ibdev, p)
		roce |= rdma_protocol_roce(ibdev, p);
	if (!roce)
		return -EOPNOTSUPP;

	dev = kzalloc(struct_size(dev, ports, last - first + 1), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	krc_obj_created(KRC_OBJ_DEVICE);
	kref_init(&dev->ref);
	mutex_init(&dev->lock);
	INIT_WORK(&dev->refresh_work, krc_refresh_work);
	dev->ibdev = ibdev;
	dev->nports = last - first + 1;
	for (p = 0; p < dev->nports; p++) {
		dev->ports[p].dev = dev;
		dev->ports[p].port_num = first + p;
		dev->ports[p].gid_index = -1;
	}

	dev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(dev->pd)) {
		ret = PTR_ERR(dev->pd);
		pr_err("krcore: %s: cannot allocate a PD: %d\n",
		       dev_name(&ibdev->dev), ret);
		kfree(dev);
		krc_obj_destroyed(KRC_OBJ_DEVICE);
		return ret;
	}
	krc_obj_created(KRC_OBJ_PD);
	krc_device_refresh(dev);

	INIT_IB_EVENT_HANDLER(&dev->event_handler, ibdev, krc_ib_event);
	ib_register_event_handler(&dev->event_handler);

	mutex_lock(&krc_devices_lock);
	list_add_tail(&dev->list, &krc_devices);
	mutex_unlock(&krc_devices_lock);
	ib_set_client_data(ibdev, &krc_client, dev);
	krc_hooks->kick();

	for (p = 0; p < dev->nports; p++) {
		struct krc_port *port = &dev->ports[p];

		pr_info("krcore: %s port %u: %s, gid index %d %pI6 (%s %pM)\n",
			dev_name(&ibdev->dev), port->port_num,
			port->state == IB_PORT_ACTIVE ? "active" : "not active",
			port->gid_index,
			port->gid.raw, port->netdev, port->mac);
	}
	return 0;
}

static void krc_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct krc_device *dev = client_data;

	mutex_lock(&krc_devices_lock);
	list_del(&dev->list);
	dev->removing = true;
	mutex_unlock(&krc_devices_lock);

	ib_unregister_event_handler(&dev->event_handler);
	cancel_work_sync(&dev->refresh_work);
	/* The control plane lives on it: stop it (and its QPs) first. */
	krc_hooks->removed(dev);
	/*
	 * Users hold references only for the duration of a call; once the
	 * device is off the list no new reference can be taken.
	 */
	krc_device_put(dev);
	pr_info("krcore: %s detached\n", dev_name(&ibdev->dev));
}

static struct ib_client krc_client = {
	.name = "krcore",
	.add = krc_add_one,
	.remove = krc_remove_one,
};

static bool krc_port_usable(struct krc_port *port)
{
	return port->state == IB_PORT_ACTIVE && port->gid_index >= 0;
}

/*
 * The primary port: on device @krc_param_ibdev if set, the first active port
 * with a usable GID. A port still without GID (the node's IP was set after
 * the module loaded) is refreshed first. Returns the port with a reference
 * on its device, or NULL.
 */
struct krc_port *krc_primary_get(void)
{
	struct krc_device *dev;
	u32 i;

	mutex_lock(&krc_devices_lock);
	list_for_each_entry(dev, &krc_devices, list) {
		if (krc_param_ibdev && *krc_param_ibdev &&
		    strcmp(dev_name(&dev->ibdev->dev), krc_param_ibdev))
			continue;
		mutex_lock(&dev->lock);
		for (i = 0; i < dev->nports; i++) {
			struct krc_port *port = &dev->ports[i];

			if (!krc_port_usable(port))
				krc_port_refresh(port);
			if (krc_port_usable(port)) {
				mutex_unlock(&dev->lock);
				kref_get(&dev->ref);
				mutex_unlock(&krc_devices_lock);
				return port;
			}
		}
		mutex_unlock(&dev->lock);
	}
	mutex_unlock(&krc_devices_lock);
	return NULL;
}

/* The card of this node, from its primary port (no control QP yet). */
int krc_port_card(struct krcore_card *card)
{
	struct krc_port *port = krc_primary_get();
	struct krc_device *dev;

	if (!port)
		return -ENODEV;
	dev = port->dev;
	memset(card, 0, sizeof(*card));
	mutex_lock(&dev->lock);
	memcpy(card->gid, port->gid.raw, sizeof(card->gid));
	ether_addr_copy(card->mac, port->mac);
	card->port_num = port->port_num;
	card->active_mtu = port->active_mtu;
	mutex_unlock(&dev->lock);

	card->card_version = KRCORE_CARD_VERSION;
	card->flags = KRCORE_CARD_F_ROCE_V2;
	if (krc_gid_is_v4mapped(card->gid))
		card->flags |= KRCORE_CARD_F_IPV4;
	card->node_id = krc_param_node_id ? krc_param_node_id :
					    krc_gid_node_id(card->gid);
	card->incarnation = krc_incarnation;
	krc_device_put(dev);
	return 0;
}

int krc_port_info(u32 index, struct krcore_port_info *info)
{
	struct krc_port *primary = krc_primary_get();
	struct krc_device *dev;
	int ret = -ENOENT;
	u32 n = 0, i;

	mutex_lock(&krc_devices_lock);
	list_for_each_entry(dev, &krc_devices, list) {
		if (index >= n + dev->nports) {
			n += dev->nports;
			continue;
		}
		memset(info, 0, sizeof(*info));
		info->index = index;
		mutex_lock(&dev->lock);
		i = index - n;
		strscpy(info->ibdev, dev_name(&dev->ibdev->dev), sizeof(info->ibdev));
		strscpy(info->netdev, dev->ports[i].netdev, sizeof(info->netdev));
		info->port_num = dev->ports[i].port_num;
		info->state = dev->ports[i].state;
		info->active_mtu = dev->ports[i].active_mtu;
		info->gid_index = dev->ports[i].gid_index;
		memcpy(info->gid, dev->ports[i].gid.raw, sizeof(info->gid));
		ether_addr_copy(info->mac, dev->ports[i].mac);
		if (info->state == IB_PORT_ACTIVE)
			info->flags |= KRCORE_PORT_F_ACTIVE;
		if (info->gid_index >= 0)
			info->flags |= KRCORE_PORT_F_HAS_GID;
		if (&dev->ports[i] == primary)
			info->flags |= KRCORE_PORT_F_PRIMARY;
		mutex_unlock(&dev->lock);
		info->max_qp = dev->ibdev->attrs.max_qp;
		info->max_qp_wr = dev->ibdev->attrs.max_qp_wr;
		info->max_cqe = dev->ibdev->attrs.max_cqe;
		info->max_sge = dev->ibdev->attrs.max_send_sge;
		ret = 0;
		break;
	}
	mutex_unlock(&krc_devices_lock);
	if (primary)
		krc_device_put(primary->dev);
	return ret;
}

/* Before krc_device_init(): who hears of devices coming and going. */
void krc_device_set_hooks(const struct krc_device_hooks *hooks)
{
	krc_hooks = hooks;
}

int krc_device_init(void)
{
	int ret = ib_register_client(&krc_client);

	if (ret)
		pr_err("krcore: ib_register_client failed: %d\n", ret);
	return ret;
}

void krc_device_exit(void)
{
	ib_unregister_client(&krc_client);
}
