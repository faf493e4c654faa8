// SPDX-License-Identifier: BSD-2-Clause
/*
 * ud_garbage - send malformed datagrams to a node's control QP with
 * user-space verbs (what a buggy or hostile process on the network could
 * do): random bytes, truncated messages, good headers with bad fields.
 *
 *   ud_garbage IBDEV GID_INDEX PEER_ADDR QPN QKEY COUNT
 *
 * Or well-formed messages that lie about who sends them:
 *   ud_garbage IBDEV GID_INDEX PEER_ADDR QPN QKEY COUNT as ADDR UDQPN INC
 *       REQ, GOODBYE and REP (guessed request ids) carrying the card of
 *       the node at ADDR (its control QPN and incarnation)
 *   ud_garbage ... COUNT self ADDR 0 INC
 *       REQ and GOODBYE carrying a card of this node (ADDR) that names the
 *       sending process's own UD QP: the source checks pass, the card does
 *       not match what the MetaServer and the peer know
 *   ud_garbage ... COUNT flood
 *       REQs from COUNT different made-up nodes
 *   ud_garbage ... COUNT dg RKEY
 *       datagram-path messages (common/dgram.h) from the process's own
 *       QP: malformed ones, and well-formed READ/WRITE/FAA requests (with
 *       RKEY) and replies that must be refused: the source is no node's
 *       control QP
 * Prints how many datagrams were sent; exit 0 if all were sent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "card.h"
#include "dgram.h"
#include "proto.h"
#include "ud.h"

#define BUF	256

/* A well-formed REQ, then one field broken per variant. */
static size_t make_msg(uint8_t *buf, unsigned int i, unsigned int *seed)
{
	struct krc_ctrl_msg m;
	size_t len = KRC_MSG_SIZE, k;

	memset(&m, 0, sizeof(m));
	m.type = KRC_MSG_CONNECT_REQ;
	m.req_id = i;
	m.card.card_version = KRCORE_CARD_VERSION;
	m.card.gid[10] = 0xff;
	m.card.gid[11] = 0xff;
	m.card.gid[12] = 10;
	m.card.gid[13] = 99;
	m.card.gid[15] = 1;
	m.card.flags = KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4;
	m.card.node_id = 1;
	m.card.port_num = 1;
	m.card.active_mtu = 3;
	m.card.incarnation = 1;
	m.qpn = 100;
	krc_msg_encode(&m, buf);
	switch (i % 6) {
	case 0:		/* random bytes */
		for (k = 0; k < BUF; k++)
			buf[k] = (uint8_t)rand_r(seed);
		len = (size_t)(rand_r(seed) % BUF) + 1;
		break;
	case 1:		/* truncated */
		len = (size_t)(rand_r(seed) % KRC_MSG_SIZE);
		break;
	case 2:		/* unknown version */
		buf[4] = 99;
		break;
	case 3:		/* unknown type */
		buf[5] = 77;
		break;
	case 4:		/* QPN out of range */
		krc_put_le32(buf + 88, 1u << 24);
		break;
	default:	/* card with a bad version */
		buf[16 + 22] = 9;
		break;
	}
	return len ? len : 1;
}

/* A well-formed message that lies (see the header). */
static size_t make_lie(uint8_t *buf, unsigned int i, const char *kind,
		       const uint8_t gid[16], uint32_t udqpn, uint64_t inc,
		       uint32_t own_qpn, unsigned int *seed)
{
	static const uint8_t types[] = {
		KRC_MSG_CONNECT_REQ, KRC_MSG_GOODBYE, KRC_MSG_CONNECT_REP,
	};
	struct krc_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.card.card_version = KRCORE_CARD_VERSION;
	m.card.flags = KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4;
	m.card.node_id = 7;
	m.card.port_num = 1;
	m.card.active_mtu = 3;
	m.card.mac[0] = 0x52;
	memcpy(m.card.gid, gid, 16);
	m.card.ud_qpn = udqpn;
	m.card.ud_qkey = 0xcb524331;
	m.card.incarnation = inc;
	m.qpn = 1000 + i;
	m.psn = i;
	m.peer_qpn = 2 + i % 1000;
	m.req_id = i + 1;
	if (!strcmp(kind, "as")) {
		m.type = types[i % 3];
	} else if (!strcmp(kind, "self")) {
		m.type = types[i % 2];
		m.card.ud_qpn = own_qpn;
	} else {		/* flood: a made-up node each time */
		m.type = KRC_MSG_CONNECT_REQ;
		m.card.gid[10] = 0xff;
		m.card.gid[11] = 0xff;
		m.card.gid[12] = 10;
		m.card.gid[13] = 99;
		m.card.gid[14] = (uint8_t)(i >> 8);
		m.card.gid[15] = (uint8_t)i;
		m.card.ud_qpn = 2 + (uint32_t)rand_r(seed) % 1000;
		m.card.incarnation = (uint64_t)rand_r(seed) + 1;
	}
	if (m.type != KRC_MSG_CONNECT_REQ && m.type != KRC_MSG_CONNECT_REP) {
		m.qpn = 0;
		m.psn = 0;
	}
	if (m.type != KRC_MSG_CONNECT_REP)
		m.peer_qpn = 0;
	krc_msg_encode(&m, buf);
	return KRC_MSG_SIZE;
}

/* A datagram-path message from a QP that is no node's control QP. */
static size_t make_dg(uint8_t *buf, unsigned int i, uint32_t rkey,
		      unsigned int *seed)
{
	static const uint8_t ops[] = {
		KRCORE_WR_READ, KRCORE_WR_WRITE, KRCORE_WR_ATOMIC_FAA,
	};
	struct krc_dg_hdr h;
	size_t k, len = KRC_DG_HDR_SIZE;

	memset(&h, 0, sizeof(h));
	h.type = i % 3 == 2 ? KRC_DG_REP : KRC_DG_REQ;
	h.opcode = ops[(i / 3) % 3];
	h.flags = KRC_DG_F_LAST;
	h.seq = 0;
	h.stream = ((uint64_t)rand_r(seed) << 32 | (uint64_t)rand_r(seed)) | 1;
	h.remote_addr = 0x10000;
	h.rkey = rkey;
	h.len = 8;
	h.compare_add = 1;
	if (h.type == KRC_DG_REP) {
		h.opcode = KRCORE_WR_READ;
		h.len = 8;
	}
	krc_dg_encode(&h, buf);
	if (h.opcode == KRCORE_WR_WRITE || h.type == KRC_DG_REP)
		len += 8;
	if (i % 3 == 0) {	/* the magic, then random bytes */
		for (k = 4; k < BUF; k++)
			buf[k] = (uint8_t)rand_r(seed);
		len = (size_t)(rand_r(seed) % (BUF - 4)) + 4;
	}
	return len;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	unsigned int seed = 42, i, count, sent = 0;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf, gid[16];
	int n, gid_index;

	const char *kind = argc > 7 ? argv[7] : NULL;
	uint8_t vgid[16] = { 0 };
	uint32_t vqpn = 0;
	uint64_t vinc = 0;

	uint32_t dg_rkey = 0;

	if (argc != 7 && argc != 8 && argc != 11 &&
	    !(argc == 9 && !strcmp(argv[7], "dg"))) {
		fprintf(stderr, "usage: ud_garbage IBDEV GID_INDEX PEER_ADDR QPN QKEY COUNT\n"
			"         [as|self ADDR UDQPN INC | flood | dg RKEY]\n");
		return 2;
	}
	if (argc == 9)
		dg_rkey = (uint32_t)strtoul(argv[8], NULL, 0);
	if (argc == 11) {
		if (krc_gid_parse(argv[8], vgid))
			return 2;
		vqpn = (uint32_t)strtoul(argv[9], NULL, 0);
		vinc = strtoull(argv[10], NULL, 16);
	}
	gid_index = atoi(argv[2]);
	if (krc_gid_parse(argv[3], gid)) {
		fprintf(stderr, "ud_garbage: bad address\n");
		return 2;
	}
	count = (unsigned int)atoi(argv[6]);
	ctx = ud_open(argv[1]);
	if (!ctx) {
		fprintf(stderr, "ud_garbage: no device %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = calloc(1, BUF);
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!cq || !mr)
		return 1;
	qp = ud_qp(pd, cq, 16, 1, 0x11111111);
	if (!qp)
		return 1;
	ah = ud_ah(pd, 1, (uint8_t)gid_index, gid);
	if (!ah) {
		perror("ud_garbage: ibv_create_ah");
		return 1;
	}
	for (i = 0; i < count; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf,
			.lkey = mr->lkey,
		};
		struct ibv_send_wr wr = {}, *bad;

		if (kind && !strcmp(kind, "dg"))
			sge.length = (uint32_t)make_dg(buf, i, dg_rkey, &seed);
		else if (kind)
			sge.length = (uint32_t)make_lie(buf, i, kind, vgid, vqpn,
							vinc, qp->qp_num, &seed);
		else
			sge.length = (uint32_t)make_msg(buf, i, &seed);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = (uint32_t)strtoul(argv[4], NULL, 0);
		wr.wr.ud.remote_qkey = (uint32_t)strtoul(argv[5], NULL, 0);
		if (ibv_post_send(qp, &wr, &bad))
			break;
		while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
			;
		if (n < 0 || wc.status != IBV_WC_SUCCESS)
			break;
		sent++;
	}
	printf("ud_garbage: sent %u of %u %s datagrams\n", sent, count,
	       kind ? "lying" : "malformed");
	return sent == count ? 0 : 1;
}
