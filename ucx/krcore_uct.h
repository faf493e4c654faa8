/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * krcore_uct.h - the UCT transport "krcore": UCX programs on krcore's
 * virtual queues (docs/ucx.md).
 *
 * Objects and who owns what:
 *  - the memory domain (krcore_md.c) opens one VQ of its own and registers
 *    memory through it: an lkey serves every VQ of the process, the rkey
 *    is what mkey_pack gives the peers;
 *  - an interface (krcore_iface.c) binds a port of this node on a VQ of
 *    its own (its receive ring carries every active message sent to it)
 *    and owns the bounce buffers (one registered arena) and the list of
 *    its endpoints; its address is the node's GID (device address) and
 *    the port (interface address), so a peer connects without exchange;
 *  - an endpoint (krcore_ep.c) is one VQ connected to the peer's node and
 *    port (the pooled RC connection, or the datagram first contact). Its
 *    requests are posted signaled: the completion gives back the bounce
 *    buffer and completes the UCT operation.
 *
 * Threads: UCS_THREAD_MODE_SINGLE or _SERIALIZED only (the worker's lock
 * is the caller's); nothing here takes a lock.
 *
 * Lifetimes: an endpoint's descriptors live in the interface's arena and
 * point back at it; destroying an endpoint closes its VQ (the kernel ends
 * what it had outstanding, and its completion ring goes with it) and takes
 * back every descriptor that still points at it. An interface outlives
 * its endpoints (UCX destroys them first).
 */
#ifndef KRCORE_UCT_H
#define KRCORE_UCT_H

/*
 * UCX's internal headers test what its configure defined: the values of
 * the build Debian ships (libucx0, release: no debug data).
 */
#ifndef ENABLE_DEBUG_DATA
#define ENABLE_DEBUG_DATA	0
#endif
#ifndef ENABLE_PARAMS_CHECK
#define ENABLE_PARAMS_CHECK	1
#endif

#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <ucs/datastruct/queue.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>

#include "libkrcore.h"

#define UCT_KRCORE_NAME		"krcore"
#define UCT_KRCORE_AM_MAX	KRCORE_MAX_SEND
/* immediate of an active message: the AM id, and a flag for an empty one */
#define UCT_KRCORE_IMM_EMPTY	0x100U

struct uct_krcore_md {
	uct_md_t super;
	struct krc_vq *vq;		/* registrations */
};

struct uct_krcore_md_config {
	uct_md_config_t super;
};

/* What mkey_pack writes for a peer, and rkey_unpack reads back. */
struct uct_krcore_rkey {
	uint32_t rkey;
	uint32_t magic;
};

#define UCT_KRCORE_RKEY_MAGIC	0x6b72636fU	/* "krco" */

struct uct_krcore_memh {
	struct krc_mr mr;
};

struct uct_krcore_iface_addr {
	uint16_t port;
} __attribute__((packed));

struct uct_krcore_dev_addr {
	uint8_t gid[16];
} __attribute__((packed));

struct uct_krcore_iface_config {
	uct_iface_config_t super;
	unsigned int tx_bufs;		/* bounce buffers of the interface */
	size_t seg_size;		/* bytes of each */
	unsigned int connect_ms;	/* qconnect's limit */
	unsigned int port_base;		/* first port tried for the iface */
};

enum uct_krcore_kind {
	UCT_KRCORE_OP_PUT,		/* buffer given back, nothing else */
	UCT_KRCORE_OP_ZCOPY,		/* comp only */
	UCT_KRCORE_OP_GET_BCOPY,	/* unpack then comp */
	UCT_KRCORE_OP_FETCH,		/* 8 bytes to *result, then comp */
	UCT_KRCORE_OP_AM,
	UCT_KRCORE_OP_CAS_LOOP,		/* an atomic RDMA has not: CAS again */
};

/* An atomic done as compare-and-swaps (krcore_ep.c), as it goes. */
struct uct_krcore_amo {
	uint64_t raddr;			/* the aligned 8 bytes that hold it */
	uint64_t operand;
	uint64_t compare;		/* CSWAP32 */
	uint64_t guess;			/* what the last CAS compared with */
	uint32_t rkey;
	uint8_t op;			/* UCT_ATOMIC_OP_* */
	uint8_t size;			/* 4 or 8 */
	uint8_t shift;			/* of a 4-byte word in the 8: 0, 32 */
};

struct uct_krcore_ep;

/* One posted request (its wr_id is its address). */
struct uct_krcore_desc {
	struct uct_krcore_ep *ep;	/* NULL: free */
	uct_completion_t *comp;
	uct_unpack_callback_t unpack;
	void *arg;
	void *result;			/* FETCH: 8 bytes; CAS_LOOP: @amo.size */
	struct uct_krcore_amo amo;	/* CAS_LOOP */
	uint32_t length;
	uint8_t kind;
	uint8_t has_buf;
	uint16_t index;			/* in the arena */
	void *buf;			/* bounce buffer (has_buf) */
	struct uct_krcore_desc *next_free;
};

struct uct_krcore_flush {
	ucs_queue_elem_t queue;
	uint64_t target;		/* ep->done must reach this */
	uct_completion_t *comp;
};

struct uct_krcore_iface {
	uct_base_iface_t super;
	struct krc_vq *rvq;		/* bound to @port: active messages */
	struct uct_krcore_dev_addr dev;
	uint16_t port;
	/* the bounce arena, registered once */
	void *arena;
	size_t arena_len;
	struct krc_mr arena_mr;
	size_t seg_size;
	unsigned int nsegs;
	struct uct_krcore_desc *descs;	/* nsegs + nsegs for zcopy */
	struct uct_krcore_desc *free_buf;
	struct uct_krcore_desc *free_nobuf;
	unsigned int connect_ms;
	ucs_list_link_t eps;		/* every endpoint */
	ucs_list_link_t active;		/* those progress looks at */
	unsigned int outstanding;	/* over all endpoints */
	int event_fd;			/* epoll set of the VQs, -1 until asked */
};

struct uct_krcore_ep {
	uct_base_ep_t super;
	struct krc_vq *vq;
	ucs_list_link_t list;		/* in iface->eps */
	ucs_list_link_t active_link;	/* in iface->active, if @active */
	uint64_t posted;		/* requests posted */
	uint64_t done;			/* completed */
	ucs_queue_head_t flushq;	/* struct uct_krcore_flush */
	ucs_queue_head_t pending;	/* uct_pending_req_t, priv = elem */
	ucs_status_t error;		/* UCS_OK until the peer failed */
	uint8_t fence;			/* next request waits for earlier */
	uint8_t blocked;		/* the last post found no room */
	uint8_t error_reported;
	uint8_t active;
	uint16_t peer_port;
	/* CAS loops whose next CAS found the VQ full: posted from progress */
	struct uct_krcore_desc *amo_wait;
	uint32_t loops;			/* CAS loops not done: a fence waits */
};

typedef struct uct_krcore_iface uct_krcore_iface_t;

/* krcore_md.c */
extern uct_component_t uct_krcore_component;
ucs_status_t uct_krcore_errno_status(int err);

/* krcore_iface.c */
struct uct_krcore_desc *uct_krcore_desc_get(struct uct_krcore_iface *iface,
					    int with_buf);
void uct_krcore_desc_put(struct uct_krcore_iface *iface,
			 struct uct_krcore_desc *d);
void uct_krcore_iface_add_ep_fd(struct uct_krcore_iface *iface, int fd);

/* krcore_ep.c */
typedef struct uct_krcore_ep uct_krcore_ep_t;
UCS_CLASS_DECLARE_NEW_FUNC(uct_krcore_ep_t, uct_ep_t, const uct_ep_params_t *);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_krcore_ep_t, uct_ep_t);

void uct_krcore_ep_complete(struct uct_krcore_iface *iface,
			    const struct krcore_cqe *cqe);
unsigned int uct_krcore_ep_progress(struct uct_krcore_iface *iface,
				    struct uct_krcore_ep *ep);

ucs_status_t uct_krcore_ep_put_short(uct_ep_h tl_ep, const void *buffer,
				     unsigned int length, uint64_t remote_addr,
				     uct_rkey_t rkey);
ssize_t uct_krcore_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
				void *arg, uint64_t remote_addr,
				uct_rkey_t rkey);
ucs_status_t uct_krcore_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
				     size_t iovcnt, uint64_t remote_addr,
				     uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_krcore_ep_get_bcopy(uct_ep_h tl_ep,
				     uct_unpack_callback_t unpack_cb,
				     void *arg, size_t length,
				     uint64_t remote_addr, uct_rkey_t rkey,
				     uct_completion_t *comp);
ucs_status_t uct_krcore_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
				     size_t iovcnt, uint64_t remote_addr,
				     uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_krcore_ep_am_short(uct_ep_h tl_ep, uint8_t id,
				    uint64_t header, const void *payload,
				    unsigned int length);
ucs_status_t uct_krcore_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
					const uct_iov_t *iov, size_t iovcnt);
ssize_t uct_krcore_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
			       uct_pack_callback_t pack_cb, void *arg,
			       unsigned int flags);
ucs_status_t uct_krcore_ep_atomic64_post(uct_ep_h tl_ep, unsigned int opcode,
					 uint64_t value, uint64_t remote_addr,
					 uct_rkey_t rkey);
ucs_status_t uct_krcore_ep_atomic64_fetch(uct_ep_h tl_ep,
					  uct_atomic_op_t opcode,
					  uint64_t value, uint64_t *result,
					  uint64_t remote_addr,
					  uct_rkey_t rkey,
					  uct_completion_t *comp);
ucs_status_t uct_krcore_ep_atomic_cswap64(uct_ep_h tl_ep, uint64_t compare,
					  uint64_t swap, uint64_t remote_addr,
					  uct_rkey_t rkey, uint64_t *result,
					  uct_completion_t *comp);
ucs_status_t uct_krcore_ep_atomic32_post(uct_ep_h tl_ep, unsigned int opcode,
					 uint32_t value, uint64_t remote_addr,
					 uct_rkey_t rkey);
ucs_status_t uct_krcore_ep_atomic32_fetch(uct_ep_h tl_ep, unsigned int opcode,
					  uint32_t value, uint32_t *result,
					  uint64_t remote_addr,
					  uct_rkey_t rkey,
					  uct_completion_t *comp);
ucs_status_t uct_krcore_ep_atomic_cswap32(uct_ep_h tl_ep, uint32_t compare,
					  uint32_t swap, uint64_t remote_addr,
					  uct_rkey_t rkey, uint32_t *result,
					  uct_completion_t *comp);
ucs_status_t uct_krcore_ep_flush(uct_ep_h tl_ep, unsigned int flags,
				 uct_completion_t *comp);
ucs_status_t uct_krcore_ep_fence(uct_ep_h tl_ep, unsigned int flags);
ucs_status_t uct_krcore_ep_check(uct_ep_h tl_ep, unsigned int flags,
				 uct_completion_t *comp);
ucs_status_t uct_krcore_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *r,
				       unsigned int flags);
void uct_krcore_ep_pending_purge(uct_ep_h tl_ep,
				 uct_pending_purge_callback_t cb, void *arg);

#endif /* KRCORE_UCT_H */
