// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_msg.c - libFuzzer target for the decoders of common/proto.c (the
 * control message, the CM hello and table descriptor, the two-sided data
 * header) and common/card.c: every decoder sees the input; what one
 * accepts must re-encode to the same bytes (but the card's reserved
 * bytes, which its decoder ignores) and decode again to the same values.
 * And the MACs of common/auth.h under a fixed key and nonces (those the
 * signed seeds of corpus/fuzz_msg were made with): a META_* message is
 * vouched for by exactly the MAC krc_msg_sign gives it, any other by
 * exactly the control MAC krc_msg_ctrl_sign gives it (bytes 120..127,
 * zero in a META_* message), any 96 bytes are a good descriptor MAC
 * exactly when bytes 64..95 are the HMAC of kind KRC_MAC_DESC over bytes
 * 0..63.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "card.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The key is 0x40, 0x41, ... 0x5f; the nonces are these 16 bytes. */
static const u8 member_nonce[KRC_NONCE_LEN] = "member-nonce-016";
static const u8 host_nonce[KRC_NONCE_LEN] = "host--nonce--016";

static void fuzz_key(u8 key[KRC_KEY_LEN])
{
	int i;

	for (i = 0; i < KRC_KEY_LEN; i++)
		key[i] = (u8)(0x40 + i);
}

static struct krc_nonces fuzz_nonces(void)
{
	struct krc_nonces n;

	memcpy(n.member, member_nonce, KRC_NONCE_LEN);
	memcpy(n.host, host_nonce, KRC_NONCE_LEN);
	return n;
}

static void check(bool ok)
{
	if (!ok)
		abort();
}

static bool is_decode_err(int rc)
{
	return rc == -EBADMSG || rc == -EPROTO || rc == -EINVAL;
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
	       !memcmp(a->mac, b->mac, sizeof(a->mac)) &&
	       !memcmp(a->ctrl_mac, b->ctrl_mac, sizeof(a->ctrl_mac));
}

/* Card bytes krc_card_decode() ignores: reserved0 and reserved1. */
static bool card_byte_ignored(size_t i)
{
	return (i >= 38 && i < 40) || (i >= 52 && i < 56);
}

static void same_card_bytes(const u8 *a, const u8 *b)
{
	size_t i;

	for (i = 0; i < KRCORE_CARD_SIZE; i++)
		check(card_byte_ignored(i) || a[i] == b[i]);
}

/*
 * @m decoded from @data: the MAC of each kind vouches for it exactly when
 * the input carries the MAC krc_msg_sign computes for it, which is the
 * HMAC over its wire form (@out, re-encoded) with bytes 80..111 zero. No
 * other type carries a MAC.
 */
static void fuzz_msg_mac(const struct krc_ctrl_msg *m, const uint8_t *data,
			 const u8 out[KRC_MSG_SIZE])
{
	struct krc_nonces n = fuzz_nonces();
	u8 key[KRC_KEY_LEN], body[KRC_MSG_SIZE], mac[KRC_MAC_LEN];
	struct krc_ctrl_msg s;
	int kind;

	fuzz_key(key);
	for (kind = KRC_MAC_DESC; kind <= KRC_MAC_HOST; kind++) {
		bool ok = krc_msg_check_mac(m, key, &n, kind);

		if (!krc_msg_is_meta(m->type)) {
			check(!ok);
			continue;
		}
		s = *m;
		krc_msg_sign(&s, key, &n, kind);
		check(ok == !memcmp(s.mac, data + 80, KRC_MAC_LEN));
		memcpy(body, out, sizeof(body));
		memset(body + 80, 0, KRC_MAC_LEN);
		krc_auth_mac(key, kind, &n, body, sizeof(body), mac);
		check(!memcmp(mac, s.mac, KRC_MAC_LEN));
		/* signing touches nothing but the MAC */
		memcpy(s.mac, m->mac, KRC_MAC_LEN);
		check(msg_equal(&s, m));
	}
}

/*
 * @m decoded from @data: the control MAC vouches for a message of any
 * type but META_* exactly when bytes 120..127 of the input are the MAC
 * krc_msg_ctrl_sign computes for it, which is the first 8 bytes of the
 * HMAC of kind KRC_MAC_CTRL, zero nonces, over its wire form (@out,
 * re-encoded) with bytes 120..127 zero. A META_* message has none: its
 * bytes 120..127 are zero and nothing checks.
 */
static void fuzz_msg_ctrl_mac(const struct krc_ctrl_msg *m, const uint8_t *data,
			      const u8 out[KRC_MSG_SIZE])
{
	static const struct krc_nonces zero_nonces;
	u8 key[KRC_KEY_LEN], body[KRC_MSG_SIZE], mac[KRC_MAC_LEN];
	u8 signed_form[KRC_MSG_SIZE];
	struct krc_ctrl_msg s;
	bool ok;

	fuzz_key(key);
	ok = krc_msg_ctrl_check(m, key);
	s = *m;
	krc_msg_ctrl_sign(&s, key);
	krc_msg_encode(&s, signed_form);
	if (krc_msg_is_meta(m->type)) {
		check(!ok && !krc_get_le64(data + 120));
		check(!krc_msg_ctrl_check(&s, key));
		/* its wire form has no control MAC to sign */
		check(!memcmp(signed_form, out, sizeof(signed_form)));
		return;
	}
	check(!memcmp(m->ctrl_mac, data + 120, KRC_CTRL_MAC_LEN));
	check(ok == !memcmp(s.ctrl_mac, data + 120, KRC_CTRL_MAC_LEN));
	memcpy(body, out, sizeof(body));
	memset(body + 120, 0, KRC_CTRL_MAC_LEN);
	krc_auth_mac(key, KRC_MAC_CTRL, &zero_nonces, body, sizeof(body), mac);
	check(!memcmp(mac, s.ctrl_mac, KRC_CTRL_MAC_LEN));
	check(krc_msg_ctrl_check(&s, key));
	/* signing touches nothing but the MAC, on the wire too */
	check(!memcmp(signed_form, out, 120));
	check(!memcmp(signed_form + 120, mac, KRC_CTRL_MAC_LEN));
	memcpy(s.ctrl_mac, m->ctrl_mac, KRC_CTRL_MAC_LEN);
	check(msg_equal(&s, m));
}

/*
 * A control MAC is not the decoder's business: for any type byte but
 * META_*'s, what bytes 120..127 hold does not change the verdict on the
 * rest (the MAC is checked after decoding, by krc_msg_ctrl_check).
 */
static void fuzz_msg_ctrl_bytes(const uint8_t *data, size_t size, int rc)
{
	u8 buf[KRC_MSG_SIZE];
	struct krc_ctrl_msg m;

	if (size < KRC_MSG_SIZE || krc_msg_is_meta(data[5]))
		return;
	memcpy(buf, data, sizeof(buf));
	memset(buf + 120, 0, KRC_CTRL_MAC_LEN);
	check(krc_msg_decode(buf, sizeof(buf), &m) == rc);
	memset(buf + 120, 0xff, KRC_CTRL_MAC_LEN);
	check(krc_msg_decode(buf, sizeof(buf), &m) == rc);
}

static void fuzz_msg(const uint8_t *data, size_t size)
{
	struct krc_ctrl_msg m, m2, zero;
	u8 out[KRC_MSG_SIZE];
	int rc;

	memset(&zero, 0, sizeof(zero));
	rc = krc_msg_decode(data, size, &m);
	fuzz_msg_ctrl_bytes(data, size, rc);
	if (rc) {
		check(is_decode_err(rc) && msg_equal(&m, &zero));
		return;
	}
	check(size >= KRC_MSG_SIZE);
	check(strcmp(krc_msg_type_name(m.type), "?"));
	krc_msg_encode(&m, out);
	check(!memcmp(out, data, 16));
	same_card_bytes(out + 16, data + 16);
	check(!memcmp(out + 80, data + 80, KRC_MSG_SIZE - 80));
	check(krc_msg_decode(out, sizeof(out), &m2) == 0);
	check(msg_equal(&m, &m2));
	if (krc_msg_is_meta(m.type)) {
		/*
		 * bytes 80..111 are the MAC, 112..115 and 120..127 zero;
		 * nothing else
		 */
		check(!memcmp(m.mac, data + 80, KRC_MAC_LEN));
		check(!krc_get_le32(data + 112));
		check(!krc_get_le64(data + 120));
		check(!m.dst_incarnation && !m.qpn && !m.psn && !m.peer_qpn &&
		      !m.probe_rkey && !m.probe_addr && !m.probe_len);
		check(!memcmp(m.ctrl_mac, zero.ctrl_mac, KRC_CTRL_MAC_LEN));
	} else {
		/* bytes 120..127 are the control MAC, whatever they hold */
		check(!memcmp(m.mac, zero.mac, KRC_MAC_LEN));
		check(!memcmp(m.ctrl_mac, data + 120, KRC_CTRL_MAC_LEN));
	}
	fuzz_msg_mac(&m, data, out);
	fuzz_msg_ctrl_mac(&m, data, out);
}

static void fuzz_hello(const uint8_t *data, size_t size)
{
	struct krc_meta_hello h, h2;
	u8 out[KRC_CM_HELLO_SIZE];
	int rc;

	rc = krc_meta_hello_decode(data, size, &h);
	if (rc) {
		check(is_decode_err(rc) && !h.node_id && !h.incarnation);
		return;
	}
	check(size >= KRC_CM_HELLO_SIZE && h.node_id && h.incarnation);
	krc_meta_hello_encode(&h, out);
	check(!memcmp(out, data, sizeof(out)));
	check(krc_meta_hello_decode(out, sizeof(out), &h2) == 0);
	check(h.node_id == h2.node_id && h.incarnation == h2.incarnation);
	check(!memcmp(h.nonce, data + 24, KRC_NONCE_LEN));
	check(!memcmp(h.nonce, h2.nonce, KRC_NONCE_LEN));
}

static bool desc_equal(const struct krc_mt_desc *a, const struct krc_mt_desc *b)
{
	return a->addr == b->addr && a->rkey == b->rkey &&
	       a->nslots == b->nslots && a->nphys == b->nphys &&
	       a->seed == b->seed && a->incarnation == b->incarnation &&
	       !memcmp(a->nonce, b->nonce, KRC_NONCE_LEN) &&
	       !memcmp(a->mac, b->mac, KRC_MAC_LEN);
}

/*
 * Any 96 bytes: krc_mt_desc_check_mac is true exactly when bytes 64..95
 * are HMAC(KRC_MAC_DESC, our nonce, the host nonce at 48..63, bytes
 * 0..63), whether the descriptor decodes or not; krc_mt_desc_sign writes
 * that MAC and nothing else.
 */
static void fuzz_desc_mac(const uint8_t *data, size_t size)
{
	struct krc_nonces n;
	u8 key[KRC_KEY_LEN], mac[KRC_MAC_LEN], buf[KRC_MT_DESC_SIZE];
	bool ok;

	if (size < KRC_MT_DESC_SIZE)
		return;
	fuzz_key(key);
	memcpy(n.member, member_nonce, KRC_NONCE_LEN);
	memcpy(n.host, data + 48, KRC_NONCE_LEN);
	krc_auth_mac(key, KRC_MAC_DESC, &n, data, 64, mac);
	ok = krc_mt_desc_check_mac(data, key, member_nonce);
	check(ok == !memcmp(mac, data + 64, KRC_MAC_LEN));
	memcpy(buf, data, sizeof(buf));
	krc_mt_desc_sign(buf, key, member_nonce);
	check(!memcmp(buf, data, 64) && !memcmp(buf + 64, mac, KRC_MAC_LEN));
	check(krc_mt_desc_check_mac(buf, key, member_nonce));
	/* another member's nonce (the host's) does not do */
	check(!krc_mt_desc_check_mac(buf, key, host_nonce));
}

static void fuzz_desc(const uint8_t *data, size_t size)
{
	struct krc_mt_desc d, d2, zero;
	u8 out[KRC_MT_DESC_SIZE];
	int rc;

	memset(&zero, 0, sizeof(zero));
	rc = krc_mt_desc_decode(data, size, &d);
	if (rc) {
		check(is_decode_err(rc) && desc_equal(&d, &zero));
		return;
	}
	check(size >= KRC_MT_DESC_SIZE);
	/* the geometry a reader relies on */
	check(d.nslots >= 64 && !(d.nslots & (d.nslots - 1)));
	check(d.nphys > d.nslots && d.rkey && d.incarnation);
	krc_mt_desc_encode(&d, out);
	check(!memcmp(out, data, sizeof(out)));
	check(krc_mt_desc_decode(out, sizeof(out), &d2) == 0);
	check(desc_equal(&d, &d2));
}

/* The two-sided data header: proto.h's rules, in the decoders' order. */
static int data_hdr_rule(const uint8_t *data, size_t size)
{
	if (size < KRC_DATA_HDR_SIZE || krc_get_le16(data) != KRC_DATA_MAGIC)
		return -EBADMSG;
	if (data[2] != KRC_DATA_VERSION)
		return -EPROTO;
	if ((data[3] & ~KRCORE_MSG_F_IMM) || krc_get_le32(data + 12))
		return -EBADMSG;
	return 0;
}

static void fuzz_data_hdr(const uint8_t *data, size_t size)
{
	struct krc_data_hdr h, h2;
	u8 out[KRC_DATA_HDR_SIZE];
	int rc;

	memset(&h, 0x5a, sizeof(h));
	rc = krc_data_hdr_decode(data, size, &h);
	check(rc == data_hdr_rule(data, size));
	if (rc) {
		check(!h.flags && !h.dst_port && !h.src_port && !h.imm_data);
		return;
	}
	check(!(h.flags & ~KRCORE_MSG_F_IMM));
	krc_data_hdr_encode(&h, out);
	check(!memcmp(out, data, sizeof(out)));
	check(krc_data_hdr_decode(out, sizeof(out), &h2) == 0);
	check(h.flags == h2.flags && h.dst_port == h2.dst_port &&
	      h.src_port == h2.src_port && h.imm_data == h2.imm_data);
}

static void fuzz_card(const uint8_t *data, size_t size)
{
	struct krcore_card c, c2;
	u8 out[KRCORE_CARD_SIZE];
	int rc;

	if (size < KRCORE_CARD_SIZE)
		return;
	rc = krc_card_decode(data, &c);
	if (rc) {
		check(rc == -EPROTO || rc == -EINVAL);
		return;
	}
	check(krc_card_check(&c) == 0);
	krc_card_encode(&c, out);
	same_card_bytes(out, data);
	check(krc_card_decode(out, &c2) == 0);
	check(!memcmp(&c, &c2, sizeof(c)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_msg(data, size);
	fuzz_hello(data, size);
	fuzz_desc(data, size);
	fuzz_desc_mac(data, size);
	fuzz_data_hdr(data, size);
	fuzz_card(data, size);
	return 0;
}
