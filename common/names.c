// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * names.c - encoding and lookup of the names table's slots (names.h).
 */
#include "names.h"
#include "hash.h"
#include "proto.h"

#define SLOT_SEQ	0
#define SLOT_ACCESS	4
#define SLOT_NAME	8
#define SLOT_REGION	32
#define SLOT_RKEY	36
#define SLOT_LENGTH	40
#define SLOT_ADDR	48
#define SLOT_CHECK	56
#define SLOT_SEQ_END	60

#define NAMES_SEED	0x6e616d6573ULL	/* "names" */
#define REGION_MAX	0xffffffU
#define REGION_SHIFT	40

int krc_name_valid(const char name[KRC_NAME_LEN])
{
	size_t i, n = 0;

	while (n < KRC_NAME_LEN && name[n])
		n++;
	if (!n || n == KRC_NAME_LEN)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return -EINVAL;
	for (i = n; i < KRC_NAME_LEN; i++)
		if (name[i])
			return -EINVAL;
	return 0;
}

u32 krc_name_bucket(const char name[KRC_NAME_LEN])
{
	return (u32)(krc_hash64(NAMES_SEED, name, KRC_NAME_LEN) %
		     KRC_NAME_BUCKETS);
}

static u32 slot_check(const u8 *slot)
{
	return (u32)krc_hash64(NAMES_SEED, slot, SLOT_CHECK);
}

void krc_name_encode(const struct krc_name_entry *e, u32 seq,
		     u8 slot[KRC_NAME_SLOT])
{
	memset(slot, 0, KRC_NAME_SLOT);
	krc_put_le32(slot + SLOT_SEQ, seq);
	krc_put_le32(slot + SLOT_ACCESS, e->access);
	memcpy(slot + SLOT_NAME, e->name, KRC_NAME_LEN);
	krc_put_le32(slot + SLOT_REGION, e->region);
	krc_put_le32(slot + SLOT_RKEY, e->rkey);
	krc_put_le64(slot + SLOT_LENGTH, e->length);
	krc_put_le64(slot + SLOT_ADDR, e->addr);
	krc_put_le32(slot + SLOT_CHECK, slot_check(slot));
	krc_put_le32(slot + SLOT_SEQ_END, seq);
}

/* 0 (an entry in *e), 1 (empty), -EAGAIN (torn or nothing valid). */
static int slot_decode(const u8 *slot, struct krc_name_entry *e)
{
	u32 seq = krc_get_le32(slot + SLOT_SEQ);
	u32 i;

	for (i = 0; i < KRC_NAME_SLOT && !slot[i]; i++)
		;
	if (i == KRC_NAME_SLOT)
		return 1;	/* never written */
	if ((seq & 1) || seq != krc_get_le32(slot + SLOT_SEQ_END) ||
	    slot_check(slot) != krc_get_le32(slot + SLOT_CHECK))
		return -EAGAIN;
	e->access = krc_get_le32(slot + SLOT_ACCESS);
	if (!e->access)
		return 1;
	memcpy(e->name, slot + SLOT_NAME, KRC_NAME_LEN);
	e->region = krc_get_le32(slot + SLOT_REGION);
	e->rkey = krc_get_le32(slot + SLOT_RKEY);
	e->length = krc_get_le64(slot + SLOT_LENGTH);
	e->addr = krc_get_le64(slot + SLOT_ADDR);
	if (krc_name_valid(e->name) || (e->access & ~(u32)KRC_LMR_RIGHTS) ||
	    !e->region || e->region > REGION_MAX || !e->length ||
	    e->length > KRC_LMR_MAX_LEN ||
	    e->addr != (u64)e->region << REGION_SHIFT)
		return -EAGAIN;
	return 0;
}

int krc_name_find(const u8 *bucket, size_t len, const char name[KRC_NAME_LEN],
		  struct krc_name_entry *e)
{
	struct krc_name_entry s;
	bool torn = false;
	u32 i;
	int ret;

	if (len != KRC_NAME_BUCKET || krc_name_valid(name))
		return -EINVAL;
	for (i = 0; i < KRC_NAME_WAYS; i++) {
		ret = slot_decode(bucket + i * KRC_NAME_SLOT, &s);
		if (ret < 0)
			torn = true;
		if (ret || memcmp(s.name, name, KRC_NAME_LEN))
			continue;
		*e = s;
		return 0;
	}
	return torn ? -EAGAIN : -ENOENT;
}
