/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * card.h - node address cards and GIDs: wire encoding, validation, text.
 */
#ifndef KRC_COMMON_CARD_H
#define KRC_COMMON_CARD_H

#include "compat.h"
#include "../include/uapi/krcore.h"

/* Longest text krc_gid_format() writes, NUL included. */
#define KRC_GID_STRLEN	48

/* Encode @card into its 64-byte little-endian wire form. */
void krc_card_encode(const struct krcore_card *card, u8 out[KRCORE_CARD_SIZE]);

/*
 * Decode and validate a wire card. Returns 0, or -EPROTO for an unknown
 * card version and -EINVAL for a card no node could have published.
 */
int krc_card_decode(const u8 in[KRCORE_CARD_SIZE], struct krcore_card *card);

/* 0 if @card is complete and well-formed, else -EINVAL. */
int krc_card_check(const struct krcore_card *card);

/* True if @gid is an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
bool krc_gid_is_v4mapped(const u8 gid[16]);

/* True if all 16 bytes are zero. */
bool krc_gid_is_zero(const u8 gid[16]);

/* Build the IPv4-mapped GID of IPv4 address a.b.c.d given as bytes. */
void krc_gid_from_ipv4(u8 gid[16], const u8 ip[4]);

/*
 * The default node id of a GID: the IPv4 address (as a host-order u32,
 * a.b.c.d = a << 24 | ...) for IPv4-mapped GIDs, else a 32-bit FNV-1a hash
 * of the GID. Never 0.
 */
u32 krc_gid_node_id(const u8 gid[16]);

/*
 * Text form of a GID: dotted IPv4 for IPv4-mapped GIDs ("10.0.0.1"),
 * otherwise the canonical IPv6 text (RFC 5952: lower case, longest run
 * of zero groups as "::"). Returns the length written, without the NUL.
 */
int krc_gid_format(const u8 gid[16], char *buf, size_t len);

/*
 * Parse a node address: dotted IPv4 ("10.0.0.1", mapped to its GID) or an
 * IPv6/GID text ("fe80::1", "::ffff:10.0.0.1", or eight colon-separated
 * groups of up to four hex digits). Returns 0 or -EINVAL.
 */
int krc_gid_parse(const char *s, u8 gid[16]);

#endif /* KRC_COMMON_CARD_H */
