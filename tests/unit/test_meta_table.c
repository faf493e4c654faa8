// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_meta_table.c - the MetaServer's table of node cards
 * (common/meta_table.c) and the hash of the wire formats (common/hash.c),
 * no VM needed. Lookups go through a helper that does what a remote member
 * does: copy a window of slots out of the table (one RDMA READ) and scan
 * that snapshot, reading the next window while the scan asks for it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "card.h"
#include "hash.h"
#include "meta_table.h"

#define SLOT		KRC_MT_SLOT_SIZE
#define CHUNK		8			/* RDMA READ tearing granule */
#define NCHUNKS		(SLOT / CHUNK)
#define MAX_READS	(KRC_MT_MAX_PROBE / KRC_MT_WINDOW + 1)
#define HIST		64

/* xorshift64*, fixed seeds: every run tests the same cases. */
static u64 rnd(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static void rnd_bytes(u64 *s, u8 *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(rnd(s) >> 56);
}

/* A valid card of node @i: GID ::ffff:10.x.y.z with x.y.z = i. */
static void make_card(struct krcore_card *c, u32 i)
{
	const u8 ip[4] = { 10, (u8)(i >> 16), (u8)(i >> 8), (u8)i };

	memset(c, 0, sizeof(*c));
	krc_gid_from_ipv4(c->gid, ip);
	c->mac[0] = 0x52;
	c->mac[1] = 0x54;
	c->mac[3] = (u8)(i >> 16);
	c->mac[4] = (u8)(i >> 8);
	c->mac[5] = (u8)i;
	c->card_version = KRCORE_CARD_VERSION;
	c->flags = KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4;
	c->node_id = krc_gid_node_id(c->gid);
	c->ud_qpn = 2 + (i & 0xfffff);
	c->ud_qkey = 0x4b524331;
	c->port_num = 1;
	c->active_mtu = 3;
	c->incarnation = 0x1000000000ULL + i;
}

struct table {
	struct krc_mt_geom g;	/* the MetaServer's */
	struct krc_mt_geom rg;	/* a member's, parsed from the header */
	u8 *mem;
	size_t bytes;
};

static void table_new(struct table *t, u32 nslots, u64 seed)
{
	krc_mt_geom_init(&t->g, nslots, seed, 0x5eed0001);
	t->bytes = krc_mt_bytes(&t->g);
	t->mem = malloc(t->bytes);
	assert_non_null(t->mem);
	memset(t->mem, 0xa5, t->bytes);		/* format must write it all */
	assert_int_equal(krc_mt_format(t->mem, &t->g), 0);
	assert_int_equal(krc_mt_parse_header(t->mem, &t->rg), 0);
	assert_memory_equal(&t->g, &t->rg, sizeof(t->g));
}

static void table_free(struct table *t)
{
	free(t->mem);
	t->mem = NULL;
}

static u8 *slot_ptr(const struct table *t, u32 slot)
{
	return t->mem + krc_mt_slot_offset(slot);
}

/*
 * Look @gid up as a remote member would: READ the first window into a
 * snapshot, scan it, READ the next window on -EINPROGRESS. *reads counts
 * the READs. Single-threaded here, so -EAGAIN is returned, not retried.
 */
static int lookup(const struct table *t, const u8 gid[16],
		  struct krcore_card *card, u32 *slot, unsigned int *reads)
{
	u8 snap[KRC_MT_WINDOW * SLOT];
	u32 first, count;
	int ret;

	*reads = 0;
	krc_mt_window(&t->rg, gid, &first, &count);
	assert_int_equal(first, krc_mt_home(&t->rg, gid));
	for (;;) {
		assert_true(count >= 1 && count <= KRC_MT_WINDOW);
		assert_true(first + count <= t->rg.nphys);
		assert_true(*reads <= t->rg.nphys);
		memcpy(snap, slot_ptr(t, first), (size_t)count * SLOT);
		(*reads)++;
		ret = krc_mt_scan(snap, first, count, &t->rg, gid, card, slot);
		if (ret != -EINPROGRESS)
			return ret;
		first += count;
		count = t->rg.nphys - first;
		if (count > KRC_MT_WINDOW)
			count = KRC_MT_WINDOW;
	}
}

/* @c is in the table, at *slot if slot is not NULL; returns the READs. */
static unsigned int expect_found(const struct table *t,
				 const struct krcore_card *c, const u32 *slot)
{
	struct krcore_card got;
	unsigned int reads;
	u32 at = ~0U;

	assert_int_equal(lookup(t, c->gid, &got, &at, &reads), 0);
	assert_memory_equal(&got, c, sizeof(got));
	if (slot)
		assert_int_equal(at, *slot);
	return reads;
}

static unsigned int expect_absent(const struct table *t, const u8 gid[16])
{
	struct krcore_card got;
	unsigned int reads;

	assert_int_equal(lookup(t, gid, &got, NULL, &reads), -ENOENT);
	return reads;
}

/*
 * The member directory lists exactly the cards of the USED slots, once
 * each (its header and every record pass their checks); returns its gen.
 */
static u64 assert_dir_consistent(const struct table *t)
{
	const u8 *d = t->mem + krc_mt_dir_offset(&t->rg);
	struct krc_mt_member m;
	struct krcore_card c;
	u32 i, count, used;
	unsigned int reads;
	u64 gen;

	assert_int_equal(krc_mt_dir_header(d, &t->rg, &gen, &count), 0);
	for (i = 0; i < count; i++) {
		const u8 *r = t->mem + krc_mt_rec_offset(&t->rg, i);
		u32 slot;

		assert_int_equal(krc_mt_dir_record(r, &t->rg, &m), 0);
		assert_int_equal(lookup(t, m.gid, &c, &slot, &reads), 0);
		assert_true(c.incarnation == m.incarnation);
		assert_int_equal(c.node_id, m.node_id);
		/* the writer's back pointer */
		assert_int_equal(krc_get_le32(slot_ptr(t, slot) + 80), i + 1);
	}
	for (i = count; i < t->rg.nphys; i++) {
		const u8 *r = t->mem + krc_mt_rec_offset(&t->rg, i);
		static const u8 zero[KRC_MT_REC_SIZE];

		assert_memory_equal(r, zero, KRC_MT_REC_SIZE);
	}
	used = 0;
	for (i = 0; i < t->rg.nphys; i++)
		used += krc_get_le32(slot_ptr(t, i) + 4) == KRC_MT_USED;
	assert_int_equal(count, used);
	return gen;
}

/*
 * Every slot is stable, and every USED slot is within KRC_MT_MAX_PROBE of
 * its home with no empty slot between home and it (else lookups miss it).
 */
static void assert_table_consistent(const struct table *t)
{
	static const u8 nogid[16];
	struct krcore_card c;
	u32 i, j, home;
	int ret;

	for (i = 0; i < t->g.nphys; i++) {
		const u8 *s = slot_ptr(t, i);

		ret = krc_mt_scan(s, i, 1, &t->rg, nogid, &c, NULL);
		assert_int_not_equal(ret, -EAGAIN);
		if (krc_get_le32(s + 4) != KRC_MT_USED)
			continue;
		home = krc_mt_home(&t->g, s + 8);
		assert_true(home <= i && i - home < KRC_MT_MAX_PROBE);
		for (j = home; j < i; j++)
			assert_int_not_equal(krc_get_le32(slot_ptr(t, j) + 4),
					     KRC_MT_EMPTY);
	}
	assert_dir_consistent(t);
}

static void print_hist(const char *what, const unsigned int *hist,
		       unsigned int total)
{
	unsigned int r;

	print_message("READs per lookup, %s (%u lookups):\n", what, total);
	for (r = 0; r < HIST; r++)
		if (hist[r])
			print_message("  %2u READ%s: %6u (%5.2f%%)\n", r,
				      r == 1 ? " " : "s", hist[r],
				      100.0 * hist[r] / total);
}

/* 1. geometry and header */

static void test_geometry(void **state)
{
	static const struct { u32 in, out; } round[] = {
		{ 0, 64 }, { 1, 64 }, { 64, 64 }, { 65, 128 },
		{ 100000, 131072 }, { 131072, 131072 }, { 1U << 26, 1U << 26 },
		{ (1U << 26) + 1, 1U << 26 }, { 0xffffffffU, 1U << 26 },
	};
	struct krc_mt_geom g;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(round); i++) {
		krc_mt_geom_init(&g, round[i].in, 7, 9);
		assert_int_equal(g.nslots, round[i].out);
		assert_int_equal(g.nphys, round[i].out + KRC_MT_SPILL);
		assert_true(g.seed == 7 && g.incarnation == 9);
	}
	krc_mt_geom_init(&g, 131072, 1, 1);
	assert_int_equal(krc_mt_bytes(&g),
			 KRC_MT_HDR_SIZE + (131072 + KRC_MT_SPILL) * SLOT +
			 KRC_MT_DIR_HDR_SIZE +
			 (131072 + KRC_MT_SPILL) * KRC_MT_REC_SIZE);
	assert_int_equal(krc_mt_dir_offset(&g), krc_mt_slot_offset(g.nphys));
	assert_int_equal(krc_mt_rec_offset(&g, 2),
			 krc_mt_dir_offset(&g) + KRC_MT_DIR_HDR_SIZE + 64);
	assert_int_equal(krc_mt_slot_offset(0), KRC_MT_HDR_SIZE);
	assert_int_equal(krc_mt_slot_offset(3), KRC_MT_HDR_SIZE + 3 * SLOT);
}

static void test_header(void **state)
{
	static const u8 zero72[72];
	struct krc_mt_geom g, p, bad;
	u8 hdr[KRC_MT_HDR_SIZE];
	struct table t;
	u32 i;

	(void)state;
	table_new(&t, 64, 0x0123456789abcdefULL);
	g = t.g;
	/* the wire form, byte by byte */
	assert_memory_equal(t.mem, "KRRCTBL1", 8);
	assert_int_equal(krc_get_le32(t.mem + 8), KRC_MT_VERSION);
	assert_int_equal(krc_get_le32(t.mem + 12), SLOT);
	assert_int_equal(krc_get_le32(t.mem + 16), 64);
	assert_int_equal(krc_get_le32(t.mem + 20), 64 + KRC_MT_SPILL);
	assert_int_equal(t.mem[24], 0xef);
	assert_int_equal(t.mem[31], 0x01);
	assert_true(krc_get_le64(t.mem + 32) == 0x5eed0001);
	assert_int_equal(krc_get_le32(t.mem + 40), KRC_MT_WINDOW);
	for (i = 44; i < KRC_MT_HDR_SIZE; i++)
		assert_int_equal(t.mem[i], 0);
	/* every slot empty, stable and verifiable */
	for (i = 0; i < g.nphys; i++) {
		const u8 *s = slot_ptr(&t, i);

		assert_memory_equal(s, zero72, 72);
		assert_true(krc_get_le64(s + 72) == krc_hash64(g.seed, s, 72));
		assert_memory_equal(s + 80, zero72, 48);
	}
	assert_int_equal(t.bytes, KRC_MT_HDR_SIZE + g.nphys * SLOT +
			 KRC_MT_DIR_HDR_SIZE + g.nphys * KRC_MT_REC_SIZE);

	memcpy(hdr, t.mem, sizeof(hdr));
	assert_int_equal(krc_mt_parse_header(hdr, &p), 0);
	assert_memory_equal(&p, &g, sizeof(g));

	hdr[0] ^= 1;
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EPROTO);
	memcpy(hdr, t.mem, sizeof(hdr));
	krc_put_le32(hdr + 8, KRC_MT_VERSION + 1);
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EPROTO);
	memcpy(hdr, t.mem, sizeof(hdr));
	krc_put_le32(hdr + 12, 64);			/* slot size */
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EPROTO);
	memcpy(hdr, t.mem, sizeof(hdr));
	krc_put_le32(hdr + 40, 16);			/* window */
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EPROTO);
	memcpy(hdr, t.mem, sizeof(hdr));
	krc_put_le32(hdr + 16, 96);			/* not a power of two */
	krc_put_le32(hdr + 20, 96 + KRC_MT_SPILL);
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EINVAL);
	krc_put_le32(hdr + 16, 32);			/* too small */
	krc_put_le32(hdr + 20, 32 + KRC_MT_SPILL);
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EINVAL);
	krc_put_le32(hdr + 16, 0);
	krc_put_le32(hdr + 20, KRC_MT_SPILL);
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EINVAL);
	krc_put_le32(hdr + 16, 1U << 27);		/* too large */
	krc_put_le32(hdr + 20, (1U << 27) + KRC_MT_SPILL);
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EINVAL);
	krc_put_le32(hdr + 16, 1U << 26);		/* the largest */
	krc_put_le32(hdr + 20, (1U << 26) + KRC_MT_SPILL);
	assert_int_equal(krc_mt_parse_header(hdr, &p), 0);
	assert_int_equal(p.nslots, 1U << 26);
	krc_put_le32(hdr + 20, (1U << 26) + KRC_MT_SPILL - 1);	/* nphys */
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EINVAL);
	memcpy(hdr, t.mem, sizeof(hdr));
	krc_put_le32(hdr + 20, 64);
	assert_int_equal(krc_mt_parse_header(hdr, &p), -EINVAL);

	/* the writer refuses a geometry no reader would accept */
	bad = g;
	bad.nslots = 96;
	bad.nphys = 96 + KRC_MT_SPILL;
	assert_int_equal(krc_mt_format(t.mem, &bad), -EINVAL);
	bad = g;
	bad.nphys++;
	assert_int_equal(krc_mt_format(t.mem, &bad), -EINVAL);
	table_free(&t);
}

/* 2. the hash */

static unsigned int popcount64(u64 x)
{
	return (unsigned int)__builtin_popcountll(x);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void assert_distinct(u64 *v, size_t n)
{
	size_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 1; i < n; i++)
		assert_true(v[i - 1] != v[i]);
}

static void test_hash_properties(void **state)
{
	static const size_t lens[] = { 1, 7, 8, 9, 16, 72, 100 };
	u8 data[128], buf[136];
	u64 h, v[4096], seed = 0x9d2c5680a1b2c3d4ULL;
	unsigned long flips, bits;
	size_t i, k, len;

	(void)state;
	rnd_bytes(&seed, data, sizeof(data));

	/* pinned values: the hash is part of the wire format */
	assert_true(krc_hash64(0, "", 0) == krc_hash64(0, data, 0));
	assert_true(krc_hash64(0, "", 0) == 0x155c40b635671f15ULL);
	assert_true(krc_hash64(1, "krcore", 6) == 0x233ab76c3d7861ebULL);
	h = krc_hash64(0x0123456789abcdefULL, "0123456789abcdef0123456789", 26);
	assert_true(h == 0x8cf9508f3f40868dULL);

	/* deterministic, and independent of the alignment of the input */
	h = krc_hash64(42, data, 72);
	assert_true(krc_hash64(42, data, 72) == h);
	for (i = 1; i < 8; i++) {
		memcpy(buf + i, data, 72);
		assert_true(krc_hash64(42, buf + i, 72) == h);
	}

	/* different seeds, different lengths: different values */
	for (i = 0; i < ARRAY_SIZE(v); i++)
		v[i] = krc_hash64(i, data, 16);
	assert_distinct(v, ARRAY_SIZE(v));
	memset(buf, 0, sizeof(buf));
	for (i = 0; i <= 128; i++)
		v[i] = krc_hash64(0, buf, i);
	assert_distinct(v, 129);

	/* every input bit and every seed bit matters, about half the output */
	flips = 0;
	bits = 0;
	for (k = 0; k < ARRAY_SIZE(lens); k++) {
		len = lens[k];
		h = krc_hash64(5, data, len);
		for (i = 0; i < len * 8; i++) {
			data[i / 8] ^= (u8)(1 << (i % 8));
			v[0] = krc_hash64(5, data, len);
			data[i / 8] ^= (u8)(1 << (i % 8));
			assert_true(v[0] != h);
			flips += popcount64(v[0] ^ h);
			bits++;
		}
	}
	for (i = 0; i < 64; i++) {
		h = krc_hash64(0x1234, data, 16);
		v[0] = krc_hash64(0x1234 ^ (1ULL << i), data, 16);
		assert_true(v[0] != h);
		flips += popcount64(v[0] ^ h);
		bits++;
	}
	print_message("hash: a one-bit change flips %.2f of 64 output bits on average\n",
		      (double)flips / bits);
	assert_true(flips > 30 * bits && flips < 34 * bits);
}

static void bins_check(const char *what, const unsigned int *bins,
		       unsigned int nbins, unsigned int n)
{
	unsigned int i, lo = ~0U, hi = 0, mean = n / nbins;

	for (i = 0; i < nbins; i++) {
		if (bins[i] < lo)
			lo = bins[i];
		if (bins[i] > hi)
			hi = bins[i];
	}
	print_message("hash: %u %s gids in %u bins: mean %u, min %u, max %u\n",
		      n, what, nbins, mean, lo, hi);
	assert_true(hi <= 2 * mean);
	assert_true(lo >= mean / 2);
}

static void test_hash_distribution(void **state)
{
	static unsigned int low[1024], high[1024], seq[1024];
	struct krcore_card c;
	u64 s = 0x51ab7e5eedULL, h;
	const unsigned int n = 100000;
	unsigned int i;
	u8 gid[16];

	(void)state;
	for (i = 0; i < n; i++) {
		rnd_bytes(&s, gid, sizeof(gid));
		h = krc_hash64(0x77, gid, 16);
		low[h & 1023]++;
		high[h >> 54]++;
		make_card(&c, i);	/* structured: 10.x.y.z */
		seq[krc_hash64(0x77, c.gid, 16) & 1023]++;
	}
	bins_check("random (low bits)", low, 1024, n);
	bins_check("random (high bits)", high, 1024, n);
	bins_check("10.x.y.z", seq, 1024, n);
}

/* 3. insert, lookup, update, remove */

static void test_basics(void **state)
{
	struct krcore_card a, b, x, y, z, got;
	unsigned int reads;
	struct table t;
	u32 sa, sb, sx, sy, sz, i, hx;
	u8 *copy, *s;

	(void)state;
	table_new(&t, 64, 0xfeedULL);
	make_card(&a, 1);
	make_card(&b, 2);

	assert_int_equal(lookup(&t, a.gid, &got, NULL, &reads), -ENOENT);
	assert_int_equal(reads, 1);
	assert_int_equal(krc_mt_remove(t.mem, &t.g, a.gid, 0), -ENOENT);

	assert_int_equal(krc_mt_insert(t.mem, &t.g, &a, &sa), 0);
	assert_int_equal(sa, krc_mt_home(&t.g, a.gid));
	assert_int_equal(expect_found(&t, &a, &sa), 1);
	/* the slot, byte by byte */
	s = slot_ptr(&t, sa);
	assert_int_equal(krc_get_le32(s), 2);
	assert_int_equal(krc_get_le32(s + 4), KRC_MT_USED);
	{
		u8 wire[KRCORE_CARD_SIZE], zero[44] = { 0 };

		krc_card_encode(&a, wire);
		assert_memory_equal(s + 8, wire, sizeof(wire));
		assert_true(krc_get_le64(s + 72) == krc_hash64(t.g.seed, s, 72));
		/* the writer's: directory record 0 */
		assert_int_equal(krc_get_le32(s + 80), 1);
		assert_memory_equal(s + 84, zero, sizeof(zero) - 4);
		assert_int_equal(krc_get_le32(s + 124), 2);
	}
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &b, NULL), 0);
	sb = ~0U;
	expect_found(&t, &b, NULL);
	assert_int_equal(lookup(&t, b.gid, &got, &sb, &reads), 0);
	assert_int_not_equal(sb, sa);

	/* invalid cards are refused and change nothing */
	copy = malloc(t.bytes);
	assert_non_null(copy);
	memcpy(copy, t.mem, t.bytes);
	x = a;
	x.incarnation = 0;
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &x, NULL), -EINVAL);
	x = a;
	x.card_version = 2;
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &x, NULL), -EINVAL);
	x = a;
	x.flags = KRCORE_CARD_F_ROCE_V2;	/* IPv4-mapped GID, no F_IPV4 */
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &x, NULL), -EINVAL);
	assert_memory_equal(copy, t.mem, t.bytes);

	/* update in place: same slot, new card, next sequence number */
	x = a;
	x.incarnation++;
	x.ud_qpn = 0x777;
	x.mac[5] ^= 0xff;
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &x, &sx), 0);
	assert_int_equal(sx, sa);
	assert_int_equal(krc_get_le32(s), 4);
	assert_int_equal(krc_get_le32(s + 124), 4);
	expect_found(&t, &x, &sa);

	/* remove: wrong incarnation, absent gid, then for real */
	assert_int_equal(krc_mt_remove(t.mem, &t.g, a.gid, a.incarnation),
			 -ESTALE);
	expect_found(&t, &x, &sa);
	make_card(&y, 3);
	assert_int_equal(krc_mt_remove(t.mem, &t.g, y.gid, 0), -ENOENT);
	assert_int_equal(krc_mt_remove(t.mem, &t.g, a.gid, x.incarnation), 0);
	assert_int_equal(krc_get_le32(s + 4), KRC_MT_TOMB);
	assert_int_equal(krc_get_le32(s), 6);
	assert_true(krc_get_le64(s + 72) == krc_hash64(t.g.seed, s, 72));
	expect_absent(&t, a.gid);
	assert_int_equal(krc_mt_remove(t.mem, &t.g, a.gid, 0), -ENOENT);
	expect_found(&t, &b, &sb);
	assert_int_equal(krc_mt_remove(t.mem, &t.g, b.gid, 0), 0);
	expect_absent(&t, b.gid);
	assert_table_consistent(&t);
	table_free(&t);

	/*
	 * Collisions: x, y and z share a home. y lands after x; removing x
	 * leaves a tombstone that lookups of y pass; updating y keeps it in
	 * its slot (no duplicate in the tombstone); z reuses the tombstone.
	 */
	table_new(&t, 64, 0xc0111de);
	make_card(&x, 100);
	hx = krc_mt_home(&t.g, x.gid);
	i = 101;
	do
		make_card(&y, i++);
	while (krc_mt_home(&t.g, y.gid) != hx);
	do
		make_card(&z, i++);
	while (krc_mt_home(&t.g, z.gid) != hx);
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &x, &sx), 0);
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &y, &sy), 0);
	assert_int_equal(sx, hx);
	assert_int_equal(sy, hx + 1);
	assert_int_equal(krc_mt_remove(t.mem, &t.g, x.gid, 0), 0);
	expect_found(&t, &y, &sy);
	expect_absent(&t, x.gid);
	expect_absent(&t, z.gid);
	y.incarnation += 5;
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &y, &i), 0);
	assert_int_equal(i, sy);
	expect_found(&t, &y, &sy);
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &z, &sz), 0);
	assert_int_equal(sz, sx);
	expect_found(&t, &z, &sz);
	expect_found(&t, &y, &sy);
	expect_absent(&t, x.gid);
	assert_table_consistent(&t);
	free(copy);
	table_free(&t);
}

/* 4. 100,000 nodes, and a table filled up */

static void test_100k_nodes(void **state)
{
	/* krcore.ko's default table: 131072 home slots (load 0.76) */
	const u32 nslots = 131072, n = 100000, absent = 10000;
	static unsigned int hist[HIST], ahist[HIST];
	struct krcore_card c;
	unsigned int r, one;
	struct table t;
	u32 i, slot, maxdisp = 0;
	u64 dispsum = 0;

	(void)state;
	table_new(&t, nslots, 0x6b72636f7265ULL);
	assert_int_equal(t.g.nslots, 131072);
	for (i = 0; i < n; i++) {
		make_card(&c, i);
		assert_int_equal(krc_mt_insert(t.mem, &t.g, &c, &slot), 0);
		slot -= krc_mt_home(&t.g, c.gid);
		dispsum += slot;
		if (slot > maxdisp)
			maxdisp = slot;
	}
	for (i = 0; i < n; i++) {
		make_card(&c, i);
		r = expect_found(&t, &c, NULL);
		assert_true(r >= 1 && r <= MAX_READS);
		hist[r]++;
	}
	for (i = 0; i < absent; i++) {
		make_card(&c, n + i);
		r = expect_absent(&t, c.gid);
		ahist[r < HIST ? r : HIST - 1]++;
	}
	print_message("%u nodes in %u home slots: mean displacement %.2f, max %u\n",
		      n, nslots, (double)dispsum / n, maxdisp);
	print_hist("present", hist, n);
	print_hist("absent", ahist, absent);
	one = hist[1];
	assert_true(one * 10ULL >= n * 9ULL);
	assert_table_consistent(&t);

	/* remove every 10th node: the others stay, tombstones get reused */
	for (i = 0; i < n; i += 10) {
		make_card(&c, i);
		assert_int_equal(krc_mt_remove(t.mem, &t.g, c.gid,
					       c.incarnation), 0);
	}
	for (i = 0; i < n; i++) {
		make_card(&c, i);
		if (i % 10)
			expect_found(&t, &c, NULL);
		else
			expect_absent(&t, c.gid);
	}
	for (i = 0; i < n; i += 10) {
		make_card(&c, i);
		c.incarnation += n;
		assert_int_equal(krc_mt_insert(t.mem, &t.g, &c, NULL), 0);
	}
	for (i = 0; i < n; i++) {
		make_card(&c, i);
		if (!(i % 10))
			c.incarnation += n;
		expect_found(&t, &c, NULL);
	}
	assert_table_consistent(&t);
	table_free(&t);
}

static void test_fill_small_table(void **state)
{
	struct krcore_card c;
	static u32 where[4096];
	static bool in[4096];
	u32 i, slot, first_full = 0, ok = 0, full = 0;
	struct table t;
	u8 *copy;

	(void)state;
	table_new(&t, 64, 0x5a11);
	copy = malloc(t.bytes);
	assert_non_null(copy);
	for (i = 0; i < ARRAY_SIZE(where); i++) {
		make_card(&c, i);
		memcpy(copy, t.mem, t.bytes);
		switch (krc_mt_insert(t.mem, &t.g, &c, &slot)) {
		case 0:
			in[i] = true;
			where[i] = slot;
			ok++;
			break;
		case -ENOSPC:
			if (!full++)
				first_full = i;
			/* a refused insert writes nothing */
			assert_memory_equal(copy, t.mem, t.bytes);
			break;
		default:
			fail();
		}
	}
	print_message("64 home slots, %u physical: first -ENOSPC at insert %u, "
		      "%u inserted, %u refused\n", t.g.nphys, first_full, ok,
		      full);
	assert_true(full > 0 && ok <= t.g.nphys);
	assert_table_consistent(&t);
	for (i = 0; i < ARRAY_SIZE(where); i++) {
		make_card(&c, i);
		if (in[i])
			expect_found(&t, &c, &where[i]);
		else
			expect_absent(&t, c.gid);
	}
	/* removing makes room again */
	for (i = 0; !in[i]; i++)
		;
	make_card(&c, i);
	assert_int_equal(krc_mt_remove(t.mem, &t.g, c.gid, 0), 0);
	expect_absent(&t, c.gid);
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &c, &slot), 0);
	assert_int_equal(slot, where[i]);
	expect_found(&t, &c, &slot);
	assert_table_consistent(&t);
	free(copy);
	table_free(&t);
}

/* 5. torn reads */

/*
 * The writer's memory states while slot contents go from @s0 to @s4
 * (both stable, written by meta_table.c), built as the header specifies:
 * S1 seq_begin odd; S2 payload and check written; S3 seq_end written.
 */
static void writer_states(u8 st[5][SLOT], const u8 *s0, const u8 *s4)
{
	u32 seq = krc_get_le32(s0);

	assert_int_equal(seq & 1, 0);
	assert_int_equal(krc_get_le32(s0 + 124), seq);
	assert_int_equal(krc_get_le32(s4), seq + 2);
	assert_int_equal(krc_get_le32(s4 + 124), seq + 2);
	memcpy(st[0], s0, SLOT);
	memcpy(st[1], s0, SLOT);
	krc_put_le32(st[1], seq + 1);
	memcpy(st[2], s4, SLOT);
	krc_put_le32(st[2], seq + 1);
	krc_put_le32(st[2] + 124, seq);
	memcpy(st[3], s4, SLOT);
	krc_put_le32(st[3], seq + 1);
	memcpy(st[4], s4, SLOT);
}

struct outcome {
	int ret;
	struct krcore_card card;
};

/* Same return value and, when a card is returned, the same card. */
static bool same_outcome(const struct outcome *a, const struct outcome *b)
{
	if (a->ret != b->ret)
		return false;
	return a->ret || !memcmp(&a->card, &b->card, sizeof(a->card));
}

struct torn_stats {
	unsigned long torn, old, new, total;
};

/*
 * Scan @snap (the torn slot at @first, then @extra stable slots) and
 * check the result is -EAGAIN or exactly what the old or the new stable
 * slot gives.
 */
static void torn_scan(const u8 *snap, u32 first, u32 n,
		      const struct krc_mt_geom *g, const u8 gid[16],
		      const struct outcome *old, const struct outcome *new,
		      struct torn_stats *ts)
{
	struct outcome o;

	memset(&o, 0, sizeof(o));
	o.ret = krc_mt_scan(snap, first, n, g, gid, &o.card, NULL);
	ts->total++;
	if (o.ret == -EAGAIN)
		ts->torn++;
	else if (same_outcome(&o, old))
		ts->old++;
	else if (same_outcome(&o, new))
		ts->new++;
	else
		fail_msg("torn snapshot accepted: ret %d", o.ret);
}

/*
 * Slot @first goes from @s0 to @s4; a lookup of @gid in the old (new)
 * version returns @want_old (@want_new), with card @card_old (@card_new)
 * when that is 0.
 */
static void torn_case(const char *name, const struct krc_mt_geom *g,
		      u32 first, const u8 *s0, const u8 *s4, const u8 gid[16],
		      int want_old, const struct krcore_card *card_old,
		      int want_new, const struct krcore_card *card_new,
		      u64 *seed)
{
	u8 st[5][SLOT], snap[2 * SLOT], empty[SLOT];
	struct outcome old[2], new[2];
	struct torn_stats ts = { 0 };
	unsigned long t, k, a, b, n;
	struct krcore_card scratch;

	/* a stable empty slot, as krc_mt_format() leaves it */
	memset(empty, 0, SLOT);
	krc_put_le64(empty + 72, krc_hash64(g->seed, empty, 72));
	writer_states(st, s0, s4);
	/* n = 1: the torn slot alone; n = 2: followed by an empty slot */
	for (n = 1; n <= 2; n++) {
		memcpy(snap + SLOT, empty, SLOT);
		memcpy(snap, s0, SLOT);
		memset(&old[n - 1], 0, sizeof(old[0]));
		old[n - 1].ret = krc_mt_scan(snap, first, (u32)n, g, gid,
					     &old[n - 1].card, NULL);
		memcpy(snap, s4, SLOT);
		memset(&new[n - 1], 0, sizeof(new[0]));
		new[n - 1].ret = krc_mt_scan(snap, first, (u32)n, g, gid,
					     &new[n - 1].card, NULL);
		/* the intermediate states alone are all rejected */
		for (k = 1; k <= 3; k++) {
			memcpy(snap, st[k], SLOT);
			assert_int_equal(krc_mt_scan(snap, first, (u32)n, g,
						     gid, &scratch, NULL),
					 -EAGAIN);
		}
	}
	assert_int_equal(old[0].ret, want_old);
	assert_int_equal(new[0].ret, want_new);
	if (!want_old)
		assert_memory_equal(&old[0].card, card_old, sizeof(*card_old));
	if (!want_new)
		assert_memory_equal(&new[0].card, card_new, sizeof(*card_new));

	/* each 8-byte chunk from any state */
	for (t = 0; t < 200000; t++) {
		n = 1 + (t & 1);
		for (k = 0; k < NCHUNKS; k++)
			memcpy(snap + k * CHUNK, st[rnd(seed) % 5] + k * CHUNK,
			       CHUNK);
		torn_scan(snap, first, (u32)n, g, gid, &old[n - 1],
			  &new[n - 1], &ts);
	}
	/* each byte from any state */
	for (t = 0; t < 50000; t++) {
		n = 1 + (t & 1);
		for (k = 0; k < SLOT; k++)
			snap[k] = st[rnd(seed) % 5][k];
		torn_scan(snap, first, (u32)n, g, gid, &old[n - 1],
			  &new[n - 1], &ts);
	}
	/* a prefix from one state, the rest from another */
	for (a = 0; a < 5; a++)
		for (b = 0; b < 5; b++)
			for (k = 0; k <= NCHUNKS; k++)
				for (n = 1; n <= 2; n++) {
					memcpy(snap, st[a], k * CHUNK);
					memcpy(snap + k * CHUNK,
					       st[b] + k * CHUNK,
					       SLOT - k * CHUNK);
					torn_scan(snap, first, (u32)n, g, gid,
						  &old[n - 1], &new[n - 1],
						  &ts);
				}
	print_message("torn reads, %s: %lu snapshots, %lu detected torn, "
		      "%lu read as old, %lu as new\n", name, ts.total, ts.torn,
		      ts.old, ts.new);
	assert_true(ts.torn > 0 && ts.old > 0);
	/* an outcome both stable versions give is counted as old */
	assert_true(ts.new > 0 || want_old == want_new);
}

static void test_torn_reads(void **state)
{
	struct krcore_card a, b, c;
	u8 s0[SLOT], s4[SLOT];
	u64 seed = 0x70e2a11ULL;
	struct table t;
	u32 sa, sc, i, h;

	(void)state;
	table_new(&t, 64, 0x7042);
	make_card(&a, 7);
	b = a;			/* same node, new incarnation and QP */
	b.incarnation = 0xabcdef0123ULL;
	b.ud_qpn = 0x4242;
	b.mac[5] = 0x99;
	h = krc_mt_home(&t.g, a.gid);
	for (i = 8; ; i++) {
		make_card(&c, i);
		if (krc_mt_home(&t.g, c.gid) == h)
			break;
	}

	/* EMPTY -> A (a fresh insert) */
	memcpy(s0, slot_ptr(&t, h), SLOT);
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &a, &sa), 0);
	assert_int_equal(sa, h);
	memcpy(s4, slot_ptr(&t, sa), SLOT);
	torn_case("empty -> A", &t.rg, sa, s0, s4, a.gid, -ENOENT, NULL, 0, &a,
		  &seed);

	/* A -> B, updated in place */
	memcpy(s0, s4, SLOT);
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &b, &i), 0);
	assert_int_equal(i, sa);
	memcpy(s4, slot_ptr(&t, sa), SLOT);
	torn_case("A -> B", &t.rg, sa, s0, s4, a.gid, 0, &a, 0, &b, &seed);

	/* B -> tombstone */
	memcpy(s0, s4, SLOT);
	assert_int_equal(krc_mt_remove(t.mem, &t.g, b.gid, b.incarnation), 0);
	memcpy(s4, slot_ptr(&t, sa), SLOT);
	torn_case("B -> tomb", &t.rg, sa, s0, s4, a.gid, 0, &b, -EINPROGRESS,
		  NULL, &seed);

	/* tombstone -> C (another node with the same home) */
	memcpy(s0, s4, SLOT);
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &c, &sc), 0);
	assert_int_equal(sc, sa);
	memcpy(s4, slot_ptr(&t, sa), SLOT);
	torn_case("tomb -> C", &t.rg, sa, s0, s4, c.gid, -EINPROGRESS, NULL,
		  0, &c, &seed);
	torn_case("tomb -> C, looking for A", &t.rg, sa, s0, s4, a.gid,
		  -EINPROGRESS, NULL, -EINPROGRESS, NULL, &seed);
	table_free(&t);
}

/* 6. garbage snapshots */

static void test_garbage(void **state)
{
	u64 seed = 0x6a7ba6e;
	struct krc_mt_geom g;
	struct krcore_card c;
	unsigned long t, accepted = 0, decodable = 0;
	u32 n, k, first, slot;
	u8 gid[16], *snap, *s;
	int ret;

	(void)state;
	krc_mt_geom_init(&g, 1024, 0x9a7ba9e, 3);
	for (t = 0; t < 100000; t++) {
		n = 1 + (u32)(rnd(&seed) % KRC_MT_WINDOW);
		first = (u32)(rnd(&seed) % g.nphys);
		/* exactly n slots: a sanitizer catches any read past them */
		snap = malloc((size_t)n * SLOT);
		assert_non_null(snap);
		rnd_bytes(&seed, snap, (size_t)n * SLOT);
		rnd_bytes(&seed, gid, sizeof(gid));
		for (k = 0; k < n; k++) {
			s = snap + k * SLOT;
			if (t & 1) {	/* pass the seq test, not the check */
				krc_put_le32(s, krc_get_le32(s) & ~1U);
				memcpy(s + 124, s, 4);
			}
			if (t & 2)	/* a known state */
				krc_put_le32(s + 4, (u32)(rnd(&seed) % 3));
			if (t & 4)	/* the gid looked for */
				memcpy(s + 8, gid, 16);
		}
		ret = krc_mt_scan(snap, first, n, &g, gid, &c, &slot);
		assert_true(ret == -EAGAIN || ret == -ENOENT ||
			    ret == -EINPROGRESS || ret == 0);
		if (!ret)
			accepted++;
		free(snap);
	}
	assert_int_equal(accepted, 0);

	/*
	 * Slots with a valid check but a garbage card carrying the gid: the
	 * scan returns the card only if it is one a node could publish.
	 */
	snap = malloc(SLOT);
	assert_non_null(snap);
	for (t = 0; t < 100000; t++) {
		rnd_bytes(&seed, snap, SLOT);
		rnd_bytes(&seed, gid, sizeof(gid));
		krc_put_le32(snap, (u32)t * 2);
		krc_put_le32(snap + 124, (u32)t * 2);
		krc_put_le32(snap + 4, KRC_MT_USED);
		memcpy(snap + 8, gid, 16);
		if (t & 1) {	/* get past the version and flags tests */
			snap[8 + 22] = KRCORE_CARD_VERSION;
			snap[8 + 23] &= KRCORE_CARD_F_ROCE_V2;
		}
		krc_put_le64(snap + 72, krc_hash64(g.seed, snap, 72));
		ret = krc_mt_scan(snap, 5, 1, &g, gid, &c, &slot);
		if (krc_card_decode(snap + 8, &c)) {
			assert_int_equal(ret, -EAGAIN);
		} else {
			assert_int_equal(ret, 0);
			assert_int_equal(slot, 5);
			decodable++;
		}
	}
	print_message("garbage: 100000 random snapshots, %lu accepted; "
		      "100000 checked slots with random cards, %lu decodable\n",
		      accepted, decodable);

	/* a stable slot of an unknown state is skipped; EMPTY ends the scan */
	krc_put_le32(snap + 4, 7);
	krc_put_le64(snap + 72, krc_hash64(g.seed, snap, 72));
	assert_int_equal(krc_mt_scan(snap, 5, 1, &g, gid, &c, NULL),
			 -EINPROGRESS);
	assert_int_equal(krc_mt_scan(snap, g.nphys - 1, 1, &g, gid, &c, NULL),
			 -ENOENT);
	krc_put_le32(snap + 4, KRC_MT_EMPTY);
	krc_put_le64(snap + 72, krc_hash64(g.seed, snap, 72));
	assert_int_equal(krc_mt_scan(snap, 5, 1, &g, gid, &c, NULL), -ENOENT);
	/* the check is seeded: another table's seed does not match */
	g.seed++;
	assert_int_equal(krc_mt_scan(snap, 5, 1, &g, gid, &c, NULL), -EAGAIN);
	free(snap);
}

/* 7. a scan of every slot (pre-warming) finds exactly the cards inserted */
static void test_slot_card(void **state)
{
	struct krcore_card c[20], got;
	unsigned int seen[20] = { 0 };
	struct table t;
	u32 i, n = 0;
	int k, ret;

	(void)state;
	table_new(&t, 64, 0xabcdULL);
	for (k = 0; k < 20; k++) {
		make_card(&c[k], (u32)k + 100);
		assert_int_equal(krc_mt_insert(t.mem, &t.g, &c[k], NULL), 0);
	}
	assert_int_equal(krc_mt_remove(t.mem, &t.g, c[3].gid, 0), 0);
	for (i = 0; i < t.g.nphys; i++) {
		ret = krc_mt_slot_card(slot_ptr(&t, i), &t.g, &got);
		if (ret == -ENOENT)
			continue;
		assert_int_equal(ret, 0);
		for (k = 0; k < 20; k++)
			if (!memcmp(&got, &c[k], sizeof(got)))
				seen[k]++;
		n++;
	}
	assert_int_equal(n, 19);
	for (k = 0; k < 20; k++)
		assert_int_equal(seen[k], k == 3 ? 0 : 1);
	/* a torn slot is reported as such */
	{
		u32 at;
		u8 *s;

		assert_int_equal(krc_mt_insert(t.mem, &t.g, &c[5], &at), 0);
		s = slot_ptr(&t, at);
		s[20] ^= 1;
		assert_int_equal(krc_mt_slot_card(s, &t.g, &got), -EAGAIN);
		s[20] ^= 1;
		krc_put_le32(s, krc_get_le32(s) + 1);	/* write in progress */
		assert_int_equal(krc_mt_slot_card(s, &t.g, &got), -EAGAIN);
	}
	table_free(&t);
}

/* 6. the member directory */

static u64 dir_gen(const struct table *t)
{
	u64 gen;
	u32 count;

	assert_int_equal(krc_mt_dir_header(t->mem + krc_mt_dir_offset(&t->rg),
					   &t->rg, &gen, &count), 0);
	return gen;
}

static const u8 *rec_ptr(const struct table *t, u32 i)
{
	return t->mem + krc_mt_rec_offset(&t->rg, i);
}

static void test_directory(void **state)
{
	struct krcore_card c[4];
	struct krc_mt_member m;
	const u8 *d, *r;
	struct table t;
	u64 gen;
	u32 i, count;

	(void)state;
	table_new(&t, 64, 0x0123456789abcdefULL);
	/* the wire form of an empty directory */
	d = t.mem + krc_mt_dir_offset(&t.g);
	assert_true(krc_get_le64(d) == 0x0123456789abcdeeULL);
	assert_int_equal(krc_get_le32(d + 8), 0);
	assert_int_equal(krc_get_le32(d + 12), 0);
	assert_true(krc_get_le64(d + 16) == krc_hash64(t.g.seed, d, 16));
	for (i = 24; i < KRC_MT_DIR_HDR_SIZE; i++)
		assert_int_equal(d[i], 0);
	gen = assert_dir_consistent(&t);

	/* a join: a record at the end, the generation + 2 */
	for (i = 0; i < 4; i++) {
		make_card(&c[i], 100 + i);
		assert_int_equal(krc_mt_insert(t.mem, &t.g, &c[i], NULL), 0);
		assert_true(assert_dir_consistent(&t) == gen + 2 * (i + 1));
	}
	gen += 8;
	r = rec_ptr(&t, 2);
	assert_memory_equal(r, c[2].gid, 16);
	assert_true(krc_get_le64(r + 16) == c[2].incarnation);
	assert_int_equal(krc_get_le32(r + 24), c[2].node_id);
	assert_int_equal(krc_get_le32(r + 28),
			 (u32)krc_hash64(t.g.seed, r, 28));
	assert_int_equal(krc_mt_dir_record(r, &t.rg, &m), 0);
	assert_memory_equal(m.gid, c[2].gid, 16);

	/* the same card again, or another QPN: no change to the list */
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &c[1], NULL), 0);
	c[1].ud_qpn++;
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &c[1], NULL), 0);
	assert_true(assert_dir_consistent(&t) == gen);
	/* a reload (new incarnation): in place, a new generation */
	c[1].incarnation++;
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &c[1], NULL), 0);
	assert_true(assert_dir_consistent(&t) == gen + 2);
	assert_int_equal(krc_mt_dir_record(rec_ptr(&t, 1), &t.rg, &m), 0);
	assert_true(m.incarnation == c[1].incarnation);
	gen += 2;

	/* a refused removal changes nothing */
	assert_int_equal(krc_mt_remove(t.mem, &t.g, c[0].gid, 5), -ESTALE);
	assert_true(assert_dir_consistent(&t) == gen);
	/* a leave: the last record takes its place */
	assert_int_equal(krc_mt_remove(t.mem, &t.g, c[0].gid,
				       c[0].incarnation), 0);
	assert_true(assert_dir_consistent(&t) == gen + 2);
	assert_int_equal(krc_mt_dir_header(d, &t.rg, &gen, &count), 0);
	assert_int_equal(count, 3);
	assert_int_equal(krc_mt_dir_record(rec_ptr(&t, 0), &t.rg, &m), 0);
	assert_memory_equal(m.gid, c[3].gid, 16);
	assert_int_equal(krc_mt_remove(t.mem, &t.g, c[0].gid, 0), -ENOENT);
	/* the last one leaves: nothing moves */
	assert_int_equal(krc_mt_remove(t.mem, &t.g, c[2].gid, 0), 0);
	assert_true(assert_dir_consistent(&t) == gen + 2);
	/* and joins again, at the end */
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &c[0], NULL), 0);
	assert_true(assert_dir_consistent(&t) == gen + 4);
	assert_int_equal(krc_mt_dir_record(rec_ptr(&t, 2), &t.rg, &m), 0);
	assert_memory_equal(m.gid, c[0].gid, 16);
	table_free(&t);
}

/* Random joins, leaves and reloads against a model of who is in. */
static void test_directory_random(void **state)
{
	enum { NODES = 300, OPS = 6000 };
	static bool in[NODES];
	static u64 inc[NODES];
	struct krcore_card c;
	struct table t;
	u64 s = 42, gen;
	u32 i, n, count, members = 0;
	int ret;

	(void)state;
	table_new(&t, 64, 0xfeedfacecafef00dULL);
	gen = dir_gen(&t);
	memset(in, 0, sizeof(in));
	for (i = 0; i < OPS; i++) {
		n = (u32)(rnd(&s) % NODES);
		make_card(&c, n);
		c.incarnation = inc[n] ? inc[n] : c.incarnation;
		switch (rnd(&s) % 3) {
		case 0:		/* join, or register again */
			ret = krc_mt_insert(t.mem, &t.g, &c, NULL);
			if (ret == -ENOSPC) {
				assert_false(in[n]);
				break;
			}
			assert_int_equal(ret, 0);
			if (!in[n])
				gen += 2, members++;
			in[n] = true;
			inc[n] = c.incarnation;
			break;
		case 1:		/* reload */
			c.incarnation = rnd(&s) | 1;
			ret = krc_mt_insert(t.mem, &t.g, &c, NULL);
			if (ret == -ENOSPC)
				break;
			assert_int_equal(ret, 0);
			gen += 2;
			members += !in[n];
			in[n] = true;
			inc[n] = c.incarnation;
			break;
		default:	/* leave */
			ret = krc_mt_remove(t.mem, &t.g, c.gid, 0);
			assert_int_equal(ret, in[n] ? 0 : -ENOENT);
			if (in[n])
				gen += 2, members--;
			in[n] = false;
			break;
		}
		if (i % 500 == 0 || i == OPS - 1)
			assert_table_consistent(&t);
		assert_true(dir_gen(&t) == gen);
		assert_int_equal(krc_mt_dir_header(t.mem +
						   krc_mt_dir_offset(&t.g),
						   &t.rg, &gen, &count), 0);
		assert_int_equal(count, members);
	}
	table_free(&t);
}

/*
 * A member's list READ: the header, then the records, then the header
 * again, each READ after the previous one completed. The writer runs
 * @change at point @at (0: before the first READ, 1: after it, 2: after
 * the records, 3: after the last). The list is accepted only if both
 * headers show the same generation.
 */
static int read_list(struct table *t, void (*change)(struct table *), int at,
		     struct krc_mt_member *out, u32 max, u32 *count)
{
	u8 h1[KRC_MT_DIR_HDR_SIZE], h2[KRC_MT_DIR_HDR_SIZE];
	u64 gen1, gen2;
	u32 n, c2, i;
	int ret;

	if (at == 0)
		change(t);
	memcpy(h1, t->mem + krc_mt_dir_offset(&t->rg), sizeof(h1));
	ret = krc_mt_dir_header(h1, &t->rg, &gen1, &n);
	if (ret)
		return ret;
	if (at == 1)
		change(t);
	if (n > max)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		ret = krc_mt_dir_record(rec_ptr(t, i), &t->rg, &out[i]);
		if (ret)
			return ret;
	}
	if (at == 2)
		change(t);
	memcpy(h2, t->mem + krc_mt_dir_offset(&t->rg), sizeof(h2));
	ret = krc_mt_dir_header(h2, &t->rg, &gen2, &c2);
	if (at == 3)
		change(t);
	if (ret)
		return ret;
	if (gen1 != gen2)
		return -EAGAIN;
	assert_int_equal(c2, n);
	*count = n;
	return 0;
}

static u32 change_kind;

static void change_list(struct table *t)
{
	struct krcore_card c;

	make_card(&c, 7 + change_kind);	/* cards 0..9 are in */
	switch (change_kind) {
	case 0:		/* node 7 reloads */
		c.incarnation ^= 0x1234;
		assert_int_equal(krc_mt_insert(t->mem, &t->g, &c, NULL), 0);
		break;
	case 1:		/* node 8 leaves */
		assert_int_equal(krc_mt_remove(t->mem, &t->g, c.gid, 0), 0);
		break;
	default:	/* node 11 joins */
		make_card(&c, 11);
		assert_int_equal(krc_mt_insert(t->mem, &t->g, &c, NULL), 0);
		break;
	}
}

static bool list_has(const struct krc_mt_member *l, u32 n,
		     const struct krcore_card *c)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!memcmp(l[i].gid, c->gid, 16))
			return l[i].incarnation == c->incarnation &&
			       l[i].node_id == c->node_id;
	return false;
}

static void test_directory_reader(void **state)
{
	u8 before[KRC_MT_DIR_HDR_SIZE], after[KRC_MT_DIR_HDR_SIZE];
	u8 mix[KRC_MT_DIR_HDR_SIZE], rec[KRC_MT_REC_SIZE];
	struct krc_mt_member list[16], m;
	struct krcore_card c;
	struct table t;
	u32 i, n, count, mask;
	u64 gen, g1, g2;
	int at, ret;

	(void)state;
	for (change_kind = 0; change_kind < 3; change_kind++) {
		for (at = 0; at < 4; at++) {
			table_new(&t, 64, 0x77 + at);
			for (i = 0; i < 10; i++) {
				make_card(&c, i);
				assert_int_equal(krc_mt_insert(t.mem, &t.g, &c,
							       NULL), 0);
			}
			ret = read_list(&t, change_list, at, list, 16, &n);
			if (at == 1 || at == 2) {
				/* the list changed under the reader */
				assert_int_equal(ret, -EAGAIN);
				table_free(&t);
				continue;
			}
			assert_int_equal(ret, 0);
			/* before the change, or after it: one version */
			assert_int_equal(n, at == 3 ? 10 :
					 change_kind == 1 ? 9 :
					 change_kind == 2 ? 11 : 10);
			make_card(&c, 7);
			if (at == 0 && change_kind == 0)
				c.incarnation ^= 0x1234;
			assert_true(list_has(list, n, &c));
			make_card(&c, 8);
			assert_int_equal(list_has(list, n, &c),
					 at == 3 || change_kind != 1);
			table_free(&t);
		}
	}

	/* a header torn between two versions is one of them, or refused */
	table_new(&t, 64, 0x99);
	memcpy(before, t.mem + krc_mt_dir_offset(&t.g), sizeof(before));
	assert_int_equal(krc_mt_dir_header(before, &t.rg, &g1, &count), 0);
	make_card(&c, 1);
	assert_int_equal(krc_mt_insert(t.mem, &t.g, &c, NULL), 0);
	memcpy(after, t.mem + krc_mt_dir_offset(&t.g), sizeof(after));
	assert_int_equal(krc_mt_dir_header(after, &t.rg, &g2, &count), 0);
	for (mask = 0; mask < 256; mask++) {
		for (i = 0; i < 8; i++)
			memcpy(mix + 8 * i, (mask >> i & 1 ? after : before) +
			       8 * i, 8);
		ret = krc_mt_dir_header(mix, &t.rg, &gen, &count);
		if (ret) {
			assert_int_equal(ret, -EAGAIN);
			continue;
		}
		assert_true((gen == g1 && count == 0) ||
			    (gen == g2 && count == 1));
	}
	/* a bit flipped anywhere in a record is caught */
	memcpy(rec, rec_ptr(&t, 0), sizeof(rec));
	assert_int_equal(krc_mt_dir_record(rec, &t.rg, &m), 0);
	for (i = 0; i < 8 * KRC_MT_REC_SIZE; i++) {
		rec[i / 8] ^= (u8)(1 << (i % 8));
		assert_int_equal(krc_mt_dir_record(rec, &t.rg, &m), -EAGAIN);
		rec[i / 8] ^= (u8)(1 << (i % 8));
	}
	/* checks that pass, contents that do not: refused */
	memset(rec, 0, sizeof(rec));
	krc_put_le64(rec + 16, 5);
	krc_put_le32(rec + 28, (u32)krc_hash64(t.g.seed, rec, 28));
	assert_int_equal(krc_mt_dir_record(rec, &t.rg, &m), -EPROTO);
	memcpy(mix, after, sizeof(mix));
	krc_put_le32(mix + 8, t.g.nphys + 1);
	krc_put_le64(mix + 16, krc_hash64(t.g.seed, mix, 16));
	assert_int_equal(krc_mt_dir_header(mix, &t.rg, &gen, &count), -EPROTO);
	krc_put_le32(mix + 8, t.g.nphys);
	krc_put_le64(mix + 16, krc_hash64(t.g.seed, mix, 16));
	assert_int_equal(krc_mt_dir_header(mix, &t.rg, &gen, &count), 0);
	krc_put_le32(mix + 12, 1);
	krc_put_le64(mix + 16, krc_hash64(t.g.seed, mix, 16));
	assert_int_equal(krc_mt_dir_header(mix, &t.rg, &gen, &count), -EPROTO);
	/* an odd generation: a write in progress */
	krc_put_le32(mix + 12, 0);
	krc_put_le64(mix, g2 + 1);
	krc_put_le64(mix + 16, krc_hash64(t.g.seed, mix, 16));
	assert_int_equal(krc_mt_dir_header(mix, &t.rg, &gen, &count), -EAGAIN);
	table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_hash_properties),
		cmocka_unit_test(test_hash_distribution),
		cmocka_unit_test(test_basics),
		cmocka_unit_test(test_100k_nodes),
		cmocka_unit_test(test_fill_small_table),
		cmocka_unit_test(test_torn_reads),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_slot_card),
		cmocka_unit_test(test_directory),
		cmocka_unit_test(test_directory_random),
		cmocka_unit_test(test_directory_reader),
	};

	return cmocka_run_group_tests_name("meta_table", tests, NULL, NULL);
}
