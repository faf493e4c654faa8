// SPDX-License-Identifier: BSD-2-Clause
/*
 * read_bench - RDMA READ through krcore against raw user-space verbs,
 * measured side by side in one run on the same two nodes.
 *
 *   read_bench server DIR GID_INDEX
 *       registers a 1 MiB buffer with verbs and with krcore, makes one
 *       verbs RC QP, publishes everything under DIR, serves until
 *       DIR/stop exists.
 *   read_bench client SERVER_ADDR DIR GID_INDEX [ITERS [SECONDS]]
 *       the same work through both paths, side by side:
 *       - synchronous 8-byte READs (post one, wait for it): ITERS of each,
 *         interleaved one by one (verbs, krcore, krcore, verbs, ...) so
 *         that both see the same conditions: median and p99 latency;
 *       - batched 64-byte READs, 32 in flight, posted 8 at a time, in
 *         ROUNDS alternating windows of SECONDS / ROUNDS: throughput.
 *       Prints both, and krcore/verbs ratios.
 *
 * The verbs path is what an application does without krcore: its own PD,
 * CQ and RC QP (connected by an exchange of QPN/PSN/GID through DIR), one
 * ibv_post_send per batch, busy-polling its CQ. The krcore path: one VQ
 * on the node's shared connection, one qpush per batch, busy-polling the
 * VQ's completion ring.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "libkrcore.h"
#include "bench.h"

#define BUF_SIZE	0x100000
#define ROUNDS		10
#define WINDOW		32
#define BATCH		8

struct qp_info {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
};

struct verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	void *buf;
	int gid_index;
};

static void die(const char *what)
{
	fprintf(stderr, "read_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void write_file(const char *dir, const char *name, const void *data,
		       size_t len)
{
	if (bench_write_file(dir, name, data, len))
		die("write");
}

static void read_file(const char *dir, const char *name, void *data, size_t len)
{
	if (bench_read_file(dir, name, data, len))
		exit(1);
}

static void verbs_open(struct verbs *v, int gid_index)
{
	struct ibv_qp_init_attr init = {};
	struct ibv_device **list;
	int n;

	list = ibv_get_device_list(&n);
	if (!list || !n)
		die("no RDMA device");
	v->ctx = ibv_open_device(list[0]);
	if (!v->ctx)
		die("ibv_open_device");
	ibv_free_device_list(list);
	v->gid_index = gid_index;
	v->pd = ibv_alloc_pd(v->ctx);
	v->cq = ibv_create_cq(v->ctx, 256, NULL, NULL, 0);
	v->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!v->pd || !v->cq || v->buf == MAP_FAILED)
		die("verbs resources");
	v->mr = ibv_reg_mr(v->pd, v->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!v->mr)
		die("ibv_reg_mr");
	init.send_cq = v->cq;
	init.recv_cq = v->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 128;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	v->qp = ibv_create_qp(v->pd, &init);
	if (!v->qp)
		die("ibv_create_qp");
}

static void verbs_info(struct verbs *v, struct qp_info *me)
{
	union ibv_gid gid;

	if (ibv_query_gid(v->ctx, 1, v->gid_index, &gid))
		die("ibv_query_gid");
	memset(me, 0, sizeof(*me));
	me->qpn = v->qp->qp_num;
	me->psn = (uint32_t)(lrand48() & 0xffffff);
	memcpy(me->gid, gid.raw, 16);
	me->addr = (uintptr_t)v->buf;
	me->rkey = v->mr->rkey;
}

static void verbs_connect(struct verbs *v, const struct qp_info *me,
			  const struct qp_info *peer)
{
	struct ibv_qp_attr a = {};

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)v->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = me->psn;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

static int run_server(const char *dir, int gid_index)
{
	struct qp_info me, peer, kinfo = {};
	struct krc_vq *vq;
	struct krc_mr kmr;
	struct verbs v;
	char stop[512];
	struct stat st;
	size_t i;

	verbs_open(&v, gid_index);
	for (i = 0; i < BUF_SIZE; i++)
		((uint8_t *)v.buf)[i] = (uint8_t)(i * 7 + 3);
	verbs_info(&v, &me);
	write_file(dir, "server.verbs", &me, sizeof(me));
	/* The same buffer, registered with krcore too. */
	if (krc_vq_open(&vq) < 0 ||
	    krc_reg_mr(vq, v.buf, BUF_SIZE, KRCORE_ACCESS_REMOTE_READ, &kmr) < 0) {
		fprintf(stderr, "read_bench: %s\n", krc_errmsg());
		return 1;
	}
	kinfo.addr = (uintptr_t)v.buf;
	kinfo.rkey = kmr.rkey;
	write_file(dir, "server.krcore", &kinfo, sizeof(kinfo));
	read_file(dir, "client.verbs", &peer, sizeof(peer));
	verbs_connect(&v, &me, &peer);
	write_file(dir, "server.ready", &me, sizeof(me));
	snprintf(stop, sizeof(stop), "%s/stop", dir);
	while (stat(stop, &st))
		usleep(200000);
	return 0;
}

struct side {
	const char *name;
	/* post @n READs of @len bytes (the last one signaled) */
	int (*post)(struct side *s, int n, uint32_t len, uint64_t id);
	/* completions seen (busy poll) */
	int (*poll)(struct side *s, int max);
	struct verbs *v;
	struct krc_vq *vq;
	struct krc_mr kmr;
	void *kbuf;
	uint64_t raddr;
	uint32_t rkey;
	double *lat;
	double *post_lat;	/* the post call alone */
	int nlat;
	double ops;
	double secs;
	double win[ROUNDS];	/* READs/s of each throughput window */
	int nwin;
};

static int verbs_post(struct side *s, int n, uint32_t len, uint64_t id)
{
	struct ibv_send_wr wr[BATCH], *bad;
	struct ibv_sge sge[BATCH];
	int i;

	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)s->v->buf + (i * 64);
		sge[i].length = len;
		sge[i].lkey = s->v->mr->lkey;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = id + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_READ;
		wr[i].send_flags = i == n - 1 ? IBV_SEND_SIGNALED : 0;
		wr[i].wr.rdma.remote_addr = s->raddr + ((id + i) % 1000) * 64;
		wr[i].wr.rdma.rkey = s->rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibv_post_send(s->v->qp, wr, &bad) ? -1 : n;
}

static int verbs_poll(struct side *s, int max)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(s->v->cq, max < 16 ? max : 16, wc), i;

	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "read_bench: verbs READ failed: %s\n",
				ibv_wc_status_str(wc[i].status));
			exit(1);
		}
	return n;
}

static int krc_post(struct side *s, int n, uint32_t len, uint64_t id)
{
	struct krcore_wr wr[BATCH];
	int i;

	memset(wr, 0, sizeof(wr[0]) * (size_t)n);
	for (i = 0; i < n; i++) {
		wr[i].wr_id = id + i;
		wr[i].opcode = KRCORE_WR_READ;
		wr[i].flags = i == n - 1 ? KRCORE_WR_SIGNALED : 0;
		wr[i].num_sge = 1;
		wr[i].sg_list[0].addr = (uintptr_t)s->kbuf + i * 64;
		wr[i].sg_list[0].length = len;
		wr[i].sg_list[0].lkey = s->kmr.lkey;
		wr[i].remote_addr = s->raddr + ((id + i) % 1000) * 64;
		wr[i].rkey = s->rkey;
	}
	return krc_qpush(s->vq, wr, (unsigned int)n);
}

static int krc_poll(struct side *s, int max)
{
	struct krcore_cqe cqe[16];
	int n = krc_qpop(s->vq, cqe, max < 16 ? (unsigned int)max : 16), i;

	for (i = 0; i < n; i++)
		if (cqe[i].status) {
			fprintf(stderr, "read_bench: krcore READ failed: %s\n",
				krc_wc_status_str(cqe[i].status));
			exit(1);
		}
	return n;
}

/* @iters synchronous 8-byte READs: post one, spin until it completes. */
static void run_latency(struct side *s, int iters, uint64_t *id)
{
	int i;

	for (i = 0; i < iters; i++) {
		double t0 = now_us(), t1;

		if (s->post(s, 1, 8, (*id)++) != 1) {
			fprintf(stderr, "read_bench: %s post failed\n", s->name);
			exit(1);
		}
		t1 = now_us();
		while (!s->poll(s, 1))
			;
		s->post_lat[s->nlat] = t1 - t0;
		s->lat[s->nlat++] = now_us() - t0;
	}
}

/* Batches of 8 64-byte READs, 32 in flight, for @secs seconds. */
static void run_throughput(struct side *s, double secs, uint64_t *id)
{
	double t0 = now_us(), end = t0 + secs * 1e6;
	int inflight = 0, n;
	long done = 0;

	while (now_us() < end || inflight) {
		if (inflight + BATCH <= WINDOW && now_us() < end) {
			n = s->post(s, BATCH, 64, *id);
			if (n == BATCH) {
				*id += BATCH;
				inflight += BATCH;
			}
		}
		n = s->poll(s, 16);
		/* one completion per batch: the batch's last, signaled */
		inflight -= n * BATCH;
		done += n * BATCH;
	}
	s->ops += done;
	s->secs += (now_us() - t0) / 1e6;
	if (s->nwin < ROUNDS)
		s->win[s->nwin++] = done / ((now_us() - t0) / 1e6);
}

static int run_client(const char *addr, const char *dir, int gid_index,
		      int iters, double secs)
{
	struct qp_info me, srv, kinfo;
	struct krcore_qconnect qc;
	struct side sv = { .name = "verbs", .post = verbs_post, .poll = verbs_poll };
	struct side sk = { .name = "krcore", .post = krc_post, .poll = krc_poll };
	struct side *order[2];
	struct verbs v;
	uint64_t id = 0;
	int r, k;

	verbs_open(&v, gid_index);
	read_file(dir, "server.verbs", &srv, sizeof(srv));
	read_file(dir, "server.krcore", &kinfo, sizeof(kinfo));
	verbs_info(&v, &me);
	write_file(dir, "client.verbs", &me, sizeof(me));
	verbs_connect(&v, &me, &srv);
	read_file(dir, "server.ready", &srv, sizeof(srv));
	sv.v = &v;
	sv.raddr = srv.addr;
	sv.rkey = srv.rkey;

	if (krc_vq_open(&sk.vq) < 0 || krc_qconnect(sk.vq, addr, 0, &qc) < 0) {
		fprintf(stderr, "read_bench: %s\n", krc_errmsg());
		return 1;
	}
	sk.kbuf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (sk.kbuf == MAP_FAILED ||
	    krc_reg_mr(sk.vq, sk.kbuf, BUF_SIZE, KRCORE_ACCESS_LOCAL_WRITE,
		       &sk.kmr) < 0) {
		fprintf(stderr, "read_bench: %s\n", krc_errmsg());
		return 1;
	}
	sk.raddr = kinfo.addr;
	sk.rkey = kinfo.rkey;
	sv.lat = calloc((size_t)iters + 64, sizeof(double));
	sk.lat = calloc((size_t)iters + 64, sizeof(double));
	sv.post_lat = calloc((size_t)iters + 64, sizeof(double));
	sk.post_lat = calloc((size_t)iters + 64, sizeof(double));

	/* Warm both paths up, then interleave them one READ at a time. */
	run_latency(&sv, 50, &id);
	run_latency(&sk, 50, &id);
	sv.nlat = 0;
	sk.nlat = 0;
	for (r = 0; r < iters; r++) {
		order[0] = r % 2 ? &sk : &sv;
		order[1] = r % 2 ? &sv : &sk;
		for (k = 0; k < 2; k++)
			run_latency(order[k], 1, &id);
	}
	for (r = 0; r < ROUNDS; r++) {
		order[0] = r % 2 ? &sk : &sv;
		order[1] = r % 2 ? &sv : &sk;
		for (k = 0; k < 2; k++)
			run_throughput(order[k], secs / ROUNDS, &id);
	}
	qsort(sv.lat, (size_t)sv.nlat, sizeof(double), cmp_d);
	qsort(sk.lat, (size_t)sk.nlat, sizeof(double), cmp_d);
	qsort(sv.post_lat, (size_t)sv.nlat, sizeof(double), cmp_d);
	qsort(sk.post_lat, (size_t)sk.nlat, sizeof(double), cmp_d);

	printf("synchronous 8 B READ latency, %d READs each, interleaved:\n",
	       sv.nlat);
	printf("  verbs   median %8.1f us  p99 %8.1f us\n",
	       pct(sv.lat, sv.nlat, 0.5), pct(sv.lat, sv.nlat, 0.99));
	printf("  krcore  median %8.1f us  p99 %8.1f us\n",
	       pct(sk.lat, sk.nlat, 0.5), pct(sk.lat, sk.nlat, 0.99));
	printf("  of which the post call: verbs median %.1f us, krcore median %.1f us\n",
	       pct(sv.post_lat, sv.nlat, 0.5), pct(sk.post_lat, sk.nlat, 0.5));
	printf("  ratio krcore/verbs: median %.3f  p99 %.3f  (target <= 1.15)\n",
	       pct(sk.lat, sk.nlat, 0.5) / pct(sv.lat, sv.nlat, 0.5),
	       pct(sk.lat, sk.nlat, 0.99) / pct(sv.lat, sv.nlat, 0.99));
	printf("batched 64 B READ throughput, %d in flight, posted %d per call,\n",
	       WINDOW, BATCH);
	printf("  %.1f s each, in %d alternating windows:\n", sv.secs, ROUNDS);
	printf("  verbs   %10.0f READs/s\n", sv.ops / sv.secs);
	printf("  krcore  %10.0f READs/s\n", sk.ops / sk.secs);
	printf("  ratio krcore/verbs: %.3f  (target >= 0.9)\n",
	       (sk.ops / sk.secs) / (sv.ops / sv.secs));
	write_file(dir, "stop", "", 0);

	bench_figure("read_lat", "us", "procs",
		     "Synchronous 8 B READ latency, one process: krcore VQ vs private verbs QP");
	for (r = 0; r < sv.nlat; r++)
		bench_sample("read_lat", "verbs", "1", sv.lat[r]);
	for (r = 0; r < sk.nlat; r++)
		bench_sample("read_lat", "krcore", "1", sk.lat[r]);
	bench_ratio("read_lat", "krcore_over_verbs", "krcore", "verbs",
		    "<= 1.15");
	bench_figure("read_tput", "per_s", "procs",
		     "Batched 64 B READ throughput, one process, 32 in flight");
	for (r = 0; r < ROUNDS; r++) {
		if (sv.win[r] > 0)
			bench_sample("read_tput", "verbs", "1", sv.win[r]);
		if (sk.win[r] > 0)
			bench_sample("read_tput", "krcore", "1", sk.win[r]);
	}
	bench_ratio("read_tput", "krcore_over_verbs", "krcore", "verbs",
		    ">= 0.9");
	return 0;
}

int main(int argc, char **argv)
{
	srand48(getpid());
	if (argc == 4 && !strcmp(argv[1], "server"))
		return run_server(argv[2], atoi(argv[3]));
	if (argc >= 5 && !strcmp(argv[1], "client"))
		return run_client(argv[2], argv[3], atoi(argv[4]),
			      argc > 5 ? atoi(argv[5]) : 5000,
			      argc > 6 ? atof(argv[6]) : 10.0);
	fprintf(stderr, "usage: read_bench server DIR GID_INDEX\n"
		"       read_bench client SERVER_ADDR DIR GID_INDEX [ITERS [SECONDS]]\n");
	return 2;
}
