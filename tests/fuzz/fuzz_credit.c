// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_credit.c - libFuzzer target for the receive ring's ledger
 * (common/credit.c). Byte 0 sets the ring's size (1-256 slots); then
 * each pair of bytes is one operation: the first's low 3 bits choose it
 * (open, close, arrive, ask, consumed, grants), its high bits and the
 * second byte its channel (any u32 value, so bad ones too) and amount.
 *
 * After every operation: the ledger's invariant (free + credit + held ==
 * slots, the active count), the ring never over its size, each channel's
 * held equal to a count kept here, and an arrival taken beyond credit
 * only within the share.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "credit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NCH	16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct krc_credit_ch ch[NCH];
	struct krc_credit l;
	u32 held[NCH] = { 0 };
	u32 slots, in_ring = 0, i, c, n;
	size_t at;

	if (size < 1)
		return 0;
	slots = 1 + data[0];
	krc_credit_init(&l, ch, NCH, slots);
	for (at = 1; at + 1 < size; at += 2) {
		u32 op = data[at] & 7;
		u32 k = data[at + 1];
		int r;

		/* mostly valid channels, sometimes anything */
		if (!(data[at] & 0x80))
			k %= NCH;
		else
			k = k * 0x01010101U;
		switch (op) {
		case 0:
			r = krc_credit_open(&l);
			if (r < 0 && r != -ENOSPC)
				abort();
			break;
		case 1:
			r = krc_credit_close(&l, k);
			if (r && r != -EINVAL)
				abort();
			break;
		case 2:
		case 3: {
			u32 has = k < NCH ? ch[k].credit + ch[k].held : 0;
			u32 credit = k < NCH ? ch[k].credit : 0;

			r = krc_credit_arrive(&l, k);
			if (r == 0) {
				if (k >= NCH)
					abort();
				/* beyond its credit, only within a share */
				if (!credit && has >= slots)
					abort();
				held[k]++;
				in_ring++;
			} else if (r != -ENOBUFS && r != -EINVAL) {
				abort();
			}
			break;
		}
		case 4:
			r = krc_credit_ask(&l, k, (data[at] >> 3) & 0xf);
			if (r < 0 && r != -EINVAL)
				abort();
			break;
		case 5:
			r = krc_credit_consumed(&l, k);
			if (r == 0) {
				if (k >= NCH || !held[k])
					abort();
				held[k]--;
				in_ring--;
				/* as common/flow.c: the slot is wanted back */
				if (data[at] & 0x40 && krc_credit_want(&l, k, 1) &&
				    ch[k].state == KRC_CREDIT_CH_OPEN)
					abort();
			} else if (r != -EINVAL || (k < NCH && held[k])) {
				abort();
			}
			break;
		default:
			while (krc_credit_next_grant(&l, &c, &n))
				if (c >= NCH || !n || n > slots)
					abort();
			/* drained: nothing due, nobody out of credit left waiting */
			if (krc_credit_grant_due(&l))
				abort();
			for (i = 0; i < NCH; i++)
				if (ch[i].state == KRC_CREDIT_CH_OPEN && ch[i].want &&
				    !ch[i].credit && l.free &&
				    ch[i].held < krc_credit_share(&l))
					abort();
			break;
		}
		if (!krc_credit_ok(&l) || in_ring > slots)
			abort();
		for (i = 0; i < NCH; i++)
			if (ch[i].held != held[i])
				abort();
	}
	return 0;
}
