// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_kvs.c - libFuzzer target for the one-sided hash table of the
 * key-value store demo (common/kvs.c). The input picks a small geometry
 * and a sequence of operations by two clients on one region:
 *   - in clean mode, only table operations (and torn READs of KV blocks,
 *     which the checksum catches): every result must match a reference
 *     model of the keys;
 *   - in garbage mode, also arbitrary bytes, slots and valid-looking
 *     blocks written anywhere into the region, the header included:
 *     every result must be one of the documented errors, values in
 *     bounds, and no request may leave the region (the backend aborts,
 *     ASan watches the exact-size buffer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NKEYS	256

static void check(bool ok)
{
	if (!ok)
		abort();
}

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t next8(struct input *in)
{
	uint8_t b;

	if (!in->n)
		return 0;
	b = *in->p++;
	in->n--;
	return b;
}

static uint16_t next16(struct input *in)
{
	return (uint16_t)(next8(in) | next8(in) << 8);
}

struct region {
	u8 *mem;
	u64 len;
	int tear;		/* flip a byte of the next READ of a block */
	u64 logs_off;
};

static void in_bounds(struct region *r, u64 off, u32 len)
{
	/* the table never asks for anything outside the region */
	check(off <= r->len && len <= r->len - off);
}

static int mem_read(void *ctx, u64 off, void *buf, u32 len)
{
	struct region *r = ctx;

	in_bounds(r, off, len);
	memcpy(buf, r->mem + off, len);
	if (r->tear && off >= r->logs_off) {
		((u8 *)buf)[(r->tear - 1) % len] ^= 0x10;
		r->tear = 0;
	}
	return 0;
}

static int mem_write(void *ctx, u64 off, const void *buf, u32 len)
{
	struct region *r = ctx;

	in_bounds(r, off, len);
	memcpy(r->mem + off, buf, len);
	return 0;
}

static int mem_cas(void *ctx, u64 off, u64 expect, u64 desired, u64 *old)
{
	struct region *r = ctx;
	u64 cur;

	check(!(off & 7));
	in_bounds(r, off, 8);
	memcpy(&cur, r->mem + off, 8);
	if (cur == expect)
		memcpy(r->mem + off, &desired, 8);
	*old = cur;
	return 0;
}

static int mem_faa(void *ctx, u64 off, u64 add, u64 *old)
{
	struct region *r = ctx;
	u64 cur, nv;

	check(!(off & 7));
	in_bounds(r, off, 8);
	memcpy(&cur, r->mem + off, 8);
	nv = cur + add;
	memcpy(r->mem + off, &nv, 8);
	*old = cur;
	return 0;
}

static int mem_read_many(void *ctx, const struct krc_kvs_rd *rd,
			 unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		mem_read(ctx, rd[i].off, rd[i].buf, rd[i].len);
	return 0;
}

static const struct krc_kvs_ops ops_many = {
	.read = mem_read, .write = mem_write, .cas = mem_cas, .faa = mem_faa,
	.read_many = mem_read_many,
};

static const struct krc_kvs_ops ops_serial = {
	.read = mem_read, .write = mem_write, .cas = mem_cas, .faa = mem_faa,
};

/* Key @id: 2 bytes, or 16 when the top bit is set. */
static u32 key_of(u8 id, u8 *k)
{
	if (!(id & 0x80)) {
		k[0] = 'k';
		k[1] = id;
		return 2;
	}
	memset(k, 'K', KRC_KVS_KEY_MAX);
	k[KRC_KVS_KEY_MAX - 1] = id;
	return KRC_KVS_KEY_MAX;
}

static void value_of(u8 id, u32 gen, u32 vlen, u8 *v)
{
	u32 i;

	for (i = 0; i < vlen; i++)
		v[i] = (u8)(id * 31 + gen * 7 + i);
}

struct model {
	bool present[NKEYS];
	u32 vlen[NKEYS];
	u8 val[NKEYS][KRC_KVS_VAL_MAX];
};

static bool known_error(int ret)
{
	return ret == -ENOENT || ret == -EEXIST || ret == -ENOSPC ||
	       ret == -ENOBUFS || ret == -EBUSY || ret == -EIO ||
	       ret == -EMSGSIZE;
}

/* Garbage: the input writes into the region as it likes. */
static void poke(struct region *r, const struct krc_kvs_geom *g, u8 op,
		 struct input *in)
{
	u8 blk[KRC_KVS_BLOCK_MAX], k[KRC_KVS_KEY_MAX], v[KRC_KVS_VAL_MAX];
	struct krc_kvs_loc loc;
	u64 off, slot;
	u32 klen, vlen, size, i;
	u8 id;

	switch (op) {
	case 0:		/* 8 bytes anywhere */
		off = next16(in) % r->len;
		for (i = 0; i < 8 && off + i < r->len; i++)
			r->mem[off + i] = next8(in);
		break;
	case 1:		/* a slot with a key's fingerprint, pointing anywhere */
		id = next8(in);
		klen = key_of(id, k);
		krc_kvs_locate(g, k, klen, &loc);
		off = loc.cb_off[next8(in) & 1] +
		      (next8(in) % KRC_KVS_CB_SLOTS) * 8;
		size = (u32)next8(in) * 8;
		slot = krc_kvs_slot_pack(loc.fp, size, g->logs_off +
					 (u64)(int16_t)next16(in) * 8);
		if (off + 8 <= r->len)
			memcpy(r->mem + off, &slot, 8);
		break;
	default:	/* a valid block of a key anywhere in the logs */
		id = next8(in);
		klen = key_of(id, k);
		vlen = next8(in) % (KRC_KVS_VAL_MAX + 1);
		value_of(id, 999, vlen, v);
		size = krc_kvs_block_encode(g, k, klen, v, vlen, 0, blk);
		off = g->logs_off + (next16(in) % (r->len - g->logs_off));
		off &= ~7ULL;
		if (off + size <= r->len)
			memcpy(r->mem + off, blk, size);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct krc_kvs_geom g;
	struct krc_kvs c[2];
	struct region r;
	struct model *m;
	u8 k[KRC_KVS_KEY_MAX], v[KRC_KVS_VAL_MAX], got[KRC_KVS_VAL_MAX];
	u8 geo = next8(&in), flags = next8(&in), op, id;
	bool garbage = flags & 1;
	u32 klen, vlen, glen, gen = 0, who = 0;
	int ret, i;

	if (krc_kvs_geom_init(&g, 1U << (geo & 3), 1 + ((geo >> 2) & 3),
			      256U << ((geo >> 4) & 3), 0x5eedULL + (geo >> 6)))
		return 0;
	r.len = g.region_size;
	r.mem = malloc(r.len);
	r.tear = 0;
	r.logs_off = g.logs_off;
	m = calloc(1, sizeof(*m));
	check(r.mem && m);
	check(krc_kvs_format(r.mem, r.len, &g) == 0);
	/* garbage in the header before anyone opens the table */
	if (garbage && (flags & 2))
		poke(&r, &g, 0, &in);
	for (i = 0; i < 2; i++) {
		ret = krc_kvs_open(&c[i], flags & 4 ? &ops_serial : &ops_many,
				   &r, r.len);
		if (ret) {
			check(garbage && (ret == -EINVAL || ret == -EPROTO));
			goto out;
		}
		check(c[i].g.region_size <= r.len);
	}

	while (in.n) {
		op = next8(&in);
		id = next8(&in);
		klen = key_of(id, k);
		switch (op & 7) {
		case 0:
		case 1:
			vlen = next8(&in) % (KRC_KVS_VAL_MAX + 1);
			value_of(id, ++gen, vlen, v);
			if (op & 1)
				ret = krc_kvs_update(&c[who], k, klen, v, vlen);
			else
				ret = krc_kvs_insert(&c[who], k, klen, v, vlen);
			check(!ret || known_error(ret));
			if (garbage)
				break;
			/* the block is written first: no log space, ENOBUFS */
			if (ret == -ENOBUFS)
				break;
			if (op & 1)
				check(m->present[id] ? !ret : ret == -ENOENT);
			else
				check(m->present[id] ? ret == -EEXIST :
				      !ret || ret == -ENOSPC);
			if (!ret) {
				m->present[id] = true;
				m->vlen[id] = vlen;
				memcpy(m->val[id], v, vlen);
			}
			break;
		case 2:
		case 3:
			glen = 1000;
			ret = krc_kvs_get(&c[who], k, klen, got,
					  op & 1 ? sizeof(got) : 8, &glen);
			check(!ret || known_error(ret));
			check(ret || glen <= (op & 1 ? sizeof(got) : 8));
			check(ret != -EMSGSIZE ||
			      (glen > 8 && glen <= KRC_KVS_VAL_MAX));
			if (garbage)
				break;
			if (!m->present[id]) {
				check(ret == -ENOENT);
			} else if (m->vlen[id] > (op & 1 ? sizeof(got) : 8)) {
				check(ret == -EMSGSIZE && glen == m->vlen[id]);
			} else {
				check(!ret && glen == m->vlen[id]);
				check(!memcmp(got, m->val[id], glen));
			}
			break;
		case 4:
			ret = krc_kvs_delete(&c[who], k, klen);
			check(!ret || known_error(ret));
			if (garbage)
				break;
			check(m->present[id] ? !ret : ret == -ENOENT);
			m->present[id] = false;
			break;
		case 5:
			who ^= 1;
			break;
		case 6:
			/* the next READ of a block comes back torn */
			r.tear = 1 + id;
			break;
		default:
			if (garbage)
				poke(&r, &g, id % 3, &in);
			break;
		}
	}
out:
	free(m);
	free(r.mem);
	return 0;
}
