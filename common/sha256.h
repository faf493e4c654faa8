/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sha256.h - SHA-256 (FIPS 180-4) for the user-space builds of common/
 * (the unit tests and fuzzers of auth.c). The module uses the kernel's
 * own (lib/crypto/sha256.c) under the same names: see auth.c.
 */
#ifndef KRC_COMMON_SHA256_H
#define KRC_COMMON_SHA256_H

#ifndef __KERNEL__
#include "compat.h"

#define SHA256_DIGEST_SIZE	32
#define SHA256_BLOCK_SIZE	64

struct sha256_state {
	u32 state[8];
	u64 count;			/* bytes hashed */
	u8 buf[SHA256_BLOCK_SIZE];
};

void sha256_init(struct sha256_state *s);
void sha256_update(struct sha256_state *s, const u8 *data, unsigned int len);
void sha256_final(struct sha256_state *s, u8 out[SHA256_DIGEST_SIZE]);
#endif /* !__KERNEL__ */

#endif /* KRC_COMMON_SHA256_H */
