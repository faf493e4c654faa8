/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kvs.h - a RACE-like one-sided hash table in one registered memory
 * region (RACE hashing, USENIX ATC'21), for the elastic key-value store
 * demo. Clients read and change it with RDMA READ, WRITE, CAS and FAA
 * only; the memory node's CPU formats it and does nothing else.
 *
 * The code is pure functions over an abstract remote memory (struct
 * krc_kvs_ops): an in-process buffer in the unit tests and the fuzzer, a
 * krcore VQ or a raw verbs QP in bench/kvs_demo.
 *
 * Region layout (region offsets; integers of the header and the KV blocks
 * little-endian, slots and the log counter 64-bit words in the byte order
 * of the hosts, as RDMA atomics see them):
 *
 *   0        +---------------------------------------------+
 *            | header (KRC_KVS_HDR_SIZE = 128)              |
 *            |  0 magic "KRCKVS01"   8 version  12 ngroups  |
 *            | 16 nlogs  20 log_size  24 seed 32 region_size|
 *            | 40 check (hash of [0, 40))                   |
 *            | 64 log_next: FAA counter, next free log area |
 *   128      +---------------------------------------------+
 *            | group 0: | main B0 | overflow B1 | main B2 | |
 *            | group 1:   3 buckets x 8 slots x 8 B = 192 B |
 *            | ... ngroups (a power of two) groups          |
 *   logs_off +---------------------------------------------+
 *            | log area 0 (log_size bytes, a power of two)  |
 *            | log area 1   KV blocks, appended by the one  |
 *            | ...          client that claimed the area    |
 *            | log area nlogs - 1                           |
 *   region_size +------------------------------------------+
 *
 * Buckets: a key has two candidate groups (two hashes); in each, one
 * side: the left combined bucket is B0 + B1 (bytes [0, 128) of the
 * group), the right one B1 + B2 (bytes [64, 192)). A combined bucket is
 * one 128-byte READ; the overflow bucket B1 is shared by both sides.
 *
 * Slot (u64; 0 = empty):
 *   63      56 55     48 47                                  0
 *   +---------+---------+-------------------------------------+
 *   |   fp    |  len/8  |  region offset of the KV block       |
 *   +---------+---------+-------------------------------------+
 *   fp: 8 bits of the key's first hash; len/8: the block's size in
 *   8-byte units (never 0, so a used slot is never 0).
 *
 * KV block (KRC_KVS_BLOCK_HDR + key and value rounded up to 8 bytes):
 *   0 u8 klen (1..16)   1 u8 vlen (0..64)   2 u16 tag 0x4b56
 *   4 u32 log area of the writer
 *   8 u64 check: krc_hash64 of the block with these 8 bytes zero
 *   16 key, value, zero padding
 * A block is written once, before a slot points to it, and never again:
 * updates write a new block and CAS the slot, deletes CAS it to 0. The
 * space of replaced blocks is not reclaimed (a demo store).
 *
 * Everything read from the region is untrusted: the header's geometry is
 * checked against the registered length, every slot's offset and length
 * against the log areas before its block is read, every block's lengths,
 * tag and checksum before it is used. An inconsistent slot or block makes
 * the operation read the buckets again (a torn or concurrent view);
 * after KRC_KVS_RETRIES views it fails with -EIO.
 */
#ifndef KRC_COMMON_KVS_H
#define KRC_COMMON_KVS_H

#include "compat.h"

#define KRC_KVS_MAGIC		0x313053564b43524bULL	/* "KRCKVS01" */
#define KRC_KVS_VERSION		1
#define KRC_KVS_HDR_SIZE	128
#define KRC_KVS_H_LOG_NEXT	64	/* offset of the FAA counter */

#define KRC_KVS_SLOTS		8	/* slots per bucket */
#define KRC_KVS_BUCKET_SIZE	(KRC_KVS_SLOTS * 8)
#define KRC_KVS_GROUP_SIZE	(3 * KRC_KVS_BUCKET_SIZE)
#define KRC_KVS_CB_SIZE		(2 * KRC_KVS_BUCKET_SIZE) /* one READ */
#define KRC_KVS_CB_SLOTS	(2 * KRC_KVS_SLOTS)
#define KRC_KVS_GROUP_SLOTS	(3 * KRC_KVS_SLOTS)

#define KRC_KVS_KEY_MAX		16
#define KRC_KVS_VAL_MAX		64
#define KRC_KVS_BLOCK_HDR	16
#define KRC_KVS_BLOCK_MIN	(KRC_KVS_BLOCK_HDR + 8)
#define KRC_KVS_BLOCK_MAX	(KRC_KVS_BLOCK_HDR + KRC_KVS_KEY_MAX + \
				 KRC_KVS_VAL_MAX)
#define KRC_KVS_BLOCK_TAG	0x4b56

#define KRC_KVS_MAX_GROUPS	0x400000U	/* 2^22 */
#define KRC_KVS_MAX_LOGS	0x10000U	/* 2^16 */
#define KRC_KVS_MIN_LOG		256U
#define KRC_KVS_MAX_LOG		0x40000000U	/* 2^30 */

#define KRC_KVS_SLOT_OFF_MASK	((1ULL << 48) - 1)

/* Views of the buckets read before an inconsistency becomes -EIO. */
#define KRC_KVS_RETRIES		8
/* CAS races lost in a row before an insert/update/delete gives -EBUSY. */
#define KRC_KVS_CAS_RETRIES	64

/* A table's geometry: what the header holds. */
struct krc_kvs_geom {
	u32 ngroups;		/* a power of two */
	u32 nlogs;		/* client log areas */
	u32 log_size;		/* bytes per log area, a power of two */
	u64 seed;		/* hashes and checksums */
	/* derived */
	u64 table_off;
	u64 logs_off;
	u64 region_size;
};

/*
 * The remote memory: byte offsets in the region, 0 or a negative errno.
 * cas and faa act on the 8-byte aligned word at @off and return the value
 * it had in *old. read_many (optional, may be NULL) issues @n READs
 * together and returns when all are done: a lookup's two bucket READs
 * then cost one round trip.
 */
struct krc_kvs_rd {
	u64 off;
	void *buf;
	u32 len;
};

struct krc_kvs_ops {
	int (*read)(void *ctx, u64 off, void *buf, u32 len);
	int (*write)(void *ctx, u64 off, const void *buf, u32 len);
	int (*cas)(void *ctx, u64 off, u64 expect, u64 desired, u64 *old);
	int (*faa)(void *ctx, u64 off, u64 add, u64 *old);
	int (*read_many)(void *ctx, const struct krc_kvs_rd *rd,
			 unsigned int n);
};

/* What a client did (the operations' costs in docs/kvs.md). */
struct krc_kvs_stats {
	u64 reads;		/* READs issued */
	u64 writes;
	u64 cas;
	u64 faa;
	u64 round_trips;	/* a read_many batch counts once */
	u64 cas_failed;		/* CAS that found another value */
	u64 retries;		/* views read again: inconsistent slot/block */
	u64 dups_removed;	/* duplicate keys removed after an insert */
};

/* One client of a table. */
struct krc_kvs {
	const struct krc_kvs_ops *ops;
	void *ctx;
	struct krc_kvs_geom g;
	s64 log;		/* claimed log area, -1: none */
	u64 log_off;		/* its region offset */
	u32 log_used;		/* bytes of it holding published blocks */
	struct krc_kvs_stats st;
};

/* Where a key may live. */
struct krc_kvs_loc {
	u64 cb_off[2];		/* region offsets of the combined buckets */
	u8 main_first[2];	/* 1: the main bucket is the first half */
	u8 fp;
};

/*
 * Geometry: 0 or -EINVAL (ngroups and log_size powers of two within the
 * limits above, 1 <= nlogs <= KRC_KVS_MAX_LOGS).
 */
int krc_kvs_geom_init(struct krc_kvs_geom *g, u32 ngroups, u32 nlogs,
		      u32 log_size, u64 seed);

/* Groups for @nkeys keys at a load of @load_pct percent of the slots. */
u32 krc_kvs_groups_for(u64 nkeys, u32 load_pct);

/*
 * Memory node: format the region (its CPU, not RDMA): header, empty
 * table and logs. @len must be at least g->region_size. 0 or -EINVAL.
 */
int krc_kvs_format(void *region, u64 len, const struct krc_kvs_geom *g);

/*
 * Parse a header READ from a region of which @region_len bytes are
 * registered: 0, -EPROTO (not a table of this version) or -EINVAL
 * (inconsistent geometry, bad check, larger than @region_len).
 */
int krc_kvs_parse_header(const void *hdr, u64 region_len,
			 struct krc_kvs_geom *g);

/*
 * Client: READ the header through @ops and check it. No log area yet:
 * one is claimed (FAA on log_next) by the first insert or update, or by
 * krc_kvs_claim_log. 0, -EPROTO, -EINVAL or the backend's error.
 */
int krc_kvs_open(struct krc_kvs *c, const struct krc_kvs_ops *ops, void *ctx,
		 u64 region_len);

/* Claim a (new) log area: 0, -ENOBUFS (none left) or a backend error. */
int krc_kvs_claim_log(struct krc_kvs *c);

/*
 * The operations. Keys are 1..KRC_KVS_KEY_MAX bytes, values
 * 0..KRC_KVS_VAL_MAX. Errors common to all: -EINVAL (arguments), -EIO
 * (slots or blocks still inconsistent after KRC_KVS_RETRIES reads: a
 * corrupt table), a backend error as the backend gave it.
 *   get:    0 and the value (*vlen its length), -ENOENT, -EMSGSIZE
 *           (@vcap too small; *vlen says how much is needed)
 *   insert: 0, -EEXIST, -ENOSPC (both combined buckets full), -ENOBUFS
 *           (no log area left), -EBUSY (KRC_KVS_CAS_RETRIES lost races)
 *   update: 0, -ENOENT, -ENOBUFS, -EBUSY
 *   delete: 0, -ENOENT, -EBUSY
 */
int krc_kvs_get(struct krc_kvs *c, const void *key, u32 klen, void *val,
		u32 vcap, u32 *vlen);
int krc_kvs_insert(struct krc_kvs *c, const void *key, u32 klen,
		   const void *val, u32 vlen);
int krc_kvs_update(struct krc_kvs *c, const void *key, u32 klen,
		   const void *val, u32 vlen);
int krc_kvs_delete(struct krc_kvs *c, const void *key, u32 klen);

/* Helpers, exposed for the tests and the fuzzer. */
void krc_kvs_locate(const struct krc_kvs_geom *g, const void *key, u32 klen,
		    struct krc_kvs_loc *loc);

static inline u64 krc_kvs_slot_pack(u8 fp, u32 size, u64 off)
{
	return ((u64)fp << 56) | ((u64)(size / 8) << 48) |
	       (off & KRC_KVS_SLOT_OFF_MASK);
}

static inline u8 krc_kvs_slot_fp(u64 slot)
{
	return (u8)(slot >> 56);
}

/*
 * The block a slot points to, checked against the geometry: 0 with its
 * region offset and size, or -EBADMSG.
 */
int krc_kvs_slot_block(const struct krc_kvs_geom *g, u64 slot, u64 *off,
		       u32 *size);

/* Size of the block of a key and value. */
static inline u32 krc_kvs_block_size(u32 klen, u32 vlen)
{
	return KRC_KVS_BLOCK_HDR + ((klen + vlen + 7) & ~7U);
}

/* Encode a block into @buf (KRC_KVS_BLOCK_MAX bytes); returns its size. */
u32 krc_kvs_block_encode(const struct krc_kvs_geom *g, const void *key,
			 u32 klen, const void *val, u32 vlen, u32 writer,
			 u8 *buf);

/*
 * Check a block of @size bytes as read: 0 with pointers into @buf for the
 * key and value, or -EBADMSG.
 */
int krc_kvs_block_decode(const struct krc_kvs_geom *g, const u8 *buf,
			 u32 size, const u8 **key, u32 *klen, const u8 **val,
			 u32 *vlen);

#endif /* KRC_COMMON_KVS_H */
