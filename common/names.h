/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * names.h - the table of names a node publishes its remote memory regions
 * under, read by other nodes with one RDMA READ.
 *
 * The table sits in the node area (the memory every peer may READ over a
 * connection: the probe_* fields of a handshake), after the node's card:
 *
 *   0                 the card (64 bytes, common/card.h), then zeroes
 *   KRC_NAMES_OFF     KRC_NAME_BUCKETS buckets of KRC_NAME_WAYS slots
 *
 * A name lives in one slot of the bucket its hash picks, so a reader
 * READs that bucket (512 bytes) and looks at its slots. Slot, 64 bytes,
 * little-endian:
 *
 *   0   u32 seq       even: stable; odd: being written
 *   4   u32 access    REMOTE_* rights of the publication (0: empty slot)
 *   8   u8  name[24]  1 .. 23 printable ASCII bytes, then zeroes
 *   32  u32 region    the owner's id of the region (1 .. 2^24 - 1)
 *   36  u32 rkey      the publication's key: exactly @access
 *   40  u64 length    of the region
 *   48  u64 addr      its first byte's remote address (region << 40)
 *   56  u32 check     krc_hash64 of bytes 0..55, low 32 bits
 *   60  u32 seq_end   equal to seq when the slot is stable
 *
 * A slot of zeroes was never written: empty. Only the owner's kernel
 * writes the table (its MR has REMOTE_READ only): it makes seq odd,
 * writes the fields, then seq_end and seq the next even value. A READ
 * that saw a write under way finds seq odd, seq != seq_end or a wrong
 * check, and reads again. Whatever a reader decodes, it still
 * only learns a key that the owner's RNIC checks.
 */
#ifndef KRC_COMMON_NAMES_H
#define KRC_COMMON_NAMES_H

#include "compat.h"
#include "../include/uapi/krcore.h"

#define KRC_NAME_LEN		KRCORE_NAME_LEN	/* with its NUL: at most 23 bytes */
#define KRC_NAME_SLOT		64
#define KRC_NAME_WAYS		8
#define KRC_NAME_BUCKET		(KRC_NAME_WAYS * KRC_NAME_SLOT)
#define KRC_NAME_BUCKETS	120
#define KRC_NAME_SLOTS		(KRC_NAME_BUCKETS * KRC_NAME_WAYS)
#define KRC_NAMES_OFF		4096
/* The node area: the card's page and the table, 64 KiB. */
#define KRC_NODE_AREA		(KRC_NAMES_OFF + KRC_NAME_BUCKETS * KRC_NAME_BUCKET)

struct krc_name_entry {
	char name[KRC_NAME_LEN];
	u32 access;
	u32 region;
	u32 rkey;
	u64 length;
	u64 addr;
};

/* 0 if @name is 1 .. 23 printable ASCII bytes, NUL, then zeroes; -EINVAL. */
int krc_name_valid(const char name[KRC_NAME_LEN]);

/* The bucket of a valid @name: 0 .. KRC_NAME_BUCKETS - 1. */
u32 krc_name_bucket(const char name[KRC_NAME_LEN]);

/* Encode @e into a stable slot of sequence @seq (even). */
void krc_name_encode(const struct krc_name_entry *e, u32 seq,
		     u8 slot[KRC_NAME_SLOT]);

/*
 * Look @name up in a bucket as READ (@len bytes, KRC_NAME_BUCKET): 0 and
 * *e filled, -ENOENT (not there), -EAGAIN (a slot was being written: READ
 * again), -EINVAL (@len or @name wrong). A slot that decodes to nothing a
 * node could have published (bad check, rights, region, length, address,
 * name) counts as being written.
 */
int krc_name_find(const u8 *bucket, size_t len, const char name[KRC_NAME_LEN],
		  struct krc_name_entry *e);

#endif /* KRC_COMMON_NAMES_H */
