/* SPDX-License-Identifier: GPL-2.0 */
/*
 * conn/conn.h - connections, above control/: pooled RC connections to
 * other nodes, shared by every VQ of this node, and how they are made,
 * kept, capped and repaired.
 *
 *   krc_peer     a node this node knows: its cached card and the pool of
 *                RC connections to it. Referenced by the peer table (until
 *                dropped), by each of its connections and by whoever looks
 *                it up; freed in process context after the last reference
 *                (free_work), with the data layer's state of it.
 *   krc_conn     one RC connection (QP + CQ), from the spare list to a
 *                peer's pool. Referenced by its peer's pool, by each VQ
 *                bound to it, by recovery while it runs and by whoever
 *                holds it for a call; the last reference queues its
 *                teardown (kill_work, process context).
 *
 * The data layer (data/) owns the VQ-facing fields of a connection (its
 * send-queue ledger, its VQs, the recovery state) and registers the
 * handlers through which conn/ reaches it (struct krc_conn_ops): the
 * completions of VQ requests and of receives, the recovery of a failed
 * connection, the end of a connection, moving VQs to datagrams when the
 * RC cap closes one, a peer's datagram state, and the flow control
 * messages of two-sided messages. conn/ never calls into
 * data/ otherwise.
 *
 * Locks, outermost first: peer->connect_lock (one connect per peer) >
 * krc_peers_lock > peer->lock; conn->cq_lock (the poller, whose handlers
 * post and retire) > conn->lock (posting, the send-queue ledger, dead
 * and closing). peer->lock and conn->lock are never held together: a
 * pool walk reads a connection's state with READ_ONCE and takes a
 * reference. krc_conns_lock, krc_spares_lock, krc_hs_lock,
 * krc_close_lock and krc_src_lock are leaves. The data layer takes
 * conn->lock inside a VQ's mutex and dlock (data/data.h).
 */
#ifndef KRC_CONN_H
#define KRC_CONN_H

#include "control/control.h"
#include "cookie.h"

struct krc_peer;
struct krc_vqueue;
struct krc_dg_tx;
struct krc_dg_rx;

/*
 * A request on the send queue of a shared QP, in posting order. RC
 * completes requests in order, so a completion retires every entry up to
 * its own, signaled or not. Written and read by data/ under conn->lock.
 */
struct krc_sq_ent {
	u64 cookie;			/* the hardware wr_id */
	struct krc_vqueue *vq;
	u16 slot;
	bool high;			/* of a high-priority VQ (data/prio.c) */
	u32 len;			/* bytes it moves (the watchdog's rate) */
};

/* A pooled QP's SGEs per request: the kernel's header, then the user's. */
#define KRC_MAX_HW_SGE	(KRCORE_MAX_SGE + 1)

enum krc_conn_state {
	KRC_CONN_SPARE		= 0,	/* created, INIT, in the spare list */
	KRC_CONN_CONNECTING	= KRCORE_CONN_CONNECTING,
	KRC_CONN_HALF_OPEN	= KRCORE_CONN_HALF_OPEN,
	KRC_CONN_READY		= KRCORE_CONN_READY,
	KRC_CONN_ERROR		= KRCORE_CONN_ERROR,
};

struct krc_conn {
	struct kref ref;
	struct list_head node;		/* on spares or peer->conns */
	struct list_head drop_node;	/* krc_peer_forget_incarnation's */
	struct krc_peer *peer;		/* holds a reference once attached */
	struct ib_qp *qp;
	struct ib_cq *cq;		/* send and receive completions */
	spinlock_t cq_lock;		/* serialises polling of cq */
	spinlock_t lock;		/* posting against killing */
	bool dead;			/* QP and CQ destroyed or going */
	atomic_t outstanding;		/* kernel WRs posted, not completed */
	atomic_t qp_users;		/* querying the QP outside conn->lock */
	struct work_struct kill_work;
	u32 id;
	u32 qpn;			/* qp->qp_num, kept after the QP goes */
	u32 psn;			/* our first PSN */
	u32 remote_qpn;
	u32 remote_psn;
	u64 remote_incarnation;
	u64 probe_addr;			/* the peer's node page */
	u32 probe_rkey;
	u32 probe_len;
	bool initiator;
	enum krc_conn_state state;	/* under peer->lock once attached */
	atomic_t nvqs;			/* VQs bound to it */
	/* RTU retransmission (initiator side, handshake.c) */
	struct delayed_work rtu_work;
	int rtu_tries;
	bool rtu_acked;
	bool half_open_counted;		/* in the half-open caps (handshake.c) */
	bool rc_counted;		/* in krc_rc_conns (evict.c) */
	bool closing;			/* being closed (the RC cap): no new VQ */
	unsigned long last_post;	/* jiffies: last request posted */
	bool failing;			/* QP in error: recovery owns it */
	struct work_struct recover_work;
	unsigned long progress;		/* jiffies: last completion (watchdog) */
	wait_queue_head_t drain_wq;	/* sq emptied, qp_users gone */
	struct list_head all_node;	/* krc_conns, for the watchdog */
	/* Owned by data/, under lock: the ledger of VQ requests, its VQs. */
	struct krc_sq_ent *sq;		/* in posting order, sq_size entries */
	u32 sq_size;
	u32 sq_head;			/* free-running */
	u32 sq_tail;
	u64 sq_bytes;			/* bytes of the posted VQ requests */
	struct list_head vqs;		/* VQs bound to it */
	struct krc_vqueue *culprit;	/* whose request broke it */
	struct krc_sq_ent *rec;		/* entries waiting for recovery */
	u32 nrec;
	u32 high_inflight;		/* ledger entries of high VQs (prio.c) */
	unsigned long high_until;	/* jiffies: yields to high until */
};

/*
 * What the data layer registered (krc_conn_set_ops(), before any
 * connection exists). Contexts: complete and recv with conn->cq_lock
 * held, in any context; the others in process context.
 */
struct krc_conn_ops {
	/* A VQ request's completion (a cookie with a VQ id). */
	void (*complete)(struct krc_conn *conn, struct ib_wc *wc);
	/* A receive of the shared receive queue (a two-sided message). */
	void (*recv)(struct krc_conn *conn, struct ib_wc *wc);
	/* @conn failed: its requests and VQs go elsewhere (recover_work). */
	void (*recover)(struct krc_conn *conn);
	/* @conn's QP is destroyed: what is still on its ledger completes. */
	void (*gone)(struct krc_conn *conn);
	/* The RC cap closes @conn: its VQs go on over datagrams (0), or -EBUSY. */
	int (*move_vqs)(struct krc_conn *conn);
	/* A peer's datagram state: its VQs on it, stop it, free it. */
	u32 (*peer_dg_vqs)(struct krc_peer *peer);
	void (*peer_stop)(struct krc_peer *peer);
	void (*peer_free)(struct krc_peer *peer);
	/* A FLOW_ASK or FLOW_GRANT from @peer (process context). */
	void (*flow_msg)(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
	/* A MEM_* message from @peer (process context). */
	void (*mem_msg)(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
	/*
	 * @peer's incarnation @incarnation is gone (it said goodbye, or a
	 * card of a new one arrived); process context.
	 */
	void (*peer_forget)(struct krc_peer *peer, u64 incarnation);
};

/* Per-peer counters for operators (KRCORE_IOC_PEER_STATS, peer.c). */
enum krc_peer_stat {
	KRC_PS_WR_POSTED,
	KRC_PS_WR_BYTES,
	KRC_PS_WR_ERRORS,
	KRC_PS_WR_REPOSTED,
	KRC_PS_WR_NOT_EXECUTED,
	KRC_PS_WR_TIMEOUTS,
	KRC_PS_CONN_ERRORS,
	KRC_PS_RECOVERIES,
	KRC_PS_DG_SENT,
	KRC_PS_DG_RETRANSMITS,
	KRC_PS_DG_SWITCHES,
	KRC_NR_PS
};

struct krc_peer {
	struct hlist_node hnode;	/* krc_peers, under krc_peers_lock */
	struct kref ref;
	u8 gid[16];
	bool local;			/* the peer is this node */
	bool dead;			/* removed from the table */
	struct mutex connect_lock;	/* one connect at a time per peer */
	spinlock_t lock;		/* card, conns, ah */
	struct krcore_card card;
	bool card_valid;
	struct krc_ah *ah;		/* to the peer's control QP */
	struct list_head conns;
	u32 nconns;
	u32 rr;				/* round robin among conns */
	/* pool growth in the background; again later after a failure */
	struct delayed_work grow_work;
	u8 grow_fails;			/* failed growths in a row */
	struct work_struct verify_work;	/* re-read the card after an error */
	struct work_struct free_work;	/* the last put, in process context */
	atomic64_t qconnects;
	atomic64_t handshakes;
	atomic64_t stats[KRC_NR_PS];	/* enum krc_peer_stat */
	atomic_t half_open;		/* its HALF_OPEN connections */
	/* the datagram transport (data/), made on first use */
	struct krc_dg_tx *dgtx;		/* our requests to it */
	struct krc_dg_rx *dgrx;		/* its requests to us */
	unsigned long verify_after;	/* jiffies: next check of a sender (source.c) */
	unsigned long rc_retry_after;	/* jiffies: the RC cap refused one */
};

/* Count @n of @what for @peer (which may be NULL: a spare connection). */
static inline void krc_peer_count(struct krc_peer *peer,
				  enum krc_peer_stat what, u64 n)
{
	if (peer)
		atomic64_add(n, &peer->stats[what]);
}

/* conn.c: one connection */
extern const struct krc_conn_ops *krc_conn_ops;	/* the data layer's */
int krc_conn_layer_init(void);
void krc_conn_layer_exit(void);
void krc_conn_set_ops(const struct krc_conn_ops *ops);
void krc_conn_use_srq(struct ib_srq *srq);	/* receives of pooled QPs */
struct krc_conn *krc_conn_create(void);
void krc_conn_put(struct krc_conn *conn);
void krc_conn_kill(struct krc_conn *conn);
bool krc_conn_usable(struct krc_conn *conn);
int krc_conn_rtr_rts(struct krc_conn *conn, const struct krcore_card *peer,
		     u32 remote_qpn, u32 remote_psn);
void krc_conn_set_error(struct krc_conn *conn);
void krc_conn_fail(struct krc_conn *conn);
void krc_conn_fail_async(struct krc_conn *conn);
int krc_conn_post_kop(struct krc_conn *conn, struct krc_kop *kop,
		      struct ib_send_wr *wr);
int krc_conn_read(struct krc_conn *conn, struct krc_kop *kop, u64 raddr,
		  u32 rkey, u32 len);

/* spares.c: RC QPs in INIT, made ahead of handshakes */
void krc_spares_init(void);
struct krc_conn *krc_spare_take(unsigned long timeout_ms);
void krc_spares_refill(void);
void krc_spares_fill(void);
int krc_spares_count(void);
void krc_spares_drain(void);

/* loopback.c: connections to this node */
int krc_loopback_start(void);
void krc_loopback_stop(void);
/* A new connection in the pool of the node's own peer (a reference). */
struct krc_conn *krc_loopback_connect(void);
/* A connection to this node in no pool (a reference): the caller's own. */
struct krc_conn *krc_conn_loopback(void);

/* watchdog.c: every connection, watched */
int krc_watchdog_init(void);
void krc_watchdog_exit(void);
void krc_conn_track(struct krc_conn *conn);
void krc_conn_untrack(struct krc_conn *conn);
struct krc_conn *krc_conn_find_id(u32 id);
/*
 * Up to @max connections for which @match (called under conn->lock) is
 * true, each with a reference, in @out; returns how many.
 */
int krc_conns_collect(bool (*match)(struct krc_conn *conn, const void *arg),
		      const void *arg, struct krc_conn **out, int max);

/* handshake.c */
struct krc_hs_opts {
	unsigned long deadline;		/* in: jiffies */
	bool verify_card;		/* in: the card came from the cache */
	u32 attempts;			/* out: requests sent */
	u32 reads;			/* out: MetaServer READs */
	bool looked_up;			/* out: the card was READ again */
	bool refreshed;			/* out: ... and had changed */
	int lookup_error;		/* out: why it could not be READ */
	/* out, ns: spare QP taken, AH + first REQ posted, first REQ to
	 * the answer (repeats included), our RTR + RTS
	 */
	u64 t_spare, t_send, t_rtt, t_qp;
};

int krc_hs_connect(struct krc_peer *peer, struct krc_hs_opts *o,
		   struct krc_conn **connp);
void krc_hs_recv(const struct krc_ctrl_msg *msg);
bool krc_hs_recv_fast(const struct krc_ctrl_msg *msg);
void krc_hs_fill(struct krc_ctrl_msg *msg, u8 type, u64 req_id);
void krc_hs_rtu_work(struct work_struct *work);
void krc_hs_half_open_done(struct krc_conn *conn);
void krc_hs_exit(void);
void krc_hs_goodbye_all(void);

/*
 * evict.c: the RC cap. RC connections of this node to other nodes, made
 * or being made, at most rc_max (0: no cap). A new one takes a place
 * first; to get one, the least recently used idle connection is closed
 * (a close handshake with its peer) and its VQs go on over datagrams.
 */
extern atomic_t krc_rc_conns;
int krc_rc_reserve(struct krc_peer *peer, bool may_evict,
		   unsigned long deadline);
void krc_rc_unreserve(void);
void krc_rc_counted(struct krc_conn *conn);
void krc_rc_uncount(struct krc_conn *conn);
void krc_rc_evict_async(void);
void krc_rc_on_close_req(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
void krc_rc_on_close_rep(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
void krc_rc_exit(void);

/* peer.c: peers and their pools */
struct krc_peer *krc_peer_get(const u8 gid[16], bool create);
void krc_peer_put(struct krc_peer *peer);
void krc_peer_set_card(struct krc_peer *peer, const struct krcore_card *card);
/* The AH to @peer's control QP (a reference), its QPN and QKey. */
struct krc_ah *krc_peer_ah_get(struct krc_peer *peer, u32 *qpn, u32 *qkey);
/* Send @msg to @peer's control QP (its card must be valid); process context. */
int krc_peer_send(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
void krc_peer_forget_incarnation(struct krc_peer *peer, u64 incarnation);
int krc_peer_attach(struct krc_peer *peer, struct krc_conn *conn);
bool krc_peer_detach(struct krc_conn *conn);
void krc_peer_suspect(struct krc_peer *peer);
struct krc_conn *krc_peer_pick(struct krc_peer *peer);
struct krc_conn *krc_peer_find_conn(struct krc_peer *peer, u32 qpn,
				    u32 remote_qpn, u64 remote_incarnation);
/* A usable connection to @peer: pooled, else a new one (may handshake). */
struct krc_conn *krc_peer_connect_any(struct krc_peer *peer);
int krc_peer_fill_info(u32 index, struct krcore_peer_info *info);
int krc_peer_fill_stats(u32 index, struct krcore_peer_stats *st);
void krc_peers_count(u32 *peers, u32 *conns);
void krc_peers_drop_all(void);
struct krc_peer **krc_peers_snapshot(void);
void krc_peer_prewarm(const struct krcore_card *card);
void krc_peer_grow(struct krc_peer *peer);
void krc_peer_put_unless_known(struct krc_peer *peer);
int krc_peer_refresh(struct krc_peer *peer, u32 *reads);
void krc_peer_card_copy(struct krc_peer *peer, struct krcore_card *card);

/* source.c: checking a sender whose card we do not hold */
void krc_src_init(void);
int krc_src_lookup(struct krc_peer *peer, const u8 gid[16],
		   struct krcore_card *card, u32 *reads);
void krc_src_miss(const u8 gid[16]);

#endif /* KRC_CONN_H */
