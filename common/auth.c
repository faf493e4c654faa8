// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * auth.c - HMAC-SHA256 over krcore's MetaServer messages, and the key
 * file's format (auth.h). SHA-256 is the kernel's (lib/crypto) in the
 * module and common/sha256.c in user space.
 */
#include "auth.h"

#ifdef __KERNEL__
#include <crypto/algapi.h>
#include <crypto/sha2.h>
#else
#include "sha256.h"
#endif

#define HMAC_BLOCK	SHA256_BLOCK_SIZE

/* "krcore-auth-v1": bound into every MAC, before the kind. */
static const u8 krc_auth_label[] = {
	'k', 'r', 'c', 'o', 'r', 'e', '-', 'a', 'u', 't', 'h', '-', 'v', '1',
};

struct krc_hmac {
	struct sha256_state inner;
	u8 opad[HMAC_BLOCK];
};

static void krc_hmac_init(struct krc_hmac *h, const u8 *key, size_t key_len)
{
	u8 k[HMAC_BLOCK] = { 0 }, ipad[HMAC_BLOCK];
	struct sha256_state s;
	int i;

	if (key_len > HMAC_BLOCK) {
		sha256_init(&s);
		sha256_update(&s, key, (unsigned int)key_len);
		sha256_final(&s, k);
	} else {
		memcpy(k, key, key_len);
	}
	for (i = 0; i < HMAC_BLOCK; i++) {
		ipad[i] = k[i] ^ 0x36;
		h->opad[i] = k[i] ^ 0x5c;
	}
	sha256_init(&h->inner);
	sha256_update(&h->inner, ipad, HMAC_BLOCK);
	memset(k, 0, sizeof(k));
	memset(ipad, 0, sizeof(ipad));
}

static void krc_hmac_update(struct krc_hmac *h, const u8 *data, size_t len)
{
	sha256_update(&h->inner, data, (unsigned int)len);
}

static void krc_hmac_final(struct krc_hmac *h, u8 out[KRC_MAC_LEN])
{
	u8 digest[SHA256_DIGEST_SIZE];
	struct sha256_state outer;

	sha256_final(&h->inner, digest);
	sha256_init(&outer);
	sha256_update(&outer, h->opad, HMAC_BLOCK);
	sha256_update(&outer, digest, sizeof(digest));
	sha256_final(&outer, out);
	memset(h, 0, sizeof(*h));
	memset(digest, 0, sizeof(digest));
}

void krc_hmac_sha256(const u8 *key, size_t key_len, const u8 *msg, size_t len,
		     u8 out[KRC_MAC_LEN])
{
	struct krc_hmac h;

	krc_hmac_init(&h, key, key_len);
	krc_hmac_update(&h, msg, len);
	krc_hmac_final(&h, out);
}

void krc_auth_mac(const u8 key[KRC_KEY_LEN], enum krc_mac_kind kind,
		  const struct krc_nonces *nonces, const u8 *body, size_t len,
		  u8 out[KRC_MAC_LEN])
{
	struct krc_hmac h;
	u8 k = (u8)kind;

	krc_hmac_init(&h, key, KRC_KEY_LEN);
	krc_hmac_update(&h, krc_auth_label, sizeof(krc_auth_label));
	krc_hmac_update(&h, &k, 1);
	krc_hmac_update(&h, nonces->member, KRC_NONCE_LEN);
	krc_hmac_update(&h, nonces->host, KRC_NONCE_LEN);
	krc_hmac_update(&h, body, len);
	krc_hmac_final(&h, out);
}

bool krc_auth_equal(const u8 *a, const u8 *b, size_t len)
{
#ifdef __KERNEL__
	return !crypto_memneq(a, b, len);
#else
	u8 diff = 0;
	size_t i;

	for (i = 0; i < len; i++)
		diff |= a[i] ^ b[i];
	return !diff;
#endif
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int krc_key_parse(const char *text, size_t len, u8 key[KRC_KEY_LEN])
{
	u8 any = 0;
	size_t i;

	if (len < 2 * KRC_KEY_LEN || len > KRC_KEY_FILE_MAX)
		goto bad;
	for (i = 0; i < KRC_KEY_LEN; i++) {
		int hi = hex_value(text[2 * i]);
		int lo = hex_value(text[2 * i + 1]);

		if (hi < 0 || lo < 0)
			goto bad;
		key[i] = (u8)(hi << 4 | lo);
		any |= key[i];
	}
	for (i = 2 * KRC_KEY_LEN; i < len; i++)
		if (text[i] != ' ' && text[i] != '\n' && text[i] != '\t' &&
		    text[i] != '\r')
			goto bad;
	if (any)
		return 0;
bad:
	memset(key, 0, KRC_KEY_LEN);
	return -EINVAL;
}
