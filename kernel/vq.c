// SPDX-License-Identifier: GPL-2.0
/*
 * vq.c - /dev/krcore: every open is a virtual queue (VQ); requests are
 * ioctl()s on its file descriptor, numbered by include/uapi/krcore.h.
 */
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "krcore.h"
#include "card.h"

static int krc_vq_open(struct inode *inode, struct file *file)
{
	struct krc_vq *vq = kzalloc(sizeof(*vq), GFP_KERNEL);

	if (!vq)
		return -ENOMEM;
	mutex_init(&vq->lock);
	vq->owner_tgid = task_tgid_nr(current);
	file->private_data = vq;
	krc_obj_created(KRC_OBJ_VQ);
	return 0;
}

static void krc_vq_unbind(struct krc_vq *vq)
{
	if (vq->conn) {
		atomic_dec(&vq->conn->nvqs);
		krc_conn_put(vq->conn);
		vq->conn = NULL;
	}
	krc_peer_put(vq->peer);
	vq->peer = NULL;
}

static int krc_vq_release(struct inode *inode, struct file *file)
{
	struct krc_vq *vq = file->private_data;

	krc_vq_unbind(vq);
	mutex_destroy(&vq->lock);
	kfree(vq);
	krc_obj_destroyed(KRC_OBJ_VQ);
	return 0;
}

static long krc_ioc_version(void __user *uarg)
{
	struct krcore_version v = {
		.abi_version = KRCORE_ABI_VERSION,
	};

	strscpy(v.module_version, KRC_VERSION, sizeof(v.module_version));
	return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long krc_ioc_query_card(void __user *uarg)
{
	struct krcore_card card;
	int ret = -ENODEV;

	/* The complete card (control QP included) once the node is up. */
	mutex_lock(&krc_node.lock);
	if (krc_node.up) {
		card = krc_node.card;
		ret = 0;
	}
	mutex_unlock(&krc_node.lock);
	if (ret)
		ret = krc_node_card(&card);
	if (ret)
		return ret;
	return copy_to_user(uarg, &card, sizeof(card)) ? -EFAULT : 0;
}

static long krc_ioc_query_port(void __user *uarg)
{
	struct krcore_port_info info;
	u32 index;
	int ret;

	if (get_user(index, (u32 __user *)uarg))
		return -EFAULT;
	ret = krc_port_info(index, &info);
	if (ret)
		return ret;
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long krc_ioc_node_info(void __user *uarg)
{
	struct krcore_node_info info;

	krc_node_info(&info);
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long krc_ioc_peer_info(void __user *uarg)
{
	struct krcore_peer_info info;
	u32 index;
	int ret;

	if (get_user(index, (u32 __user *)uarg))
		return -EFAULT;
	ret = krc_peer_info(index, &info);
	if (ret)
		return ret;
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long krc_ioc_lookup(void __user *uarg)
{
	struct krcore_lookup lk;
	int ret;

	if (copy_from_user(&lk, uarg, sizeof(lk)))
		return -EFAULT;
	if (lk.flags & ~KRCORE_LOOKUP_F_NOCACHE || krc_gid_is_zero(lk.gid))
		return -EINVAL;
	lk.path = 0;
	lk.reads = 0;
	lk.reserved = 0;
	lk.elapsed_ns = 0;
	memset(&lk.card, 0, sizeof(lk.card));
	ret = krc_peer_lookup(lk.gid, lk.flags, &lk);
	if (copy_to_user(uarg, &lk, sizeof(lk)))
		return -EFAULT;
	return ret;
}

static long krc_ioc_qconnect(struct krc_vq *vq, void __user *uarg)
{
	struct krcore_qconnect qc;
	struct krc_peer *peer;
	struct krc_conn *conn;
	unsigned long tmo;
	int ret;

	if (copy_from_user(&qc, uarg, sizeof(qc)))
		return -EFAULT;
	if (qc.flags)
		return -EINVAL;
	tmo = qc.timeout_ms ? qc.timeout_ms : krc_param_connect_timeout_ms;
	qc.path = 0;
	qc.conn_id = 0;
	qc.qpn = 0;
	qc.reads = 0;
	qc.attempts = 0;
	qc.elapsed_ns = 0;
	memset(&qc.card, 0, sizeof(qc.card));

	mutex_lock(&vq->lock);
	if (vq->conn) {
		ret = -EISCONN;
	} else {
		ret = krc_peer_connect(qc.gid, tmo, &qc, &peer, &conn);
		if (!ret) {
			atomic_inc(&conn->nvqs);
			vq->conn = conn;
			vq->peer = peer;
			vq->port = qc.port;
		}
	}
	mutex_unlock(&vq->lock);
	if (ret)
		krc_event(KRC_EV_QCONNECT_FAILED);
	else if (qc.path & KRCORE_PATH_LOCAL)
		krc_event(KRC_EV_QCONNECT_LOCAL);
	else if (qc.path & KRCORE_PATH_HANDSHAKE)
		krc_event(KRC_EV_QCONNECT_HANDSHAKE);
	else if (qc.path & KRCORE_PATH_LOOKUP)
		krc_event(KRC_EV_QCONNECT_LOOKUP);
	else
		krc_event(KRC_EV_QCONNECT_POOLED);
	if (copy_to_user(uarg, &qc, sizeof(qc)))
		return -EFAULT;
	return ret;
}

static long krc_ioc_probe(struct krc_vq *vq, void __user *uarg)
{
	struct krcore_probe pr = {};
	struct krc_conn *conn;
	struct krc_kop *kop;
	u64 start;
	int ret;

	mutex_lock(&vq->lock);
	conn = vq->conn;
	if (conn)
		kref_get(&conn->ref);
	mutex_unlock(&vq->lock);
	if (!conn)
		return -ENOTCONN;
	ret = -EOPNOTSUPP;
	if (!conn->probe_rkey || conn->probe_len < KRCORE_CARD_SIZE)
		goto out;
	ret = -ENOMEM;
	kop = krc_kop_alloc(krc_node.dev->ibdev, KRCORE_CARD_SIZE,
			    DMA_FROM_DEVICE);
	if (!kop)
		goto out;
	start = ktime_get_ns();
	ret = krc_conn_read(conn, kop, conn->probe_addr, conn->probe_rkey,
			    KRCORE_CARD_SIZE);
	if (!ret)
		ret = krc_kop_wait(kop, 2000);
	/* Some transports (rxe) never time a request out: we do. */
	if (ret == -ETIMEDOUT || ret == -EIO)
		krc_conn_fail(conn);
	pr.elapsed_ns = ktime_get_ns() - start;
	if (!ret)
		ret = krc_card_decode(kop->buf, &pr.card) ? -EBADMSG : 0;
	krc_kop_put(kop);
	krc_event(KRC_EV_PROBES);
	if (!ret && copy_to_user(uarg, &pr, sizeof(pr)))
		ret = -EFAULT;
out:
	krc_conn_put(conn);
	return ret;
}

static long krc_vq_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct krc_vq *vq = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	switch (cmd) {
	case KRCORE_IOC_VERSION:
		ret = krc_ioc_version(uarg);
		break;
	case KRCORE_IOC_QUERY_CARD:
		ret = krc_ioc_query_card(uarg);
		break;
	case KRCORE_IOC_QUERY_PORT:
		ret = krc_ioc_query_port(uarg);
		break;
	case KRCORE_IOC_NODE_INFO:
		ret = krc_ioc_node_info(uarg);
		break;
	case KRCORE_IOC_PEER_INFO:
		ret = krc_ioc_peer_info(uarg);
		break;
	case KRCORE_IOC_LOOKUP:
		ret = krc_ioc_lookup(uarg);
		break;
	case KRCORE_IOC_QCONNECT:
		ret = krc_ioc_qconnect(vq, uarg);
		break;
	case KRCORE_IOC_PROBE:
		ret = krc_ioc_probe(vq, uarg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	if (ret < 0)
		krc_event(KRC_EV_IOCTL_ERRORS);
	return ret;
}

static const struct file_operations krc_vq_fops = {
	.owner = THIS_MODULE,
	.open = krc_vq_open,
	.release = krc_vq_release,
	.unlocked_ioctl = krc_vq_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice krc_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "krcore",
	.fops = &krc_vq_fops,
	.mode = 0660,
};

int krc_chardev_init(void)
{
	int ret;

	krc_miscdev.groups = krc_stats_groups;
	ret = misc_register(&krc_miscdev);
	if (ret)
		pr_err("krcore: cannot register /dev/krcore: %d\n", ret);
	return ret;
}

void krc_chardev_exit(void)
{
	misc_deregister(&krc_miscdev);
}
