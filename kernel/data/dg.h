/* SPDX-License-Identifier: GPL-2.0 */
/*
 * data/dg.h - what the files of the datagram transport share: the
 * requester's stream (struct krc_dg_tx, dg_tx.c sends, dg_ack.c takes
 * the answers), the responder's (struct krc_dg_rx, dg_rx.c), the executor
 * (dg_exec.c) and what ties them to peers and the control QP (dgram.c).
 * Private to data/dg*.c.
 *
 * A peer's two streams are made on first use and freed with the peer
 * (krc_dg_peer_free(), its last reference, process context); a stream's
 * works hold a reference on the peer while queued or running.
 *
 * Locks: tx->lock and rx->lock are taken in any context (irqsave); each
 * is outermost for its stream: under it, a VQ's dlock (completing a
 * request), never the other stream's lock.
 */
#ifndef KRC_DG_H
#define KRC_DG_H

#include "data/data.h"
#include "dgram.h"

#define KRC_DG_W	KRC_DG_WINDOW
/* Datagrams one VQ sends in a row before the next VQ's turn. */
#define KRC_DG_QUANTUM	8
/*
 * Buffers are sized for the port's MTU: a responder slot holds the reply
 * header, then one datagram's payload (either way); a requester keeps one
 * reply payload per window entry. About 2 x 64 KiB per peer with a
 * 1024-byte MTU, made when a stream is first used.
 */

/* Requester: one outstanding datagram. */
struct krc_dg_ent {
	u64 cookie;			/* the VQ request's */
	struct krc_vqueue *vq;
	u16 slot;
	u8 opcode;
	bool last;			/* the request's last segment */
	bool used;
	bool replied;
	u32 seq;
	u32 off;			/* of the segment in the request */
	u32 len;
	u32 status;
	u32 data_len;			/* reply payload, in data[] */
	u32 xmits;			/* transmissions */
	unsigned long sent;		/* jiffies of the last transmission */
	u64 sent_ns;
};

struct krc_dg_tx {
	struct ib_cqe cqe;		/* send completions */
	spinlock_t lock;
	struct krc_peer *peer;		/* its owner */
	u64 stream;
	u64 dst_incarnation;
	u32 head;			/* oldest outstanding seq */
	u32 tail;			/* next seq */
	u32 seg;			/* payload bytes per datagram */
	u32 tries;			/* repeats of the oldest */
	u32 srtt_us;			/* smoothed round trip (RFC 6298) */
	u32 rttvar_us;
	bool failing;			/* every entry failed: reset when drained */
	bool stopping;
	struct krc_ah *ah;		/* to the peer's control QP ... */
	u32 qpn;
	u32 qkey;
	struct krc_ah *old_ah;		/* ... and the one before a reload */
	atomic_t tx_posted;
	atomic_t nvqs;			/* VQs on the datagram path */
	atomic64_t requests;		/* VQ requests sent (RC policy) */
	/*
	 * Requests not (all) sent yet, each VQ's in its own queue
	 * (vq->dg_queue, in order); the VQs with some, in turn (vq->dg_active
	 * on this list): each turn sends at most KRC_DG_QUANTUM datagrams, so
	 * no VQ waits behind another's backlog. A READ or WRITE may be cut
	 * between turns; a SEND or WRITE_IMM never is (the responder puts a
	 * SEND together, and delivers a WRITE_IMM's immediate after its
	 * other segments, in stream order).
	 */
	struct list_head active;
	u32 turn;			/* datagrams sent in the current turn */
	u32 queued;			/* requests queued, at most dg_backlog */
	struct list_head failed;	/* requests failed before being sent */
	struct krc_dg_ent ent[KRC_DG_W];
	u8 *hdrs;			/* KRC_DG_W headers, DMA-mapped */
	u64 hdrs_dma;
	u8 *data;			/* KRC_DG_W reply payloads */
	struct delayed_work rto_work;
	struct work_struct done_work;
	wait_queue_head_t wq;
};

/* Responder: one datagram of a peer's stream, executed or executing. */
enum krc_dg_rstate {
	KRC_DG_R_FREE,
	KRC_DG_R_EXEC,			/* on the executor QP */
	KRC_DG_R_READY,			/* result known, reply not sent yet */
	KRC_DG_R_DONE,			/* replied (cached for repeats) */
};

struct krc_dg_rent {
	u8 state;
	u8 opcode;
	u8 flags;
	u32 seq;
	u32 status;
	u32 len;			/* reply payload */
	struct krc_data_hdr mhdr;	/* a message to deliver at retirement */
	u32 mlen;
	void *msg;			/* its data (kmalloc'ed, multi-segment) */
	bool deliver;
	struct krc_umr *mr;		/* held while executing, */
	struct krc_lmr_region *lmr;	/* or the remote memory region */
	bool last;			/* its request's last segment */
};

struct krc_dg_rx {
	struct ib_cqe cqe;		/* reply send completions */
	spinlock_t lock;
	struct krc_peer *peer;
	u64 stream;
	u32 expected;			/* next seq to execute */
	u32 nak_seq;			/* the last NAK asked for this one */
	bool nak_sent;
	u32 retire;			/* next seq to reply to, in order */
	u32 wimm_err;			/* a segment of this WRITE_IMM failed */
	bool started;
	struct krc_dg_rent ent[KRC_DG_W];
	u8 *buf;			/* KRC_DG_W slots, DMA-mapped */
	u64 buf_dma;
	u8 *asm_buf;			/* a multi-segment SEND being assembled */
	u32 asm_len;
	struct krc_ah *ah;		/* to the peer's control QP ... */
	u32 qpn;
	u32 qkey;
	struct krc_ah *old_ah;		/* ... and the one before a reload */
	u32 seg;			/* payload bytes a datagram may carry */
	u32 slot;			/* bytes of a slot of buf */
	atomic_t tx_posted;
	atomic_t exec;			/* on the executor QP */
};

static inline struct ib_device *krc_dg_ibdev(void)
{
	return krc_node.dev->ibdev;
}

static inline u32 krc_dg_lkey(void)
{
	return krc_node.dev->pd->local_dma_lkey;
}

/* dgram.c */
u32 krc_dg_seg_for(const struct krcore_card *card);
void krc_dg_retarget_stale(struct krc_dg_tx *tx);
struct krc_ah *krc_dg_readdress(struct krc_peer *peer, spinlock_t *lock,
				struct krc_ah **ahp, struct krc_ah **oldp,
				u32 *qpnp, u32 *qkeyp);

/* dg_tx.c: the requester, sending; each with tx->lock held */
void krc_dg_xmit(struct krc_dg_tx *tx, u32 i);
unsigned long krc_dg_rto(struct krc_dg_tx *tx);
void krc_dg_rtt_sample(struct krc_dg_tx *tx, const struct krc_dg_ent *e);
void krc_dg_arm(struct krc_dg_tx *tx);
void krc_dg_pump(struct krc_dg_tx *tx);

/* dg_ack.c: the requester's replies, repeats and completions */
void krc_dg_on_rep(struct krc_peer *peer, const struct krc_dg_hdr *h,
		   const u8 *payload);
void krc_dg_fail_all(struct krc_dg_tx *tx, u32 status);
void krc_dg_kick_done(struct krc_dg_tx *tx);
void krc_dg_done_work(struct work_struct *work);
void krc_dg_rto_work(struct work_struct *work);

/* dg_rx.c: the responder */
void krc_dg_on_req(struct krc_peer *peer, u32 src_qp,
		   const struct krc_dg_hdr *h, const u8 *payload);
void krc_dg_retire(struct krc_dg_rx *rx);
void krc_dg_bury(const u8 gid[16], u64 stream);

/* dg_exec.c: the executor QP */
bool krc_dg_op_executes(u8 op);
bool krc_dg_exec_full(void);
u32 krc_dg_exec(struct krc_dg_rx *rx, u32 i, const struct krc_dg_hdr *h);

#endif /* KRC_DG_H */
