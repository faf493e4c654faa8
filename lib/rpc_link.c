// SPDX-License-Identifier: BSD-2-Clause
/*
 * rpc_link.c - one side of an RPC conversation: a VQ connected to the
 * other side's port, staging slots for what it sends, and the queue of
 * messages waiting for the receiver's credit (rpc_link.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rpc_link.h"

/* Ports tried for a caller's replies (the ephemeral range). */
#define KRCL_PORT_LO	49152
#define KRCL_PORT_N	16384

uint64_t krcl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int krcl_bind_any(struct krc_vq *vq, uint16_t *bound)
{
	unsigned int i, start = (unsigned int)(krcl_now_ms() ^ getpid());
	int ret = -EADDRINUSE;

	for (i = 0; i < KRCL_PORT_N && ret == -EADDRINUSE; i++) {
		uint16_t p = KRCL_PORT_LO + (start + i * 7919) % KRCL_PORT_N;

		ret = krc_qbind(vq, p);
		if (!ret)
			*bound = p;
	}
	return ret;
}

static size_t krcl_page(void)
{
	long n = sysconf(_SC_PAGESIZE);

	return n > 0 ? (size_t)n : 4096;
}

void *krcl_map(size_t len)
{
	void *p = mmap(NULL, len + krcl_page(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void krcl_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len + krcl_page());
}

size_t krcl_reg_len(const void *addr, size_t len)
{
	size_t pg = krcl_page(), a = (uintptr_t)addr;
	size_t pages = (a + len + pg - 1) / pg - a / pg;

	return len && pages % 256 == 0 ? len + pg : len;
}

int krcl_link_open(struct krcl_link *l, const uint8_t gid[16], uint16_t port,
		   unsigned int timeout_ms, unsigned int nstage, bool bind_any,
		   uint16_t *bound)
{
	struct krcore_qconnect qc;
	size_t size;
	int ret;

	memset(l, 0, sizeof(*l));
	if (!nstage || nstage > 64)
		return krcl_fail(-EINVAL, "staging slots: 1 to 64");
	ret = krc_vq_open(&l->vq);
	if (ret)
		return ret;
	if (bind_any) {
		ret = krcl_bind_any(l->vq, bound);
		if (ret)
			goto fail;
	}
	ret = krc_qconnect_gid(l->vq, gid, port, timeout_ms, &qc);
	if (ret)
		goto fail;
	l->nstage = nstage;
	size = (size_t)nstage * KRCORE_MAX_SEND;
	l->stage = mmap(NULL, size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (l->stage == MAP_FAILED) {
		l->stage = NULL;
		ret = krcl_fail(-ENOMEM, "no memory for staging slots");
		goto fail;
	}
	ret = krc_reg_mr(l->vq, l->stage, size, KRCORE_ACCESS_LOCAL_WRITE,
			 &l->mr);
	if (ret)
		goto fail;
	return 0;
fail:
	krcl_link_close(l);
	return ret;
}

void krcl_link_close(struct krcl_link *l)
{
	struct krcl_msgq *q;

	while (l->head) {
		q = l->head;
		l->head = q->next;
		free(q);
	}
	/*
	 * The staging pages stay pinned by the registration (the process's)
	 * while a SEND from them may still be in flight.
	 */
	krc_vq_close(l->vq);
	if (l->stage)
		munmap(l->stage, (size_t)l->nstage * KRCORE_MAX_SEND);
	memset(l, 0, sizeof(*l));
}

/*
 * Post one message (already encoded) from a free staging slot. Only
 * every (nstage / 2)-th SEND asks for a completion: a VQ's completions
 * come in post order and a failed request always completes, so one
 * completion frees its slot and every slot posted before it, and a link
 * whose slots are all busy always has a signaled SEND among them. A
 * call's round trip then wakes its caller and its server once each (for
 * the message), not also for their SENDs.
 */
static int krcl_post(struct krcl_link *l, const uint8_t *msg, uint32_t len)
{
	bool signal = l->unsignaled + 1 >= l->nstage / 2;
	struct krcore_wr wr;
	unsigned int i;
	uint8_t *slot;
	int ret;

	for (i = 0; i < l->nstage && (l->busy & (1ULL << i)); i++)
		;
	if (i == l->nstage)
		return -EAGAIN;
	slot = l->stage + (size_t)i * KRCORE_MAX_SEND;
	memcpy(slot, msg, len);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = KRCL_WR_SEND | i;
	wr.opcode = KRCORE_WR_SEND;
	wr.flags = signal ? KRCORE_WR_SIGNALED : 0;
	wr.num_sge = 1;
	wr.sg_list[0].addr = (uintptr_t)slot;
	wr.sg_list[0].length = len;
	wr.sg_list[0].lkey = l->mr.lkey;
	ret = krc_qpush(l->vq, &wr, 1);
	if (ret == 1) {
		l->busy |= 1ULL << i;
		l->order[(l->ohead + l->ocount++) % 64] = (uint8_t)i;
		l->unsignaled = signal ? 0 : l->unsignaled + 1;
		return 0;
	}
	return ret < 0 ? ret : -EAGAIN;
}

static int krcl_queue(struct krcl_link *l, const uint8_t *msg, uint32_t len)
{
	struct krcl_msgq *q;

	if (l->max_queued && l->queued >= l->max_queued) {
		l->dropped++;
		return -ENOBUFS;
	}
	q = malloc(sizeof(*q) + len);

	if (!q)
		return krcl_fail(-ENOMEM, "no memory to queue a message");
	q->next = NULL;
	q->len = len;
	memcpy(q->data, msg, len);
	if (l->tail)
		l->tail->next = q;
	else
		l->head = q;
	l->tail = q;
	l->queued++;
	l->queued_total++;
	return 0;
}

int krcl_link_send(struct krcl_link *l, const struct krc_rpc_hdr *h,
		   const void *payload, size_t len)
{
	uint8_t msg[KRCORE_MAX_SEND];
	int ret;

	if (l->error)
		return l->error;
	if (len > KRCL_RPC_INLINE)
		return krcl_fail(-EMSGSIZE, "%zu bytes do not fit in a message", len);
	krc_rpc_encode(h, msg);
	if (len)
		memcpy(msg + KRC_RPC_HDR_SIZE, payload, len);
	len += KRC_RPC_HDR_SIZE;
	if (l->head)	/* keep the order: behind what waits */
		return krcl_queue(l, msg, (uint32_t)len);
	ret = krcl_post(l, msg, (uint32_t)len);
	if (ret == -EAGAIN)
		return krcl_queue(l, msg, (uint32_t)len);
	if (ret == -ECONNREFUSED)
		l->error = ret;
	return ret;
}

/* SEND @slot completed: it and every SEND posted before it are done. */
static void krcl_sent(struct krcl_link *l, unsigned int slot)
{
	unsigned int k;

	if (!(l->busy & (1ULL << slot)))
		return;
	do {
		k = l->order[l->ohead];
		l->ohead = (l->ohead + 1) % 64;
		l->ocount--;
		l->busy &= ~(1ULL << k);
	} while (k != slot && l->ocount);
}

int krcl_link_progress(struct krcl_link *l, krcl_cqe_fn *fn, void *arg)
{
	struct krcore_cqe c[16];
	int i, k, ret, got = 0;

	do {
		k = krc_qpop(l->vq, c, 16);
		for (i = 0; i < k; i++) {
			if (c[i].wr_id & KRCL_WR_SEND) {
				krcl_sent(l, (unsigned int)(c[i].wr_id & 63));
				if (c[i].status != KRCORE_WC_SUCCESS)
					l->send_errors++;
			} else if (fn) {
				fn(arg, &c[i]);
				got++;
			}
		}
	} while (k == 16);
	while (l->head) {
		struct krcl_msgq *q = l->head;

		ret = krcl_post(l, q->data, q->len);
		if (ret == -EAGAIN)
			break;
		l->head = q->next;
		if (!l->head)
			l->tail = NULL;
		l->queued--;
		free(q);
		if (ret == -ECONNREFUSED) {
			l->error = ret;
			break;
		}
	}
	return got;
}
