// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_rpc.c - libFuzzer target for RPC headers and the server's
 * sessions (common/rpc.c).
 *
 * The whole input is first decoded as a message: if accepted, the header
 * must encode back to the same 80 bytes, and its ranges hold (a remote
 * payload has a key and does not wrap, inline_len is the rest of the
 * message, a status is an errno).
 *
 * Then the input is read as calls, 4 bytes each: a caller (2 bits of 4,
 * on 2 or 3 session entries), a slot (3 bits), a sequence number (5
 * bits, so they repeat and go back), and whether the call's run ends.
 * Sessions never idle out here, so no (caller, slot, sequence) may be
 * run twice, and every call the table does not refuse is run, resent,
 * busy or old as a plain model of the slot says.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_header(const uint8_t *data, size_t size)
{
	struct krc_rpc_hdr h;
	u8 again[KRC_RPC_HDR_SIZE];

	if (krc_rpc_decode(data, size, &h))
		return;
	krc_rpc_encode(&h, again);
	if (memcmp(again, data, KRC_RPC_HDR_SIZE))
		abort();
	if (h.inline_len != size - KRC_RPC_HDR_SIZE ||
	    h.total_len > KRC_RPC_MAX_PAYLOAD || !h.epoch || !h.seq ||
	    h.slot >= KRC_RPC_MAX_SLOTS)
		abort();
	if ((h.flags & KRC_RPC_F_REMOTE) &&
	    (!h.rkey || !h.total_len || h.addr + h.total_len < h.addr))
		abort();
	if (h.type == KRC_RPC_REPLY && h.method > KRC_RPC_MAX_STATUS)
		abort();
}

#define NKEY	4
#define NSLOT	8
#define NSEQ	32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct krc_rpc_sess s[3];
	struct krc_rpc_sessions t;
	struct krc_rpc_key keys[NKEY];
	/* the model: per caller and slot, the last run number and its state */
	u32 last[NKEY][NSLOT];
	u8 st[NKEY][NSLOT];
	u8 ran[NKEY][NSLOT][NSEQ];
	bool known[NKEY];
	size_t at;
	u32 i, nsess;

	check_header(data, size);
	if (!size)
		return 0;
	nsess = 2 + (data[0] & 1);
	krc_rpc_sessions_init(&t, s, nsess, ~0ULL);
	memset(keys, 0, sizeof(keys));
	for (i = 0; i < NKEY; i++) {
		keys[i].gid[15] = (u8)i;
		keys[i].port = 1000;
		keys[i].epoch = 1 + i / 2;	/* 0,1 and 2,3 differ by gid */
	}
	memset(last, 0, sizeof(last));
	memset(st, 0, sizeof(st));
	memset(ran, 0, sizeof(ran));
	memset(known, 0, sizeof(known));
	for (at = 1; at + 3 < size; at += 4) {
		u32 k = data[at] & 3, slot = data[at + 1] & 7;
		u32 seq = 1 + (data[at + 2] & 31);
		bool finish = data[at + 3] & 1;
		struct krc_rpc_hdr h;
		enum krc_rpc_verdict v, want;
		u32 sess;

		memset(&h, 0, sizeof(h));
		h.type = KRC_RPC_CALL;
		h.epoch = keys[k].epoch;
		h.slot = (u16)slot;
		h.seq = seq;
		v = krc_rpc_admit(&t, &keys[k], &h, at, &sess);
		if (v == KRC_RPC_FULL) {
			u32 n = 0;

			for (i = 0; i < NKEY; i++)
				n += known[i];
			/* refused only when every entry has another caller */
			if (known[k] || n < nsess)
				abort();
			continue;
		}
		if (sess >= nsess)
			abort();
		known[k] = true;
		if (st[k][slot] == KRC_RPC_IDLE || seq > last[k][slot])
			want = KRC_RPC_RUN;
		else if (seq < last[k][slot])
			want = KRC_RPC_OLD;
		else
			want = st[k][slot] == KRC_RPC_DONE ? KRC_RPC_RESEND :
							     KRC_RPC_BUSY;
		if (v != want)
			abort();
		if (v == KRC_RPC_RUN) {
			if (ran[k][slot][seq - 1])
				abort();	/* run twice */
			ran[k][slot][seq - 1] = 1;
			last[k][slot] = seq;
			st[k][slot] = KRC_RPC_RUNNING;
		}
		if (finish && st[k][slot] == KRC_RPC_RUNNING) {
			krc_rpc_done(&t, sess, (u16)slot, last[k][slot]);
			st[k][slot] = KRC_RPC_DONE;
		}
	}
	return 0;
}
