// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_kvs.c - the one-sided hash table of the key-value store demo
 * (common/kvs.c) over an in-process remote memory: every READ, WRITE,
 * CAS and FAA of the table goes through the backend below, which checks
 * its bounds (a request outside the region fails the test) and lets a
 * test change the region between two requests of a client (a race) or
 * corrupt what one READ returns (a torn read).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvs.h"

/* The memory node's region. */
struct region {
	u8 *mem;
	u64 len;
	struct krc_kvs_geom g;
	unsigned long oob;	/* requests outside the region or misaligned */
};

/* One client's access to it, with the hooks of a test. */
struct port {
	struct region *r;
	/* called before a CAS is executed (a concurrent client's turn) */
	void (*cas_hook)(struct port *p, u64 off);
	void *hook_arg;
	int hook_calls;
	/* called after a READ copied its bytes (to tear them) */
	void (*read_hook)(struct port *p, u64 off, u8 *buf, u32 len);
	int read_calls;
};

static bool in_region(struct region *r, u64 off, u32 len)
{
	if (off > r->len || len > r->len - off) {
		r->oob++;
		return false;
	}
	return true;
}

static int mem_read(void *ctx, u64 off, void *buf, u32 len)
{
	struct port *p = ctx;

	if (!in_region(p->r, off, len))
		return -EFAULT;
	memcpy(buf, p->r->mem + off, len);
	if (p->read_hook)
		p->read_hook(p, off, buf, len);
	return 0;
}

static int mem_write(void *ctx, u64 off, const void *buf, u32 len)
{
	struct port *p = ctx;

	if (!in_region(p->r, off, len))
		return -EFAULT;
	memcpy(p->r->mem + off, buf, len);
	return 0;
}

static u64 *word(struct region *r, u64 off)
{
	return (u64 *)(void *)(r->mem + off);
}

static int mem_cas(void *ctx, u64 off, u64 expect, u64 desired, u64 *old)
{
	struct port *p = ctx;

	if (off & 7) {
		p->r->oob++;
		return -EFAULT;
	}
	if (!in_region(p->r, off, 8))
		return -EFAULT;
	if (p->cas_hook)
		p->cas_hook(p, off);
	*old = expect;
	__atomic_compare_exchange_n(word(p->r, off), old, desired, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return 0;
}

static int mem_faa(void *ctx, u64 off, u64 add, u64 *old)
{
	struct port *p = ctx;

	if (off & 7) {
		p->r->oob++;
		return -EFAULT;
	}
	if (!in_region(p->r, off, 8))
		return -EFAULT;
	*old = __atomic_fetch_add(word(p->r, off), add, __ATOMIC_SEQ_CST);
	return 0;
}

static int mem_read_many(void *ctx, const struct krc_kvs_rd *rd,
			 unsigned int n)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = mem_read(ctx, rd[i].off, rd[i].buf, rd[i].len);
		if (ret)
			return ret;
	}
	return 0;
}

static const struct krc_kvs_ops mem_ops = {
	.read = mem_read,
	.write = mem_write,
	.cas = mem_cas,
	.faa = mem_faa,
	.read_many = mem_read_many,
};

/* Without read_many: the two bucket READs one after the other. */
static const struct krc_kvs_ops mem_ops_serial = {
	.read = mem_read,
	.write = mem_write,
	.cas = mem_cas,
	.faa = mem_faa,
};

static void region_new(struct region *r, u32 ngroups, u32 nlogs,
		       u32 log_size)
{
	memset(r, 0, sizeof(*r));
	assert_int_equal(krc_kvs_geom_init(&r->g, ngroups, nlogs, log_size,
					   0x6b76730001ULL), 0);
	r->len = r->g.region_size;
	r->mem = malloc(r->len);
	assert_non_null(r->mem);
	memset(r->mem, 0x5a, r->len);		/* format must write it all */
	assert_int_equal(krc_kvs_format(r->mem, r->len, &r->g), 0);
}

static void region_free(struct region *r)
{
	assert_int_equal(r->oob, 0);
	free(r->mem);
}

static void client_open(struct krc_kvs *c, struct port *p, struct region *r)
{
	memset(p, 0, sizeof(*p));
	p->r = r;
	assert_int_equal(krc_kvs_open(c, &mem_ops, p, r->len), 0);
	assert_memory_equal(&c->g, &r->g, sizeof(r->g));
}

static u32 key_of(u32 i, char *k)
{
	return (u32)snprintf(k, KRC_KVS_KEY_MAX + 1, "key%08u", i);
}

static u32 val_of(u32 i, u32 gen, char *v)
{
	return (u32)snprintf(v, KRC_KVS_VAL_MAX + 1, "value %u of key %u",
			     gen, i);
}

static void check_value(struct krc_kvs *c, const void *k, u32 klen,
			const void *v, u32 vlen)
{
	u8 got[KRC_KVS_VAL_MAX];
	u32 glen = 999;

	assert_int_equal(krc_kvs_get(c, k, klen, got, sizeof(got), &glen), 0);
	assert_int_equal(glen, vlen);
	assert_memory_equal(got, v, vlen);
}

/* Slots of the whole table whose block holds @key (read in place). */
static int copies(struct region *r, const void *key, u32 klen)
{
	const u8 *bk, *bv;
	u32 i, size, bkl, bvl;
	u64 slot, off;
	int n = 0;

	for (i = 0; i < r->g.ngroups * KRC_KVS_GROUP_SLOTS; i++) {
		slot = *word(r, r->g.table_off + (u64)i * 8);
		if (!slot || krc_kvs_slot_block(&r->g, slot, &off, &size))
			continue;
		if (krc_kvs_block_decode(&r->g, r->mem + off, size, &bk, &bkl,
					 &bv, &bvl))
			continue;
		n += bkl == klen && !memcmp(bk, key, klen);
	}
	return n;
}

/* The slot offset holding @key, 0 if none. */
static u64 slot_of(struct region *r, const void *key, u32 klen)
{
	const u8 *bk, *bv;
	u32 i, size, bkl, bvl;
	u64 slot, off;

	for (i = 0; i < r->g.ngroups * KRC_KVS_GROUP_SLOTS; i++) {
		u64 so = r->g.table_off + (u64)i * 8;

		slot = *word(r, so);
		if (!slot || krc_kvs_slot_block(&r->g, slot, &off, &size) ||
		    krc_kvs_block_decode(&r->g, r->mem + off, size, &bk, &bkl,
					 &bv, &bvl))
			continue;
		if (bkl == klen && !memcmp(bk, key, klen))
			return so;
	}
	return 0;
}

static void test_geometry(void **state)
{
	struct krc_kvs_geom g, p;
	u8 *mem;

	assert_int_equal(krc_kvs_geom_init(&g, 3, 1, 4096, 1), -EINVAL);
	assert_int_equal(krc_kvs_geom_init(&g, 0, 1, 4096, 1), -EINVAL);
	assert_int_equal(krc_kvs_geom_init(&g, 1U << 23, 1, 4096, 1), -EINVAL);
	assert_int_equal(krc_kvs_geom_init(&g, 4, 0, 4096, 1), -EINVAL);
	assert_int_equal(krc_kvs_geom_init(&g, 4, 1, 4000, 1), -EINVAL);
	assert_int_equal(krc_kvs_geom_init(&g, 4, 1, 128, 1), -EINVAL);
	assert_int_equal(krc_kvs_geom_init(&g, 4, 3, 4096, 7), 0);
	assert_int_equal(g.table_off, KRC_KVS_HDR_SIZE);
	assert_int_equal(g.logs_off, KRC_KVS_HDR_SIZE + 4 * 192);
	assert_int_equal(g.region_size, g.logs_off + 3 * 4096);
	assert_int_equal(g.logs_off % 64, 0);

	/* 70% of 1024 groups' slots */
	assert_int_equal(krc_kvs_groups_for(17203, 70), 1024);
	assert_int_equal(krc_kvs_groups_for(17204, 70), 2048);
	assert_int_equal(krc_kvs_groups_for(0, 70), 1);

	mem = malloc(g.region_size);
	assert_non_null(mem);
	assert_int_equal(krc_kvs_format(mem, g.region_size - 1, &g), -EINVAL);
	assert_int_equal(krc_kvs_format(mem, g.region_size, &g), 0);
	assert_int_equal(krc_kvs_parse_header(mem, g.region_size, &p), 0);
	assert_memory_equal(&g, &p, sizeof(g));
	/* a header larger than what is registered */
	assert_int_equal(krc_kvs_parse_header(mem, g.region_size - 1, &p),
			 -EINVAL);
	/* any changed byte of the checked part is refused */
	mem[13] ^= 1;
	assert_int_equal(krc_kvs_parse_header(mem, g.region_size, &p), -EINVAL);
	mem[13] ^= 1;
	mem[40] ^= 0x80;
	assert_int_equal(krc_kvs_parse_header(mem, g.region_size, &p), -EINVAL);
	mem[40] ^= 0x80;
	mem[0] ^= 1;
	assert_int_equal(krc_kvs_parse_header(mem, g.region_size, &p), -EPROTO);
	mem[0] ^= 1;
	assert_int_equal(krc_kvs_parse_header(mem, g.region_size, &p), 0);
	free(mem);
}

static void test_basics(void **state)
{
	struct region r;
	struct port p;
	struct krc_kvs c;
	struct krc_kvs_stats s;
	u8 got[KRC_KVS_VAL_MAX];
	char big[KRC_KVS_VAL_MAX + 1];
	u32 glen;

	region_new(&r, 16, 4, 4096);
	client_open(&c, &p, &r);
	assert_int_equal(c.log, -1);

	assert_int_equal(krc_kvs_get(&c, "alpha", 5, got, sizeof(got), &glen),
			 -ENOENT);
	assert_int_equal(krc_kvs_insert(&c, "alpha", 5, "one", 3), 0);
	assert_int_equal(c.log, 0);
	assert_int_equal(c.log_used, krc_kvs_block_size(5, 3));
	check_value(&c, "alpha", 5, "one", 3);
	assert_int_equal(krc_kvs_insert(&c, "alpha", 5, "two", 3), -EEXIST);
	/* the refused insert's block was not published: its space is reused */
	assert_int_equal(c.log_used, krc_kvs_block_size(5, 3));
	check_value(&c, "alpha", 5, "one", 3);

	/* a get: two bucket READs in one round trip, one block READ */
	s = c.st;
	check_value(&c, "alpha", 5, "one", 3);
	assert_int_equal(c.st.reads - s.reads, 3);
	assert_int_equal(c.st.round_trips - s.round_trips, 2);
	assert_int_equal(c.st.cas, s.cas);

	/*
	 * The costs docs/kvs.md gives (no other key's fingerprint in the
	 * buckets here): an insert WRITEs its block, READs the buckets, CASes
	 * a slot, READs the buckets again; an update WRITEs, looks up, CASes;
	 * a delete looks up and CASes.
	 */
	s = c.st;
	assert_int_equal(krc_kvs_insert(&c, "gamma", 5, "three", 5), 0);
	assert_int_equal(c.st.writes - s.writes, 1);
	assert_int_equal(c.st.reads - s.reads, 4);
	assert_int_equal(c.st.cas - s.cas, 1);
	assert_int_equal(c.st.faa - s.faa, 0);
	assert_int_equal(c.st.round_trips - s.round_trips, 4);
	s = c.st;
	assert_int_equal(krc_kvs_update(&c, "gamma", 5, "drei", 4), 0);
	assert_int_equal(c.st.writes - s.writes, 1);
	assert_int_equal(c.st.reads - s.reads, 3);
	assert_int_equal(c.st.cas - s.cas, 1);
	assert_int_equal(c.st.round_trips - s.round_trips, 4);
	s = c.st;
	assert_int_equal(krc_kvs_delete(&c, "gamma", 5), 0);
	assert_int_equal(c.st.writes - s.writes, 0);
	assert_int_equal(c.st.reads - s.reads, 3);
	assert_int_equal(c.st.cas - s.cas, 1);
	assert_int_equal(c.st.round_trips - s.round_trips, 3);
	/* a miss: the buckets only */
	s = c.st;
	assert_int_equal(krc_kvs_get(&c, "gamma", 5, got, sizeof(got), &glen),
			 -ENOENT);
	assert_int_equal(c.st.reads - s.reads, 2);
	assert_int_equal(c.st.round_trips - s.round_trips, 1);

	assert_int_equal(krc_kvs_update(&c, "alpha", 5, "uno", 3), 0);
	check_value(&c, "alpha", 5, "uno", 3);
	assert_int_equal(krc_kvs_update(&c, "beta", 4, "x", 1), -ENOENT);
	assert_int_equal(krc_kvs_get(&c, "beta", 4, got, sizeof(got), &glen),
			 -ENOENT);

	/* an empty value, a full-size key and value */
	assert_int_equal(krc_kvs_insert(&c, "empty", 5, NULL, 0), 0);
	check_value(&c, "empty", 5, "", 0);
	memset(big, 'v', sizeof(big));
	assert_int_equal(krc_kvs_insert(&c, "0123456789abcdef", 16, big,
					KRC_KVS_VAL_MAX), 0);
	check_value(&c, "0123456789abcdef", 16, big, KRC_KVS_VAL_MAX);
	glen = 0;
	assert_int_equal(krc_kvs_get(&c, "0123456789abcdef", 16, got, 10,
				     &glen), -EMSGSIZE);
	assert_int_equal(glen, KRC_KVS_VAL_MAX);

	/* arguments */
	assert_int_equal(krc_kvs_insert(&c, "", 0, "v", 1), -EINVAL);
	assert_int_equal(krc_kvs_insert(&c, "0123456789abcdefg", 17, "v", 1),
			 -EINVAL);
	assert_int_equal(krc_kvs_insert(&c, "k", 1, big, KRC_KVS_VAL_MAX + 1),
			 -EINVAL);
	assert_int_equal(krc_kvs_insert(&c, "k", 1, NULL, 1), -EINVAL);
	assert_int_equal(krc_kvs_get(&c, NULL, 1, got, sizeof(got), &glen),
			 -EINVAL);

	/* delete: the key is gone, its slot empty, a second delete fails */
	assert_int_equal(copies(&r, "alpha", 5), 1);
	assert_int_equal(krc_kvs_delete(&c, "alpha", 5), 0);
	assert_int_equal(copies(&r, "alpha", 5), 0);
	assert_int_equal(krc_kvs_get(&c, "alpha", 5, got, sizeof(got), &glen),
			 -ENOENT);
	assert_int_equal(krc_kvs_delete(&c, "alpha", 5), -ENOENT);
	assert_int_equal(krc_kvs_update(&c, "alpha", 5, "x", 1), -ENOENT);
	/* and it can come back */
	assert_int_equal(krc_kvs_insert(&c, "alpha", 5, "again", 5), 0);
	check_value(&c, "alpha", 5, "again", 5);
	assert_int_equal(copies(&r, "alpha", 5), 1);
	check_value(&c, "empty", 5, "", 0);
	assert_int_equal(c.st.cas_failed, 0);
	assert_int_equal(c.st.retries, 0);

	/* a second client sees it all, and claims the next log area */
	{
		struct krc_kvs c2;
		struct port p2;

		client_open(&c2, &p2, &r);
		check_value(&c2, "alpha", 5, "again", 5);
		assert_int_equal(krc_kvs_update(&c2, "alpha", 5, "c2", 2), 0);
		assert_int_equal(c2.log, 1);
		check_value(&c, "alpha", 5, "c2", 2);
	}
	region_free(&r);
}

/* The same operations without read_many: two round trips for the buckets. */
static void test_serial_reads(void **state)
{
	struct region r;
	struct port p;
	struct krc_kvs c;
	struct krc_kvs_stats s;

	region_new(&r, 16, 4, 4096);
	memset(&p, 0, sizeof(p));
	p.r = &r;
	assert_int_equal(krc_kvs_open(&c, &mem_ops_serial, &p, r.len), 0);
	assert_int_equal(krc_kvs_insert(&c, "k", 1, "v", 1), 0);
	s = c.st;
	check_value(&c, "k", 1, "v", 1);
	assert_int_equal(c.st.round_trips - s.round_trips, 3);
	assert_int_equal(c.st.reads - s.reads, 3);
	region_free(&r);
}

/* Fill one group: a key whose candidate slots are all taken gets ENOSPC. */
static void test_buckets_full(void **state)
{
	struct krc_kvs_loc loc;
	struct region r;
	struct port p;
	struct krc_kvs c;
	char k[KRC_KVS_KEY_MAX + 1], v[KRC_KVS_VAL_MAX + 1];
	u32 i, j, n = 0, kl, vl, used;
	int ret = 0;

	region_new(&r, 1, 1, 8192);
	client_open(&c, &p, &r);
	for (i = 0; i < 100; i++) {
		kl = key_of(i, k);
		vl = val_of(i, 0, v);
		ret = krc_kvs_insert(&c, k, kl, v, vl);
		if (ret)
			break;
		n++;
	}
	assert_int_equal(ret, -ENOSPC);
	assert_true(n >= KRC_KVS_CB_SLOTS && n <= KRC_KVS_GROUP_SLOTS);
	/* every slot the refused key could take is in use */
	krc_kvs_locate(&c.g, k, kl, &loc);
	for (i = 0; i < 2; i++)
		for (j = 0; j < KRC_KVS_CB_SLOTS; j++)
			assert_int_not_equal(*word(&r, loc.cb_off[i] + j * 8), 0);
	/* nothing of it stays: not found, no log space taken */
	used = c.log_used;
	assert_int_equal(krc_kvs_insert(&c, k, kl, v, vl), -ENOSPC);
	assert_int_equal(c.log_used, used);
	assert_int_equal(copies(&r, k, kl), 0);
	assert_int_equal(krc_kvs_get(&c, k, kl, v, sizeof(v), &vl), -ENOENT);
	/* all the others are there */
	for (i = 0; i < n; i++) {
		kl = key_of(i, k);
		vl = val_of(i, 0, v);
		check_value(&c, k, kl, v, vl);
	}
	/* a delete makes room for it when the freed slot is a candidate */
	region_free(&r);
}

/* Slots pointing anywhere: an error, never a READ outside the logs. */
static void test_corrupt_slot(void **state)
{
	struct region r;
	struct port p;
	struct krc_kvs c;
	u8 got[KRC_KVS_VAL_MAX];
	u64 so, good, bad[8], off;
	u32 glen, size, i;

	region_new(&r, 4, 2, 4096);
	client_open(&c, &p, &r);
	assert_int_equal(krc_kvs_insert(&c, "victim", 6, "v", 1), 0);
	assert_int_equal(krc_kvs_insert(&c, "other", 5, "o", 1), 0);
	so = slot_of(&r, "victim", 6);
	assert_int_not_equal(so, 0);
	good = *word(&r, so);
	assert_int_equal(krc_kvs_slot_block(&r.g, good, &off, &size), 0);

	bad[0] = krc_kvs_slot_pack(krc_kvs_slot_fp(good), size, r.len + 64);
	bad[1] = krc_kvs_slot_pack(krc_kvs_slot_fp(good), size,
				   KRC_KVS_SLOT_OFF_MASK & ~7ULL);
	bad[2] = krc_kvs_slot_pack(krc_kvs_slot_fp(good), size, off + 4);
	bad[3] = krc_kvs_slot_pack(krc_kvs_slot_fp(good), size, 0);
	bad[4] = krc_kvs_slot_pack(krc_kvs_slot_fp(good), size,
				   r.g.table_off);
	/* the last bytes of log area 0: the block would cross into area 1 */
	bad[5] = krc_kvs_slot_pack(krc_kvs_slot_fp(good), size,
				   r.g.logs_off + r.g.log_size - 8);
	bad[6] = (good & ~(0xffULL << 48)) | (255ULL << 48);	/* too long */
	bad[7] = (good & ~(0xffULL << 48)) | (1ULL << 48);	/* too short */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(krc_kvs_slot_block(&r.g, bad[i], &off, &size),
				 -EBADMSG);
		*word(&r, so) = bad[i];
		c.st.retries = 0;
		assert_int_equal(krc_kvs_get(&c, "victim", 6, got, sizeof(got),
					     &glen), -EIO);
		assert_int_equal(c.st.retries, KRC_KVS_RETRIES - 1);
		assert_int_equal(krc_kvs_update(&c, "victim", 6, "w", 1), -EIO);
		assert_int_equal(krc_kvs_delete(&c, "victim", 6), -EIO);
		/* a key whose fingerprint differs does not look at it */
		check_value(&c, "other", 5, "o", 1);
	}
	/* a slot with another fingerprint is just a used slot */
	*word(&r, so) = bad[0] ^ (0x5aULL << 56);
	assert_int_equal(krc_kvs_get(&c, "victim", 6, got, sizeof(got), &glen),
			 -ENOENT);
	*word(&r, so) = good;
	check_value(&c, "victim", 6, "v", 1);
	region_free(&r);
}

/* Tear the first READ of a block: the get reads the buckets again. */
static void tear_block_once(struct port *p, u64 off, u8 *buf, u32 len)
{
	if (off >= p->r->g.logs_off && !p->read_calls++)
		buf[len - 1] ^= 0x40;
}

static void test_torn_block(void **state)
{
	struct region r;
	struct port p;
	struct krc_kvs c;
	u8 got[KRC_KVS_VAL_MAX], blk[KRC_KVS_BLOCK_MAX];
	u64 so, slot, off;
	u32 glen, size;

	region_new(&r, 4, 2, 4096);
	client_open(&c, &p, &r);
	assert_int_equal(krc_kvs_insert(&c, "torn", 4, "value", 5), 0);
	p.read_hook = tear_block_once;
	check_value(&c, "torn", 4, "value", 5);
	assert_int_equal(c.st.retries, 1);
	p.read_hook = NULL;

	/* a block corrupted for good: -EIO after every retry */
	so = slot_of(&r, "torn", 4);
	slot = *word(&r, so);
	assert_int_equal(krc_kvs_slot_block(&r.g, slot, &off, &size), 0);
	r.mem[off + KRC_KVS_BLOCK_HDR + 5] ^= 1;	/* a value byte */
	c.st.retries = 0;
	assert_int_equal(krc_kvs_get(&c, "torn", 4, got, sizeof(got), &glen),
			 -EIO);
	assert_int_equal(c.st.retries, KRC_KVS_RETRIES - 1);
	r.mem[off + KRC_KVS_BLOCK_HDR + 5] ^= 1;
	/* lengths that disagree with the slot's */
	r.mem[off] = 5;
	assert_int_equal(krc_kvs_get(&c, "torn", 4, got, sizeof(got), &glen),
			 -EIO);
	r.mem[off] = 4;
	check_value(&c, "torn", 4, "value", 5);

	/*
	 * A valid block of another key behind a slot with our fingerprint
	 * (a fingerprint collision): the full key decides, it is skipped.
	 */
	assert_int_equal(krc_kvs_slot_block(&r.g, slot, &off, &size), 0);
	size = krc_kvs_block_encode(&r.g, "decoy", 5, "dv", 2, 1, blk);
	memcpy(r.mem + r.g.logs_off + r.g.log_size, blk, size);
	*word(&r, so) = krc_kvs_slot_pack(krc_kvs_slot_fp(slot), size,
					  r.g.logs_off + r.g.log_size);
	assert_int_equal(krc_kvs_get(&c, "torn", 4, got, sizeof(got), &glen),
			 -ENOENT);
	assert_int_equal(krc_kvs_get(&c, "decoy", 5, got, sizeof(got), &glen),
			 -ENOENT);	/* its fingerprint is another */
	*word(&r, so) = slot;
	check_value(&c, "torn", 4, "value", 5);
	region_free(&r);
}

/* 70% of the slots of 1024 groups: every key found, with its value. */
static void test_many_keys(void **state)
{
	const u32 n = 17203;
	struct region r;
	struct port p;
	struct krc_kvs c;
	char k[KRC_KVS_KEY_MAX + 1], v[KRC_KVS_VAL_MAX + 1];
	u8 got[KRC_KVS_VAL_MAX];
	u32 i, kl, vl, glen;

	region_new(&r, krc_kvs_groups_for(n, 70), 16, 1U << 18);
	assert_int_equal(r.g.ngroups, 1024);
	client_open(&c, &p, &r);
	for (i = 0; i < n; i++) {
		kl = key_of(i, k);
		vl = val_of(i, 0, v);
		assert_int_equal(krc_kvs_insert(&c, k, kl, v, vl), 0);
	}
	/* one client: one log area after another, no CAS lost, no retry */
	assert_true(c.log >= 1);
	assert_int_equal(c.st.cas_failed, 0);
	assert_int_equal(c.st.retries, 0);
	assert_int_equal(c.st.dups_removed, 0);
	for (i = 0; i < n; i++) {
		kl = key_of(i, k);
		vl = val_of(i, 0, v);
		check_value(&c, k, kl, v, vl);
	}
	for (i = n; i < n + 2000; i++) {
		kl = key_of(i, k);
		assert_int_equal(krc_kvs_get(&c, k, kl, got, sizeof(got),
					     &glen), -ENOENT);
	}
	/* update every third, delete every fifth */
	for (i = 0; i < n; i += 3) {
		kl = key_of(i, k);
		vl = val_of(i, 1, v);
		assert_int_equal(krc_kvs_update(&c, k, kl, v, vl), 0);
	}
	for (i = 0; i < n; i += 5) {
		kl = key_of(i, k);
		assert_int_equal(krc_kvs_delete(&c, k, kl), 0);
	}
	for (i = 0; i < n; i++) {
		kl = key_of(i, k);
		if (i % 5 == 0) {
			assert_int_equal(krc_kvs_get(&c, k, kl, got,
						     sizeof(got), &glen),
					 -ENOENT);
			continue;
		}
		vl = val_of(i, i % 3 == 0, v);
		check_value(&c, k, kl, v, vl);
	}
	region_free(&r);
}

/* A key with both candidate buckets equal to those of @ka. */
static u32 same_buckets(const struct krc_kvs_geom *g, const char *ka,
			char *kb)
{
	struct krc_kvs_loc la, lb;
	u32 i, kl;

	krc_kvs_locate(g, ka, (u32)strlen(ka), &la);
	for (i = 0; i < 100000; i++) {
		kl = (u32)snprintf(kb, KRC_KVS_KEY_MAX + 1, "b%u", i);
		krc_kvs_locate(g, kb, kl, &lb);
		if (lb.cb_off[0] == la.cb_off[0] &&
		    lb.cb_off[1] == la.cb_off[1] && strcmp(ka, kb))
			return kl;
	}
	fail_msg("no key with the same buckets");
	return 0;
}

/* Before client A's first CAS: client B inserts (its key, its value). */
struct race {
	struct krc_kvs *b;
	const char *key;
	u32 klen;
	const char *val;
	int ret;
};

static void b_inserts_first(struct port *p, u64 off)
{
	struct race *rc = p->hook_arg;

	if (p->hook_calls++)
		return;
	rc->ret = krc_kvs_insert(rc->b, rc->key, rc->klen, rc->val,
				 (u32)strlen(rc->val));
}

static void test_race_insert(void **state)
{
	struct region r;
	struct port pa, pb;
	struct krc_kvs a, b;
	struct race rc;
	char kb[KRC_KVS_KEY_MAX + 1];
	u32 kbl;

	region_new(&r, 2, 4, 4096);
	client_open(&a, &pa, &r);
	client_open(&b, &pb, &r);
	kbl = same_buckets(&r.g, "ka", kb);

	/* B takes the slot A is about to CAS: A's CAS fails, A looks again */
	rc.b = &b;
	rc.key = kb;
	rc.klen = kbl;
	rc.val = "from b";
	rc.ret = 1;
	pa.cas_hook = b_inserts_first;
	pa.hook_arg = &rc;
	assert_int_equal(krc_kvs_insert(&a, "ka", 2, "from a", 6), 0);
	assert_int_equal(rc.ret, 0);
	assert_int_equal(a.st.cas_failed, 1);
	assert_int_equal(b.st.cas_failed, 0);
	assert_int_equal(copies(&r, "ka", 2), 1);
	assert_int_equal(copies(&r, kb, kbl), 1);
	assert_int_not_equal(slot_of(&r, "ka", 2), slot_of(&r, kb, kbl));
	check_value(&a, "ka", 2, "from a", 6);
	check_value(&a, kb, kbl, "from b", 6);
	check_value(&b, "ka", 2, "from a", 6);

	/* B inserts the same key first: A's CAS fails, A then finds it */
	pa.hook_calls = 0;
	rc.key = "same";
	rc.klen = 4;
	rc.val = "b was first";
	assert_int_equal(krc_kvs_insert(&a, "same", 4, "a", 1), -EEXIST);
	assert_int_equal(rc.ret, 0);
	assert_int_equal(a.st.cas_failed, 2);
	assert_int_equal(copies(&r, "same", 4), 1);
	check_value(&a, "same", 4, "b was first", 11);
	region_free(&r);
}

/*
 * Before A's CAS: B's copy of the same key appears in another empty
 * candidate slot (below or above A's), as when both inserted at once and
 * neither CAS failed. A's check after its CAS keeps the lowest copy.
 */
struct dup {
	struct region *r;
	int lower;
	int update_mine;	/* A's copy is updated before A empties it */
	u64 placed;
};

static void b_copy_elsewhere(struct port *p, u64 off)
{
	struct dup *d = p->hook_arg;
	struct region *r = d->r;
	struct krc_kvs_loc loc;
	u8 blk[KRC_KVS_BLOCK_MAX];
	u64 best = 0, cand, blk_off;
	u32 i, j, size;

	if (p->hook_calls++ == 1 && d->update_mine) {
		/*
		 * A's second CAS empties its own copy: a third client has
		 * just updated that copy (a new block in log area 2).
		 */
		blk_off = r->g.logs_off + 2ULL * r->g.log_size;
		krc_kvs_locate(&r->g, "dup", 3, &loc);
		size = krc_kvs_block_encode(&r->g, "dup", 3, "sea", 3, 2, blk);
		memcpy(r->mem + blk_off, blk, size);
		*word(r, off) = krc_kvs_slot_pack(loc.fp, size, blk_off);
		return;
	}
	if (p->hook_calls > 1)
		return;
	krc_kvs_locate(&r->g, "dup", 3, &loc);
	for (i = 0; i < 2; i++) {
		for (j = 0; j < KRC_KVS_CB_SLOTS; j++) {
			cand = loc.cb_off[i] + j * 8;
			if (cand == off || *word(r, cand))
				continue;
			if (d->lower ? cand < off && (!best || cand < best) :
				       cand > off && cand > best)
				best = cand;
		}
	}
	assert_int_not_equal(best, 0);
	/* B's block at the start of log area 3 (nobody claimed it) */
	blk_off = r->g.logs_off + 3ULL * r->g.log_size;
	size = krc_kvs_block_encode(&r->g, "dup", 3, "bee", 3, 3, blk);
	memcpy(r->mem + blk_off, blk, size);
	*word(r, best) = krc_kvs_slot_pack(loc.fp, size, blk_off);
	d->placed = best;
}

/*
 * A's key has a right side (main bucket B2) as first combined bucket, so
 * that A's slot (B2's first) has empty candidates below (B1) and above.
 */
static void test_race_duplicate(void **state)
{
	int lower;

	for (lower = 0; lower < 3; lower++) {
		struct region r;
		struct port pa;
		struct krc_kvs a;
		struct krc_kvs_loc loc;
		struct dup d = { .r = &r, .lower = lower > 0,
				 .update_mine = lower == 2 };
		u64 seed = 0x6b76730001ULL;

		/* a seed that puts "dup" on a right side, groups apart */
		for (;; seed++) {
			struct krc_kvs_geom g;

			krc_kvs_geom_init(&g, 4, 4, 4096, seed);
			krc_kvs_locate(&g, "dup", 3, &loc);
			if (!loc.main_first[0] &&
			    (loc.cb_off[1] - KRC_KVS_HDR_SIZE) /
			    KRC_KVS_GROUP_SIZE !=
			    (loc.cb_off[0] - KRC_KVS_HDR_SIZE) /
			    KRC_KVS_GROUP_SIZE)
				break;
		}
		memset(&r, 0, sizeof(r));
		assert_int_equal(krc_kvs_geom_init(&r.g, 4, 4, 4096, seed), 0);
		r.len = r.g.region_size;
		r.mem = calloc(1, r.len);
		assert_non_null(r.mem);
		assert_int_equal(krc_kvs_format(r.mem, r.len, &r.g), 0);
		client_open(&a, &pa, &r);
		pa.cas_hook = b_copy_elsewhere;
		pa.hook_arg = &d;
		if (d.update_mine) {
			/* A's own copy changed: A empties it all the same */
			assert_int_equal(krc_kvs_insert(&a, "dup", 3, "ay", 2),
					 -EEXIST);
			assert_int_equal(a.st.cas_failed, 1);
			check_value(&a, "dup", 3, "bee", 3);
			assert_int_equal(slot_of(&r, "dup", 3), d.placed);
		} else if (lower) {
			/* B's copy is the lower one: A removes its own */
			assert_int_equal(krc_kvs_insert(&a, "dup", 3, "ay", 2),
					 -EEXIST);
			check_value(&a, "dup", 3, "bee", 3);
			assert_int_equal(slot_of(&r, "dup", 3), d.placed);
		} else {
			/* A's is the lower: A removes B's */
			assert_int_equal(krc_kvs_insert(&a, "dup", 3, "ay", 2),
					 0);
			check_value(&a, "dup", 3, "ay", 2);
			assert_int_not_equal(slot_of(&r, "dup", 3), d.placed);
			assert_int_equal(*word(&r, d.placed), 0);
		}
		assert_int_equal(a.st.dups_removed, 1);
		assert_int_equal(copies(&r, "dup", 3), 1);
		region_free(&r);
	}
}

/* Log areas: claimed with FAA, one after another, until none is left. */
static void test_logs(void **state)
{
	struct region r;
	struct port p, p2;
	struct krc_kvs c, c2;
	char k[KRC_KVS_KEY_MAX + 1], v[KRC_KVS_VAL_MAX + 1];
	u32 i, kl, vl, n = 0, per_log;
	int ret = 0;

	region_new(&r, 64, 2, 256);
	client_open(&c, &p, &r);
	client_open(&c2, &p2, &r);
	for (i = 0; i < 100; i++) {
		kl = key_of(i, k);
		vl = val_of(i, 0, v);
		ret = krc_kvs_insert(&c, k, kl, v, vl);
		if (ret)
			break;
		n++;
	}
	assert_int_equal(ret, -ENOBUFS);
	per_log = 256 / krc_kvs_block_size(kl, vl);
	assert_int_equal(n, 2 * per_log);
	assert_int_equal(c.st.faa, 3);
	/* the other client finds none left either, but reads everything */
	assert_int_equal(krc_kvs_claim_log(&c2), -ENOBUFS);
	assert_int_equal(krc_kvs_insert(&c2, "x", 1, "y", 1), -ENOBUFS);
	for (i = 0; i < n; i++) {
		kl = key_of(i, k);
		vl = val_of(i, 0, v);
		check_value(&c2, k, kl, v, vl);
	}
	/* deletes need no log space */
	kl = key_of(0, k);
	assert_int_equal(krc_kvs_delete(&c2, k, kl), 0);
	region_free(&r);
}

/* A header that lies: refused before anything else is read. */
static void test_open_untrusted(void **state)
{
	struct region r;
	struct port p;
	struct krc_kvs c;
	u8 *h;

	region_new(&r, 4, 2, 4096);
	memset(&p, 0, sizeof(p));
	p.r = &r;
	h = r.mem;
	assert_int_equal(krc_kvs_open(&c, &mem_ops, &p, r.len - 1), -EINVAL);
	assert_int_equal(krc_kvs_open(&c, &mem_ops, &p, 64), -EINVAL);
	h[12] = 8;	/* 8 groups: the check no longer matches */
	assert_int_equal(krc_kvs_open(&c, &mem_ops, &p, r.len), -EINVAL);
	h[12] = 4;
	h[8] = 2;	/* version 2 */
	assert_int_equal(krc_kvs_open(&c, &mem_ops, &p, r.len), -EPROTO);
	h[8] = 1;
	assert_int_equal(krc_kvs_open(&c, &mem_ops, &p, r.len), 0);
	assert_int_equal(c.st.reads, 1);
	region_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_basics),
		cmocka_unit_test(test_serial_reads),
		cmocka_unit_test(test_buckets_full),
		cmocka_unit_test(test_corrupt_slot),
		cmocka_unit_test(test_torn_block),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_race_insert),
		cmocka_unit_test(test_race_duplicate),
		cmocka_unit_test(test_logs),
		cmocka_unit_test(test_open_untrusted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
