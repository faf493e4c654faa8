/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * auth.h - the cluster key and what it signs: who may change the
 * MetaServer's table (docs/trust-model.md).
 *
 * Every node of a cluster loads the same 32-byte key at start (module
 * parameter key_file, a root-only file of 64 hex digits). A member's
 * rdma_cm connection to the MetaServer carries two fresh nonces, the
 * member's in its hello and the host's in the table descriptor; then
 *   - the descriptor carries HMAC-SHA256(key, DESC || nonces || descriptor):
 *     the member READs cards only from a table whose host holds the key;
 *   - every REGISTER / DEREGISTER carries HMAC(key, MEMBER || nonces ||
 *     message) and every reply HMAC(key, HOST || nonces || message), over
 *     the 128-byte wire form with the MAC field zero (proto.h).
 * A MAC binds the message to this connection (the nonces) and to its
 * direction (the kind), so nothing can be replayed into another
 * connection or reflected back. Without the key no one can register,
 * update or remove a card, whatever port or address it comes from.
 *
 * Every control message between nodes (handshake, goodbye, close) carries
 * the first KRC_CTRL_MAC_LEN bytes of HMAC(key, CTRL || zero nonces ||
 * message) too: a message from anyone but a node's kernel is dropped
 * before it costs anything, and a card a REQ brings is a card a kernel of
 * the cluster vouches for, even while the MetaServer is out of reach.
 */
#ifndef KRC_COMMON_AUTH_H
#define KRC_COMMON_AUTH_H

#include "compat.h"

#define KRC_KEY_LEN		32
#define KRC_NONCE_LEN		16
#define KRC_MAC_LEN		32
#define KRC_CTRL_MAC_LEN	8	/* of a control message: 64 bits */
/* The key file: 64 hex digits, then at most this much white space. */
#define KRC_KEY_FILE_MAX	128

/* What a MAC vouches for: domain separation between the three uses. */
enum krc_mac_kind {
	KRC_MAC_DESC	= 1,	/* host -> member: the table descriptor */
	KRC_MAC_MEMBER	= 2,	/* member -> host: REGISTER, DEREGISTER */
	KRC_MAC_HOST	= 3,	/* host -> member: META_REPLY */
	KRC_MAC_CTRL	= 4,	/* node -> node: a control message (no nonces) */
};

/* The two nonces of one MetaServer connection. */
struct krc_nonces {
	u8 member[KRC_NONCE_LEN];	/* from the member's hello */
	u8 host[KRC_NONCE_LEN];		/* from the host's descriptor */
};

/* HMAC-SHA256 (RFC 2104) of @len bytes at @msg under a key of any length. */
void krc_hmac_sha256(const u8 *key, size_t key_len, const u8 *msg, size_t len,
		     u8 out[KRC_MAC_LEN]);

/*
 * The MAC of @body (@len bytes) of kind @kind on the connection of
 * @nonces, under the cluster @key.
 */
void krc_auth_mac(const u8 key[KRC_KEY_LEN], enum krc_mac_kind kind,
		  const struct krc_nonces *nonces, const u8 *body, size_t len,
		  u8 out[KRC_MAC_LEN]);

/* Equal MACs, in time that does not depend on where they differ. */
bool krc_auth_equal(const u8 *a, const u8 *b, size_t len);

/*
 * Parse the text of a key file (@len bytes): exactly 64 hex digits, then
 * only white space. 0, or -EINVAL (the key is all zero too: a file of
 * zeros is a mistake, not a key).
 */
int krc_key_parse(const char *text, size_t len, u8 key[KRC_KEY_LEN]);

#endif /* KRC_COMMON_AUTH_H */
