// SPDX-License-Identifier: BSD-2-Clause
/*
 * ring.c - the completion ring of a VQ: in this process's own memory
 * (ABI 14), kept for the next VQ when one closes, so that a connection
 * costs no mmap and no munmap; or the kernel's, mapped (the fallback).
 *
 * A ring of the process's memory is reused only once the kernel said it
 * let it go (the header's released flag, written when the VQ's file is
 * released): a VQ whose file another process still holds (fork, a passed
 * descriptor) keeps its ring, which the library then unmaps instead.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define KRCL_RING_POOL	64

static struct {
	pthread_mutex_t lock;
	size_t size;			/* what the module asked for last */
	unsigned int n;
	void *free[KRCL_RING_POOL];	/* rings of that size, let go */
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Three pages: the header and 256 entries (the default vq_depth, 128). */
static size_t ring_guess(void)
{
	return 3 * page_size();
}

static void ring_set(struct krc_vq *vq, void *mem, size_t size)
{
	vq->ring_mem = mem;
	vq->ring_size = size;
	vq->ring = mem;
	vq->cqes = (struct krcore_cqe *)((char *)mem + vq->ring->entry_offset);
	vq->mask = vq->ring->entries - 1;
	vq->cons = __atomic_load_n(&vq->ring->consumer, __ATOMIC_ACQUIRE);
}

int krcl_map_ring(struct krc_vq *vq, uint32_t size)
{
	void *mem;

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vq->fd,
		   KRCORE_MMAP_RING);
	if (mem == MAP_FAILED)
		return krcl_fail(-errno, "cannot map the completion ring");
	ring_set(vq, mem, size);
	return 0;
}

/* A ring of the process's memory for @vq's qconnect; 0 or -errno. */
int krcl_ring_get(struct krc_vq *vq)
{
	const char *env = getenv("KRC_KERNEL_RING");
	void *mem = NULL;
	size_t size;

	if (env && !strcmp(env, "1"))
		return -ENOENT;		/* the kernel's ring, mapped */

	pthread_mutex_lock(&pool.lock);
	if (!pool.size)
		pool.size = ring_guess();
	size = pool.size;
	if (pool.n)
		mem = pool.free[--pool.n];
	pthread_mutex_unlock(&pool.lock);
	if (!mem) {
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (mem == MAP_FAILED)
			return -ENOMEM;
	}
	vq->uring = mem;
	vq->uring_size = size;
	return 0;
}

/*
 * Give @vq's ring of the process's memory back: to the pool if the
 * kernel never took it or let it go (@released), else unmapped.
 */
void krcl_ring_put(struct krc_vq *vq, int released)
{
	void *mem = vq->uring;
	int kept = 0;

	if (!mem)
		return;
	vq->uring = NULL;
	if (released) {
		pthread_mutex_lock(&pool.lock);
		if (vq->uring_size == pool.size && pool.n < KRCL_RING_POOL) {
			pool.free[pool.n++] = mem;
			kept = 1;
		}
		pthread_mutex_unlock(&pool.lock);
	}
	if (!kept)
		munmap(mem, vq->uring_size);
}

/* The module needs @size bytes: rings from now on have that size. */
void krcl_ring_resize(size_t size)
{
	size_t old;

	pthread_mutex_lock(&pool.lock);
	old = pool.size;
	if (size > old) {
		pool.size = size;
		while (pool.n)	/* too small: never used again */
			munmap(pool.free[--pool.n], old);
	}
	pthread_mutex_unlock(&pool.lock);
}

/* After a qconnect that took @vq's ring of the process's memory. */
void krcl_ring_taken(struct krc_vq *vq)
{
	ring_set(vq, vq->uring, vq->uring_size);
}

/* @vq's file is closed: what becomes of its ring. */
void krcl_ring_closed(struct krc_vq *vq)
{
	const struct krcore_ring *r = vq->uring;

	/*
	 * The kernel zeroes the header when it takes the ring, so a ring it
	 * never took still shows the last VQ's flag, or 0 if it is new.
	 */
	if (r)
		krcl_ring_put(vq, __atomic_load_n(&r->released,
						  __ATOMIC_ACQUIRE));
	else if (vq->ring_mem)
		munmap(vq->ring_mem, vq->ring_size);
}
