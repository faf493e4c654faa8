// SPDX-License-Identifier: BSD-2-Clause
/*
 * kvs_krcore.c - the key-value store's remote memory over krcore: one VQ
 * connected to the memory node (qconnect: the node's shared connection),
 * a registered scratch buffer, and every READ, WRITE, CAS and FAA of
 * common/kvs.c as a signaled request on it, its completion busy-polled
 * from the VQ's ring (no system call), as bench/read_bench.c does.
 *
 * Not run against RDMA when written: compiled only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "libkrcore.h"
#include "bench.h"
#include "kvs_backend.h"

struct kvs_krc {
	struct krc_vq *vq;
	struct krc_mr mr;
	uint8_t *buf;		/* KVS_SCRATCH bytes, registered */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t wr_id;
};

static void krc_wr_init(struct kvs_krc *k, struct krcore_wr *w, uint8_t op,
			uint64_t off, uint32_t buf_off, uint32_t len)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = ++k->wr_id;
	w->opcode = op;
	w->flags = KRCORE_WR_SIGNALED;
	w->num_sge = 1;
	w->remote_addr = k->raddr + off;
	w->rkey = k->rkey;
	w->sg_list[0].addr = (uintptr_t)(k->buf + buf_off);
	w->sg_list[0].length = len;
	w->sg_list[0].lkey = k->mr.lkey;
}

/* Post @n requests, busy-poll their @n completions: 0 or -errno. */
static int krc_run(struct kvs_krc *k, const struct krcore_wr *wrs,
		   unsigned int n)
{
	struct krcore_cqe cqe[8];
	double deadline = now_us() + KVS_TIMEOUT_MS * 1e3;
	unsigned int got = 0, spins = 0;
	int ret = 0, m, i;

	m = krc_qpush(k->vq, wrs, n);
	if (m != (int)n) {
		/* what was posted still completes: wait for it below */
		fprintf(stderr, "kvs_krcore: qpush: %s\n", krc_errmsg());
		if (m < 0)
			return m;
		n = (unsigned int)m;
		ret = -EIO;
	}
	while (got < n) {
		m = krc_qpop(k->vq, cqe, n - got < 8 ? n - got : 8);
		if (m < 0)
			return m;
		for (i = 0; i < m; i++) {
			if (cqe[i].status) {
				fprintf(stderr, "kvs_krcore: request failed: %s\n",
					krc_wc_status_str(cqe[i].status));
				ret = -EIO;
			}
		}
		got += (unsigned int)m;
		if (!m && !(++spins & 1023) && now_us() > deadline) {
			fprintf(stderr, "kvs_krcore: %u of %u requests not complete within %d ms\n",
				n - got, n, KVS_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
	}
	return ret;
}

static int krc_op_read(void *ctx, u64 off, void *buf, u32 len)
{
	struct kvs_krc *k = ctx;
	struct krcore_wr w;
	int ret;

	if (len > KVS_SCRATCH)
		return -EINVAL;
	krc_wr_init(k, &w, KRCORE_WR_READ, off, 0, len);
	ret = krc_run(k, &w, 1);
	if (!ret)
		memcpy(buf, k->buf, len);
	return ret;
}

/* The READs of a lookup in one qpush: one round trip. */
static int krc_op_read_many(void *ctx, const struct krc_kvs_rd *rd,
			    unsigned int n)
{
	struct kvs_krc *k = ctx;
	struct krcore_wr w[4];
	uint32_t at = 0;
	unsigned int i;
	int ret;

	if (!n || n > 4)
		return n ? -EINVAL : 0;
	memset(w, 0, sizeof(w));
	for (i = 0; i < n; i++) {
		if (rd[i].len > KVS_SCRATCH - at)
			return -EINVAL;
		krc_wr_init(k, &w[i], KRCORE_WR_READ, rd[i].off, at,
			    rd[i].len);
		at += (rd[i].len + 63) & ~63U;
	}
	ret = krc_run(k, w, n);
	for (i = 0, at = 0; !ret && i < n; i++) {
		memcpy(rd[i].buf, k->buf + at, rd[i].len);
		at += (rd[i].len + 63) & ~63U;
	}
	return ret;
}

static int krc_op_write(void *ctx, u64 off, const void *buf, u32 len)
{
	struct kvs_krc *k = ctx;
	struct krcore_wr w;

	if (len > KVS_SCRATCH)
		return -EINVAL;
	memcpy(k->buf, buf, len);
	krc_wr_init(k, &w, KRCORE_WR_WRITE, off, 0, len);
	return krc_run(k, &w, 1);
}

static int krc_op_cas(void *ctx, u64 off, u64 expect, u64 desired, u64 *old)
{
	struct kvs_krc *k = ctx;
	struct krcore_wr w;
	int ret;

	krc_wr_init(k, &w, KRCORE_WR_ATOMIC_CAS, off, 0, 8);
	w.compare_add = expect;
	w.swap = desired;
	ret = krc_run(k, &w, 1);
	if (!ret)
		memcpy(old, k->buf, 8);
	return ret;
}

static int krc_op_faa(void *ctx, u64 off, u64 add, u64 *old)
{
	struct kvs_krc *k = ctx;
	struct krcore_wr w;
	int ret;

	krc_wr_init(k, &w, KRCORE_WR_ATOMIC_FAA, off, 0, 8);
	w.compare_add = add;
	ret = krc_run(k, &w, 1);
	if (!ret)
		memcpy(old, k->buf, 8);
	return ret;
}

static const struct krc_kvs_ops krc_ops = {
	.read = krc_op_read,
	.write = krc_op_write,
	.cas = krc_op_cas,
	.faa = krc_op_faa,
	.read_many = krc_op_read_many,
};

static void krc_close(void *ctx)
{
	struct kvs_krc *k = ctx;

	krc_dereg_mr(k->vq, &k->mr);
	krc_vq_close(k->vq);
	munmap(k->buf, KVS_SCRATCH);
	free(k);
}

static int krc_fetch(void *ctx, uint64_t off, void *dst, uint64_t len)
{
	struct krcore_wr w[KVS_FETCH_DEPTH];
	struct kvs_krc *k = ctx;
	struct krc_mr mr;
	uint64_t at = 0;
	unsigned int n;
	uint32_t c;
	int ret;

	ret = krc_reg_mr(k->vq, dst, len, KRCORE_ACCESS_LOCAL_WRITE, &mr);
	if (ret) {
		fprintf(stderr, "kvs_krcore: register %llu bytes: %s\n",
			(unsigned long long)len, krc_errmsg());
		return ret;
	}
	while (!ret && at < len) {
		for (n = 0; n < KVS_FETCH_DEPTH && at < len; n++) {
			c = len - at < KVS_FETCH_CHUNK ? (uint32_t)(len - at) :
							 KVS_FETCH_CHUNK;
			krc_wr_init(k, &w[n], KRCORE_WR_READ, off + at, 0, c);
			w[n].sg_list[0].addr = (uintptr_t)dst + at;
			w[n].sg_list[0].lkey = mr.lkey;
			at += c;
		}
		ret = krc_run(k, w, n);
	}
	krc_dereg_mr(k->vq, &mr);
	return ret;
}

int kvs_krcore_connect(const struct kvs_pub *pub, struct kvs_conn *conn)
{
	struct krcore_qconnect qc;
	struct kvs_krc *k;
	double t0 = now_us();
	int ret;

	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	ret = krc_vq_open(&k->vq);
	if (ret)
		goto fail;
	conn->open_us = now_us() - t0;
	ret = krc_qconnect(k->vq, pub->addr, 0, &qc);
	if (ret)
		goto fail_vq;
	k->buf = mmap(NULL, KVS_SCRATCH, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (k->buf == MAP_FAILED) {
		ret = -ENOMEM;
		goto fail_vq;
	}
	ret = krc_reg_mr(k->vq, k->buf, KVS_SCRATCH,
			 KRCORE_ACCESS_LOCAL_WRITE, &k->mr);
	if (ret)
		goto fail_buf;
	conn->connect_us = now_us() - t0;
	k->raddr = pub->raddr;
	k->rkey = pub->rkey;
	conn->method = "krcore";
	conn->ops = &krc_ops;
	conn->ctx = k;
	conn->region_len = pub->len;
	conn->close = krc_close;
	conn->fetch = krc_fetch;
	return 0;

fail_buf:
	munmap(k->buf, KVS_SCRATCH);
fail_vq:
	krc_vq_close(k->vq);
fail:
	fprintf(stderr, "kvs_krcore: connect to %s: %s\n", pub->addr,
		krc_errmsg());
	free(k);
	return ret;
}

int kvs_krcore_serve(void *mem, uint64_t len, struct kvs_pub *pub)
{
	static struct krc_vq *vq;	/* the registration's, until exit */
	struct krc_mr mr;
	int ret;

	ret = krc_vq_open(&vq);
	if (!ret)
		ret = krc_reg_mr(vq, mem, len, KRCORE_ACCESS_LOCAL_WRITE |
				 KRCORE_ACCESS_REMOTE_READ |
				 KRCORE_ACCESS_REMOTE_WRITE |
				 KRCORE_ACCESS_REMOTE_ATOMIC, &mr);
	if (ret) {
		fprintf(stderr, "kvs_krcore: register the region: %s\n",
			krc_errmsg());
		krc_vq_close(vq);
		vq = NULL;
		return ret;
	}
	pub->raddr = (uintptr_t)mem;
	pub->len = len;
	pub->rkey = mr.rkey;
	return 0;
}
