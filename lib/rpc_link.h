/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_link.h - what the caller's and the server's sides of RPC share
 * (lib/rpc_chan.c, lib/rpc_srv.c): a link is one VQ connected to the
 * other side's port, with its own registered staging slots for the
 * messages it sends (a SEND reads registered memory) and a queue of the
 * messages that wait for a slot of the receiver (flow control: a send
 * without credit is queued, never dropped and never blocks the caller).
 * Not thread-safe: the owner (a channel, a server) holds its lock.
 */
#ifndef KRC_LIB_RPC_LINK_H
#define KRC_LIB_RPC_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"
#include "rpc.h"

/* Payload bytes that go inside one message, after the RPC header. */
#define KRCL_RPC_INLINE	(KRCORE_MAX_SEND - KRC_RPC_HDR_SIZE)
_Static_assert(KRCL_RPC_INLINE == KRC_RPC_INLINE, "libkrcore.h's KRC_RPC_INLINE");

/* wr_id of a link's own SENDs: the staging slot, with this tag. */
#define KRCL_WR_SEND	0x8000000000000000ULL

struct krcl_msgq {
	struct krcl_msgq *next;
	uint32_t len;
	uint8_t data[];
};

struct krcl_link {
	struct krc_vq *vq;
	struct krc_mr mr;		/* the staging slots */
	uint8_t *stage;
	unsigned int nstage;
	uint64_t busy;			/* staging slots in flight (bit i) */
	uint8_t order[64];		/* busy slots in post order (a ring) */
	unsigned int ohead, ocount;
	unsigned int unsignaled;	/* SENDs since the last signaled one */
	struct krcl_msgq *head, *tail;	/* waiting for credit or a slot */
	unsigned int queued;
	unsigned int max_queued;	/* 0: no limit */
	uint64_t dropped;		/* not queued: over max_queued */
	uint64_t queued_total;
	int error;			/* a refusal that ends the link */
	uint64_t send_errors;		/* SENDs that completed in error */
};

/*
 * Registrations of a multiple of 256 pages are made one page longer: rxe
 * in Linux 6.1 (rxe_mr_copy) reads one pointer past such an MR's page
 * map when an access touches its last page (KASAN on the debug kernel;
 * fixed upstream by rxe's xarray rewrite). krcl_map() gives the
 * library's own buffers that spare page (zeroed, never used);
 * krcl_reg_len() is the length to register for @len bytes at @addr when
 * a page after them may be registered too.
 */
void *krcl_map(size_t len);
void krcl_unmap(void *p, size_t len);
size_t krcl_reg_len(const void *addr, size_t len);

/*
 * Open @l: a VQ connected to @gid's @port (@timeout_ms for the connect)
 * with @nstage (<= 64) staging slots; bound to @bind_port first when not
 * 0 (0 and @bind_any: the first free port of the ephemeral range).
 */
int krcl_link_open(struct krcl_link *l, const uint8_t gid[16], uint16_t port,
		   unsigned int timeout_ms, unsigned int nstage, bool bind_any,
		   uint16_t *bound);
void krcl_link_close(struct krcl_link *l);

/*
 * Send header @h with @len payload bytes (<= KRCL_RPC_INLINE): 0 when
 * posted or queued (it goes when the receiver lends a slot), or -errno
 * (-ECONNREFUSED: no process has the port bound any more; -ENOBUFS: the
 * queue holds max_queued already, the message is not sent: only for
 * messages the other side asks for again).
 */
int krcl_link_send(struct krcl_link *l, const struct krc_rpc_hdr *h,
		   const void *payload, size_t len);

/*
 * Reap completions (@fn, if not NULL, gets those not of the link's own
 * SENDs: returns how many) and post what is queued.
 */
typedef void krcl_cqe_fn(void *arg, const struct krcore_cqe *c);
int krcl_link_progress(struct krcl_link *l, krcl_cqe_fn *fn, void *arg);

/* Has the link messages waiting for the receiver's credit? */
static inline bool krcl_link_pending(const struct krcl_link *l)
{
	return !!l->head;
}

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t krcl_now_ms(void);

#endif /* KRC_LIB_RPC_LINK_H */
