/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - counters of krcore.ko, readable in
 * /sys/class/misc/krcore/counters/<name> (one value per file).
 *
 * Every kind of object the module creates has a pair of counters,
 * <kind>_created and <kind>_destroyed; at unload the two must be equal or
 * the module reports the leak. Event counters count things that happen.
 */
#ifndef KRC_STATS_H
#define KRC_STATS_H

#include <linux/atomic.h>
#include <linux/sysfs.h>

enum krc_obj {
	KRC_OBJ_VQ,
	KRC_OBJ_DEVICE,
	KRC_OBJ_PD,
	KRC_NR_OBJ
};

enum krc_event {
	KRC_EV_IOCTL_ERRORS,
	KRC_EV_PORT_REFRESH,
	KRC_NR_EV
};

extern atomic64_t krc_obj_live[KRC_NR_OBJ][2];
extern atomic64_t krc_events[KRC_NR_EV];

static inline void krc_obj_created(enum krc_obj kind)
{
	atomic64_inc(&krc_obj_live[kind][0]);
}

static inline void krc_obj_destroyed(enum krc_obj kind)
{
	atomic64_inc(&krc_obj_live[kind][1]);
}

static inline void krc_event(enum krc_event ev)
{
	atomic64_inc(&krc_events[ev]);
}

static inline void krc_event_add(enum krc_event ev, s64 n)
{
	atomic64_add(n, &krc_events[ev]);
}

/* The sysfs group of every counter; built by krc_stats_init(). */
extern const struct attribute_group *krc_stats_groups[];
int krc_stats_init(void);
void krc_stats_exit(void);

/* Log every kind whose objects were not all destroyed; returns how many. */
int krc_stats_report_leaks(void);

#endif /* KRC_STATS_H */
