// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dgram.c - the datagram transport's wire format and protocol logic
 * (dgram.h). Encoders write every reserved bit as zero; the decoder
 * rejects what no conforming sender writes.
 */
#include "dgram.h"

#define DG_MAGIC	0
#define DG_VERSION	4
#define DG_TYPE		5
#define DG_OPCODE	6
#define DG_FLAGS	7
#define DG_SEQ		8
#define DG_LEN		12
#define DG_STREAM	16
#define DG_DST_INC	24
#define DG_RADDR	32
#define DG_RKEY		40
#define DG_DST_PORT	44
#define DG_SRC_PORT	46
#define DG_COMPARE	48
#define DG_SWAP		56
#define DG_IMM		64
#define DG_STATUS	68

void krc_dg_encode(const struct krc_dg_hdr *h, u8 buf[KRC_DG_HDR_SIZE])
{
	krc_put_le32(buf + DG_MAGIC, KRC_DG_MAGIC);
	buf[DG_VERSION] = KRC_DG_VERSION;
	buf[DG_TYPE] = h->type;
	buf[DG_OPCODE] = h->opcode;
	buf[DG_FLAGS] = h->flags;
	krc_put_le32(buf + DG_SEQ, h->seq);
	krc_put_le32(buf + DG_LEN, h->len);
	krc_put_le64(buf + DG_STREAM, h->stream);
	krc_put_le64(buf + DG_DST_INC, h->dst_incarnation);
	krc_put_le64(buf + DG_RADDR, h->remote_addr);
	krc_put_le32(buf + DG_RKEY, h->rkey);
	krc_put_le16(buf + DG_DST_PORT, h->dst_port);
	krc_put_le16(buf + DG_SRC_PORT, h->src_port);
	krc_put_le64(buf + DG_COMPARE, h->compare_add);
	krc_put_le64(buf + DG_SWAP, h->swap);
	krc_put_le32(buf + DG_IMM, h->imm_data);
	krc_put_le32(buf + DG_STATUS, h->status);
}

bool krc_dg_op_has_payload(u8 op)
{
	return op == KRCORE_WR_WRITE || op == KRCORE_WR_WRITE_IMM ||
	       op == KRCORE_WR_SEND || op == KRCORE_WR_SEND_IMM;
}

bool krc_dg_op_returns_data(u8 op)
{
	return op == KRCORE_WR_READ || op == KRCORE_WR_ATOMIC_CAS ||
	       op == KRCORE_WR_ATOMIC_FAA;
}

static bool krc_dg_status_ok(u32 st)
{
	return st <= 21 || st == KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN ||
	       st == KRCORE_WC_UNREACHABLE;
}

/* A request's len against its opcode and the payload that came with it. */
static bool krc_dg_req_ok(const struct krc_dg_hdr *h, size_t payload)
{
	bool atomic = h->opcode == KRCORE_WR_ATOMIC_CAS ||
		      h->opcode == KRCORE_WR_ATOMIC_FAA;
	bool send = h->opcode == KRCORE_WR_SEND ||
		    h->opcode == KRCORE_WR_SEND_IMM;

	if (h->status)
		return false;
	if (h->opcode == KRCORE_WR_READ)
		return payload == 0 && h->len >= 1 &&
		       h->len <= KRC_DG_MAX_PAYLOAD;
	if (atomic)
		return payload == 0 && h->len == 8 && !(h->remote_addr & 7);
	if (h->opcode == KRCORE_WR_WRITE_IMM && h->imm_data > 0xffff)
		return false;
	if (h->len != payload || h->len > KRC_DG_MAX_PAYLOAD)
		return false;
	return send || h->len >= 1;
}

/*
 * READ, WRITE and WRITE_IMM segments name their whole request: swap is
 * its first remote address, compare_add its length, and the segment lies
 * inside it (so the responder checks the request's range, all of it,
 * with every segment).
 */
static bool krc_dg_range_ok(const struct krc_dg_hdr *h)
{
	if (h->opcode != KRCORE_WR_READ && h->opcode != KRCORE_WR_WRITE &&
	    h->opcode != KRCORE_WR_WRITE_IMM)
		return true;
	return h->compare_add >= h->len &&
	       krc_dg_req_range_ok(h->opcode, h->swap, h->compare_add) &&
	       h->remote_addr >= h->swap &&
	       h->remote_addr - h->swap <= h->compare_add - h->len;
}

bool krc_dg_req_range_ok(u8 opcode, u64 start, u64 total)
{
	if (opcode != KRCORE_WR_READ && opcode != KRCORE_WR_WRITE &&
	    opcode != KRCORE_WR_WRITE_IMM)
		return true;
	return total <= KRCORE_MAX_MSG && start + total >= start;
}

int krc_dg_decode(const u8 *buf, size_t len, struct krc_dg_hdr *h)
{
	size_t payload;

	if (!buf || len < KRC_DG_HDR_SIZE)
		return -EBADMSG;
	if (krc_get_le32(buf + DG_MAGIC) != KRC_DG_MAGIC)
		return -EBADMSG;
	if (buf[DG_VERSION] != KRC_DG_VERSION)
		return -EPROTO;
	memset(h, 0, sizeof(*h));
	h->type = buf[DG_TYPE];
	h->opcode = buf[DG_OPCODE];
	h->flags = buf[DG_FLAGS];
	h->seq = krc_get_le32(buf + DG_SEQ);
	h->len = krc_get_le32(buf + DG_LEN);
	h->stream = krc_get_le64(buf + DG_STREAM);
	h->dst_incarnation = krc_get_le64(buf + DG_DST_INC);
	h->remote_addr = krc_get_le64(buf + DG_RADDR);
	h->rkey = krc_get_le32(buf + DG_RKEY);
	h->dst_port = krc_get_le16(buf + DG_DST_PORT);
	h->src_port = krc_get_le16(buf + DG_SRC_PORT);
	h->compare_add = krc_get_le64(buf + DG_COMPARE);
	h->swap = krc_get_le64(buf + DG_SWAP);
	h->imm_data = krc_get_le32(buf + DG_IMM);
	h->status = krc_get_le32(buf + DG_STATUS);
	payload = len - KRC_DG_HDR_SIZE;

	if (h->opcode < KRCORE_WR_READ || h->opcode > KRCORE_WR_ATOMIC_FAA)
		return -EBADMSG;
	if (h->flags & ~KRC_DG_F_ALL || !h->stream)
		return -EBADMSG;
	switch (h->type) {
	case KRC_DG_REQ:
		if (h->flags & (KRC_DG_F_STALE | KRC_DG_F_NAK) ||
		    !krc_dg_req_ok(h, payload) || !krc_dg_range_ok(h))
			return -EBADMSG;
		return 0;
	case KRC_DG_REP:
		if (h->len != payload || h->len > KRC_DG_MAX_PAYLOAD ||
		    !krc_dg_status_ok(h->status))
			return -EBADMSG;
		if (h->flags & KRC_DG_F_NAK &&
		    (h->len || h->status || h->flags != KRC_DG_F_NAK))
			return -EBADMSG;
		return 0;
	default:
		return -EBADMSG;
	}
}

enum krc_dg_seq_class krc_dg_seq_classify(u32 expected, u32 seq)
{
	s32 d = (s32)(seq - expected);

	if (d == 0)
		return KRC_DG_SEQ_NEXT;
	if (d > 0)
		return KRC_DG_SEQ_AHEAD;
	if (d >= -(s32)KRC_DG_WINDOW)
		return KRC_DG_SEQ_DUP;
	return KRC_DG_SEQ_OLD;
}

u32 krc_dg_nsegs(u8 opcode, u64 len, u32 seg)
{
	if (!seg || len > KRCORE_MAX_MSG)
		return 0;
	switch (opcode) {
	case KRCORE_WR_READ:
	case KRCORE_WR_WRITE:
	case KRCORE_WR_WRITE_IMM:
	case KRCORE_WR_SEND:
	case KRCORE_WR_SEND_IMM:
		return len ? (u32)((len + seg - 1) / seg) : 1;
	default:
		return 1;
	}
}

int krc_dg_slice(const struct krcore_sge *sg, int n, u64 off, u32 len,
		 struct krcore_sge *out, int max)
{
	int i, k = 0;

	for (i = 0; i < n && len; i++) {
		u64 take;

		if (off >= sg[i].length) {
			off -= sg[i].length;
			continue;
		}
		if (k == max)
			return -1;
		take = sg[i].length - off;
		if (take > len)
			take = len;
		out[k].addr = sg[i].addr + off;
		out[k].length = (u32)take;
		out[k].lkey = sg[i].lkey;
		k++;
		len -= (u32)take;
		off = 0;
	}
	return len ? -1 : k;
}
