/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rpc.h - the calls and replies of krcore's RPC, carried in two-sided
 * messages: the header every call, reply and cancel starts with, and the
 * server's table of caller sessions that makes a call run at most once.
 *
 * A caller is a session: its node and bound port (both written by the
 * kernels, not by the caller: struct krcore_msg's src_gid and src_port)
 * and a random epoch it draws when it starts, so that a process reusing
 * the port is a new session. The epoch is known only to the caller and
 * the server process (messages reach only the process that bound the
 * port), and every reply carries it back: a reply from anyone else is
 * not taken. A session has up to KRC_RPC_MAX_SLOTS calls outstanding,
 * one per slot; each call of a slot has the next sequence number. A call
 * sent again (after a transport error, a timeout) keeps its slot and
 * number, so the server tells it from a new one: it runs a new number,
 * sends the kept reply again for the number it last ran, and ignores
 * older ones.
 *
 * Payloads that do not fit in one message move by one-sided transfers
 * that the caller makes, into or out of memory the server granted for
 * that one call (the server never reads or writes the caller's memory,
 * so a caller cannot make the server's connections fail):
 *   CALL+LARGE(total_len)  -> GRANT(addr, rkey, total_len): write here
 *   caller WRITEs it, then CALL+WRITTEN (same slot and number)
 *   REPLY+REMOTE(addr, rkey, total_len) -> the caller READs it, then
 *   ACK: the server frees the reply's memory.
 *
 * The header, 72 bytes, little-endian:
 *   0  u32 magic (KRC_RPC_MAGIC)   4 u8 version   5 u8 type   6 u16 flags
 *   8  u64 epoch                  16 u16 slot    18 u16 zero  20 u32 seq
 *  24  u32 method (CALL) or status (REPLY, GRANT: 0 or a positive errno)
 *  28  u32 inline_len: payload bytes after the header in this message
 *  32  u64 total_len: the whole payload
 *  40  u64 addr     48 u32 rkey: GRANT, REPLY+REMOTE: the server's memory
 *  52  u32 zero
 *  56  u64 reply_cap: CALL: the largest reply the caller takes
 *  64  u64 instance: the server's (random, drawn when it opens): in its
 *      GRANT and REPLY messages; a caller's messages carry the one it learnt
 *      (0 before its first answer), and a server that is not that one
 *      runs nothing and answers ECONNRESET: a call sent again after its
 *      server went away never runs on the port's next server.
 */
#ifndef KRC_COMMON_RPC_H
#define KRC_COMMON_RPC_H

#include "compat.h"

#define KRC_RPC_MAGIC		0x3150524bU	/* "KRP1" */
#define KRC_RPC_VERSION		2
#define KRC_RPC_HDR_SIZE	72
#define KRC_RPC_MAX_SLOTS	256
#define KRC_RPC_MAX_PAYLOAD	0x40000000ULL	/* 1 GiB */
#define KRC_RPC_MAX_STATUS	4095

enum krc_rpc_type {
	KRC_RPC_CALL	= 1,
	KRC_RPC_REPLY	= 2,
	KRC_RPC_CANCEL	= 3,	/* the caller gave up: no reply wanted */
	KRC_RPC_GRANT	= 4,	/* server: write the call's payload here */
	KRC_RPC_ACK	= 5,	/* caller: the remote reply was read */
};

enum krc_rpc_flags {
	KRC_RPC_F_ONEWAY	= 1 << 0,	/* CALL: no reply */
	KRC_RPC_F_LARGE		= 1 << 1,	/* CALL: grant me total_len */
	KRC_RPC_F_WRITTEN	= 1 << 2,	/* CALL: written into the grant */
	KRC_RPC_F_REMOTE	= 1 << 3,	/* REPLY: READ it at addr/rkey */
	KRC_RPC_F_ALL		= 0xf,
};

struct krc_rpc_hdr {
	u8 type;
	u16 flags;
	u64 epoch;
	u16 slot;
	u32 seq;
	u32 method;		/* CALL; REPLY: its status */
	u32 inline_len;
	u64 total_len;
	u64 addr;
	u32 rkey;
	u64 reply_cap;
	u64 instance;
};

void krc_rpc_encode(const struct krc_rpc_hdr *h, u8 buf[KRC_RPC_HDR_SIZE]);

/*
 * Decode the header of a message of @len bytes: 0, -EPROTO (another
 * version) or -EBADMSG: short, bad magic, type or flags, a flag the type
 * does not take, a reserved field set, no epoch or sequence, a slot out
 * of range, inline_len not the rest of the message, a payload over
 * KRC_RPC_MAX_PAYLOAD, a remote range that wraps or has no key, a field
 * the type does not use set, a status out of range, a REPLY or GRANT
 * without the server's instance, a cancel or ack
 * with anything but its identity.
 */
int krc_rpc_decode(const u8 *buf, size_t len, struct krc_rpc_hdr *h);

/* A caller session as the server knows it. */
struct krc_rpc_key {
	u8 gid[16];
	u16 port;
	u64 epoch;
};

enum krc_rpc_slot_state {
	KRC_RPC_IDLE	= 0,	/* nothing run in this slot yet */
	KRC_RPC_RUNNING	= 1,	/* seq is being served */
	KRC_RPC_DONE	= 2,	/* seq was served: its reply is kept */
};

struct krc_rpc_sess {
	struct krc_rpc_key key;
	u64 last_use;		/* the caller's clock, in any unit */
	bool used;
	u32 seq[KRC_RPC_MAX_SLOTS];
	u8 state[KRC_RPC_MAX_SLOTS];
};

struct krc_rpc_sessions {
	struct krc_rpc_sess *s;
	u32 n;
	u64 idle;		/* a session idle this long may be reused */
};

/* What to do with a call that arrives. */
enum krc_rpc_verdict {
	KRC_RPC_RUN	= 0,	/* new: run it, then krc_rpc_done() */
	KRC_RPC_RESEND	= 1,	/* ran already: send its kept reply again */
	KRC_RPC_BUSY	= 2,	/* running now: ignore, the reply will come */
	KRC_RPC_OLD	= 3,	/* an older call of the slot: ignore */
	KRC_RPC_FULL	= 4,	/* no session free: answer EBUSY, run nothing */
};

/*
 * @s has @n entries; a session idle at least @idle (in the unit of the
 * clock given to krc_rpc_admit) may be replaced by a new caller. Choose
 * @idle above the longest time a caller keeps sending a call again, and
 * a call runs at most once.
 */
void krc_rpc_sessions_init(struct krc_rpc_sessions *t, struct krc_rpc_sess *s,
			   u32 n, u64 idle);

/*
 * A call (@h, decoded) from session @key at time @now: the verdict, and
 * in *sess the session's index (for krc_rpc_done; not set for FULL).
 * Calls with another sequence number than the slot's next or last are
 * not run (OLD); a number that skips ahead is run (the caller's earlier
 * calls of the slot were cancelled or given up).
 */
enum krc_rpc_verdict krc_rpc_admit(struct krc_rpc_sessions *t,
				   const struct krc_rpc_key *key,
				   const struct krc_rpc_hdr *h, u64 now,
				   u32 *sess);

/* The call admitted as RUN in slot @slot of session @sess was served. */
void krc_rpc_done(struct krc_rpc_sessions *t, u32 sess, u16 slot, u32 seq);

#endif
