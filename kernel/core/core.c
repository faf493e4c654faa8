// SPDX-License-Identifier: GPL-2.0
/*
 * core.c - what the whole module shares at the bottom: its workqueue
 * (work of every layer that may sleep: teardowns, recovery, retries) and
 * its incarnation (a fresh random number per load, in the node's card:
 * a peer that sees it change knows this node was reloaded).
 */
#include <linux/random.h>

#include "core/core.h"

u64 krc_incarnation;
struct workqueue_struct *krc_wq;

int krc_core_init(void)
{
	int ret;

	/* Never zero: zero means "no incarnation known" in the handshake. */
	do {
		krc_incarnation = get_random_u64();
	} while (!krc_incarnation);
	ret = krc_stats_init();
	if (ret)
		return ret;
	krc_wq = alloc_workqueue("krcore", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!krc_wq) {
		krc_stats_exit();
		return -ENOMEM;
	}
	return 0;
}

void krc_core_exit(void)
{
	destroy_workqueue(krc_wq);
}
