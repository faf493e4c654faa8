/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ud.h - what the user-space verbs programs that talk to a node's control
 * UD QP share (ud_garbage, src_flood): open a device by name, a UD QP
 * made ready to send, an address handle from one local GID to a node.
 * Header-only: each program is one file. The functions print nothing:
 * the caller says what failed (errno is set where verbs set it).
 *
 * An address handle to a RoCE GID needs the destination's MAC: the kernel
 * resolves it when the handle is created (ib_uverbs -> rdma_create_user_ah
 * -> ib_resolve_eth_dmac: a route from the source GID's address, then the
 * neighbour table, resolved with ARP if needed, within a bounded wait).
 */
#ifndef KRC_TESTS_UD_H
#define KRC_TESTS_UD_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

/* The RDMA device named @name, opened; NULL (errno ENODEV) if none is. */
static inline struct ibv_context *ud_open(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n = 0;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		errno = ENODEV;
	return ctx;
}

/*
 * A UD QP on port @port (both queues on @cq, @send_wr sends, one receive,
 * one SGE each) moved to RTS with QKey @qkey, or NULL. A QKey with the
 * high bit set (a controlled one) is refused to an unprivileged process.
 */
static inline struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq,
				   uint32_t send_wr, uint8_t port,
				   uint32_t qkey)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_qp *qp;

	memset(&init, 0, sizeof(init));
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_UD;
	init.cap.max_send_wr = send_wr;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &init);
	if (!qp)
		return NULL;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = port;
	attr.qkey = qkey;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		goto fail;
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		goto fail;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto fail;
	return qp;
fail:
	ibv_destroy_qp(qp);
	return NULL;
}

/* An address handle from GID @sgid_index of @port to GID @dgid, or NULL. */
static inline struct ibv_ah *ud_ah(struct ibv_pd *pd, uint8_t port,
				   uint8_t sgid_index, const uint8_t dgid[16])
{
	struct ibv_ah_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	memcpy(attr.grh.dgid.raw, dgid, 16);
	attr.grh.sgid_index = sgid_index;
	attr.grh.hop_limit = 64;
	attr.port_num = port;
	return ibv_create_ah(pd, &attr);
}

#endif /* KRC_TESTS_UD_H */
