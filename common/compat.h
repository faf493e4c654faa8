/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * compat.h - the few definitions the portable code of krcore needs, taken
 * from the kernel when built into krcore.ko and from libc otherwise. Code
 * under common/ includes only this header (and the UAPI header), so the
 * same source runs in the module, in libkrcore and in unit tests/fuzzers.
 */
#ifndef KRC_COMMON_COMPAT_H
#define KRC_COMMON_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#endif /* __KERNEL__ */

/*
 * krc_wmb(): order the stores before it before the stores after it, as seen
 * by other CPUs and by a device reading memory (an RNIC's RDMA READ).
 */
#ifdef __KERNEL__
#include <asm/barrier.h>
/* Pairs with the reader's checks of seq_begin/seq_end and the checksum. */
#define krc_wmb()	wmb()
#else
#define krc_wmb()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

/* Explicit little-endian byte access: layout-stable on every host. */
static inline void krc_put_le16(u8 *p, u16 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static inline void krc_put_le32(u8 *p, u32 v)
{
	krc_put_le16(p, (u16)v);
	krc_put_le16(p + 2, (u16)(v >> 16));
}

static inline void krc_put_le64(u8 *p, u64 v)
{
	krc_put_le32(p, (u32)v);
	krc_put_le32(p + 4, (u32)(v >> 32));
}

static inline u16 krc_get_le16(const u8 *p)
{
	return (u16)(p[0] | (p[1] << 8));
}

static inline u32 krc_get_le32(const u8 *p)
{
	return krc_get_le16(p) | ((u32)krc_get_le16(p + 2) << 16);
}

static inline u64 krc_get_le64(const u8 *p)
{
	return krc_get_le32(p) | ((u64)krc_get_le32(p + 4) << 32);
}

#endif /* KRC_COMMON_COMPAT_H */
