// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_rpc.c - RPC headers, version 2 (common/rpc.h): the wire layout;
 * every field of every type (CALL, REPLY, CANCEL, GRANT, ACK) round-trips
 * through encode and decode; each valid variant is accepted (plain,
 * oneway, LARGE and WRITTEN calls, inline and remote replies, granted and
 * refused grants, cancel, ack, a caller's messages before it learnt the
 * server's instance, and the edges of their fields); each rule of the
 * decoder refuses, with -EBADMSG (-EPROTO for another version), a header
 * that is valid but for that rule. The
 * server's sessions: a call runs once however often it is sent, replies
 * are sent again, older calls ignored, a session reused only once idle,
 * a full table refuses. No VM needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"

#define EPOCH		0x1122334455667788ULL
#define ADDR		0x00007f0000001000ULL
#define RKEY		0x12345678U
#define INSTANCE	0x0badc0ffee15900dULL	/* the server's */
#define BIG		(64ULL << 20)	/* a payload moved one-sided */
#define MAX_INLINE	4096		/* payload bytes a test sends */

static u8 msg_buf[KRC_RPC_HDR_SIZE + MAX_INLINE];

/* Encode @h, then payload bytes, and decode the first @len bytes. */
static int decode_len(const struct krc_rpc_hdr *h, size_t len,
		      struct krc_rpc_hdr *out)
{
	assert_true(len <= sizeof(msg_buf));
	krc_rpc_encode(h, msg_buf);
	memset(msg_buf + KRC_RPC_HDR_SIZE, 0xab, MAX_INLINE);
	return krc_rpc_decode(msg_buf, len, out);
}

/* The message of @h: its header and h->inline_len payload bytes. */
static int decode_msg(const struct krc_rpc_hdr *h, struct krc_rpc_hdr *out)
{
	assert_true(h->inline_len <= MAX_INLINE);
	return decode_len(h, KRC_RPC_HDR_SIZE + (size_t)h->inline_len, out);
}

static void hdr_equal_at(const char *file, int line,
			 const struct krc_rpc_hdr *a,
			 const struct krc_rpc_hdr *b)
{
	_assert_int_equal(a->type, b->type, file, line);
	_assert_int_equal(a->flags, b->flags, file, line);
	_assert_int_equal(a->epoch, b->epoch, file, line);
	_assert_int_equal(a->slot, b->slot, file, line);
	_assert_int_equal(a->seq, b->seq, file, line);
	_assert_int_equal(a->method, b->method, file, line);
	_assert_int_equal(a->inline_len, b->inline_len, file, line);
	_assert_int_equal(a->total_len, b->total_len, file, line);
	_assert_int_equal(a->addr, b->addr, file, line);
	_assert_int_equal(a->rkey, b->rkey, file, line);
	_assert_int_equal(a->reply_cap, b->reply_cap, file, line);
	_assert_int_equal(a->instance, b->instance, file, line);
}

/*
 * The message of @h decodes to @want; when accepted, to the same fields,
 * and the decoded header encodes to the same bytes.
 */
static void expect_at(const char *file, int line,
		      const struct krc_rpc_hdr *h, int want)
{
	u8 wire[KRC_RPC_HDR_SIZE], again[KRC_RPC_HDR_SIZE];
	struct krc_rpc_hdr o;
	int rc = decode_msg(h, &o);

	if (rc != want) {
		print_error("type %u flags %#x method %u inline %u\n",
			    h->type, h->flags, h->method, h->inline_len);
		print_error("total %#llx addr %#llx rkey %#x cap %#llx\n",
			    (unsigned long long)h->total_len,
			    (unsigned long long)h->addr, h->rkey,
			    (unsigned long long)h->reply_cap);
		print_error("instance %#llx\n",
			    (unsigned long long)h->instance);
	}
	_assert_int_equal(rc, want, file, line);
	if (rc)
		return;
	hdr_equal_at(file, line, h, &o);
	krc_rpc_encode(h, wire);
	krc_rpc_encode(&o, again);
	_assert_true(!memcmp(wire, again, sizeof(wire)), "same bytes",
		     file, line);
}

#define expect_ok(h)	expect_at(__FILE__, __LINE__, (h), 0)

/*
 * @base is accepted; the edits after it (on h) break one rule of the
 * decoder, and the message is then refused.
 */
#define REFUSE(base, ...) do {						\
		struct krc_rpc_hdr h = (base);				\
									\
		expect_at(__FILE__, __LINE__, &h, 0);			\
		__VA_ARGS__;						\
		expect_at(__FILE__, __LINE__, &h, -EBADMSG);		\
	} while (0)

/*
 * A header of @type with only its identity set: session, slot, number,
 * and the server's instance (its own, or the one its caller learnt).
 */
static struct krc_rpc_hdr hdr(u8 type, u16 flags)
{
	struct krc_rpc_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.flags = flags;
	h.epoch = EPOCH;
	h.slot = 3;
	h.seq = 42;
	h.instance = INSTANCE;
	return h;
}

/* A plain call with @inl bytes inline and no reply capacity. */
static struct krc_rpc_hdr call(u16 slot, u32 seq, u32 inl)
{
	struct krc_rpc_hdr h = hdr(KRC_RPC_CALL, 0);

	h.slot = slot;
	h.seq = seq;
	h.method = 7;
	h.inline_len = inl;
	h.total_len = inl;
	return h;
}

/* The valid variants, every field they take set. */
static struct krc_rpc_hdr plain_call(void)
{
	struct krc_rpc_hdr h = call(3, 42, 5);

	h.reply_cap = 4096;
	return h;
}

static struct krc_rpc_hdr oneway(void)
{
	struct krc_rpc_hdr h = call(3, 42, 5);

	h.flags = KRC_RPC_F_ONEWAY;
	return h;
}

/* LARGE: grant me total_len; WRITTEN: it is in the grant */
static struct krc_rpc_hdr big_call(u16 flag)
{
	struct krc_rpc_hdr h = call(3, 42, 0);

	h.flags = flag;
	h.total_len = BIG;
	h.reply_cap = 4096;
	return h;
}

static struct krc_rpc_hdr large(void)
{
	return big_call(KRC_RPC_F_LARGE);
}

static struct krc_rpc_hdr written(void)
{
	return big_call(KRC_RPC_F_WRITTEN);
}

static struct krc_rpc_hdr reply(void)
{
	struct krc_rpc_hdr h = hdr(KRC_RPC_REPLY, 0);

	h.inline_len = 5;
	h.total_len = 5;
	return h;
}

static struct krc_rpc_hdr remote_reply(void)
{
	struct krc_rpc_hdr h = hdr(KRC_RPC_REPLY, KRC_RPC_F_REMOTE);

	h.addr = ADDR;
	h.rkey = RKEY;
	h.total_len = BIG;
	return h;
}

static struct krc_rpc_hdr granted(void)
{
	struct krc_rpc_hdr h = hdr(KRC_RPC_GRANT, 0);

	h.addr = ADDR;
	h.rkey = RKEY;
	h.total_len = BIG;
	return h;
}

static struct krc_rpc_hdr refused_grant(void)
{
	struct krc_rpc_hdr h = hdr(KRC_RPC_GRANT, 0);

	h.method = EMSGSIZE;
	return h;
}

static struct krc_rpc_hdr cancel(void)
{
	return hdr(KRC_RPC_CANCEL, 0);
}

static struct krc_rpc_hdr ack(void)
{
	return hdr(KRC_RPC_ACK, 0);
}

static struct krc_rpc_hdr (*const variants[])(void) = {
	plain_call, oneway, large, written, reply, remote_reply, granted,
	refused_grant, cancel, ack,
};

/* Each field at its documented offset, little-endian; reserved zero. */
static void test_layout(void **state)
{
	static const u8 want[KRC_RPC_HDR_SIZE] = {
		0x4b, 0x52, 0x50, 0x31, 0x02, 0x04, 0xc3, 0xa5,
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x12, 0x11, 0x00, 0x00, 0x24, 0x23, 0x22, 0x21,
		0x34, 0x33, 0x32, 0x31, 0x44, 0x43, 0x42, 0x41,
		0x58, 0x57, 0x56, 0x55, 0x54, 0x53, 0x52, 0x51,
		0x68, 0x67, 0x66, 0x65, 0x64, 0x63, 0x62, 0x61,
		0x74, 0x73, 0x72, 0x71, 0x00, 0x00, 0x00, 0x00,
		0x88, 0x87, 0x86, 0x85, 0x84, 0x83, 0x82, 0x81,
		0x98, 0x97, 0x96, 0x95, 0x94, 0x93, 0x92, 0x91,
	};
	u8 buf[KRC_RPC_HDR_SIZE + 8];
	struct krc_rpc_hdr h;

	(void)state;
	assert_int_equal(KRC_RPC_HDR_SIZE, 72);
	assert_int_equal(KRC_RPC_VERSION, 2);
	assert_int_equal(KRC_RPC_CALL, 1);
	assert_int_equal(KRC_RPC_REPLY, 2);
	assert_int_equal(KRC_RPC_CANCEL, 3);
	assert_int_equal(KRC_RPC_GRANT, 4);
	assert_int_equal(KRC_RPC_ACK, 5);
	assert_int_equal(KRC_RPC_F_ALL, KRC_RPC_F_ONEWAY | KRC_RPC_F_LARGE |
			 KRC_RPC_F_WRITTEN | KRC_RPC_F_REMOTE);
	memset(&h, 0, sizeof(h));
	h.type = KRC_RPC_GRANT;
	h.flags = 0xa5c3;
	h.epoch = 0x0102030405060708ULL;
	h.slot = 0x1112;
	h.seq = 0x21222324;
	h.method = 0x31323334;
	h.inline_len = 0x41424344;
	h.total_len = 0x5152535455565758ULL;
	h.addr = 0x6162636465666768ULL;
	h.rkey = 0x71727374;
	h.reply_cap = 0x8182838485868788ULL;
	h.instance = 0x9192939495969798ULL;
	/* the whole header written, and nothing after it */
	memset(buf, 0xee, sizeof(buf));
	krc_rpc_encode(&h, buf);
	assert_memory_equal(buf, want, KRC_RPC_HDR_SIZE);
	assert_int_equal(buf[KRC_RPC_HDR_SIZE], 0xee);
	assert_int_equal(buf[sizeof(buf) - 1], 0xee);
}

/* Every field of every type, at its edges too, comes back as sent. */
static void test_roundtrip(void **state)
{
	struct krc_rpc_hdr h;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(variants); i++) {
		h = variants[i]();
		expect_ok(&h);
		/* the identity at its edges, for every type */
		h.epoch = ~0ULL;
		h.slot = KRC_RPC_MAX_SLOTS - 1;
		h.seq = ~0U;
		h.instance = ~0ULL;
		expect_ok(&h);
		h.epoch = 1;
		h.slot = 0;
		h.seq = 1;
		h.instance = 1;
		expect_ok(&h);
		/* a caller that has not learnt the server's instance yet */
		if (h.type != KRC_RPC_REPLY && h.type != KRC_RPC_GRANT) {
			h.instance = 0;
			expect_ok(&h);
		}
	}

	/* CALL: any method, the largest reply, a full inline payload */
	h = call(0x7f, 0x80000001U, MAX_INLINE);
	h.method = ~0U;
	h.reply_cap = KRC_RPC_MAX_PAYLOAD;
	expect_ok(&h);
	h = call(1, 1, 0);		/* nothing to send, no reply wanted */
	h.method = 0;
	expect_ok(&h);
	h = oneway();
	h.inline_len = 0;
	h.total_len = 0;
	expect_ok(&h);
	h = oneway();
	h.inline_len = MAX_INLINE;
	h.total_len = MAX_INLINE;
	h.method = 0x80000000U;
	expect_ok(&h);
	h = large();
	h.total_len = KRC_RPC_MAX_PAYLOAD;
	h.reply_cap = KRC_RPC_MAX_PAYLOAD;
	expect_ok(&h);
	h = large();
	h.total_len = 1;
	h.reply_cap = 0;
	expect_ok(&h);
	h = written();
	h.total_len = KRC_RPC_MAX_PAYLOAD;
	h.reply_cap = 0;
	expect_ok(&h);
	h = written();
	h.total_len = 1;
	h.method = 0xdeadbeefU;
	expect_ok(&h);

	/* REPLY: a status with or without data, nothing at all */
	h = reply();
	h.method = KRC_RPC_MAX_STATUS;
	expect_ok(&h);
	h = reply();
	h.method = ETIMEDOUT;
	h.inline_len = 0;
	h.total_len = 0;
	expect_ok(&h);
	h = reply();
	h.inline_len = MAX_INLINE;
	h.total_len = MAX_INLINE;
	expect_ok(&h);
	h = remote_reply();
	h.total_len = KRC_RPC_MAX_PAYLOAD;
	h.rkey = ~0U;
	expect_ok(&h);
	h = remote_reply();
	h.total_len = 1;
	h.rkey = 1;
	h.addr = 0;
	expect_ok(&h);
	h = remote_reply();		/* its end: 2^64 - 1, the last u64 */
	h.addr = ~0ULL - BIG;
	expect_ok(&h);

	/* GRANT: the edges of the range; refusals with any status */
	h = granted();
	h.total_len = KRC_RPC_MAX_PAYLOAD;
	h.addr = ~0ULL - KRC_RPC_MAX_PAYLOAD;
	h.rkey = ~0U;
	expect_ok(&h);
	h = granted();
	h.total_len = 1;
	h.addr = 0;
	h.rkey = 1;
	expect_ok(&h);
	h = refused_grant();
	h.method = EBUSY;
	expect_ok(&h);
	h = refused_grant();
	h.method = KRC_RPC_MAX_STATUS;
	expect_ok(&h);
	h = refused_grant();
	h.method = 1;
	expect_ok(&h);
}

/*
 * The checks on the bytes: length, magic, version, reserved fields,
 * for every type.
 */
static void test_refused_bytes(void **state)
{
	u8 buf[KRC_RPC_HDR_SIZE + 16];
	struct krc_rpc_hdr h, o;
	size_t i, b;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(variants); i++) {
		h = variants[i]();
		h.inline_len = 0;	/* a message of the header alone */
		if (!(h.flags & (KRC_RPC_F_LARGE | KRC_RPC_F_WRITTEN |
				 KRC_RPC_F_REMOTE)) &&
		    h.type != KRC_RPC_GRANT)
			h.total_len = 0;
		krc_rpc_encode(&h, buf);
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o), 0);
		/* short */
		assert_int_equal(krc_rpc_decode(buf, 0, &o), -EBADMSG);
		assert_int_equal(krc_rpc_decode(buf, 1, &o), -EBADMSG);
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE - 1, &o),
				 -EBADMSG);
		assert_int_equal(krc_rpc_decode(NULL, KRC_RPC_HDR_SIZE, &o),
				 -EBADMSG);
		/* any bit of the magic */
		for (b = 0; b < 32; b++) {
			buf[b / 8] ^= 1 << (b % 8);
			assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE,
							&o), -EBADMSG);
			buf[b / 8] ^= 1 << (b % 8);
		}
		/* another version, whatever its length */
		buf[4] = 1;
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o),
				 -EPROTO);
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE + 16,
						&o), -EPROTO);
		buf[4] = 0;
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o),
				 -EPROTO);
		buf[4] = 3;
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o),
				 -EPROTO);
		buf[4] = 0xff;
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o),
				 -EPROTO);
		/* but short or with a bad magic it is just bad */
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE - 1, &o),
				 -EBADMSG);
		buf[0] ^= 0x80;
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o),
				 -EBADMSG);
		buf[0] ^= 0x80;
		buf[4] = KRC_RPC_VERSION;
		/* the reserved u16 at 18 and u32 at 52: any byte set */
		for (b = 18; b < 20; b++) {
			buf[b] = 0x01;
			assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE,
							&o), -EBADMSG);
			buf[b] = 0x80;
			assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE,
							&o), -EBADMSG);
			buf[b] = 0;
		}
		for (b = 52; b < 56; b++) {
			buf[b] = 0x01;
			assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE,
							&o), -EBADMSG);
			buf[b] = 0x80;
			assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE,
							&o), -EBADMSG);
			buf[b] = 0;
		}
		assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o), 0);
		hdr_equal_at(__FILE__, __LINE__, &h, &o);
	}
}

/* The rules every type follows: flags, identity, lengths. */
static void test_refused_common(void **state)
{
	struct krc_rpc_hdr base, o;
	size_t i, len;
	u32 bit;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(variants); i++) {
		base = variants[i]();
		for (bit = 4; bit < 16; bit++)		/* unknown flags */
			REFUSE(base, h.flags |= 1U << bit);
		REFUSE(base, h.epoch = 0);
		REFUSE(base, h.seq = 0);
		REFUSE(base, h.slot = KRC_RPC_MAX_SLOTS);
		REFUSE(base, h.slot = 0xffff);
		/* inline_len is not the rest of the message */
		len = KRC_RPC_HDR_SIZE + base.inline_len;
		assert_int_equal(decode_len(&base, len, &o), 0);
		assert_int_equal(decode_len(&base, len + 1, &o), -EBADMSG);
		assert_int_equal(decode_len(&base, len + MAX_INLINE / 2, &o),
				 -EBADMSG);
		if (base.inline_len)
			assert_int_equal(decode_len(&base, len - 1, &o),
					 -EBADMSG);
		base.inline_len = ~0U;
		assert_int_equal(decode_len(&base, len, &o), -EBADMSG);
		assert_int_equal(decode_len(&base, KRC_RPC_HDR_SIZE, &o),
				 -EBADMSG);
	}
	/* a payload over KRC_RPC_MAX_PAYLOAD, however it would move */
	REFUSE(large(), h.total_len = KRC_RPC_MAX_PAYLOAD + 1);
	REFUSE(large(), h.total_len = ~0ULL);
	REFUSE(written(), h.total_len = KRC_RPC_MAX_PAYLOAD + 1);
	REFUSE(remote_reply(), h.total_len = KRC_RPC_MAX_PAYLOAD + 1);
	REFUSE(granted(), h.total_len = KRC_RPC_MAX_PAYLOAD + 1);
	REFUSE(granted(), h.total_len = 1ULL << 63);
}

static void test_refused_call(void **state)
{
	(void)state;
	/* REMOTE is a reply's; a call carries no remote range */
	REFUSE(plain_call(), h.flags |= KRC_RPC_F_REMOTE);
	REFUSE(large(), h.flags |= KRC_RPC_F_REMOTE);
	REFUSE(plain_call(), h.addr = ADDR);
	REFUSE(plain_call(), h.rkey = RKEY);
	REFUSE(large(), h.addr = ADDR);
	REFUSE(written(), h.rkey = RKEY);
	REFUSE(oneway(), h.addr = 1);
	/* a reply over the payload limit */
	REFUSE(plain_call(), h.reply_cap = KRC_RPC_MAX_PAYLOAD + 1);
	REFUSE(large(), h.reply_cap = ~0ULL);
	/* ONEWAY: no LARGE (nor WRITTEN), no reply */
	REFUSE(large(), h.reply_cap = 0, h.flags |= KRC_RPC_F_ONEWAY);
	REFUSE(written(), h.reply_cap = 0, h.flags |= KRC_RPC_F_ONEWAY);
	REFUSE(oneway(), h.flags |= KRC_RPC_F_LARGE);
	REFUSE(oneway(), h.flags |= KRC_RPC_F_WRITTEN);
	REFUSE(oneway(), h.inline_len = 0, h.total_len = 0,
	       h.flags |= KRC_RPC_F_LARGE);
	REFUSE(oneway(), h.reply_cap = 1);
	REFUSE(oneway(), h.reply_cap = KRC_RPC_MAX_PAYLOAD);
	/* LARGE and WRITTEN: not both, nothing inline, a length */
	REFUSE(large(), h.flags |= KRC_RPC_F_WRITTEN);
	REFUSE(large(), h.inline_len = 5);
	REFUSE(large(), h.inline_len = 5, h.total_len = 5);
	REFUSE(written(), h.inline_len = 1);
	REFUSE(large(), h.total_len = 0);
	REFUSE(written(), h.total_len = 0);
	/* a plain call: the payload is what came inline */
	REFUSE(plain_call(), h.total_len = 6);
	REFUSE(plain_call(), h.total_len = 4);
	REFUSE(plain_call(), h.total_len = BIG);
	REFUSE(call(3, 42, 0), h.total_len = 1);
	REFUSE(oneway(), h.total_len = 6);
	REFUSE(oneway(), h.total_len = 0);
}

static void test_refused_reply(void **state)
{
	(void)state;
	/* call flags and the call's reply capacity */
	REFUSE(reply(), h.flags |= KRC_RPC_F_ONEWAY);
	REFUSE(reply(), h.flags |= KRC_RPC_F_LARGE);
	REFUSE(reply(), h.flags |= KRC_RPC_F_WRITTEN);
	REFUSE(remote_reply(), h.flags |= KRC_RPC_F_ONEWAY);
	REFUSE(remote_reply(), h.flags |= KRC_RPC_F_LARGE);
	REFUSE(remote_reply(), h.flags |= KRC_RPC_F_WRITTEN);
	REFUSE(reply(), h.reply_cap = 1);
	REFUSE(remote_reply(), h.reply_cap = 4096);
	/* the server says which it is */
	REFUSE(reply(), h.instance = 0);
	REFUSE(remote_reply(), h.instance = 0);
	/* the status is 0 or an errno */
	REFUSE(reply(), h.method = KRC_RPC_MAX_STATUS + 1);
	REFUSE(reply(), h.method = ~0U);
	/* REMOTE: status 0, nothing inline, a key, a range that fits */
	REFUSE(remote_reply(), h.method = EIO);
	REFUSE(remote_reply(), h.method = KRC_RPC_MAX_STATUS + 1);
	REFUSE(remote_reply(), h.inline_len = 5);
	REFUSE(remote_reply(), h.inline_len = 5, h.total_len = 5);
	REFUSE(remote_reply(), h.rkey = 0);
	REFUSE(remote_reply(), h.total_len = 0);
	REFUSE(remote_reply(), h.addr = ~0ULL - 8);
	REFUSE(remote_reply(), h.addr = ~0ULL);
	/* its end, 2^64, is no address */
	REFUSE(remote_reply(), h.addr = 0 - BIG);
	/* inline: no remote range, the payload is what came inline */
	REFUSE(reply(), h.addr = ADDR);
	REFUSE(reply(), h.rkey = RKEY);
	REFUSE(reply(), h.addr = ADDR, h.rkey = RKEY);
	REFUSE(reply(), h.total_len = BIG);
	REFUSE(reply(), h.total_len = 4);
}

static void test_refused_grant(void **state)
{
	(void)state;
	/* the server says which it is */
	REFUSE(granted(), h.instance = 0);
	REFUSE(refused_grant(), h.instance = 0);
	/* no flags, nothing inline, no reply capacity */
	REFUSE(granted(), h.flags = KRC_RPC_F_ONEWAY);
	REFUSE(granted(), h.flags = KRC_RPC_F_LARGE);
	REFUSE(granted(), h.flags = KRC_RPC_F_WRITTEN);
	REFUSE(granted(), h.flags = KRC_RPC_F_REMOTE);
	REFUSE(refused_grant(), h.flags = KRC_RPC_F_REMOTE);
	REFUSE(granted(), h.inline_len = 5);
	REFUSE(refused_grant(), h.inline_len = 5, h.total_len = 5);
	REFUSE(granted(), h.reply_cap = 1);
	REFUSE(refused_grant(), h.reply_cap = 1);
	REFUSE(refused_grant(), h.method = KRC_RPC_MAX_STATUS + 1);
	/* refused: nothing but the status */
	REFUSE(refused_grant(), h.addr = ADDR);
	REFUSE(refused_grant(), h.rkey = RKEY);
	REFUSE(refused_grant(), h.total_len = BIG);
	/* granted: a key, a length, no wrap */
	REFUSE(granted(), h.rkey = 0);
	REFUSE(granted(), h.total_len = 0);
	REFUSE(granted(), h.addr = ~0ULL - 8);
	REFUSE(granted(), h.addr = 0 - BIG);
}

/* A cancel or an ack carries its identity and nothing else. */
static void test_refused_cancel_ack(void **state)
{
	struct krc_rpc_hdr base;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		base = i ? ack() : cancel();
		REFUSE(base, h.flags = KRC_RPC_F_ONEWAY);
		REFUSE(base, h.flags = KRC_RPC_F_LARGE);
		REFUSE(base, h.flags = KRC_RPC_F_WRITTEN);
		REFUSE(base, h.flags = KRC_RPC_F_REMOTE);
		REFUSE(base, h.method = 1);
		REFUSE(base, h.method = 0x80000000U);
		REFUSE(base, h.inline_len = 5);
		REFUSE(base, h.inline_len = 5, h.total_len = 5);
		REFUSE(base, h.total_len = 1);
		REFUSE(base, h.addr = ADDR);
		REFUSE(base, h.rkey = RKEY);
		REFUSE(base, h.reply_cap = 1);
	}
}

static void test_refused_type(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(variants); i++) {
		REFUSE(variants[i](), h.type = 0);
		REFUSE(variants[i](), h.type = KRC_RPC_ACK + 1);
		REFUSE(variants[i](), h.type = 0x80);
		REFUSE(variants[i](), h.type = 0xff);
	}
}

static const struct krc_rpc_key ka = { .gid = { 1 }, .port = 5000, .epoch = 1 };
static const struct krc_rpc_key kb = { .gid = { 2 }, .port = 5000, .epoch = 1 };

static void test_once(void **state)
{
	struct krc_rpc_sess s[2];
	struct krc_rpc_sessions t;
	struct krc_rpc_hdr h = call(3, 1, 0);
	u32 i, j;

	(void)state;
	krc_rpc_sessions_init(&t, s, 2, 100);
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 0, &i), KRC_RPC_RUN);
	/* sent again while it runs, then after it ran */
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 1, &j), KRC_RPC_BUSY);
	assert_int_equal(j, i);
	krc_rpc_done(&t, i, 3, 1);
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 2, &j), KRC_RPC_RESEND);
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 3, &j), KRC_RPC_RESEND);
	/* the next call of the slot runs; the old one is then ignored */
	h.seq = 2;
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 4, &j), KRC_RPC_RUN);
	h.seq = 1;
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 5, &j), KRC_RPC_OLD);
	/* a late done() of the old call does not mark the new one done */
	krc_rpc_done(&t, i, 3, 1);
	h.seq = 2;
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 6, &j), KRC_RPC_BUSY);
	/* another slot and another caller are independent */
	h = call(4, 1, 0);
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 7, &j), KRC_RPC_RUN);
	assert_int_equal(krc_rpc_admit(&t, &kb, &h, 7, &j), KRC_RPC_RUN);
	assert_int_not_equal(j, i);
	/* sequence numbers wrap */
	h = call(5, 0xffffffffU, 0);
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 8, &j), KRC_RPC_RUN);
	krc_rpc_done(&t, j, 5, 0xffffffffU);
	h.seq = 1;
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 9, &j), KRC_RPC_RUN);
	h.seq = 0xffffffffU;
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 10, &j), KRC_RPC_OLD);
}

static void test_sessions_full_and_idle(void **state)
{
	struct krc_rpc_sess s[2];
	struct krc_rpc_sessions t;
	struct krc_rpc_hdr h = call(0, 1, 0);
	struct krc_rpc_key kc = ka, kd = ka;
	u32 i;

	(void)state;
	kc.epoch = 2;		/* the same port, a new process: a new session */
	kd.port = 6000;
	krc_rpc_sessions_init(&t, s, 2, 100);
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 0, &i), KRC_RPC_RUN);
	assert_int_equal(krc_rpc_admit(&t, &kc, &h, 50, &i), KRC_RPC_RUN);
	/* full: no session idle for 100 yet */
	assert_int_equal(krc_rpc_admit(&t, &kd, &h, 99, &i), KRC_RPC_FULL);
	/* ka idle for 100: its entry goes to kd */
	assert_int_equal(krc_rpc_admit(&t, &kd, &h, 100, &i), KRC_RPC_RUN);
	assert_int_equal(i, 0);
	/* kc kept its state: its call is still running */
	assert_int_equal(krc_rpc_admit(&t, &kc, &h, 101, &i), KRC_RPC_BUSY);
	assert_int_equal(i, 1);
	/* ka comes back: full again until one idles */
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 150, &i), KRC_RPC_FULL);
	/* the least recently used of the idle ones is taken */
	assert_int_equal(krc_rpc_admit(&t, &ka, &h, 300, &i), KRC_RPC_RUN);
	assert_int_equal(i, 0);
	krc_rpc_done(&t, 7, 0, 1);	/* out of range: ignored */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_refused_bytes),
		cmocka_unit_test(test_refused_common),
		cmocka_unit_test(test_refused_call),
		cmocka_unit_test(test_refused_reply),
		cmocka_unit_test(test_refused_grant),
		cmocka_unit_test(test_refused_cancel_ack),
		cmocka_unit_test(test_refused_type),
		cmocka_unit_test(test_once),
		cmocka_unit_test(test_sessions_full_and_idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
