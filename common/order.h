/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * order.h - a VQ's outstanding requests in the order they were posted,
 * so that their completions reach the VQ's ring in that order even when
 * recovery re-posts them on more than one connection
 * (kernel/data/complete.c).
 *
 * A ring of slot numbers with free-running 32-bit head and tail and a
 * power-of-two size: requests are appended at the tail when reserved,
 * taken back from the tail when they could not be posted, and retired
 * from the head once done. The owner never holds more than its depth
 * (<= size) requests, so the ring cannot overflow; the functions check
 * it anyway and refuse rather than overwrite.
 */
#ifndef KRC_COMMON_ORDER_H
#define KRC_COMMON_ORDER_H

#include "compat.h"

struct krc_order {
	u16 *ids;		/* mask + 1 entries */
	u32 mask;
	u32 head;		/* the oldest outstanding */
	u32 tail;		/* where the next one goes */
};

/* The ring's size for @depth requests: the next power of two. */
static inline u32 krc_order_size(u32 depth)
{
	u32 n = 1;

	while (n < depth && n < (1U << 16))
		n <<= 1;
	return n;
}

/* @ids has krc_order_size(depth) entries. */
static inline void krc_order_init(struct krc_order *o, u16 *ids, u32 size)
{
	o->ids = ids;
	o->mask = size - 1;
	o->head = 0;
	o->tail = 0;
}

static inline u32 krc_order_count(const struct krc_order *o)
{
	return o->tail - o->head;
}

/* Append @id; false (nothing written) if the ring is full. */
static inline bool krc_order_push(struct krc_order *o, u16 id)
{
	if (krc_order_count(o) > o->mask)
		return false;
	o->ids[o->tail++ & o->mask] = id;
	return true;
}

/*
 * Take back the last @n appended, which must be @ids[0..n-1] in the order
 * they were appended; false (nothing changed) if they are not.
 */
static inline bool krc_order_unpush(struct krc_order *o, const u16 *ids,
				    u32 n)
{
	u32 i, from = o->tail - n;

	if (n > krc_order_count(o))
		return false;
	for (i = 0; i < n; i++)
		if (o->ids[(from + i) & o->mask] != ids[i])
			return false;
	o->tail = from;
	return true;
}

/* The oldest outstanding id in *id; false if there is none. */
static inline bool krc_order_first(const struct krc_order *o, u16 *id)
{
	if (o->head == o->tail)
		return false;
	*id = o->ids[o->head & o->mask];
	return true;
}

/* The oldest one retired. */
static inline void krc_order_pop(struct krc_order *o)
{
	if (o->head != o->tail)
		o->head++;
}

#endif
