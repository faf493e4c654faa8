// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_auth.c - what the cluster key signs (common/auth.c, the MACs of
 * common/proto.c) and the SHA-256 under it (common/sha256.c), no VM
 * needed. The expected bytes are the published vectors (FIPS 180-4,
 * RFC 4231) and, for krcore's own constructions, HMAC-SHA256 computed
 * independently (Python's hmac) over the wire forms proto.h documents.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "card.h"
#include "meta_table.h"
#include "proto.h"
#include "sha256.h"

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	fail_msg("not a hex digit: %c", c);
	return -1;
}

/* @n bytes from 2 * @n hex digits. */
static void unhex(const char *hex, u8 *out, size_t n)
{
	size_t i;

	assert_int_equal(strlen(hex), 2 * n);
	for (i = 0; i < n; i++)
		out[i] = (u8)(hexdigit(hex[2 * i]) << 4 | hexdigit(hex[2 * i + 1]));
}

static void assert_bytes(const u8 *got, const char *hex, size_t n)
{
	u8 want[256];

	assert_true(n <= sizeof(want));
	unhex(hex, want, n);
	assert_memory_equal(got, want, n);
}

static void sha256_once(const void *data, size_t len,
			u8 out[SHA256_DIGEST_SIZE])
{
	struct sha256_state s;

	sha256_init(&s);
	sha256_update(&s, data, (unsigned int)len);
	sha256_final(&s, out);
}

/* SHA-256: FIPS 180-4's examples. */

static void test_sha256_vectors(void **state)
{
	static const char msg448[] =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	u8 d[SHA256_DIGEST_SIZE];

	sha256_once("", 0, d);
	assert_bytes(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		     sizeof(d));
	sha256_once("abc", 3, d);
	assert_bytes(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		     sizeof(d));
	assert_int_equal(strlen(msg448), 56);
	sha256_once(msg448, strlen(msg448), d);
	assert_bytes(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
		     sizeof(d));
}

/*
 * Lengths around the padding's edges (55: the length fits the block, 56:
 * it does not; 64, 119, 120), of the bytes i * 7 + 3.
 */
static void test_sha256_padding_edges(void **state)
{
	static const struct {
		size_t len;
		const char *digest;
	} v[] = {
		{ 55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b" },
		{ 63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055" },
		{ 64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241" },
		{ 119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e" },
		{ 120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5" },
	};
	u8 msg[128], d[SHA256_DIGEST_SIZE];
	size_t i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (u8)(i * 7 + 3);
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		sha256_once(msg, v[i].len, d);
		assert_bytes(d, v[i].digest, sizeof(d));
	}
}

/* One million 'a', fed in chunks of 1, 63, 64, 65 and 1000 bytes. */
static void test_sha256_million(void **state)
{
	static const unsigned int chunks[] = { 1, 63, 64, 65, 1000 };
	u8 a[1000], d[SHA256_DIGEST_SIZE], d1[SHA256_DIGEST_SIZE];
	struct sha256_state s;
	size_t done = 0, i = 0;
	u8 *big;

	memset(a, 'a', sizeof(a));
	sha256_init(&s);
	while (done < 1000000) {
		unsigned int n = chunks[i++ % ARRAY_SIZE(chunks)];

		if (n > 1000000 - done)
			n = (unsigned int)(1000000 - done);
		sha256_update(&s, a, n);
		done += n;
	}
	sha256_final(&s, d);
	assert_bytes(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
		     sizeof(d));
	/* and in one call */
	big = malloc(1000000);
	assert_non_null(big);
	memset(big, 'a', 1000000);
	sha256_once(big, 1000000, d1);
	free(big);
	assert_memory_equal(d1, d, sizeof(d));
}

/* One call, byte by byte and two parts agree, for every length 0..200. */
static void test_sha256_incremental(void **state)
{
	u8 msg[200], d1[SHA256_DIGEST_SIZE], d2[SHA256_DIGEST_SIZE];
	struct sha256_state s;
	size_t len, i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (u8)(i * 131 + 17);
	for (len = 0; len <= sizeof(msg); len++) {
		sha256_once(msg, len, d1);
		sha256_init(&s);
		for (i = 0; i < len; i++)
			sha256_update(&s, msg + i, 1);
		sha256_final(&s, d2);
		assert_memory_equal(d1, d2, sizeof(d1));
		/* two parts, split in the middle; an empty update on the way */
		sha256_init(&s);
		sha256_update(&s, msg, (unsigned int)(len / 2));
		sha256_update(&s, msg, 0);
		sha256_update(&s, msg + len / 2, (unsigned int)(len - len / 2));
		sha256_final(&s, d2);
		assert_memory_equal(d1, d2, sizeof(d1));
	}
}

/* HMAC-SHA256: RFC 4231's test cases 1, 2, 3, 4, 6 and 7. */

static void test_hmac_rfc4231(void **state)
{
	static const char tc6[] =
		"Test Using Larger Than Block-Size Key - Hash Key First";
	static const char tc7[] =
		"This is a test using a larger than block-size key and a larger "
		"than block-size data. The key needs to be hashed before being "
		"used by the HMAC algorithm.";
	u8 key[131], data[50], mac[KRC_MAC_LEN];
	size_t i;

	/* 1: a 20-byte key of 0x0b */
	memset(key, 0x0b, 20);
	krc_hmac_sha256(key, 20, (const u8 *)"Hi There", 8, mac);
	assert_bytes(mac, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
		     sizeof(mac));
	/* 2: a key shorter than the output */
	krc_hmac_sha256((const u8 *)"Jefe", 4,
			(const u8 *)"what do ya want for nothing?", 28, mac);
	assert_bytes(mac, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
		     sizeof(mac));
	/* 3: 20 bytes of 0xaa, 50 of 0xdd */
	memset(key, 0xaa, 20);
	memset(data, 0xdd, 50);
	krc_hmac_sha256(key, 20, data, 50, mac);
	assert_bytes(mac, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
		     sizeof(mac));
	/* 4: the key 0x01 .. 0x19, 50 bytes of 0xcd */
	for (i = 0; i < 25; i++)
		key[i] = (u8)(i + 1);
	memset(data, 0xcd, 50);
	krc_hmac_sha256(key, 25, data, 50, mac);
	assert_bytes(mac, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
		     sizeof(mac));
	/* 6 and 7: a 131-byte key, longer than the block: hashed first */
	memset(key, 0xaa, sizeof(key));
	krc_hmac_sha256(key, sizeof(key), (const u8 *)tc6, strlen(tc6), mac);
	assert_bytes(mac, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
		     sizeof(mac));
	assert_int_equal(strlen(tc7), 152);
	krc_hmac_sha256(key, sizeof(key), (const u8 *)tc7, strlen(tc7), mac);
	assert_bytes(mac, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
		     sizeof(mac));
}

/* The key and the nonces of the connection every test below signs for. */
static void test_key(u8 key[KRC_KEY_LEN])
{
	int i;

	for (i = 0; i < KRC_KEY_LEN; i++)
		key[i] = (u8)(0x40 + i);
}

static struct krc_nonces test_nonces(void)
{
	struct krc_nonces n;

	memcpy(n.member, "member-nonce-016", KRC_NONCE_LEN);
	memcpy(n.host, "host--nonce--016", KRC_NONCE_LEN);
	return n;
}

/*
 * krc_auth_mac is HMAC(key, "krcore-auth-v1" || kind || member nonce ||
 * host nonce || body) (auth.h).
 */
static void test_auth_mac_vectors(void **state)
{
	static const char body[] = "The quick brown fox jumps over the lazy dog";
	static const char * const want[] = {
		[KRC_MAC_DESC] =
		"b57508b4768881b11136f7ca87a735db827dd0a755013f7611f5419f364af605",
		[KRC_MAC_MEMBER] =
		"7554d822eb3e4f036c0ce967cc8c707cebe9824a06c19c78bfee95ef9e42d0b8",
		[KRC_MAC_HOST] =
		"44572185623f08b0b98e9360bda664884bc189ac98cff1d2ef949bd79c3a3d95",
		[KRC_MAC_CTRL] =
		"90052d540a3012a99d3456652c75f5275973e8f24c62dcebcc6f086b0e28b90a",
	};
	static const struct krc_nonces zero;
	struct krc_nonces n = test_nonces();
	u8 key[KRC_KEY_LEN], mac[KRC_MAC_LEN];
	int kind;

	test_key(key);
	for (kind = KRC_MAC_DESC; kind <= KRC_MAC_CTRL; kind++) {
		krc_auth_mac(key, kind, &n, (const u8 *)body, strlen(body),
			     mac);
		assert_bytes(mac, want[kind], sizeof(mac));
	}
	/* the control MAC's nonces are all zero */
	krc_auth_mac(key, KRC_MAC_CTRL, &zero, (const u8 *)body, strlen(body),
		     mac);
	assert_bytes(mac, "32fb0fd17fdc06db3f9803624df83bede830ef68532b7962b7b668c3003ae491",
		     sizeof(mac));
}

/* krc_auth_equal */

static void test_auth_equal(void **state)
{
	u8 a[KRC_MAC_LEN], b[KRC_MAC_LEN];
	size_t i;

	for (i = 0; i < sizeof(a); i++)
		a[i] = (u8)(i * 37 + 1);
	memcpy(b, a, sizeof(b));
	assert_true(krc_auth_equal(a, b, sizeof(a)));
	assert_true(krc_auth_equal(a, a, sizeof(a)));
	assert_true(krc_auth_equal(a, b, 0));
	for (i = 0; i < sizeof(a); i++) {
		b[i] ^= 0x01;
		assert_false(krc_auth_equal(a, b, sizeof(a)));
		assert_false(krc_auth_equal(b, a, sizeof(a)));
		/* only the first @len bytes count */
		assert_true(krc_auth_equal(a, b, i));
		b[i] ^= 0x01 ^ 0x80;
		assert_false(krc_auth_equal(a, b, sizeof(a)));
		b[i] ^= 0x80;
	}
	assert_true(krc_auth_equal(a, b, sizeof(a)));
	memset(b, 0, sizeof(b));
	assert_false(krc_auth_equal(a, b, sizeof(a)));
}

/* krc_key_parse */

#define KEY_HEX	"00112233445566778899aabbccddeeff0123456789abcdeffedcba9876543210"
#define KEY_HEX_UPPER \
	"00112233445566778899AABBCCDDEEFF0123456789ABCDEFFEDCBA9876543210"

/* Parse @len bytes of @text into a key buffer full of 0xa5 first. */
static int parse(const char *text, size_t len, u8 key[KRC_KEY_LEN])
{
	memset(key, 0xa5, KRC_KEY_LEN);
	return krc_key_parse(text, len, key);
}

static int parse_str(const char *text, u8 key[KRC_KEY_LEN])
{
	return parse(text, strlen(text), key);
}

static bool key_is_zero(const u8 key[KRC_KEY_LEN])
{
	int i;

	for (i = 0; i < KRC_KEY_LEN; i++)
		if (key[i])
			return false;
	return true;
}

/* -EINVAL, and not one byte of the text is left in the key. */
static void assert_key_refused(const char *text, size_t len)
{
	u8 key[KRC_KEY_LEN];

	assert_int_equal(parse(text, len, key), -EINVAL);
	assert_true(key_is_zero(key));
}

static void test_key_parse_good(void **state)
{
	static const char every_digit[] =
		"0123456789abcdefABCDEF000000000000000000000000000000000000000000";
	static const char one_bit[] =
		"0000000000000000000000000000000000000000000000000000000000000001\n";
	static const char * const tails[] = {
		"", "\n", "\r\n", " ", "\t", " \t \r\n\n", "\n\n\n",
	};
	u8 key[KRC_KEY_LEN], want[KRC_KEY_LEN];
	char text[KRC_KEY_FILE_MAX + 1];
	size_t i;

	unhex(KEY_HEX, want, sizeof(want));
	assert_int_equal(want[0], 0x00);
	assert_int_equal(want[10], 0xaa);
	assert_int_equal(want[31], 0x10);
	for (i = 0; i < ARRAY_SIZE(tails); i++) {
		snprintf(text, sizeof(text), "%s%s", KEY_HEX, tails[i]);
		assert_int_equal(parse_str(text, key), 0);
		assert_memory_equal(key, want, sizeof(want));
		snprintf(text, sizeof(text), "%s%s", KEY_HEX_UPPER, tails[i]);
		assert_int_equal(parse_str(text, key), 0);
		assert_memory_equal(key, want, sizeof(want));
	}
	/* mixed case */
	memcpy(text, KEY_HEX, 64);
	for (i = 0; i < 64; i += 2)
		text[i] = KEY_HEX_UPPER[i];
	assert_int_equal(parse(text, 64, key), 0);
	assert_memory_equal(key, want, sizeof(want));
	/* white space up to KRC_KEY_FILE_MAX bytes in all */
	memcpy(text, KEY_HEX, 64);
	memset(text + 64, ' ', KRC_KEY_FILE_MAX - 64);
	text[KRC_KEY_FILE_MAX - 1] = '\n';
	assert_int_equal(parse(text, KRC_KEY_FILE_MAX, key), 0);
	assert_memory_equal(key, want, sizeof(want));
	/* only @len bytes are read: what follows does not count */
	memcpy(text, KEY_HEX "\nxyz", 68);
	assert_int_equal(parse(text, 65, key), 0);
	assert_memory_equal(key, want, sizeof(want));
	/* every hex digit, both cases */
	assert_int_equal(parse_str(every_digit, key), 0);
	assert_bytes(key, "0123456789abcdefabcdef000000000000000000000000000000000000000000",
		     sizeof(key));
	/* one non-zero bit is a key */
	assert_int_equal(parse_str(one_bit, key), 0);
	assert_int_equal(key[31], 1);
}

static void test_key_parse_bad(void **state)
{
	/* the edges of the hex ranges, and what else a file may hold */
	static const char bad_digits[] = {
		'/', ':', '@', 'G', '`', 'g', 'x', ' ', '\n', '\t', '\0', '-',
		'+', '.', (char)0xff, (char)0x80,
	};
	static const struct {
		const char *text;
		size_t len;
	} bad_tails[] = {
		{ "x", 1 }, { "\nx", 2 }, { " #", 2 }, { "0", 1 }, { "\n0", 2 },
		{ "\0", 1 }, { "\n\0", 2 }, { "\v", 1 }, { "\f", 1 }, { ".", 1 },
		{ "\r\n\r\n\x1b", 5 },
	};
	char text[2 * KRC_KEY_FILE_MAX];
	u8 key[KRC_KEY_LEN];
	size_t i, j;

	/* 63 and 65 digits, with or without a newline */
	assert_key_refused(KEY_HEX, 63);
	assert_key_refused(KEY_HEX "\n", 63);
	snprintf(text, sizeof(text), "%.63s\n", KEY_HEX);
	assert_key_refused(text, 64);
	snprintf(text, sizeof(text), "%sa", KEY_HEX);
	assert_key_refused(text, 65);
	snprintf(text, sizeof(text), "%sa\n", KEY_HEX);
	assert_key_refused(text, 66);
	/* nothing, and less than a key */
	assert_key_refused("", 0);
	assert_key_refused("\n", 1);
	assert_key_refused(KEY_HEX, 32);
	/* a non-hex character at any place */
	for (i = 0; i < 64; i++) {
		for (j = 0; j < sizeof(bad_digits); j++) {
			memcpy(text, KEY_HEX "\n", 65);
			text[i] = bad_digits[j];
			assert_key_refused(text, 65);
		}
	}
	/* trailing garbage */
	for (i = 0; i < ARRAY_SIZE(bad_tails); i++) {
		memcpy(text, KEY_HEX, 64);
		memcpy(text + 64, bad_tails[i].text, bad_tails[i].len);
		assert_key_refused(text, 64 + bad_tails[i].len);
	}
	/* garbage after white space, at the last byte allowed */
	memcpy(text, KEY_HEX, 64);
	memset(text + 64, ' ', KRC_KEY_FILE_MAX - 64);
	text[KRC_KEY_FILE_MAX - 1] = 'x';
	assert_key_refused(text, KRC_KEY_FILE_MAX);
	/* longer than a key file may be, even if only white space */
	memcpy(text, KEY_HEX, 64);
	memset(text + 64, ' ', sizeof(text) - 64);
	assert_key_refused(text, KRC_KEY_FILE_MAX + 1);
	assert_key_refused(text, sizeof(text));
	/* an all-zero key is a mistake, in any case and with any tail */
	memset(text, '0', 64);
	assert_key_refused(text, 64);
	text[64] = '\n';
	assert_key_refused(text, 65);
	/* and a refusal leaves nothing of an earlier key either */
	assert_int_equal(parse_str(KEY_HEX, key), 0);
	assert_int_equal(krc_key_parse(KEY_HEX "z", 65, key), -EINVAL);
	assert_true(key_is_zero(key));
}

/* The signed META_* messages. */

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

static struct krc_ctrl_msg sample_meta(u8 type)
{
	struct krc_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.req_id = 0x1122334455667788ULL;
	m.card = sample_card();
	if (type == KRC_MSG_META_REPLY)
		m.slot = 77;
	return m;
}

/* Who signs a message of @type: the member its requests, the host replies. */
static enum krc_mac_kind kind_of(u8 type)
{
	return type == KRC_MSG_META_REPLY ? KRC_MAC_HOST : KRC_MAC_MEMBER;
}

static const u8 meta_types[] = {
	KRC_MSG_META_REGISTER, KRC_MSG_META_DEREGISTER, KRC_MSG_META_REPLY,
};

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
	       !memcmp(a->mac, b->mac, sizeof(a->mac)) &&
	       !memcmp(a->ctrl_mac, b->ctrl_mac, sizeof(a->ctrl_mac));
}

/* Does any kind of MAC on this connection vouch for @m? */
static bool any_kind_checks(const struct krc_ctrl_msg *m, const u8 *key,
			    const struct krc_nonces *n)
{
	return krc_msg_check_mac(m, key, n, KRC_MAC_DESC) ||
	       krc_msg_check_mac(m, key, n, KRC_MAC_MEMBER) ||
	       krc_msg_check_mac(m, key, n, KRC_MAC_HOST);
}

/*
 * The MAC of a REGISTER and of a REPLY: HMAC over the 128-byte wire form
 * of proto.h (version 2) with bytes 80..111 zero, computed from the
 * layout, not from krc_msg_encode.
 */
static void test_msg_mac_vectors(void **state)
{
	struct krc_nonces n = test_nonces();
	u8 key[KRC_KEY_LEN], buf[KRC_MSG_SIZE];
	struct krc_ctrl_msg m;

	test_key(key);
	m = sample_meta(KRC_MSG_META_REGISTER);
	memset(m.mac, 0xee, sizeof(m.mac));	/* not part of what is signed */
	krc_msg_sign(&m, key, &n, KRC_MAC_MEMBER);
	assert_bytes(m.mac, "a97dc0f00146e1259f3dc56332f43cf56f2b054fe9770db3ae32f7ef8d39279d",
		     sizeof(m.mac));
	krc_msg_encode(&m, buf);
	assert_memory_equal(buf + 80, m.mac, KRC_MAC_LEN);
	m = sample_meta(KRC_MSG_META_REPLY);
	krc_msg_sign(&m, key, &n, KRC_MAC_HOST);
	assert_bytes(m.mac, "5dfbc710607c5336f2b0e1478451dc6105bfda15ffdc9eca6aa71e2a1862a639",
		     sizeof(m.mac));
	/* a META_* message's control MAC field is not part of it */
	memset(m.ctrl_mac, 0xee, sizeof(m.ctrl_mac));
	krc_msg_sign(&m, key, &n, KRC_MAC_HOST);
	assert_bytes(m.mac, "5dfbc710607c5336f2b0e1478451dc6105bfda15ffdc9eca6aa71e2a1862a639",
		     sizeof(m.mac));
}

/* The right key, nonces and kind, and nothing else, verify. */
static void test_msg_sign_check(void **state)
{
	struct krc_nonces n = test_nonces(), n2;
	u8 key[KRC_KEY_LEN], key2[KRC_KEY_LEN];
	struct krc_ctrl_msg m, m2;
	size_t t, bit;
	int kind, k2;

	test_key(key);
	for (t = 0; t < sizeof(meta_types); t++) {
		for (kind = KRC_MAC_DESC; kind <= KRC_MAC_HOST; kind++) {
			m = sample_meta(meta_types[t]);
			krc_msg_sign(&m, key, &n, kind);
			for (k2 = KRC_MAC_DESC; k2 <= KRC_MAC_HOST; k2++)
				assert_int_equal(krc_msg_check_mac(&m, key, &n, k2),
						 k2 == kind);
			/* signing is deterministic, and again */
			m2 = m;
			krc_msg_sign(&m2, key, &n, kind);
			assert_memory_equal(m2.mac, m.mac, KRC_MAC_LEN);
		}
		m = sample_meta(meta_types[t]);
		kind = kind_of(meta_types[t]);
		krc_msg_sign(&m, key, &n, kind);
		assert_true(krc_msg_check_mac(&m, key, &n, kind));
		/* another key: any one bit */
		for (bit = 0; bit < 8 * KRC_KEY_LEN; bit++) {
			memcpy(key2, key, sizeof(key2));
			key2[bit / 8] ^= (u8)(1 << (bit % 8));
			assert_false(any_kind_checks(&m, key2, &n));
		}
		/* another member nonce, another host nonce: any one bit */
		for (bit = 0; bit < 8 * KRC_NONCE_LEN; bit++) {
			n2 = n;
			n2.member[bit / 8] ^= (u8)(1 << (bit % 8));
			assert_false(any_kind_checks(&m, key, &n2));
			n2 = n;
			n2.host[bit / 8] ^= (u8)(1 << (bit % 8));
			assert_false(any_kind_checks(&m, key, &n2));
		}
		/* the two nonces swapped */
		memcpy(n2.member, n.host, KRC_NONCE_LEN);
		memcpy(n2.host, n.member, KRC_NONCE_LEN);
		assert_false(any_kind_checks(&m, key, &n2));
		/* no MAC, and the MAC of another message */
		m2 = m;
		memset(m2.mac, 0, sizeof(m2.mac));
		assert_false(any_kind_checks(&m2, key, &n));
		m2 = sample_meta(meta_types[t]);
		m2.req_id++;
		krc_msg_sign(&m2, key, &n, kind);
		assert_memory_not_equal(m2.mac, m.mac, KRC_MAC_LEN);
		memcpy(m2.mac, m.mac, KRC_MAC_LEN);
		assert_false(any_kind_checks(&m2, key, &n));
	}
}

/* Card bytes krc_card_decode ignores (reserved0, reserved1), in a message. */
static bool msg_byte_ignored(size_t i)
{
	return (i >= 16 + 38 && i < 16 + 40) || (i >= 16 + 52 && i < 16 + 56);
}

/*
 * Any byte of the wire form but the MAC flipped, and the message decoded
 * again: either the decoder refuses it, or the MAC no longer vouches for
 * it. The MAC is over what the decoder passes on (the re-encoded form):
 * a flip of the card's reserved bytes, which the decoder drops, gives
 * back the very message that was signed.
 */
static void test_msg_flips(void **state)
{
	static const u8 flips[] = { 0x01, 0x80, 0xff };
	struct krc_nonces n = test_nonces();
	u8 key[KRC_KEY_LEN], buf[KRC_MSG_SIZE], bad[KRC_MSG_SIZE];
	u8 out[KRC_MSG_SIZE];
	int refused = 0, caught = 0, dropped = 0;
	struct krc_ctrl_msg m, d;
	size_t t, i, f;

	test_key(key);
	for (t = 0; t < sizeof(meta_types); t++) {
		m = sample_meta(meta_types[t]);
		krc_msg_sign(&m, key, &n, kind_of(m.type));
		krc_msg_encode(&m, buf);
		assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
		assert_true(krc_msg_check_mac(&d, key, &n, kind_of(m.type)));
		for (i = 0; i < KRC_MSG_SIZE; i++) {
			for (f = 0; f < sizeof(flips); f++) {
				memcpy(bad, buf, sizeof(bad));
				bad[i] ^= flips[f];
				if (krc_msg_decode(bad, sizeof(bad), &d)) {
					assert_false(i >= 80 && i < 112);
					refused++;
					continue;
				}
				krc_msg_encode(&d, out);
				if (!memcmp(out, buf, sizeof(out))) {
					/* the flip did not reach the message */
					assert_true(msg_byte_ignored(i));
					assert_true(msg_equal(&d, &m));
					dropped++;
					continue;
				}
				assert_false(any_kind_checks(&d, key, &n));
				caught++;
			}
		}
	}
	print_message("flips: %d refused by the decoder, %d caught by the MAC, "
		      "%d dropped by the decoder\n",
		      refused, caught, dropped);
	/* of 3 * 128 * 3: the MAC's 3 * 32 * 3 among the caught */
	assert_int_equal(refused + caught + dropped, 3 * 128 * 3);
	assert_true(caught >= 3 * 32 * 3 + 3 * 50 * 3);
	assert_true(dropped <= 3 * 6 * 3);
}

/* Encode and decode keep the MAC, which still verifies. */
static void test_msg_roundtrip_mac(void **state)
{
	struct krc_nonces n = test_nonces();
	u8 key[KRC_KEY_LEN], buf[KRC_MSG_SIZE];
	struct krc_ctrl_msg m, d;
	size_t t, i;

	test_key(key);
	for (t = 0; t < sizeof(meta_types); t++) {
		m = sample_meta(meta_types[t]);
		krc_msg_sign(&m, key, &n, kind_of(m.type));
		krc_msg_encode(&m, buf);
		assert_memory_equal(buf + 80, m.mac, KRC_MAC_LEN);
		for (i = 112; i < 116; i++)
			assert_int_equal(buf[i], 0);
		assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
		assert_true(msg_equal(&m, &d));
		assert_true(krc_msg_check_mac(&d, key, &n, kind_of(m.type)));
		/*
		 * The fields 80..115 hold for other types are not sent, nor
		 * is their control MAC (bytes 120..127 stay zero).
		 */
		memset(m.ctrl_mac, 0xa5, sizeof(m.ctrl_mac));
		m.dst_incarnation = 1;
		m.qpn = 2;
		m.psn = 3;
		m.peer_qpn = 4;
		m.probe_rkey = 5;
		m.probe_addr = 6;
		m.probe_len = 7;
		krc_msg_encode(&m, buf);
		assert_memory_equal(buf + 80, m.mac, KRC_MAC_LEN);
		assert_int_equal(krc_get_le64(buf + 120), 0);
		assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
		assert_int_equal(d.dst_incarnation + d.qpn + d.psn + d.peer_qpn +
				 d.probe_rkey + d.probe_addr + d.probe_len, 0);
		for (i = 0; i < KRC_CTRL_MAC_LEN; i++)
			assert_int_equal(d.ctrl_mac[i], 0);
		assert_true(krc_msg_check_mac(&d, key, &n, kind_of(m.type)));
	}
}

/* Other types carry no MAC: none vouches for them, even "signed". */
static void test_msg_not_meta(void **state)
{
	struct krc_nonces n = test_nonces();
	u8 key[KRC_KEY_LEN];
	struct krc_ctrl_msg m;
	unsigned int t;
	int kind;

	test_key(key);
	for (t = 0; t <= 255; t++) {
		assert_int_equal(krc_msg_is_meta(t),
				 t >= KRC_MSG_META_REGISTER &&
				 t <= KRC_MSG_META_REPLY);
		if (krc_msg_is_meta(t))
			continue;
		for (kind = KRC_MAC_DESC; kind <= KRC_MAC_HOST; kind++) {
			m = sample_meta(KRC_MSG_META_REGISTER);
			m.type = (u8)t;
			m.qpn = 0x1a;
			m.peer_qpn = 0x2b;
			krc_msg_sign(&m, key, &n, kind);
			assert_false(any_kind_checks(&m, key, &n));
		}
	}
}

/* The control MAC of the messages between nodes (KRC_MAC_CTRL). */

static const u8 ctrl_types[] = {
	KRC_MSG_CONNECT_REQ, KRC_MSG_CONNECT_REP, KRC_MSG_CONNECT_NAK,
	KRC_MSG_RTU, KRC_MSG_RTU_ACK, KRC_MSG_GOODBYE,
	KRC_MSG_CLOSE_REQ, KRC_MSG_CLOSE_REP,
};

/* A control message of @type with the fields a real sender would fill. */
static struct krc_ctrl_msg sample_ctrl(u8 type)
{
	struct krc_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.req_id = 0x1122334455667788ULL;
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
	case KRC_MSG_CLOSE_REQ:
		m.qpn = 0x1a;
		m.peer_qpn = 0x2b;
		break;
	case KRC_MSG_RTU_ACK:
		m.qpn = 0x2b;
		m.peer_qpn = 0x1a;
		break;
	case KRC_MSG_CLOSE_REP:
		m.status = EBUSY;
		m.qpn = 0x2b;
		m.peer_qpn = 0x1a;
		break;
	default:	/* GOODBYE: the card */
		break;
	}
	return m;
}

/*
 * The control MAC of a CONNECT_REQ: the first 8 bytes of HMAC(key, label
 * || CTRL || 32 zero bytes || the 128-byte wire form of proto.h, version
 * 2, with bytes 120..127 zero), computed from the layout, not from
 * krc_msg_encode.
 */
static void test_ctrl_mac_vector(void **state)
{
	static const struct krc_nonces zero;
	u8 key[KRC_KEY_LEN], buf[KRC_MSG_SIZE], mac[KRC_MAC_LEN];
	struct krc_ctrl_msg m = sample_ctrl(KRC_MSG_CONNECT_REQ), d;

	test_key(key);
	/* neither MAC field is part of what is signed */
	memset(m.ctrl_mac, 0xee, sizeof(m.ctrl_mac));
	memset(m.mac, 0xee, sizeof(m.mac));
	krc_msg_ctrl_sign(&m, key);
	assert_bytes(m.ctrl_mac, "22fbc3c56e2210af", KRC_CTRL_MAC_LEN);
	assert_true(krc_msg_ctrl_check(&m, key));
	krc_msg_encode(&m, buf);
	assert_bytes(buf + 120, "22fbc3c56e2210af", KRC_CTRL_MAC_LEN);
	assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
	assert_true(krc_msg_ctrl_check(&d, key));
	/* the whole HMAC over the encoding with the MAC zeroed */
	memset(buf + 120, 0, KRC_CTRL_MAC_LEN);
	krc_auth_mac(key, KRC_MAC_CTRL, &zero, buf, sizeof(buf), mac);
	assert_bytes(mac, "22fbc3c56e2210af14ac97114da78ec45443e9ad272fb2094318683155e029fd",
		     sizeof(mac));
}

/*
 * Every control type: signing writes the MAC and nothing else, the MAC
 * goes over the wire and checks on the other end; no other key, no
 * other MAC, and no MetaServer MAC vouches for the message, and the
 * control MAC is no other kind's MAC truncated.
 */
static void test_ctrl_sign_check(void **state)
{
	static const struct krc_nonces zero;
	struct krc_nonces n = test_nonces();
	u8 key[KRC_KEY_LEN], key2[KRC_KEY_LEN], mac[KRC_MAC_LEN];
	u8 before[KRC_MSG_SIZE], after[KRC_MSG_SIZE];
	u8 macs[ARRAY_SIZE(ctrl_types)][KRC_CTRL_MAC_LEN];
	struct krc_ctrl_msg m, m2, d;
	size_t t, t2, i, bit;
	int kind;

	test_key(key);
	for (t = 0; t < ARRAY_SIZE(ctrl_types); t++) {
		m = sample_ctrl(ctrl_types[t]);
		krc_msg_encode(&m, before);
		assert_int_equal(krc_get_le64(before + 120), 0);
		m2 = m;
		krc_msg_ctrl_sign(&m, key);
		memcpy(macs[t], m.ctrl_mac, KRC_CTRL_MAC_LEN);
		/* nothing but the MAC changes, in the struct or on the wire */
		memcpy(m2.ctrl_mac, m.ctrl_mac, KRC_CTRL_MAC_LEN);
		assert_true(msg_equal(&m, &m2));
		krc_msg_encode(&m, after);
		assert_memory_equal(after, before, 120);
		assert_memory_equal(after + 120, m.ctrl_mac, KRC_CTRL_MAC_LEN);
		assert_true(krc_msg_ctrl_check(&m, key));
		/* it goes over the wire as it is and checks there */
		assert_int_equal(krc_msg_decode(after, sizeof(after), &d), 0);
		assert_true(msg_equal(&d, &m));
		assert_true(krc_msg_ctrl_check(&d, key));
		/* deterministic, whatever the field held before */
		m2 = m;
		memset(m2.ctrl_mac, 0xff, sizeof(m2.ctrl_mac));
		krc_msg_ctrl_sign(&m2, key);
		assert_true(msg_equal(&m2, &m));
		/* the first 8 bytes of the CTRL kind's MAC, zero nonces */
		memcpy(before, after, sizeof(before));
		memset(before + 120, 0, KRC_CTRL_MAC_LEN);
		krc_auth_mac(key, KRC_MAC_CTRL, &zero, before, sizeof(before),
			     mac);
		assert_memory_equal(mac, m.ctrl_mac, KRC_CTRL_MAC_LEN);
		/* no other kind's, with zero nonces or a connection's */
		for (kind = KRC_MAC_DESC; kind <= KRC_MAC_HOST; kind++) {
			krc_auth_mac(key, kind, &zero, before, sizeof(before),
				     mac);
			assert_memory_not_equal(mac, m.ctrl_mac,
						KRC_CTRL_MAC_LEN);
			krc_auth_mac(key, kind, &n, before, sizeof(before),
				     mac);
			assert_memory_not_equal(mac, m.ctrl_mac,
						KRC_CTRL_MAC_LEN);
		}
		krc_auth_mac(key, KRC_MAC_CTRL, &n, before, sizeof(before),
			     mac);
		assert_memory_not_equal(mac, m.ctrl_mac, KRC_CTRL_MAC_LEN);
		/* another key: any one bit, checking and signing */
		for (bit = 0; bit < 8 * KRC_KEY_LEN; bit++) {
			memcpy(key2, key, sizeof(key2));
			key2[bit / 8] ^= (u8)(1 << (bit % 8));
			assert_false(krc_msg_ctrl_check(&m, key2));
			m2 = m;
			krc_msg_ctrl_sign(&m2, key2);
			assert_true(krc_msg_ctrl_check(&m2, key2));
			assert_false(krc_msg_ctrl_check(&m2, key));
		}
		/* any bit of the MAC, all of it, none of it */
		for (bit = 0; bit < 8 * KRC_CTRL_MAC_LEN; bit++) {
			m2 = m;
			m2.ctrl_mac[bit / 8] ^= (u8)(1 << (bit % 8));
			assert_false(krc_msg_ctrl_check(&m2, key));
		}
		m2 = m;
		for (i = 0; i < KRC_CTRL_MAC_LEN; i++)
			m2.ctrl_mac[i] ^= 0xff;
		assert_false(krc_msg_ctrl_check(&m2, key));
		memset(m2.ctrl_mac, 0, sizeof(m2.ctrl_mac));
		assert_false(krc_msg_ctrl_check(&m2, key));
		/* the MAC of another message */
		m2 = sample_ctrl(ctrl_types[t]);
		m2.req_id++;
		krc_msg_ctrl_sign(&m2, key);
		assert_memory_not_equal(m2.ctrl_mac, m.ctrl_mac,
					KRC_CTRL_MAC_LEN);
		memcpy(m2.ctrl_mac, m.ctrl_mac, KRC_CTRL_MAC_LEN);
		assert_false(krc_msg_ctrl_check(&m2, key));
		/* a control MAC is no MetaServer MAC */
		assert_false(any_kind_checks(&m, key, &n));
		assert_false(any_kind_checks(&m, key, &zero));
	}
	/* and every type's differs from every other's */
	for (t = 0; t < ARRAY_SIZE(ctrl_types); t++)
		for (t2 = t + 1; t2 < ARRAY_SIZE(ctrl_types); t2++)
			assert_memory_not_equal(macs[t], macs[t2],
						KRC_CTRL_MAC_LEN);
}

/*
 * Any bit of any byte of a signed control message's wire form flipped
 * (and all of a byte), the message decoded again: bytes 0..119 either
 * make the decoder refuse it, or the MAC no longer vouches for it, or
 * are the card's reserved bytes, which the decoder drops (giving back
 * the very message that was signed); a flip in 120..127 always decodes
 * and never checks.
 */
static void test_ctrl_flips(void **state)
{
	enum { NFLIPS = 9 };	/* each bit, then 0xff */
	u8 key[KRC_KEY_LEN], buf[KRC_MSG_SIZE], bad[KRC_MSG_SIZE];
	int refused = 0, caught = 0, dropped = 0, in_mac = 0;
	u8 out[KRC_MSG_SIZE];
	struct krc_ctrl_msg m, d;
	size_t t, i, f;

	test_key(key);
	for (t = 0; t < ARRAY_SIZE(ctrl_types); t++) {
		m = sample_ctrl(ctrl_types[t]);
		krc_msg_ctrl_sign(&m, key);
		krc_msg_encode(&m, buf);
		assert_int_equal(krc_msg_decode(buf, sizeof(buf), &d), 0);
		assert_true(krc_msg_ctrl_check(&d, key));
		for (i = 0; i < KRC_MSG_SIZE; i++) {
			for (f = 0; f < NFLIPS; f++) {
				memcpy(bad, buf, sizeof(bad));
				bad[i] ^= f < 8 ? (u8)(1 << f) : 0xff;
				if (krc_msg_decode(bad, sizeof(bad), &d)) {
					assert_true(i < 120);
					refused++;
					continue;
				}
				krc_msg_encode(&d, out);
				if (!memcmp(out, buf, sizeof(out))) {
					/* the flip did not reach the message */
					assert_true(msg_byte_ignored(i));
					assert_true(msg_equal(&d, &m));
					assert_true(krc_msg_ctrl_check(&d, key));
					dropped++;
					continue;
				}
				assert_memory_equal(out, bad, sizeof(out));
				assert_false(krc_msg_ctrl_check(&d, key));
				caught++;
				if (i >= 120)
					in_mac++;
			}
		}
	}
	print_message("control flips: %d refused by the decoder, %d caught "
		      "by the MAC (%d in it), %d dropped by the decoder\n",
		      refused, caught, in_mac, dropped);
	assert_int_equal(refused + caught + dropped,
			 (int)ARRAY_SIZE(ctrl_types) * KRC_MSG_SIZE * NFLIPS);
	/* every flip of the MAC decodes and is caught */
	assert_int_equal(in_mac, (int)ARRAY_SIZE(ctrl_types) * 8 * NFLIPS);
	/* the card's 6 reserved bytes, and only those, are dropped */
	assert_int_equal(dropped, (int)ARRAY_SIZE(ctrl_types) * 6 * NFLIPS);
	assert_true(caught - in_mac >= (int)ARRAY_SIZE(ctrl_types) * 50 * NFLIPS);
}

/* A META_* message has no control MAC: none vouches for it, even "signed". */
static void test_ctrl_not_for_meta(void **state)
{
	struct krc_nonces n = test_nonces();
	u8 key[KRC_KEY_LEN], buf[KRC_MSG_SIZE], buf2[KRC_MSG_SIZE];
	struct krc_ctrl_msg m, m2, d;
	size_t t;

	test_key(key);
	for (t = 0; t < sizeof(meta_types); t++) {
		m = sample_meta(meta_types[t]);
		krc_msg_sign(&m, key, &n, kind_of(m.type));
		krc_msg_encode(&m, buf);
		m2 = m;
		krc_msg_ctrl_sign(&m2, key);
		assert_false(krc_msg_ctrl_check(&m2, key));
		/* its wire form has no room for it: bytes 120..127 stay zero */
		krc_msg_encode(&m2, buf2);
		assert_memory_equal(buf2, buf, sizeof(buf));
		assert_int_equal(krc_get_le64(buf2 + 120), 0);
		assert_true(krc_msg_check_mac(&m2, key, &n, kind_of(m.type)));
		/* decoded, with a zero control MAC, it does not check either */
		assert_int_equal(krc_msg_decode(buf2, sizeof(buf2), &d), 0);
		assert_true(msg_equal(&d, &m));
		assert_false(krc_msg_ctrl_check(&d, key));
		memset(m2.ctrl_mac, 0, sizeof(m2.ctrl_mac));
		assert_false(krc_msg_ctrl_check(&m2, key));
		/* the first 8 bytes of its MetaServer MAC are not one */
		memcpy(m2.ctrl_mac, m.mac, KRC_CTRL_MAC_LEN);
		assert_false(krc_msg_ctrl_check(&m2, key));
	}
}

/* The table descriptor's MAC. */

static void sample_desc(u8 buf[KRC_MT_DESC_SIZE])
{
	struct krc_mt_desc d;

	memset(&d, 0, sizeof(d));
	d.addr = 0xffff888012340000ULL;
	d.rkey = 0x1234;
	d.nslots = 1024;
	d.nphys = 1024 + KRC_MT_SPILL;
	d.seed = 0x5eed5eed5eed5eedULL;
	d.incarnation = 0x0123456789abcdefULL;
	memcpy(d.nonce, "host--nonce--016", KRC_NONCE_LEN);
	memset(d.mac, 0xee, sizeof(d.mac));	/* overwritten by the signer */
	krc_mt_desc_encode(&d, buf);
}

static void test_desc_mac(void **state)
{
	static const u8 flips[] = { 0x01, 0x80, 0xff };
	struct krc_nonces n = test_nonces();
	u8 key[KRC_KEY_LEN], key2[KRC_KEY_LEN], nonce2[KRC_NONCE_LEN];
	u8 buf[KRC_MT_DESC_SIZE], bad[KRC_MT_DESC_SIZE], mac[KRC_MAC_LEN];
	struct krc_mt_desc d;
	size_t i, f, bit;

	test_key(key);
	sample_desc(buf);
	krc_mt_desc_sign(buf, key, n.member);
	/* KRC_MAC_DESC over bytes 0..63, the host nonce from bytes 48..63 */
	assert_bytes(buf + 64, "98d3a400634c2a65ea645526d98c066be827fa7e1e8a5c634aedb1d1f9050120",
		     KRC_MAC_LEN);
	krc_auth_mac(key, KRC_MAC_DESC, &n, buf, 64, mac);
	assert_memory_equal(mac, buf + 64, KRC_MAC_LEN);
	assert_true(krc_mt_desc_check_mac(buf, key, n.member));
	/* it decodes, MAC and nonce as they are */
	assert_int_equal(krc_mt_desc_decode(buf, sizeof(buf), &d), 0);
	assert_memory_equal(d.mac, buf + 64, KRC_MAC_LEN);
	assert_memory_equal(d.nonce, n.host, KRC_NONCE_LEN);
	/* another key, another member nonce: any one bit */
	for (bit = 0; bit < 8 * KRC_KEY_LEN; bit++) {
		memcpy(key2, key, sizeof(key2));
		key2[bit / 8] ^= (u8)(1 << (bit % 8));
		assert_false(krc_mt_desc_check_mac(buf, key2, n.member));
	}
	for (bit = 0; bit < 8 * KRC_NONCE_LEN; bit++) {
		memcpy(nonce2, n.member, sizeof(nonce2));
		nonce2[bit / 8] ^= (u8)(1 << (bit % 8));
		assert_false(krc_mt_desc_check_mac(buf, key, nonce2));
	}
	/* the host's nonce in the member's place */
	assert_false(krc_mt_desc_check_mac(buf, key, n.host));
	/* any byte flipped, the MAC's included */
	for (i = 0; i < KRC_MT_DESC_SIZE; i++) {
		for (f = 0; f < sizeof(flips); f++) {
			memcpy(bad, buf, sizeof(bad));
			bad[i] ^= flips[f];
			assert_false(krc_mt_desc_check_mac(bad, key, n.member));
		}
	}
	/* a message MAC of the same bytes is not a descriptor MAC */
	krc_auth_mac(key, KRC_MAC_HOST, &n, buf, 64, buf + 64);
	assert_false(krc_mt_desc_check_mac(buf, key, n.member));
	/* signing again restores it */
	krc_mt_desc_sign(buf, key, n.member);
	assert_true(krc_mt_desc_check_mac(buf, key, n.member));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_sha256_padding_edges),
		cmocka_unit_test(test_sha256_million),
		cmocka_unit_test(test_sha256_incremental),
		cmocka_unit_test(test_hmac_rfc4231),
		cmocka_unit_test(test_auth_mac_vectors),
		cmocka_unit_test(test_auth_equal),
		cmocka_unit_test(test_key_parse_good),
		cmocka_unit_test(test_key_parse_bad),
		cmocka_unit_test(test_msg_mac_vectors),
		cmocka_unit_test(test_msg_sign_check),
		cmocka_unit_test(test_msg_flips),
		cmocka_unit_test(test_msg_roundtrip_mac),
		cmocka_unit_test(test_msg_not_meta),
		cmocka_unit_test(test_ctrl_mac_vector),
		cmocka_unit_test(test_ctrl_sign_check),
		cmocka_unit_test(test_ctrl_flips),
		cmocka_unit_test(test_ctrl_not_for_meta),
		cmocka_unit_test(test_desc_mac),
	};

	return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
