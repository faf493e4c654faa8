// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_proto.c - node-to-node messages, the MetaServer's rdma_cm
 * private data and the two-sided data header (common/proto.c), no VM
 * needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "card.h"
#include "meta_table.h"
#include "proto.h"

static const u8 all_types[] = {
	KRC_MSG_CONNECT_REQ, KRC_MSG_CONNECT_REP, KRC_MSG_CONNECT_NAK,
	KRC_MSG_RTU, KRC_MSG_RTU_ACK, KRC_MSG_GOODBYE,
	KRC_MSG_CLOSE_REQ, KRC_MSG_CLOSE_REP,
	KRC_MSG_FLOW_ASK, KRC_MSG_FLOW_GRANT,
	KRC_MSG_MEM_ALLOC, KRC_MSG_MEM_ALLOC_REP, KRC_MSG_MEM_FREE,
	KRC_MSG_MEM_FREE_REP, KRC_MSG_MEM_SET, KRC_MSG_MEM_SET_REP,
	KRC_MSG_MEM_COPY, KRC_MSG_MEM_COPY_REP,
	KRC_MSG_MEM_PUBLISH, KRC_MSG_MEM_PUBLISH_REP, KRC_MSG_MEM_UNPUBLISH,
	KRC_MSG_MEM_UNPUBLISH_REP, KRC_MSG_MEM_LOOKUP, KRC_MSG_MEM_LOOKUP_REP,
	KRC_MSG_META_REGISTER, KRC_MSG_META_DEREGISTER, KRC_MSG_META_REPLY,
};

static struct krcore_card sample_card(void)
{
	struct krcore_card c;
	const u8 ip[4] = { 10, 77, 0, 2 };

	memset(&c, 0, sizeof(c));
	krc_gid_from_ipv4(c.gid, ip);
	memcpy(c.mac, "\x52\x54\x00\x4b\x52\x02", 6);
	c.card_version = KRCORE_CARD_VERSION;
	c.flags = KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4;
	c.node_id = krc_gid_node_id(c.gid);
	c.ud_qpn = 0x11;
	c.ud_qkey = 0x4b524331;
	c.port_num = 1;
	c.active_mtu = 3;
	c.incarnation = 0x0123456789abcdefULL;
	return c;
}

/* A message of @type with the fields a real sender would fill. */
static struct krc_ctrl_msg sample_msg(u8 type)
{
	struct krc_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.req_id = 0x1122334455667788ULL + type;
	m.card = sample_card();
	switch (type) {
	case KRC_MSG_CONNECT_REQ:
		m.dst_incarnation = 0x0badc0ffee0ddf00ULL;
		m.qpn = 0x1a;
		m.psn = 0xabcdef;
		m.probe_rkey = 0x1234;
		m.probe_addr = 0xffff888012345000ULL;
		m.probe_len = 4096;
		break;
	case KRC_MSG_CONNECT_REP:
		m.qpn = 0x2b;
		m.psn = 0x000001;
		m.peer_qpn = 0x1a;
		m.probe_rkey = 0x5678;
		m.probe_addr = 0xffff888076543000ULL;
		m.probe_len = 4096;
		break;
	case KRC_MSG_CONNECT_NAK:
		m.status = ENOSPC;
		m.qpn = 0x1a;
		break;
	case KRC_MSG_RTU:
		m.qpn = 0x1a;
		m.peer_qpn = 0x2b;
		break;
	case KRC_MSG_RTU_ACK:
		m.qpn = 0x2b;
		m.peer_qpn = 0x1a;
		break;
	case KRC_MSG_CLOSE_REQ:
		m.qpn = 0x1a;
		m.peer_qpn = 0x2b;
		break;
	case KRC_MSG_CLOSE_REP:
		m.status = EBUSY;
		m.qpn = 0x2b;
		m.peer_qpn = 0x1a;
		break;
	case KRC_MSG_META_REPLY:
		m.status = 0;
		m.slot = 1234;
		break;
	case KRC_MSG_FLOW_ASK:
		m.dst_incarnation = 0x0badc0ffee0ddf00ULL;
		m.port = 4791;
		m.epoch = 0x80000001U;
		m.want = 16;
		m.count = 0xfedcba9876543210ULL;
		break;
	case KRC_MSG_FLOW_GRANT:
		m.status = ECONNREFUSED;
		m.port = 65535;
		m.epoch = 7;
		m.count = 1ULL << 40;
		break;
	case KRC_MSG_MEM_ALLOC:
		m.dst_incarnation = 0x0badc0ffee0ddf00ULL;
		m.access = KRCORE_ACCESS_REMOTE_READ |
			   KRCORE_ACCESS_REMOTE_WRITE;
		m.length = 200ULL << 20;
		break;
	case KRC_MSG_MEM_ALLOC_REP:
		m.access = KRCORE_ACCESS_REMOTE_ATOMIC;
		m.rkey = 0x1234567;
		m.length = 1ULL << 40;
		m.addr = 0xffff888000200000ULL;
		m.region = 0xfffffffeU;
		break;
	case KRC_MSG_MEM_FREE:
		m.dst_incarnation = 0x0badc0ffee0ddf00ULL;
		m.region = 1;
		break;
	case KRC_MSG_MEM_FREE_REP:
		m.status = ENOENT;
		m.region = 77;
		break;
	case KRC_MSG_MEM_SET:
		m.dst_incarnation = 0x0badc0ffee0ddf00ULL;
		m.region = 3;
		m.addr = 12345;
		m.length = 1ULL << 30;
		m.access = 0xa5;
		break;
	case KRC_MSG_MEM_SET_REP:
		m.status = ERANGE;
		m.region = 3;
		break;
	case KRC_MSG_MEM_COPY:
		m.dst_incarnation = 0x0badc0ffee0ddf00ULL;
		m.region = 3;
		m.addr = 1ULL << 39;
		m.length = 12345;
		m.src_off = (1ULL << 40) - 1;
		m.src_region = 0xffffff;
		break;
	case KRC_MSG_MEM_COPY_REP:
		m.status = EACCES;
		m.region = 3;
		break;
	case KRC_MSG_MEM_LOCK:
	case KRC_MSG_MEM_UNLOCK:
		m.dst_incarnation = 0x0badc0ffee0ddf00ULL;
		m.region = 0xffffff;
		m.rkey = 0x89abcdef;
		m.addr = KRC_LMR_MAX_LEN - 8;
		if (type == KRC_MSG_MEM_UNLOCK)
			m.length = 0xfedcba9876543210ULL;	/* the ticket */
		break;
	case KRC_MSG_MEM_LOCK_REP:
		m.region = 0xffffff;
		m.rkey = 0x89abcdef;
		m.addr = 8;
		m.length = 1ULL << 63;	/* the grant number */
		break;
	case KRC_MSG_MEM_UNLOCK_REP:
		m.status = ESTALE;
		m.region = 5;
		break;
	case KRC_MSG_MEM_PUBLISH:
	case KRC_MSG_MEM_UNPUBLISH:
		m.dst_incarnation = 0x0badc0ffee0ddf00ULL;
		m.region = 0xffffff;
		memcpy(m.name, "abcdefghijklmnopqrstuvw", KRC_NAME_LEN);
		if (type == KRC_MSG_MEM_PUBLISH)
			m.access = KRCORE_ACCESS_REMOTE_READ;
		break;
	case KRC_MSG_MEM_PUBLISH_REP:
		m.region = 0xffffff;
		m.access = KRCORE_ACCESS_REMOTE_READ |
			   KRCORE_ACCESS_REMOTE_ATOMIC;
		m.rkey = 0x4321;
		m.length = 4096;
		m.addr = 0xffffffULL << 40;
		break;
	case KRC_MSG_MEM_UNPUBLISH_REP:
		m.status = ENOENT;
		m.region = 9;
		break;
	case KRC_MSG_MEM_LOOKUP:
		memcpy(m.name, "lookup-me", 10);
		break;
	case KRC_MSG_MEM_LOOKUP_REP:
		m.region = 0xfffffe;
		m.access = KRCORE_ACCESS_REMOTE_READ |
			   KRCORE_ACCESS_REMOTE_WRITE;
		m.rkey = 0x8765;
		m.length = KRC_LMR_MAX_LEN;
		m.addr = 0xfffffeULL << 40;
		break;
	default:	/* GOODBYE, META_REGISTER, META_DEREGISTER: the card */
		break;
	}
	/* the others' control MAC: any 8 bytes are carried, not checked */
	if (!krc_msg_is_meta(type)) {
		memcpy(m.ctrl_mac, "\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc8",
		       KRC_CTRL_MAC_LEN);
		m.ctrl_mac[7] ^= type;
	}
	return m;
}

static bool msg_equal(const struct krc_ctrl_msg *a, const struct krc_ctrl_msg *b)
{
	return a->type == b->type && a->status == b->status &&
	       a->req_id == b->req_id &&
	       !memcmp(&a->card, &b->card, sizeof(a->card)) &&
	       a->dst_incarnation == b->dst_incarnation &&
	       a->qpn == b->qpn && a->psn == b->psn &&
	       a->peer_qpn == b->peer_qpn && a->probe_rkey == b->probe_rkey &&
	       a->probe_addr == b->probe_addr &&
	       a->probe_len == b->probe_len && a->slot == b->slot &&
	       a->port == b->port && a->epoch == b->epoch &&
	       a->want == b->want && a->count == b->count &&
	       a->access == b->access && a->rkey == b->rkey &&
	       a->length == b->length && a->addr == b->addr &&
	       a->region == b->region && a->src_off == b->src_off &&
	       a->src_region == b->src_region &&
	       !memcmp(a->name, b->name, sizeof(a->name)) &&
	       !memcmp(a->mac, b->mac, sizeof(a->mac)) &&
	       !memcmp(a->ctrl_mac, b->ctrl_mac, sizeof(a->ctrl_mac));
}

static bool msg_is_zero(const struct krc_ctrl_msg *m)
{
	struct krc_ctrl_msg z;

	memset(&z, 0, sizeof(z));
	return msg_equal(m, &z);
}

/* Encode @m and decode the result: the decoder's verdict. */
static int reencode(const struct krc_ctrl_msg *m)
{
	u8 buf[KRC_MSG_SIZE];
	struct krc_ctrl_msg d;
	int rc;

	krc_msg_encode(m, buf);
	rc = krc_msg_decode(buf, sizeof(buf), &d);
	if (rc)
		assert_true(msg_is_zero(&d));
	else
		assert_true(msg_equal(m, &d));
	return rc;
}

static void test_msg_layout(void **state)
{
	struct krc_ctrl_msg m = sample_msg(KRC_MSG_CONNECT_REQ);
	u8 buf[KRC_MSG_SIZE], card[KRCORE_CARD_SIZE];
	int i;

	(void)state;
	/* version 2: bytes 120..127 carry the control MAC */
	assert_int_equal(KRC_MSG_VERSION, 2);
	assert_int_equal(KRC_CTRL_MAC_LEN, 8);
	memset(buf, 0xa5, sizeof(buf));
	m.status = 0x0102;	/* not valid for a REQ, but encoded as is */
	m.slot = 0x0a0b0c0d;
	memset(m.mac, 0x5a, sizeof(m.mac));	/* META_* only: not sent */
	krc_msg_encode(&m, buf);
	assert_memory_equal(buf, "KRC1", 4);
	assert_int_equal(buf[4], KRC_MSG_VERSION);
	assert_int_equal(buf[5], KRC_MSG_CONNECT_REQ);
	assert_int_equal(buf[6], 0x02);
	assert_int_equal(buf[7], 0x01);
	/* req_id little-endian at 8 */
	assert_memory_equal(buf + 8, "\x89\x77\x66\x55\x44\x33\x22\x11", 8);
	krc_card_encode(&m.card, card);
	assert_memory_equal(buf + 16, card, KRCORE_CARD_SIZE);
	assert_memory_equal(buf + 80, "\x00\xdf\x0d\xee\xff\xc0\xad\x0b", 8);
	assert_memory_equal(buf + 88, "\x1a\x00\x00\x00", 4);
	assert_memory_equal(buf + 92, "\xef\xcd\xab\x00", 4);
	assert_memory_equal(buf + 96, "\x00\x00\x00\x00", 4);
	assert_memory_equal(buf + 100, "\x34\x12\x00\x00", 4);
	assert_memory_equal(buf + 104, "\x00\x50\x34\x12\x80\x88\xff\xff", 8);
	assert_memory_equal(buf + 112, "\x00\x10\x00\x00", 4);
	assert_memory_equal(buf + 116, "\x0d\x0c\x0b\x0a", 4);
	/* 120..127: the control MAC, byte for byte */
	assert_memory_equal(buf + 120, "\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc9", 8);
	assert_memory_equal(buf + 120, m.ctrl_mac, KRC_CTRL_MAC_LEN);
	/* each byte of it at its own offset, nothing else moves */
	for (i = 0; i < KRC_CTRL_MAC_LEN; i++) {
		u8 ref[KRC_MSG_SIZE];
		int k;

		memset(m.ctrl_mac, 0, sizeof(m.ctrl_mac));
		krc_msg_encode(&m, ref);
		m.ctrl_mac[i] = 0xff;
		krc_msg_encode(&m, buf);
		for (k = 0; k < KRC_MSG_SIZE; k++)
			assert_int_equal(buf[k], k == 120 + i ? 0xff : ref[k]);
		for (k = 120; k < KRC_MSG_SIZE; k++)
			assert_int_equal(ref[k], 0);
	}

	m = sample_msg(KRC_MSG_RTU);
	krc_msg_encode(&m, buf);
	assert_int_equal(buf[5], KRC_MSG_RTU);
	assert_memory_equal(buf + 96, "\x2b\x00\x00\x00", 4);
	assert_memory_equal(buf + 120, "\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xcc", 8);
	m = sample_msg(KRC_MSG_META_REPLY);
	memset(m.ctrl_mac, 0xff, sizeof(m.ctrl_mac));	/* not sent */
	memset(m.mac, 0x3c, sizeof(m.mac));
	krc_msg_encode(&m, buf);
	assert_int_equal(buf[5], 18);
	assert_memory_equal(buf + 116, "\xd2\x04\x00\x00", 4);
	/* META_*: 80..111 the MAC, 112..115 and 120..127 zero */
	for (i = 80; i < 112; i++)
		assert_int_equal(buf[i], 0x3c);
	for (i = 112; i < 116; i++)
		assert_int_equal(buf[i], 0);
	for (i = 120; i < KRC_MSG_SIZE; i++)
		assert_int_equal(buf[i], 0);
}

static void test_msg_roundtrip(void **state)
{
	u8 buf[2 * KRC_MSG_SIZE];
	struct krc_ctrl_msg m, m2, d;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(all_types); i++) {
		m = sample_msg(all_types[i]);
		memset(buf, 0xee, sizeof(buf));
		krc_msg_encode(&m, buf);
		/* the encoder writes exactly KRC_MSG_SIZE bytes */
		assert_int_equal(buf[KRC_MSG_SIZE], 0xee);
		assert_int_equal(krc_msg_decode(buf, KRC_MSG_SIZE, &d), 0);
		assert_true(msg_equal(&m, &d));
		/* a bigger receive buffer: the bytes past 128 are ignored */
		assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
		assert_true(msg_equal(&m, &d));
		/*
		 * The MAC field of the other kind of message is not sent:
		 * META_* carry no control MAC, the others no META MAC.
		 */
		m2 = m;
		if (krc_msg_is_meta(m.type))
			memset(m2.ctrl_mac, 0xff, sizeof(m2.ctrl_mac));
		else
			memset(m2.mac, 0xff, sizeof(m2.mac));
		krc_msg_encode(&m2, buf);
		assert_int_equal(krc_msg_decode(buf, KRC_MSG_SIZE, &d), 0);
		assert_true(msg_equal(&m, &d));
	}
}

/* Decode @buf and expect @err, with the output zeroed. */
static void expect_msg_err(const u8 *buf, size_t len, int err)
{
	struct krc_ctrl_msg d;

	memset(&d, 0x5a, sizeof(d));
	assert_int_equal(krc_msg_decode(buf, len, &d), err);
	assert_true(msg_is_zero(&d));
}

/* FLOW_ASK and FLOW_GRANT: their fields where proto.h says, and rules. */
static void test_msg_flow(void **state)
{
	u8 buf[KRC_MSG_SIZE];
	struct krc_ctrl_msg m, d;

	(void)state;
	m = sample_msg(KRC_MSG_FLOW_ASK);
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_get_le64(buf + 80), m.dst_incarnation);
	assert_int_equal(krc_get_le32(buf + 88), 4791);
	assert_int_equal(krc_get_le32(buf + 92), 0x80000001U);
	assert_int_equal(krc_get_le32(buf + 96), 16);
	assert_int_equal(krc_get_le32(buf + 100), 0);
	assert_int_equal(krc_get_le64(buf + 104), 0xfedcba9876543210ULL);
	assert_int_equal(krc_get_le32(buf + 112), 0);
	assert_int_equal(krc_get_le32(buf + 116), 0);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_true(msg_equal(&m, &d));
	/* the handshake's fields are not carried by a FLOW message */
	m.qpn = 0x1a;
	m.probe_addr = 1;
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_int_equal(d.qpn, 0);
	assert_int_equal(d.probe_addr, 0);
	/* ports 1 .. 65535 */
	m = sample_msg(KRC_MSG_FLOW_ASK);
	m.port = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.port = 65536;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.port = 1;
	assert_int_equal(reencode(&m), 0);
	/* an ASK has no status; a GRANT's is an errno, and it wants nothing */
	m.status = ECONNREFUSED;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_FLOW_GRANT);
	m.status = 0;
	assert_int_equal(reencode(&m), 0);
	m.status = 4095;
	assert_int_equal(reencode(&m), 0);
	m.status = 4096;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.status = 0;
	m.want = 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.want = 0;
	m.port = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	/* the bytes a FLOW message keeps zero */
	m = sample_msg(KRC_MSG_FLOW_GRANT);
	krc_msg_encode(&m, buf);
	buf[100] = 1;
	expect_msg_err(buf, sizeof(buf), -EBADMSG);
	krc_msg_encode(&m, buf);
	buf[112] = 1;
	expect_msg_err(buf, sizeof(buf), -EBADMSG);
	krc_msg_encode(&m, buf);
	buf[116] = 1;
	expect_msg_err(buf, sizeof(buf), -EBADMSG);
}

/* MEM_*: the layout of proto.h and what each type may carry. */
static void test_msg_mem(void **state)
{
	u8 buf[KRC_MSG_SIZE];
	struct krc_ctrl_msg m, d;

	(void)state;
	m = sample_msg(KRC_MSG_MEM_ALLOC_REP);
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_get_le32(buf + 88), KRCORE_ACCESS_REMOTE_ATOMIC);
	assert_int_equal(krc_get_le32(buf + 92), 0x1234567);
	assert_int_equal(krc_get_le64(buf + 96), 1ULL << 40);
	assert_int_equal(krc_get_le64(buf + 104), 0xffff888000200000ULL);
	assert_int_equal(krc_get_le32(buf + 112), 0xfffffffeU);
	assert_int_equal(krc_get_le32(buf + 116), 0);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_true(msg_equal(&m, &d));
	buf[116] = 1;
	expect_msg_err(buf, sizeof(buf), -EBADMSG);
	/* the handshake's fields are not carried */
	m.qpn = 0x1a;
	m.slot = 5;
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_int_equal(d.qpn, 0);
	assert_int_equal(d.slot, 0);

	/* ALLOC: a length of 1 .. 2^40, known rights, nothing else */
	m = sample_msg(KRC_MSG_MEM_ALLOC);
	assert_int_equal(reencode(&m), 0);
	m.length = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.length = KRC_LMR_MAX_LEN + 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.length = 1;
	assert_int_equal(reencode(&m), 0);
	m.access = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.access = KRCORE_ACCESS_LOCAL_WRITE;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.access = KRCORE_ACCESS_REMOTE_READ | 0x10;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.access = KRC_LMR_RIGHTS;
	assert_int_equal(reencode(&m), 0);
	m.rkey = 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.rkey = 0;
	m.addr = 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.addr = 0;
	m.region = 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.region = 0;
	m.status = ENOSPC;
	assert_int_equal(reencode(&m), -EBADMSG);

	/* ALLOC_REP: a region, or a status and nothing */
	m = sample_msg(KRC_MSG_MEM_ALLOC_REP);
	m.region = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_ALLOC_REP);
	m.access = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_ALLOC_REP);
	m.length = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_ALLOC_REP);
	m.status = ENOSPC;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.access = 0;
	m.rkey = 0;
	m.length = 0;
	m.addr = 0;
	m.region = 0;
	assert_int_equal(reencode(&m), 0);
	m.status = 4096;
	assert_int_equal(reencode(&m), -EBADMSG);

	/* FREE: a region only; FREE_REP: a region and a status */
	m = sample_msg(KRC_MSG_MEM_FREE);
	assert_int_equal(reencode(&m), 0);
	m.region = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_FREE);
	m.length = 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_FREE);
	m.status = 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_FREE_REP);
	assert_int_equal(reencode(&m), 0);
	m.status = 0;
	assert_int_equal(reencode(&m), 0);
	m.rkey = 9;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_FREE_REP);
	m.region = 0;
	assert_int_equal(reencode(&m), -EBADMSG);

	/* SET: a region, offset, length and a byte value; SET_REP as FREE_REP */
	m = sample_msg(KRC_MSG_MEM_SET);
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_get_le32(buf + 88), 0xa5);
	assert_int_equal(krc_get_le64(buf + 96), 1ULL << 30);
	assert_int_equal(krc_get_le64(buf + 104), 12345);
	assert_int_equal(krc_get_le32(buf + 112), 3);
	assert_int_equal(reencode(&m), 0);
	m.access = 0x100;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.access = 0;
	assert_int_equal(reencode(&m), 0);
	m.length = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_SET);
	m.addr = KRC_LMR_MAX_LEN + 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_SET);
	m.region = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	/* the key of a publication the caller looked up, or 0 */
	m = sample_msg(KRC_MSG_MEM_SET);
	m.rkey = 1;
	assert_int_equal(reencode(&m), 0);
	m = sample_msg(KRC_MSG_MEM_SET_REP);
	assert_int_equal(reencode(&m), 0);
	m.length = 1;
	assert_int_equal(reencode(&m), -EBADMSG);

	/* COPY: the source's offset at 88, its region at 116 */
	m = sample_msg(KRC_MSG_MEM_COPY);
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_get_le64(buf + 88), (1ULL << 40) - 1);
	assert_int_equal(krc_get_le64(buf + 96), 12345);
	assert_int_equal(krc_get_le64(buf + 104), 1ULL << 39);
	assert_int_equal(krc_get_le32(buf + 112), 3);
	assert_int_equal(krc_get_le32(buf + 116), 0xffffff);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_true(msg_equal(&m, &d));
	assert_int_equal(d.slot, 0);
	m.src_region = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_COPY);
	m.src_off = KRC_LMR_MAX_LEN + 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_COPY);
	m.length = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_COPY);
	m.region = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_COPY_REP);
	assert_int_equal(reencode(&m), 0);
	krc_msg_encode(&m, buf);
	buf[116] = 1;
	expect_msg_err(buf, sizeof(buf), -EBADMSG);
}

/* LOCK, LOCK_REP, UNLOCK, UNLOCK_REP: a word of a region, a ticket, a grant */
static void test_msg_lock(void **state)
{
	static const u8 types[] = { KRC_MSG_MEM_LOCK, KRC_MSG_MEM_UNLOCK,
				    KRC_MSG_MEM_LOCK_REP };
	u8 buf[KRC_MSG_SIZE];
	struct krc_ctrl_msg m, d;
	unsigned int i;

	(void)state;
	m = sample_msg(KRC_MSG_MEM_UNLOCK);
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_get_le32(buf + 88), 0);
	assert_int_equal(krc_get_le32(buf + 92), 0x89abcdef);
	assert_int_equal(krc_get_le64(buf + 96), 0xfedcba9876543210ULL);
	assert_int_equal(krc_get_le64(buf + 104), KRC_LMR_MAX_LEN - 8);
	assert_int_equal(krc_get_le32(buf + 112), 0xffffff);
	assert_int_equal(krc_get_le32(buf + 116), 0);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_true(msg_equal(&m, &d));
	buf[116] = 1;
	expect_msg_err(buf, sizeof(buf), -EBADMSG);

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		m = sample_msg(types[i]);
		assert_int_equal(reencode(&m), 0);
		/* a word: 8-aligned, below 2^40, of a region */
		m.addr += 4;
		assert_int_equal(reencode(&m), -EBADMSG);
		m = sample_msg(types[i]);
		m.addr = KRC_LMR_MAX_LEN;
		assert_int_equal(reencode(&m), -EBADMSG);
		m = sample_msg(types[i]);
		m.region = 0;
		assert_int_equal(reencode(&m), -EBADMSG);
		m = sample_msg(types[i]);
		m.access = KRCORE_ACCESS_REMOTE_ATOMIC;
		assert_int_equal(reencode(&m), -EBADMSG);
	}
	/* a LOCK carries no ticket, an UNLOCK always one */
	m = sample_msg(KRC_MSG_MEM_LOCK);
	m.length = 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_UNLOCK);
	m.length = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_LOCK);
	m.status = EBUSY;
	assert_int_equal(reencode(&m), -EBADMSG);
	/* a grant has a number and no status; a refusal the other way */
	m = sample_msg(KRC_MSG_MEM_LOCK_REP);
	m.length = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.status = ESTALE;
	assert_int_equal(reencode(&m), 0);
	m.length = 2;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.length = 0;
	m.status = 4096;
	assert_int_equal(reencode(&m), -EBADMSG);
	/* UNLOCK_REP: a region and a status, nothing else */
	m = sample_msg(KRC_MSG_MEM_UNLOCK_REP);
	assert_int_equal(reencode(&m), 0);
	m.rkey = 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_UNLOCK_REP);
	m.region = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
}

/* MEM_PUBLISH, MEM_UNPUBLISH and their answers (names.h, proto.h) */
static void test_msg_names(void **state)
{
	static const u8 asks[] = { KRC_MSG_MEM_PUBLISH, KRC_MSG_MEM_UNPUBLISH };
	u8 buf[KRC_MSG_SIZE];
	struct krc_ctrl_msg m, d;
	unsigned int i;

	(void)state;
	m = sample_msg(KRC_MSG_MEM_PUBLISH);
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_get_le32(buf + 88), KRCORE_ACCESS_REMOTE_READ);
	assert_memory_equal(buf + 92, "abcdefghijklmnopqrstuvw", KRC_NAME_LEN);
	assert_int_equal(krc_get_le32(buf + 116), 0xffffff);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_true(msg_equal(&m, &d));
	/* a name of 23 bytes and its NUL: a 24th byte is refused */
	buf[115] = 'x';
	expect_msg_err(buf, sizeof(buf), -EBADMSG);
	for (i = 0; i < ARRAY_SIZE(asks); i++) {
		m = sample_msg(asks[i]);
		assert_int_equal(reencode(&m), 0);
		m.region = 0;
		assert_int_equal(reencode(&m), -EBADMSG);
		m = sample_msg(asks[i]);
		memset(m.name, 0, KRC_NAME_LEN);
		assert_int_equal(reencode(&m), -EBADMSG);
		m.name[0] = 'a';
		assert_int_equal(reencode(&m), 0);
		m.name[2] = 'b';	/* a byte after the NUL */
		assert_int_equal(reencode(&m), -EBADMSG);
		m.name[1] = ' ';	/* not printable */
		assert_int_equal(reencode(&m), -EBADMSG);
		m = sample_msg(asks[i]);
		m.status = EBUSY;
		assert_int_equal(reencode(&m), -EBADMSG);
	}
	/* PUBLISH carries rights (REMOTE_* only), UNPUBLISH none */
	m = sample_msg(KRC_MSG_MEM_PUBLISH);
	m.access = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.access = KRCORE_ACCESS_LOCAL_WRITE | KRCORE_ACCESS_REMOTE_READ;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_UNPUBLISH);
	m.access = KRCORE_ACCESS_REMOTE_READ;
	assert_int_equal(reencode(&m), -EBADMSG);
	/* PUBLISH_REP: a key and rights, or a status and nothing */
	m = sample_msg(KRC_MSG_MEM_PUBLISH_REP);
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_get_le32(buf + 92), 0x4321);
	assert_int_equal(krc_get_le32(buf + 112), 0xffffff);
	assert_int_equal(reencode(&m), 0);
	m.access = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_PUBLISH_REP);
	m.status = EEXIST;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.access = 0;
	m.rkey = 0;
	m.length = 0;
	m.addr = 0;
	assert_int_equal(reencode(&m), 0);
	m.region = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_UNPUBLISH_REP);
	assert_int_equal(reencode(&m), 0);
	m.rkey = 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	assert_string_equal(krc_msg_type_name(KRC_MSG_MEM_PUBLISH),
			    "mem_publish");
	assert_string_equal(krc_msg_type_name(KRC_MSG_MEM_UNPUBLISH_REP),
			    "mem_unpublish_rep");
}

/* MEM_LOOKUP: a name and nothing else; its answer an entry or a status. */
static void test_msg_lookup(void **state)
{
	u8 buf[KRC_MSG_SIZE];
	struct krc_ctrl_msg m, d;

	(void)state;
	m = sample_msg(KRC_MSG_MEM_LOOKUP);
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_get_le32(buf + 88), 0);
	assert_memory_equal(buf + 92, "lookup-me", 10);
	assert_int_equal(krc_get_le32(buf + 116), 0);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_true(msg_equal(&m, &d));
	m.region = 1;		/* it names no region */
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_LOOKUP);
	m.access = KRCORE_ACCESS_REMOTE_READ;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_LOOKUP);
	memset(m.name, 0, KRC_NAME_LEN);
	assert_int_equal(reencode(&m), -EBADMSG);
	m.name[0] = '\t';
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_LOOKUP);
	m.status = ENOENT;	/* a question has no status */
	assert_int_equal(reencode(&m), -EBADMSG);

	/* the answer: what a READ of the table finds */
	m = sample_msg(KRC_MSG_MEM_LOOKUP_REP);
	krc_msg_encode(&m, buf);
	assert_int_equal(krc_get_le32(buf + 88), m.access);
	assert_int_equal(krc_get_le32(buf + 92), 0x8765);
	assert_true(krc_get_le64(buf + 96) == KRC_LMR_MAX_LEN);
	assert_true(krc_get_le64(buf + 104) == 0xfffffeULL << 40);
	assert_int_equal(krc_get_le32(buf + 112), 0xfffffe);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_true(msg_equal(&m, &d));
	m.access = KRCORE_ACCESS_LOCAL_WRITE;	/* no remote right */
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_LOOKUP_REP);
	m.length = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.length = KRC_LMR_MAX_LEN + 1;
	assert_int_equal(reencode(&m), -EBADMSG);
	m = sample_msg(KRC_MSG_MEM_LOOKUP_REP);
	m.region = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	/* a refusal carries nothing else */
	m = sample_msg(KRC_MSG_MEM_LOOKUP_REP);
	m.status = ENOENT;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.access = 0;
	m.rkey = 0;
	m.length = 0;
	m.addr = 0;
	assert_int_equal(reencode(&m), -EBADMSG);	/* still a region */
	m.region = 0;
	assert_int_equal(reencode(&m), 0);
	m.status = 4096;
	assert_int_equal(reencode(&m), -EBADMSG);
}

static void test_msg_type_name(void **state)
{
	static const char *const names[] = {
		"?", "connect_req", "connect_rep", "connect_nak", "rtu",
		"rtu_ack", "goodbye", "close_req", "close_rep", "flow_ask",
		"flow_grant", "mem_alloc", "mem_alloc_rep", "mem_free",
		"mem_free_rep", "?", "meta_register", "meta_deregister", "meta_reply",
		"mem_set", "mem_set_rep", "mem_copy", "mem_copy_rep", "mem_lock",
		"mem_lock_rep", "mem_unlock", "mem_unlock_rep", "mem_publish",
		"mem_publish_rep", "mem_unpublish", "mem_unpublish_rep",
		"mem_lookup", "mem_lookup_rep", "?",
	};
	unsigned int t;

	(void)state;
	for (t = 0; t < ARRAY_SIZE(names); t++)
		assert_string_equal(krc_msg_type_name(t), names[t]);
	assert_string_equal(krc_msg_type_name(255), "?");
	assert_string_equal(krc_msg_type_name(0x100 + KRC_MSG_RTU), "?");
	assert_string_equal(krc_msg_type_name(~0U), "?");
}

static void test_msg_rejects_header(void **state)
{
	struct krc_ctrl_msg m = sample_msg(KRC_MSG_CONNECT_REQ), d;
	u8 good[KRC_MSG_SIZE], buf[KRC_MSG_SIZE];
	unsigned int t;
	int i;

	(void)state;
	krc_msg_encode(&m, good);
	assert_int_equal(krc_msg_decode(good, sizeof(good), &d), 0);

	/* short */
	expect_msg_err(good, 0, -EBADMSG);
	expect_msg_err(good, KRCORE_CARD_SIZE, -EBADMSG);
	expect_msg_err(good, KRC_MSG_SIZE - 1, -EBADMSG);

	/* magic, each byte */
	for (i = 0; i < 4; i++) {
		memcpy(buf, good, sizeof(buf));
		buf[i] ^= 0x20;
		expect_msg_err(buf, sizeof(buf), -EBADMSG);
	}
	/* the CM magic is not a message's */
	memcpy(buf, good, sizeof(buf));
	krc_put_le32(buf, KRC_CM_MAGIC);
	expect_msg_err(buf, sizeof(buf), -EBADMSG);

	/* version */
	memcpy(buf, good, sizeof(buf));
	buf[4] = 0;
	expect_msg_err(buf, sizeof(buf), -EPROTO);
	buf[4] = 1;	/* no control MAC */
	expect_msg_err(buf, sizeof(buf), -EPROTO);
	buf[4] = KRC_MSG_VERSION + 1;
	expect_msg_err(buf, sizeof(buf), -EPROTO);
	buf[4] = 0xff;
	expect_msg_err(buf, sizeof(buf), -EPROTO);

	/* unknown types, whatever else the message holds */
	for (t = 0; t < 256; t++) {
		bool known = (t >= 1 && t <= 6) || (t >= 16 && t <= 18);

		if (known)
			continue;
		memcpy(buf, good, sizeof(buf));
		buf[5] = (u8)t;
		expect_msg_err(buf, sizeof(buf), -EBADMSG);
	}

	/*
	 * Bytes 120..127: META_* types' are reserved (zero), each byte and
	 * bit; every other type's are its control MAC, carried whatever they
	 * hold (whether it vouches for the message is not the decoder's
	 * business).
	 */
	for (t = 0; t < ARRAY_SIZE(all_types); t++) {
		struct krc_ctrl_msg s = sample_msg(all_types[t]);
		u8 base[KRC_MSG_SIZE];
		int bit;

		krc_msg_encode(&s, base);
		for (i = 120; i < KRC_MSG_SIZE; i++) {
			for (bit = 0; bit <= 8; bit++) {
				memcpy(buf, base, sizeof(buf));
				buf[i] ^= bit < 8 ? (u8)(1 << bit) : 0xff;
				if (krc_msg_is_meta(s.type)) {
					expect_msg_err(buf, sizeof(buf), -EBADMSG);
					continue;
				}
				memset(&d, 0x5a, sizeof(d));
				assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
				assert_memory_equal(d.ctrl_mac, buf + 120,
						    KRC_CTRL_MAC_LEN);
				s.ctrl_mac[i - 120] = buf[i];
				assert_true(msg_equal(&d, &s));
				s.ctrl_mac[i - 120] = base[i];
			}
		}
		if (krc_msg_is_meta(s.type))
			continue;
		/* all zero and all ones are 8 bytes like any other */
		memcpy(buf, base, sizeof(buf));
		memset(buf + 120, 0, KRC_CTRL_MAC_LEN);
		assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
		assert_memory_equal(d.ctrl_mac, "\0\0\0\0\0\0\0\0", 8);
		memset(buf + 120, 0xff, KRC_CTRL_MAC_LEN);
		assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
		assert_memory_equal(d.ctrl_mac, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	}

	/* the card's errors come through */
	m = sample_msg(KRC_MSG_GOODBYE);
	m.card.card_version = 2;
	krc_msg_encode(&m, buf);
	expect_msg_err(buf, sizeof(buf), -EPROTO);
	m = sample_msg(KRC_MSG_META_REGISTER);
	m.card.incarnation = 0;
	krc_msg_encode(&m, buf);
	expect_msg_err(buf, sizeof(buf), -EINVAL);
	m = sample_msg(KRC_MSG_CONNECT_REQ);
	m.card.node_id = 0;
	krc_msg_encode(&m, buf);
	expect_msg_err(buf, sizeof(buf), -EINVAL);
	m = sample_msg(KRC_MSG_META_REPLY);
	memset(m.card.gid, 0, sizeof(m.card.gid));
	krc_msg_encode(&m, buf);
	expect_msg_err(buf, sizeof(buf), -EINVAL);

	/*
	 * Header errors win over the card's: the checks' order. A META_*
	 * message's reserved bytes are a header error; another type's
	 * control MAC is none, the card's error comes through.
	 */
	m = sample_msg(KRC_MSG_RTU);
	m.card.card_version = 7;
	krc_msg_encode(&m, buf);
	buf[4] = 9;
	expect_msg_err(buf, sizeof(buf), -EPROTO);
	krc_msg_encode(&m, buf);
	buf[127] ^= 1;
	expect_msg_err(buf, sizeof(buf), -EPROTO);
	m = sample_msg(KRC_MSG_META_REGISTER);
	m.card.card_version = 7;
	krc_msg_encode(&m, buf);
	buf[4] = 9;
	expect_msg_err(buf, sizeof(buf), -EPROTO);
	krc_msg_encode(&m, buf);
	buf[127] = 1;
	expect_msg_err(buf, sizeof(buf), -EBADMSG);
	buf[127] = 0;
	expect_msg_err(buf, sizeof(buf), -EPROTO);
}

static void test_msg_rejects_fields(void **state)
{
	static const u32 bad_qpns[] = { 0, 1, 1U << 24, 0xffffffffU };
	struct krc_ctrl_msg m;
	size_t i, k;

	(void)state;
	/* REQ and REP: qpn 2 .. 2^24 - 1, psn < 2^24 */
	for (k = 0; k < 2; k++) {
		u8 type = k ? KRC_MSG_CONNECT_REP : KRC_MSG_CONNECT_REQ;

		for (i = 0; i < ARRAY_SIZE(bad_qpns); i++) {
			m = sample_msg(type);
			m.qpn = bad_qpns[i];
			assert_int_equal(reencode(&m), -EBADMSG);
		}
		m = sample_msg(type);
		m.qpn = 2;
		assert_int_equal(reencode(&m), 0);
		m.qpn = 0xffffff;
		assert_int_equal(reencode(&m), 0);
		m.psn = 0;
		assert_int_equal(reencode(&m), 0);
		m.psn = 0xffffff;
		assert_int_equal(reencode(&m), 0);
		m.psn = 1U << 24;
		assert_int_equal(reencode(&m), -EBADMSG);
		m.psn = 0xffffffffU;
		assert_int_equal(reencode(&m), -EBADMSG);
	}
	/* a REQ is about no QP of the receiver yet: peer_qpn is free */
	m = sample_msg(KRC_MSG_CONNECT_REQ);
	m.peer_qpn = 0;
	assert_int_equal(reencode(&m), 0);
	m.dst_incarnation = 0;	/* unknown */
	assert_int_equal(reencode(&m), 0);

	/* REP, RTU, RTU_ACK: peer_qpn 2 .. 2^24 - 1 */
	for (k = 0; k < 3; k++) {
		static const u8 types[] = {
			KRC_MSG_CONNECT_REP, KRC_MSG_RTU, KRC_MSG_RTU_ACK,
		};

		for (i = 0; i < ARRAY_SIZE(bad_qpns); i++) {
			m = sample_msg(types[k]);
			m.peer_qpn = bad_qpns[i];
			assert_int_equal(reencode(&m), -EBADMSG);
		}
		m = sample_msg(types[k]);
		m.peer_qpn = 2;
		assert_int_equal(reencode(&m), 0);
		m.peer_qpn = 0xffffff;
		assert_int_equal(reencode(&m), 0);
	}
	/* CLOSE_REQ and CLOSE_REP: both QPNs 2 .. 2^24 - 1 */
	for (k = 0; k < 2; k++) {
		u8 type = k ? KRC_MSG_CLOSE_REP : KRC_MSG_CLOSE_REQ;

		for (i = 0; i < ARRAY_SIZE(bad_qpns); i++) {
			m = sample_msg(type);
			m.qpn = bad_qpns[i];
			assert_int_equal(reencode(&m), -EBADMSG);
			m = sample_msg(type);
			m.peer_qpn = bad_qpns[i];
			assert_int_equal(reencode(&m), -EBADMSG);
		}
		m = sample_msg(type);
		m.qpn = 2;
		m.peer_qpn = 0xffffff;
		assert_int_equal(reencode(&m), 0);
	}
	/* CLOSE_REP: 0 (closed) .. 4095 */
	m = sample_msg(KRC_MSG_CLOSE_REP);
	m.status = 0;
	assert_int_equal(reencode(&m), 0);
	m.status = 4095;
	assert_int_equal(reencode(&m), 0);
	m.status = 4096;
	assert_int_equal(reencode(&m), -EBADMSG);

	/* RTU and RTU_ACK do not need the sender's qpn nor a psn */
	m = sample_msg(KRC_MSG_RTU);
	m.qpn = 0;
	m.psn = 0xffffffffU;
	assert_int_equal(reencode(&m), 0);

	/* NAK: a status 1 .. 4095 */
	m = sample_msg(KRC_MSG_CONNECT_NAK);
	m.status = 0;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.status = 1;
	assert_int_equal(reencode(&m), 0);
	m.status = 4095;
	assert_int_equal(reencode(&m), 0);
	m.status = 4096;
	assert_int_equal(reencode(&m), -EBADMSG);
	m.status = 0xffff;
	assert_int_equal(reencode(&m), -EBADMSG);

	/* META_REPLY: 0 (success) .. 4095 */
	m = sample_msg(KRC_MSG_META_REPLY);
	m.status = 0;
	assert_int_equal(reencode(&m), 0);
	m.status = ENOSPC;
	m.slot = 0;
	assert_int_equal(reencode(&m), 0);
	m.status = 4095;
	assert_int_equal(reencode(&m), 0);
	m.status = 4096;
	assert_int_equal(reencode(&m), -EBADMSG);

	/* every other type: status 0 */
	for (i = 0; i < ARRAY_SIZE(all_types); i++) {
		u8 t = all_types[i];

		if (t == KRC_MSG_CONNECT_NAK || t == KRC_MSG_META_REPLY ||
		    t == KRC_MSG_CLOSE_REP || t == KRC_MSG_FLOW_GRANT ||
		    t == KRC_MSG_MEM_ALLOC_REP || t == KRC_MSG_MEM_FREE_REP ||
		    t == KRC_MSG_MEM_SET_REP || t == KRC_MSG_MEM_COPY_REP ||
		    t == KRC_MSG_MEM_PUBLISH_REP ||
		    t == KRC_MSG_MEM_UNPUBLISH_REP)
			continue;
		m = sample_msg(t);
		assert_int_equal(reencode(&m), 0);
		m.status = 1;
		assert_int_equal(reencode(&m), -EBADMSG);
		m.status = 0x8000;
		assert_int_equal(reencode(&m), -EBADMSG);
	}

	/* fields a type does not use are carried, not checked */
	m = sample_msg(KRC_MSG_GOODBYE);
	m.qpn = 0xffffffffU;
	m.psn = 0xffffffffU;
	m.peer_qpn = 1;
	m.probe_addr = ~0ULL;
	m.slot = 0xffffffffU;
	m.req_id = 0;
	assert_int_equal(reencode(&m), 0);
	/* META_*: bytes 80..111 are the MAC, carried; 112..115 are zero */
	m = sample_msg(KRC_MSG_META_DEREGISTER);
	memset(m.mac, 0xa5, sizeof(m.mac));
	assert_int_equal(reencode(&m), 0);
	{
		u8 buf[KRC_MSG_SIZE];
		struct krc_ctrl_msg d;

		krc_msg_encode(&m, buf);
		for (i = 80; i < 112; i++)
			assert_int_equal(buf[i], 0xa5);
		for (i = 112; i < 116; i++) {
			krc_msg_encode(&m, buf);
			buf[i] = 1;
			assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d),
					 -EBADMSG);
		}
	}
}

static struct krc_meta_hello sample_hello(void)
{
	struct krc_meta_hello h;

	memset(&h, 0, sizeof(h));
	h.node_id = 0x0a4d0002;
	h.incarnation = 0x8877665544332211ULL;
	memcpy(h.nonce, "0123456789abcdef", KRC_NONCE_LEN);
	return h;
}

static struct krc_mt_desc sample_desc(void)
{
	struct krc_mt_desc d;

	memset(&d, 0, sizeof(d));
	d.addr = 0x00007f0012340000ULL;
	d.rkey = 0xc0ffee;
	d.nslots = 4096;
	d.nphys = 4096 + KRC_MT_SPILL;
	d.seed = 0x5eed5eed5eed5eedULL;
	d.incarnation = 0x0102030405060708ULL;
	memcpy(d.nonce, "fedcba9876543210", KRC_NONCE_LEN);
	memset(d.mac, 0x5a, KRC_MAC_LEN);
	return d;
}

static bool desc_equal(const struct krc_mt_desc *a, const struct krc_mt_desc *b)
{
	return a->addr == b->addr && a->rkey == b->rkey &&
	       a->nslots == b->nslots && a->nphys == b->nphys &&
	       a->seed == b->seed && a->incarnation == b->incarnation &&
	       !memcmp(a->nonce, b->nonce, KRC_NONCE_LEN) &&
	       !memcmp(a->mac, b->mac, KRC_MAC_LEN);
}

static void test_hello(void **state)
{
	struct krc_meta_hello h = sample_hello(), d;
	u8 buf[KRC_CM_HELLO_SIZE + 8], bad[KRC_CM_HELLO_SIZE];
	int i;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	krc_meta_hello_encode(&h, buf);
	assert_int_equal(buf[KRC_CM_HELLO_SIZE], 0xee);
	assert_memory_equal(buf, "KRCM", 4);
	assert_int_equal(buf[4], KRC_CM_VERSION);
	assert_int_equal(buf[5], 1);
	assert_memory_equal(buf + 6, "\0\0", 2);
	assert_memory_equal(buf + 8, "\x02\x00\x4d\x0a\0\0\0\0", 8);
	assert_memory_equal(buf + 16, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
	assert_memory_equal(buf + 24, "0123456789abcdef", 16);
	assert_int_equal(krc_meta_hello_decode(buf, KRC_CM_HELLO_SIZE, &d), 0);
	assert_int_equal(d.node_id, h.node_id);
	assert_int_equal(d.incarnation, h.incarnation);
	assert_memory_equal(d.nonce, h.nonce, KRC_NONCE_LEN);
	/* rdma_cm hands the whole private data area: longer is fine */
	assert_int_equal(krc_meta_hello_decode(buf, sizeof(buf), &d), 0);
	assert_int_equal(d.incarnation, h.incarnation);

	assert_int_equal(krc_meta_hello_decode(buf, 0, &d), -EBADMSG);
	assert_int_equal(krc_meta_hello_decode(buf, KRC_CM_HELLO_SIZE - 1, &d),
			 -EBADMSG);
	assert_int_equal(d.node_id, 0);
	assert_int_equal(d.incarnation, 0);
	for (i = 0; i < 4; i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[i] ^= 0x01;
		assert_int_equal(krc_meta_hello_decode(bad, sizeof(bad), &d),
				 -EBADMSG);
	}
	/* version 1 (no nonce, no cluster key) and anything else */
	memcpy(bad, buf, sizeof(bad));
	bad[4] = 1;
	assert_int_equal(krc_meta_hello_decode(bad, sizeof(bad), &d), -EPROTO);
	bad[4] = KRC_CM_VERSION + 1;
	assert_int_equal(krc_meta_hello_decode(bad, sizeof(bad), &d), -EPROTO);
	memcpy(bad, buf, sizeof(bad));
	bad[5] = 2;	/* a descriptor's kind */
	assert_int_equal(krc_meta_hello_decode(bad, sizeof(bad), &d), -EBADMSG);
	bad[5] = 0;
	assert_int_equal(krc_meta_hello_decode(bad, sizeof(bad), &d), -EBADMSG);
	/* the zero fields: 6..7 and 12..15 */
	for (i = 6; i < 16; i++) {
		if (i >= 8 && i < 12)
			continue;
		memcpy(bad, buf, sizeof(bad));
		bad[i] = 0x80;
		assert_int_equal(krc_meta_hello_decode(bad, sizeof(bad), &d),
				 -EBADMSG);
	}
	h = sample_hello();
	h.node_id = 0;
	krc_meta_hello_encode(&h, bad);
	assert_int_equal(krc_meta_hello_decode(bad, sizeof(bad), &d), -EINVAL);
	h = sample_hello();
	h.incarnation = 0;
	krc_meta_hello_encode(&h, bad);
	assert_int_equal(krc_meta_hello_decode(bad, sizeof(bad), &d), -EINVAL);
	h = sample_hello();
	h.node_id = 0xffffffffU;
	h.incarnation = 1;
	krc_meta_hello_encode(&h, bad);
	assert_int_equal(krc_meta_hello_decode(bad, sizeof(bad), &d), 0);
	assert_int_equal(d.node_id, 0xffffffffU);
}

static int desc_verdict(const struct krc_mt_desc *d)
{
	u8 buf[KRC_MT_DESC_SIZE];
	struct krc_mt_desc e, z;
	int rc;

	krc_mt_desc_encode(d, buf);
	rc = krc_mt_desc_decode(buf, sizeof(buf), &e);
	memset(&z, 0, sizeof(z));
	assert_true(desc_equal(rc ? &z : d, &e));
	return rc;
}

static void test_desc(void **state)
{
	struct krc_mt_desc d = sample_desc(), e;
	u8 buf[KRC_MT_DESC_SIZE + 8], bad[KRC_MT_DESC_SIZE], hello[64];
	struct krc_meta_hello h = sample_hello();
	int i;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	krc_mt_desc_encode(&d, buf);
	assert_int_equal(buf[KRC_MT_DESC_SIZE], 0xee);
	assert_memory_equal(buf, "KRCM", 4);
	assert_int_equal(buf[4], KRC_CM_VERSION);
	assert_int_equal(buf[5], 2);
	assert_memory_equal(buf + 6, "\0\0", 2);
	assert_memory_equal(buf + 8, "\x00\x00\x34\x12\x00\x7f\x00\x00", 8);
	assert_memory_equal(buf + 16, "\xee\xff\xc0\x00", 4);
	assert_memory_equal(buf + 20, "\x00\x10\x00\x00", 4);
	assert_memory_equal(buf + 24, "\x00\x11\x00\x00", 4);
	assert_memory_equal(buf + 28, "\0\0\0\0", 4);
	assert_memory_equal(buf + 32, "\xed\x5e\xed\x5e\xed\x5e\xed\x5e", 8);
	assert_memory_equal(buf + 40, "\x08\x07\x06\x05\x04\x03\x02\x01", 8);
	assert_memory_equal(buf + 48, "fedcba9876543210", 16);
	for (i = 64; i < KRC_MT_DESC_SIZE; i++)
		assert_int_equal(buf[i], 0x5a);
	assert_int_equal(krc_mt_desc_decode(buf, KRC_MT_DESC_SIZE, &e), 0);
	assert_true(desc_equal(&d, &e));
	assert_int_equal(krc_mt_desc_decode(buf, sizeof(buf), &e), 0);
	assert_true(desc_equal(&d, &e));

	/* short, magic, version, kind, zero fields */
	assert_int_equal(krc_mt_desc_decode(buf, 0, &e), -EBADMSG);
	assert_int_equal(krc_mt_desc_decode(buf, KRC_MT_DESC_SIZE - 1, &e),
			 -EBADMSG);
	for (i = 0; i < 4; i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[i] ^= 0x40;
		assert_int_equal(krc_mt_desc_decode(bad, sizeof(bad), &e),
				 -EBADMSG);
	}
	memcpy(bad, buf, sizeof(bad));
	bad[4] = 1;	/* version 1: no nonce, no MAC */
	assert_int_equal(krc_mt_desc_decode(bad, sizeof(bad), &e), -EPROTO);
	memcpy(bad, buf, sizeof(bad));
	bad[5] = 1;
	assert_int_equal(krc_mt_desc_decode(bad, sizeof(bad), &e), -EBADMSG);
	for (i = 6; i < 32; i++) {
		if (i >= 8 && i < 28)
			continue;
		memcpy(bad, buf, sizeof(bad));
		bad[i] = 0x01;
		assert_int_equal(krc_mt_desc_decode(bad, sizeof(bad), &e),
				 -EBADMSG);
	}
	/* a hello is not a descriptor, nor the other way round */
	memset(hello, 0, sizeof(hello));
	krc_meta_hello_encode(&h, hello);
	assert_int_equal(krc_mt_desc_decode(hello, sizeof(hello), &e), -EBADMSG);
	assert_int_equal(krc_meta_hello_decode(buf, sizeof(buf), &h), -EBADMSG);

	/* geometry */
	assert_int_equal(desc_verdict(&d), 0);
	d.nslots = 64;
	d.nphys = 64 + KRC_MT_SPILL;
	assert_int_equal(desc_verdict(&d), 0);
	d.nslots = 1U << 26;
	d.nphys = (1U << 26) + KRC_MT_SPILL;
	assert_int_equal(desc_verdict(&d), 0);
	d.nslots = 1U << 27;
	d.nphys = (1U << 27) + KRC_MT_SPILL;
	assert_int_equal(desc_verdict(&d), -EINVAL);
	d.nslots = 1U << 31;
	d.nphys = (1U << 31) + KRC_MT_SPILL;
	assert_int_equal(desc_verdict(&d), -EINVAL);
	d.nslots = 32;
	d.nphys = 32 + KRC_MT_SPILL;
	assert_int_equal(desc_verdict(&d), -EINVAL);
	d.nslots = 0;
	d.nphys = KRC_MT_SPILL;
	assert_int_equal(desc_verdict(&d), -EINVAL);
	d.nslots = 96;
	d.nphys = 96 + KRC_MT_SPILL;
	assert_int_equal(desc_verdict(&d), -EINVAL);
	d = sample_desc();
	d.nphys = d.nslots;
	assert_int_equal(desc_verdict(&d), -EINVAL);
	d.nphys = d.nslots + KRC_MT_SPILL + 1;
	assert_int_equal(desc_verdict(&d), -EINVAL);
	d = sample_desc();
	d.rkey = 0;
	assert_int_equal(desc_verdict(&d), -EINVAL);
	d = sample_desc();
	d.incarnation = 0;
	assert_int_equal(desc_verdict(&d), -EINVAL);
	/* address and seed are free */
	d = sample_desc();
	d.addr = 0;
	d.seed = 0;
	assert_int_equal(desc_verdict(&d), 0);
	d.addr = ~0ULL;
	d.seed = ~0ULL;
	assert_int_equal(desc_verdict(&d), 0);
}

/* splitmix64: a fixed-seed generator, the same sequence everywhere */
static u64 rnd_next(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static bool is_decode_err(int rc)
{
	return rc == -EBADMSG || rc == -EPROTO || rc == -EINVAL;
}

/*
 * Bytes a message decode may accept and a re-encode rewrites: the card's
 * reserved0 (38..39) and reserved1 (52..55), which krc_card_decode()
 * ignores and krc_card_encode() writes as zero.
 */
static bool msg_byte_normalised(int i)
{
	int c = i - 16;

	return (c >= 38 && c < 40) || (c >= 52 && c < 56);
}

/*
 * Mutations of valid blobs: the decoders never crash, reject with one of
 * their errors and leave the output zeroed, and what they accept
 * re-encodes to the same bytes and decodes to the same values.
 */
static void test_mutations(void **state)
{
	enum { NSRC = ARRAY_SIZE(all_types) + 2, ITERS = 100000 };
	u8 src[NSRC][KRC_MSG_SIZE], buf[KRC_MSG_SIZE + 16], out[KRC_MSG_SIZE];
	size_t srclen[NSRC], len;
	int acc_msg = 0, acc_hello = 0, acc_desc = 0, rejected = 0;
	struct krc_meta_hello h, h2;
	struct krc_mt_desc d, d2;
	struct krc_ctrl_msg m, m2;
	u64 seed = 20261121;
	int it, i, n, rc;

	(void)state;
	memset(src, 0, sizeof(src));
	for (i = 0; i < (int)ARRAY_SIZE(all_types); i++) {
		m = sample_msg(all_types[i]);
		krc_msg_encode(&m, src[i]);
		srclen[i] = KRC_MSG_SIZE;
	}
	h = sample_hello();
	krc_meta_hello_encode(&h, src[NSRC - 2]);
	srclen[NSRC - 2] = KRC_CM_HELLO_SIZE;
	d = sample_desc();
	krc_mt_desc_encode(&d, src[NSRC - 1]);
	srclen[NSRC - 1] = KRC_MT_DESC_SIZE;

	for (it = 0; it < ITERS; it++) {
		u64 r = rnd_next(&seed);
		int s = (int)(r % NSRC);

		len = srclen[s];
		memset(buf, 0, sizeof(buf));
		memcpy(buf, src[s], len);
		n = 1 + (int)((r >> 8) % 4);
		while (n--) {
			u64 q = rnd_next(&seed);
			int pos = (int)(q % len);

			switch ((q >> 16) % 4) {
			case 0:		/* one bit */
				buf[pos] ^= (u8)(1 << ((q >> 24) % 8));
				break;
			case 1:		/* an extreme */
				buf[pos] = (q >> 24) & 1 ? 0xff : 0;
				break;
			default:	/* anything else */
				buf[pos] ^= (u8)(1 + (q >> 24) % 255);
				break;
			}
		}
		/* now and then a short or a longer buffer */
		if ((r >> 32) % 16 == 0)
			len = (size_t)((r >> 40) % (sizeof(buf) + 1));

		rc = krc_msg_decode(buf, len, &m);
		if (rc) {
			assert_true(is_decode_err(rc));
			assert_true(msg_is_zero(&m));
			rejected++;
		} else {
			acc_msg++;
			assert_true(len >= KRC_MSG_SIZE);
			assert_string_not_equal(krc_msg_type_name(m.type), "?");
			/* 120..127: zero (META_*) or the control MAC, as is */
			if (krc_msg_is_meta(m.type))
				assert_int_equal(krc_get_le64(buf + 120), 0);
			assert_memory_equal(m.ctrl_mac, krc_msg_is_meta(m.type) ?
					    (const u8 *)"\0\0\0\0\0\0\0\0" :
					    buf + 120, KRC_CTRL_MAC_LEN);
			krc_msg_encode(&m, out);
			for (i = 0; i < KRC_MSG_SIZE; i++)
				if (!msg_byte_normalised(i))
					assert_int_equal(out[i], buf[i]);
			assert_int_equal(krc_msg_decode(out, sizeof(out), &m2), 0);
			assert_true(msg_equal(&m, &m2));
		}

		rc = krc_meta_hello_decode(buf, len, &h);
		if (rc) {
			assert_true(is_decode_err(rc));
			assert_true(!h.node_id && !h.incarnation);
		} else {
			acc_hello++;
			krc_meta_hello_encode(&h, out);
			assert_memory_equal(out, buf, KRC_CM_HELLO_SIZE);
			assert_int_equal(krc_meta_hello_decode(out, KRC_CM_HELLO_SIZE,
							       &h2), 0);
			assert_int_equal(h.node_id, h2.node_id);
			assert_int_equal(h.incarnation, h2.incarnation);
		}

		rc = krc_mt_desc_decode(buf, len, &d);
		if (rc) {
			struct krc_mt_desc z;

			memset(&z, 0, sizeof(z));
			assert_true(is_decode_err(rc));
			assert_true(desc_equal(&d, &z));
		} else {
			acc_desc++;
			krc_mt_desc_encode(&d, out);
			assert_memory_equal(out, buf, KRC_MT_DESC_SIZE);
			assert_int_equal(krc_mt_desc_decode(out, KRC_MT_DESC_SIZE,
							    &d2), 0);
			assert_true(desc_equal(&d, &d2));
		}
	}
	/* both outcomes were exercised, for every kind of blob */
	print_message("mutations: accepted %d msg, %d hello, %d desc; rejected %d msg\n",
		      acc_msg, acc_hello, acc_desc, rejected);
	assert_true(acc_msg > ITERS / 20);
	assert_true(rejected > ITERS / 5);
	assert_true(acc_hello > 100);
	assert_true(acc_desc > 100);
}

/* ---- the two-sided data header (krc_data_hdr) ---- */

static struct krc_data_hdr sample_hdr(void)
{
	struct krc_data_hdr h;

	memset(&h, 0, sizeof(h));
	h.flags = KRCORE_MSG_F_IMM;
	h.dst_port = 0x1234;
	h.src_port = 0xbeef;
	h.imm_data = 0xa1b2c3d4;
	return h;
}

static bool hdr_equal(const struct krc_data_hdr *a, const struct krc_data_hdr *b)
{
	return a->flags == b->flags && a->dst_port == b->dst_port &&
	       a->src_port == b->src_port && a->imm_data == b->imm_data;
}

static bool hdr_is_zero(const struct krc_data_hdr *h)
{
	return !h->flags && !h->dst_port && !h->src_port && !h->imm_data;
}

/* Decode @buf and expect @err, with the output zeroed. */
static void expect_hdr_err(const u8 *buf, size_t len, int err)
{
	struct krc_data_hdr d;

	memset(&d, 0x5a, sizeof(d));
	assert_int_equal(krc_data_hdr_decode(buf, len, &d), err);
	assert_true(hdr_is_zero(&d));
}

/*
 * The verdict of proto.h's rules on @len bytes: short or bad magic, then
 * the version, then flags and the zero field (the order of every decoder
 * of proto.c: length, magic, version, the rest).
 */
static int hdr_doc_rc(const u8 *buf, size_t len)
{
	if (len < KRC_DATA_HDR_SIZE)
		return -EBADMSG;
	if (buf[0] != 'K' || buf[1] != 'M')
		return -EBADMSG;
	if (buf[2] != KRC_DATA_VERSION)
		return -EPROTO;
	if (buf[3] & ~KRCORE_MSG_F_IMM)
		return -EBADMSG;
	if (buf[12] || buf[13] || buf[14] || buf[15])
		return -EBADMSG;
	return 0;
}

static void test_data_hdr_layout(void **state)
{
	struct krc_data_hdr h = sample_hdr(), d;
	u8 buf[KRC_DATA_HDR_SIZE + 8];

	(void)state;
	assert_int_equal(KRC_DATA_HDR_SIZE, 16);
	assert_int_equal(KRC_DATA_MAGIC, 0x4d4b);
	assert_int_equal(KRCORE_MSG_F_IMM, 1);
	/* its own version, 1 on the wire whatever the messages' is */
	assert_int_equal(KRC_DATA_VERSION, 1);
	/* a header and the largest SEND fit one 4 KiB receive buffer */
	assert_true(KRC_DATA_HDR_SIZE + KRCORE_MAX_SEND <= 4096);

	/* the encoder writes exactly 16 bytes, its zero field included */
	memset(buf, 0xee, sizeof(buf));
	krc_data_hdr_encode(&h, buf);
	assert_memory_equal(buf, "KM", 2);		/* 0x4d4b, LE */
	assert_int_equal(buf[2], KRC_DATA_VERSION);
	assert_int_equal(buf[3], KRCORE_MSG_F_IMM);
	assert_memory_equal(buf + 4, "\x34\x12", 2);	/* dst_port */
	assert_memory_equal(buf + 6, "\xef\xbe", 2);	/* src_port */
	assert_memory_equal(buf + 8, "\xd4\xc3\xb2\xa1", 4);
	assert_memory_equal(buf + 12, "\0\0\0\0", 4);
	assert_int_equal(buf[KRC_DATA_HDR_SIZE], 0xee);
	assert_int_equal(krc_get_le16(buf), KRC_DATA_MAGIC);

	/* every field at its own offset: nothing overlaps */
	memset(&h, 0, sizeof(h));
	memset(buf, 0xee, sizeof(buf));
	krc_data_hdr_encode(&h, buf);
	assert_memory_equal(buf, "KM", 2);
	assert_int_equal(buf[2], KRC_DATA_VERSION);
	assert_memory_equal(buf + 3, "\0\0\0\0\0\0\0\0\0\0\0\0\0", 13);
	h.dst_port = 0xffff;
	krc_data_hdr_encode(&h, buf);
	assert_memory_equal(buf + 4, "\xff\xff\0\0\0\0\0\0\0\0\0\0", 12);
	h.dst_port = 0;
	h.src_port = 0xffff;
	krc_data_hdr_encode(&h, buf);
	assert_memory_equal(buf + 4, "\0\0\xff\xff\0\0\0\0\0\0\0\0", 12);
	h.src_port = 0;
	h.imm_data = 0xffffffff;
	krc_data_hdr_encode(&h, buf);
	assert_memory_equal(buf + 4, "\0\0\0\0\xff\xff\xff\xff\0\0\0\0", 12);
	assert_int_equal(buf[3], 0);
	assert_int_equal(krc_data_hdr_decode(buf, KRC_DATA_HDR_SIZE, &d), 0);
	assert_true(hdr_equal(&h, &d));
}

static void test_data_hdr_roundtrip(void **state)
{
	static const u16 ports[] = { 0, 1, 2, 0x00ff, 0x0100, 0x7fff, 0x8000,
				     0xfffe, 0xffff };
	static const u32 imms[] = { 0, 1, 0xffff, 0x10000, 0x80000000,
				    0xffffffff };
	u8 buf[KRC_DATA_HDR_SIZE + KRCORE_MAX_SEND];
	struct krc_data_hdr h, d;
	size_t i, k, f;

	(void)state;
	for (f = 0; f < 2; f++) {
		for (i = 0; i < ARRAY_SIZE(ports); i++) {
			for (k = 0; k < ARRAY_SIZE(imms); k++) {
				memset(&h, 0, sizeof(h));
				h.flags = f ? KRCORE_MSG_F_IMM : 0;
				h.dst_port = ports[i];
				h.src_port = ports[ARRAY_SIZE(ports) - 1 - i];
				h.imm_data = imms[k];
				memset(buf, 0xa5, sizeof(buf));
				krc_data_hdr_encode(&h, buf);
				assert_int_equal(buf[KRC_DATA_HDR_SIZE], 0xa5);
				memset(&d, 0x5a, sizeof(d));
				assert_int_equal(krc_data_hdr_decode(buf, KRC_DATA_HDR_SIZE,
								     &d), 0);
				assert_true(hdr_equal(&h, &d));
				/* with a payload behind it, whatever it holds */
				memset(&d, 0x5a, sizeof(d));
				assert_int_equal(krc_data_hdr_decode(buf, sizeof(buf),
								     &d), 0);
				assert_true(hdr_equal(&h, &d));
				assert_int_equal(krc_data_hdr_decode(buf,
								     KRC_DATA_HDR_SIZE + 1,
								     &d), 0);
				assert_true(hdr_equal(&h, &d));
			}
		}
	}
	/* the immediate is carried as is, even without KRCORE_MSG_F_IMM */
	h = sample_hdr();
	h.flags = 0;
	krc_data_hdr_encode(&h, buf);
	assert_int_equal(krc_data_hdr_decode(buf, KRC_DATA_HDR_SIZE, &d), 0);
	assert_true(hdr_equal(&h, &d));
}

static void test_data_hdr_rejects(void **state)
{
	struct krc_data_hdr h = sample_hdr(), d;
	u8 good[KRC_DATA_HDR_SIZE + 16], buf[KRC_DATA_HDR_SIZE + 16];
	u8 msg[KRC_MSG_SIZE], hello[KRC_CM_HELLO_SIZE];
	struct krc_meta_hello mh = sample_hello();
	struct krc_ctrl_msg m = sample_msg(KRC_MSG_RTU);
	size_t len;
	unsigned int v;
	int i, bit;

	(void)state;
	memset(good, 0, sizeof(good));
	krc_data_hdr_encode(&h, good);
	assert_int_equal(krc_data_hdr_decode(good, sizeof(good), &d), 0);

	/* short: every length below 16 */
	for (len = 0; len < KRC_DATA_HDR_SIZE; len++)
		expect_hdr_err(good, len, -EBADMSG);

	/* magic: each bit of both bytes, swapped, zero */
	for (i = 0; i < 2; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(buf, good, sizeof(buf));
			buf[i] ^= (u8)(1 << bit);
			expect_hdr_err(buf, sizeof(buf), -EBADMSG);
		}
	}
	memcpy(buf, good, sizeof(buf));
	buf[0] = 'M';
	buf[1] = 'K';
	expect_hdr_err(buf, sizeof(buf), -EBADMSG);
	buf[0] = 0;
	buf[1] = 0;
	expect_hdr_err(buf, sizeof(buf), -EBADMSG);
	/* a control message or a CM hello is not a data header */
	krc_msg_encode(&m, msg);
	expect_hdr_err(msg, sizeof(msg), -EBADMSG);
	krc_meta_hello_encode(&mh, hello);
	expect_hdr_err(hello, sizeof(hello), -EBADMSG);
	/* nor is a data header one of them */
	memset(msg, 0, sizeof(msg));
	krc_data_hdr_encode(&h, msg);
	assert_int_equal(krc_msg_decode(msg, sizeof(msg), &m), -EBADMSG);
	assert_int_equal(krc_meta_hello_decode(msg, sizeof(msg), &mh), -EBADMSG);

	/* version: anything but KRC_DATA_VERSION (the messages' included) */
	for (v = 0; v < 256; v++) {
		if (v == KRC_DATA_VERSION)
			continue;
		memcpy(buf, good, sizeof(buf));
		buf[2] = (u8)v;
		expect_hdr_err(buf, sizeof(buf), -EPROTO);
	}

	/* flags: KRCORE_MSG_F_IMM or nothing */
	for (v = 0; v < 256; v++) {
		memcpy(buf, good, sizeof(buf));
		buf[3] = (u8)v;
		if (v & ~(unsigned int)KRCORE_MSG_F_IMM) {
			expect_hdr_err(buf, sizeof(buf), -EBADMSG);
		} else {
			assert_int_equal(krc_data_hdr_decode(buf, sizeof(buf), &d), 0);
			assert_int_equal(d.flags, v);
		}
	}

	/* the zero field, 12..15: each bit */
	for (i = 12; i < KRC_DATA_HDR_SIZE; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(buf, good, sizeof(buf));
			buf[i] = (u8)(1 << bit);
			expect_hdr_err(buf, sizeof(buf), -EBADMSG);
		}
		memcpy(buf, good, sizeof(buf));
		buf[i] = 0xff;
		expect_hdr_err(buf, sizeof(buf), -EBADMSG);
	}
	/* ... but the payload's bytes, past 16, are not the header's */
	memcpy(buf, good, sizeof(buf));
	memset(buf + KRC_DATA_HDR_SIZE, 0xff, sizeof(buf) - KRC_DATA_HDR_SIZE);
	assert_int_equal(krc_data_hdr_decode(buf, sizeof(buf), &d), 0);
	assert_true(hdr_equal(&h, &d));

	/* the order: short, magic, version, then flags and zero field */
	memcpy(buf, good, sizeof(buf));
	buf[0] = 'X';
	buf[2] = KRC_DATA_VERSION + 1;
	buf[3] = 0x80;
	buf[15] = 1;
	expect_hdr_err(buf, KRC_DATA_HDR_SIZE - 1, -EBADMSG);
	expect_hdr_err(buf, sizeof(buf), -EBADMSG);
	buf[0] = 'K';
	expect_hdr_err(buf, sizeof(buf), -EPROTO);
	buf[2] = KRC_DATA_VERSION;
	expect_hdr_err(buf, sizeof(buf), -EBADMSG);
	buf[3] = KRCORE_MSG_F_IMM;
	expect_hdr_err(buf, sizeof(buf), -EBADMSG);
	buf[15] = 0;
	assert_int_equal(krc_data_hdr_decode(buf, sizeof(buf), &d), 0);
	assert_true(hdr_equal(&h, &d));

	/* an error after a success: the output is zeroed again */
	assert_false(hdr_is_zero(&d));
	assert_int_equal(krc_data_hdr_decode(buf, 3, &d), -EBADMSG);
	assert_true(hdr_is_zero(&d));
}

/*
 * Mutations of valid headers followed by a payload: the decoder never
 * crashes, agrees with proto.h's rules, leaves the output zeroed when it
 * rejects, and what it accepts re-encodes to the same 16 bytes.
 */
static void test_data_hdr_mutations(void **state)
{
	enum { NSRC = 4, ITERS = 100000 };
	u8 src[NSRC][KRC_DATA_HDR_SIZE + 16], buf[KRC_DATA_HDR_SIZE + 16];
	u8 out[KRC_DATA_HDR_SIZE];
	int acc = 0, badmsg = 0, proto = 0, it, i, n, rc;
	struct krc_data_hdr h, h2;
	u64 seed = 0x4b4d16;
	size_t len;

	(void)state;
	for (i = 0; i < NSRC; i++) {
		h = sample_hdr();
		h.flags = i & 1 ? KRCORE_MSG_F_IMM : 0;
		h.dst_port = (u16)(i < 2 ? 0xffff : 1);
		h.imm_data = i < 2 ? 0 : 0xffffffff;
		memset(src[i], 0, sizeof(src[i]));
		krc_data_hdr_encode(&h, src[i]);
		memset(src[i] + KRC_DATA_HDR_SIZE, 0x30 + i, 16);
	}
	for (it = 0; it < ITERS; it++) {
		u64 r = rnd_next(&seed);

		memcpy(buf, src[r % NSRC], sizeof(buf));
		len = sizeof(buf);
		n = 1 + (int)((r >> 8) % 3);
		while (n--) {
			u64 q = rnd_next(&seed);
			/* mostly in the header */
			int pos = (int)(q % ((q >> 40) % 4 ? KRC_DATA_HDR_SIZE : sizeof(buf)));

			switch ((q >> 16) % 4) {
			case 0:		/* one bit */
				buf[pos] ^= (u8)(1 << ((q >> 24) % 8));
				break;
			case 1:		/* an extreme */
				buf[pos] = (q >> 24) & 1 ? 0xff : 0;
				break;
			default:	/* anything else */
				buf[pos] ^= (u8)(1 + (q >> 24) % 255);
				break;
			}
		}
		/* now and then a short buffer */
		if ((r >> 32) % 16 == 0)
			len = (size_t)((r >> 40) % (sizeof(buf) + 1));

		memset(&h, 0x5a, sizeof(h));
		rc = krc_data_hdr_decode(buf, len, &h);
		assert_int_equal(rc, hdr_doc_rc(buf, len));
		if (rc) {
			assert_true(rc == -EBADMSG || rc == -EPROTO);
			assert_true(hdr_is_zero(&h));
			if (rc == -EPROTO)
				proto++;
			else
				badmsg++;
			continue;
		}
		acc++;
		assert_true(len >= KRC_DATA_HDR_SIZE);
		assert_int_equal(h.flags & ~KRCORE_MSG_F_IMM, 0);
		assert_int_equal(h.dst_port, krc_get_le16(buf + 4));
		assert_int_equal(h.src_port, krc_get_le16(buf + 6));
		assert_int_equal(h.imm_data, krc_get_le32(buf + 8));
		krc_data_hdr_encode(&h, out);
		assert_memory_equal(out, buf, KRC_DATA_HDR_SIZE);
		assert_int_equal(krc_data_hdr_decode(out, sizeof(out), &h2), 0);
		assert_true(hdr_equal(&h, &h2));
	}
	print_message("data header mutations: accepted %d, -EBADMSG %d, -EPROTO %d\n",
		      acc, badmsg, proto);
	assert_true(acc > ITERS / 10);
	assert_true(badmsg > ITERS / 5);
	assert_true(proto > ITERS / 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msg_layout),
		cmocka_unit_test(test_msg_roundtrip),
		cmocka_unit_test(test_msg_flow),
		cmocka_unit_test(test_msg_mem),
		cmocka_unit_test(test_msg_lock),
		cmocka_unit_test(test_msg_names),
		cmocka_unit_test(test_msg_lookup),
		cmocka_unit_test(test_msg_type_name),
		cmocka_unit_test(test_msg_rejects_header),
		cmocka_unit_test(test_msg_rejects_fields),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_desc),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_data_hdr_layout),
		cmocka_unit_test(test_data_hdr_roundtrip),
		cmocka_unit_test(test_data_hdr_rejects),
		cmocka_unit_test(test_data_hdr_mutations),
	};

	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
