/* SPDX-License-Identifier: GPL-2.0 */
/*
 * core/core.h - the bottom layer of krcore.ko: what every other layer
 * uses and what uses nothing of theirs.
 *
 *   krc_device   one per RDMA device (ib_client context): PD and ports.
 *   krc_port     one per port: attributes, the RoCE v2 GID, netdev MAC.
 *   krc_kop      a kernel-issued work request, waited for or called back.
 *   krc_msgbuf   a DMA-mapped buffer of the kernel's own SEND/RECV messages.
 *   krc_ah       an address handle, shared by the sends in flight on it.
 *   krc_kqp      the kernel's own RC QP connected to itself (fast
 *                registrations, local READs); no process posts on it.
 *
 * The layers above (control/, conn/, data/) include this header through
 * theirs; core/ includes nothing of theirs. A layer below reaches up only
 * through what the layer above registered (ib_cqe.done of the requests it
 * posts, the device hooks of krc_device_set_hooks()).
 *
 * Lifetimes: a krc_device is referenced by its ib_client context (dropped
 * when the device goes) and by whoever holds one of its ports for a call
 * or for the control plane (krc_primary_get()); kops and AHs are reference
 * counted (the owner's, one per posted request); a kqp has one owner.
 */
#ifndef KRC_CORE_H
#define KRC_CORE_H

#include <linux/completion.h>
#include <linux/if_ether.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "../include/uapi/krcore.h"
#include "proto.h"
#include "core/params.h"
#include "core/stats.h"

#define KRC_VERSION	"0.3.0"

struct krc_device;

struct krc_port {
	struct krc_device *dev;
	u32 port_num;
	/* Below: guarded by dev->lock, refreshed by krc_port_refresh(). */
	enum ib_port_state state;
	enum ib_mtu active_mtu;
	int gid_index;			/* -1: no usable GID */
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	char netdev[IFNAMSIZ];
};

struct krc_device {
	struct list_head list;		/* on krc_devices, under krc_devices_lock */
	struct kref ref;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_event_handler event_handler;
	struct work_struct refresh_work;
	struct mutex lock;		/* guards the fields of ports[] */
	bool removing;
	u32 nports;
	struct krc_port ports[];	/* ports[i].port_num = first port + i */
};

/* core.c: the module's workqueue and this load's incarnation. */
extern u64 krc_incarnation;
extern struct workqueue_struct *krc_wq;
int krc_core_init(void);
void krc_core_exit(void);

/*
 * device.c. The hooks are called when a device or an address appeared
 * (kick: any context) and when @dev is being removed (process context,
 * before the device's last reference goes): main.c registers them.
 */
struct krc_device_hooks {
	void (*kick)(void);
	void (*removed)(struct krc_device *dev);
};

void krc_device_set_hooks(const struct krc_device_hooks *hooks);
int krc_device_init(void);
void krc_device_exit(void);
void krc_device_put(struct krc_device *dev);
struct krc_port *krc_primary_get(void);	/* holds a device reference */
int krc_port_card(struct krcore_card *card);	/* the primary port's */
int krc_port_info(u32 index, struct krcore_port_info *info);

/*
 * kop.c: a kernel-issued work request (a MetaServer lookup, a probe, a
 * memory registration, a datagram request's execution): posted, then
 * waited for or completed by done_fn. Its completion may arrive after the
 * waiter gave up, so it is reference counted (waiter + the posted WR).
 */
struct krc_kop {
	struct ib_cqe cqe;		/* for CQs polled by ib_core */
	struct completion done;
	refcount_t ref;
	int status;			/* enum ib_wc_status, or -errno */
	u32 byte_len;
	void *buf;			/* DMA buffer, freed with the kop */
	u64 dma;
	size_t len;
	enum dma_data_direction dir;
	struct ib_device *ibdev;
	/* Set for a kop completed by a callback instead of a waiter. */
	void (*done_fn)(struct krc_kop *kop);
	void *ctx;
	u32 idx;
	u32 seq;
};

struct krc_kop *krc_kop_alloc(struct ib_device *ibdev, size_t len,
			      enum dma_data_direction dir);
void krc_kop_put(struct krc_kop *kop);
/* Wait for @kop's completion; 0, -ETIMEDOUT or -EIO (bad wc status). */
int krc_kop_wait(struct krc_kop *kop, unsigned long timeout_ms);
/* @kop's request completed (any context): its waiter or its done_fn. */
void krc_kop_complete(struct krc_kop *kop, struct ib_wc *wc);
/* ib_cqe done callback of kops posted on CQs that ib_core polls. */
void krc_kop_cqe_done(struct ib_cq *cq, struct ib_wc *wc);

/* msgbuf.c: a DMA-mapped buffer for the kernel's own SEND/RECV messages. */
struct krc_msgbuf {
	struct ib_cqe cqe;
	struct list_head node;
	void *ctx;			/* the owner */
	void *priv;			/* per-use data (ctrl: the AH) */
	void *buf;
	u64 dma;
	size_t len;
	enum dma_data_direction dir;
};

int krc_msgbuf_alloc(struct ib_device *ibdev, struct krc_msgbuf *b, size_t len,
		     enum dma_data_direction dir,
		     void (*done)(struct ib_cq *cq, struct ib_wc *wc), void *ctx);
void krc_msgbuf_free(struct ib_device *ibdev, struct krc_msgbuf *b);
int krc_msgbuf_post_recv(struct ib_qp *qp, struct krc_msgbuf *b);
void krc_msgbuf_sync(struct ib_qp *qp, struct krc_msgbuf *b);
int krc_msgbuf_send(struct ib_qp *qp, struct krc_msgbuf *b,
		    const struct krc_ctrl_msg *msg);

/*
 * ah.c: an address handle to a node's control QP (from its card), shared
 * by the sends in flight on it: each holds a reference.
 */
struct krc_ah {
	struct kref ref;
	struct ib_ah *ah;
	u8 mac[ETH_ALEN];
};

struct krc_ah *krc_ah_create(struct krc_port *port, const struct krcore_card *card);
void krc_ah_get(struct krc_ah *ah);
void krc_ah_put(struct krc_ah *ah);

/*
 * kqp.c: move an RC QP in INIT to RTR and RTS, connected to @remote_qpn
 * at @gid/@mac over @port (with the port's GID as source), at @mtu.
 */
int krc_qp_connect(struct ib_qp *qp, struct krc_port *port, const u8 gid[16],
		   const u8 mac[ETH_ALEN], enum ib_mtu mtu, u32 remote_qpn,
		   u32 remote_psn, u32 sq_psn);

/*
 * kqp.c: the kernel's own RC QP, connected to itself. Requests on it are
 * kops; ib_core polls its CQ and each completion calls the kop back.
 */
struct krc_kqp {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_qp *qp;
	struct ib_cq *cq;
	spinlock_t lock;		/* posting against dead */
	bool dead;
	atomic_t outstanding;		/* requests posted, not completed */
	wait_queue_head_t wq;		/* outstanding reaching 0 */
};

struct krc_kqp *krc_kqp_create(struct krc_port *port);
void krc_kqp_destroy(struct krc_kqp *kqp);
/* Post @wr for @kop (which gains a reference for the completion). */
int krc_kqp_post(struct krc_kqp *kqp, struct krc_kop *kop,
		 struct ib_send_wr *wr);
/* RDMA READ @len bytes at @raddr/@rkey into @kop's buffer. */
int krc_kqp_read(struct krc_kqp *kqp, struct krc_kop *kop, u64 raddr,
		 u32 rkey, u32 len);
/*
 * Register kernel memory described by the DMA-mapped @sg (each entry
 * @page_size long and aligned, but the last) with @access, by a fast
 * registration on @kqp. Process context.
 */
struct ib_mr *krc_kqp_reg_mr(struct krc_kqp *kqp, struct scatterlist *sg,
			     int nents, unsigned int page_size, int access,
			     u64 iova);

/*
 * rxe hands a kernel QP's posted send to a tasklet, which from process
 * context waits for ksoftirqd: run it now (a no-op for a NIC that rings a
 * doorbell; in softirq context too). Interrupts must be on.
 */
static inline void krc_send_now(void)
{
	local_bh_disable();
	local_bh_enable();
}

#endif /* KRC_CORE_H */
