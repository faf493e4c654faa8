/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * meta_table.h - layout of the MetaServer's table of node cards.
 *
 * The table lives in memory of the MetaServer node registered for remote
 * READ. Members look cards up with one-sided RDMA READs, never with an RPC.
 *
 * Layout (all integers little-endian):
 *   [0, KRC_MT_HDR_SIZE)            header (struct krc_mt_geom, magic)
 *   slot i at KRC_MT_HDR_SIZE + i * KRC_MT_SLOT_SIZE, i < nphys
 *
 * Placement is linear probing on slots: a node's home slot is
 * krc_hash64(seed, gid) & (nslots - 1); it lives in the first free slot at
 * or after home (no wrap-around: nphys = nslots + KRC_MT_SPILL leaves room
 * for probes that pass the last home slot). Deleted entries leave a
 * tombstone; a probe ends at the first empty slot. A lookup READs the
 * window of KRC_MT_WINDOW slots starting at home: at the load factors the
 * MetaServer allows, the card or an empty slot is in that window for the
 * great majority of lookups, so one READ answers. Otherwise the reader
 * READs the next window.
 *
 * Slot layout (KRC_MT_SLOT_SIZE = 128 bytes):
 *   0   u32 seq_begin   even: stable; odd: a write is in progress
 *   4   u32 state       KRC_MT_EMPTY / KRC_MT_USED / KRC_MT_TOMB
 *   8   u8  card[64]    the card's wire encoding (common/card.h)
 *   72  u64 check       krc_hash64(seed, bytes [0, 72) with seq_begin
 *                       replaced by the final (even) sequence number)
 *   80  reserved (zero) up to 124
 *   124 u32 seq_end
 * The writer (only the MetaServer's CPU, serialised) bumps seq_begin to
 * odd, writes state/card/check, writes seq_end = seq_begin = the next even
 * number, with write barriers between the steps. A reader accepts a slot
 * only if seq_begin == seq_end, both even, and check matches: a snapshot
 * torn by a concurrent write (RDMA READ gives no atomicity or order within
 * the slot) is detected and read again.
 */
#ifndef KRC_COMMON_META_TABLE_H
#define KRC_COMMON_META_TABLE_H

#include "compat.h"
#include "../include/uapi/krcore.h"

#define KRC_MT_MAGIC		0x314c42544352524bULL	/* "KRRCTBL1" */
#define KRC_MT_VERSION		2
#define KRC_MT_HDR_SIZE		128
#define KRC_MT_SLOT_SIZE	128
#define KRC_MT_WINDOW		8	/* slots per lookup READ (1 KiB) */
#define KRC_MT_SPILL		256	/* slots past the last home slot */
#define KRC_MT_MAX_PROBE	KRC_MT_SPILL	/* longest displacement allowed */
#define KRC_MT_DIR_HDR_SIZE	64
#define KRC_MT_REC_SIZE		32

enum krc_mt_state {
	KRC_MT_EMPTY	= 0,
	KRC_MT_USED	= 1,
	KRC_MT_TOMB	= 2,
};

/* What a reader must know of a table; the header holds it too. */
struct krc_mt_geom {
	u32 nslots;		/* home positions: a power of two, >= 64 */
	u32 nphys;		/* physical slots: nslots + KRC_MT_SPILL */
	u64 seed;		/* placement and checksum seed */
	u64 incarnation;	/* the MetaServer's incarnation */
};

/* Geometry for @nslots home positions (rounded up to a power of two). */
void krc_mt_geom_init(struct krc_mt_geom *g, u32 nslots, u64 seed,
		      u64 incarnation);

/* Bytes of a whole table (header, every slot, the member directory). */
size_t krc_mt_bytes(const struct krc_mt_geom *g);

/* Byte offset of slot @slot from the table start. */
static inline u64 krc_mt_slot_offset(u32 slot)
{
	return KRC_MT_HDR_SIZE + (u64)slot * KRC_MT_SLOT_SIZE;
}

/* Byte offset of the member directory's header from the table start. */
static inline u64 krc_mt_dir_offset(const struct krc_mt_geom *g)
{
	return krc_mt_slot_offset(g->nphys);
}

/* Byte offset of directory record @i from the table start. */
static inline u64 krc_mt_rec_offset(const struct krc_mt_geom *g, u32 i)
{
	return krc_mt_dir_offset(g) + KRC_MT_DIR_HDR_SIZE +
	       (u64)i * KRC_MT_REC_SIZE;
}

/* A member as the directory lists it. */
struct krc_mt_member {
	u8 gid[16];
	u64 incarnation;
	u32 node_id;
};

/* The home slot of @gid. */
u32 krc_mt_home(const struct krc_mt_geom *g, const u8 gid[16]);

/*
 * Format an empty table of krc_mt_bytes(g) bytes at @table: header, then
 * every slot empty (state 0, seq 0). Returns 0 or -EINVAL for a bad geometry.
 */
int krc_mt_format(void *table, const struct krc_mt_geom *g);

/* Parse and check a header read from a table: 0, -EPROTO or -EINVAL. */
int krc_mt_parse_header(const void *hdr, struct krc_mt_geom *g);

/*
 * Writer: insert @card or update the entry with the same GID in place,
 * and its directory record (a new generation only if the record changed:
 * a new GID, incarnation or node id). Returns 0 with the slot in *slot,
 * or -ENOSPC when no free slot is within KRC_MT_MAX_PROBE of home,
 * -EINVAL for an invalid card.
 */
int krc_mt_insert(void *table, const struct krc_mt_geom *g,
		  const struct krcore_card *card, u32 *slot);

/*
 * Writer: remove the entry of @gid (leaving a tombstone) and its directory
 * record if its incarnation is @incarnation, or whatever it is if
 * @incarnation is 0.
 * Returns 0, -ENOENT (no entry) or -ESTALE (another incarnation).
 */
int krc_mt_remove(void *table, const struct krc_mt_geom *g, const u8 gid[16],
		  u64 incarnation);

/*
 * Reader: examine a snapshot of @n consecutive slots, the first being
 * slot @first, as READ from the table (@snap holds n * KRC_MT_SLOT_SIZE
 * bytes). Slots are examined in order:
 *   0        the card of @gid is in the snapshot: *card filled, and *slot
 *            (if not NULL) is its slot number;
 *   -ENOENT  an empty slot came first: @gid is not in the table;
 *   -EAGAIN  a slot was torn or being written: READ it again;
 *   -EINPROGRESS  neither: READ the next window, starting at first + n
 *            (-ENOENT instead if that is past the last slot).
 */
int krc_mt_scan(const void *snap, u32 first, u32 n,
		const struct krc_mt_geom *g, const u8 gid[16],
		struct krcore_card *card, u32 *slot);

/*
 * Reader: the card in one slot of a snapshot, whatever its GID (a scan of
 * the whole table, for pre-warming). 0, -ENOENT (empty or tombstone) or
 * -EAGAIN (torn or being written).
 */
int krc_mt_slot_card(const void *slot, const struct krc_mt_geom *g,
		     struct krcore_card *card);

/*
 * Reader: check a directory header as READ (KRC_MT_DIR_HDR_SIZE bytes):
 * 0 with *gen and *count, -EAGAIN (torn, or a write in progress: READ it
 * again) or -EPROTO (it passed its check but lists more records than the
 * table has slots: a MetaServer this reader does not believe).
 */
int krc_mt_dir_header(const void *hdr, const struct krc_mt_geom *g, u64 *gen,
		      u32 *count);

/*
 * Reader: one directory record as READ: 0 with *m, -EAGAIN (torn) or
 * -EPROTO (it passed its check but names no node: zero GID or
 * incarnation).
 */
int krc_mt_dir_record(const void *rec, const struct krc_mt_geom *g,
		      struct krc_mt_member *m);

/* The window a lookup READs first: slots [home, home + count). */
void krc_mt_window(const struct krc_mt_geom *g, const u8 gid[16], u32 *first,
		   u32 *count);

#endif /* KRC_COMMON_META_TABLE_H */
