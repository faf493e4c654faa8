/* SPDX-License-Identifier: GPL-2.0 */
/*
 * control/meta_host.h - what the two files of the MetaServer host share:
 * the table (struct krc_meta_host, meta_host.c) and the members'
 * connections to it (struct krc_meta_member, meta_member.c). Private to
 * those two files.
 *
 * Locks: krc_node.lock > h->lock (the table's writes and count, and the
 * members' owns_card and card; a member's request takes h->lock alone) >
 * h->members_lock (the lists); each member's m->lock is a leaf.
 */
#ifndef KRC_META_HOST_H
#define KRC_META_HOST_H

#include "control/control.h"

#define KRC_META_RX	8
#define KRC_META_TX	8

struct rdma_cm_id;
struct rdma_cm_event;

struct krc_meta_member {
	struct list_head node;		/* on host->pending or host->members */
	struct krc_meta_host *host;
	struct rdma_cm_id *id;
	struct ib_cq *cq;
	spinlock_t lock;		/* tx_free, dead, kick */
	bool dead;
	bool kick;			/* it lied: disconnect it */
	bool authed;			/* signed a request (members_lock) */
	bool lost;			/* a keepalive was not delivered */
	struct delayed_work auth_work;	/* the deadline, the kick, the loss */
	struct delayed_work ka_work;	/* the keepalive */
	/*
	 * The card it registered, while the table's entry is that
	 * registration's (host->lock): a member that goes takes its card
	 * with it, unless a newer connection from its address registered.
	 */
	bool owns_card;
	struct krcore_card card;
	struct krc_nonces nonces;	/* of this connection */
	u32 node_id;
	u8 gid[16];			/* where its connection comes from */
	struct list_head tx_free;
	struct krc_msgbuf rx[KRC_META_RX];
	struct krc_msgbuf tx[KRC_META_TX];
};

struct krc_meta_host {
	struct mutex lock;		/* table writes */
	struct krc_mt_geom geom;
	void *table;			/* vmap of the chunks */
	struct krc_kmem mem;		/* the table's chunks and MR */
	struct ib_mr *mr;		/* mem.mr */
	u32 used;			/* cards in the table */
	struct rdma_cm_id *listen;
	spinlock_t members_lock;	/* the lists and their counts, authed */
	struct list_head members;	/* signed a request */
	u32 nmembers;
	struct list_head pending;	/* not yet */
	u32 npending;
	struct krc_mt_desc desc;
};

/*
 * meta_member.c: the listener's rdma_cm handler (every member's cm_id
 * reports to it too); a member krc_meta_host_stop() tears down in two
 * steps: its QP, then, once its cm_id is destroyed, the rest.
 */
int krc_meta_host_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev);

/*
 * meta_host.c: a member's card. _register_from() and _deregister_from()
 * apply @m's request; _member_gone() removes the card @m registered if
 * the table's entry is still that registration (call it while @m is on
 * a list, before krc_member_unlink()).
 */
int krc_meta_host_register_from(struct krc_meta_member *m,
				const struct krcore_card *card, u32 *slot);
int krc_meta_host_deregister_from(struct krc_meta_member *m,
				  const struct krcore_card *card);
void krc_meta_host_member_gone(struct krc_meta_member *m);
void krc_member_free_qp(struct krc_meta_member *m);
void krc_member_free_rest(struct krc_meta_member *m);

#endif /* KRC_META_HOST_H */
