// SPDX-License-Identifier: GPL-2.0
/*
 * dp_cache.c - the data planes of closed VQs, kept for the next qconnect.
 *
 * A VQ's data plane (its request slots, their order, the SEND headers
 * mapped for the device, the completion ring if the kernel's) takes six
 * allocations and a vmalloc at the qconnect and as many frees at the
 * close: most of what
 * a pooled connection costs beyond its system calls (bench/conn_floor.c).
 * A freed VQ leaves its data plane here instead, and the next qconnect
 * takes it, zeroed, so that nothing of the last owner's requests or
 * completions reaches the next one.
 *
 * What keeps the cache from weakening anything:
 *  - a data plane is kept only when its VQ is freed, which is after the
 *    release of its file, and a mapping of the ring holds the file: no
 *    process maps the ring any more (checked: page_mapped() on every
 *    page), so none sees the next owner's ring;
 *  - it is taken only by a qconnect of the same memory cgroup as the one
 *    that allocated it (its memory stays charged there: no cgroup uses
 *    memory charged to another);
 *  - it is bounded (vq_cache entries, each about 45 KiB at vq_depth 128;
 *    a full cache lets its oldest entry go for a new one), an entry
 *    unused for KRC_DP_CACHE_IDLE goes, and the node's teardown empties
 *    it (the SEND headers are mapped for its device) before the device
 *    goes.
 *
 * Locking: krc_dp_cache.lock (a spinlock, innermost) guards the entries;
 * memory is freed outside it.
 */
#include <linux/jiffies.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "data/data.h"

#define KRC_DP_CACHE_MAX	1024
#define KRC_DP_CACHE_IDLE	(5 * HZ)

/* One kept data plane: what krc_vq_dp_init() allocated for a VQ. */
struct krc_dp_spare {
	struct list_head node;
	struct mem_cgroup *memcg;	/* charged to it (a reference) */
	unsigned long since;		/* jiffies: kept then */
	struct ib_device *dma_dev;	/* hdrs is mapped for it */
	u32 depth;
	struct krc_slot *slots;
	u16 *free;
	u16 *order;
	struct krc_push_scratch *scratch;
	u8 *hdrs;
	u64 hdrs_dma;
	void *ring_mem;			/* NULL: its VQ's ring was the process's */
	size_t ring_size;
};

static struct {
	spinlock_t lock;		/* the rest */
	struct list_head list;		/* the newest first */
	u32 count;
	bool open;			/* the node runs: entries may be kept */
	struct delayed_work reap;
} krc_dp_cache = {
	.lock = __SPIN_LOCK_UNLOCKED(krc_dp_cache.lock),
	.list = LIST_HEAD_INIT(krc_dp_cache.list),
};

static void krc_dp_spare_free(struct krc_dp_spare *s)
{
	ib_dma_unmap_single(s->dma_dev, s->hdrs_dma,
			    s->depth * KRC_DATA_HDR_SIZE, DMA_TO_DEVICE);
	kfree(s->hdrs);
	kvfree(s->slots);
	kvfree(s->free);
	kvfree(s->order);
	kfree(s->scratch);
	vfree(s->ring_mem);
	mem_cgroup_put(s->memcg);
	kfree(s);
}

/* The entry a new data plane will take in the cache (one per plane). */
struct krc_dp_spare *krc_dp_spare_alloc(void)
{
	return kmalloc(sizeof(struct krc_dp_spare), GFP_KERNEL_ACCOUNT);
}

/*
 * Take a data plane for @vq (depth @depth, for the device @ibdev) charged
 * to @memcg: its pointers set in @vq. False: none. Only its ring, which
 * the caller zeroes if it uses it, ever showed a process anything: the
 * slots (all free: a data plane is kept only with nothing in flight),
 * the scratch of a qpush and the SEND headers are the kernel's, each
 * entry written before it is read.
 */
bool krc_dp_cache_take(struct krc_vqueue *vq, u32 depth,
		       struct ib_device *ibdev, struct mem_cgroup *memcg)
{
	struct krc_dp_spare *s, *found = NULL;

	spin_lock(&krc_dp_cache.lock);
	list_for_each_entry(s, &krc_dp_cache.list, node) {
		if (s->memcg == memcg && s->dma_dev == ibdev &&
		    s->depth == depth) {
			list_del(&s->node);
			krc_dp_cache.count--;
			found = s;
			break;
		}
	}
	spin_unlock(&krc_dp_cache.lock);
	if (!found) {
		krc_event(KRC_EV_VQ_CACHE_MISSES);
		return false;
	}
	vq->slots = found->slots;
	vq->free = found->free;
	vq->order.ids = found->order;
	vq->scratch = found->scratch;
	vq->hdrs = found->hdrs;
	vq->hdrs_dma = found->hdrs_dma;
	vq->dma_dev = found->dma_dev;
	vq->ring_mem = found->ring_mem;
	vq->ring_size = found->ring_size;
	mem_cgroup_put(found->memcg);	/* @vq holds its own */
	vq->spare = found;		/* for its next stay here */
	krc_event(KRC_EV_VQ_CACHE_HITS);
	return true;
}

/* Does a process still map a page of @mem (a ring of @size bytes)? */
static bool krc_ring_mapped(void *mem, size_t size)
{
	size_t off;

	for (off = 0; off < size; off += PAGE_SIZE)
		if (page_mapped(vmalloc_to_page(mem + off)))
			return true;
	return false;
}

/*
 * Keep the data plane of @vq, which goes (its last reference): true if
 * kept, its pointers in @vq cleared; false: the caller frees it.
 */
bool krc_dp_cache_give(struct krc_vqueue *vq)
{
	u32 max = min_t(u32, READ_ONCE(krc_param_vq_cache), KRC_DP_CACHE_MAX);
	struct krc_dp_spare *s, *old = NULL;
	bool kept = false;

	if (!max || !vq->dma_dev || !vq->slots || !vq->spare ||
	    vq->inflight || vq->nfree != vq->depth)
		return false;
	if (vq->ring_mem &&
	    WARN_ON_ONCE(krc_ring_mapped(vq->ring_mem, vq->ring_size)))
		return false;
	s = vq->spare;
	s->memcg = vq->memcg;
	s->since = jiffies;
	s->dma_dev = vq->dma_dev;
	s->depth = vq->depth;
	s->slots = vq->slots;
	s->free = vq->free;
	s->order = vq->order.ids;
	s->scratch = vq->scratch;
	s->hdrs = vq->hdrs;
	s->hdrs_dma = vq->hdrs_dma;
	s->ring_mem = vq->ring_mem;
	s->ring_size = vq->ring_size;
	spin_lock(&krc_dp_cache.lock);
	if (krc_dp_cache.open && krc_dp_cache.count >= max) {
		old = list_last_entry(&krc_dp_cache.list, struct krc_dp_spare,
				      node);
		list_del(&old->node);
		krc_dp_cache.count--;
	}
	if (krc_dp_cache.open) {
		list_add(&s->node, &krc_dp_cache.list);
		if (!krc_dp_cache.count++)
			mod_delayed_work(krc_wq, &krc_dp_cache.reap,
					 KRC_DP_CACHE_IDLE);
		kept = true;
	}
	spin_unlock(&krc_dp_cache.lock);
	if (old)
		krc_dp_spare_free(old);
	if (!kept)
		return false;
	vq->spare = NULL;
	vq->memcg = NULL;
	vq->dma_dev = NULL;
	vq->slots = NULL;
	vq->free = NULL;
	vq->order.ids = NULL;
	vq->scratch = NULL;
	vq->hdrs = NULL;
	vq->ring_mem = NULL;
	vq->ring = NULL;
	krc_event(KRC_EV_VQ_CACHE_KEPT);
	return true;
}

/* Move the entries unused since @before (all: 0) to @out. */
static void krc_dp_cache_cut(struct list_head *out, unsigned long before,
			     bool all)
{
	struct krc_dp_spare *s, *tmp;

	spin_lock(&krc_dp_cache.lock);
	list_for_each_entry_safe_reverse(s, tmp, &krc_dp_cache.list, node) {
		if (!all && time_after(s->since, before))
			break;		/* the rest are newer */
		list_move(&s->node, out);
		krc_dp_cache.count--;
	}
	if (krc_dp_cache.count)
		mod_delayed_work(krc_wq, &krc_dp_cache.reap, KRC_DP_CACHE_IDLE);
	spin_unlock(&krc_dp_cache.lock);
}

static void krc_dp_cache_free_list(struct list_head *list)
{
	struct krc_dp_spare *s, *tmp;

	list_for_each_entry_safe(s, tmp, list, node)
		krc_dp_spare_free(s);
}

static void krc_dp_cache_reap(struct work_struct *work)
{
	LIST_HEAD(old);

	krc_dp_cache_cut(&old, jiffies - KRC_DP_CACHE_IDLE, false);
	krc_dp_cache_free_list(&old);
}

/* The node runs: freed VQs may leave their data planes. */
void krc_dp_cache_open(void)
{
	spin_lock(&krc_dp_cache.lock);
	krc_dp_cache.open = true;
	spin_unlock(&krc_dp_cache.lock);
}

/*
 * The node's device goes (after every VQ let go of it): nothing is kept
 * from now on, and what is kept is freed, its mappings with it.
 */
void krc_dp_cache_close(void)
{
	LIST_HEAD(all);

	spin_lock(&krc_dp_cache.lock);
	krc_dp_cache.open = false;
	spin_unlock(&krc_dp_cache.lock);
	krc_dp_cache_cut(&all, 0, true);
	cancel_delayed_work_sync(&krc_dp_cache.reap);
	krc_dp_cache_free_list(&all);
}

void krc_dp_cache_init(void)
{
	INIT_DELAYED_WORK(&krc_dp_cache.reap, krc_dp_cache_reap);
}
