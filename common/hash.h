/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hash.h - the one hash of krcore's wire formats: MetaServer table
 * placement and slot checksums. Deterministic on every host.
 */
#ifndef KRC_COMMON_HASH_H
#define KRC_COMMON_HASH_H

#include "compat.h"

/*
 * 64-bit seeded hash of @len bytes. Byte-oriented (independent of host
 * endianness and alignment), every input bit affects every output bit.
 */
u64 krc_hash64(u64 seed, const void *data, size_t len);

#endif /* KRC_COMMON_HASH_H */
