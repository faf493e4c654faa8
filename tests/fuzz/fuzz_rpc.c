// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_rpc.c - libFuzzer target for RPC headers (version 2) and the
 * server's sessions (common/rpc.c).
 *
 * The whole input is decoded as a message; it also gives a header built
 * field by field, each at the edges of its rules (0, 1, around its limit,
 * a range that ends at 2^64, or any value), a payload, and maybe a byte
 * the decoder checks first changed, so that short inputs reach every
 * rule of every type. For both, the decoder's answer must be that of the
 * rules of rpc.h, written out here and applied to the fields read here
 * from the bytes; a header it accepts must hold the rules of its type (a
 * REMOTE reply or a grant has a key and a range that does not wrap,
 * LARGE and WRITTEN calls carry nothing inline, a oneway call wants no
 * reply, a cancel or an ack has only its identity, a reply or a grant
 * names the server's instance), encode back to the same header bytes,
 * and decode again, with its payload, to the same fields; a built header
 * that is accepted decodes to what it was built from.
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
	f->instance = le(b + 64, 8);
}

static bool same(const struct krc_rpc_hdr *a, const struct krc_rpc_hdr *b)
{
	return a->type == b->type && a->flags == b->flags &&
	       a->epoch == b->epoch && a->slot == b->slot &&
	       a->seq == b->seq && a->method == b->method &&
	       a->inline_len == b->inline_len &&
	       a->total_len == b->total_len && a->addr == b->addr &&
	       a->rkey == b->rkey && a->reply_cap == b->reply_cap &&
	       a->instance == b->instance;
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
		if (!h->instance || oneway || large || written ||
		    h->reply_cap || h->method > KRC_RPC_MAX_STATUS)
			return false;
		if (remote)
			return !h->method && !h->inline_len && range_ok(h);
		return !h->addr && !h->rkey && h->total_len == h->inline_len;
	case KRC_RPC_GRANT:
		if (!h->instance || h->flags || h->inline_len ||
		    h->reply_cap || h->method > KRC_RPC_MAX_STATUS)
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
	/* the server's answers name it */
	if (h->type == KRC_RPC_REPLY || h->type == KRC_RPC_GRANT)
		check(h->instance);
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

/* The input as a stream of bytes, zeros after its end. */
struct src {
	const u8 *p;
	size_t n;
};

static u8 next(struct src *s)
{
	if (!s->n)
		return 0;
	s->n--;
	return *s->p++;
}

/* A field's value: 0, 1, around its limit @max, or @bytes of input. */
static u64 pick(struct src *s, u64 max, unsigned int bytes)
{
	u64 v = 0;

	switch (next(s) & 7) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return max - 1;
	case 3:
		return max;
	case 4:
		return max + 1;
	default:
		while (bytes--)
			v = v << 8 | next(s);
		return v;
	}
}

/*
 * A header built from the input, each field at the edges of its rules,
 * so that short inputs reach every rule of every type: encoded, with the
 * payload the input says, and decoded as above.
 */
static void check_built(const uint8_t *data, size_t size)
{
	struct src s = { data, size };
	struct krc_rpc_hdr h, d;
	size_t payload, len;
	u8 *b, c;

	memset(&h, 0, sizeof(h));
	c = next(&s);				/* a type, or an unknown one */
	h.type = c < 0xf0 ? 1 + c % KRC_RPC_ACK : c & 7;
	c = next(&s);				/* flags, an unknown one too */
	h.flags = c & KRC_RPC_F_ALL;
	if (c & 0x10)
		h.flags |= (u16)(0x10 << (c >> 5));
	h.epoch = pick(&s, ~0ULL, 8);
	h.slot = (u16)pick(&s, KRC_RPC_MAX_SLOTS - 1, 2);
	h.seq = (u32)pick(&s, ~0U, 4);
	h.method = (u32)pick(&s, KRC_RPC_MAX_STATUS, 4);
	payload = next(&s);
	c = next(&s);				/* the rest, or not */
	if ((c & 7) == 5)
		h.inline_len = (u32)payload + 1;
	else if ((c & 7) == 6)
		h.inline_len = (u32)payload - 1;
	else if ((c & 7) == 7)
		h.inline_len = (u32)pick(&s, ~0U, 4);
	else
		h.inline_len = (u32)payload;
	c = next(&s);				/* all inline or not */
	h.total_len = c & 1 ? h.inline_len : pick(&s, KRC_RPC_MAX_PAYLOAD, 8);
	c = next(&s);				/* a range ending by 2^64 */
	if (c & 1)
		h.addr = ~0ULL - h.total_len + 1 - ((c >> 1) & 3);
	else
		h.addr = pick(&s, ~0ULL, 8);
	h.rkey = (u32)pick(&s, ~0U, 4);
	h.reply_cap = pick(&s, KRC_RPC_MAX_PAYLOAD, 8);
	h.instance = pick(&s, ~0ULL, 8);

	len = KRC_RPC_HDR_SIZE + payload;
	b = calloc(len, 1);
	check(b);
	krc_rpc_encode(&h, b);
	c = next(&s);				/* the checks on the bytes */
	switch (c & 7) {
	case 1:					/* a reserved byte set */
		b[18 + (c >> 3) % 2] = c | 1;
		break;
	case 2:
		b[52 + (c >> 3) % 4] = c | 1;
		break;
	case 3:					/* another version */
		b[4] = c >> 3;
		break;
	case 4:					/* a bit of the magic */
		b[(c >> 3) % 4] ^= 1 << (c >> 5);
		break;
	case 5:					/* short */
		len = (c >> 3) % KRC_RPC_HDR_SIZE;
		break;
	}
	check_header(b, len);
	if (!krc_rpc_decode(b, len, &d))
		check(same(&h, &d));
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
	check_built(data, size);
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
