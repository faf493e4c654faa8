/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * qp_state.h - a model of the QP state a node holds: how many queue pairs
 * and how many bytes of their state (in the NIC, or in the memory a
 * software NIC keeps for them) one node needs so that each of its P
 * processes can reach every process of the other N - 1 nodes reliably.
 *
 * Pure arithmetic: no allocation, no floating point (the same code could
 * run in the kernel), every product saturates at KRC_QP_SAT instead of
 * wrapping. The per-QP byte costs are inputs: the model does not know
 * them, a caller measures them (or assumes them and says so).
 *
 * The schemes (per node, N nodes, P processes per node):
 *
 *   verbs RC full mesh   every process has its own RC QP to every process
 *                        of every other node: P * P * (N - 1) RC QPs.
 *   krcore pool          pool_size RC QPs per other node, shared by every
 *                        process of the node (a connection belongs to both
 *                        ends' pools, so one QP per connection per node),
 *                        plus krcore's fixed QPs: ctrl_ud control UD QP(s)
 *                        and fixed_rc RC QPs that do not depend on N (the
 *                        spare QPs parked in INIT, spare_qps, and the
 *                        kernel's loopback QP).
 *   krcore RC cap        the pool, but RC to at most rc_max other nodes:
 *                        min(N - 1, rc_max) * pool_size RC QPs plus the
 *                        fixed ones; the other nodes are reached with
 *                        datagrams over the control UD QP (no QP each).
 *                        rc_max = 0 means no cap (the pool's numbers).
 *   DC                   one DC target per node that every remote process
 *                        reaches, and one DC initiator per process (no
 *                        DCI shared between processes, none per peer):
 *                        1 + P contexts whatever N is.
 *
 * What it leaves out: CQs, MRs and the NIC's per-connection transport
 * state beyond the QP context (give them a cost per QP if they matter),
 * the processes' own memory, and the datagram path's software state per
 * peer (kernel memory, not QP state).
 */
#ifndef KRC_COMMON_QP_STATE_H
#define KRC_COMMON_QP_STATE_H

#include "compat.h"

/* The largest count: a result that does not fit in 64 bits stays here. */
#define KRC_QP_SAT	(~(u64)0)

/* Bytes of state per QP (or DC context), by kind. */
struct krc_qp_costs {
	u64 rc;		/* an RC QP */
	u64 ud;		/* a UD QP */
	u64 dct;	/* a DC target */
	u64 dci;	/* a DC initiator */
};

/* The cluster and krcore's configuration. */
struct krc_qp_cluster {
	u64 nodes;	/* N, >= 1 */
	u64 procs;	/* P, processes per node */
	u64 pool_size;	/* krcore: RC QPs per other node (module pool_size) */
	u64 rc_max;	/* krcore RC cap: other nodes on RC at most; 0: none */
	u64 ctrl_ud;	/* krcore: control UD QPs per node */
	u64 fixed_rc;	/* krcore: RC QPs per node independent of N */
};

enum krc_qp_scheme {
	KRC_QPS_VERBS_RC,	/* verbs RC full mesh */
	KRC_QPS_POOL,		/* krcore's pool */
	KRC_QPS_RC_CAP,		/* krcore with an RC cap */
	KRC_QPS_DC,		/* DC: one DCT, P DCIs */
	KRC_QPS_NR,
};

/* What one node holds under one scheme. */
struct krc_qp_state {
	u64 rc_qps;	/* RC QPs */
	u64 ud_qps;	/* UD QPs */
	u64 dc_qps;	/* DC targets and initiators */
	u64 qps;	/* all of them */
	u64 bytes;	/* their state, from the costs */
	u64 rc_peers;	/* other nodes reached over RC (DC: 0) */
	u64 dg_peers;	/* other nodes reached over datagrams only */
};

/* A short name for @s ("verbs_rc", "krcore_pool", ...), or "?". */
const char *krc_qp_scheme_name(enum krc_qp_scheme s);

/* a * b, or KRC_QP_SAT when it does not fit. */
u64 krc_qp_mul_sat(u64 a, u64 b);
/* a + b, or KRC_QP_SAT when it does not fit. */
u64 krc_qp_add_sat(u64 a, u64 b);

/*
 * Per-node QPs and bytes of @s for @c with @costs, into @out.
 * 0, or -EINVAL (an unknown scheme, no node, a pool of 0 QPs).
 */
int krc_qp_state(enum krc_qp_scheme s, const struct krc_qp_cluster *c,
		 const struct krc_qp_costs *costs, struct krc_qp_state *out);

#endif /* KRC_COMMON_QP_STATE_H */
