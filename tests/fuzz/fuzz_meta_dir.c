// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_meta_dir.c - libFuzzer target for the member directory of the
 * MetaServer's table (common/meta_table.c), both of its sides:
 *
 *   reader (first byte even): any bytes as a directory header and records,
 *     under any seed and geometry. An accepted header has an even
 *     generation, a count within the table and a check that matches; an
 *     accepted record names a node (non-zero GID and incarnation) and its
 *     check matches.
 *   writer (first byte odd): the input is a sequence of joins, leaves and
 *     reloads of up to 256 nodes on a table of 64 homes. After each, the
 *     directory lists exactly the nodes a model says are in, with their
 *     incarnations, once each; its generation moved by 2 if and only if
 *     the list changed; every lookup still finds every card.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "card.h"
#include "hash.h"
#include "meta_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NODES	256

static void check(bool ok)
{
	if (!ok)
		abort();
}

static u64 get64(const uint8_t *p)
{
	u64 v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void fuzz_reader(const uint8_t *data, size_t size)
{
	static const u8 zero[16];
	u8 hdr[KRC_MT_DIR_HDR_SIZE], rec[KRC_MT_REC_SIZE];
	struct krc_mt_member m;
	struct krc_mt_geom g;
	u64 gen;
	u32 count;
	size_t off;

	if (size < 9 + sizeof(hdr))
		return;
	krc_mt_geom_init(&g, 64U << (data[0] % 8), get64(data + 1), 1);
	memcpy(hdr, data + 9, sizeof(hdr));
	/* half the time, a header whose check matches whatever it says */
	if (data[0] & 2)
		krc_put_le64(hdr + 16, krc_hash64(g.seed, hdr, 16));
	if (!krc_mt_dir_header(hdr, &g, &gen, &count)) {
		check(!(gen & 1) && count <= g.nphys);
		check(krc_get_le64(hdr + 16) == krc_hash64(g.seed, hdr, 16));
		check(gen == krc_get_le64(hdr) && count == krc_get_le32(hdr + 8));
	}
	for (off = 9 + sizeof(hdr); off + sizeof(rec) <= size;
	     off += sizeof(rec)) {
		memcpy(rec, data + off, sizeof(rec));
		if (data[0] & 4)
			krc_put_le32(rec + 28,
				     (u32)krc_hash64(g.seed, rec, 28));
		if (krc_mt_dir_record(rec, &g, &m))
			continue;
		check(m.incarnation && memcmp(m.gid, zero, 16));
		check(krc_get_le32(rec + 28) ==
		      (u32)krc_hash64(g.seed, rec, 28));
		check(!memcmp(m.gid, rec, 16) &&
		      m.incarnation == krc_get_le64(rec + 16) &&
		      m.node_id == krc_get_le32(rec + 24));
	}
}

static void make_card(struct krcore_card *c, u32 n, u64 inc)
{
	const u8 ip[4] = { 10, 9, (u8)(n >> 8), (u8)n };

	memset(c, 0, sizeof(*c));
	krc_gid_from_ipv4(c->gid, ip);
	c->card_version = KRCORE_CARD_VERSION;
	c->flags = KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4;
	c->node_id = krc_gid_node_id(c->gid);
	c->ud_qpn = 2 + n;
	c->ud_qkey = 7;
	c->port_num = 1;
	c->active_mtu = 3;
	c->incarnation = inc;
}

/* The directory against the model: count, members, incarnations. */
static u64 check_dir(const u8 *t, const struct krc_mt_geom *g,
		     const bool *in, const u64 *inc)
{
	static bool seen[NODES];
	struct krc_mt_member m;
	u32 count, i, n = 0, slot;
	struct krcore_card c;
	u64 gen;

	for (i = 0; i < NODES; i++)
		n += in[i];
	check(!krc_mt_dir_header(t + krc_mt_dir_offset(g), g, &gen, &count));
	check(count == n);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < count; i++) {
		u32 node;

		check(!krc_mt_dir_record(t + krc_mt_rec_offset(g, i), g, &m));
		check(m.gid[12] == 10 && m.gid[13] == 9);
		node = (u32)m.gid[14] << 8 | m.gid[15];
		check(node < NODES && in[node] && !seen[node]);
		check(m.incarnation == inc[node]);
		seen[node] = true;
		/* and the card is where a lookup finds it */
		check(!krc_mt_scan(t + krc_mt_slot_offset(krc_mt_home(g, m.gid)),
				   krc_mt_home(g, m.gid),
				   g->nphys - krc_mt_home(g, m.gid), g, m.gid,
				   &c, &slot));
		check(c.incarnation == m.incarnation);
	}
	return gen;
}

static void fuzz_writer(const uint8_t *data, size_t size)
{
	static bool in[NODES];
	static u64 inc[NODES];
	struct krcore_card c;
	struct krc_mt_geom g;
	u64 gen, now;
	size_t i;
	u8 *t;
	int ret;

	krc_mt_geom_init(&g, 64, 0x5eedULL + data[0], 9);
	t = malloc(krc_mt_bytes(&g));
	check(t && !krc_mt_format(t, &g));
	memset(in, 0, sizeof(in));
	memset(inc, 0, sizeof(inc));
	gen = check_dir(t, &g, in, inc);
	for (i = 1; i + 1 < size; i += 2) {
		u32 n = data[i + 1];
		bool changed = false;

		switch (data[i] % 3) {
		case 0:		/* join, or register again as it is */
		case 1:		/* reload: a new incarnation */
			make_card(&c, n, inc[n] && data[i] % 3 == 0 ?
				  inc[n] : 0x100 + i);
			ret = krc_mt_insert(t, &g, &c, NULL);
			if (ret == -ENOSPC) {
				check(!in[n]);
				break;
			}
			check(!ret);
			changed = !in[n] || inc[n] != c.incarnation;
			in[n] = true;
			inc[n] = c.incarnation;
			break;
		default:	/* leave */
			make_card(&c, n, 1);
			ret = krc_mt_remove(t, &g, c.gid, 0);
			check(ret == (in[n] ? 0 : -ENOENT));
			changed = in[n];
			in[n] = false;
			break;
		}
		now = check_dir(t, &g, in, inc);
		check(now == gen + (changed ? 2 : 0));
		gen = now;
	}
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		fuzz_writer(data, size);
	else
		fuzz_reader(data, size);
	return 0;
}
