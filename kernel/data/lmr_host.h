/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lmr_host.h - the owner's side of remote memory, shared by its files
 * (and by no other): lmr_host.c (a region's life: allocation, free,
 * keys, reclaim), lmr_op_host.c (MEM_SET and MEM_COPY done here) and
 * lmr_name_host.c (the names a region is published under).
 *
 * Lock order: krc_lockh.lock (lock_host.c), then krc_lmrh.lock (the
 * regions, their names and repeat rings, the pool's use; process context
 * only, never held around an allocation of memory to register or a wait);
 * krc_lmrh.gone_lock (the incarnations to reclaim) in any context, alone.
 *
 * Lifetimes: a region has a reference from the regions list and one per
 * job that uses its memory (a SET, a COPY, a name's registration, a
 * datagram request: krc_lmrh_remote_get()); unlinked (off the list, its
 * keys out of rkeys and nkeys), its MRs are deregistered at once, so every
 * key of it dies, and its pages go with the last reference. A name is on
 * its region's names list (no reference of its own); it is freed by
 * UNPUBLISH or with its region (dead_names).
 */
#ifndef KRC_DATA_LMR_HOST_H
#define KRC_DATA_LMR_HOST_H

#include "data/data.h"

/* A region's iova: its id in the top bits, the offset below 2^40. */
#define KRC_LMR_IOVA_SHIFT	40
#define KRC_LMR_ID_MAX		0xffffffU

/* The last MEM_SETs and MEM_COPYs into a region, for retransmissions. */
/* The ALLOCs of the last regions freed: a late copy makes no new one. */
#define KRC_LMR_TOMBS		64
#define KRC_LMR_SETS		8

struct krc_lmr_region {
	struct list_head node;		/* krc_lmrh.regions */
	struct kref ref;		/* the list's, each memset's */
	struct work_struct work;	/* the allocation */
	struct krc_peer *peer;		/* the holder's, while allocating */
	u32 id;
	u8 holder[16];
	u64 holder_inc;
	u64 req_id;			/* of the holder's MEM_ALLOC */
	u64 length;
	u64 charge;			/* on the pool */
	u32 access;			/* KRCORE_ACCESS_REMOTE_* */
	bool ready;			/* registered, answered */
	struct krc_kmem mem;
	struct list_head names;		/* struct krc_lmr_name: live, pending */
	struct list_head dead_names;	/* unlinked with it: destroy's */
	u64 unpublished[KRC_LMR_SETS];	/* UNPUBLISHes done: their req_ids */
	u32 unpublished_next;
	struct {
		u8 gid[16];		/* the caller: any node with a name */
		u64 inc;
		u64 req_id;
		int status;		/* -EINPROGRESS while it runs */
	} sets[KRC_LMR_SETS];
	u32 set_next;
};

/*
 * A name the region is published under (MEM_PUBLISH): one more
 * registration of its memory with exactly the name's rights, and the
 * name's slot in the names table (name_table.c). Pending (mr NULL) while
 * krc_wq registers it; on the region's names list until revoked.
 */
struct krc_lmr_name {
	struct list_head node;		/* r->names, r->dead_names */
	struct krc_lmr_region *r;	/* its region (no reference) */
	struct work_struct work;	/* the registration */
	struct krc_peer *peer;		/* the holder's, while pending */
	struct ib_mr *mr;		/* NULL while pending */
	u32 access;
	u32 slot;
	u64 req_id;			/* of the MEM_PUBLISH */
	bool dead;			/* pending, and its region went */
	char name[KRC_NAME_LEN];
};

struct krc_lmrh_state {
	struct mutex lock;		/* regions, used, last_id, running */
	struct list_head regions;
	struct xarray rkeys;		/* rkey -> ready region (datagrams) */
	struct xarray nkeys;		/* rkey -> a ready name's struct */
	u64 used;			/* bytes charged */
	u32 last_id;
	struct {
		u8 holder[16];
		u64 holder_inc;
		u64 req_id;
	} tombs[KRC_LMR_TOMBS];
	u32 tomb_next;
	bool running;
	spinlock_t gone_lock;		/* gone */
	struct list_head gone;
	struct work_struct reclaim_work;
	struct delayed_work sweep_work;
};

extern struct krc_lmrh_state krc_lmrh;

/* lmr_host.c */
int krc_lmr_ib_access(u32 access);
void krc_lmrh_send(struct krc_peer *peer, struct krc_ctrl_msg *msg);
void krc_lmrh_reply(struct krc_peer *peer, u8 type, u64 req_id, int status,
		    const struct krc_lmr_region *r, u32 region);
void krc_lmrh_release(struct kref *ref);
struct krc_lmr_region *krc_lmrh_find(u32 id);
int krc_lmrh_op_check(struct krc_lmr_region *r, const struct krc_ctrl_msg *m,
		      u32 right, u64 off, u64 len);

/* lmr_op_host.c */
void krc_lmrh_on_op(struct krc_peer *peer, const struct krc_ctrl_msg *m);

/* lmr_name_host.c */
void krc_lmrh_name_unlink(struct krc_lmr_name *n);
void krc_lmrh_on_publish(struct krc_peer *peer, const struct krc_ctrl_msg *m);
void krc_lmrh_on_lookup(struct krc_peer *peer, const struct krc_ctrl_msg *m);
void krc_lmrh_on_unpublish(struct krc_peer *peer,
			   const struct krc_ctrl_msg *m);

#endif
