// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sha256.c - SHA-256 (FIPS 180-4) for user space; never built into the
 * module, which has lib/crypto's. Checked against the FIPS 180-4 and
 * RFC 4231 vectors (tests/unit/test_auth.c).
 */
#include "sha256.h"

#ifndef __KERNEL__

static const u32 k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static u32 ror32(u32 x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
}

static u32 get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static void put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static void sha256_block(u32 st[8], const u8 *blk)
{
	u32 w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = get_be32(blk + 4 * i);
	for (i = 16; i < 64; i++) {
		u32 s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^
			 (w[i - 15] >> 3);
		u32 s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^
			 (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = st[0];
	b = st[1];
	c = st[2];
	d = st[3];
	e = st[4];
	f = st[5];
	g = st[6];
	h = st[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
		     ((e & f) ^ (~e & g)) + k256[i] + w[i];
		t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
		     ((a & b) ^ (a & c) ^ (b & c));
		h = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	st[0] += a;
	st[1] += b;
	st[2] += c;
	st[3] += d;
	st[4] += e;
	st[5] += f;
	st[6] += g;
	st[7] += h;
}

void sha256_init(struct sha256_state *s)
{
	static const u32 iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->state, iv, sizeof(iv));
	s->count = 0;
}

void sha256_update(struct sha256_state *s, const u8 *data, unsigned int len)
{
	unsigned int used = (unsigned int)(s->count % SHA256_BLOCK_SIZE);

	s->count += len;
	if (used) {
		unsigned int take = SHA256_BLOCK_SIZE - used;

		if (take > len)
			take = len;
		memcpy(s->buf + used, data, take);
		data += take;
		len -= take;
		if (used + take < SHA256_BLOCK_SIZE)
			return;
		sha256_block(s->state, s->buf);
	}
	for (; len >= SHA256_BLOCK_SIZE; len -= SHA256_BLOCK_SIZE) {
		sha256_block(s->state, data);
		data += SHA256_BLOCK_SIZE;
	}
	memcpy(s->buf, data, len);
}

void sha256_final(struct sha256_state *s, u8 out[SHA256_DIGEST_SIZE])
{
	static const u8 pad[SHA256_BLOCK_SIZE] = { 0x80 };
	u64 bits = s->count * 8;
	unsigned int used = (unsigned int)(s->count % SHA256_BLOCK_SIZE);
	u8 len[8];
	int i;

	for (i = 0; i < 8; i++)
		len[i] = (u8)(bits >> (56 - 8 * i));
	sha256_update(s, pad, used < 56 ? 56 - used : 120 - used);
	sha256_update(s, len, 8);
	for (i = 0; i < 8; i++)
		put_be32(out + 4 * i, s->state[i]);
	memset(s, 0, sizeof(*s));
}

#endif /* !__KERNEL__ */
