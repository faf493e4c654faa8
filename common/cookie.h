/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cookie.h - the wr_id the hardware sees for a VQ's request. Never a user
 * value and never a pointer: the VQ's id, the slot holding the request and
 * the slot's generation. A completion is delivered only if the VQ with that
 * id still exists and its slot still has that generation; anything else is
 * a late completion of a closed VQ (or a corrupted one) and is dropped.
 *
 *   bit 0      1 (kernel-internal requests use even values: pointers)
 *   bits 1-27  generation (27 bits)
 *   bits 28-43 slot (16 bits)
 *   bits 44-63 VQ id (20 bits, 0 reserved)
 */
#ifndef KRC_COMMON_COOKIE_H
#define KRC_COMMON_COOKIE_H

#include "compat.h"

#define KRC_COOKIE_GEN_BITS	27
#define KRC_COOKIE_SLOT_BITS	16
#define KRC_COOKIE_VQ_BITS	20
#define KRC_COOKIE_GEN_MASK	((1U << KRC_COOKIE_GEN_BITS) - 1)
#define KRC_COOKIE_SLOT_MASK	((1U << KRC_COOKIE_SLOT_BITS) - 1)
#define KRC_COOKIE_VQ_MAX	((1U << KRC_COOKIE_VQ_BITS) - 1)

static inline u64 krc_cookie_make(u32 vq, u32 slot, u32 gen)
{
	return (u64)(vq & KRC_COOKIE_VQ_MAX) << 44 |
	       (u64)(slot & KRC_COOKIE_SLOT_MASK) << 28 |
	       (u64)(gen & KRC_COOKIE_GEN_MASK) << 1 | 1;
}

static inline bool krc_cookie_is_vq(u64 cookie)
{
	return cookie & 1;
}

static inline u32 krc_cookie_vq(u64 cookie)
{
	return (u32)(cookie >> 44) & KRC_COOKIE_VQ_MAX;
}

static inline u32 krc_cookie_slot(u64 cookie)
{
	return (u32)(cookie >> 28) & KRC_COOKIE_SLOT_MASK;
}

static inline u32 krc_cookie_gen(u64 cookie)
{
	return (u32)(cookie >> 1) & KRC_COOKIE_GEN_MASK;
}

/* The next generation of a slot (never 0, so a zeroed slot never matches). */
static inline u32 krc_cookie_next_gen(u32 gen)
{
	gen = (gen + 1) & KRC_COOKIE_GEN_MASK;
	return gen ? gen : 1;
}

/*
 * Entries in a completion ring of @entries (a power of two): producer and
 * consumer run freely; a consumer index that is not within [producer -
 * entries, producer] (written by an untrusted user) counts as a full ring.
 */
static inline u32 krc_ring_used(u32 producer, u32 consumer, u32 entries)
{
	u32 used = producer - consumer;

	return used > entries ? entries : used;
}

#endif /* KRC_COMMON_COOKIE_H */
