/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dgram.h - the datagram transport of VQs: a VQ whose peer has no pooled
 * RC connection yet sends its requests over the nodes' control UD QPs;
 * the peer's kernel executes them and answers. This file is the wire
 * format and the protocol logic that needs no kernel.
 *
 * Reliability: every node keeps, per peer, one request stream (the
 * requests of all its VQs to that peer, in order). A stream has a random
 * non-zero id and numbers its datagrams 0, 1, 2, ...; the responder
 * executes them strictly in order (a datagram ahead of the next expected
 * one is dropped, the requester repeats it: go-back-N), remembers the
 * reply of the last KRC_DG_WINDOW datagrams and answers a repeated one
 * from that cache, so every request executes exactly once, even atomics
 * and SENDs. The requester has at most KRC_DG_WINDOW datagrams
 * outstanding, so a repeat always finds its reply cached.
 *
 * A request longer than one datagram's payload is cut into segments, each
 * a READ or WRITE of its own part (only the last carries a WRITE_IMM's
 * immediate), or a part of a SEND that the responder puts together (its
 * remote_addr is the part's offset in the message); the VQ sees one
 * completion.
 *
 * Wire form (little-endian), a 72-byte header then the payload:
 *   0  u32 magic (KRC_DG_MAGIC)   4 u8 version   5 u8 type (REQ, REP)
 *   6  u8 opcode (KRCORE_WR_*)    7 u8 flags (KRC_DG_F_*)
 *   8  u32 seq                    12 u32 len
 *   16 u64 stream                 24 u64 dst_incarnation
 *   32 u64 remote_addr            40 u32 rkey
 *   44 u16 dst_port               46 u16 src_port
 *   48 u64 compare_add            56 u64 swap
 *   64 u32 imm_data               68 u32 status (REP: KRCORE_WC_*)
 * REQ: len is the bytes to READ (no payload) or the payload's length
 * (WRITE, WRITE_IMM, SEND, SEND_IMM); atomics: 8, no payload. A READ,
 * WRITE or WRITE_IMM segment names its whole request: swap is the
 * request's first remote address, compare_add its length (at most
 * KRCORE_MAX_MSG), and [remote_addr, remote_addr + len) lies inside it:
 * the responder checks the whole range with every segment, so a request
 * is refused all of it or none (as an RDMA responder refuses a request
 * at its first packet). Version 2; version 1 had no range.
 * REP: len is the payload's length (a READ's data, an atomic's original
 * value); dst_incarnation is the requester's expectation echoed back.
 */
#ifndef KRC_COMMON_DGRAM_H
#define KRC_COMMON_DGRAM_H

#include "compat.h"
#include "../include/uapi/krcore.h"

#define KRC_DG_MAGIC		0x3144524bU	/* "KRD1" */
#define KRC_DG_VERSION		2
#define KRC_DG_HDR_SIZE		72
/* Datagrams a stream may have outstanding (and replies a responder keeps). */
#define KRC_DG_WINDOW		64
/* The largest payload of one datagram (a 4096-byte MTU). */
#define KRC_DG_MAX_PAYLOAD	(4096 - KRC_DG_HDR_SIZE)

enum krc_dg_type {
	KRC_DG_REQ	= 1,
	KRC_DG_REP	= 2,
};

enum krc_dg_flags {
	KRC_DG_F_LAST	= 1 << 0,	/* the last segment of a request */
	KRC_DG_F_STALE	= 1 << 1,	/* REP: dst_incarnation is not mine */
	/*
	 * REP: a datagram came ahead of @seq, the one I expect next: send
	 * again from there (before the timeout). No payload, status 0.
	 */
	KRC_DG_F_NAK	= 1 << 2,
	KRC_DG_F_ALL	= KRC_DG_F_LAST | KRC_DG_F_STALE | KRC_DG_F_NAK,
};

struct krc_dg_hdr {
	u8 type;
	u8 opcode;
	u8 flags;
	u32 seq;
	u32 len;
	u64 stream;
	u64 dst_incarnation;
	u64 remote_addr;
	u32 rkey;
	u16 dst_port;
	u16 src_port;
	u64 compare_add;
	u64 swap;
	u32 imm_data;
	u32 status;
};

void krc_dg_encode(const struct krc_dg_hdr *h, u8 buf[KRC_DG_HDR_SIZE]);

/*
 * Decode the header of a datagram of @len bytes (header and payload).
 * Returns 0 or -EBADMSG: short, bad magic, unknown type, opcode or flags,
 * a zero stream, a REQ whose len does not fit its opcode (READ 1 ..
 * KRC_DG_MAX_PAYLOAD, atomics exactly 8 with an 8-aligned address, the
 * others the payload's length, 1 .. KRC_DG_MAX_PAYLOAD, SENDs may be 0),
 * a WRITE_IMM immediate beyond 16 bits, a READ/WRITE/WRITE_IMM segment
 * outside the request it names (swap, compare_add), a REQ with a status,
 * a REP whose len is not its payload's or whose status is not a
 * KRCORE_WC_* value; -EPROTO: unknown version.
 */
int krc_dg_decode(const u8 *buf, size_t len, struct krc_dg_hdr *h);

/* Does opcode @op carry its payload in the request (WRITE*, SEND*)? */
/*
 * Can a request of @opcode over remote bytes [@start, @start + @total)
 * travel as datagrams? READ, WRITE and WRITE_IMM segments name their
 * whole request (swap, compare_add), which the decoder refuses beyond
 * KRCORE_MAX_MSG or when it runs to or past 2^64: the sender must not
 * send what the responder would drop unanswered.
 */
bool krc_dg_req_range_ok(u8 opcode, u64 start, u64 total);
bool krc_dg_op_has_payload(u8 op);
/* Does a reply to opcode @op carry data (READ, atomics)? */
bool krc_dg_op_returns_data(u8 op);

/* Where a datagram stands relative to what the responder expects next. */
enum krc_dg_seq_class {
	KRC_DG_SEQ_NEXT,	/* the next one: execute it */
	KRC_DG_SEQ_DUP,		/* one of the last KRC_DG_WINDOW: from the cache */
	KRC_DG_SEQ_OLD,		/* older than the cache: drop */
	KRC_DG_SEQ_AHEAD,	/* beyond the next one: drop (go-back-N) */
};

/* Sequence numbers wrap: compared as a signed 32-bit distance. */
enum krc_dg_seq_class krc_dg_seq_classify(u32 expected, u32 seq);

/*
 * Segments: how many datagrams a request of @len bytes (at most
 * KRCORE_MAX_MSG) takes with @seg bytes of payload each: READ, WRITE,
 * WRITE_IMM and SENDs are cut, atomics take one; 0 if @seg is 0 or
 * @len is beyond KRCORE_MAX_MSG.
 */
u32 krc_dg_nsegs(u8 opcode, u64 len, u32 seg);

/*
 * The SGEs covering bytes [@off, @off + @len) of the buffer described by
 * @sg (@n entries, in order): written to @out (at most @max), returns how
 * many, or -1 if the range is not inside the buffer or needs more.
 */
int krc_dg_slice(const struct krcore_sge *sg, int n, u64 off, u32 len,
		 struct krcore_sge *out, int max);

#endif /* KRC_COMMON_DGRAM_H */
