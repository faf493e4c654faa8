// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * meta_table.c - the MetaServer's table of node cards: layout, the writer
 * (format, insert, remove) and the reader's check of READ snapshots.
 * See meta_table.h for the layout and the protocol.
 */
#include "meta_table.h"
#include "card.h"
#include "hash.h"

/* Header fields (byte offsets). */
#define KRC_MT_H_MAGIC		0
#define KRC_MT_H_VERSION	8
#define KRC_MT_H_SLOT_SIZE	12
#define KRC_MT_H_NSLOTS		16
#define KRC_MT_H_NPHYS		20
#define KRC_MT_H_SEED		24
#define KRC_MT_H_INCARNATION	32
#define KRC_MT_H_WINDOW		40

/* Slot fields (byte offsets). */
#define KRC_MT_S_SEQ_BEGIN	0
#define KRC_MT_S_STATE		4
#define KRC_MT_S_CARD		8
#define KRC_MT_S_CHECK		72
#define KRC_MT_S_RESERVED	80
#define KRC_MT_S_DIR_INDEX	80	/* writer's: its record's index + 1 */
#define KRC_MT_S_SEQ_END	124
#define KRC_MT_S_COVERED	KRC_MT_S_CHECK	/* bytes the check covers */

/* Directory header and record fields (byte offsets). */
#define KRC_MT_D_GEN		0
#define KRC_MT_D_COUNT		8
#define KRC_MT_D_CHECK		16
#define KRC_MT_D_COVERED	16
#define KRC_MT_R_GID		0
#define KRC_MT_R_INCARNATION	16
#define KRC_MT_R_NODE_ID	24
#define KRC_MT_R_CHECK		28

#define KRC_MT_MIN_SLOTS	64U
#define KRC_MT_MAX_SLOTS	0x4000000U	/* 2^26 */

static bool krc_mt_geom_ok(u32 nslots, u32 nphys)
{
	if (nslots < KRC_MT_MIN_SLOTS || nslots > KRC_MT_MAX_SLOTS)
		return false;
	if (nslots & (nslots - 1))
		return false;
	return nphys == nslots + KRC_MT_SPILL;
}

void krc_mt_geom_init(struct krc_mt_geom *g, u32 nslots, u64 seed,
		      u64 incarnation)
{
	u32 n = KRC_MT_MIN_SLOTS;

	if (nslots > KRC_MT_MAX_SLOTS)
		nslots = KRC_MT_MAX_SLOTS;
	while (n < nslots)
		n <<= 1;
	g->nslots = n;
	g->nphys = n + KRC_MT_SPILL;
	g->seed = seed;
	g->incarnation = incarnation;
}

size_t krc_mt_bytes(const struct krc_mt_geom *g)
{
	u64 bytes = krc_mt_rec_offset(g, g->nphys);

	/* 0 if the table cannot be addressed on this host (32-bit) */
	if ((size_t)bytes != bytes)
		return 0;
	return (size_t)bytes;
}

u32 krc_mt_home(const struct krc_mt_geom *g, const u8 gid[16])
{
	return (u32)krc_hash64(g->seed, gid, 16) & (g->nslots - 1);
}

static u8 *krc_mt_slot(void *table, u32 slot)
{
	return (u8 *)table + krc_mt_slot_offset(slot);
}

/* The check of the first KRC_MT_S_COVERED bytes of a stable slot image. */
static u64 krc_mt_check(const struct krc_mt_geom *g, const u8 *img)
{
	return krc_hash64(g->seed, img, KRC_MT_S_COVERED);
}

static u8 *krc_mt_dir(void *table, const struct krc_mt_geom *g)
{
	return (u8 *)table + krc_mt_dir_offset(g);
}

static u8 *krc_mt_rec(void *table, const struct krc_mt_geom *g, u32 i)
{
	return (u8 *)table + krc_mt_rec_offset(g, i);
}

static void krc_mt_dir_set(u8 *d, const struct krc_mt_geom *g, u64 gen,
			   u32 count)
{
	krc_put_le64(d + KRC_MT_D_GEN, gen);
	krc_put_le32(d + KRC_MT_D_COUNT, count);
	krc_put_le64(d + KRC_MT_D_CHECK,
		     krc_hash64(g->seed, d, KRC_MT_D_COVERED));
}

/* Writer: the directory's generation to odd (a write begins). */
static u32 krc_mt_dir_begin(void *table, const struct krc_mt_geom *g)
{
	u8 *d = krc_mt_dir(table, g);
	u32 count = krc_get_le32(d + KRC_MT_D_COUNT);

	krc_mt_dir_set(d, g, krc_get_le64(d + KRC_MT_D_GEN) + 1, count);
	krc_wmb();
	return count;
}

/* Writer: @count records from now on, the generation to the next even. */
static void krc_mt_dir_end(void *table, const struct krc_mt_geom *g, u32 count)
{
	u8 *d = krc_mt_dir(table, g);

	krc_wmb();
	krc_mt_dir_set(d, g, krc_get_le64(d + KRC_MT_D_GEN) + 1, count);
	krc_wmb();
}

static void krc_mt_rec_write(u8 *r, const struct krc_mt_geom *g,
			     const u8 gid[16], u64 incarnation, u32 node_id)
{
	memcpy(r + KRC_MT_R_GID, gid, 16);
	krc_put_le64(r + KRC_MT_R_INCARNATION, incarnation);
	krc_put_le32(r + KRC_MT_R_NODE_ID, node_id);
	krc_put_le32(r + KRC_MT_R_CHECK,
		     (u32)krc_hash64(g->seed, r, KRC_MT_R_CHECK));
}

int krc_mt_format(void *table, const struct krc_mt_geom *g)
{
	u8 img[KRC_MT_S_COVERED];
	u8 *hdr = table;
	u64 check;
	u32 i;

	if (!krc_mt_geom_ok(g->nslots, g->nphys))
		return -EINVAL;
	/*
	 * An empty slot is stable too (seq 0, state EMPTY, zero card), so a
	 * reader can verify it like any other: its check is that of zeros.
	 */
	memset(img, 0, sizeof(img));
	check = krc_mt_check(g, img);
	for (i = 0; i < g->nphys; i++) {
		u8 *s = krc_mt_slot(table, i);

		memset(s, 0, KRC_MT_SLOT_SIZE);
		krc_put_le64(s + KRC_MT_S_CHECK, check);
	}
	memset(krc_mt_dir(table, g), 0,
	       krc_mt_rec_offset(g, g->nphys) - krc_mt_dir_offset(g));
	krc_mt_dir_set(krc_mt_dir(table, g), g, g->seed & ~1ULL, 0);
	krc_wmb();
	memset(hdr, 0, KRC_MT_HDR_SIZE);
	krc_put_le32(hdr + KRC_MT_H_VERSION, KRC_MT_VERSION);
	krc_put_le32(hdr + KRC_MT_H_SLOT_SIZE, KRC_MT_SLOT_SIZE);
	krc_put_le32(hdr + KRC_MT_H_NSLOTS, g->nslots);
	krc_put_le32(hdr + KRC_MT_H_NPHYS, g->nphys);
	krc_put_le64(hdr + KRC_MT_H_SEED, g->seed);
	krc_put_le64(hdr + KRC_MT_H_INCARNATION, g->incarnation);
	krc_put_le32(hdr + KRC_MT_H_WINDOW, KRC_MT_WINDOW);
	krc_put_le64(hdr + KRC_MT_H_MAGIC, KRC_MT_MAGIC);
	return 0;
}

int krc_mt_parse_header(const void *hdr, struct krc_mt_geom *g)
{
	const u8 *h = hdr;
	u32 nslots, nphys;

	if (krc_get_le64(h + KRC_MT_H_MAGIC) != KRC_MT_MAGIC)
		return -EPROTO;
	if (krc_get_le32(h + KRC_MT_H_VERSION) != KRC_MT_VERSION)
		return -EPROTO;
	/* a layout this reader does not know */
	if (krc_get_le32(h + KRC_MT_H_SLOT_SIZE) != KRC_MT_SLOT_SIZE ||
	    krc_get_le32(h + KRC_MT_H_WINDOW) != KRC_MT_WINDOW)
		return -EPROTO;
	nslots = krc_get_le32(h + KRC_MT_H_NSLOTS);
	nphys = krc_get_le32(h + KRC_MT_H_NPHYS);
	if (!krc_mt_geom_ok(nslots, nphys))
		return -EINVAL;
	g->nslots = nslots;
	g->nphys = nphys;
	g->seed = krc_get_le64(h + KRC_MT_H_SEED);
	g->incarnation = krc_get_le64(h + KRC_MT_H_INCARNATION);
	return 0;
}

/*
 * Rewrite slot @s to @state with the card bytes @card (NULL: zeros), with
 * the seqlock protocol: seq_begin odd, payload and check (computed for the
 * final sequence number), seq_end, seq_begin, each step ordered after the
 * previous one. A reader that sees seq_begin == seq_end, even, and a check
 * that matches has a snapshot of one stable version of the slot.
 */
static void krc_mt_write_slot(u8 *s, const struct krc_mt_geom *g, u32 state,
			      const u8 *card)
{
	u8 img[KRC_MT_S_COVERED];
	u32 seq = krc_get_le32(s + KRC_MT_S_SEQ_BEGIN) & ~1U;

	krc_put_le32(img + KRC_MT_S_SEQ_BEGIN, seq + 2);
	krc_put_le32(img + KRC_MT_S_STATE, state);
	if (card)
		memcpy(img + KRC_MT_S_CARD, card, KRCORE_CARD_SIZE);
	else
		memset(img + KRC_MT_S_CARD, 0, KRCORE_CARD_SIZE);

	krc_put_le32(s + KRC_MT_S_SEQ_BEGIN, seq + 1);
	krc_wmb();
	memcpy(s + KRC_MT_S_STATE, img + KRC_MT_S_STATE,
	       KRC_MT_S_COVERED - KRC_MT_S_STATE);
	krc_put_le64(s + KRC_MT_S_CHECK, krc_mt_check(g, img));
	memset(s + KRC_MT_S_RESERVED, 0, KRC_MT_S_SEQ_END - KRC_MT_S_RESERVED);
	krc_wmb();
	krc_put_le32(s + KRC_MT_S_SEQ_END, seq + 2);
	krc_wmb();
	krc_put_le32(s + KRC_MT_S_SEQ_BEGIN, seq + 2);
}

static u32 krc_mt_state_of(const u8 *s)
{
	return krc_get_le32(s + KRC_MT_S_STATE);
}

/* The gid is the first field of the wire card. */
static bool krc_mt_has_gid(const u8 *s, const u8 gid[16])
{
	return !memcmp(s + KRC_MT_S_CARD, gid, 16);
}

/*
 * Writer: the slot holding @gid, or -ENOENT; *hole (if not NULL) gets the
 * first tombstone or empty slot of the probe, or nphys if none.
 */
static int krc_mt_find(void *table, const struct krc_mt_geom *g,
		       const u8 gid[16], u32 *hole)
{
	u32 home = krc_mt_home(g, gid);
	u32 end = home + KRC_MT_MAX_PROBE;
	u32 i, state;

	if (end > g->nphys)
		end = g->nphys;
	if (hole)
		*hole = g->nphys;
	for (i = home; i < end; i++) {
		const u8 *s = krc_mt_slot(table, i);

		state = krc_mt_state_of(s);
		if (state == KRC_MT_USED) {
			if (krc_mt_has_gid(s, gid))
				return (int)i;
			continue;
		}
		if (hole && *hole == g->nphys)
			*hole = i;
		if (state == KRC_MT_EMPTY)
			break;
	}
	return -ENOENT;
}

/* Writer: the directory index of the entry in slot @s, or -1. */
static int krc_mt_dir_index(const u8 *s, u32 count)
{
	u32 idx = krc_get_le32(s + KRC_MT_S_DIR_INDEX);

	return idx && idx <= count ? (int)(idx - 1) : -1;
}

/*
 * Writer: the directory record of @card (slot @s, just rewritten, has
 * lost its index): in place if it has one, else a new one at the end.
 */
static void krc_mt_dir_put(void *table, const struct krc_mt_geom *g, u8 *s,
			   int idx, const struct krcore_card *card)
{
	u32 count = krc_get_le32(krc_mt_dir(table, g) + KRC_MT_D_COUNT);
	u8 *r;

	if (idx >= 0) {
		r = krc_mt_rec(table, g, (u32)idx);
		if (krc_get_le64(r + KRC_MT_R_INCARNATION) !=
		    card->incarnation ||
		    krc_get_le32(r + KRC_MT_R_NODE_ID) != card->node_id) {
			krc_mt_dir_begin(table, g);
			krc_mt_rec_write(r, g, card->gid, card->incarnation,
					 card->node_id);
			krc_mt_dir_end(table, g, count);
		}
	} else {
		/* count < nphys: every record has a slot of its own */
		count = krc_mt_dir_begin(table, g);
		idx = (int)count;
		krc_mt_rec_write(krc_mt_rec(table, g, count), g, card->gid,
				 card->incarnation, card->node_id);
		krc_mt_dir_end(table, g, count + 1);
	}
	krc_put_le32(s + KRC_MT_S_DIR_INDEX, (u32)idx + 1);
}

/* Writer: drop directory record @idx, the last one taking its place. */
static void krc_mt_dir_drop(void *table, const struct krc_mt_geom *g, int idx)
{
	u32 last = krc_mt_dir_begin(table, g) - 1;
	u8 *r = krc_mt_rec(table, g, (u32)idx);
	int moved;

	if ((u32)idx != last) {
		memcpy(r, krc_mt_rec(table, g, last), KRC_MT_REC_SIZE);
		moved = krc_mt_find(table, g, r + KRC_MT_R_GID, NULL);
		if (moved >= 0)
			krc_put_le32(krc_mt_slot(table, (u32)moved) +
				     KRC_MT_S_DIR_INDEX, (u32)idx + 1);
	}
	memset(krc_mt_rec(table, g, last), 0, KRC_MT_REC_SIZE);
	krc_mt_dir_end(table, g, last);
}

static u32 krc_mt_dir_count(void *table, const struct krc_mt_geom *g)
{
	return krc_get_le32(krc_mt_dir(table, g) + KRC_MT_D_COUNT);
}

int krc_mt_insert(void *table, const struct krc_mt_geom *g,
		  const struct krcore_card *card, u32 *slot)
{
	u8 wire[KRCORE_CARD_SIZE];
	int i, idx = -1;
	u32 hole;
	u8 *s;

	if (krc_card_check(card))
		return -EINVAL;
	if (!krc_mt_geom_ok(g->nslots, g->nphys))
		return -EINVAL;
	i = krc_mt_find(table, g, card->gid, &hole);
	if (i < 0) {
		if (hole >= g->nphys)
			return -ENOSPC;
		i = (int)hole;
	} else {
		idx = krc_mt_dir_index(krc_mt_slot(table, (u32)i),
				       krc_mt_dir_count(table, g));
	}
	s = krc_mt_slot(table, (u32)i);
	krc_card_encode(card, wire);
	krc_mt_write_slot(s, g, KRC_MT_USED, wire);
	krc_mt_dir_put(table, g, s, idx, card);
	if (slot)
		*slot = (u32)i;
	return 0;
}

int krc_mt_remove(void *table, const struct krc_mt_geom *g, const u8 gid[16],
		  u64 incarnation)
{
	const u8 *s;
	int i, idx;

	if (!krc_mt_geom_ok(g->nslots, g->nphys))
		return -EINVAL;
	i = krc_mt_find(table, g, gid, NULL);
	if (i < 0)
		return -ENOENT;
	s = krc_mt_slot(table, (u32)i);
	/* the card's incarnation: wire offset 40 */
	if (incarnation &&
	    krc_get_le64(s + KRC_MT_S_CARD + 40) != incarnation)
		return -ESTALE;
	idx = krc_mt_dir_index(s, krc_mt_dir_count(table, g));
	krc_mt_write_slot(krc_mt_slot(table, (u32)i), g, KRC_MT_TOMB, NULL);
	if (idx >= 0)
		krc_mt_dir_drop(table, g, idx);
	return 0;
}

/* Reader: true if slot image @s is one stable version of a slot. */
static bool krc_mt_stable(const u8 *s, const struct krc_mt_geom *g)
{
	u32 seq = krc_get_le32(s + KRC_MT_S_SEQ_BEGIN);

	if (seq & 1 || seq != krc_get_le32(s + KRC_MT_S_SEQ_END))
		return false;
	return krc_get_le64(s + KRC_MT_S_CHECK) == krc_mt_check(g, s);
}

int krc_mt_scan(const void *snap, u32 first, u32 n,
		const struct krc_mt_geom *g, const u8 gid[16],
		struct krcore_card *card, u32 *slot)
{
	const u8 *s = snap;
	u32 i;

	for (i = 0; i < n; i++, s += KRC_MT_SLOT_SIZE) {
		if (!krc_mt_stable(s, g))
			return -EAGAIN;
		switch (krc_mt_state_of(s)) {
		case KRC_MT_EMPTY:
			return -ENOENT;
		case KRC_MT_USED:
			if (!krc_mt_has_gid(s, gid))
				break;
			/* a stable slot holds a card that passed the check */
			if (krc_card_decode(s + KRC_MT_S_CARD, card))
				return -EAGAIN;
			if (slot)
				*slot = first + i;
			return 0;
		default:
			/* a tombstone (or a state of a later version) */
			break;
		}
	}
	if ((u64)first + n >= g->nphys)
		return -ENOENT;
	return -EINPROGRESS;
}

int krc_mt_slot_card(const void *slot, const struct krc_mt_geom *g,
		     struct krcore_card *card)
{
	const u8 *s = slot;

	if (!krc_mt_stable(s, g))
		return -EAGAIN;
	if (krc_mt_state_of(s) != KRC_MT_USED)
		return -ENOENT;
	if (krc_card_decode(s + KRC_MT_S_CARD, card))
		return -EAGAIN;
	return 0;
}

void krc_mt_window(const struct krc_mt_geom *g, const u8 gid[16], u32 *first,
		   u32 *count)
{
	u32 home = krc_mt_home(g, gid);

	*first = home;
	if (home >= g->nphys)
		*count = 0;
	else if (g->nphys - home < KRC_MT_WINDOW)
		*count = g->nphys - home;
	else
		*count = KRC_MT_WINDOW;
}

int krc_mt_dir_header(const void *hdr, const struct krc_mt_geom *g, u64 *gen,
		      u32 *count)
{
	const u8 *d = hdr;

	if (krc_get_le64(d + KRC_MT_D_CHECK) !=
	    krc_hash64(g->seed, d, KRC_MT_D_COVERED))
		return -EAGAIN;
	*gen = krc_get_le64(d + KRC_MT_D_GEN);
	if (*gen & 1)
		return -EAGAIN;
	*count = krc_get_le32(d + KRC_MT_D_COUNT);
	if (*count > g->nphys || krc_get_le32(d + KRC_MT_D_COUNT + 4))
		return -EPROTO;
	return 0;
}

int krc_mt_dir_record(const void *rec, const struct krc_mt_geom *g,
		      struct krc_mt_member *m)
{
	static const u8 zero[16];
	const u8 *r = rec;

	if (krc_get_le32(r + KRC_MT_R_CHECK) !=
	    (u32)krc_hash64(g->seed, r, KRC_MT_R_CHECK))
		return -EAGAIN;
	memcpy(m->gid, r + KRC_MT_R_GID, 16);
	m->incarnation = krc_get_le64(r + KRC_MT_R_INCARNATION);
	m->node_id = krc_get_le32(r + KRC_MT_R_NODE_ID);
	if (!memcmp(m->gid, zero, 16) || !m->incarnation)
		return -EPROTO;
	return 0;
}
