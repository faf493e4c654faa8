// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rpc.c - RPC headers and the server's caller sessions (rpc.h).
 */
#include "rpc.h"

enum {
	R_MAGIC = 0, R_VERSION = 4, R_TYPE = 5, R_FLAGS = 6, R_EPOCH = 8,
	R_SLOT = 16, R_ZERO16 = 18, R_SEQ = 20, R_METHOD = 24, R_INLINE = 28,
	R_TOTAL = 32, R_ADDR = 40, R_RKEY = 48, R_ZERO32 = 52, R_REPLY_CAP = 56,
	R_INSTANCE = 64,
};

void krc_rpc_encode(const struct krc_rpc_hdr *h, u8 buf[KRC_RPC_HDR_SIZE])
{
	memset(buf, 0, KRC_RPC_HDR_SIZE);
	krc_put_le32(buf + R_MAGIC, KRC_RPC_MAGIC);
	buf[R_VERSION] = KRC_RPC_VERSION;
	buf[R_TYPE] = h->type;
	krc_put_le16(buf + R_FLAGS, h->flags);
	krc_put_le64(buf + R_EPOCH, h->epoch);
	krc_put_le16(buf + R_SLOT, h->slot);
	krc_put_le32(buf + R_SEQ, h->seq);
	krc_put_le32(buf + R_METHOD, h->method);
	krc_put_le32(buf + R_INLINE, h->inline_len);
	krc_put_le64(buf + R_TOTAL, h->total_len);
	krc_put_le64(buf + R_ADDR, h->addr);
	krc_put_le32(buf + R_RKEY, h->rkey);
	krc_put_le64(buf + R_REPLY_CAP, h->reply_cap);
	krc_put_le64(buf + R_INSTANCE, h->instance);
}

/* [addr, addr + len) with a key, not wrapping, within the payload limit */
static bool krc_rpc_range_ok(u64 addr, u64 len, u32 key)
{
	return key && len && len <= KRC_RPC_MAX_PAYLOAD && addr + len >= addr;
}

/* No remote range, and the payload is what came inline. */
static bool krc_rpc_inline_only(const struct krc_rpc_hdr *h)
{
	return !h->addr && !h->rkey && h->total_len == h->inline_len;
}

static bool krc_rpc_call_ok(const struct krc_rpc_hdr *h)
{
	u16 big = h->flags & (KRC_RPC_F_LARGE | KRC_RPC_F_WRITTEN);

	if (h->flags & KRC_RPC_F_REMOTE || h->addr || h->rkey ||
	    h->reply_cap > KRC_RPC_MAX_PAYLOAD)
		return false;
	if (h->flags & KRC_RPC_F_ONEWAY)
		return !big && !h->reply_cap && h->total_len == h->inline_len;
	if (!big)
		return h->total_len == h->inline_len;
	/* LARGE or WRITTEN, not both: nothing inline, a length to move */
	return big != (KRC_RPC_F_LARGE | KRC_RPC_F_WRITTEN) &&
	       !h->inline_len && h->total_len;
}

static bool krc_rpc_reply_ok(const struct krc_rpc_hdr *h)
{
	if (h->flags & ~KRC_RPC_F_REMOTE || h->reply_cap ||
	    h->method > KRC_RPC_MAX_STATUS)
		return false;
	if (h->flags & KRC_RPC_F_REMOTE)
		return !h->method && !h->inline_len &&
		       krc_rpc_range_ok(h->addr, h->total_len, h->rkey);
	return krc_rpc_inline_only(h);
}

static bool krc_rpc_grant_ok(const struct krc_rpc_hdr *h)
{
	if (h->flags || h->inline_len || h->reply_cap ||
	    h->method > KRC_RPC_MAX_STATUS)
		return false;
	if (h->method)		/* refused: nothing else */
		return !h->addr && !h->rkey && !h->total_len;
	return krc_rpc_range_ok(h->addr, h->total_len, h->rkey);
}

int krc_rpc_decode(const u8 *buf, size_t len, struct krc_rpc_hdr *h)
{
	if (!buf || len < KRC_RPC_HDR_SIZE)
		return -EBADMSG;
	if (krc_get_le32(buf + R_MAGIC) != KRC_RPC_MAGIC)
		return -EBADMSG;
	if (buf[R_VERSION] != KRC_RPC_VERSION)
		return -EPROTO;
	if (krc_get_le16(buf + R_ZERO16) || krc_get_le32(buf + R_ZERO32))
		return -EBADMSG;
	memset(h, 0, sizeof(*h));
	h->type = buf[R_TYPE];
	h->flags = krc_get_le16(buf + R_FLAGS);
	h->epoch = krc_get_le64(buf + R_EPOCH);
	h->slot = krc_get_le16(buf + R_SLOT);
	h->seq = krc_get_le32(buf + R_SEQ);
	h->method = krc_get_le32(buf + R_METHOD);
	h->inline_len = krc_get_le32(buf + R_INLINE);
	h->total_len = krc_get_le64(buf + R_TOTAL);
	h->addr = krc_get_le64(buf + R_ADDR);
	h->rkey = krc_get_le32(buf + R_RKEY);
	h->reply_cap = krc_get_le64(buf + R_REPLY_CAP);
	h->instance = krc_get_le64(buf + R_INSTANCE);

	if (h->flags & ~KRC_RPC_F_ALL || !h->epoch || !h->seq ||
	    h->slot >= KRC_RPC_MAX_SLOTS)
		return -EBADMSG;
	if (h->inline_len != len - KRC_RPC_HDR_SIZE ||
	    h->total_len > KRC_RPC_MAX_PAYLOAD)
		return -EBADMSG;
	switch (h->type) {
	case KRC_RPC_CALL:
		return krc_rpc_call_ok(h) ? 0 : -EBADMSG;
	case KRC_RPC_REPLY:
		return h->instance && krc_rpc_reply_ok(h) ? 0 : -EBADMSG;
	case KRC_RPC_GRANT:
		return h->instance && krc_rpc_grant_ok(h) ? 0 : -EBADMSG;
	case KRC_RPC_CANCEL:
	case KRC_RPC_ACK:
		return h->flags || h->method || h->inline_len ||
		       h->total_len || h->addr || h->rkey || h->reply_cap ?
		       -EBADMSG : 0;
	default:
		return -EBADMSG;
	}
}

void krc_rpc_sessions_init(struct krc_rpc_sessions *t, struct krc_rpc_sess *s,
			   u32 n, u64 idle)
{
	t->s = s;
	t->n = n;
	t->idle = idle;
	memset(s, 0, sizeof(*s) * n);
}

static bool krc_rpc_key_eq(const struct krc_rpc_key *a,
			   const struct krc_rpc_key *b)
{
	return a->port == b->port && a->epoch == b->epoch &&
	       !memcmp(a->gid, b->gid, sizeof(a->gid));
}

/* The session of @key, a new one, or -1 (all in use and none idle). */
static int krc_rpc_find(struct krc_rpc_sessions *t,
			const struct krc_rpc_key *key, u64 now)
{
	int lru = -1;
	u32 i;

	for (i = 0; i < t->n; i++) {
		struct krc_rpc_sess *s = &t->s[i];

		if (s->used && krc_rpc_key_eq(&s->key, key))
			return (int)i;
		if (!s->used) {
			if (lru < 0 || t->s[lru].used)
				lru = (int)i;
		} else if (now - s->last_use >= t->idle &&
			   (lru < 0 || (t->s[lru].used &&
					s->last_use < t->s[lru].last_use))) {
			lru = (int)i;
		}
	}
	if (lru >= 0) {
		struct krc_rpc_sess *s = &t->s[lru];

		memset(s, 0, sizeof(*s));
		s->key = *key;
		s->used = true;
	}
	return lru;
}

enum krc_rpc_verdict krc_rpc_admit(struct krc_rpc_sessions *t,
				   const struct krc_rpc_key *key,
				   const struct krc_rpc_hdr *h, u64 now,
				   u32 *sess)
{
	struct krc_rpc_sess *s;
	int i = krc_rpc_find(t, key, now);
	s32 d;

	if (i < 0)
		return KRC_RPC_FULL;
	*sess = (u32)i;
	s = &t->s[i];
	s->last_use = now;
	d = (s32)(h->seq - s->seq[h->slot]);
	if (s->state[h->slot] == KRC_RPC_IDLE || d > 0) {
		s->seq[h->slot] = h->seq;
		s->state[h->slot] = KRC_RPC_RUNNING;
		return KRC_RPC_RUN;
	}
	if (d < 0)
		return KRC_RPC_OLD;
	return s->state[h->slot] == KRC_RPC_DONE ? KRC_RPC_RESEND : KRC_RPC_BUSY;
}

void krc_rpc_done(struct krc_rpc_sessions *t, u32 sess, u16 slot, u32 seq)
{
	struct krc_rpc_sess *s;

	if (sess >= t->n || slot >= KRC_RPC_MAX_SLOTS)
		return;
	s = &t->s[sess];
	/* a later call of the slot may have started since */
	if (s->used && s->seq[slot] == seq &&
	    s->state[slot] == KRC_RPC_RUNNING)
		s->state[slot] = KRC_RPC_DONE;
}
