// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kvs.c - the RACE-like one-sided hash table of the key-value store demo:
 * geometry, format, header and block checks, and the client operations
 * over an abstract remote memory. See kvs.h for the layout, docs/kvs.md
 * for the operations and their costs.
 */
#include "kvs.h"
#include "hash.h"

/* Header fields (byte offsets). */
#define KRC_KVS_H_MAGIC		0
#define KRC_KVS_H_VERSION	8
#define KRC_KVS_H_NGROUPS	12
#define KRC_KVS_H_NLOGS		16
#define KRC_KVS_H_LOG_SIZE	20
#define KRC_KVS_H_SEED		24
#define KRC_KVS_H_REGION_SIZE	32
#define KRC_KVS_H_CHECK		40	/* covers [0, 40) */

/* Block fields. */
#define KRC_KVS_B_KLEN		0
#define KRC_KVS_B_VLEN		1
#define KRC_KVS_B_TAG		2
#define KRC_KVS_B_WRITER	4
#define KRC_KVS_B_CHECK		8

/* Salts that keep the hashes of the table apart. */
#define KRC_KVS_SALT_HDR	0x6864722d6b7673ULL
#define KRC_KVS_SALT_H2		0x68322d6b76732d32ULL
#define KRC_KVS_SALT_BLOCK	0x626c6b2d6b7673ULL

/* Slots of both combined buckets of a key, each slot once. */
#define KRC_KVS_VIEW_SLOTS	(2 * KRC_KVS_CB_SLOTS)

struct krc_kvs_view {
	struct krc_kvs_loc loc;
	u8 cb[2][KRC_KVS_CB_SIZE];
	u32 n;
	u64 off[KRC_KVS_VIEW_SLOTS];	/* region offset of the slot */
	u64 val[KRC_KVS_VIEW_SLOTS];	/* its value in this view */
	u8 cbi[KRC_KVS_VIEW_SLOTS];	/* its combined bucket, 0 or 1 */
};

/* A key found in a view. */
struct krc_kvs_hit {
	u32 idx;			/* in the view */
	u32 vlen;
	u8 val[KRC_KVS_VAL_MAX];
};

static bool krc_kvs_pow2(u64 x)
{
	return x && !(x & (x - 1));
}

int krc_kvs_geom_init(struct krc_kvs_geom *g, u32 ngroups, u32 nlogs,
		      u32 log_size, u64 seed)
{
	memset(g, 0, sizeof(*g));
	if (!krc_kvs_pow2(ngroups) || ngroups > KRC_KVS_MAX_GROUPS)
		return -EINVAL;
	if (!nlogs || nlogs > KRC_KVS_MAX_LOGS)
		return -EINVAL;
	if (!krc_kvs_pow2(log_size) || log_size < KRC_KVS_MIN_LOG ||
	    log_size > KRC_KVS_MAX_LOG)
		return -EINVAL;
	g->ngroups = ngroups;
	g->nlogs = nlogs;
	g->log_size = log_size;
	g->seed = seed;
	g->table_off = KRC_KVS_HDR_SIZE;
	g->logs_off = g->table_off + (u64)ngroups * KRC_KVS_GROUP_SIZE;
	/* at most 2^30 * 2^16 + 2^22 * 192 + 128: well inside 48 bits */
	g->region_size = g->logs_off + (u64)nlogs * log_size;
	return 0;
}

u32 krc_kvs_groups_for(u64 nkeys, u32 load_pct)
{
	u64 slots, n = 1;

	if (!load_pct || load_pct > 100)
		load_pct = 50;
	slots = (nkeys * 100 + load_pct - 1) / load_pct;
	while (n * KRC_KVS_GROUP_SLOTS < slots && n < KRC_KVS_MAX_GROUPS)
		n <<= 1;
	return (u32)n;
}

static void krc_kvs_header_encode(u8 *h, const struct krc_kvs_geom *g)
{
	memset(h, 0, KRC_KVS_HDR_SIZE);
	krc_put_le64(h + KRC_KVS_H_MAGIC, KRC_KVS_MAGIC);
	krc_put_le32(h + KRC_KVS_H_VERSION, KRC_KVS_VERSION);
	krc_put_le32(h + KRC_KVS_H_NGROUPS, g->ngroups);
	krc_put_le32(h + KRC_KVS_H_NLOGS, g->nlogs);
	krc_put_le32(h + KRC_KVS_H_LOG_SIZE, g->log_size);
	krc_put_le64(h + KRC_KVS_H_SEED, g->seed);
	krc_put_le64(h + KRC_KVS_H_REGION_SIZE, g->region_size);
	krc_put_le64(h + KRC_KVS_H_CHECK,
		     krc_hash64(KRC_KVS_SALT_HDR, h, KRC_KVS_H_CHECK));
}

int krc_kvs_format(void *region, u64 len, const struct krc_kvs_geom *g)
{
	struct krc_kvs_geom chk;

	if (krc_kvs_geom_init(&chk, g->ngroups, g->nlogs, g->log_size,
			      g->seed) || len < chk.region_size)
		return -EINVAL;
	memset(region, 0, (size_t)chk.region_size);
	krc_kvs_header_encode(region, &chk);
	/* log_next (native u64, the FAA target) is 0: area 0 comes first */
	return 0;
}

int krc_kvs_parse_header(const void *hdr, u64 region_len,
			 struct krc_kvs_geom *g)
{
	const u8 *h = hdr;

	if (krc_get_le64(h + KRC_KVS_H_MAGIC) != KRC_KVS_MAGIC ||
	    krc_get_le32(h + KRC_KVS_H_VERSION) != KRC_KVS_VERSION)
		return -EPROTO;
	if (krc_get_le64(h + KRC_KVS_H_CHECK) !=
	    krc_hash64(KRC_KVS_SALT_HDR, h, KRC_KVS_H_CHECK))
		return -EINVAL;
	if (krc_kvs_geom_init(g, krc_get_le32(h + KRC_KVS_H_NGROUPS),
			      krc_get_le32(h + KRC_KVS_H_NLOGS),
			      krc_get_le32(h + KRC_KVS_H_LOG_SIZE),
			      krc_get_le64(h + KRC_KVS_H_SEED)))
		return -EINVAL;
	if (krc_get_le64(h + KRC_KVS_H_REGION_SIZE) != g->region_size ||
	    g->region_size > region_len)
		return -EINVAL;
	return 0;
}

void krc_kvs_locate(const struct krc_kvs_geom *g, const void *key, u32 klen,
		    struct krc_kvs_loc *loc)
{
	u64 h[2], grp;
	int i;

	h[0] = krc_hash64(g->seed, key, klen);
	h[1] = krc_hash64(g->seed ^ KRC_KVS_SALT_H2, key, klen);
	for (i = 0; i < 2; i++) {
		u32 side = (u32)(h[i] >> 32) & 1;

		grp = h[i] & (g->ngroups - 1);
		loc->cb_off[i] = g->table_off + grp * KRC_KVS_GROUP_SIZE +
				 side * KRC_KVS_BUCKET_SIZE;
		loc->main_first[i] = !side;
	}
	loc->fp = (u8)(h[0] >> 56);
}

int krc_kvs_slot_block(const struct krc_kvs_geom *g, u64 slot, u64 *off,
		       u32 *size)
{
	u64 o = slot & KRC_KVS_SLOT_OFF_MASK, rel;
	u32 sz = (u32)((slot >> 48) & 0xff) * 8;

	if (sz < KRC_KVS_BLOCK_MIN || sz > KRC_KVS_BLOCK_MAX || (o & 7))
		return -EBADMSG;
	if (o < g->logs_off)
		return -EBADMSG;
	rel = o - g->logs_off;
	if (rel >= (u64)g->nlogs * g->log_size)
		return -EBADMSG;
	/* within one log area: then within the region too */
	if ((rel & (g->log_size - 1)) + sz > g->log_size)
		return -EBADMSG;
	*off = o;
	*size = sz;
	return 0;
}

static u64 krc_kvs_block_check(const struct krc_kvs_geom *g, const u8 *buf,
			       u32 size)
{
	u8 tmp[KRC_KVS_BLOCK_MAX];

	memcpy(tmp, buf, size);
	memset(tmp + KRC_KVS_B_CHECK, 0, 8);
	return krc_hash64(g->seed ^ KRC_KVS_SALT_BLOCK, tmp, size);
}

u32 krc_kvs_block_encode(const struct krc_kvs_geom *g, const void *key,
			 u32 klen, const void *val, u32 vlen, u32 writer,
			 u8 *buf)
{
	u32 size = krc_kvs_block_size(klen, vlen);

	memset(buf, 0, size);
	buf[KRC_KVS_B_KLEN] = (u8)klen;
	buf[KRC_KVS_B_VLEN] = (u8)vlen;
	krc_put_le16(buf + KRC_KVS_B_TAG, KRC_KVS_BLOCK_TAG);
	krc_put_le32(buf + KRC_KVS_B_WRITER, writer);
	memcpy(buf + KRC_KVS_BLOCK_HDR, key, klen);
	if (vlen)
		memcpy(buf + KRC_KVS_BLOCK_HDR + klen, val, vlen);
	krc_put_le64(buf + KRC_KVS_B_CHECK, krc_kvs_block_check(g, buf, size));
	return size;
}

int krc_kvs_block_decode(const struct krc_kvs_geom *g, const u8 *buf,
			 u32 size, const u8 **key, u32 *klen, const u8 **val,
			 u32 *vlen)
{
	u32 kl = buf[KRC_KVS_B_KLEN], vl = buf[KRC_KVS_B_VLEN];

	if (size < KRC_KVS_BLOCK_MIN || size > KRC_KVS_BLOCK_MAX)
		return -EBADMSG;
	if (!kl || kl > KRC_KVS_KEY_MAX || vl > KRC_KVS_VAL_MAX ||
	    krc_kvs_block_size(kl, vl) != size ||
	    krc_get_le16(buf + KRC_KVS_B_TAG) != KRC_KVS_BLOCK_TAG)
		return -EBADMSG;
	if (krc_get_le64(buf + KRC_KVS_B_CHECK) !=
	    krc_kvs_block_check(g, buf, size))
		return -EBADMSG;
	*key = buf + KRC_KVS_BLOCK_HDR;
	*klen = kl;
	*val = buf + KRC_KVS_BLOCK_HDR + kl;
	*vlen = vl;
	return 0;
}

/*
 * The backend calls. Every offset the table computes is inside the
 * region by construction; the checks here are the last line.
 */
static bool krc_kvs_in_region(const struct krc_kvs *c, u64 off, u32 len)
{
	return off <= c->g.region_size && len <= c->g.region_size - off;
}

static int krc_kvs_read(struct krc_kvs *c, u64 off, void *buf, u32 len)
{
	if (!krc_kvs_in_region(c, off, len))
		return -EFAULT;
	c->st.reads++;
	c->st.round_trips++;
	return c->ops->read(c->ctx, off, buf, len);
}

static int krc_kvs_write(struct krc_kvs *c, u64 off, const void *buf, u32 len)
{
	if (!krc_kvs_in_region(c, off, len))
		return -EFAULT;
	c->st.writes++;
	c->st.round_trips++;
	return c->ops->write(c->ctx, off, buf, len);
}

static int krc_kvs_cas(struct krc_kvs *c, u64 off, u64 expect, u64 desired,
		       u64 *old)
{
	int ret;

	if ((off & 7) || !krc_kvs_in_region(c, off, 8))
		return -EFAULT;
	c->st.cas++;
	c->st.round_trips++;
	ret = c->ops->cas(c->ctx, off, expect, desired, old);
	if (!ret && *old != expect)
		c->st.cas_failed++;
	return ret;
}

int krc_kvs_open(struct krc_kvs *c, const struct krc_kvs_ops *ops, void *ctx,
		 u64 region_len)
{
	u8 hdr[KRC_KVS_HDR_SIZE];
	int ret;

	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->ctx = ctx;
	c->log = -1;
	if (region_len < KRC_KVS_HDR_SIZE)
		return -EINVAL;
	c->st.reads++;
	c->st.round_trips++;
	ret = ops->read(ctx, 0, hdr, KRC_KVS_HDR_SIZE);
	if (ret)
		return ret;
	return krc_kvs_parse_header(hdr, region_len, &c->g);
}

int krc_kvs_claim_log(struct krc_kvs *c)
{
	u64 old;
	int ret;

	c->st.faa++;
	c->st.round_trips++;
	ret = c->ops->faa(c->ctx, KRC_KVS_H_LOG_NEXT, 1, &old);
	if (ret)
		return ret;
	if (old >= c->g.nlogs)
		return -ENOBUFS;
	c->log = (s64)old;
	c->log_off = c->g.logs_off + old * c->g.log_size;
	c->log_used = 0;
	return 0;
}

/* READ both combined buckets of @v->loc and list their slots. */
static int krc_kvs_read_view(struct krc_kvs *c, struct krc_kvs_view *v)
{
	struct krc_kvs_rd rd[2];
	unsigned int nrd = 1, i, j, k;
	int ret;

	rd[0].off = v->loc.cb_off[0];
	rd[0].buf = v->cb[0];
	rd[0].len = KRC_KVS_CB_SIZE;
	if (v->loc.cb_off[1] != v->loc.cb_off[0]) {
		rd[1].off = v->loc.cb_off[1];
		rd[1].buf = v->cb[1];
		rd[1].len = KRC_KVS_CB_SIZE;
		nrd = 2;
	}
	for (i = 0; i < nrd; i++)
		if (!krc_kvs_in_region(c, rd[i].off, rd[i].len))
			return -EFAULT;
	if (c->ops->read_many && nrd > 1) {
		c->st.reads += nrd;
		c->st.round_trips++;
		ret = c->ops->read_many(c->ctx, rd, nrd);
	} else {
		for (i = 0, ret = 0; i < nrd && !ret; i++)
			ret = krc_kvs_read(c, rd[i].off, rd[i].buf, rd[i].len);
	}
	if (ret)
		return ret;
	v->n = 0;
	for (i = 0; i < nrd; i++) {
		for (j = 0; j < KRC_KVS_CB_SLOTS; j++) {
			/* main bucket first: the insert's preference */
			u32 s = v->loc.main_first[i] ? j :
				(j + KRC_KVS_SLOTS) % KRC_KVS_CB_SLOTS;
			u64 off = v->loc.cb_off[i] + (u64)s * 8;
			bool seen = false;

			for (k = 0; k < v->n; k++)
				seen |= v->off[k] == off;
			if (seen)
				continue;
			v->off[v->n] = off;
			memcpy(&v->val[v->n], v->cb[i] + s * 8, 8);
			v->cbi[v->n] = (u8)i;
			v->n++;
		}
	}
	return 0;
}

/*
 * Look for @key in the slots of @v from index @from on, skipping slot
 * offset @skip (0: none). 0 and *hit, -ENOENT, -EAGAIN (a slot with the
 * key's fingerprint or its block is inconsistent: hit->idx says which),
 * or a backend error.
 */
static int krc_kvs_scan(struct krc_kvs *c, const struct krc_kvs_view *v,
			const void *key, u32 klen, u32 from, u64 skip,
			struct krc_kvs_hit *hit)
{
	u8 blk[KRC_KVS_BLOCK_MAX];
	const u8 *bk, *bv;
	u32 i, size, bkl, bvl;
	u64 off;
	int ret;

	for (i = from; i < v->n; i++) {
		if (!v->val[i] || krc_kvs_slot_fp(v->val[i]) != v->loc.fp ||
		    v->off[i] == skip)
			continue;
		hit->idx = i;
		if (krc_kvs_slot_block(&c->g, v->val[i], &off, &size))
			return -EAGAIN;
		ret = krc_kvs_read(c, off, blk, size);
		if (ret)
			return ret;
		if (krc_kvs_block_decode(&c->g, blk, size, &bk, &bkl, &bv,
					 &bvl))
			return -EAGAIN;
		if (bkl != klen || memcmp(bk, key, klen))
			continue;	/* another key with this fingerprint */
		hit->vlen = bvl;
		memcpy(hit->val, bv, bvl);
		return 0;
	}
	return -ENOENT;
}

/*
 * Find @key: read views until one is consistent. 0 (*hit, the view in
 * @v), -ENOENT (@v is the view that says so), -EIO, or a backend error.
 */
static int krc_kvs_lookup(struct krc_kvs *c, const void *key, u32 klen,
			  struct krc_kvs_view *v, struct krc_kvs_hit *hit)
{
	int i, ret;

	krc_kvs_locate(&c->g, key, klen, &v->loc);
	for (i = 0; i < KRC_KVS_RETRIES; i++) {
		if (i)
			c->st.retries++;
		ret = krc_kvs_read_view(c, v);
		if (ret)
			return ret;
		ret = krc_kvs_scan(c, v, key, klen, 0, 0, hit);
		if (ret != -EAGAIN)
			return ret;
	}
	return -EIO;
}

static bool krc_kvs_args_ok(const void *key, u32 klen, const void *val,
			    u32 vlen)
{
	return key && klen && klen <= KRC_KVS_KEY_MAX &&
	       vlen <= KRC_KVS_VAL_MAX && (val || !vlen);
}

int krc_kvs_get(struct krc_kvs *c, const void *key, u32 klen, void *val,
		u32 vcap, u32 *vlen)
{
	struct krc_kvs_view v;
	struct krc_kvs_hit hit;
	int ret;

	if (!krc_kvs_args_ok(key, klen, NULL, 0))
		return -EINVAL;
	ret = krc_kvs_lookup(c, key, klen, &v, &hit);
	if (ret)
		return ret;
	if (vlen)
		*vlen = hit.vlen;
	if (hit.vlen > vcap)
		return -EMSGSIZE;
	if (hit.vlen)
		memcpy(val, hit.val, hit.vlen);
	return 0;
}

/*
 * Write the block of @key/@val at the end of this client's log (claiming
 * an area first if there is none or it is full): *slot gets the slot
 * value that publishes it. The log advances only when the slot is
 * published (krc_kvs_publish): an unpublished block is overwritten by the
 * next one.
 */
static int krc_kvs_put_block(struct krc_kvs *c, const void *key, u32 klen,
			     const void *val, u32 vlen, u8 fp, u64 *slot,
			     u32 *size)
{
	u8 blk[KRC_KVS_BLOCK_MAX];
	u32 sz = krc_kvs_block_size(klen, vlen);
	int ret;

	if (c->log < 0 || c->log_used + sz > c->g.log_size) {
		ret = krc_kvs_claim_log(c);
		if (ret)
			return ret;
	}
	krc_kvs_block_encode(&c->g, key, klen, val, vlen, (u32)c->log, blk);
	ret = krc_kvs_write(c, c->log_off + c->log_used, blk, sz);
	if (ret)
		return ret;
	*slot = krc_kvs_slot_pack(fp, sz, c->log_off + c->log_used);
	*size = sz;
	return 0;
}

/* The empty slot an insert takes: the emptier combined bucket first. */
static int krc_kvs_pick_empty(const struct krc_kvs_view *v)
{
	u32 free[2] = { 0, 0 }, i, pass;
	u8 first;

	for (i = 0; i < v->n; i++)
		free[v->cbi[i]] += !v->val[i];
	first = free[1] > free[0];
	for (pass = 0; pass < 2; pass++) {
		u8 want = pass ? !first : first;

		for (i = 0; i < v->n; i++)
			if (v->cbi[i] == want && !v->val[i])
				return (int)i;
	}
	return -ENOSPC;
}

/*
 * Empty the slot at @off, seen holding a copy of @key as @seen. If it
 * changed meanwhile (another client updated that copy), empty it still,
 * as long as it holds a block of @key: 1 emptied, 0 not (empty already, or
 * another key's now), or a backend error.
 */
static int krc_kvs_clear(struct krc_kvs *c, u64 off, u64 seen,
			 const void *key, u32 klen)
{
	u8 blk[KRC_KVS_BLOCK_MAX];
	const u8 *bk, *bv;
	u32 size, bkl, bvl;
	u64 old, boff;
	int i, ret;

	for (i = 0; i < KRC_KVS_CAS_RETRIES; i++) {
		ret = krc_kvs_cas(c, off, seen, 0, &old);
		if (ret)
			return ret;
		if (old == seen)
			return 1;
		if (!old || krc_kvs_slot_block(&c->g, old, &boff, &size))
			return 0;
		ret = krc_kvs_read(c, boff, blk, size);
		if (ret)
			return ret;
		if (krc_kvs_block_decode(&c->g, blk, size, &bk, &bkl, &bv,
					 &bvl) || bkl != klen ||
		    memcmp(bk, key, klen))
			return 0;
		seen = old;
	}
	return 0;
}

/*
 * After our slot @mine (value @mval) was published: another client may
 * have inserted the same key into another empty slot at the same time.
 * READ the buckets again; of all copies the one at the lowest offset
 * stays. A client seeing a copy below its own removes its own (its insert
 * failed: -EEXIST); seeing copies above its own, it removes them. Of two
 * racing inserts, the later one's view sees both copies. A copy updated
 * in between is removed all the same (krc_kvs_clear). Inconsistent
 * candidates are not copies (the insert has happened already).
 */
static int krc_kvs_dedupe(struct krc_kvs *c, struct krc_kvs_view *v,
			  const void *key, u32 klen, u64 mine, u64 mval)
{
	struct krc_kvs_hit hit;
	u32 from = 0;
	int ret;

	/* our slot is published: a failed check READ fails nothing */
	if (krc_kvs_read_view(c, v))
		return 0;
	for (;;) {
		ret = krc_kvs_scan(c, v, key, klen, from, mine, &hit);
		if (ret == -EAGAIN) {
			/* not a copy: go on after it */
			from = hit.idx + 1;
			continue;
		}
		if (ret)
			return 0;
		if (v->off[hit.idx] < mine) {
			ret = krc_kvs_clear(c, mine, mval, key, klen);
			if (ret < 0)
				return ret;
			c->st.dups_removed += ret;
			return -EEXIST;
		}
		ret = krc_kvs_clear(c, v->off[hit.idx], v->val[hit.idx], key,
				    klen);
		if (ret < 0)
			return ret;
		c->st.dups_removed += ret;
		from = hit.idx + 1;
	}
}

int krc_kvs_insert(struct krc_kvs *c, const void *key, u32 klen,
		   const void *val, u32 vlen)
{
	struct krc_kvs_view v;
	struct krc_kvs_hit hit;
	u64 slot, old;
	u32 size;
	int i, ret, e;

	if (!krc_kvs_args_ok(key, klen, val, vlen))
		return -EINVAL;
	krc_kvs_locate(&c->g, key, klen, &v.loc);
	ret = krc_kvs_put_block(c, key, klen, val, vlen, v.loc.fp, &slot,
				&size);
	if (ret)
		return ret;
	for (i = 0; i < KRC_KVS_CAS_RETRIES; i++) {
		ret = krc_kvs_lookup(c, key, klen, &v, &hit);
		if (!ret)
			return -EEXIST;
		if (ret != -ENOENT)
			return ret;
		e = krc_kvs_pick_empty(&v);
		if (e < 0)
			return e;
		ret = krc_kvs_cas(c, v.off[e], 0, slot, &old);
		if (ret)
			return ret;
		if (old)
			continue;	/* another client took it: look again */
		c->log_used += size;	/* published: never overwritten */
		return krc_kvs_dedupe(c, &v, key, klen, v.off[e], slot);
	}
	return -EBUSY;
}

int krc_kvs_update(struct krc_kvs *c, const void *key, u32 klen,
		   const void *val, u32 vlen)
{
	struct krc_kvs_view v;
	struct krc_kvs_hit hit;
	u64 slot, old;
	u32 size;
	int i, ret;

	if (!krc_kvs_args_ok(key, klen, val, vlen))
		return -EINVAL;
	krc_kvs_locate(&c->g, key, klen, &v.loc);
	ret = krc_kvs_put_block(c, key, klen, val, vlen, v.loc.fp, &slot,
				&size);
	if (ret)
		return ret;
	for (i = 0; i < KRC_KVS_CAS_RETRIES; i++) {
		ret = krc_kvs_lookup(c, key, klen, &v, &hit);
		if (ret)
			return ret;
		ret = krc_kvs_cas(c, v.off[hit.idx], v.val[hit.idx], slot,
				  &old);
		if (ret)
			return ret;
		if (old == v.val[hit.idx]) {
			c->log_used += size;
			return 0;
		}
	}
	return -EBUSY;
}

int krc_kvs_delete(struct krc_kvs *c, const void *key, u32 klen)
{
	struct krc_kvs_view v;
	struct krc_kvs_hit hit;
	u64 old;
	int i, ret;

	if (!krc_kvs_args_ok(key, klen, NULL, 0))
		return -EINVAL;
	for (i = 0; i < KRC_KVS_CAS_RETRIES; i++) {
		ret = krc_kvs_lookup(c, key, klen, &v, &hit);
		if (ret)
			return ret;
		ret = krc_kvs_cas(c, v.off[hit.idx], v.val[hit.idx], 0, &old);
		if (ret)
			return ret;
		if (old == v.val[hit.idx])
			return 0;
	}
	return -EBUSY;
}
