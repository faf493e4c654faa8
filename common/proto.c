// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * proto.c - krcore's node-to-node messages: wire encoding and checks.
 *
 * The wire layouts are in proto.h. Encoders write every reserved byte as
 * zero; decoders reject what no conforming sender writes (bad magic,
 * unknown version or type, reserved bytes set, values out of range for
 * the type) and are liberal with fields a type does not use: those are
 * carried as they are, so decode(encode(m)) == m for every accepted m.
 */
#include "proto.h"
#include "card.h"
#include "meta_table.h"

/* Message offsets. */
#define MSG_MAGIC	0
#define MSG_VERSION	4
#define MSG_TYPE	5
#define MSG_STATUS	6
#define MSG_REQ_ID	8
#define MSG_CARD	16
#define MSG_DST_INC	80
#define MSG_QPN		88
#define MSG_PSN		92
#define MSG_PEER_QPN	96
#define MSG_PROBE_RKEY	100
#define MSG_PROBE_ADDR	104
#define MSG_PROBE_LEN	112
#define MSG_SLOT	116
#define MSG_RESERVED	120	/* META_*: zero */
#define MSG_CTRL_MAC	120	/* the others: their control MAC */
#define MSG_MAC		80	/* META_*: instead of 80..111 */
#define MSG_FLOW_PORT	88	/* FLOW_*: instead of 88..115 */
#define MSG_FLOW_EPOCH	92
#define MSG_FLOW_WANT	96
#define MSG_FLOW_COUNT	104
#define MSG_MEM_ACCESS	88	/* MEM_*: instead of 88..119 */
#define MSG_MEM_RKEY	92
#define MSG_MEM_LENGTH	96
#define MSG_MEM_ADDR	104
#define MSG_MEM_REGION	112
#define MSG_MEM_SRC_OFF	88	/* MEM_COPY: instead of access and rkey */
#define MSG_MEM_SRC_REGION	116
#define MSG_MEM_NAME	92	/* MEM_[UN]PUBLISH: instead of 92..115 */
#define MSG_MEM_NAME_REGION	116
#define KRC_PORT_MAX	0xffffU

/* rdma_cm private data offsets (hello and table descriptor). */
#define CM_MAGIC	0
#define CM_VERSION	4
#define CM_KIND		5
#define CM_ZERO16	6
#define HELLO_NODE_ID	8
#define HELLO_ZERO32	12
#define HELLO_INC	16
#define HELLO_NONCE	24
#define DESC_ADDR	8
#define DESC_RKEY	16
#define DESC_NSLOTS	20
#define DESC_NPHYS	24
#define DESC_ZERO32	28
#define DESC_SEED	32
#define DESC_INC	40
#define DESC_NONCE	48
#define DESC_MAC	64

#define CM_KIND_HELLO	1
#define CM_KIND_DESC	2

#define KRC_QPN_MAX	0xffffffU	/* QPNs and PSNs are 24-bit */
#define KRC_PSN_MAX	0xffffffU
#define KRC_STATUS_MAX	4095U		/* errno values are below 4096 */
#define KRC_MT_MAX_NSLOTS	0x4000000U	/* 2^26 */

void krc_msg_encode(const struct krc_ctrl_msg *m, u8 buf[KRC_MSG_SIZE])
{
	memset(buf, 0, KRC_MSG_SIZE);
	krc_put_le32(buf + MSG_MAGIC, KRC_MSG_MAGIC);
	buf[MSG_VERSION] = KRC_MSG_VERSION;
	buf[MSG_TYPE] = m->type;
	krc_put_le16(buf + MSG_STATUS, m->status);
	krc_put_le64(buf + MSG_REQ_ID, m->req_id);
	krc_card_encode(&m->card, buf + MSG_CARD);
	if (!krc_msg_is_mem(m->type))
		krc_put_le32(buf + MSG_SLOT, m->slot);
	if (krc_msg_is_meta(m->type)) {
		memcpy(buf + MSG_MAC, m->mac, KRC_MAC_LEN);
		return;
	}
	memcpy(buf + MSG_CTRL_MAC, m->ctrl_mac, KRC_CTRL_MAC_LEN);
	krc_put_le64(buf + MSG_DST_INC, m->dst_incarnation);
	if (krc_msg_is_flow(m->type)) {
		krc_put_le32(buf + MSG_FLOW_PORT, m->port);
		krc_put_le32(buf + MSG_FLOW_EPOCH, m->epoch);
		krc_put_le32(buf + MSG_FLOW_WANT, m->want);
		krc_put_le64(buf + MSG_FLOW_COUNT, m->count);
		return;
	}
	if (krc_msg_is_naming(m->type)) {
		krc_put_le32(buf + MSG_MEM_ACCESS, m->access);
		memcpy(buf + MSG_MEM_NAME, m->name, KRC_NAME_LEN);
		krc_put_le32(buf + MSG_MEM_NAME_REGION, m->region);
		return;
	}
	if (m->type == KRC_MSG_MEM_COPY) {
		krc_put_le64(buf + MSG_MEM_SRC_OFF, m->src_off);
		krc_put_le32(buf + MSG_MEM_SRC_REGION, m->src_region);
	} else if (krc_msg_is_mem(m->type)) {
		krc_put_le32(buf + MSG_MEM_ACCESS, m->access);
		krc_put_le32(buf + MSG_MEM_RKEY, m->rkey);
	}
	if (krc_msg_is_mem(m->type)) {
		krc_put_le64(buf + MSG_MEM_LENGTH, m->length);
		krc_put_le64(buf + MSG_MEM_ADDR, m->addr);
		krc_put_le32(buf + MSG_MEM_REGION, m->region);
		return;
	}
	krc_put_le32(buf + MSG_QPN, m->qpn);
	krc_put_le32(buf + MSG_PSN, m->psn);
	krc_put_le32(buf + MSG_PEER_QPN, m->peer_qpn);
	krc_put_le32(buf + MSG_PROBE_RKEY, m->probe_rkey);
	krc_put_le64(buf + MSG_PROBE_ADDR, m->probe_addr);
	krc_put_le32(buf + MSG_PROBE_LEN, m->probe_len);
}

bool krc_msg_is_meta(unsigned int type)
{
	return type >= KRC_MSG_META_REGISTER && type <= KRC_MSG_META_REPLY;
}

bool krc_msg_is_flow(unsigned int type)
{
	return type == KRC_MSG_FLOW_ASK || type == KRC_MSG_FLOW_GRANT;
}

bool krc_msg_is_mem(unsigned int type)
{
	return (type >= KRC_MSG_MEM_ALLOC && type <= KRC_MSG_MEM_FREE_REP) ||
	       (type >= KRC_MSG_MEM_SET && type <= KRC_MSG_MEM_LOOKUP_REP);
}

bool krc_msg_is_naming(unsigned int type)
{
	return type == KRC_MSG_MEM_PUBLISH || type == KRC_MSG_MEM_UNPUBLISH ||
	       type == KRC_MSG_MEM_LOOKUP;
}

static bool rights_ok(u32 access)
{
	return access && !(access & ~(u32)KRC_LMR_RIGHTS);
}

/* MEM_*: what proto.h says each carries; everything else is zero. */
static int mem_check(const struct krc_ctrl_msg *m)
{
	bool bare = !m->access && !m->rkey && !m->length && !m->addr;

	switch (m->type) {
	case KRC_MSG_MEM_ALLOC:
		if (!rights_ok(m->access) || !m->length ||
		    m->length > KRC_LMR_MAX_LEN || m->rkey || m->addr ||
		    m->region || m->status)
			return -EBADMSG;
		return 0;
	case KRC_MSG_MEM_ALLOC_REP:
	case KRC_MSG_MEM_LOOKUP_REP:	/* a region, or a status alone */
		if (m->status > KRC_STATUS_MAX)
			return -EBADMSG;
		if (m->status)
			return bare && !m->region ? 0 : -EBADMSG;
		if (!m->region || !rights_ok(m->access) || !m->length ||
		    m->length > KRC_LMR_MAX_LEN)
			return -EBADMSG;
		return 0;
	case KRC_MSG_MEM_FREE:
		return m->region && bare && !m->status ? 0 : -EBADMSG;
	case KRC_MSG_MEM_PUBLISH:
	case KRC_MSG_MEM_UNPUBLISH:
		if (!m->region || krc_name_valid(m->name) || m->status)
			return -EBADMSG;
		/* PUBLISH: rights; UNPUBLISH: none */
		if (m->type == KRC_MSG_MEM_PUBLISH ? !rights_ok(m->access) :
		    m->access != 0)
			return -EBADMSG;
		return 0;
	case KRC_MSG_MEM_LOOKUP:
		/* a name, nothing else: the region is what it asks for */
		if (m->region || m->access || krc_name_valid(m->name) ||
		    m->status)
			return -EBADMSG;
		return 0;
	case KRC_MSG_MEM_PUBLISH_REP:
		if (m->status > KRC_STATUS_MAX || !m->region)
			return -EBADMSG;
		if (m->status)
			return bare ? 0 : -EBADMSG;
		if (!rights_ok(m->access) || !m->length ||
		    m->length > KRC_LMR_MAX_LEN)
			return -EBADMSG;
		return 0;
	case KRC_MSG_MEM_SET:
		if (!m->region || m->access > 0xff || !m->length ||
		    m->length > KRC_LMR_MAX_LEN || m->addr > KRC_LMR_MAX_LEN ||
		    m->status)
			return -EBADMSG;
		return 0;
	case KRC_MSG_MEM_COPY:
		if (!m->region || !m->src_region || !m->length ||
		    m->length > KRC_LMR_MAX_LEN || m->addr > KRC_LMR_MAX_LEN ||
		    m->src_off > KRC_LMR_MAX_LEN || m->status)
			return -EBADMSG;
		return 0;
	case KRC_MSG_MEM_LOCK:
	case KRC_MSG_MEM_UNLOCK:
		if (!m->region || m->access || (m->addr & 7) ||
		    m->addr >= KRC_LMR_MAX_LEN || m->status)
			return -EBADMSG;
		/* an UNLOCK names its LOCK's req_id in length, a LOCK none */
		if (m->type == KRC_MSG_MEM_LOCK)
			return m->length ? -EBADMSG : 0;
		return m->length ? 0 : -EBADMSG;
	case KRC_MSG_MEM_LOCK_REP:
		if (!m->region || m->access || (m->addr & 7) ||
		    m->addr >= KRC_LMR_MAX_LEN || m->status > KRC_STATUS_MAX ||
		    !m->status == !m->length)
			return -EBADMSG;
		return 0;
	default:	/* FREE_REP, SET_REP, COPY_REP, UNLOCK_REP, UNPUBLISH_REP */
		return m->region && bare && m->status <= KRC_STATUS_MAX ?
		       0 : -EBADMSG;
	}
}

static bool qpn_ok(u32 qpn)
{
	/* QPN 0 and 1 are the special QPs; RC QPNs are 2 .. 2^24 - 1. */
	return qpn >= 2 && qpn <= KRC_QPN_MAX;
}

/* The per-type rules of proto.h on a decoded message. */
static int msg_check(const struct krc_ctrl_msg *m)
{
	switch (m->type) {
	case KRC_MSG_CONNECT_REQ:
		if (!qpn_ok(m->qpn) || m->psn > KRC_PSN_MAX)
			return -EBADMSG;
		break;
	case KRC_MSG_CONNECT_REP:
		if (!qpn_ok(m->qpn) || m->psn > KRC_PSN_MAX ||
		    !qpn_ok(m->peer_qpn))
			return -EBADMSG;
		break;
	case KRC_MSG_RTU:
	case KRC_MSG_RTU_ACK:
		if (!qpn_ok(m->peer_qpn))
			return -EBADMSG;
		break;
	case KRC_MSG_CLOSE_REQ:
		if (!qpn_ok(m->qpn) || !qpn_ok(m->peer_qpn))
			return -EBADMSG;
		break;
	case KRC_MSG_CLOSE_REP:
		/* 0: closed; else why not */
		if (!qpn_ok(m->qpn) || !qpn_ok(m->peer_qpn) ||
		    m->status > KRC_STATUS_MAX)
			return -EBADMSG;
		return 0;
	case KRC_MSG_CONNECT_NAK:
		/* a refusal says why */
		if (!m->status || m->status > KRC_STATUS_MAX)
			return -EBADMSG;
		return 0;
	case KRC_MSG_META_REPLY:
		if (m->status > KRC_STATUS_MAX)
			return -EBADMSG;
		return 0;
	case KRC_MSG_FLOW_ASK:
		if (!m->port || m->port > KRC_PORT_MAX)
			return -EBADMSG;
		break;
	case KRC_MSG_FLOW_GRANT:
		if (!m->port || m->port > KRC_PORT_MAX || m->want ||
		    m->status > KRC_STATUS_MAX)
			return -EBADMSG;
		return 0;
	case KRC_MSG_MEM_ALLOC:
	case KRC_MSG_MEM_ALLOC_REP:
	case KRC_MSG_MEM_FREE:
	case KRC_MSG_MEM_FREE_REP:
	case KRC_MSG_MEM_SET:
	case KRC_MSG_MEM_SET_REP:
	case KRC_MSG_MEM_COPY:
	case KRC_MSG_MEM_COPY_REP:
	case KRC_MSG_MEM_LOCK:
	case KRC_MSG_MEM_LOCK_REP:
	case KRC_MSG_MEM_UNLOCK:
	case KRC_MSG_MEM_UNLOCK_REP:
	case KRC_MSG_MEM_PUBLISH:
	case KRC_MSG_MEM_PUBLISH_REP:
	case KRC_MSG_MEM_UNPUBLISH:
	case KRC_MSG_MEM_UNPUBLISH_REP:
	case KRC_MSG_MEM_LOOKUP:
	case KRC_MSG_MEM_LOOKUP_REP:
		return mem_check(m);
	case KRC_MSG_GOODBYE:
	case KRC_MSG_META_REGISTER:
	case KRC_MSG_META_DEREGISTER:
		break;
	default:
		return -EBADMSG;
	}
	return m->status ? -EBADMSG : 0;
}

static bool msg_type_known(unsigned int type)
{
	return (type >= KRC_MSG_CONNECT_REQ && type <= KRC_MSG_MEM_FREE_REP) ||
	       (type >= KRC_MSG_META_REGISTER && type <= KRC_MSG_TYPE_MAX);
}

static int msg_decode(const u8 *buf, size_t len, struct krc_ctrl_msg *m)
{
	int err;

	if (len < KRC_MSG_SIZE)
		return -EBADMSG;
	if (krc_get_le32(buf + MSG_MAGIC) != KRC_MSG_MAGIC)
		return -EBADMSG;
	if (buf[MSG_VERSION] != KRC_MSG_VERSION)
		return -EPROTO;
	if (!msg_type_known(buf[MSG_TYPE]))
		return -EBADMSG;
	if (krc_msg_is_meta(buf[MSG_TYPE]) && krc_get_le64(buf + MSG_RESERVED))
		return -EBADMSG;
	err = krc_card_decode(buf + MSG_CARD, &m->card);
	if (err)
		return err;
	m->type = buf[MSG_TYPE];
	m->status = krc_get_le16(buf + MSG_STATUS);
	m->req_id = krc_get_le64(buf + MSG_REQ_ID);
	m->slot = krc_get_le32(buf + MSG_SLOT);
	if (krc_msg_is_meta(m->type)) {
		if (krc_get_le32(buf + MSG_PROBE_LEN))
			return -EBADMSG;
		memcpy(m->mac, buf + MSG_MAC, KRC_MAC_LEN);
		return msg_check(m);
	}
	memcpy(m->ctrl_mac, buf + MSG_CTRL_MAC, KRC_CTRL_MAC_LEN);
	m->dst_incarnation = krc_get_le64(buf + MSG_DST_INC);
	if (krc_msg_is_flow(m->type)) {
		if (krc_get_le32(buf + MSG_PROBE_RKEY) ||
		    krc_get_le32(buf + MSG_PROBE_LEN) || m->slot)
			return -EBADMSG;
		m->port = krc_get_le32(buf + MSG_FLOW_PORT);
		m->epoch = krc_get_le32(buf + MSG_FLOW_EPOCH);
		m->want = krc_get_le32(buf + MSG_FLOW_WANT);
		m->count = krc_get_le64(buf + MSG_FLOW_COUNT);
		return msg_check(m);
	}
	if (krc_msg_is_naming(m->type)) {
		m->access = krc_get_le32(buf + MSG_MEM_ACCESS);
		memcpy(m->name, buf + MSG_MEM_NAME, KRC_NAME_LEN);
		m->region = m->slot;	/* bytes 116..119 */
		m->slot = 0;
		return msg_check(m);
	}
	if (m->type == KRC_MSG_MEM_COPY) {
		m->src_off = krc_get_le64(buf + MSG_MEM_SRC_OFF);
		m->src_region = m->slot;	/* bytes 116..119 */
		m->slot = 0;
	} else if (krc_msg_is_mem(m->type)) {
		if (m->slot)	/* bytes 116..119 */
			return -EBADMSG;
		m->access = krc_get_le32(buf + MSG_MEM_ACCESS);
		m->rkey = krc_get_le32(buf + MSG_MEM_RKEY);
	}
	if (krc_msg_is_mem(m->type)) {
		m->length = krc_get_le64(buf + MSG_MEM_LENGTH);
		m->addr = krc_get_le64(buf + MSG_MEM_ADDR);
		m->region = krc_get_le32(buf + MSG_MEM_REGION);
		return msg_check(m);
	}
	m->qpn = krc_get_le32(buf + MSG_QPN);
	m->psn = krc_get_le32(buf + MSG_PSN);
	m->peer_qpn = krc_get_le32(buf + MSG_PEER_QPN);
	m->probe_rkey = krc_get_le32(buf + MSG_PROBE_RKEY);
	m->probe_addr = krc_get_le64(buf + MSG_PROBE_ADDR);
	m->probe_len = krc_get_le32(buf + MSG_PROBE_LEN);
	return msg_check(m);
}

/* On failure *m is all zero: nothing half-checked leaks to the caller. */
int krc_msg_decode(const u8 *buf, size_t len, struct krc_ctrl_msg *m)
{
	int err;

	memset(m, 0, sizeof(*m));
	err = msg_decode(buf, len, m);
	if (err)
		memset(m, 0, sizeof(*m));
	return err;
}

/* The MAC of @m's wire form with its MAC field zero. */
static void msg_mac(const struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN],
		    const struct krc_nonces *n, enum krc_mac_kind kind,
		    u8 out[KRC_MAC_LEN])
{
	struct krc_ctrl_msg tmp = *m;
	u8 buf[KRC_MSG_SIZE];

	memset(tmp.mac, 0, sizeof(tmp.mac));
	krc_msg_encode(&tmp, buf);
	krc_auth_mac(key, kind, n, buf, sizeof(buf), out);
}

void krc_msg_sign(struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN],
		  const struct krc_nonces *n, enum krc_mac_kind kind)
{
	msg_mac(m, key, n, kind, m->mac);
}

bool krc_msg_check_mac(const struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN],
		       const struct krc_nonces *n, enum krc_mac_kind kind)
{
	u8 mac[KRC_MAC_LEN];

	if (!krc_msg_is_meta(m->type))
		return false;
	msg_mac(m, key, n, kind, mac);
	return krc_auth_equal(mac, m->mac, KRC_MAC_LEN);
}

static void msg_ctrl_mac(const struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN],
			 u8 out[KRC_CTRL_MAC_LEN])
{
	static const struct krc_nonces none;
	struct krc_ctrl_msg tmp = *m;
	u8 buf[KRC_MSG_SIZE], mac[KRC_MAC_LEN];

	memset(tmp.ctrl_mac, 0, sizeof(tmp.ctrl_mac));
	krc_msg_encode(&tmp, buf);
	krc_auth_mac(key, KRC_MAC_CTRL, &none, buf, sizeof(buf), mac);
	memcpy(out, mac, KRC_CTRL_MAC_LEN);
}

void krc_msg_ctrl_sign(struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN])
{
	msg_ctrl_mac(m, key, m->ctrl_mac);
}

bool krc_msg_ctrl_check(const struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN])
{
	u8 mac[KRC_CTRL_MAC_LEN];

	if (krc_msg_is_meta(m->type))
		return false;
	msg_ctrl_mac(m, key, mac);
	return krc_auth_equal(mac, m->ctrl_mac, KRC_CTRL_MAC_LEN);
}

const char *krc_msg_type_name(unsigned int type)
{
	switch (type) {
	case KRC_MSG_CONNECT_REQ:
		return "connect_req";
	case KRC_MSG_CONNECT_REP:
		return "connect_rep";
	case KRC_MSG_CONNECT_NAK:
		return "connect_nak";
	case KRC_MSG_RTU:
		return "rtu";
	case KRC_MSG_RTU_ACK:
		return "rtu_ack";
	case KRC_MSG_GOODBYE:
		return "goodbye";
	case KRC_MSG_CLOSE_REQ:
		return "close_req";
	case KRC_MSG_CLOSE_REP:
		return "close_rep";
	case KRC_MSG_FLOW_ASK:
		return "flow_ask";
	case KRC_MSG_FLOW_GRANT:
		return "flow_grant";
	case KRC_MSG_MEM_ALLOC:
		return "mem_alloc";
	case KRC_MSG_MEM_ALLOC_REP:
		return "mem_alloc_rep";
	case KRC_MSG_MEM_FREE:
		return "mem_free";
	case KRC_MSG_MEM_FREE_REP:
		return "mem_free_rep";
	case KRC_MSG_MEM_SET:
		return "mem_set";
	case KRC_MSG_MEM_SET_REP:
		return "mem_set_rep";
	case KRC_MSG_MEM_COPY:
		return "mem_copy";
	case KRC_MSG_MEM_COPY_REP:
		return "mem_copy_rep";
	case KRC_MSG_MEM_LOCK:
		return "mem_lock";
	case KRC_MSG_MEM_LOCK_REP:
		return "mem_lock_rep";
	case KRC_MSG_MEM_UNLOCK:
		return "mem_unlock";
	case KRC_MSG_MEM_UNLOCK_REP:
		return "mem_unlock_rep";
	case KRC_MSG_MEM_PUBLISH:
		return "mem_publish";
	case KRC_MSG_MEM_PUBLISH_REP:
		return "mem_publish_rep";
	case KRC_MSG_MEM_UNPUBLISH:
		return "mem_unpublish";
	case KRC_MSG_MEM_UNPUBLISH_REP:
		return "mem_unpublish_rep";
	case KRC_MSG_MEM_LOOKUP:
		return "mem_lookup";
	case KRC_MSG_MEM_LOOKUP_REP:
		return "mem_lookup_rep";
	case KRC_MSG_META_REGISTER:
		return "meta_register";
	case KRC_MSG_META_DEREGISTER:
		return "meta_deregister";
	case KRC_MSG_META_REPLY:
		return "meta_reply";
	default:
		return "?";
	}
}

static void cm_put_head(u8 *buf, u8 kind)
{
	krc_put_le32(buf + CM_MAGIC, KRC_CM_MAGIC);
	buf[CM_VERSION] = KRC_CM_VERSION;
	buf[CM_KIND] = kind;
}

/* Magic, version, kind and the u16 zero of a private data blob. */
static int cm_check_head(const u8 *buf, u8 kind)
{
	if (krc_get_le32(buf + CM_MAGIC) != KRC_CM_MAGIC)
		return -EBADMSG;
	if (buf[CM_VERSION] != KRC_CM_VERSION)
		return -EPROTO;
	if (buf[CM_KIND] != kind || krc_get_le16(buf + CM_ZERO16))
		return -EBADMSG;
	return 0;
}

void krc_meta_hello_encode(const struct krc_meta_hello *h,
			   u8 buf[KRC_CM_HELLO_SIZE])
{
	memset(buf, 0, KRC_CM_HELLO_SIZE);
	cm_put_head(buf, CM_KIND_HELLO);
	krc_put_le32(buf + HELLO_NODE_ID, h->node_id);
	krc_put_le64(buf + HELLO_INC, h->incarnation);
	memcpy(buf + HELLO_NONCE, h->nonce, KRC_NONCE_LEN);
}

static int hello_decode(const u8 *buf, size_t len, struct krc_meta_hello *h)
{
	int err;

	if (len < KRC_CM_HELLO_SIZE)
		return -EBADMSG;
	err = cm_check_head(buf, CM_KIND_HELLO);
	if (err)
		return err;
	if (krc_get_le32(buf + HELLO_ZERO32))
		return -EBADMSG;
	h->node_id = krc_get_le32(buf + HELLO_NODE_ID);
	h->incarnation = krc_get_le64(buf + HELLO_INC);
	memcpy(h->nonce, buf + HELLO_NONCE, KRC_NONCE_LEN);
	if (!h->node_id || !h->incarnation)
		return -EINVAL;
	return 0;
}

int krc_meta_hello_decode(const u8 *buf, size_t len, struct krc_meta_hello *h)
{
	int err;

	memset(h, 0, sizeof(*h));
	err = hello_decode(buf, len, h);
	if (err)
		memset(h, 0, sizeof(*h));
	return err;
}

void krc_mt_desc_encode(const struct krc_mt_desc *d, u8 buf[KRC_MT_DESC_SIZE])
{
	memset(buf, 0, KRC_MT_DESC_SIZE);
	cm_put_head(buf, CM_KIND_DESC);
	krc_put_le64(buf + DESC_ADDR, d->addr);
	krc_put_le32(buf + DESC_RKEY, d->rkey);
	krc_put_le32(buf + DESC_NSLOTS, d->nslots);
	krc_put_le32(buf + DESC_NPHYS, d->nphys);
	krc_put_le64(buf + DESC_SEED, d->seed);
	krc_put_le64(buf + DESC_INC, d->incarnation);
	memcpy(buf + DESC_NONCE, d->nonce, KRC_NONCE_LEN);
	memcpy(buf + DESC_MAC, d->mac, KRC_MAC_LEN);
}

/* The descriptor's MAC: over bytes 0..DESC_MAC, the host nonce included. */
static void desc_mac(const u8 *buf, const u8 key[KRC_KEY_LEN],
		     const u8 member_nonce[KRC_NONCE_LEN], u8 out[KRC_MAC_LEN])
{
	struct krc_nonces n;

	memcpy(n.member, member_nonce, KRC_NONCE_LEN);
	memcpy(n.host, buf + DESC_NONCE, KRC_NONCE_LEN);
	krc_auth_mac(key, KRC_MAC_DESC, &n, buf, DESC_MAC, out);
}

void krc_mt_desc_sign(u8 buf[KRC_MT_DESC_SIZE], const u8 key[KRC_KEY_LEN],
		      const u8 member_nonce[KRC_NONCE_LEN])
{
	desc_mac(buf, key, member_nonce, buf + DESC_MAC);
}

bool krc_mt_desc_check_mac(const u8 buf[KRC_MT_DESC_SIZE],
			   const u8 key[KRC_KEY_LEN],
			   const u8 member_nonce[KRC_NONCE_LEN])
{
	u8 mac[KRC_MAC_LEN];

	desc_mac(buf, key, member_nonce, mac);
	return krc_auth_equal(mac, buf + DESC_MAC, KRC_MAC_LEN);
}

static int desc_decode(const u8 *buf, size_t len, struct krc_mt_desc *d)
{
	int err;

	if (len < KRC_MT_DESC_SIZE)
		return -EBADMSG;
	err = cm_check_head(buf, CM_KIND_DESC);
	if (err)
		return err;
	if (krc_get_le32(buf + DESC_ZERO32))
		return -EBADMSG;
	d->addr = krc_get_le64(buf + DESC_ADDR);
	d->rkey = krc_get_le32(buf + DESC_RKEY);
	d->nslots = krc_get_le32(buf + DESC_NSLOTS);
	d->nphys = krc_get_le32(buf + DESC_NPHYS);
	d->seed = krc_get_le64(buf + DESC_SEED);
	d->incarnation = krc_get_le64(buf + DESC_INC);
	memcpy(d->nonce, buf + DESC_NONCE, KRC_NONCE_LEN);
	memcpy(d->mac, buf + DESC_MAC, KRC_MAC_LEN);
	/* nslots: a power of two in [64, 2^26], so nphys cannot overflow */
	if (d->nslots < 64 || d->nslots > KRC_MT_MAX_NSLOTS ||
	    (d->nslots & (d->nslots - 1)))
		return -EINVAL;
	if (d->nphys != d->nslots + KRC_MT_SPILL)
		return -EINVAL;
	if (!d->rkey || !d->incarnation)
		return -EINVAL;
	return 0;
}

int krc_mt_desc_decode(const u8 *buf, size_t len, struct krc_mt_desc *d)
{
	int err;

	memset(d, 0, sizeof(*d));
	err = desc_decode(buf, len, d);
	if (err)
		memset(d, 0, sizeof(*d));
	return err;
}

void krc_data_hdr_encode(const struct krc_data_hdr *h, u8 buf[KRC_DATA_HDR_SIZE])
{
	krc_put_le16(buf, KRC_DATA_MAGIC);
	buf[2] = KRC_DATA_VERSION;
	buf[3] = h->flags;
	krc_put_le16(buf + 4, h->dst_port);
	krc_put_le16(buf + 6, h->src_port);
	krc_put_le32(buf + 8, h->imm_data);
	krc_put_le32(buf + 12, 0);
}

int krc_data_hdr_decode(const u8 *buf, size_t len, struct krc_data_hdr *h)
{
	memset(h, 0, sizeof(*h));
	if (len < KRC_DATA_HDR_SIZE || krc_get_le16(buf) != KRC_DATA_MAGIC)
		return -EBADMSG;
	if (buf[2] != KRC_DATA_VERSION)
		return -EPROTO;
	if (buf[3] & ~KRCORE_MSG_F_IMM || krc_get_le32(buf + 12))
		return -EBADMSG;
	h->flags = buf[3];
	h->dst_port = krc_get_le16(buf + 4);
	h->src_port = krc_get_le16(buf + 6);
	h->imm_data = krc_get_le32(buf + 8);
	return 0;
}
