// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_dgram.c - libFuzzer target for the datagram transport's protocol
 * code (common/dgram.c). Every input is a datagram for krc_dg_decode(),
 * whose verdict must be the rule of dgram.h (written out here from that
 * comment); what it accepts must re-encode to the same 72 header bytes
 * and decode again to the same values; an accepted READ, WRITE or
 * WRITE_IMM REQ has its segment inside the request it names (swap,
 * compare_add), at most KRCORE_MAX_MSG bytes, with no wrap past 2^64.
 * The same bytes also give a READ/WRITE/WRITE_IMM (or other) request
 * whose range lies around the edges (0, 2^63, 2^64, len, KRCORE_MAX_MSG),
 * built and decoded the same way, to reach those edges more often. They
 * also describe an SGE list and a range for krc_dg_slice(), checked
 * against a reference: the SGEs it returns lie inside the input's, in
 * order, and add up to the range. Sequence classes and segment counts get
 * the input too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dgram.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static bool status_ok(u32 st)
{
	return st <= KRCORE_WC_GENERAL_ERR ||
	       st == KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN ||
	       st == KRCORE_WC_UNREACHABLE;
}

/* A REQ's len against its opcode and payload, as dgram.h says. */
static bool req_rule(u8 op, u32 len, u64 raddr, u32 imm, size_t payload)
{
	switch (op) {
	case KRCORE_WR_READ:
		return !payload && len >= 1 && len <= KRC_DG_MAX_PAYLOAD;
	case KRCORE_WR_ATOMIC_CAS:
	case KRCORE_WR_ATOMIC_FAA:
		return !payload && len == 8 && !(raddr % 8);
	case KRCORE_WR_WRITE:
		return len == payload && len >= 1 && len <= KRC_DG_MAX_PAYLOAD;
	case KRCORE_WR_WRITE_IMM:
		return len == payload && len >= 1 &&
		       len <= KRC_DG_MAX_PAYLOAD && imm <= 0xffff;
	case KRCORE_WR_SEND:
	case KRCORE_WR_SEND_IMM:
		return len == payload && len <= KRC_DG_MAX_PAYLOAD;
	default:
		return false;
	}
}

static bool op_has_range(u8 op)
{
	return op == KRCORE_WR_READ || op == KRCORE_WR_WRITE ||
	       op == KRCORE_WR_WRITE_IMM;
}

/*
 * Version 2: a READ/WRITE/WRITE_IMM segment [raddr, raddr + len) lies
 * inside the request it names, [swap, swap + compare_add), at most
 * KRCORE_MAX_MSG bytes long and ending at 2^64 - 1 or below (written with
 * ends, the decoder with offsets).
 */
static bool range_rule(u8 op, u32 len, u64 raddr, u64 swap, u64 compare_add)
{
	if (!op_has_range(op))
		return true;
	if (compare_add > KRCORE_MAX_MSG || swap > ~0ULL - compare_add)
		return false;
	if (raddr < swap || raddr > ~0ULL - len)
		return false;
	return raddr + len <= swap + compare_add;
}

/* krc_dg_decode()'s verdict on @data by the rules of dgram.h. */
static int dg_rule(const uint8_t *data, size_t size)
{
	u8 type, op, flags;
	u32 len, imm, status;
	size_t payload;

	if (size < KRC_DG_HDR_SIZE || krc_get_le32(data) != KRC_DG_MAGIC)
		return -EBADMSG;
	if (data[4] != KRC_DG_VERSION)
		return -EPROTO;
	type = data[5];
	op = data[6];
	flags = data[7];
	len = krc_get_le32(data + 12);
	imm = krc_get_le32(data + 64);
	status = krc_get_le32(data + 68);
	payload = size - KRC_DG_HDR_SIZE;
	if (op < KRCORE_WR_READ || op > KRCORE_WR_ATOMIC_FAA)
		return -EBADMSG;
	if ((flags & ~KRC_DG_F_ALL) || !krc_get_le64(data + 16))
		return -EBADMSG;
	if (type == KRC_DG_REP) {
		/* a NAK stands alone: no other flag, payload or status */
		if (flags & KRC_DG_F_NAK &&
		    (flags != KRC_DG_F_NAK || len || status))
			return -EBADMSG;
		return len == payload && len <= KRC_DG_MAX_PAYLOAD &&
		       status_ok(status) ? 0 : -EBADMSG;
	}
	if (type != KRC_DG_REQ || (flags & (KRC_DG_F_STALE | KRC_DG_F_NAK)) ||
	    status)
		return -EBADMSG;
	if (!range_rule(op, len, krc_get_le64(data + 32),
			krc_get_le64(data + 56), krc_get_le64(data + 48)))
		return -EBADMSG;
	return req_rule(op, len, krc_get_le64(data + 32), imm, payload) ?
	       0 : -EBADMSG;
}

static bool hdr_equal(const struct krc_dg_hdr *a, const struct krc_dg_hdr *b)
{
	return a->type == b->type && a->opcode == b->opcode &&
	       a->flags == b->flags && a->seq == b->seq && a->len == b->len &&
	       a->stream == b->stream &&
	       a->dst_incarnation == b->dst_incarnation &&
	       a->remote_addr == b->remote_addr && a->rkey == b->rkey &&
	       a->dst_port == b->dst_port && a->src_port == b->src_port &&
	       a->compare_add == b->compare_add && a->swap == b->swap &&
	       a->imm_data == b->imm_data && a->status == b->status;
}

static void fuzz_decode(const uint8_t *data, size_t size)
{
	struct krc_dg_hdr h, h2;
	u8 out[KRC_DG_HDR_SIZE];
	u8 *copy;
	int rc;

	rc = krc_dg_decode(data, size, &h);
	check(rc == dg_rule(data, size));
	if (rc)
		return;
	/* what the decoder guarantees its callers */
	check(h.type == KRC_DG_REQ || h.type == KRC_DG_REP);
	check(h.opcode >= KRCORE_WR_READ && h.opcode <= KRCORE_WR_ATOMIC_FAA);
	check(!(h.flags & ~KRC_DG_F_ALL) && h.stream);
	check(h.len <= KRC_DG_MAX_PAYLOAD);
	if (h.type == KRC_DG_REP)
		check(h.len == size - KRC_DG_HDR_SIZE && status_ok(h.status));
	else if (krc_dg_op_has_payload(h.opcode))
		check(h.len == size - KRC_DG_HDR_SIZE && !h.status);
	else
		check(size == KRC_DG_HDR_SIZE && h.len && !h.status);
	/*
	 * a READ/WRITE/WRITE_IMM REQ: its segment inside its request,
	 * which ends at 2^64 - 1 or below and is at most KRCORE_MAX_MSG long
	 */
	if (h.type == KRC_DG_REQ && op_has_range(h.opcode)) {
		check(h.compare_add <= KRCORE_MAX_MSG);
		check(h.len <= h.compare_add);
		check(h.swap + h.compare_add >= h.swap);
		check(h.remote_addr >= h.swap);
		check(h.remote_addr + h.len >= h.remote_addr);
		check(h.remote_addr + h.len <= h.swap + h.compare_add);
	}
	/* the header re-encodes to the same bytes */
	memset(out, 0, sizeof(out));
	krc_dg_encode(&h, out);
	check(!memcmp(out, data, sizeof(out)));
	/* and decodes again, with the same payload, to the same values */
	copy = malloc(size);
	check(copy);
	memcpy(copy, out, sizeof(out));
	memcpy(copy + sizeof(out), data + sizeof(out), size - sizeof(out));
	memset(&h2, 0x5a, sizeof(h2));
	check(krc_dg_decode(copy, size, &h2) == 0);
	check(hdr_equal(&h, &h2));
	free(copy);
}

#define SL_MAX_N	7
#define SL_FIXED	13	/* control byte, off, len */
#define SL_SGE		16	/* addr, length, lkey */

/*
 * The SGE list and range from the input: byte 0 gives the SGE count (bits
 * 0-2), max (bits 3-5), small numbers (bit 6: short SGEs and ranges, for
 * more hits inside the buffer) and a relative offset (bit 7: modulo the
 * buffer's length plus 2); then u64 off, u32 len, and the SGEs.
 */
static void fuzz_slice(const uint8_t *data, size_t size)
{
	struct krcore_sge sg[SL_MAX_N], out[SL_MAX_N + 1], canary;
	u64 prefix[SL_MAX_N + 1], off, total, p;
	u32 len, left;
	int n, max, rc, i, j, k;
	bool small, rel;

	if (size < SL_FIXED)
		return;
	n = data[0] & 7;
	max = (data[0] >> 3) & 7;
	small = data[0] & 0x40;
	rel = data[0] & 0x80;
	off = krc_get_le64(data + 1);
	len = krc_get_le32(data + 9);
	if ((size_t)n > (size - SL_FIXED) / SL_SGE)
		n = (int)((size - SL_FIXED) / SL_SGE);
	prefix[0] = 0;
	for (i = 0; i < n; i++) {
		const uint8_t *s = data + SL_FIXED + i * SL_SGE;

		sg[i].addr = krc_get_le64(s);
		sg[i].length = krc_get_le32(s + 8);
		sg[i].lkey = krc_get_le32(s + 12);
		if (small)
			sg[i].length &= 0x3f;
		prefix[i + 1] = prefix[i] + sg[i].length;
	}
	total = prefix[n];
	if (small) {
		len &= 0xff;
		off &= 0xff;
	}
	if (rel)
		off %= total + 2;

	memset(&canary, 0xcc, sizeof(canary));
	for (i = 0; i <= SL_MAX_N; i++)
		out[i] = canary;
	rc = krc_dg_slice(sg, n, off, len, out, max);
	/* nothing written at or beyond max */
	for (i = max; i <= SL_MAX_N; i++)
		check(!memcmp(&out[i], &canary, sizeof(canary)));
	if (!len) {
		/* an empty range: no SGE (or "not inside" beyond the end) */
		check(rc == 0 || (rc == -1 && off > total));
		return;
	}
	if (off > total || len > total - off) {
		check(rc == -1);
		return;
	}
	/* the reference: the SGE pieces of [off, off + len), in order */
	k = 0;
	for (i = 0; i < n; i++) {
		if (sg[i].length && off < prefix[i + 1] &&
		    off + len > prefix[i])
			k++;
	}
	if (k > max) {
		check(rc == -1);
		return;
	}
	check(rc == k);
	p = off;
	left = len;
	i = 0;
	for (j = 0; j < rc; j++) {
		u64 in;
		u32 take;

		/* the input SGE holding byte p: later than the last one's */
		while (p >= prefix[i + 1])
			i++;
		in = p - prefix[i];
		take = sg[i].length - in < left ? (u32)(sg[i].length - in) :
		       left;
		check(out[j].addr == sg[i].addr + in);
		check(out[j].length == take && take > 0);
		check(out[j].lkey == sg[i].lkey);
		/* inside the input SGE */
		check(out[j].addr - sg[i].addr + out[j].length <=
		      sg[i].length);
		p += take;
		left -= take;
	}
	check(!left && p == off + len);
}

/* The signed 32-bit distance, the long way. */
static void fuzz_seq(const uint8_t *data, size_t size)
{
	enum krc_dg_seq_class c, want;
	u32 expected, seq;
	s64 d;

	if (size < 8)
		return;
	expected = krc_get_le32(data);
	seq = krc_get_le32(data + 4);
	d = (s64)seq - (s64)expected;
	if (d >= 0x80000000LL)
		d -= 0x100000000LL;
	else if (d < -0x80000000LL)
		d += 0x100000000LL;
	if (!d)
		want = KRC_DG_SEQ_NEXT;
	else if (d > 0)
		want = KRC_DG_SEQ_AHEAD;
	else if (d >= -KRC_DG_WINDOW)
		want = KRC_DG_SEQ_DUP;
	else
		want = KRC_DG_SEQ_OLD;
	c = krc_dg_seq_classify(expected, seq);
	check(c == want);
}

/* Segments of a request up to KRCORE_MAX_MSG bytes. */
static void fuzz_nsegs(const uint8_t *data, size_t size)
{
	u64 len;
	u32 seg, n;
	u8 op;

	if (size < 13)
		return;
	op = data[0];
	len = krc_get_le64(data + 1) % (KRCORE_MAX_MSG + 1ULL);
	seg = krc_get_le32(data + 9);
	n = krc_dg_nsegs(op, len, seg);
	if (!seg) {
		check(n == 0);
		return;
	}
	switch (op) {
	case KRCORE_WR_READ:
	case KRCORE_WR_WRITE:
	case KRCORE_WR_WRITE_IMM:
		check(n == (len ? (len - 1) / seg + 1 : 1));
		/* n segments hold len, n - 1 would not */
		check((u64)n * seg >= len && (!len || (u64)(n - 1) * seg < len));
		break;
	case KRCORE_WR_SEND:
	case KRCORE_WR_SEND_IMM:
		/* one datagram; beyond seg dgram.h and the code disagree */
		if (len <= seg)
			check(n == 1);
		break;
	default:
		check(n == 1);
		break;
	}
}

#define RG_FIXED	27	/* control, swap, offset, compare_add, len */

/*
 * A REQ whose range the input places around the edges, through
 * fuzz_decode(). Byte 0: the opcode (bits 0-2, modulo 7), swap (bits 3-4:
 * near 0, 2^63 or 2^64 - KRCORE_MAX_MSG, or the input's u64), compare_add
 * (bits 5-6: below 2^12, near KRCORE_MAX_MSG, below 2^32, or the input's
 * u64) and bit 7: no payload (else the one a sender attaches); then u64
 * swap, u64 remote_addr - swap (by its top two bits: 0x: near 0 on either
 * side, 10: near compare_add - len, the request's end, 11: as it is), u64
 * compare_add, u16 len (modulo 2^13).
 */
static void fuzz_range(const uint8_t *data, size_t size)
{
	static u8 buf[KRC_DG_HDR_SIZE + KRC_DG_MAX_PAYLOAD + 1];
	static const u64 swap_base[] = {
		0, 1ULL << 63, 0 - (u64)KRCORE_MAX_MSG,
	};
	struct krc_dg_hdr h, d;
	u64 swap, off, ca;
	size_t payload, room = sizeof(buf) - KRC_DG_HDR_SIZE;
	bool others_ok;
	u8 c, sb, cb;
	u32 len;
	int rc;

	if (size < RG_FIXED)
		return;
	c = data[0];
	sb = (c >> 3) & 3;
	cb = (c >> 5) & 3;
	swap = krc_get_le64(data + 1);
	off = krc_get_le64(data + 9);
	ca = krc_get_le64(data + 17);
	if (sb < 3)
		swap = swap_base[sb] + (u64)(s64)(int16_t)(swap & 0xffff) * 16;
	if (cb == 0)
		ca &= 0xfff;
	else if (cb == 1)
		ca = KRCORE_MAX_MSG - 0x800 + (ca & 0xfff);
	else if (cb == 2)
		ca &= 0xffffffffULL;
	len = krc_get_le16(data + 25) & 0x1fff;
	if (off >> 62 == 2)
		off = ca - len + (u64)(s64)(int16_t)(off & 0xffff);
	else if (off >> 62 < 2)
		off = (u64)(s64)(int16_t)(off & 0xffff);

	memset(&h, 0, sizeof(h));
	h.type = KRC_DG_REQ;
	h.opcode = KRCORE_WR_READ + (c & 7) % 7;
	h.flags = KRC_DG_F_LAST;
	h.stream = 1;
	h.len = len;
	h.swap = swap;
	h.compare_add = ca;
	h.remote_addr = swap + off;
	if (h.opcode == KRCORE_WR_ATOMIC_CAS ||
	    h.opcode == KRCORE_WR_ATOMIC_FAA) {
		/* a fitting len and address: only the operands vary */
		h.len = 8;
		h.remote_addr &= ~7ULL;
	}
	payload = 0;
	if (!(c & 0x80) && krc_dg_op_has_payload(h.opcode))
		payload = h.len < room ? h.len : room;
	krc_dg_encode(&h, buf);
	memset(buf + KRC_DG_HDR_SIZE, 0x5a, payload);
	fuzz_decode(buf, KRC_DG_HDR_SIZE + payload);

	/* where every other rule is met, the verdict is the range's */
	others_ok = h.len <= KRC_DG_MAX_PAYLOAD &&
		    (h.len || h.opcode == KRCORE_WR_SEND ||
		     h.opcode == KRCORE_WR_SEND_IMM) &&
		    payload == (krc_dg_op_has_payload(h.opcode) ? h.len : 0);
	rc = krc_dg_decode(buf, KRC_DG_HDR_SIZE + payload, &d);
	if (others_ok)
		check(rc == (range_rule(h.opcode, h.len, h.remote_addr, h.swap,
					h.compare_add) ? 0 : -EBADMSG));
	else
		check(rc == -EBADMSG);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size);
	fuzz_range(data, size);
	fuzz_slice(data, size);
	fuzz_seq(data, size);
	fuzz_nsegs(data, size);
	return 0;
}
