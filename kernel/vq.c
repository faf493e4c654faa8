// SPDX-License-Identifier: GPL-2.0
/*
 * vq.c - /dev/krcore: every open is a virtual queue (VQ); requests are
 * ioctl()s on its file descriptor, numbered by include/uapi/krcore.h.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "krcore.h"

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

static int krc_vq_release(struct inode *inode, struct file *file)
{
	struct krc_vq *vq = file->private_data;

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
	int ret = krc_node_card(&card);

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

static long krc_vq_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
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
