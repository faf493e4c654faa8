// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_rpc.c - RPC headers (common/rpc.h): every field round-trips, each
 * malformed header is refused with its reason; the server's sessions:
 * a call runs once however often it is sent, replies are sent again,
 * older calls ignored, a session reused only once idle, a full table
 * refuses. No VM needed.
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

static struct krc_rpc_hdr call(u16 slot, u32 seq, u32 inl)
{
	struct krc_rpc_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = KRC_RPC_CALL;
	h.epoch = 0x1122334455667788ULL;
	h.slot = slot;
	h.seq = seq;
	h.method = 7;
	h.inline_len = inl;
	h.total_len = inl;
	return h;
}

/* Encode @h followed by @extra payload bytes and decode it. */
static int roundtrip(const struct krc_rpc_hdr *h, u32 extra,
		     struct krc_rpc_hdr *out)
{
	u8 buf[KRC_RPC_HDR_SIZE + 64];

	assert_true(extra <= 64);
	krc_rpc_encode(h, buf);
	memset(buf + KRC_RPC_HDR_SIZE, 0xab, extra);
	return krc_rpc_decode(buf, KRC_RPC_HDR_SIZE + extra, out);
}

static void test_roundtrip(void **state)
{
	struct krc_rpc_hdr h = call(255, 0xfffffffeU, 0), o;

	(void)state;
	h.flags = KRC_RPC_F_REMOTE | KRC_RPC_F_REPLY_REMOTE;
	h.total_len = 64ULL << 20;
	h.addr = 0x7f0000001000ULL;
	h.rkey = 0x1234;
	h.reply_rkey = 0x5678;
	h.reply_addr = 0x7f0010000000ULL;
	h.reply_cap = 1ULL << 20;
	assert_int_equal(roundtrip(&h, 0, &o), 0);
	assert_memory_equal(&h, &o, sizeof(h));

	h = call(0, 1, 5);
	assert_int_equal(roundtrip(&h, 5, &o), 0);
	assert_memory_equal(&h, &o, sizeof(h));

	memset(&h, 0, sizeof(h));
	h.type = KRC_RPC_REPLY;
	h.epoch = 9;
	h.seq = 3;
	h.method = 110;		/* ETIMEDOUT as a status */
	assert_int_equal(roundtrip(&h, 0, &o), 0);
	assert_int_equal(o.method, 110);

	memset(&h, 0, sizeof(h));
	h.type = KRC_RPC_CANCEL;
	h.epoch = 9;
	h.slot = 4;
	h.seq = 3;
	assert_int_equal(roundtrip(&h, 0, &o), 0);
}

static void test_refused(void **state)
{
	u8 buf[KRC_RPC_HDR_SIZE + 8];
	struct krc_rpc_hdr h, o;

	(void)state;
	h = call(0, 1, 0);
	krc_rpc_encode(&h, buf);
	assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE - 1, &o), -EBADMSG);
	assert_int_equal(krc_rpc_decode(NULL, KRC_RPC_HDR_SIZE, &o), -EBADMSG);
	buf[0] ^= 1;
	assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o), -EBADMSG);
	buf[0] ^= 1;
	buf[4] = 2;
	assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o), -EPROTO);
	buf[4] = 1;
	buf[18] = 1;		/* reserved */
	assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o), -EBADMSG);
	buf[18] = 0;
	buf[79] = 1;		/* reserved */
	assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o), -EBADMSG);
	buf[79] = 0;
	assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE, &o), 0);

	/* the message is longer than its header says */
	assert_int_equal(krc_rpc_decode(buf, KRC_RPC_HDR_SIZE + 1, &o), -EBADMSG);

#define BAD(field_edit) do {						\
		h = call(1, 1, 0);					\
		field_edit;						\
		assert_int_equal(roundtrip(&h, h.inline_len, &o), -EBADMSG); \
	} while (0)
	BAD(h.type = 0);
	BAD(h.type = 4);
	BAD(h.flags = 0x8);
	BAD(h.epoch = 0);
	BAD(h.seq = 0);
	BAD(h.slot = KRC_RPC_MAX_SLOTS);
	BAD(h.total_len = 1);				/* not inline, not remote */
	BAD(h.rkey = 1);				/* a key without REMOTE */
	BAD((h.flags = KRC_RPC_F_REMOTE, h.total_len = 8, h.addr = 64));	/* no key */
	BAD((h.flags = KRC_RPC_F_REMOTE, h.rkey = 1, h.total_len = 0));
	BAD((h.flags = KRC_RPC_F_REMOTE, h.rkey = 1, h.total_len = 16,
	     h.addr = ~0ULL - 8));			/* wraps */
	BAD((h.flags = KRC_RPC_F_REMOTE, h.rkey = 1,
	     h.total_len = KRC_RPC_MAX_PAYLOAD + 1));
	BAD((h.flags = KRC_RPC_F_REMOTE, h.rkey = 1, h.total_len = 8,
	     h.inline_len = 4));			/* both */
	BAD(h.reply_cap = 8);				/* reply fields, no flag */
	BAD((h.flags = KRC_RPC_F_REPLY_REMOTE, h.reply_cap = 8,
	     h.reply_addr = 64));			/* no key */
	BAD((h.flags = KRC_RPC_F_REPLY_REMOTE | KRC_RPC_F_ONEWAY,
	     h.reply_cap = 8, h.reply_rkey = 1));
	BAD((h.type = KRC_RPC_REPLY, h.method = KRC_RPC_MAX_STATUS + 1));
	BAD((h.type = KRC_RPC_REPLY, h.flags = KRC_RPC_F_REMOTE, h.rkey = 1,
	     h.total_len = 8));
	BAD((h.type = KRC_RPC_REPLY, h.flags = KRC_RPC_F_REPLY_REMOTE,
	     h.reply_rkey = 1, h.reply_cap = 8));	/* no key back */
	BAD((h.type = KRC_RPC_CANCEL, h.method = 1));
	BAD((h.type = KRC_RPC_CANCEL, h.flags = KRC_RPC_F_ONEWAY));
#undef BAD
	/* a reply written into the caller's buffer: its length, nothing inline */
	h = call(1, 1, 0);
	h.type = KRC_RPC_REPLY;
	h.flags = KRC_RPC_F_REPLY_REMOTE;
	h.total_len = 1 << 20;
	assert_int_equal(roundtrip(&h, 0, &o), 0);
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
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_once),
		cmocka_unit_test(test_sessions_full_and_idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
