// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_names.c - libFuzzer target for the names table's reader
 * (common/names.c): any bytes READ from another node's table. The input
 * is a name (24 bytes) and a bucket (512). What the reader finds must be
 * a slot of that bucket that encodes back to the same bytes, with the
 * name asked for and nothing no owner could have published.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[KRC_NAME_LEN];
	struct krc_name_entry e;
	u8 slot[KRC_NAME_SLOT];
	const u8 *bucket;
	int ret, i, hits = 0;

	if (size < KRC_NAME_LEN + KRC_NAME_BUCKET)
		return 0;
	memcpy(name, data, KRC_NAME_LEN);
	bucket = data + KRC_NAME_LEN;
	ret = krc_name_find(bucket, KRC_NAME_BUCKET, name, &e);
	if (krc_name_valid(name)) {
		if (ret != -EINVAL)
			abort();
		return 0;
	}
	if (ret == -EINVAL)
		abort();
	if (ret)
		return 0;
	if (memcmp(e.name, name, KRC_NAME_LEN) || !e.access ||
	    (e.access & ~(u32)KRC_LMR_RIGHTS) || !e.region ||
	    e.region > 0xffffff || !e.length || e.length > KRC_LMR_MAX_LEN ||
	    e.addr != (u64)e.region << 40)
		abort();
	for (i = 0; i < KRC_NAME_WAYS; i++) {
		const u8 *s = bucket + i * KRC_NAME_SLOT;

		krc_name_encode(&e, krc_get_le32(s), slot);
		hits += !memcmp(slot, s, KRC_NAME_SLOT);
	}
	if (!hits)
		abort();
	return 0;
}
