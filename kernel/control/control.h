/* SPDX-License-Identifier: GPL-2.0 */
/*
 * control/control.h - this node's control plane, above core/: the node
 * (its card, its gate, its page), the control UD QP, the cluster key and
 * the MetaServer (host and client).
 *
 *   krc_node     this node, on the primary port: the card peers know it
 *                by, the control UD QP, the kernel's own QP (core's kqp),
 *                the node page, the MetaServer client (and table, if it
 *                hosts one). One, static; main.c starts and stops it.
 *
 * The control QP carries two kinds of traffic for the layers above, and
 * hands each to the handler that layer registered (krc_ctrl_on_msg(),
 * krc_ctrl_on_dgram()): control messages (the handshake, conn/) and the
 * datagram transport (data/). A MetaServer scan hands every card it finds
 * to the handler of krc_meta_on_card() (pre-warming, conn/).
 *
 * Locks, outermost first: krc_node.lock (start and stop, MetaServer
 * hosting calls) > krc_node.gate (write: teardown; read: every VQ call
 * using the device) > the meta client's lock > the locks of ctrl.c
 * (tx_lock, dg_lock, rx_lock: leaves). The gate is taken for reading
 * inside nothing of control/'s own.
 */
#ifndef KRC_CONTROL_H
#define KRC_CONTROL_H

#include <linux/rwsem.h>

#include "core/core.h"
#include "meta_table.h"
#include "names.h"

struct krc_ctrl;
struct krc_meta_host;
struct krc_meta_client;

struct krc_node {
	struct mutex lock;		/* start/stop */
	/*
	 * Users of the device outside the control plane (VQ calls) hold it
	 * for reading; tearing the node down holds it for writing.
	 */
	struct rw_semaphore gate;
	bool up;
	struct krc_device *dev;		/* primary device, a reference held */
	struct krc_port *port;
	struct krcore_card card;	/* ours, complete once up */
	struct krc_ctrl *ctrl;
	struct krc_kqp *kqp;		/* the kernel's own loopback QP */
	/* the node area (names.h): our card and names, READ by peers */
	void *page;
	u64 page_dma;
	struct ib_mr *page_mr;
	struct krc_meta_host *meta_host;
	struct krc_meta_client *meta;
};

extern struct krc_node krc_node;

/*
 * node.c, all under node->lock. krc_node_start(): the primary port, its
 * card, the control QP, the kernel's QP and the node page. krc_node_open():
 * the node is up (VQ calls may enter, the handshake takes traffic).
 * Teardown: krc_node_close() marks it down and takes the gate for
 * writing (no VQ call is in, none enters); the layers above let go of
 * everything; krc_node_stop() undoes krc_node_start() (also after a
 * partial start) and lets the gate go.
 */
int krc_node_start(struct krc_node *node);
void krc_node_open(struct krc_node *node);
void krc_node_close(struct krc_node *node);
void krc_node_stop(struct krc_node *node);
int krc_node_enter(void);	/* -ENODEV, or the gate held for reading */
int krc_node_try_enter(void);	/* the same, or -EAGAIN: it is held */
void krc_node_leave(void);
/*
 * Register kernel memory for remote access (core's krc_kqp_reg_mr()),
 * addressed by peers from @iova.
 */
struct ib_mr *krc_node_reg_mr(struct scatterlist *sg, int nents,
			      unsigned int page_size, int access, u64 iova);

/* kmem.c: kernel memory registered for peers' one-sided requests */
struct krc_kmem {
	struct ib_device *ibdev;
	struct page **chunks;
	u32 nchunks;
	unsigned int order;		/* of each chunk */
	struct sg_table sgt;
	bool sg_mapped;
	struct ib_mr *mr;		/* iova, rkey, length for peers */
};

#define KRC_KMEM_IOVA_DMA	(~0ULL)

int krc_kmem_alloc(struct krc_kmem *km, u64 bytes, int access, u64 iova);
void krc_kmem_free(struct krc_kmem *km);
void krc_kmem_revoke(struct krc_kmem *km);
struct ib_mr *krc_kmem_reg(struct krc_kmem *km, int access, u64 iova);
void krc_kmem_unreg(struct ib_mr *mr);
void krc_kmem_set(struct krc_kmem *km, u64 off, u64 len, u8 value);
void krc_kmem_copy(struct krc_kmem *dst, u64 doff, struct krc_kmem *src,
		   u64 soff, u64 len);
u64 krc_kmem_charge(u64 bytes);
void *krc_kmem_vmap(struct krc_kmem *km);

/* ctrl.c: the control UD QP */
struct krc_ctrl_handlers {
	/* Softirq context: true if it took @msg (a handshake's answer). */
	bool (*msg_fast)(const struct krc_ctrl_msg *msg);
	/* Process context, one at a time, in order: every other message. */
	void (*msg)(const struct krc_ctrl_msg *msg);
};

/* Process context, one at a time, in order: a datagram of the transport. */
typedef void (*krc_ctrl_dgram_fn)(const u8 gid[16], u32 src_qp,
				  const u8 *buf, size_t len);

void krc_ctrl_on_msg(const struct krc_ctrl_handlers *h);
void krc_ctrl_on_dgram(krc_ctrl_dgram_fn fn);
int krc_ctrl_start(struct krc_node *node);
void krc_ctrl_stop(struct krc_node *node);
/*
 * Send @msg, signed with the cluster key, to the control QP @qpn/@qkey
 * behind @ah (which the send holds until it completes). Process context.
 */
int krc_ctrl_send(struct krc_ah *ah, u32 qpn, u32 qkey,
		  const struct krc_ctrl_msg *msg);
/* Post a datagram of the transport (data/) on the control QP. */
int krc_ctrl_post_ud(struct ib_ud_wr *wr);
void krc_ctrl_ud_done(struct ib_cq *cq);

/* key.c: the cluster key (common/auth.h) */
int krc_key_load(void);
void krc_key_forget(void);
const u8 *krc_key(void);	/* NULL: none loaded */

/* meta_host.c: hosting the MetaServer table (its members: meta_member.c) */
int krc_meta_host_start(struct krc_node *node);
void krc_meta_host_stop(struct krc_node *node);
int krc_meta_host_register(const struct krcore_card *card, u32 *slot);
int krc_meta_host_deregister(const struct krcore_card *card);
int krc_meta_host_where(struct krc_mt_geom *geom, u64 *addr, u32 *rkey);
void krc_meta_host_info(struct krcore_node_info *info);

/* meta_client.c and meta_lookup.c: a member's view of its MetaServer */
void krc_meta_on_card(void (*fn)(const struct krcore_card *card));
int krc_meta_start(struct krc_node *node);
void krc_meta_stop(struct krc_node *node);
int krc_meta_lookup(const u8 gid[16], struct krcore_card *card, u32 *reads);
void krc_meta_info(struct krcore_node_info *info);

/*
 * meta_members.c: the members, sorted by GID, as the MetaServer's
 * directory lists them, READ afresh if the last READ of its generation is
 * older than @max_age_ms; the first min(@max, count) copied to v->m
 * (kvmalloc'ed: the caller kvfree()s it). Under krc_node_enter(). 0,
 * -EHOSTUNREACH, -EIO, -E2BIG, -ENOMEM, -EINTR.
 */
struct krc_members_view {
	u64 gen;
	u32 count;			/* members */
	u32 self;			/* this node's index, or ~0 */
	u32 n;				/* entries in m */
	struct krcore_member *m;
};

int krc_meta_members(u32 max, unsigned int max_age_ms,
		     struct krc_members_view *v);

#endif /* KRC_CONTROL_H */
