/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * flow.h - flow control of two-sided messages between two nodes: the
 * protocol both kernels run for one channel, a sender node and a bound
 * port of the receiver node, so that a message is sent only into a slot
 * the receiver lent (common/credit.h keeps the receiver's ledger).
 *
 * A channel is (sender node, receiver port): every process of the
 * sender that sends to that port shares it (the sender's kernel divides
 * its credit), and it stays the same whether a message goes over pooled
 * RC, the datagram path, or moves from one to the other. The receiver's
 * state is thus bounded by nodes, not processes.
 *
 * Counts are cumulative within an epoch, which the receiver chooses when
 * it opens the channel (a new epoch: a new ring, a new channel, a new
 * sender incarnation), so that a lost or repeated message never gets the
 * two sides out of step:
 *   sender:   sent S (messages it sent), granted G (the largest grant it
 *             heard); its credit is G - S;
 *   receiver: granted G (slots lent), arrived A (messages that came).
 * The sender asks with ASK(epoch, S, want) when it has sends waiting and
 * no credit, and asks again with backoff while nothing answers; the
 * receiver always answers GRANT(epoch, G, status), lends when it can,
 * and sends a GRANT on its own when consumed slots go to a waiting
 * channel. A lost GRANT only delays; an old one (smaller G, older epoch)
 * is ignored.
 *
 * A message the sender counted may never arrive (a request flushed by
 * the failure of an RC connection). The receiver learns S from the
 * ASKs: when an ASK shows S > A, the receiver notes S then; once
 * @grace_ms have passed (the longest a message can be in flight before
 * its connection fails), what of that S has still not arrived is taken
 * as lost and its slots return to the ring. Counting later arrivals too,
 * this never takes a message in flight for lost. One that arrives later
 * than the grace still takes a slot if its channel is within its share.
 *
 * A channel's window stays open: each consumed message makes its slot
 * wanted back by its channel, so a sender whose receiver keeps up is
 * granted again before it runs out (no round trip per window), within
 * its share of the ring. The slots go back in batches, once the sender
 * has used half of its window (credit.h): one GRANT per half window,
 * not one per message.
 *
 * The receiver keeps, for each ring slot, the channel whose message is
 * in it (its own copy), and learns that messages were consumed from the
 * ring's consumer index, which the process writes: it is clamped to what
 * the kernel produced, so a lying process only loses its own messages.
 *
 * Every value from the network (epochs, counts, wants) is bounded before
 * use; indices of channels are the receiver's own, never sent. Not
 * thread-safe: the kernel holds the ring's (receiver) or the flow's
 * (sender) lock. Times are milliseconds from any monotonic clock.
 */
#ifndef KRC_COMMON_FLOW_H
#define KRC_COMMON_FLOW_H

#include "compat.h"
#include "credit.h"

/* ASK resend backoff, doubling from MIN to MAX. */
#define KRC_FLOW_ASK_MIN_MS	20
#define KRC_FLOW_ASK_MAX_MS	1000
/*
 * An ASK wants at least this many slots: a sender that streams is lent a
 * window (within its share), not one slot per round trip.
 */
#define KRC_FLOW_WANT_MIN	16

/* GRANT status: 0, or a positive errno. */
enum krc_flow_status {
	KRC_FLOW_OK		= 0,
	KRC_FLOW_NOPORT		= ECONNREFUSED,	/* no process bound the port */
	KRC_FLOW_BUSY		= EBUSY,	/* the channel table is full: ask later */
};

/* One ASK, as it goes on the wire (with the port it is about). */
struct krc_flow_ask {
	u32 epoch;			/* the sender's epoch (0: none yet) */
	u64 sent;			/* S in that epoch */
	u32 want;			/* sends waiting */
};

/* One GRANT. */
struct krc_flow_grant {
	u32 epoch;			/* the receiver's channel epoch */
	u64 granted;			/* G in that epoch */
	u32 status;			/* enum krc_flow_status */
};

/* ---- the sender: one per (receiver node, port) ---- */

struct krc_flow_tx {
	u32 epoch;			/* of sent/granted; 0: not granted yet */
	u64 sent;
	u64 granted;
	u32 waiting;			/* sends held back since the last grant */
	bool asking;			/* an ASK is outstanding, since ask_at */
	u64 ask_at;
	u32 ask_rto;			/* its backoff */
	/*
	 * 0, or -ECONNREFUSED: the port was not bound at the last answer
	 * (_retry() asks again: a port may be bound later).
	 */
	int error;
	u32 answers;			/* GRANTs heard, of any status */
};

void krc_flow_tx_init(struct krc_flow_tx *f);

/* The credit left: G - S. */
u64 krc_flow_tx_credit(const struct krc_flow_tx *f);

/*
 * Take one credit for a message about to be sent: 0 (S grows), -EAGAIN
 * (no credit: the send is held back, counted in waiting, and an ASK is
 * due), or f->error when the receiver said the port is not bound.
 */
int krc_flow_tx_take(struct krc_flow_tx *f);

/*
 * A message counted by _take() was not sent after all (the post failed
 * locally, before reaching the network): its credit comes back.
 */
void krc_flow_tx_untake(struct krc_flow_tx *f);

/*
 * Is an ASK due at @now_ms (sends wait and none is outstanding, or the
 * outstanding one went unanswered for its backoff)? If so fills @a and
 * records it as sent.
 */
bool krc_flow_tx_ask_due(struct krc_flow_tx *f, u64 now_ms,
			 struct krc_flow_ask *a);

/*
 * The port refused: ask again (a send or a wait after a refusal, or a
 * new qconnect, since a process may have bound the port since). Clears
 * the error, voids credit of the refused epoch and makes an ASK due at
 * once. Returns false (nothing to do) when the flow was not refused.
 */
bool krc_flow_tx_retry(struct krc_flow_tx *f);

/*
 * A GRANT came: returns the credit it left (how many held-back sends to
 * wake; 0 if it was old or changed nothing; waiting starts again from
 * 0, the woken sends take or wait again), or
 * -ECONNREFUSED (NOPORT: every waiting send fails) or -EBUSY (the table
 * was full: the next ASK goes after the backoff). A newer epoch starts
 * the count again: S = 0, G = the grant.
 */
int krc_flow_tx_grant(struct krc_flow_tx *f, const struct krc_flow_grant *g);

/* ---- the receiver: one per bound port (its receive ring) ---- */

struct krc_flow_rx_ch {
	u8 gid[16];			/* the sender node (kernel's own copy) */
	u64 incarnation;		/* of that node */
	u32 epoch;
	u64 granted;			/* G */
	u64 arrived;			/* A, with lost messages forgotten */
	u64 gap_since;			/* S > A seen since this - 1; 0: none */
	u64 gap_sent;			/* S when that gap was seen */
};

struct krc_flow_rx {
	struct krc_credit ledger;
	struct krc_flow_rx_ch *ch;	/* ledger.nch entries, by the ledger's index */
	u16 *owner;			/* slot -> channel of the message in it */
	u32 prod;			/* messages put in the ring */
	u32 cons;			/* messages known consumed (kernel's copy) */
	u32 next_epoch;
	u32 grace_ms;
};

/*
 * @ch and @ledger_ch have @nch entries (< 65535), @owner @slots (a power
 * of two); @first_epoch is where this ring's epochs start (the kernel
 * passes a node-wide counter so that a rebound port never repeats one).
 */
void krc_flow_rx_init(struct krc_flow_rx *rx, struct krc_credit_ch *ledger_ch,
		      struct krc_flow_rx_ch *ch, u32 nch, u16 *owner,
		      u32 slots, u32 first_epoch, u32 grace_ms);

/* The open channel of sender @gid/@incarnation, or -ENOENT. */
int krc_flow_rx_find(const struct krc_flow_rx *rx, const u8 gid[16],
		     u64 incarnation);

/*
 * An ASK from @gid/@incarnation: opens its channel if it has none (a new
 * incarnation closes the old one's), reconciles S with what arrived,
 * lends what it can of @a->want and fills the GRANT to answer with (also
 * when nothing new is lent: the answer is never skipped). Returns the
 * channel, or -ENOSPC with @g saying BUSY when the table is full of
 * channels in use.
 */
int krc_flow_rx_ask(struct krc_flow_rx *rx, const u8 gid[16], u64 incarnation,
		    const struct krc_flow_ask *a, u64 now_ms,
		    struct krc_flow_grant *g);

/*
 * A message of channel @chan arrives: 0 with *slot the ring index to put
 * it at (prod & (slots - 1)), or -ENOBUFS (no slot for it: refused and
 * counted by the caller), -EINVAL for a closed channel.
 */
int krc_flow_rx_arrive(struct krc_flow_rx *rx, u32 chan, u32 *slot);

/*
 * The process says it consumed up to @consumer (the ring's consumer
 * index, as read from its mapping): the slots between cons and it go
 * back to the ledger. A value outside [cons, prod] is ignored (a process
 * can free only what the kernel put in its ring). Returns how many.
 */
u32 krc_flow_rx_consumed(struct krc_flow_rx *rx, u32 consumer);

/*
 * After _consumed(): the next GRANT to send on the receiver's own
 * initiative (1, with its channel and @g), or 0. Call until 0.
 */
int krc_flow_rx_next_grant(struct krc_flow_rx *rx, u32 *chan,
			   struct krc_flow_grant *g);

/* Is a GRANT due (krc_flow_rx_next_grant() would give one)? */
bool krc_flow_rx_grant_due(const struct krc_flow_rx *rx);

/* The sender of @chan is gone (node left or reloaded): its slots return. */
void krc_flow_rx_close(struct krc_flow_rx *rx, u32 chan);

/* Do the ring, the owners and the ledger agree (tests, debug checks)? */
bool krc_flow_rx_ok(const struct krc_flow_rx *rx);

#endif
