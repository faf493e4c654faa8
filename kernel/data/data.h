/* SPDX-License-Identifier: GPL-2.0 */
/*
 * data/data.h - the data path, the top layer: /dev/krcore, whose every
 * open is a virtual queue (VQ), the processes behind them and their
 * memory registrations, the requests they post on pooled connections
 * (conn/) or as datagrams over the control QP (control/), completions,
 * two-sided messages and the recovery of a failed shared QP.
 *
 *   krc_proc     a process (an address space) using krcore: its memory
 *                registrations and its share of the node's queues. One
 *                reference per VQ of it; goes with its last VQ.
 *   krc_umr      one memory registration of a process; freed (RCU) when
 *                deregistered and no request uses it any more (inflight).
 *   krc_vqueue   one per open of /dev/krcore. References: the file's, the
 *                connection's list while bound, recovery's and the RC
 *                cap's while they move it; the last put frees it.
 *
 * A request goes: ioctl.c (QPUSH) -> send.c (checked against the kernel's
 * own copies, common/wr_check.h) -> a pooled RC QP (conn/) or dg_tx.c
 * (answered: dg_ack.c) -> complete.c (the VQ's completion ring). The data
 * layer registers its handlers with the layers below at load
 * (krc_data_init()): struct krc_conn_ops with conn/, the datagram handler
 * with control/ctrl.c.
 *
 * Locks, outermost first: vq->lock (a VQ's calls; a mutex) > vq->map_lock
 * is never held with it; vq->lock > proc->lock (registrations) >
 * vq->dlock > proc->ilock; vq->dlock > conn->lock (conn/conn.h); a
 * datagram stream's lock (dg_tx/dg_rx) > vq->dlock; vq->rlock (receive
 * ring and its flow control, flow.c) is a leaf, and so are
 * krc_flows_lock > a sender flow's lock. Completions run with conn->cq_lock held and take
 * conn->lock, then vq->dlock.
 */
#ifndef KRC_DATA_H
#define KRC_DATA_H

#include <linux/mm_types.h>
#include <linux/xarray.h>

#include "conn/conn.h"
#include "dgram.h"
#include "order.h"
#include "wr_check.h"

struct mem_cgroup;
struct krc_dp_spare;

/* A user's connect timeout is capped: a connect never waits longer. */
#define KRC_CONNECT_TIMEOUT_MAX_MS	60000

/*
 * A process (an address space) using krcore: its memory registrations,
 * usable by all its VQs. Goes with its last VQ.
 */
struct krc_proc {
	struct hlist_node hnode;	/* krc_procs, by mm */
	struct list_head idle_node;	/* idle: no VQ left (mr.c) */
	unsigned long idle_since;	/* jiffies */
	struct krc_vqueue *spare_vq;	/* its last VQ's memory (xchg) */
	struct kref ref;
	struct mm_struct *mm;		/* the key (mmgrab'ed) */
	struct mutex lock;		/* registrations */
	struct xarray mrs;		/* lkey -> struct krc_umr */
	struct xarray rkeys;		/* rkey -> struct krc_umr (remote access) */
	struct xarray lmrs;		/* handle -> remote region held (lmr.c) */
	struct xarray locks;		/* handle -> lock held (lock.c) */
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
	atomic_t high_vqs;		/* its VQs of KRCORE_PRIO_HIGH (prio.c) */
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

/* Scratch space of one qpush batch (KRC_PUSH_BATCH requests). */
#define KRC_PUSH_BATCH	16

union krc_ib_wr {
	struct ib_send_wr send;
	struct ib_rdma_wr rdma;
	struct ib_atomic_wr atomic;
};

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
	u8 prio;			/* enum krcore_prio, under lock (prio.c) */
	/* its requests waiting for the stream (dgram.c, its lock) */
	struct list_head dg_queue;
	struct list_head dg_active;	/* on the stream's active VQs */
	u32 port;
	struct list_head conn_node;	/* on conn->vqs */
	struct list_head all_node;	/* on the list of open VQs (vq.c) */
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
	/* or the ring is the process's own memory (ABI 14), pinned */
	struct page **uring_pages;	/* uring_inline, or kcalloc'ed */
	struct page *uring_inline[4];	/* the default depth's 3 pages */
	u32 uring_npages;
	u64 uring_addr;
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
	/* the data plane is charged to it (a reference; dp_cache.c) */
	struct mem_cgroup *memcg;
	struct krc_dp_spare *spare;	/* its entry in the cache, kept */
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
	struct krc_flow_in *flow_in;	/* its slots lent to senders (rlock) */
	struct krc_flow_out *flow;	/* where its messages go (flow.c) */
	/*
	 * The flow's refusals when this VQ first sent (flow_sent): a VQ
	 * that talked to a port's process is refused for good once that
	 * process is gone, like a reset connection (a new VQ reaches the
	 * port's next process). Under vq->lock.
	 */
	u32 flow_refusals;
	bool flow_sent;
};

/* flow.c: flow control of two-sided messages (common/flow.h) */
struct krc_flow_in;
struct krc_flow_out;
struct krcore_flow_wait;
int krc_flow_take(struct krc_vqueue *vq, const struct krcore_wr *wrs, int n,
		  u32 *reason);
void krc_flow_untake(struct krc_vqueue *vq, const struct krcore_wr *wrs,
		     int n);
long krc_flow_wait(struct krc_vqueue *vq, struct krcore_flow_wait *w);
int krc_flow_prefetch(struct krc_vqueue *vq);
__poll_t krc_flow_poll(struct krc_vqueue *vq, struct file *file,
		       poll_table *wait);
int krc_flow_in_create(struct krc_vqueue *vq, u16 port, u32 slots);
void krc_flow_in_destroy(struct krc_vqueue *vq);
int krc_flow_arrive(struct krc_vqueue *vq, const u8 src_gid[16], u32 *slot);
void krc_flow_consumed(struct krc_vqueue *vq);
void krc_flow_msg(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
void krc_flow_peer_stop(struct krc_peer *peer);
void krc_flow_peer_free(struct krc_peer *peer);

/* ioctl.c: a VQ call that uses the device enters the node's gate */
int krc_vq_enter(struct krc_vqueue *vq);

/*
 * lmr.c: a call to the owner of remote memory (MEM_* and its answer),
 * sent again until answered or late.
 */
struct krc_lmr_call {
	struct list_head node;		/* krc_lmrc.calls, until answered */
	struct list_head gone;		/* off the list, ended by a worker */
	refcount_t ref;			/* the list's, the waiter's */
	struct krc_peer *peer;		/* the owner (a reference) */
	struct krc_ctrl_msg msg;	/* what is sent */
	unsigned long next_send;	/* jiffies */
	unsigned long deadline;		/* jiffies */
	unsigned int rto_ms;
	bool answered;
	struct krc_ctrl_msg rep;	/* the answer */
	struct completion done;		/* answered or timed out */
};

struct krc_lmr_call *krc_lmr_call(struct krc_peer *peer,
				  const struct krc_ctrl_msg *msg,
				  unsigned int timeout_ms, bool waited);
int krc_lmr_wait(struct krc_lmr_call *c);
void krc_lmr_call_put(struct krc_lmr_call *c);
struct krc_peer *krc_lmr_owner(const u8 gid[16]);
struct krc_lmr_call *krc_lmr_call_owner(const u8 gid[16],
					const struct krc_ctrl_msg *msg,
					u32 timeout_ms);
int krc_lmr_ask(struct krc_vqueue *vq, const u8 gid[16],
		const struct krc_ctrl_msg *msg, u32 timeout_ms,
		struct krc_ctrl_msg *rep);
int krc_lmr_ask_gated(const u8 gid[16], const struct krc_ctrl_msg *msg,
		      u32 timeout_ms, struct krc_ctrl_msg *rep);

/*
 * lmr.c: a region a process holds (proc->lmrs): one it allocated, or one
 * it looked up by name (lmr_name.c), which is not its to free.
 */
struct krc_lmr_handle {
	u8 gid[16];
	u64 owner_inc;
	u32 region;
	u32 access;
	u64 length;
	u32 rkey;			/* looked up: the name's key, else 0 */
	bool named;			/* looked up */
};

int krc_lmr_keep_handle(struct krc_proc *proc, const struct krc_lmr_handle *src,
			u32 *handle);

/* lmr.c, lmr_host.c: remote memory regions held here, owned here */
long krc_ioc_lmr_alloc(struct krc_vqueue *vq, void __user *uarg);
long krc_ioc_lmr_free(struct krc_vqueue *vq, void __user *uarg);
long krc_ioc_lmr_set(struct krc_vqueue *vq, void __user *uarg);
long krc_ioc_lmr_copy(struct krc_vqueue *vq, void __user *uarg);
u32 krc_lmr_count(struct krc_proc *proc);
void krc_lmr_proc_release(struct krc_proc *proc);
void krc_lmr_msg(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
void krc_lmr_start(void);
void krc_lmr_stop(void);
void krc_lmrh_msg(struct krc_peer *peer, const struct krc_ctrl_msg *msg);
struct krc_lmr_region;
struct krc_lmr_region *krc_lmrh_remote_get(u32 rkey, u64 addr, u64 len,
					   u32 access);
void krc_lmrh_put(struct krc_lmr_region *r);
void krc_lmrh_peer_forget(struct krc_peer *peer, u64 incarnation);
void krc_lmrh_start(void);
void krc_lmrh_stop(void);
int krc_lmrh_lockable(u32 id, u32 rkey, u64 off);
bool krc_lmrh_is_key(u32 rkey);

/* prio.c: priority classes on shared connections */
long krc_ioc_qprio(struct krc_vqueue *vq, void __user *uarg);
u32 krc_prio_max_msg(void);
void krc_prio_vq_gone(struct krc_vqueue *vq);
void krc_prio_retire(struct krc_conn *conn, const struct krc_sq_ent *e);
int krc_prio_admit(struct krc_conn *conn, struct krc_vqueue *vq,
		   const u16 *slots, int n, u32 *reason, unsigned long now);

/* lock.c, lock_host.c: locks held here, on regions owned here */
long krc_ioc_lock(struct krc_vqueue *vq, void __user *uarg);
long krc_ioc_unlock(struct krc_vqueue *vq, void __user *uarg);
void krc_lock_orphan(struct krc_peer *peer, const struct krc_ctrl_msg *m);
void krc_lock_proc_release(struct krc_proc *proc);
void krc_lockh_msg(struct krc_peer *peer, const struct krc_ctrl_msg *msg);

/* name_table.c: the names table of the node area (common/names.h) */
int krc_names_reserve(const char name[KRC_NAME_LEN], const u8 holder[16],
		      u32 *slot);
void krc_names_write(u32 slot, const struct krc_name_entry *e);
void krc_names_drop(u32 slot);
void krc_names_reset(void);
int krc_names_lookup(const char name[KRC_NAME_LEN], struct krc_name_entry *e);

/* lmr_name.c: names of regions, published, revoked and looked up */
long krc_ioc_lmr_publish(struct krc_vqueue *vq, void __user *uarg,
			 bool publish);
long krc_ioc_lmr_lookup(struct krc_vqueue *vq, void __user *uarg);
void krc_lockh_region_gone(u32 id, u32 rkey);
void krc_lockh_forget(const u8 gid[16], u64 inc);
void krc_lockh_sweep(const struct krc_members_view *v);
void krc_lockh_stop(void);

/* vq.c: the life of a VQ, /dev/krcore */
void krc_data_init(void);	/* its handlers, registered below */
int krc_chardev_init(void);
void krc_chardev_exit(void);
void krc_vq_get(struct krc_vqueue *vq);
void krc_vq_put(struct krc_vqueue *vq);
void krc_vq_closed_idle(struct krc_vqueue *vq);
bool krc_vq_attach(struct krc_vqueue *vq, struct krc_conn *conn);
/* Off its connection or datagram path, its peer let go (vq->lock held). */
void krc_vq_unbind(struct krc_vqueue *vq);
/* The first VQ bound to @conn, with a reference (NULL: none). */
struct krc_vqueue *krc_conn_first_vq(struct krc_conn *conn);
void krc_vqs_disassociate(void);
void *krc_ring_alloc(size_t size);
bool krc_vq_connected(struct krc_vqueue *vq);
bool krc_vq_ready(struct krc_vqueue *vq, struct krcore_qwait *w);

/* ioctl.c: the ioctls of a VQ's file */
long krc_vq_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* connect.c: how a VQ reaches a node (qconnect, lookup) */
int krc_connect(const u8 gid[16], unsigned long timeout_ms,
		struct krcore_qconnect *qc, struct krc_peer **peerp,
		struct krc_conn **connp);
int krc_connect_lookup(const u8 gid[16], u32 flags, struct krcore_lookup *lk);
void krc_connect_kick_rc(struct krc_peer *peer);

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
void krc_procs_idle_drain(void);
struct krc_vqueue *krc_proc_take_vq(struct krc_proc *proc);
bool krc_proc_keep_vq(struct krc_proc *proc, struct krc_vqueue *vq);
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
int krc_vq_dp_ring(struct krc_vqueue *vq, u64 addr, u32 len, u32 *need);
void krc_vq_dp_unmap(struct krc_vqueue *vq);
void krc_vq_dp_free(struct krc_vqueue *vq);

/* dp_cache.c: the data planes of closed VQs, for the next qconnect */
bool krc_dp_cache_take(struct krc_vqueue *vq, u32 depth,
		       struct ib_device *ibdev, struct mem_cgroup *memcg);
bool krc_dp_cache_give(struct krc_vqueue *vq);
struct krc_dp_spare *krc_dp_spare_alloc(void);
void krc_dp_cache_open(void);
void krc_dp_cache_close(void);
void krc_dp_cache_init(void);

/* recv.c: two-sided messages */
int krc_recv_start(struct krc_node *node);
void krc_recv_stop(struct krc_node *node);
void krc_recv_dispatch(struct krc_conn *conn, struct ib_wc *wc);
void krc_recv_deliver_port(const u8 src_gid[16], u8 opcode,
			   const struct krc_data_hdr *h, const void *data,
			   u32 len);
int krc_vq_bind_port(struct krc_vqueue *vq, u32 port, u32 *ring_size);
void krc_vq_unbind_port(struct krc_vqueue *vq);
void krc_vq_free_port(struct krc_vqueue *vq);
/* The VQ bound to @port, with a reference (NULL: none). */
struct krc_vqueue *krc_port_vq_get(u32 port);

/* recovery.c: VQs leaving a connection (recovery, the RC cap's close) */
void krc_recover(struct krc_conn *conn);
int krc_vqs_to_dgram(struct krc_conn *conn);
void krc_conns_fail_using(const struct krc_mr_view *view);

/* dgram.c and dg_*.c: the datagram transport of VQs */
int krc_dg_open(struct krc_peer *peer);
void krc_dg_vq_join(struct krc_vqueue *vq);
void krc_dg_vq_leave(struct krc_vqueue *vq);
u32 krc_dg_vqs(struct krc_peer *peer);
u64 krc_dg_requests(struct krc_peer *peer);
int krc_dg_push(struct krc_vqueue *vq, const u16 *slots, int n, u32 *reason);
void krc_dg_vq_abandon(struct krc_vqueue *vq);
int krc_dg_start(void);
void krc_dg_exit(void);
void krc_dg_exec_stop(void);
void krc_dg_recv(const u8 gid[16], u32 src_qp, const u8 *buf, size_t len);
void krc_dg_peer_stop(struct krc_peer *peer);
void krc_dg_peer_free(struct krc_peer *peer);

#endif /* KRC_DATA_H */
