// SPDX-License-Identifier: BSD-2-Clause
/*
 * kvs_verbs.c - the key-value store's remote memory over raw user-space
 * verbs, what a worker does without krcore: rdma_cm to resolve the
 * memory node and connect (the device context opens with it), its own
 * PD, CQ and RC QP, a registered scratch buffer; every READ, WRITE, CAS
 * and FAA of common/kvs.c a signaled work request, its completion
 * busy-polled from the CQ. The memory node's side: an rdma_cm listener
 * bound to its address, the region registered in the listener's PD, one
 * QP per accepted worker.
 *
 * Not run against RDMA when written: compiled only.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "bench.h"
#include "kvs_backend.h"

#define KVS_RD_ATOMIC	4	/* READs/atomics in flight per QP */

struct kvs_vb {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* KVS_SCRATCH bytes, registered */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t wr_id;
};

static void vb_wr_init(struct kvs_vb *v, struct ibv_send_wr *w,
		       struct ibv_sge *sge, enum ibv_wr_opcode op, uint64_t off,
		       uint32_t buf_off, uint32_t len)
{
	sge->addr = (uintptr_t)(v->buf + buf_off);
	sge->length = len;
	sge->lkey = v->mr->lkey;
	memset(w, 0, sizeof(*w));
	w->wr_id = ++v->wr_id;
	w->sg_list = sge;
	w->num_sge = 1;
	w->opcode = op;
	w->send_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.atomic.remote_addr = v->raddr + off;
		w->wr.atomic.rkey = v->rkey;
	} else {
		w->wr.rdma.remote_addr = v->raddr + off;
		w->wr.rdma.rkey = v->rkey;
	}
}

/* Post the chain @wr of @n requests, busy-poll @n completions. */
static int vb_run(struct kvs_vb *v, struct ibv_send_wr *wr, unsigned int n)
{
	double deadline = now_us() + KVS_TIMEOUT_MS * 1e3;
	struct ibv_send_wr *bad;
	struct ibv_wc wc[8];
	unsigned int got = 0, spins = 0;
	int ret = 0, m, i;

	if (ibv_post_send(v->id->qp, wr, &bad)) {
		fprintf(stderr, "kvs_verbs: ibv_post_send failed\n");
		return -EIO;
	}
	while (got < n) {
		m = ibv_poll_cq(v->cq, 8, wc);
		if (m < 0)
			return -EIO;
		for (i = 0; i < m; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "kvs_verbs: request failed: %s\n",
					ibv_wc_status_str(wc[i].status));
				ret = -EIO;
			}
		}
		got += (unsigned int)m;
		if (!m && !(++spins & 1023) && now_us() > deadline) {
			fprintf(stderr, "kvs_verbs: %u of %u requests not complete within %d ms\n",
				n - got, n, KVS_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
	}
	return ret;
}

static int vb_read(void *ctx, u64 off, void *buf, u32 len)
{
	struct kvs_vb *v = ctx;
	struct ibv_send_wr w;
	struct ibv_sge sge;
	int ret;

	if (len > KVS_SCRATCH)
		return -EINVAL;
	vb_wr_init(v, &w, &sge, IBV_WR_RDMA_READ, off, 0, len);
	ret = vb_run(v, &w, 1);
	if (!ret)
		memcpy(buf, v->buf, len);
	return ret;
}

/* The READs of a lookup in one ibv_post_send: one round trip. */
static int vb_read_many(void *ctx, const struct krc_kvs_rd *rd,
			unsigned int n)
{
	struct kvs_vb *v = ctx;
	struct ibv_send_wr w[KVS_RD_ATOMIC];
	struct ibv_sge sge[KVS_RD_ATOMIC];
	uint32_t at = 0;
	unsigned int i;
	int ret;

	if (!n || n > KVS_RD_ATOMIC)
		return n ? -EINVAL : 0;
	for (i = 0; i < n; i++) {
		if (rd[i].len > KVS_SCRATCH - at)
			return -EINVAL;
		vb_wr_init(v, &w[i], &sge[i], IBV_WR_RDMA_READ, rd[i].off, at,
			   rd[i].len);
		w[i].next = i + 1 < n ? &w[i + 1] : NULL;
		at += (rd[i].len + 63) & ~63U;
	}
	ret = vb_run(v, w, n);
	for (i = 0, at = 0; !ret && i < n; i++) {
		memcpy(rd[i].buf, v->buf + at, rd[i].len);
		at += (rd[i].len + 63) & ~63U;
	}
	return ret;
}

static int vb_write(void *ctx, u64 off, const void *buf, u32 len)
{
	struct kvs_vb *v = ctx;
	struct ibv_send_wr w;
	struct ibv_sge sge;

	if (len > KVS_SCRATCH)
		return -EINVAL;
	memcpy(v->buf, buf, len);
	vb_wr_init(v, &w, &sge, IBV_WR_RDMA_WRITE, off, 0, len);
	return vb_run(v, &w, 1);
}

static int vb_cas(void *ctx, u64 off, u64 expect, u64 desired, u64 *old)
{
	struct kvs_vb *v = ctx;
	struct ibv_send_wr w;
	struct ibv_sge sge;
	int ret;

	vb_wr_init(v, &w, &sge, IBV_WR_ATOMIC_CMP_AND_SWP, off, 0, 8);
	w.wr.atomic.compare_add = expect;
	w.wr.atomic.swap = desired;
	ret = vb_run(v, &w, 1);
	if (!ret)
		memcpy(old, v->buf, 8);
	return ret;
}

static int vb_faa(void *ctx, u64 off, u64 add, u64 *old)
{
	struct kvs_vb *v = ctx;
	struct ibv_send_wr w;
	struct ibv_sge sge;
	int ret;

	vb_wr_init(v, &w, &sge, IBV_WR_ATOMIC_FETCH_AND_ADD, off, 0, 8);
	w.wr.atomic.compare_add = add;
	ret = vb_run(v, &w, 1);
	if (!ret)
		memcpy(old, v->buf, 8);
	return ret;
}

static const struct krc_kvs_ops vb_ops = {
	.read = vb_read,
	.write = vb_write,
	.cas = vb_cas,
	.faa = vb_faa,
	.read_many = vb_read_many,
};

static void vb_close(void *ctx)
{
	struct kvs_vb *v = ctx;

	rdma_disconnect(v->id);
	rdma_destroy_qp(v->id);
	ibv_dereg_mr(v->mr);
	ibv_destroy_cq(v->cq);
	ibv_dealloc_pd(v->pd);
	rdma_destroy_id(v->id);
	rdma_destroy_event_channel(v->ch);
	munmap(v->buf, KVS_SCRATCH);
	free(v);
}

static int vb_fetch(void *ctx, uint64_t off, void *dst, uint64_t len)
{
	struct ibv_send_wr w[KVS_FETCH_DEPTH];
	struct ibv_sge sge[KVS_FETCH_DEPTH];
	struct kvs_vb *v = ctx;
	struct ibv_mr *mr;
	uint64_t at = 0;
	unsigned int n;
	uint32_t c;
	int ret = 0;

	mr = ibv_reg_mr(v->pd, dst, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		fprintf(stderr, "kvs_verbs: register %llu bytes: %s\n",
			(unsigned long long)len, strerror(errno));
		return -errno;
	}
	while (!ret && at < len) {
		for (n = 0; n < KVS_FETCH_DEPTH && at < len; n++) {
			c = len - at < KVS_FETCH_CHUNK ? (uint32_t)(len - at) :
							 KVS_FETCH_CHUNK;
			vb_wr_init(v, &w[n], &sge[n], IBV_WR_RDMA_READ, off + at,
				   0, c);
			sge[n].addr = (uintptr_t)dst + at;
			sge[n].lkey = mr->lkey;
			if (n)
				w[n - 1].next = &w[n];
			at += c;
		}
		ret = vb_run(v, w, n);
	}
	ibv_dereg_mr(mr);
	return ret;
}

int kvs_verbs_connect(const struct kvs_pub *pub, struct kvs_conn *conn)
{
	struct rdma_addrinfo hints = {}, *res = NULL;
	struct ibv_qp_init_attr attr = {};
	struct rdma_conn_param param = {};
	struct kvs_vb *v;
	double t0 = now_us();
	char port[16];

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	snprintf(port, sizeof(port), "%u", pub->port);
	hints.ai_port_space = RDMA_PS_TCP;
	/* the device context opens here (librdmacm opens the devices) */
	v->ch = rdma_create_event_channel();
	if (!v->ch || rdma_getaddrinfo(pub->addr, port, &hints, &res) ||
	    rdma_create_id(v->ch, &v->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(v->id, NULL, res->ai_dst_addr, 2000) ||
	    cm_wait(v->ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))
		goto fail;
	conn->open_us = now_us() - t0;
	if (rdma_resolve_route(v->id, 2000) ||
	    cm_wait(v->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		goto fail;
	v->pd = ibv_alloc_pd(v->id->verbs);
	v->cq = v->pd ? ibv_create_cq(v->id->verbs, 64, NULL, NULL, 0) : NULL;
	v->buf = mmap(NULL, KVS_SCRATCH, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!v->cq || v->buf == MAP_FAILED)
		goto fail;
	v->mr = ibv_reg_mr(v->pd, v->buf, KVS_SCRATCH, IBV_ACCESS_LOCAL_WRITE);
	if (!v->mr)
		goto fail;
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = v->cq;
	attr.recv_cq = v->cq;
	attr.cap.max_send_wr = 32;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	param.initiator_depth = KVS_RD_ATOMIC;
	param.responder_resources = KVS_RD_ATOMIC;
	param.retry_count = 7;
	if (rdma_create_qp(v->id, v->pd, &attr) || rdma_connect(v->id, &param) ||
	    cm_wait(v->ch, RDMA_CM_EVENT_ESTABLISHED, NULL))
		goto fail;
	rdma_freeaddrinfo(res);
	conn->connect_us = now_us() - t0;
	v->raddr = pub->raddr;
	v->rkey = pub->rkey;
	conn->method = "verbs";
	conn->ops = &vb_ops;
	conn->ctx = v;
	conn->region_len = pub->len;
	conn->close = vb_close;
	conn->fetch = vb_fetch;
	return 0;

fail:
	/* a worker exits on failure: the process's exit releases the rest */
	fprintf(stderr, "kvs_verbs: connect to %s:%u: %s\n", pub->addr,
		pub->port, strerror(errno));
	if (res)
		rdma_freeaddrinfo(res);
	return -EIO;
}

struct kvs_verbs_srv {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned long accepted;
};

int kvs_verbs_serve(void *mem, uint64_t len, struct kvs_pub *pub,
		    struct kvs_verbs_srv **srvp)
{
	struct rdma_addrinfo hints = {}, *res;
	struct kvs_verbs_srv *s;
	char port[16];

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	snprintf(port, sizeof(port), "%u", pub->port);
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	/* bound to the node's address: the listener has a device, a PD */
	s->ch = rdma_create_event_channel();
	if (!s->ch || rdma_getaddrinfo(pub->addr, port, &hints, &res) ||
	    rdma_create_id(s->ch, &s->listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(s->listen, res->ai_src_addr) ||
	    rdma_listen(s->listen, 128) || !s->listen->verbs)
		goto fail;
	rdma_freeaddrinfo(res);
	s->pd = ibv_alloc_pd(s->listen->verbs);
	s->cq = s->pd ? ibv_create_cq(s->listen->verbs, 64, NULL, NULL, 0) :
			NULL;
	if (!s->cq)
		goto fail;
	s->mr = ibv_reg_mr(s->pd, mem, len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!s->mr)
		goto fail;
	pub->raddr = (uintptr_t)mem;
	pub->len = len;
	pub->rkey = s->mr->rkey;
	*srvp = s;
	return 0;

fail:
	fprintf(stderr, "kvs_verbs: listen on %s:%u: %s\n", pub->addr,
		pub->port, strerror(errno));
	return -EIO;
}

/* Accept connection requests, reap disconnected workers' QPs. */
void kvs_verbs_poll(struct kvs_verbs_srv *s, int timeout_ms)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	struct ibv_qp_init_attr attr = {};
	struct rdma_conn_param param = {};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	if (poll(&pfd, 1, timeout_ms) <= 0 || rdma_get_cm_event(s->ch, &ev))
		return;
	id = ev->id;
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		attr.qp_type = IBV_QPT_RC;
		attr.send_cq = s->cq;
		attr.recv_cq = s->cq;
		attr.cap.max_send_wr = 1;
		attr.cap.max_recv_wr = 1;
		attr.cap.max_send_sge = 1;
		attr.cap.max_recv_sge = 1;
		/* serve as many READs/atomics as the worker issues */
		param.responder_resources = ev->param.conn.initiator_depth;
		param.initiator_depth = ev->param.conn.responder_resources;
		if (rdma_create_qp(id, s->pd, &attr) ||
		    rdma_accept(id, &param)) {
			fprintf(stderr, "kvs_verbs: accept: %s\n",
				strerror(errno));
			rdma_reject(id, NULL, 0);
		} else {
			s->accepted++;
		}
		rdma_ack_cm_event(ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		rdma_ack_cm_event(ev);
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
		break;
	default:
		rdma_ack_cm_event(ev);
		break;
	}
}
