/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libkrcore.h - the user library of krcore.
 *
 * A thin layer over the ioctl ABI of /dev/krcore (include/uapi/krcore.h).
 * Every open of /dev/krcore is a virtual queue (VQ): a private reliable
 * connection for its process, multiplexed by the kernel onto physical QPs
 * it shares among all processes of the node.
 *
 * Errors: every function that can fail returns a negative errno value
 * (never sets errno as its only report). krc_errmsg() gives a sentence
 * about the last failure of the calling thread, with what to do about it.
 */
#ifndef LIBKRCORE_H
#define LIBKRCORE_H

#include <stddef.h>
#include <stdint.h>
/*
 * The UAPI, include/uapi/krcore.h: installed beside this header (in
 * PREFIX/include/krcore/), found first by this quoted include; in the
 * source tree through -Iinclude/uapi.
 */
#include "krcore.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The ABI version this library was built against (the tests build one for
 * a newer ABI with -DKRC_LIB_ABI_VERSION=N: the module must refuse it).
 */
#ifndef KRC_LIB_ABI_VERSION
#define KRC_LIB_ABI_VERSION	KRCORE_ABI_VERSION
#endif

struct krc_vq;

/*
 * Open a virtual queue. Checks that krcore.ko is loaded and, at the
 * process's first open, that it speaks ABI version >= KRC_LIB_ABI_VERSION
 * (-EPROTO otherwise).
 * Returns 0 and *vqp, or -ENOENT (module not loaded), -EACCES, -EPROTO...
 */
int krc_vq_open(struct krc_vq **vqp);

/* Close @vq; NULL is allowed. */
void krc_vq_close(struct krc_vq *vq);

/* The file descriptor of @vq (for poll(2) and the like). */
int krc_vq_fd(const struct krc_vq *vq);

/* The module's ABI and version, as read when @vq was opened. */
const struct krcore_version *krc_vq_version(const struct krc_vq *vq);

/*
 * The header of @vq's completion ring once connected (NULL before): its
 * geometry, and how often its connection was recovered (KRCORE_1.9).
 */
const struct krcore_ring *krc_vq_ring(const struct krc_vq *vq);

/* This node's address card. -ENODEV: no active RoCE port with a GID. */
int krc_query_card(struct krc_vq *vq, struct krcore_card *card);

/* krcore's view of RDMA port @index (0, 1, ...). -ENOENT past the last. */
int krc_query_port(struct krc_vq *vq, unsigned int index,
		   struct krcore_port_info *info);

/*
 * Connect @vq to the node at @addr (IPv4 text or GID text), for two-sided
 * use on @port later (0: none). The VQ then shares one of the RC
 * connections this node pools for that peer. @qc tells which path the
 * kernel took (enum krcore_path: pooled, card cached or looked up with one
 * READ of the MetaServer, handshake) and how long it took.
 * Errors: -ENXIO unknown node, -EHOSTUNREACH MetaServer unreachable and no
 * card cached, -ETIMEDOUT peer silent, -EISCONN already connected...
 *
 * The VQ's completion ring is this process's own memory, kept by the
 * library for the next VQ when this one closes (no mmap or munmap per
 * connection); the kernel's ring, mapped, if the module cannot take it
 * (RLIMIT_MEMLOCK without CAP_IPC_LOCK, a VQ another process opened) or
 * if KRC_KERNEL_RING=1 is in the environment.
 */
int krc_qconnect(struct krc_vq *vq, const char *addr, uint32_t port,
		 struct krcore_qconnect *qc);
int krc_qconnect_gid(struct krc_vq *vq, const uint8_t gid[16], uint32_t port,
		     unsigned int timeout_ms, struct krcore_qconnect *qc);

/*
 * Priority classes (ABI 13, KRCORE_1.8): krc_qprio(vq, KRCORE_PRIO_HIGH)
 * for a VQ whose small requests must not wait behind other processes'
 * bulk transfers on the connection they share: while it posts there, the
 * others keep at most prio_yield_bytes in flight on it (their qpush says
 * -EAGAIN meanwhile, KRCORE_R_QP_FULL). A high VQ's requests move at most
 * prio_high_bytes each and in flight; a process has at most prio_high_vqs
 * high VQs (-EPERM). KRCORE_PRIO_NORMAL sets it back. krc_qprio(3).
 */
int krc_qprio(struct krc_vq *vq, unsigned int prio);

/* "pooled+cached", "lookup+handshake"...: the path bits as text. */
const char *krc_path_str(uint32_t path, char *buf, size_t len);

/*
 * Membership (ABI 9): the nodes registered with the MetaServer, sorted by
 * GID (KRCORE_MEMBER_F_SELF marks this node). Writes the first @max to
 * @out and returns how many members there are (more than @max: only @max
 * written), or -errno (-EHOSTUNREACH: no MetaServer now). *gen (if not
 * NULL) gets the list's generation, which changes whenever a node joins,
 * leaves or reloads: compare it for equality only. krc_members_wait()
 * first waits up to @timeout_ms (at most KRCORE_MEMBERS_MAX_WAIT_MS)
 * until the generation is no longer @since; on timeout it returns the
 * list with *gen == @since.
 */
int krc_members(struct krc_vq *vq, struct krcore_member *out,
		unsigned int max, uint64_t *gen);
int krc_members_wait(struct krc_vq *vq, uint64_t since, unsigned int timeout_ms,
		     struct krcore_member *out, unsigned int max,
		     uint64_t *gen);

/* Look a node's card up (cache, else MetaServer READs); no connection. */
int krc_lookup(struct krc_vq *vq, const char *addr, unsigned int flags,
	       struct krcore_lookup *lk);

/* READ the card of the peer @vq is connected to, over its connection. */
int krc_probe(struct krc_vq *vq, struct krcore_probe *pr);

/* This node's control plane, and the peers it knows (index 0, 1, ...). */
int krc_node_info(struct krc_vq *vq, struct krcore_node_info *info);
int krc_peer_info(struct krc_vq *vq, unsigned int index,
		  struct krcore_peer_info *info);
/* Traffic counters of the index-th peer (ABI 7; KRCORE_IOC_PEER_STATS). */
int krc_peer_stats(struct krc_vq *vq, unsigned int index,
		   struct krcore_peer_stats *stats);

/*
 * Memory registration: pin [addr, addr + length) of this process for
 * RDMA (enum krcore_access). The lkey serves every VQ of this process,
 * the rkey is for peers. Deregistration waits until no request uses it.
 */
struct krc_mr {
	void *addr;
	size_t length;
	uint32_t lkey;
	uint32_t rkey;
};

int krc_reg_mr(struct krc_vq *vq, void *addr, size_t length,
	       unsigned int access, struct krc_mr *mr);
int krc_dereg_mr(struct krc_vq *vq, const struct krc_mr *mr);

/*
 * Remote memory (ABI 10, KRCORE_1.5): memory on another node, allocated
 * there by its kernel with no process of that node involved. The region
 * belongs to this process: krc_lmr_free() frees it, and so does the close
 * of this process's last VQ. @rights are KRCORE_ACCESS_REMOTE_READ,
 * _WRITE and _ATOMIC; the owner's RNIC refuses anything else with the
 * region's key (its requests then complete with a remote access error).
 * krc_lmr_read/_write/_faa/_cas post one request on @vq (connected to
 * the region's node) between a registered buffer (@lkey) and the region at
 * @offset, and wait for it; krc_lmr_set() has the owner's CPU set bytes to
 * @value, and krc_lmr_copy() move bytes between two regions of this
 * process on one node (as memmove), nothing but the request crossing the
 * network. 0 or -errno:
 * -ERANGE beyond the region, -EIO a request that failed (krc_errmsg()).
 */
struct krc_lmr {
	uint8_t gid[16];	/* its node */
	uint64_t addr;		/* remote address of byte 0 */
	uint64_t length;
	uint64_t incarnation;	/* its node's (a reload frees it) */
	uint32_t rkey;
	uint32_t handle;	/* this process's name for it */
	uint32_t rights;
	uint32_t region;	/* its node's name for it */
};

int krc_lmr_alloc(struct krc_vq *vq, const char *node, uint64_t length,
		  unsigned int rights, struct krc_lmr *lmr);
int krc_lmr_free(struct krc_vq *vq, const struct krc_lmr *lmr);
int krc_lmr_read(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		 void *local, uint32_t lkey, size_t len);
int krc_lmr_write(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		  const void *local, uint32_t lkey, size_t len);
int krc_lmr_set(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		int value, uint64_t len);
int krc_lmr_copy(struct krc_vq *vq, const struct krc_lmr *dst, uint64_t dst_offset,
		 const struct krc_lmr *src, uint64_t src_offset, uint64_t len);
int krc_lmr_faa(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		uint64_t add, uint64_t *old, uint32_t lkey);
int krc_lmr_cas(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		uint64_t compare, uint64_t swap, uint64_t *old, uint32_t lkey);

/*
 * Names (ABI 12, KRCORE_1.7). krc_lmr_publish() publishes a region this
 * process allocated under @name (1 .. 23 printable characters) on the
 * region's node, with @rights (a subset of the region's): that node's
 * kernel registers the region once more with exactly those rights.
 * krc_lmr_lookup() finds a name on the node @vq is connected to (after
 * krc_connect(): one RDMA READ of that node's names table; on the
 * datagram path before an RC connection, a control message) and fills
 * @lmr with the region, the name's key and rights: read, write, atomics,
 * krc_lmr_set() with REMOTE_WRITE and krc_lock() with REMOTE_ATOMIC work
 * on it as on a region of one's own, within those rights (the owner's
 * RNIC and kernel check them); krc_lmr_free() of it only forgets it.
 * krc_lmr_unpublish() revokes the name: it goes from the table and its
 * key dies at once, for everyone who looked it up. Names go with their
 * region. 0 or -errno: -EEXIST (taken), -ENOENT (no such name), -EACCES
 * (rights the region lacks), -ENOSPC (the node's table is full),
 * -ENOTCONN (@vq not connected), -EPERM (a
 * region looked up cannot be published again).
 */
int krc_lmr_publish(struct krc_vq *vq, const struct krc_lmr *lmr,
		    const char *name, unsigned int rights);
int krc_lmr_unpublish(struct krc_vq *vq, const struct krc_lmr *lmr,
		      const char *name);
int krc_lmr_lookup(struct krc_vq *vq, const char *name, struct krc_lmr *lmr);

/*
 * Locks and barriers (ABI 11, KRCORE_1.6) on words of remote memory. Any
 * process with a region's key (a struct krc_lmr it was given: gid, addr,
 * length, rkey) and the REMOTE_ATOMIC right may use them.
 *
 * krc_lock() takes the lock on the 8-aligned word at @offset, waiting up
 * to @timeout_ms (0: the module's lmr_timeout_ms; at most 60000). The
 * owner's kernel grants it in the order the requests arrived; @lock->grant
 * is its number (1, 2, ...). krc_unlock() releases it. A lock is the
 * process's: the close of its last VQ releases what it still holds, so a
 * process killed holding one does not keep it; a node that goes away
 * loses its locks. The word's bytes are not touched: use other words for
 * data (e.g. a counter in the next word, read and written under the lock).
 *
 * A barrier is a counter word (zero at first) that @n processes meet at:
 * krc_barrier_wait() returns when all @n have reached this round (each
 * process's calls count its rounds), or -ETIMEDOUT after @timeout_ms (0:
 * 10 s). @word is 8 registered bytes (@lkey) for the reads.
 */
struct krc_lock {
	uint32_t handle;	/* this process's name for it */
	uint64_t grant;		/* its grant number at the owner */
};

int krc_lock(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
	     unsigned int timeout_ms, struct krc_lock *lock);
int krc_unlock(struct krc_vq *vq, const struct krc_lock *lock);

struct krc_barrier {
	struct krc_lmr lmr;	/* the region of its counter */
	uint64_t offset;	/* of the counter */
	uint32_t n;		/* processes that meet at it */
	uint64_t round;		/* rounds this process passed */
};

int krc_barrier_init(struct krc_barrier *b, const struct krc_lmr *lmr,
		     uint64_t offset, unsigned int n);
int krc_barrier_wait(struct krc_vq *vq, struct krc_barrier *b, uint64_t *word,
		     uint32_t lkey, unsigned int timeout_ms);

/*
 * Post @n work requests (struct krcore_wr, see the UAPI) in one system
 * call. Returns how many were posted; if not all, krc_errmsg() says why the
 * next one was not and krc_qpush_result() has its errno and reason. Returns
 * -errno if none was posted (-EAGAIN: queue full, retry after a qpop).
 */
int krc_qpush(struct krc_vq *vq, const struct krcore_wr *wrs, unsigned int n);
const struct krcore_qpush *krc_qpush_result(const struct krc_vq *vq);

/*
 * Up to @max completions of this VQ: krc_qpop never blocks (and makes no
 * system call); krc_qpop_wait sleeps up to @timeout_ms (-1: forever) when
 * there is none. Not thread-safe for one VQ.
 */
int krc_qpop(struct krc_vq *vq, struct krcore_cqe *cqes, unsigned int max);
int krc_qpop_wait(struct krc_vq *vq, struct krcore_cqe *cqes, unsigned int max,
		  int timeout_ms);

/* One signaled READ / WRITE and wait for it (0 or -errno; -EIO: failed). */
int krc_read_sync(struct krc_vq *vq, void *local, uint32_t lkey, size_t len,
		  uint64_t raddr, uint32_t rkey, int timeout_ms);
int krc_write_sync(struct krc_vq *vq, const void *local, uint32_t lkey,
		   size_t len, uint64_t raddr, uint32_t rkey, int timeout_ms);

/*
 * Two-sided messages. krc_qbind makes @vq receive what is sent to @port
 * (1..65535) of this node; a VQ connected with krc_qconnect(..., port, ...)
 * sends to it with KRCORE_WR_SEND/_SEND_IMM/_WRITE_IMM. krc_qpop_msg gives
 * the next message (1), or 0 if none; its data stays valid until
 * krc_qmsg_done. krc_qpop_msg_wait sleeps up to @timeout_ms. Messages that
 * found no slot (only from a sender outside the flow control) are counted
 * by krc_msgs_dropped.
 */
struct krc_msg {
	const void *data;
	uint32_t len;
	uint32_t imm_data;
	uint8_t opcode;		/* KRCORE_WR_SEND, _SEND_IMM, _WRITE_IMM */
	uint8_t flags;		/* KRCORE_MSG_F_IMM */
	uint16_t src_port;
	uint8_t src_gid[16];
};

int krc_qbind(struct krc_vq *vq, uint16_t port);
int krc_qpop_msg(struct krc_vq *vq, struct krc_msg *msg);
void krc_qmsg_done(struct krc_vq *vq);
int krc_qpop_msg_wait(struct krc_vq *vq, struct krc_msg *msg, int timeout_ms);
uint32_t krc_msgs_dropped(const struct krc_vq *vq);
/*
 * Messages are flow controlled: a SEND, SEND_IMM or WRITE_IMM is posted
 * only into a slot the receiving port lent this node, and krc_qpush stops
 * at one without a slot with -EAGAIN (reason KRCORE_R_NO_CREDIT).
 * krc_qflow_wait sleeps up to @timeout_ms (-1: no limit) until a slot is
 * lent: the slots lent (> 0), or -ETIMEDOUT, -ECONNREFUSED (the port is
 * not bound there), -ENOTCONN (the VQ sends to no port).
 */
int krc_qflow_wait(struct krc_vq *vq, int timeout_ms);

/*
 * RPC (docs/rpc.md), over the flow-controlled messages above: nothing is
 * dropped, a call runs at most once however often it is sent again (a
 * lost message, a connection recovered or moved from the datagram path
 * to RC), requests and replies of any size up to 1 GiB (up to
 * KRC_RPC_INLINE bytes inside one message, larger ones by one RDMA WRITE
 * or READ of memory the server granted for that call).
 *
 * A server binds a port; krc_srv_next gives the next request (any number
 * of threads may call it, and reply from any thread), krc_srv_reply
 * answers it and frees it. A caller opens a channel to (node, port): a VQ
 * of its own, bound to a free port for the replies; krc_call makes a call
 * and waits, krc_call_start starts one whose completion krc_chan_poll
 * returns (up to KRC_CALLS_MAX outstanding per channel), krc_call_cancel
 * gives one up. Channels and servers are thread-safe. Their fds work with
 * poll/epoll (POLLIN: call krc_chan_poll / krc_srv_next; timers of the
 * channel's retransmissions are inside).
 */
#define KRC_RPC_INLINE	4008
#define KRC_CALLS_MAX	256

struct krc_srv;
struct krc_chan;

/* A request as the server gets it. */
struct krc_req {
	uint32_t method;
	uint32_t oneway;	/* no reply wanted (krc_srv_reply only frees) */
	void *data;		/* the request, until krc_srv_reply */
	size_t len;
	size_t reply_cap;	/* the largest reply the caller takes */
	uint8_t src_gid[16];	/* the caller (written by the kernels) */
	uint16_t src_port;
};

struct krc_srv_opts {
	unsigned int sessions;	/* callers remembered (0: 256) */
	size_t max_req;		/* largest request, inline ones too (0: 1 GiB) */
	size_t grant_bytes;	/* granted memory at once (0: 256 MiB) */
};

/* Serve @port of this node (@opts NULL: the defaults). */
int krc_srv_open(struct krc_srv **srvp, uint16_t port,
		 const struct krc_srv_opts *opts);
void krc_srv_close(struct krc_srv *srv);
int krc_srv_fd(const struct krc_srv *srv);
/*
 * The next request (1), none within @timeout_ms (0; -1: no limit), or
 * -EINTR (a signal came while it waited).
 */
int krc_srv_next(struct krc_srv *srv, struct krc_req **reqp, int timeout_ms);
/*
 * A buffer of @len bytes for the reply of @req: a large reply built in it
 * is registered in place and read by the caller from there, without a
 * copy (pass it to krc_srv_reply). Freed with @req. NULL: no memory.
 */
void *krc_srv_reply_buf(struct krc_srv *srv, struct krc_req *req, size_t len);
/*
 * Answer @req with @status (0, or a positive errno the caller gets as
 * -status) and @len bytes of @data (at most req->reply_cap, else the
 * caller gets -EMSGSIZE), and free @req. 0, -EINVAL (a status out of
 * range, data NULL with a length: nothing sent, @req still yours), or
 * another -errno: the reply could not go now (the caller sends the call
 * again and gets the kept answer; if it could not be kept, ENOMEM or EIO).
 */
int krc_srv_reply(struct krc_srv *srv, struct krc_req *req, int status,
		  const void *data, size_t len);

/* Open a channel to @port of node @addr (IPv4 or GID text). */
int krc_chan_open(struct krc_chan **chp, const char *addr, uint16_t port,
		  int timeout_ms);
void krc_chan_close(struct krc_chan *ch);
int krc_chan_fd(const struct krc_chan *ch);

struct krc_call_args {
	uint32_t method;
	const void *req;
	size_t req_len;
	void *reply;
	size_t reply_cap;
	/* optional: registrations that hold req / reply (no per-call one) */
	const struct krc_mr *req_mr;
	const struct krc_mr *reply_mr;
	int timeout_ms;		/* > 0, or -1: no limit */
	uint64_t user;		/* given back in the completion */
};

struct krc_call_done {
	uint64_t id;
	uint64_t user;
	int64_t result;		/* the reply's bytes, or -errno */
};

/*
 * Call and wait: the reply's length, or -errno: -ETIMEDOUT, -ECONNREFUSED
 * (no server on the port), -EMSGSIZE (the reply did not fit), -status
 * from the server...
 */
int64_t krc_call(struct krc_chan *ch, uint32_t method, const void *req,
		 size_t req_len, void *reply, size_t reply_cap, int timeout_ms);
/* Start a call: 0 and its *id; -EAGAIN with KRC_CALLS_MAX outstanding. */
int krc_call_start(struct krc_chan *ch, const struct krc_call_args *a,
		   uint64_t *id);
/*
 * Completed calls (up to @max), waiting up to @timeout_ms for one (0: not
 * at all, -1: no limit): how many, or -EINTR (a signal, none completed).
 */
int krc_chan_poll(struct krc_chan *ch, struct krc_call_done *done,
		  unsigned int max, int timeout_ms);
/*
 * Give call @id up: it completes with -ECANCELED (krc_chan_poll) unless
 * it completed already (-ENOENT). The server may have run it (once), or
 * still run it; its reply is not taken. Its buffers are the caller's
 * again when this returns.
 */
int krc_call_cancel(struct krc_chan *ch, uint64_t id);
/*
 * A call without a reply, of up to KRC_RPC_INLINE bytes: posted, or
 * queued until the server lends a slot (krc_chan_close waits up to 2 s
 * for what is queued; krc_call after it makes sure it went).
 */
int krc_send(struct krc_chan *ch, uint32_t method, const void *data,
	     size_t len);

/* What a channel and a server did (counts since they were opened). */
struct krc_chan_stats {
	uint64_t calls;		/* started (one-way sends included) */
	uint64_t resent;	/* calls sent again, unanswered for their rto */
	uint64_t stale;		/* answers not taken: late, or not ours */
	uint64_t queued;	/* messages that waited for the server's credit */
	uint64_t reconnects;	/* new sessions after the server went away */
};

struct krc_srv_stats {
	uint64_t run;		/* requests handed out */
	uint64_t dup_running;	/* a call sent again while it ran: ignored */
	uint64_t dup_done;	/* ... after it ran: its kept reply again */
	uint64_t old;		/* an older call of a slot: ignored */
	uint64_t refused;	/* answered with an error, not run */
	uint64_t bad;		/* not a well-formed message */
	uint64_t grants;	/* memory granted for large requests */
};

void krc_chan_stats(struct krc_chan *ch, struct krc_chan_stats *st);
void krc_srv_stats(struct krc_srv *srv, struct krc_srv_stats *st);

/* A completion status as text. */
const char *krc_wc_status_str(uint32_t status);

/*
 * Node addresses. krc_gid_parse() takes dotted IPv4 ("10.0.0.1") or an
 * IPv6/GID text; krc_gid_format() writes the short text of a GID (dotted
 * IPv4 when IPv4-mapped), KRC_GID_STRLEN bytes are always enough.
 */
#define KRC_GID_STRLEN	48
int krc_gid_parse(const char *text, uint8_t gid[16]);
int krc_gid_format(const uint8_t gid[16], char *buf, size_t len);

/* A sentence about the last failure in this thread ("" if none). */
const char *krc_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBKRCORE_H */
