// SPDX-License-Identifier: BSD-2-Clause
/*
 * lock.c - locks and barriers on remote memory.
 *
 * A lock (KRCORE_IOC_LOCK, _UNLOCK) is kept by the kernel of the node that
 * owns the region: its queue, its fairness, and its release when a holder's
 * process or node goes away. Nothing here is relied on.
 *
 * A barrier is a counter in a region that the n processes meeting at it
 * add 1 to (the owner's RNIC atomics), then read until it reaches n times
 * the rounds they passed: no reset, so a process that is quick to the next
 * round cannot overtake a slow one still reading this round's count.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "internal.h"

static int lock_fail(int ret, const struct krc_lmr *lmr)
{
	char node[64];

	krc_gid_format(lmr->gid, node, sizeof(node));
	switch (ret) {
	case -EINVAL:
		return krcl_fail(ret, "lock: an 8-aligned word, a timeout up to %u ms",
				 KRCORE_LMR_MAX_WAIT_MS);
	case -ESTALE:
		return krcl_fail(ret, "lock: the region on %s is gone (freed, or reloaded)",
				 node);
	case -EACCES:
		return krcl_fail(ret, "lock: not the region's key, or no REMOTE_ATOMIC right");
	case -ERANGE:
		return krcl_fail(ret, "lock: beyond the region's end");
	case -ENOSPC:
		return krcl_fail(ret, "lock: node %s keeps too many locks and waiters", node);
	case -EMFILE:
		return krcl_fail(ret, "lock: this process holds lmr_max_per_proc locks");
	case -ETIMEDOUT:
		return krcl_fail(ret, "lock: not granted in time (the caller left the queue)");
	case -EHOSTUNREACH:
		return krcl_fail(ret, "lock: no card for node %s (MetaServer)", node);
	default:
		return krcl_fail(ret, "lock failed");
	}
}

int krc_lock(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
	     unsigned int timeout_ms, struct krc_lock *lock)
{
	struct krcore_lock lk;
	int ret;

	memset(&lk, 0, sizeof(lk));
	memset(lock, 0, sizeof(*lock));
	memcpy(lk.gid, lmr->gid, 16);
	lk.addr = lmr->addr + offset;
	lk.rkey = lmr->rkey;
	lk.timeout_ms = timeout_ms;
	if (offset % 8 || offset > lmr->length || lmr->length - offset < 8)
		return krcl_fail(-ERANGE, "lock: offset %llu is no 8-aligned word of the region",
				 (unsigned long long)offset);
	ret = krcl_ioctl(vq, KRCORE_IOC_LOCK, &lk);
	if (ret < 0)
		return lock_fail(ret, lmr);
	lock->handle = lk.handle;
	lock->grant = lk.grant;
	return 0;
}

int krc_unlock(struct krc_vq *vq, const struct krc_lock *lock)
{
	struct krcore_unlock u;
	int ret;

	memset(&u, 0, sizeof(u));
	u.handle = lock->handle;
	ret = krcl_ioctl(vq, KRCORE_IOC_UNLOCK, &u);
	if (ret == -ENOENT)
		return krcl_fail(ret, "unlock: not a lock this process holds");
	if (ret == -ESTALE)
		return krcl_fail(ret, "unlock: the region is gone, and the lock with it");
	return ret < 0 ? krcl_fail(ret, "unlock failed") : 0;
}

int krc_barrier_init(struct krc_barrier *b, const struct krc_lmr *lmr,
		     uint64_t offset, unsigned int n)
{
	memset(b, 0, sizeof(*b));
	if (!n || offset % 8 || offset > lmr->length || lmr->length - offset < 8)
		return krcl_fail(-EINVAL, "barrier: n >= 1 and an 8-aligned word of the region");
	b->lmr = *lmr;
	b->offset = offset;
	b->n = n;
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int krc_barrier_wait(struct krc_vq *vq, struct krc_barrier *b, uint64_t *word,
		     uint32_t lkey, unsigned int timeout_ms)
{
	uint64_t target = (b->round + 1) * b->n;
	uint64_t deadline = now_ms() + (timeout_ms ? timeout_ms : 10000);
	struct timespec pause = { 0, 20000 };
	uint64_t seen;
	int ret;

	ret = krc_lmr_faa(vq, &b->lmr, b->offset, 1, word, lkey);
	if (ret)
		return ret;
	b->round++;
	seen = *word + 1;		/* with this process's arrival */
	while (seen < target) {
		if (now_ms() > deadline)
			return krcl_fail(-ETIMEDOUT, "barrier: %llu of %u arrived in time",
					 (unsigned long long)(seen - (target - b->n)),
					 b->n);
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 1000000)
			pause.tv_nsec *= 2;
		ret = krc_lmr_read(vq, &b->lmr, b->offset, word, lkey, 8);
		if (ret)
			return ret;
		seen = *word;
	}
	return 0;
}
