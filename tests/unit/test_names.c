// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_names.c - the names table's slots (common/names.c): the layout,
 * what a lookup finds, and what it refuses, no VM needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "names.h"
#include "proto.h"

static struct krc_name_entry entry(const char *name, u32 region)
{
	struct krc_name_entry e;

	memset(&e, 0, sizeof(e));
	strncpy(e.name, name, KRC_NAME_LEN - 1);
	e.access = KRCORE_ACCESS_REMOTE_READ;
	e.region = region;
	e.rkey = 0x1000 + region;
	e.length = 4096 * region;
	e.addr = (u64)region << 40;
	return e;
}

static void test_names_layout(void **state)
{
	struct krc_name_entry e = entry("counter", 7);
	u8 slot[KRC_NAME_SLOT];

	(void)state;
	assert_int_equal(KRC_NODE_AREA, 65536);
	assert_int_equal(KRC_NAME_BUCKET, 512);
	krc_name_encode(&e, 6, slot);
	assert_int_equal(krc_get_le32(slot), 6);
	assert_int_equal(krc_get_le32(slot + 4), KRCORE_ACCESS_REMOTE_READ);
	assert_memory_equal(slot + 8, "counter\0", 8);
	assert_int_equal(krc_get_le32(slot + 32), 7);
	assert_int_equal(krc_get_le32(slot + 36), 0x1007);
	assert_int_equal(krc_get_le64(slot + 40), 7 * 4096);
	assert_int_equal(krc_get_le64(slot + 48), 7ULL << 40);
	assert_int_equal(krc_get_le32(slot + 60), 6);
}

static void test_names_valid(void **state)
{
	char n[KRC_NAME_LEN];

	(void)state;
	memset(n, 0, sizeof(n));
	assert_int_equal(krc_name_valid(n), -EINVAL);
	memcpy(n, "a", 1);
	assert_int_equal(krc_name_valid(n), 0);
	memset(n, 'z', KRC_NAME_LEN - 1);
	assert_int_equal(krc_name_valid(n), 0);
	n[KRC_NAME_LEN - 1] = 'z';	/* no NUL */
	assert_int_equal(krc_name_valid(n), -EINVAL);
	memset(n, 0, sizeof(n));
	memcpy(n, "a b", 3);
	assert_int_equal(krc_name_valid(n), -EINVAL);
	memset(n, 0, sizeof(n));
	memcpy(n, "ab", 2);
	n[5] = 'x';		/* bytes after the NUL are zero */
	assert_int_equal(krc_name_valid(n), -EINVAL);
	n[5] = 0;
	n[1] = (char)0x80;
	assert_int_equal(krc_name_valid(n), -EINVAL);
}

/* A bucket holding @n names "name0".. in its first slots. */
static void fill(u8 *bucket, unsigned int n)
{
	char name[16];
	struct krc_name_entry e;
	unsigned int i;

	memset(bucket, 0, KRC_NAME_BUCKET);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "name%u", i);
		e = entry(name, i + 1);
		krc_name_encode(&e, 2 * i + 2, bucket + i * KRC_NAME_SLOT);
	}
}

static void test_names_find(void **state)
{
	u8 bucket[KRC_NAME_BUCKET];
	struct krc_name_entry e, want = entry("name7", 8);
	char name[KRC_NAME_LEN];

	(void)state;
	fill(bucket, KRC_NAME_WAYS);
	memset(name, 0, sizeof(name));
	memcpy(name, "name7", 5);
	assert_int_equal(krc_name_find(bucket, sizeof(bucket), name, &e), 0);
	assert_memory_equal(e.name, want.name, KRC_NAME_LEN);
	assert_int_equal(e.access, want.access);
	assert_int_equal(e.region, want.region);
	assert_int_equal(e.rkey, want.rkey);
	assert_int_equal(e.length, want.length);
	assert_int_equal(e.addr, want.addr);
	memcpy(name, "name9", 5);
	assert_int_equal(krc_name_find(bucket, sizeof(bucket), name, &e),
			 -ENOENT);
	assert_int_equal(krc_name_find(bucket, sizeof(bucket) - 1, name, &e),
			 -EINVAL);
	/* a prefix is another name */
	memset(name, 0, sizeof(name));
	memcpy(name, "name", 4);
	assert_int_equal(krc_name_find(bucket, sizeof(bucket), name, &e),
			 -ENOENT);
	/* empty slots: an all-zero bucket has no names */
	memset(bucket, 0, sizeof(bucket));
	assert_int_equal(krc_name_find(bucket, sizeof(bucket), name, &e),
			 -ENOENT);
}

static void test_names_torn(void **state)
{
	u8 bucket[KRC_NAME_BUCKET];
	struct krc_name_entry e;
	char name[KRC_NAME_LEN];
	u8 *s;

	(void)state;
	memset(name, 0, sizeof(name));
	memcpy(name, "name3", 5);
	s = bucket + 3 * KRC_NAME_SLOT;
	/* being written: seq odd, seq_end behind, a field changed */
	fill(bucket, 4);
	krc_put_le32(s, 9);
	assert_int_equal(krc_name_find(bucket, sizeof(bucket), name, &e),
			 -EAGAIN);
	fill(bucket, 4);
	krc_put_le32(s + 60, 6);
	assert_int_equal(krc_name_find(bucket, sizeof(bucket), name, &e),
			 -EAGAIN);
	fill(bucket, 4);
	s[36] ^= 1;		/* the key, without its check */
	assert_int_equal(krc_name_find(bucket, sizeof(bucket), name, &e),
			 -EAGAIN);
	/* another slot torn: a name found elsewhere is found */
	fill(bucket, 4);
	krc_put_le32(bucket + KRC_NAME_SLOT, 1);
	assert_int_equal(krc_name_find(bucket, sizeof(bucket), name, &e), 0);
	assert_int_equal(e.region, 4);
}

/* Slots no owner could have written are never taken for a name. */
static void test_names_refuses(void **state)
{
	struct krc_name_entry e, bad;
	u8 bucket[KRC_NAME_BUCKET];
	char name[KRC_NAME_LEN];
	int i;

	(void)state;
	memset(name, 0, sizeof(name));
	memcpy(name, "x", 1);
	for (i = 0; i < 6; i++) {
		bad = entry("x", 5);
		if (i == 0) {
			bad.access = 16;
		} else if (i == 1) {
			bad.region = 0;
			bad.addr = 0;
		} else if (i == 2) {
			bad.region = 0x1000000;
			bad.addr = 0x1000000ULL << 40;
		} else if (i == 3) {
			bad.length = 0;
		} else if (i == 4) {
			bad.length = KRC_LMR_MAX_LEN + 1;
		} else {
			bad.addr += 4096;
		}
		memset(bucket, 0, sizeof(bucket));
		krc_name_encode(&bad, 2, bucket);
		assert_int_equal(krc_name_find(bucket, sizeof(bucket), name,
					       &e), -EAGAIN);
	}
	/* a bad name is refused before any slot is read */
	name[3] = 'y';
	assert_int_equal(krc_name_find(bucket, sizeof(bucket), name, &e),
			 -EINVAL);
}

static void test_names_bucket(void **state)
{
	char name[KRC_NAME_LEN];
	unsigned int hits[KRC_NAME_BUCKETS] = { 0 }, i, used = 0;

	(void)state;
	for (i = 0; i < 4 * KRC_NAME_BUCKETS; i++) {
		memset(name, 0, sizeof(name));
		snprintf(name, sizeof(name), "key-%u", i);
		hits[krc_name_bucket(name)]++;
	}
	for (i = 0; i < KRC_NAME_BUCKETS; i++)
		used += hits[i] > 0;
	/* spread: 480 names leave few of 120 buckets empty */
	assert_true(used > KRC_NAME_BUCKETS * 9 / 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_layout),
		cmocka_unit_test(test_names_valid),
		cmocka_unit_test(test_names_find),
		cmocka_unit_test(test_names_torn),
		cmocka_unit_test(test_names_refuses),
		cmocka_unit_test(test_names_bucket),
	};

	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
