// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_rpc.c - libFuzzer target for RPC headers (version 2) and the
 * server's sessions (common/rpc.c).
 *
 * The whole input is decoded as a message twice: as it is, and shaped
 * (magic, version and reserved fields made right, inline_len made the
 * rest of the message, and as the version byte says, flags, type,
 * slot, status, lengths and addresses brought to the edges of the rules,
 * so that most inputs reach the rules of the types). The decoder's
 * answer must be that of the rules of rpc.h, written out here and applied
 * to the fields read here from the bytes; a header it accepts must hold
 * the rules of its type (a REMOTE reply or a grant has a key and a range
 * that does not wrap, LARGE and WRITTEN calls carry nothing inline, a
 * oneway call wants no reply, a cancel or an ack has only its identity),
 * encode back to the same 64 bytes, and decode again, with its payload,
 * to the same fields.
 *
 * Then the input is read as calls, 4 bytes each: a caller (2 bits of 4,
 * on 2 or 3 session entries), a slot (3 bits), a sequence number (5
 * bits, so they repeat and go back), and whether the call's run ends.
 * Sessions never idle out here, so no (caller, slot, sequence) may be
 * run twice, and every call the table does not refuse is run, resent,
 * busy or old as a plain model of the slot says.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* @n bytes little-endian */
static u64 le(const u8 *p, unsigned int n)
{
	u64 v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void put_le(u8 *p, unsigned int n, u64 v)
{
	unsigned int i;

	for (i = 0; i < n; i++, v >>= 8)
		p[i] = (u8)v;
}

/* The header's fields, at the offsets of the comment in rpc.h. */
static void parse(const u8 *b, struct krc_rpc_hdr *f)
{
	memset(f, 0, sizeof(*f));
	f->type = b[5];
	f->flags = (u16)le(b + 6, 2);
	f->epoch = le(b + 8, 8);
	f->slot = (u16)le(b + 16, 2);
	f->seq = (u32)le(b + 20, 4);
	f->method = (u32)le(b + 24, 4);
	f->inline_len = (u32)le(b + 28, 4);
	f->total_len = le(b + 32, 8);
	f->addr = le(b + 40, 8);
	f->rkey = (u32)le(b + 48, 4);
	f->reply_cap = le(b + 56, 8);
}

static bool same(const struct krc_rpc_hdr *a, const struct krc_rpc_hdr *b)
{
	return a->type == b->type && a->flags == b->flags &&
	       a->epoch == b->epoch && a->slot == b->slot &&
	       a->seq == b->seq && a->method == b->method &&
	       a->inline_len == b->inline_len &&
	       a->total_len == b->total_len && a->addr == b->addr &&
	       a->rkey == b->rkey && a->reply_cap == b->reply_cap;
}

/* The server's memory [addr, addr + total_len): a key, ends by 2^64 - 1 */
static bool range_ok(const struct krc_rpc_hdr *h)
{
	return h->rkey && h->total_len &&
	       h->total_len <= KRC_RPC_MAX_PAYLOAD &&
	       h->addr <= ~0ULL - h->total_len;
}

/* The rules of rpc.h for a header with @payload bytes after it. */
static bool rules_ok(const struct krc_rpc_hdr *h, size_t payload)
{
	bool oneway = h->flags & KRC_RPC_F_ONEWAY;
	bool large = h->flags & KRC_RPC_F_LARGE;
	bool written = h->flags & KRC_RPC_F_WRITTEN;
	bool remote = h->flags & KRC_RPC_F_REMOTE;

	if (h->flags & ~KRC_RPC_F_ALL || !h->epoch || !h->seq ||
	    h->slot >= KRC_RPC_MAX_SLOTS || h->inline_len != payload ||
	    h->total_len > KRC_RPC_MAX_PAYLOAD)
		return false;
	switch (h->type) {
	case KRC_RPC_CALL:
		if (remote || h->addr || h->rkey ||
		    h->reply_cap > KRC_RPC_MAX_PAYLOAD)
			return false;
		if (oneway && (large || written || h->reply_cap))
			return false;
		if (large && written)
			return false;
		if (large || written)
			return !h->inline_len && h->total_len;
		return h->total_len == h->inline_len;
	case KRC_RPC_REPLY:
		if (oneway || large || written || h->reply_cap ||
		    h->method > KRC_RPC_MAX_STATUS)
			return false;
		if (remote)
			return !h->method && !h->inline_len && range_ok(h);
		return !h->addr && !h->rkey && h->total_len == h->inline_len;
	case KRC_RPC_GRANT:
		if (h->flags || h->inline_len || h->reply_cap ||
		    h->method > KRC_RPC_MAX_STATUS)
			return false;
		if (h->method)
			return !h->addr && !h->rkey && !h->total_len;
		return range_ok(h);
	case KRC_RPC_CANCEL:
	case KRC_RPC_ACK:
		return !h->flags && !h->method && !h->inline_len &&
		       !h->total_len && !h->addr && !h->rkey && !h->reply_cap;
	default:
		return false;
	}
}

/* What krc_rpc_decode() must answer, and in @f the fields it reads. */
static int verdict(const u8 *b, size_t size, struct krc_rpc_hdr *f)
{
	if (size < KRC_RPC_HDR_SIZE || le(b, 4) != KRC_RPC_MAGIC)
		return -EBADMSG;
	if (b[4] != KRC_RPC_VERSION)
		return -EPROTO;
	if (le(b + 18, 2) || le(b + 52, 4))
		return -EBADMSG;
	parse(b, f);
	return rules_ok(f, size - KRC_RPC_HDR_SIZE) ? 0 : -EBADMSG;
}

/* What holds of any accepted header, whatever its type. */
static void check_accepted(const struct krc_rpc_hdr *h, size_t payload)
{
	u16 big = h->flags & (KRC_RPC_F_LARGE | KRC_RPC_F_WRITTEN);

	check(h->type >= KRC_RPC_CALL && h->type <= KRC_RPC_ACK);
	check(!(h->flags & ~KRC_RPC_F_ALL) && h->epoch && h->seq &&
	      h->slot < KRC_RPC_MAX_SLOTS);
	check(h->inline_len == payload && h->inline_len <= h->total_len &&
	      h->total_len <= KRC_RPC_MAX_PAYLOAD);
	check(h->reply_cap <= KRC_RPC_MAX_PAYLOAD);
	if (h->type != KRC_RPC_CALL)
		check(!(h->flags & ~KRC_RPC_F_REMOTE) && !h->reply_cap &&
		      h->method <= KRC_RPC_MAX_STATUS);
	if (h->type != KRC_RPC_REPLY)
		check(!(h->flags & KRC_RPC_F_REMOTE));
	/* LARGE or WRITTEN: a call, one of them, nothing inline */
	if (big)
		check(h->type == KRC_RPC_CALL &&
		      big != (KRC_RPC_F_LARGE | KRC_RPC_F_WRITTEN) &&
		      !h->inline_len && h->total_len);
	if (h->flags & KRC_RPC_F_ONEWAY)
		check(!big && !h->reply_cap);
	/* a remote range: a REMOTE reply or a grant, keyed, not wrapping */
	if ((h->flags & KRC_RPC_F_REMOTE) ||
	    (h->type == KRC_RPC_GRANT && !h->method))
		check(!h->inline_len && !h->method && h->rkey &&
		      h->total_len && h->addr + h->total_len > h->addr);
	else
		check(!h->addr && !h->rkey);
	/* more than came inline: only moved one-sided */
	if (h->total_len != h->inline_len)
		check(big || h->rkey);
	if (h->type == KRC_RPC_CANCEL || h->type == KRC_RPC_ACK ||
	    (h->type == KRC_RPC_GRANT && h->method))
		check(!h->flags && !h->inline_len && !h->total_len &&
		      (h->type == KRC_RPC_GRANT || !h->method));
}

static void check_header(const uint8_t *data, size_t size)
{
	struct krc_rpc_hdr h, f, again;
	u8 *copy;
	int rc = krc_rpc_decode(data, size, &h);

	check(rc == verdict(data, size, &f));
	if (rc)
		return;
	check(same(&h, &f));
	check(rules_ok(&h, size - KRC_RPC_HDR_SIZE));
	check_accepted(&h, size - KRC_RPC_HDR_SIZE);
	copy = malloc(size);
	check(copy);
	krc_rpc_encode(&h, copy);
	check(!memcmp(copy, data, KRC_RPC_HDR_SIZE));
	memcpy(copy + KRC_RPC_HDR_SIZE, data + KRC_RPC_HDR_SIZE,
	       size - KRC_RPC_HDR_SIZE);
	check(!krc_rpc_decode(copy, size, &again) && same(&h, &again));
	free(copy);
}

/*
 * The input as a header that passes the checks on its bytes; the version
 * byte, which it does not need, says which fields to bring to the edges.
 */
static void check_shaped(const uint8_t *data, size_t size)
{
	size_t n = size < KRC_RPC_HDR_SIZE ? KRC_RPC_HDR_SIZE : size;
	u8 *b = calloc(n, 1);
	u8 how;
	u64 v;

	check(b);
	if (size)
		memcpy(b, data, size);
	how = b[4];
	put_le(b, 4, KRC_RPC_MAGIC);
	b[4] = KRC_RPC_VERSION;
	put_le(b + 18, 2, 0);
	put_le(b + 52, 4, 0);
	put_le(b + 28, 4, n - KRC_RPC_HDR_SIZE);
	if (how & 0x01) {			/* a known type and flags */
		b[5] = (u8)(1 + b[5] % KRC_RPC_ACK);
		b[6] &= KRC_RPC_F_ALL;
		b[7] = 0;
	}
	if (how & 0x02)				/* a slot, or the first out */
		put_le(b + 16, 2, le(b + 16, 2) % (KRC_RPC_MAX_SLOTS + 1));
	if (how & 0x04)				/* a status, or just over */
		put_le(b + 24, 4, le(b + 24, 4) % (KRC_RPC_MAX_STATUS + 2));
	v = le(b + 32, 8);
	if (how & 0x08)				/* a payload, or just over */
		v %= KRC_RPC_MAX_PAYLOAD + 2;
	if (how & 0x10)				/* all inline */
		v = n - KRC_RPC_HDR_SIZE;
	put_le(b + 32, 8, v);
	if (how & 0x20)				/* near 2^64, to wrap or not */
		put_le(b + 40, 8, ~0ULL - le(b + 40, 8) %
		       (2 * KRC_RPC_MAX_PAYLOAD + 2));
	if (how & 0x40)				/* a reply capacity, or over */
		put_le(b + 56, 8, le(b + 56, 8) % (KRC_RPC_MAX_PAYLOAD + 2));
	if (how & 0x80) {			/* nothing but the identity */
		put_le(b + 24, 4, 0);
		put_le(b + 32, 8, 0);
		put_le(b + 40, 8, 0);
		put_le(b + 48, 4, 0);
		put_le(b + 56, 8, 0);
	}
	check_header(b, n);
	free(b);
}

#define NKEY	4
#define NSLOT	8
#define NSEQ	32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct krc_rpc_sess s[3];
	struct krc_rpc_sessions t;
	struct krc_rpc_key keys[NKEY];
	/* the model: per caller and slot, the last run number and its state */
	u32 last[NKEY][NSLOT];
	u8 st[NKEY][NSLOT];
	u8 ran[NKEY][NSLOT][NSEQ];
	bool known[NKEY];
	size_t at;
	u32 i, nsess;

	check_header(data, size);
	check_shaped(data, size);
	if (!size)
		return 0;
	nsess = 2 + (data[0] & 1);
	krc_rpc_sessions_init(&t, s, nsess, ~0ULL);
	memset(keys, 0, sizeof(keys));
	for (i = 0; i < NKEY; i++) {
		keys[i].gid[15] = (u8)i;
		keys[i].port = 1000;
		keys[i].epoch = 1 + i / 2;	/* 0,1 and 2,3 differ by gid */
	}
	memset(last, 0, sizeof(last));
	memset(st, 0, sizeof(st));
	memset(ran, 0, sizeof(ran));
	memset(known, 0, sizeof(known));
	for (at = 1; at + 3 < size; at += 4) {
		u32 k = data[at] & 3, slot = data[at + 1] & 7;
		u32 seq = 1 + (data[at + 2] & 31);
		bool finish = data[at + 3] & 1;
		struct krc_rpc_hdr h;
		enum krc_rpc_verdict v, want;
		u32 sess;

		memset(&h, 0, sizeof(h));
		h.type = KRC_RPC_CALL;
		h.epoch = keys[k].epoch;
		h.slot = (u16)slot;
		h.seq = seq;
		v = krc_rpc_admit(&t, &keys[k], &h, at, &sess);
		if (v == KRC_RPC_FULL) {
			u32 n = 0;

			for (i = 0; i < NKEY; i++)
				n += known[i];
			/* refused only when every entry has another caller */
			if (known[k] || n < nsess)
				abort();
			continue;
		}
		if (sess >= nsess)
			abort();
		known[k] = true;
		if (st[k][slot] == KRC_RPC_IDLE || seq > last[k][slot])
			want = KRC_RPC_RUN;
		else if (seq < last[k][slot])
			want = KRC_RPC_OLD;
		else
			want = st[k][slot] == KRC_RPC_DONE ? KRC_RPC_RESEND :
							     KRC_RPC_BUSY;
		if (v != want)
			abort();
		if (v == KRC_RPC_RUN) {
			if (ran[k][slot][seq - 1])
				abort();	/* run twice */
			ran[k][slot][seq - 1] = 1;
			last[k][slot] = seq;
			st[k][slot] = KRC_RPC_RUNNING;
		}
		if (finish && st[k][slot] == KRC_RPC_RUNNING) {
			krc_rpc_done(&t, sess, (u16)slot, last[k][slot]);
			st[k][slot] = KRC_RPC_DONE;
		}
	}
	return 0;
}
