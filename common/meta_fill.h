/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * meta_fill.h - the synthetic cards a MetaServer host registers through
 * its test hook (root writes N to the test_meta_fill parameter,
 * kernel/control/meta_host.c): entry i < N is a node at the IPv4 address
 * 10.(200 + (i >> 16)).((i >> 8) & 255).(i & 255), its GID the v4-mapped
 * one, the last two bytes of its MAC those of the address, its control
 * QPN 2 + i and its node id the address. The hook and the programs that
 * look the cards up (tests/progs/meta_lookups.c, bench/meta_bench.c)
 * share these definitions.
 */
#ifndef KRC_COMMON_META_FILL_H
#define KRC_COMMON_META_FILL_H

#include "card.h"
#ifndef __KERNEL__
#include <stdio.h>
#endif

/* The IPv4 address of synthetic entry @i. */
static inline void krc_fill_ip(u32 i, u8 ip[4])
{
	ip[0] = 10;
	ip[1] = (u8)(200 + (i >> 16));
	ip[2] = (u8)(i >> 8);
	ip[3] = (u8)i;
}

/* The address of synthetic entry @i as text, for a lookup. */
static inline void krc_fill_addr(u32 i, char *buf, size_t len)
{
	u8 ip[4];

	krc_fill_ip(i, ip);
	snprintf(buf, len, "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
}

/* The control QPN of synthetic entry @i. */
static inline u32 krc_fill_qpn(u32 i)
{
	return 2 + i;
}

/* Is @c the card registered for synthetic entry @i (the fields set)? */
static inline bool krc_fill_card_ok(const struct krcore_card *c, u32 i)
{
	u8 ip[4], gid[16];

	krc_fill_ip(i, ip);
	krc_gid_from_ipv4(gid, ip);
	return !memcmp(c->gid, gid, sizeof(gid)) && c->mac[4] == ip[2] &&
	       c->mac[5] == ip[3] && c->ud_qpn == krc_fill_qpn(i) &&
	       c->node_id == krc_gid_node_id(gid);
}

#endif /* KRC_COMMON_META_FILL_H */
