// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - counters exported through sysfs, one value per file.
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/slab.h>

#include "stats.h"

atomic64_t krc_obj_live[KRC_NR_OBJ][2];
atomic64_t krc_events[KRC_NR_EV];

static const char * const krc_obj_names[KRC_NR_OBJ] = {
	[KRC_OBJ_VQ]		= "vq",
	[KRC_OBJ_DEVICE]	= "device",
	[KRC_OBJ_PD]		= "pd",
};

static const char * const krc_event_names[KRC_NR_EV] = {
	[KRC_EV_IOCTL_ERRORS]	= "ioctl_errors",
	[KRC_EV_PORT_REFRESH]	= "port_refresh",
};

#define KRC_NR_STATS	(2 * KRC_NR_OBJ + KRC_NR_EV)

struct krc_stat_attr {
	struct device_attribute attr;
	atomic64_t *value;
	char name[32];
};

static struct krc_stat_attr *krc_stat_attrs;
static struct attribute *krc_attr_ptrs[KRC_NR_STATS + 1];

static struct attribute_group krc_stats_group = {
	.name = "counters",
	.attrs = krc_attr_ptrs,
};

const struct attribute_group *krc_stats_groups[] = {
	&krc_stats_group,
	NULL
};

static ssize_t krc_stat_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct krc_stat_attr *sa = container_of(attr, struct krc_stat_attr, attr);

	return sysfs_emit(buf, "%lld\n", atomic64_read(sa->value));
}

static void krc_stat_attr_init(int i, const char *name, const char *suffix,
			       atomic64_t *value)
{
	struct krc_stat_attr *sa = &krc_stat_attrs[i];

	snprintf(sa->name, sizeof(sa->name), "%s%s", name, suffix);
	sysfs_attr_init(&sa->attr.attr);
	sa->attr.attr.name = sa->name;
	sa->attr.attr.mode = 0444;
	sa->attr.show = krc_stat_show;
	sa->value = value;
	krc_attr_ptrs[i] = &sa->attr.attr;
}

int krc_stats_init(void)
{
	int i, n = 0;

	krc_stat_attrs = kcalloc(KRC_NR_STATS, sizeof(*krc_stat_attrs),
				 GFP_KERNEL);
	if (!krc_stat_attrs)
		return -ENOMEM;
	for (i = 0; i < KRC_NR_OBJ; i++) {
		krc_stat_attr_init(n++, krc_obj_names[i], "_created",
				   &krc_obj_live[i][0]);
		krc_stat_attr_init(n++, krc_obj_names[i], "_destroyed",
				   &krc_obj_live[i][1]);
	}
	for (i = 0; i < KRC_NR_EV; i++)
		krc_stat_attr_init(n++, krc_event_names[i], "", &krc_events[i]);
	return 0;
}

void krc_stats_exit(void)
{
	kfree(krc_stat_attrs);
	krc_stat_attrs = NULL;
}

int krc_stats_report_leaks(void)
{
	int i, leaks = 0;
	s64 c, d;

	for (i = 0; i < KRC_NR_OBJ; i++) {
		c = atomic64_read(&krc_obj_live[i][0]);
		d = atomic64_read(&krc_obj_live[i][1]);
		if (c == d)
			continue;
		pr_err("krcore: leak: %lld of %lld %s objects not destroyed\n",
		       c - d, c, krc_obj_names[i]);
		leaks++;
	}
	return leaks;
}
