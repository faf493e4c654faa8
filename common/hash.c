// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hash.c - the seeded 64-bit hash of krcore's wire formats.
 *
 * The input is consumed as 8-byte little-endian words (assembled byte by
 * byte, so neither host endianness nor alignment matter) and a tail of 0..7
 * bytes packed the same way. Each word is scrambled on its own by a
 * multiply/rotate/multiply step before it enters the running state, which
 * is then rotated and multiplied so that word order matters. The length is
 * folded in at the start and the result goes through a 64-bit finalizer
 * (xor-shift/multiply, splitmix style) that makes every input bit reach
 * every output bit. Only multiplication, shifts and xor: no division, so it
 * builds in a 32-bit kernel too.
 */
#include "hash.h"

/* Odd 64-bit constants with well spread bits. */
#define KRC_H_K1	0x9e3779b97f4a7c15ULL
#define KRC_H_K2	0xc2b2ae3d27d4eb4fULL
#define KRC_H_K3	0x165667b19e3779f9ULL
#define KRC_H_F1	0xbf58476d1ce4e5b9ULL
#define KRC_H_F2	0x94d049bb133111ebULL

static inline u64 krc_rotl64(u64 x, unsigned int r)
{
	return (x << r) | (x >> (64 - r));
}

/* Scramble one input word and fold it into the state. */
static inline u64 krc_hash_round(u64 h, u64 w)
{
	w *= KRC_H_K2;
	w = krc_rotl64(w, 31);
	w *= KRC_H_K1;
	h ^= w;
	h = krc_rotl64(h, 27);
	return h * KRC_H_K1 + KRC_H_K3;
}

/* Final avalanche: a bijection of the state. */
static inline u64 krc_hash_final(u64 h)
{
	h ^= h >> 30;
	h *= KRC_H_F1;
	h ^= h >> 27;
	h *= KRC_H_F2;
	h ^= h >> 31;
	return h;
}

u64 krc_hash64(u64 seed, const void *data, size_t len)
{
	const u8 *p = data;
	u64 h, t = 0;
	size_t i, rest = len & 7;

	h = krc_hash_final(seed ^ KRC_H_K3) ^ ((u64)len * KRC_H_K2);
	for (i = 0; i + 8 <= len; i += 8)
		h = krc_hash_round(h, krc_get_le64(p + i));
	if (rest) {
		p += len - rest;
		for (i = 0; i < rest; i++)
			t |= (u64)p[i] << (8 * i);
		h = krc_hash_round(h, t);
	}
	return krc_hash_final(h);
}
