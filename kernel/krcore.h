/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krcore.h - types shared by the files of krcore.ko.
 *
 * Object model:
 *   krc_device   one per RDMA device (ib_client context): PD and ports.
 *   krc_port     one per port: attributes, the RoCE v2 GID, netdev MAC.
 *   krc_node     this node's control plane, on the primary port: its card,
 *                control UD QP, spare QPs, node page, MetaServer client
 *                (and table, if it hosts one).
 *   krc_peer     a node this node knows: its cached card and the pool of RC
 *                connections to it, shared by every VQ of this node.
 *   krc_conn     one pooled RC connection (QP + CQ).
 *   krc_vq       one per open of /dev/krcore (a virtual queue).
 *   krc_kop      a kernel-issued work request waited for synchronously.
 */
#ifndef KRC_KRCORE_H
#define KRC_KRCORE_H

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
#include "cookie.h"
#include "dgram.h"
#include "meta_table.h"
#include "order.h"
#include "proto.h"
#include "wr_check.h"
#include "stats.h"

#define KRC_VERSION	"0.3.0"

struct krc_device;
struct krc_peer;
struct krc_ctrl;
struct krc_meta_host;
struct krc_meta_client;
struct krc_srq;
struct krc_dg_tx;
struct krc_dg_rx;

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

/*
 * A kernel-issued work request (a MetaServer lookup, a probe, a memory
 * registration): posted, then waited for. Its completion may arrive after
 * the waiter gave up, so it is reference counted (waiter + the posted WR).
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
/* ib_cqe done callback of kops posted on CQs that ib_core polls. */
void krc_kop_cqe_done(struct ib_cq *cq, struct ib_wc *wc);

/* A DMA-mapped buffer for the kernel's own SEND/RECV messages. */
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
 * A process (an address space) using krcore: its memory registrations,
 * usable by all its VQs. Goes with its last VQ.
 */
struct krc_proc {
	struct hlist_node hnode;	/* krc_procs, by mm */
	struct kref ref;
	struct mm_struct *mm;		/* the key (mmgrab'ed) */
	struct mutex lock;		/* registrations */
	struct xarray mrs;		/* lkey -> struct krc_umr */
	struct xarray rkeys;		/* rkey -> struct krc_umr (remote access) */
	atomic_t nvqs;			/* its open VQs (max_vqs_per_proc) */
	/*
	 * Its requests outstanding on every path, all its VQs together
	 * (proc_max_wrs, proc_max_bytes: its share of shared queues);
	 * under ilock, taken inside a VQ's dlock.
	 */
	spinlock_t ilock;
	u32 wrs;
	u64 bytes;
	atomic_t nports;		/* its bound ports */
	/* shared connections it broke (remote errors), for throttling */
	atomic_t breaks;
	unsigned long break_start;	/* jiffies: the window's start */
	unsigned long throttled_until;	/* jiffies */
};

struct krc_umr {
	struct krc_mr_view view;	/* what the request check sees */
	struct ib_mr *ibmr;
	struct krc_proc *proc;
	/*
	 * With LOCAL_WRITE: its pages, pinned at registration, for what
	 * the kernel writes into it itself (datagram READ and atomic
	 * results): the registered pages, never the process's mapping of
	 * the day. pg_start: view.addr rounded down to a page.
	 */
	struct page **pages;
	unsigned long npages;
	u64 pg_start;
	atomic_t inflight;		/* requests using it */
	bool dying;			/* being deregistered */
	struct rcu_head rcu;
};

/*
 * A request on the send queue of a shared QP, in posting order. RC
 * completes requests in order, so a completion retires every entry up to
 * its own, signaled or not.
 */
struct krc_sq_ent {
	u64 cookie;			/* the hardware wr_id */
	struct krc_vqueue *vq;
	u16 slot;
	u32 len;			/* bytes it moves (the watchdog's rate) */
};

/* One outstanding request of a VQ. */
struct krc_slot {
	u32 gen;			/* cookie generation */
	bool busy;
	bool done;			/* completed, waiting for the ones before */
	u32 status;			/* its completion, once done */
	u32 byte_len;
	struct krcore_wr wr;		/* as posted: re-posted by recovery */
	struct krc_umr *mrs[KRCORE_MAX_SGE];
	u32 len;			/* bytes it moves */
	/* the datagram path (dgram.c), under the stream's lock */
	struct list_head dg_node;	/* on its VQ's dg_queue, or failed */
	struct krc_vqueue *dg_vq;
	u32 dg_off;			/* bytes already sent */
	u32 dg_err;			/* the first failure: the request's status */
	u32 dg_inflight;		/* its datagrams in the window */
	u32 dg_last_seq;		/* the last one sent */
};

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
	atomic_t outstanding;		/* WRs posted, not completed */
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
	/* RTU retransmission (initiator side) */
	struct delayed_work rtu_work;
	int rtu_tries;
	bool rtu_acked;
	bool half_open_counted;		/* in the half-open caps (handshake.c) */
	bool rc_counted;		/* in krc_rc_conns (evict.c) */
	bool closing;			/* being closed (the RC cap): no new VQ */
	unsigned long last_post;	/* jiffies: last request posted */
	/* data plane, under lock */
	struct krc_sq_ent *sq;		/* in posting order, sq_size entries */
	u32 sq_size;
	u32 sq_head;			/* free-running */
	u32 sq_tail;
	struct list_head vqs;		/* VQs bound to it */
	bool failing;			/* QP in error: recovery owns it */
	struct krc_vqueue *culprit;		/* whose request broke it */
	unsigned long progress;		/* jiffies: last completion (watchdog) */
	u64 sq_bytes;			/* bytes of the posted VQ requests */
	struct krc_sq_ent *rec;		/* entries waiting for recovery */
	u32 nrec;
	struct work_struct recover_work;
	wait_queue_head_t drain_wq;	/* sq emptied (recovery) */
	struct list_head all_node;	/* krc_conns, for the watchdog */
};

/* An address handle to a peer's control QP, shared by in-flight sends. */
struct krc_ah {
	struct kref ref;
	struct ib_ah *ah;
	u8 mac[ETH_ALEN];
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
	struct work_struct grow_work;	/* pool growth in the background */
	struct work_struct verify_work;	/* re-read the card after an error */
	struct work_struct free_work;	/* the last put, in process context */
	atomic64_t qconnects;
	atomic64_t handshakes;
	atomic64_t stats[KRC_NR_PS];	/* enum krc_peer_stat */
	atomic_t half_open;		/* its HALF_OPEN connections */
	/* the datagram transport (dgram.c), made on first use */
	struct krc_dg_tx *dgtx;		/* our requests to it */
	struct krc_dg_rx *dgrx;		/* its requests to us */
	unsigned long verify_after;	/* jiffies: next check of a sender (source.c) */
	unsigned long rc_retry_after;	/* jiffies: the RC cap refused one */
};

/* The node's control plane (node.c). */
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
	struct krc_conn *self;		/* loopback connection */
	struct krc_conn *exec;		/* executor of datagram requests */
	struct mutex exec_lock;		/* replacing it */
	struct krc_peer *self_peer;
	/* the node page: our card, readable by peers (probes) */
	void *page;
	u64 page_dma;
	struct ib_mr *page_mr;
	struct krc_meta_host *meta_host;
	struct krc_meta_client *meta;
	struct krc_srq *srq;		/* receives of every pooled QP */
	struct workqueue_struct *wq;	/* control plane work */
};

extern struct krc_node krc_node;

/* A user's connect timeout is capped: a connect never waits longer. */
#define KRC_CONNECT_TIMEOUT_MAX_MS	60000

/* Scratch space of one qpush batch (KRC_PUSH_BATCH requests). */
#define KRC_PUSH_BATCH	16

union krc_ib_wr {
	struct ib_send_wr send;
	struct ib_rdma_wr rdma;
	struct ib_atomic_wr atomic;
};

/* A SEND's SGEs: the kernel's header, then the user's. */
#define KRC_MAX_HW_SGE	(KRCORE_MAX_SGE + 1)

struct krc_push_scratch {
	struct krcore_wr uwr[KRC_PUSH_BATCH];
	union krc_ib_wr wr[KRC_PUSH_BATCH];
	struct ib_sge sge[KRC_PUSH_BATCH][KRC_MAX_HW_SGE];
	u16 slot[KRC_PUSH_BATCH];
};

/*
 * A virtual queue: one per open file of /dev/krcore. Its memory goes with
 * the last reference: the file's, or recovery's while it moves the VQ.
 */
struct krc_vqueue {
	struct kref ref;
	struct mutex lock;		/* serialises the VQ's requests */
	bool gone;			/* its device went away: ENODEV */
	pid_t owner_tgid;
	u32 id;				/* in krc_vqs; the cookies' VQ id */
	struct mm_struct *mm;		/* the opener's address space */
	struct krc_proc *proc;
	struct krc_conn *conn;		/* after qconnect, a reference */
	struct krc_peer *peer;		/* after qconnect, a reference */
	bool dgram;			/* on the datagram path of peer */
	/* its requests waiting for the stream (dgram.c, its lock) */
	struct list_head dg_queue;
	struct list_head dg_active;	/* on the stream's active VQs */
	u32 port;
	struct list_head conn_node;	/* on conn->vqs */
	/* data plane, allocated at qconnect; dlock guards what follows */
	spinlock_t dlock;
	u32 depth;			/* outstanding requests allowed */
	u32 inflight;
	bool closing;			/* no completion is written any more */
	bool close_pending;		/* closed: the last completion frees it */
	struct work_struct close_work;
	struct krc_slot *slots;
	u16 *free;			/* stack of free slot numbers */
	u32 nfree;
	/*
	 * The busy slots in the order they were posted: completions reach
	 * the ring in that order even when recovery re-posts requests on
	 * several connections (complete.c).
	 */
	struct krc_order order;
	void *ring_mem;			/* vmalloc_user: header, then entries */
	size_t ring_size;
	/*
	 * mmap() finds the rings under map_lock alone, never vq->lock (which
	 * is held while user memory is touched: mmap_lock is taken outside
	 * ->mmap). They are published once complete, freed with the VQ.
	 */
	struct mutex map_lock;
	void *map_ring;
	void *map_rring;
	struct krcore_ring *ring;
	struct krcore_cqe *cqes;
	u32 entries;
	u32 prod;			/* the kernel's producer index */
	u64 recoveries;			/* the ring shows a copy */
	wait_queue_head_t wq;		/* completions; inflight reaching 0 */
	struct krc_push_scratch *scratch;
	struct krc_check_ctx check;	/* what the request check knows */
	u8 *hdrs;			/* per slot: the header of a SEND */
	u64 hdrs_dma;
	struct ib_device *dma_dev;	/* hdrs is mapped for it */
	u64 inflight_bytes;		/* bytes of the outstanding requests */
	/* two-sided: the bound port and its receive ring */
	u32 bound_port;
	spinlock_t rlock;		/* rprod, the ring's entries */
	void *rring_mem;
	size_t rring_size;
	struct krcore_recv_ring *rring;
	struct krcore_msg *rmsgs;
	u8 *rdata;
	u32 rprod;
	u32 rentries;			/* the kernel's copies of the geometry */
	u32 rslot;
	u32 rdropped;
};

/* Module parameters (main.c). */
extern char *krc_param_ibdev;
extern int krc_param_gid_index;
extern uint krc_param_node_id;
extern uint krc_param_pool_size;
extern uint krc_param_spare_qps;
extern uint krc_param_qp_depth;
extern uint krc_param_hs_timeout_ms;
extern uint krc_param_hs_retries;
extern uint krc_param_connect_timeout_ms;
extern bool krc_param_meta_host;
extern char *krc_param_meta_server;
extern uint krc_param_meta_port;
extern uint krc_param_meta_slots;
extern uint krc_param_vq_depth;
extern uint krc_param_srq_depth;
extern uint krc_param_wr_timeout_ms;
extern bool krc_param_prewarm;
extern uint krc_param_ctrl_qkey;
extern uint krc_param_max_vqs;
extern uint krc_param_max_vqs_per_proc;
extern uint krc_param_max_ports_per_proc;
extern uint krc_param_vq_qp_share;
extern uint krc_param_vq_max_bytes;
extern uint krc_param_proc_max_wrs;
extern uint krc_param_proc_max_bytes;
extern uint krc_param_wr_min_mbps;
extern uint krc_param_break_limit;
extern uint krc_param_break_window_ms;
extern uint krc_param_mr_drain_ms;
extern uint krc_param_max_peers;
extern uint krc_param_max_half_open;
extern uint krc_param_max_half_open_per_peer;
extern uint krc_param_meta_max_members;
extern uint krc_param_dg_policy;
extern uint krc_param_rc_max;
extern uint krc_param_rc_idle_ms;
extern uint krc_param_dg_rc_after;
extern uint krc_param_dg_rto_ms;
extern uint krc_param_dg_retries;
extern uint krc_param_dg_backlog;
extern int krc_fault_dg_drop_every;
extern int krc_fault_dg_dup_every;
extern int krc_fault_ctrl_drop_rx;
extern int krc_fault_ctrl_drop_type;
extern int krc_fault_goodbye_off;
extern int krc_fault_hs_bad_incarnation;
extern int krc_fault_ctrl_reset;
extern int krc_fault_meta_foreign_card;
extern int krc_fault_meta_bad_mac;
extern int krc_fault_leak_member;
extern int krc_fault_recover_delay_ms;
extern int krc_fault_close_delay_ms;
extern int krc_fault_dg_fail_after;
extern int krc_fault_dg_replay_old;
extern int krc_fault_dg_exec_delay_ms;
bool krc_fault_take(int *fault);
bool krc_fault_countdown(int *n);
void krc_fault_sleep(int *ms);

extern u64 krc_incarnation;
extern struct workqueue_struct *krc_wq;

/* device.c */
int krc_device_init(void);
void krc_device_exit(void);
void krc_device_put(struct krc_device *dev);
struct krc_port *krc_primary_get(void);	/* holds a device reference */
int krc_node_card(struct krcore_card *card);
int krc_port_info(u32 index, struct krcore_port_info *info);

/* node.c */
int krc_node_start(void);
void krc_node_stop(void);
void krc_node_device_removed(struct krc_device *dev);
void krc_node_kick(void);	/* start the control plane when possible */
void krc_node_fill_info(struct krcore_node_info *info);
int krc_node_enter(void);	/* -ENODEV, or the gate held for reading */
void krc_node_leave(void);
struct krc_conn *krc_node_loopback_connect(void);
/* The executor QP of datagram requests (a reference), rebuilt if broken. */
struct krc_conn *krc_node_exec_conn(void);
/* Register @npages of kernel memory (page_size each) for remote READ. */
struct ib_mr *krc_node_reg_mr(struct scatterlist *sg, int nents,
			      unsigned int page_size, int access);

/* conn.c */
int krc_conn_init(void);
void krc_spares_drain(void);
struct krc_conn *krc_conn_create(void);
void krc_conn_put(struct krc_conn *conn);
void krc_conn_kill(struct krc_conn *conn);
bool krc_conn_usable(struct krc_conn *conn);
struct krc_conn *krc_spare_take(unsigned long timeout_ms);
void krc_spares_refill(void);
void krc_spares_fill(void);
int krc_spares_count(void);
int krc_conn_rtr_rts(struct krc_conn *conn, const struct krcore_card *peer,
		     u32 remote_qpn, u32 remote_psn);
void krc_conn_set_error(struct krc_conn *conn);
struct krc_vqueue *krc_conn_first_vq(struct krc_conn *conn);
void krc_conn_fail(struct krc_conn *conn);
int krc_conn_post_kop(struct krc_conn *conn, struct krc_kop *kop,
		      struct ib_send_wr *wr);
int krc_conn_read(struct krc_conn *conn, struct krc_kop *kop, u64 raddr,
		  u32 rkey, u32 len);

/* ctrl.c: the control UD QP */
int krc_ctrl_start(struct krc_node *node);
void krc_ctrl_stop(struct krc_node *node);
int krc_ctrl_send(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
/* Post a datagram of the transport (dgram.c) on the control QP. */
int krc_ctrl_post_ud(struct ib_ud_wr *wr);
void krc_ctrl_ud_done(struct ib_cq *cq);

/* dgram.c: the datagram transport of VQs */
enum krc_dg_policy {
	KRC_DG_OFF	= 0,	/* no datagram path: qconnect handshakes */
	KRC_DG_RC_NOW	= 1,	/* datagrams at once, RC built at once */
	KRC_DG_RC_AFTER	= 2,	/* RC after dg_rc_after requests */
	KRC_DG_NEVER	= 3,	/* datagrams only */
};

int krc_dg_open(struct krc_peer *peer);
void krc_dg_vq_join(struct krc_vqueue *vq);
void krc_dg_vq_leave(struct krc_vqueue *vq);
u32 krc_dg_vqs(struct krc_peer *peer);
u64 krc_dg_requests(struct krc_peer *peer);
int krc_dg_push(struct krc_vqueue *vq, const u16 *slots, int n, u32 *reason);
void krc_dg_vq_abandon(struct krc_vqueue *vq);
void krc_dg_exit(void);
void krc_dg_recv(const u8 gid[16], u32 src_qp, const u8 *buf, size_t len);
void krc_dg_peer_stop(struct krc_peer *peer);
void krc_dg_peer_free(struct krc_peer *peer);

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

/*
 * The RC cap (evict.c): RC connections of this node to other nodes, made
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
int krc_rc_evict_id(u32 id);
void krc_rc_on_close_req(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
void krc_rc_on_close_rep(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
void krc_rc_exit(void);
void krc_hs_half_open_done(struct krc_conn *conn);
void krc_hs_exit(void);
void krc_hs_goodbye_all(void);

/* peer.c */
int krc_peer_init(void);
void krc_peer_exit(void);
struct krc_peer *krc_peer_get(const u8 gid[16], bool create);
void krc_peer_put(struct krc_peer *peer);
void krc_peer_set_card(struct krc_peer *peer, const struct krcore_card *card);
struct krc_ah *krc_peer_ah_get(struct krc_peer *peer, u32 *qpn, u32 *qkey);
void krc_ah_put(struct krc_ah *ah);
void krc_peer_forget_incarnation(struct krc_peer *peer, u64 incarnation);
int krc_peer_attach(struct krc_peer *peer, struct krc_conn *conn);
bool krc_peer_detach(struct krc_conn *conn);
void krc_peer_suspect(struct krc_peer *peer);
struct krc_conn *krc_peer_pick(struct krc_peer *peer);
struct krc_conn *krc_peer_find_conn(struct krc_peer *peer, u32 qpn,
				    u32 remote_qpn, u64 remote_incarnation);
int krc_peer_fill_info(u32 index, struct krcore_peer_info *info);
int krc_peer_fill_stats(u32 index, struct krcore_peer_stats *st);

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

/* Count @n of @what for @peer (which may be NULL: a spare connection). */
static inline void krc_peer_count(struct krc_peer *peer,
				  enum krc_peer_stat what, u64 n)
{
	if (peer)
		atomic64_add(n, &peer->stats[what]);
}

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

/* connect.c: how a VQ reaches a node (qconnect, lookup) */
int krc_connect(const u8 gid[16], unsigned long timeout_ms,
		struct krcore_qconnect *qc, struct krc_peer **peerp,
		struct krc_conn **connp);
int krc_connect_lookup(const u8 gid[16], u32 flags, struct krcore_lookup *lk);
void krc_connect_kick_rc(struct krc_peer *peer);

/* key.c: the cluster key (common/auth.h) */
int krc_key_load(void);
void krc_key_forget(void);
const u8 *krc_key(void);	/* NULL: none loaded */

/* meta_host.c: hosting the MetaServer table */
int krc_meta_host_start(struct krc_node *node);
void krc_meta_host_stop(struct krc_node *node);
int krc_meta_host_register(const struct krcore_card *card, u32 *slot);
int krc_meta_host_deregister(const struct krcore_card *card);
int krc_meta_host_where(struct krc_mt_geom *geom, u64 *addr, u32 *rkey);
void krc_meta_host_info(struct krcore_node_info *info);

/* meta_client.c: a member's view of its MetaServer */
int krc_meta_start(struct krc_node *node);
void krc_meta_stop(struct krc_node *node);
int krc_meta_lookup(const u8 gid[16], struct krcore_card *card, u32 *reads);
void krc_meta_info(struct krcore_node_info *info);

/* mr.c: processes and their memory registrations */
struct krc_proc *krc_proc_get(struct mm_struct *mm);
void krc_proc_put(struct krc_proc *proc);
int krc_mr_reg(struct krc_proc *proc, struct krcore_reg_mr *req);
int krc_mr_dereg(struct krc_proc *proc, u32 lkey);
const struct krc_mr_view *krc_mr_find(void *proc, u32 lkey);
bool krc_mr_hold(struct krc_umr *mr);
void krc_mr_put_inflight(struct krc_umr *mr);
bool krc_mr_remote_ok(struct krc_proc *proc, u32 rkey, u64 addr, u64 len,
		      u32 access);
/* Any process's registration of @rkey covering the range, held, or NULL. */
struct krc_umr *krc_mr_remote_get(u32 rkey, u64 addr, u64 len, u32 access);
int krc_mr_copy_in(struct krc_umr *mr, u64 addr, const void *src, u32 len);
void krc_procs_disassociate(void);
void krc_proc_note_break(struct krc_proc *proc);
bool krc_proc_throttled(struct krc_proc *proc);
void krc_proc_inflight_sub(struct krc_proc *proc, u32 wrs, u64 bytes);

/* send.c: posting */
int krc_vq_push(struct krc_vqueue *vq, const struct krcore_wr __user *uwrs,
		u32 count, struct krcore_qpush *res);
int krc_post_one(struct krc_conn *conn, struct krc_vqueue *vq, u16 slot);

/* complete.c: completions of VQ requests */
void krc_dp_dispatch(struct krc_conn *conn, struct ib_wc *wc);
void krc_dp_complete(struct krc_sq_ent *e, u32 status, u32 byte_len);
void krc_dp_conn_gone(struct krc_conn *conn);
bool krc_wc_is_process_fault(enum ib_wc_status st);
int krc_vq_dp_init(struct krc_vqueue *vq);
void krc_vq_dp_unmap(struct krc_vqueue *vq);
void krc_vq_dp_free(struct krc_vqueue *vq);

/* recv.c: two-sided messages */
struct krc_srq_buf {
	void *buf;
	u64 dma;
};

struct krc_srq {
	struct ib_srq *srq;
	u32 n;
	struct krc_srq_buf bufs[];
};

int krc_recv_start(struct krc_node *node);
void krc_recv_stop(struct krc_node *node);
void krc_recv_dispatch(struct krc_conn *conn, struct ib_wc *wc);
void krc_recv_deliver_port(const u8 src_gid[16], u8 opcode,
			   const struct krc_data_hdr *h, const void *data,
			   u32 len);
int krc_vq_bind_port(struct krc_vqueue *vq, u32 port, u32 *ring_size);
void krc_vq_unbind_port(struct krc_vqueue *vq);
void krc_vq_free_port(struct krc_vqueue *vq);

/* recovery.c */
void krc_conn_fail_async(struct krc_conn *conn);
void krc_recover_work(struct work_struct *work);
int krc_watchdog_init(void);
void krc_watchdog_exit(void);
void krc_conn_track(struct krc_conn *conn);
void krc_conns_fail_using(const struct krc_mr_view *view);
int krc_conns_fail_id(u32 id);
struct krc_conn *krc_conn_find_id(u32 id);
void krc_conn_untrack(struct krc_conn *conn);

/* vq.c */
int krc_chardev_init(void);
void krc_chardev_exit(void);
void krc_vq_get(struct krc_vqueue *vq);
void krc_vq_put(struct krc_vqueue *vq);
void krc_vq_closed_idle(struct krc_vqueue *vq);
bool krc_vq_attach(struct krc_vqueue *vq, struct krc_conn *conn);
void krc_vqs_disassociate(void);
void *krc_ring_alloc(size_t size);

#endif /* KRC_KRCORE_H */
