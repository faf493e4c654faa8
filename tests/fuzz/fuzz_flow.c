// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_flow.c - libFuzzer target for the flow control of two-sided
 * messages (common/flow.c), both ends fed hostile input. Byte 0 sets the
 * ring's size (1-128 slots, rounded to a power of two) and the grace;
 * then each group of 8 bytes is one operation: the receiver gets an ASK
 * from one of 6 nodes and 2 incarnations with any epoch, count and want,
 * an arrival on any channel index, a consumer index anywhere, a close,
 * its grants drained, time passing; the sender gets a GRANT with any
 * epoch, count and status, takes, untakes and asks.
 *
 * After every operation: the receiver's ring, owners and ledger agree
 * (krc_flow_rx_ok), a sender never has sent more than it was granted in
 * its epoch, and no channel is lent more than the ring.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NCH	4
#define MAXS	128

static u64 get64(const uint8_t *p)
{
	u64 v = 0;
	int i;

	for (i = 0; i < 6; i++)
		v |= (u64)p[i] << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct krc_credit_ch lch[NCH];
	struct krc_flow_rx_ch ch[NCH];
	struct krc_flow_rx rx;
	struct krc_flow_tx tx;
	u16 owner[MAXS];
	u32 slots = 1, i, c;
	u64 now = 0;
	size_t at;

	if (size < 1)
		return 0;
	while (slots < MAXS && slots < 1u + (data[0] & 0x7f))
		slots <<= 1;
	krc_flow_rx_init(&rx, lch, ch, NCH, owner, slots, data[0] >> 7 ?
			 0xfffffffe : 1, 1 + (data[0] & 0x3f) * 10);
	krc_flow_tx_init(&tx);
	for (at = 1; at + 8 <= size; at += 8) {
		const uint8_t *p = &data[at];
		u8 gid[16] = { 0xfe, 0x80 };
		struct krc_flow_grant g;
		struct krc_flow_ask a;
		u32 slot;

		switch (p[0] & 15) {
		case 0:	/* an ASK from node p[1] % 6, incarnation 1 or 2 */
			gid[15] = p[1] % 6;
			a.epoch = p[2] & 1 ? rx.next_epoch - 1 - (p[2] >> 5) :
					     (u32)get64(p + 2);
			a.sent = p[3] & 1 ? get64(p + 2) : p[4];
			a.want = p[5] & 1 ? ~0u : p[6];
			krc_flow_rx_ask(&rx, gid, 1 + (p[1] >> 7), &a, now, &g);
			if (g.status == KRC_FLOW_OK &&
			    krc_flow_rx_find(&rx, gid, 1 + (p[1] >> 7)) < 0)
				abort();	/* answered OK without a channel */
			break;
		case 1:	/* an arrival on any index */
			krc_flow_rx_arrive(&rx, p[1] % (NCH + 2), &slot);
			break;
		case 2:	/* the consumer index: near or anywhere */
			krc_flow_rx_consumed(&rx, p[1] & 1 ? (u32)get64(p + 2) :
					     rx.cons + (p[2] % (slots + 2)));
			break;
		case 3:
			krc_flow_rx_close(&rx, p[1] % (NCH + 2));
			break;
		case 4:
			while (krc_flow_rx_next_grant(&rx, &c, &g))
				if (c >= NCH || g.status != KRC_FLOW_OK)
					abort();
			if (krc_flow_rx_grant_due(&rx))
				abort();
			break;
		case 5:
			now += get64(p + 1) & 0xffff;
			break;
		case 6:	/* a GRANT to the sender */
			g.epoch = p[1] & 1 ? tx.epoch + (p[1] >> 6) :
					     (u32)get64(p + 2);
			g.granted = p[2] & 1 ? get64(p + 2) : tx.granted + p[3];
			g.status = p[4] & 1 ? p[5] : 0;
			krc_flow_tx_grant(&tx, &g);
			break;
		case 7:
			krc_flow_tx_take(&tx);
			break;
		case 8:
			krc_flow_tx_untake(&tx);
			break;
		default:
			krc_flow_tx_ask_due(&tx, now, &a);
			break;
		}
		if (!krc_flow_rx_ok(&rx) || tx.sent > tx.granted)
			abort();
		for (i = 0; i < NCH; i++)
			if (lch[i].credit + lch[i].held > slots)
				abort();
	}
	return 0;
}
