// SPDX-License-Identifier: BSD-2-Clause
/*
 * dataplane.c - memory registration, qpush, qpop and synchronous helpers.
 *
 * Completions are read from the VQ's ring, mapped from the kernel: qpop
 * makes no system call; krc_qpop_wait sleeps in the kernel only when the
 * ring is empty.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "wr_check.h"

int krc_reg_mr(struct krc_vq *vq, void *addr, size_t length,
	       unsigned int access, struct krc_mr *mr)
{
	struct krcore_reg_mr req = {
		.addr = (uintptr_t)addr,
		.length = length,
		.access = access,
	};
	int ret = krcl_ioctl(vq, KRCORE_IOC_REG_MR, &req);

	if (ret == -ENOMEM || ret == -EPERM)
		return krcl_fail(ret, "cannot pin %zu bytes (RLIMIT_MEMLOCK?)",
				 length);
	if (ret < 0)
		return krcl_fail(ret, "memory registration of %zu bytes at %p failed",
				 length, addr);
	mr->addr = addr;
	mr->length = length;
	mr->lkey = req.lkey;
	mr->rkey = req.rkey;
	return 0;
}

int krc_dereg_mr(struct krc_vq *vq, const struct krc_mr *mr)
{
	struct krcore_dereg_mr req = { .lkey = mr->lkey };
	int ret = krcl_ioctl(vq, KRCORE_IOC_DEREG_MR, &req);

	if (ret == -ENOKEY)
		return krcl_fail(ret, "lkey %#x is not a registration of this process",
				 mr->lkey);
	return ret < 0 ? krcl_fail(ret, "deregistration failed") : 0;
}

int krc_qpush(struct krc_vq *vq, const struct krcore_wr *wrs, unsigned int n)
{
	struct krcore_qpush *req = &vq->last_push;
	int ret;

	memset(req, 0, sizeof(*req));
	req->wrs = (uintptr_t)wrs;
	req->count = n;
	ret = krcl_ioctl(vq, KRCORE_IOC_QPUSH, req);
	if (ret >= 0) {
		req->done = (uint32_t)ret;
		return ret;
	}
	/* Reason OK: the call failed as a whole (not the owner, ...). */
	if (req->error && req->reason)
		krcl_fail(-(int)req->error, "request %u of %u not posted: %s",
			  req->done, n, krc_reason_str(req->reason));
	else
		krcl_fail(ret, "qpush failed");
	return req->done ? (int)req->done : (req->error ? -(int)req->error : ret);
}

const struct krcore_qpush *krc_qpush_result(const struct krc_vq *vq)
{
	return &vq->last_push;
}

int krc_qpop(struct krc_vq *vq, struct krcore_cqe *cqes, unsigned int max)
{
	uint32_t prod, n = 0;

	if (!vq->ring)
		return krcl_fail(-ENOTCONN, "the VQ is not connected");
	prod = __atomic_load_n(&vq->ring->producer, __ATOMIC_ACQUIRE);
	while (vq->cons != prod && n < max)
		cqes[n++] = vq->cqes[vq->cons++ & vq->mask];
	if (n)
		__atomic_store_n(&vq->ring->consumer, vq->cons, __ATOMIC_RELEASE);
	return (int)n;
}

int krc_qpop_wait(struct krc_vq *vq, struct krcore_cqe *cqes, unsigned int max,
		  int timeout_ms)
{
	struct krcore_qwait w = {};
	int n, ret;

	for (;;) {
		n = krc_qpop(vq, cqes, max);
		if (n)
			return n;
		w.timeout_ms = timeout_ms < 0 ? 0x7fffffff : (uint32_t)timeout_ms;
		w.available = 0;
		ret = krcl_ioctl(vq, KRCORE_IOC_QWAIT, &w);
		if (ret == -ETIMEDOUT)
			return 0;
		if (ret == -ENOTCONN)
			return krcl_fail(ret, "the VQ lost its connection");
		if (ret < 0)
			return krcl_fail(ret, "waiting for completions failed");
	}
}

int krcl_sync(struct krc_vq *vq, struct krcore_wr *wr, int timeout_ms)
{
	struct krcore_cqe cqe;
	struct timespec t0, t;
	long spins = 0;
	int n;

	wr->wr_id = 0x6b7263ULL;
	wr->flags |= KRCORE_WR_SIGNALED;
	do {
		n = krc_qpush(vq, wr, 1);
	} while (n == -EAGAIN);
	if (n < 0)
		return n;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = krc_qpop(vq, &cqe, 1);
		if (n)
			break;
		/* Spin for the fast path, then sleep in the kernel. */
		if (++spins < 200000)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (timeout_ms >= 0 && (t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > timeout_ms)
			return krcl_fail(-ETIMEDOUT, "no completion within %d ms",
					 timeout_ms);
		n = krc_qpop_wait(vq, &cqe, 1, 10);
		if (n < 0)
			return n;
		if (n)
			break;
	}
	if (cqe.status != KRCORE_WC_SUCCESS)
		return krcl_fail(-EIO, "request failed: %s",
				 krc_wc_status_str(cqe.status));
	return 0;
}

void krcl_fill_rw(struct krcore_wr *wr, uint8_t opcode, void *local,
		  uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = opcode;
	wr->num_sge = 1;
	wr->sg_list[0].addr = (uintptr_t)local;
	wr->sg_list[0].length = (uint32_t)len;
	wr->sg_list[0].lkey = lkey;
	wr->remote_addr = raddr;
	wr->rkey = rkey;
}

int krc_read_sync(struct krc_vq *vq, void *local, uint32_t lkey, size_t len,
		  uint64_t raddr, uint32_t rkey, int timeout_ms)
{
	struct krcore_wr wr;

	krcl_fill_rw(&wr, KRCORE_WR_READ, local, lkey, len, raddr, rkey);
	return krcl_sync(vq, &wr, timeout_ms);
}

int krc_write_sync(struct krc_vq *vq, const void *local, uint32_t lkey,
		   size_t len, uint64_t raddr, uint32_t rkey, int timeout_ms)
{
	struct krcore_wr wr;

	krcl_fill_rw(&wr, KRCORE_WR_WRITE, (void *)local, lkey, len, raddr, rkey);
	return krcl_sync(vq, &wr, timeout_ms);
}

const char *krc_wc_status_str(uint32_t status)
{
	switch (status) {
	case KRCORE_WC_SUCCESS:
		return "success";
	case KRCORE_WC_LOC_LEN_ERR:
		return "local length error";
	case KRCORE_WC_LOC_PROT_ERR:
		return "local protection error";
	case KRCORE_WC_FLUSHED:
		return "flushed: an earlier request of this VQ failed";
	case KRCORE_WC_REM_INV_REQ_ERR:
		return "remote invalid request";
	case KRCORE_WC_REM_ACCESS_ERR:
		return "remote access error (rkey, address or permissions)";
	case KRCORE_WC_REM_OP_ERR:
		return "remote operation error";
	case KRCORE_WC_RETRY_EXC_ERR:
		return "the peer did not answer (retries exceeded)";
	case KRCORE_WC_RNR_RETRY_EXC_ERR:
		return "the peer had no receive ready (RNR retries exceeded)";
	case KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN:
		return "not re-sent after a connection failure: executed or not, unknown";
	case KRCORE_WC_UNREACHABLE:
		return "the peer became unreachable";
	default:
		return "error";
	}
}

int krc_qprio(struct krc_vq *vq, unsigned int prio)
{
	struct krcore_qprio req = { .prio = prio };
	int ret;

	ret = krcl_ioctl(vq, KRCORE_IOC_QPRIO, &req);
	if (ret == -EPERM)
		return krcl_fail(ret, "prio_high_vqs high VQs in this process already");
	if (ret == -EINVAL)
		return krcl_fail(ret, "no priority class %u", prio);
	if (ret < 0)
		return krcl_fail(ret, "cannot set the priority class");
	return 0;
}

int krc_qbind(struct krc_vq *vq, uint16_t port)
{
	struct krcore_qbind req = { .port = port };
	void *mem;
	int ret;

	ret = krcl_ioctl(vq, KRCORE_IOC_QBIND, &req);
	if (ret == -EADDRINUSE)
		return krcl_fail(ret, "port %u is bound by another VQ of this node",
				 port);
	if (ret < 0)
		return krcl_fail(ret, "cannot bind port %u", port);
	mem = mmap(NULL, req.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vq->fd, (off_t)KRCORE_MMAP_RECV * sysconf(_SC_PAGESIZE));
	if (mem == MAP_FAILED)
		return krcl_fail(-errno, "cannot map the receive ring");
	vq->rring_mem = mem;
	vq->rring_size = req.ring_size;
	vq->rring = mem;
	vq->rmsgs = (struct krcore_msg *)((char *)mem + vq->rring->entry_offset);
	vq->rdata = (uint8_t *)mem + vq->rring->data_offset;
	vq->rcons = __atomic_load_n(&vq->rring->consumer, __ATOMIC_ACQUIRE);
	vq->rmask = vq->rring->entries - 1;
	vq->rslot = vq->rring->slot_size;
	return 0;
}

int krc_qpop_msg(struct krc_vq *vq, struct krc_msg *msg)
{
	const struct krcore_msg *m;
	uint32_t i;

	if (!vq->rring)
		return krcl_fail(-ENOTCONN, "the VQ has no bound port");
	if (vq->rcons == __atomic_load_n(&vq->rring->producer, __ATOMIC_ACQUIRE))
		return 0;
	i = vq->rcons & vq->rmask;
	m = &vq->rmsgs[i];
	msg->data = vq->rdata + (size_t)i * vq->rslot;
	msg->len = m->len;
	msg->imm_data = m->imm_data;
	msg->opcode = m->opcode;
	msg->flags = m->flags;
	msg->src_port = m->src_port;
	memcpy(msg->src_gid, m->src_gid, 16);
	return 1;
}

void krc_qmsg_done(struct krc_vq *vq)
{
	__atomic_store_n(&vq->rring->consumer, ++vq->rcons, __ATOMIC_RELEASE);
	/*
	 * Senders wait for slots of this ring: the kernel learns of the one
	 * given back now (a system call only then). The fence pairs with
	 * the kernel's after it sets the flag: one of us sees the other.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&vq->rring->flags, __ATOMIC_ACQUIRE) &
	    KRCORE_RECV_F_CREDIT)
		krcl_ioctl(vq, KRCORE_IOC_QCONSUMED, NULL);
}

int krc_qflow_wait(struct krc_vq *vq, int timeout_ms)
{
	struct krcore_flow_wait w = {
		.timeout_ms = timeout_ms < 0 ? 0x7fffffff : (uint32_t)timeout_ms,
	};
	int ret = krcl_ioctl(vq, KRCORE_IOC_FLOW_WAIT, &w);

	if (ret == -ECONNREFUSED)
		return krcl_fail(ret, "no process has the port bound at the receiver");
	if (ret == -ETIMEDOUT)
		return krcl_fail(ret, "no slot lent within %d ms", timeout_ms);
	if (ret < 0)
		return krcl_fail(ret, "waiting for a slot of the receiver failed");
	return (int)(w.credit > 0x7fffffff ? 0x7fffffff : w.credit);
}

int krc_qpop_msg_wait(struct krc_vq *vq, struct krc_msg *msg, int timeout_ms)
{
	struct krcore_qwait w = {};
	int n, ret;

	for (;;) {
		n = krc_qpop_msg(vq, msg);
		if (n)
			return n;
		w.timeout_ms = timeout_ms < 0 ? 0x7fffffff : (uint32_t)timeout_ms;
		ret = krcl_ioctl(vq, KRCORE_IOC_QWAIT, &w);
		if (ret == -ETIMEDOUT)
			return 0;
		if (ret < 0)
			return krcl_fail(ret, "waiting for messages failed");
		if (!w.messages)
			return 0;	/* woken for completions only */
	}
}

uint32_t krc_msgs_dropped(const struct krc_vq *vq)
{
	return vq->rring ? __atomic_load_n(&vq->rring->dropped, __ATOMIC_RELAXED) : 0;
}
