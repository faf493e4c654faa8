/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * credit.h - flow control of two-sided messages into one receive ring
 * (a bound port): the receiver's kernel lends ring slots to the senders,
 * so a message that arrives always has a slot; one that arrives without
 * a slot is refused (its sender keeps it and sends it again once
 * granted), never dropped and never written over another's.
 *
 * The ledger of one ring of @slots entries keeps:
 *   free       slots neither lent nor holding a message;
 *   each channel's credit (slots lent to it, not yet used) and held
 *              (its messages in the ring, not yet consumed).
 * Invariant: free + sum(credit) + sum(held) == slots.
 *
 * A channel is one sender to this ring (a VQ of some node). The channels
 * are a fixed table owned by the receiver's kernel: a sender reaches its
 * channel through the kernel's own lookup, never by an index it sends.
 *
 * Fairness: a channel holds (credit + held) at most its share,
 * max(1, slots / active), active being the channels that hold or wait.
 * A message without credit is taken if its channel is under its share
 * and a slot is free, so a new sender's first message costs no round
 * trip; otherwise it is refused and the channel waits. Slots the process
 * consumes go to the waiting channels in turn, each up to its share; a
 * channel that still has credit gets its consumed slots back in batches
 * (krc_credit_next_grant()).
 * A slow receiver thus holds back only its own senders, and no sender
 * more than its share of them.
 *
 * Not thread-safe: the kernel calls it under the ring's lock.
 */
#ifndef KRC_COMMON_CREDIT_H
#define KRC_COMMON_CREDIT_H

#include "compat.h"

enum krc_credit_ch_state {
	KRC_CREDIT_CH_FREE	= 0,	/* unused table entry */
	KRC_CREDIT_CH_OPEN	= 1,	/* a sender's */
	KRC_CREDIT_CH_CLOSING	= 2,	/* sender gone, messages still held */
};

struct krc_credit_ch {
	u32 credit;			/* slots lent, not yet used */
	u32 held;			/* its messages in the ring */
	u32 want;			/* slots it waits for (refused, asked) */
	u8 state;			/* enum krc_credit_ch_state */
};

struct krc_credit {
	struct krc_credit_ch *ch;
	u32 nch;			/* entries of ch */
	u32 slots;			/* the ring's size */
	u32 free;
	u32 active;			/* channels holding or waiting */
	u32 next;			/* round-robin start of the next grant */
};

/* @ch has @nch entries; @slots >= 1. */
void krc_credit_init(struct krc_credit *l, struct krc_credit_ch *ch,
		     u32 nch, u32 slots);

/* A new sender: its channel's index, or -ENOSPC (the table is full). */
int krc_credit_open(struct krc_credit *l);

/*
 * The sender of @ch is gone: its credit returns; the entry is reused once
 * its held messages are consumed. 0, or -EINVAL for a bad or free @ch.
 */
int krc_credit_close(struct krc_credit *l, u32 ch);

/* What one channel may hold now (credit + held). */
u32 krc_credit_share(const struct krc_credit *l);

/*
 * A message of @ch arrives: 0 if it takes a slot (its credit, or a free
 * slot within its share), -ENOBUFS if refused (the channel then waits
 * for a slot), -EINVAL for a bad, free or closing @ch.
 */
int krc_credit_arrive(struct krc_credit *l, u32 ch);

/*
 * @ch asks for @n more slots: returns how many it is lent now (up to its
 * share and the free slots); the rest it waits for. -EINVAL as above.
 */
int krc_credit_ask(struct krc_credit *l, u32 ch, u32 n);

/*
 * @n slots lent to @ch will never be used (messages its sender counted
 * but that were lost): they return to the free slots. 0, or -EINVAL (a
 * bad @ch, or fewer than @n lent).
 */
int krc_credit_forget(struct krc_credit *l, u32 ch, u32 n);

/*
 * @ch wants @n more slots (up to the ring's size in all): what a sender
 * whose window is open wants back once its messages are consumed. 0, or
 * -EINVAL for a bad, free or closing @ch.
 */
int krc_credit_want(struct krc_credit *l, u32 ch, u32 n);

/* One message of @ch was consumed. 0, or -EINVAL (none held). */
int krc_credit_consumed(struct krc_credit *l, u32 ch);

/*
 * Lend free slots to the next channel a grant is due to: 1 with its index
 * in *ch and the slots lent in *n (the grant to send to its sender), 0
 * when none is due or no slot is free. Call until 0 after a consume.
 * A grant is due to a channel that wants slots and has no more credit
 * left than it wants: at once to one that waits (no credit), to one that
 * streams once it has used half of its window (one grant per half
 * window, not per message).
 */
int krc_credit_next_grant(struct krc_credit *l, u32 *ch, u32 *n);

/* Would krc_credit_next_grant() lend something now? */
bool krc_credit_grant_due(const struct krc_credit *l);

/* The invariant and the counters agree (tests, debug checks). */
bool krc_credit_ok(const struct krc_credit *l);

#endif
