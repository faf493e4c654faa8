// SPDX-License-Identifier: GPL-2.0
/*
 * name_table.c - the names this node's regions are published under: the
 * table in the node area (common/names.h) that peers READ, and this
 * kernel's own copy of it.
 *
 * lmr_name_host.c reserves a slot for a name (the name unique on this node,
 * one node's names at most a quarter of the table), writes the entry once
 * the name's key exists, and drops it when the name is revoked or its
 * region goes. The table is only ever written here, by the CPU, in the
 * order names.h gives (seq odd, the fields, seq_end, seq even), so a peer
 * READing a slot meanwhile sees it is being written. Nothing here reads
 * the node area back: what is used, and by whom, is in krc_names.
 *
 * Locks: krc_names.lock, process context, taken inside krc_lmrh.lock.
 */
#include <linux/slab.h>

#include "data/data.h"

static struct {
	struct mutex lock;		/* slots */
	struct {
		bool used;
		u32 seq;		/* even: the last one written */
		char name[KRC_NAME_LEN];
		u8 holder[16];		/* the node that published it */
	} slots[KRC_NAME_SLOTS];
} krc_names = {
	.lock = __MUTEX_INITIALIZER(krc_names.lock),
};

static void krc_names_put(u32 i, const struct krc_name_entry *e)
{
	u8 *slot = (u8 *)krc_node.page + KRC_NAMES_OFF + i * KRC_NAME_SLOT;
	u8 buf[KRC_NAME_SLOT];
	u32 seq = krc_names.slots[i].seq + 2;

	lockdep_assert_held(&krc_names.lock);
	if (!krc_node.page)
		return;
	krc_names.slots[i].seq = seq;
	krc_name_encode(e, seq, buf);
	WRITE_ONCE(*(__le32 *)slot, cpu_to_le32(seq - 1));
	/* seq odd before any field changes: a READ meanwhile sees a write */
	smp_wmb();
	memcpy(slot + 4, buf + 4, KRC_NAME_SLOT - 8);
	/* the fields before seq_end, seq_end before seq is even again */
	smp_wmb();
	WRITE_ONCE(*(__le32 *)(slot + KRC_NAME_SLOT - 4), cpu_to_le32(seq));
	smp_wmb();	/* as above */
	WRITE_ONCE(*(__le32 *)slot, cpu_to_le32(seq));
}

/*
 * A slot for @name, published by node @holder: its index in *slot, or
 * -EEXIST (the name is taken here), -ENOSPC (its bucket is full, or
 * @holder has a quarter of the table).
 */
int krc_names_reserve(const char name[KRC_NAME_LEN], const u8 holder[16],
		      u32 *slot)
{
	u32 b = krc_name_bucket(name) * KRC_NAME_WAYS, i, mine = 0, free = 0;
	bool found = false;

	mutex_lock(&krc_names.lock);
	for (i = 0; i < KRC_NAME_SLOTS; i++)
		if (krc_names.slots[i].used &&
		    !memcmp(krc_names.slots[i].holder, holder, 16))
			mine++;
	for (i = b; i < b + KRC_NAME_WAYS; i++) {
		if (!krc_names.slots[i].used) {
			if (!found)
				free = i;
			found = true;
		} else if (!memcmp(krc_names.slots[i].name, name,
				   KRC_NAME_LEN)) {
			mutex_unlock(&krc_names.lock);
			return -EEXIST;
		}
	}
	if (!found || mine >= KRC_NAME_SLOTS / 4) {
		mutex_unlock(&krc_names.lock);
		return -ENOSPC;
	}
	krc_names.slots[free].used = true;
	memcpy(krc_names.slots[free].name, name, KRC_NAME_LEN);
	memcpy(krc_names.slots[free].holder, holder, 16);
	mutex_unlock(&krc_names.lock);
	*slot = free;
	return 0;
}

/* The entry of a reserved slot: peers find the name from now on. */
void krc_names_write(u32 slot, const struct krc_name_entry *e)
{
	mutex_lock(&krc_names.lock);
	if (!WARN_ON_ONCE(slot >= KRC_NAME_SLOTS ||
			  !krc_names.slots[slot].used))
		krc_names_put(slot, e);
	mutex_unlock(&krc_names.lock);
}

/* The slot is free again: peers no longer find its name. */
void krc_names_drop(u32 slot)
{
	struct krc_name_entry none = {};

	if (WARN_ON_ONCE(slot >= KRC_NAME_SLOTS))
		return;
	mutex_lock(&krc_names.lock);
	krc_names_put(slot, &none);
	krc_names.slots[slot].used = false;
	memset(krc_names.slots[slot].name, 0, KRC_NAME_LEN);
	mutex_unlock(&krc_names.lock);
}

/*
 * @name as a peer READing its bucket would find it, for a peer with no RC
 * connection to READ over (MEM_LOOKUP, lmr_name_host.c): the bucket is
 * copied under the lock that every write of the table holds, so it is
 * stable, and decoded by the readers' own code. 0 and *@e, -ENOENT.
 */
int krc_names_lookup(const char name[KRC_NAME_LEN], struct krc_name_entry *e)
{
	u8 *bucket;
	int ret;

	bucket = kmalloc(KRC_NAME_BUCKET, GFP_KERNEL);
	if (!bucket)
		return -ENOMEM;
	mutex_lock(&krc_names.lock);
	if (krc_node.page)
		memcpy(bucket, (u8 *)krc_node.page + KRC_NAMES_OFF +
		       krc_name_bucket(name) * KRC_NAME_BUCKET,
		       KRC_NAME_BUCKET);
	else
		memset(bucket, 0, KRC_NAME_BUCKET);
	mutex_unlock(&krc_names.lock);
	ret = krc_name_find(bucket, KRC_NAME_BUCKET, name, e);
	kfree(bucket);
	/* no slot is half written under the lock: a bad one is no name */
	return ret == -EAGAIN ? -ENOENT : ret;
}

/* The node (re)starts with a zeroed node area: every slot is free. */
void krc_names_reset(void)
{
	mutex_lock(&krc_names.lock);
	memset(krc_names.slots, 0, sizeof(krc_names.slots));
	mutex_unlock(&krc_names.lock);
}
