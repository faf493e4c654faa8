/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * internal.h - shared by the files of libkrcore, not installed.
 */
#ifndef KRC_LIB_INTERNAL_H
#define KRC_LIB_INTERNAL_H

#include "libkrcore.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

struct krc_vq {
	int fd;
	struct krcore_version version;
	/* a ring of the process's memory offered to qconnect (ring.c) */
	void *uring;
	size_t uring_size;
	/* the completion ring, in use after qconnect: @uring, or mapped */
	void *ring_mem;
	size_t ring_size;
	struct krcore_ring *ring;
	struct krcore_cqe *cqes;
	uint32_t mask;
	uint32_t cons;
	struct krcore_qpush last_push;
	/* the receive ring, mapped at qbind */
	void *rring_mem;
	size_t rring_size;
	struct krcore_recv_ring *rring;
	struct krcore_msg *rmsgs;
	uint8_t *rdata;
	uint32_t rcons;
	uint32_t rmask;		/* geometry read once at qbind */
	uint32_t rslot;
};

/* ring.c: the completion ring */
int krcl_map_ring(struct krc_vq *vq, uint32_t size);
int krcl_ring_get(struct krc_vq *vq);
void krcl_ring_put(struct krc_vq *vq, int released);
void krcl_ring_resize(size_t size);
void krcl_ring_taken(struct krc_vq *vq);
void krcl_ring_closed(struct krc_vq *vq);

/* Record a message for krc_errmsg() and return @err (a negative errno). */
int krcl_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ioctl() that returns 0 or -errno. */
int krcl_ioctl(const struct krc_vq *vq, unsigned long cmd, void *arg);
/* dataplane.c: one request, signaled, and wait for it (0 or -errno). */
int krcl_sync(struct krc_vq *vq, struct krcore_wr *wr, int timeout_ms);
void krcl_fill_rw(struct krcore_wr *wr, uint8_t opcode, void *local,
		  uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey);

#endif /* KRC_LIB_INTERNAL_H */
