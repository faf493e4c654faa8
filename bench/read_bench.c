// SPDX-License-Identifier: BSD-2-Clause
/*
 * read_bench - the data-plane figure: RDMA READ and WRITE through krcore
 * against raw user-space verbs, measured side by side in one run on the
 * same two nodes, with 1, 2, 4 ... MAXP processes.
 *
 *   read_bench server DIR GID_INDEX [MAXP]
 *       registers a 1 MiB buffer with verbs and with krcore (remote READ
 *       and WRITE), makes MAXP verbs RC QPs (one per client process),
 *       publishes everything under DIR, serves until DIR/stop exists.
 *   read_bench client SERVER_ADDR DIR GID_INDEX [ITERS [SECONDS [MAXP]]]
 *       forks MAXP processes. Each owns what an application without
 *       krcore would own (a verbs context, PD, CQ and an RC QP to the
 *       server) and a VQ on the node's shared connection. Then, for
 *       P = 1, 2, 4 ... MAXP processes and for READ and for WRITE:
 *       - synchronous 8 B requests (post one, wait for it): ITERS samples
 *         per method, spread over the P processes, in alternating rounds
 *         (verbs, krcore, krcore, verbs, ...): median and p99 latency;
 *       - batched 64 B requests, 32 in flight per process, posted 8 at a
 *         time, in alternating windows that all P processes start and
 *         end together (SECONDS per method in all): the requests
 *         completed per second by the P processes together.
 *       Prints both, and the krcore/verbs ratios.
 *
 * The verbs path is what an application does without krcore: its own PD,
 * CQ and RC QP (connected by an exchange of QPN/PSN/GID through DIR), one
 * ibv_post_send per batch, polling its CQ. The krcore path: one VQ per
 * process, all on the node's shared connection, one qpush per batch,
 * polling the VQ's completion ring. With one process both busy-poll;
 * with more processes than the node has CPUs, a poll that finds nothing
 * yields the CPU (sched_yield), on both paths alike.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "libkrcore.h"
#include "bench.h"

#define BUF_SIZE	0x100000
/*
 * Buffers are mapped and registered one page larger than they are used:
 * rxe of Linux 6.1 reads one pointer past an MR's page map when an access
 * ends in the last page of an MR of a multiple of 256 pages (KASAN sees
 * it on the debug kernel; fixed upstream by rxe's xarray rewrite).
 */
#define MR_SIZE		(BUF_SIZE + 4096)
#define MAXP_MAX	16
#define ROUNDS		10
#define WINDOW		32
#define BATCH		8

enum { OP_READ, OP_WRITE, NOPS };
enum { M_VERBS, M_KRCORE, NMETHODS };
enum { CMD_LAT, CMD_TPUT, CMD_RTT, CMD_EXIT };

/* The two-sided round trip: 64 B messages, krcore's ports on both ends. */
#define MSG_LEN		64
#define ECHO_PORT	7490
#define REPLY_PORT	7491
#define RECVS		16

static const char *const op_name[NOPS] = { "read", "write" };
static const char *const op_upper[NOPS] = { "READ", "WRITE" };
static const char *const m_name[NMETHODS] = { "verbs", "krcore" };

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

/* A verbs context, PD, CQ and a 1 MiB buffer registered for both ends. */
static void verbs_open(struct verbs *v, int gid_index, int cqe)
{
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
	v->cq = ibv_create_cq(v->ctx, cqe, NULL, NULL, 0);
	v->buf = mmap(NULL, MR_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!v->pd || !v->cq || v->buf == MAP_FAILED)
		die("verbs resources");
	v->mr = ibv_reg_mr(v->pd, v->buf, MR_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!v->mr)
		die("ibv_reg_mr");
}

static struct ibv_qp *verbs_qp(struct verbs *v)
{
	struct ibv_qp_init_attr init = {};
	struct ibv_qp *qp;

	init.send_cq = v->cq;
	init.recv_cq = v->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 128;
	init.cap.max_recv_wr = RECVS;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = ibv_create_qp(v->pd, &init);
	if (!qp)
		die("ibv_create_qp");
	return qp;
}

static void verbs_info(struct verbs *v, struct ibv_qp *qp, struct qp_info *me)
{
	union ibv_gid gid;

	if (ibv_query_gid(v->ctx, 1, v->gid_index, &gid))
		die("ibv_query_gid");
	memset(me, 0, sizeof(*me));
	me->qpn = qp->qp_num;
	me->psn = (uint32_t)(lrand48() & 0xffffff);
	memcpy(me->gid, gid.raw, 16);
	me->addr = (uintptr_t)v->buf;
	me->rkey = v->mr->rkey;
}

static void verbs_connect(struct verbs *v, struct ibv_qp *qp,
			  const struct qp_info *me, const struct qp_info *peer)
{
	struct ibv_qp_attr a = {};

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
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
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
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
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

/* Post receive @slot (MSG_LEN bytes at the buffer's end) on @qp. */
static void verbs_recv(struct verbs *v, struct ibv_qp *qp, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)v->buf + BUF_SIZE - (slot + 1) * MSG_LEN,
		.length = MSG_LEN,
		.lkey = v->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv");
}

/* A signaled MSG_LEN SEND from the start of the buffer. */
static int verbs_send(struct verbs *v, struct ibv_qp *qp)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)v->buf, .length = MSG_LEN,
		.lkey = v->mr->lkey,
	};
	struct ibv_send_wr wr = { .wr_id = ~0ULL, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(qp, &wr, &bad) ? -1 : 0;
}

static int rb_send(struct krc_vq *vq, const struct krc_mr *mr, void *buf)
{
	struct krcore_wr wr = {
		.wr_id = 1, .opcode = KRCORE_WR_SEND,
		.flags = KRCORE_WR_SIGNALED, .num_sge = 1,
	};

	wr.sg_list[0].addr = (uintptr_t)buf;
	wr.sg_list[0].length = MSG_LEN;
	wr.sg_list[0].lkey = mr->lkey;
	return krc_qpush(vq, &wr, 1) == 1 ? 0 : -1;
}

/*
 * The server's half of the round trip: busy-poll both paths and send
 * every message back, until @stop exists. A verbs message arrives on
 * @qp's receives; a krcore one on @rx (bound to ECHO_PORT) and goes back
 * on a VQ connected to its sender's port.
 */
static int serve_echo(struct verbs *v, struct ibv_qp *qp, struct krc_vq *rx,
		      const struct krc_mr *mr, const char *stop)
{
	struct krcore_qconnect qc;
	struct krc_vq *tx = NULL;
	struct krcore_cqe cqe[8];
	unsigned long spins = 0;
	struct ibv_wc wc[8];
	struct krc_msg m;
	struct stat st;
	int n, i;

	for (;;) {
		n = ibv_poll_cq(v->cq, 8, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "read_bench: echo: %s\n",
					ibv_wc_status_str(wc[i].status));
				return 1;
			}
			if (wc[i].opcode != IBV_WC_RECV)
				continue;
			verbs_recv(v, qp, (int)wc[i].wr_id);
			if (verbs_send(v, qp))
				die("echo: ibv_post_send");
		}
		if (krc_qpop_msg(rx, &m) == 1) {
			if (!tx) {
				char a[KRC_GID_STRLEN];

				krc_gid_format(m.src_gid, a, sizeof(a));
				if (krc_vq_open(&tx) < 0 ||
				    krc_qconnect(tx, a, m.src_port, &qc) < 0) {
					fprintf(stderr, "read_bench: echo: %s\n",
						krc_errmsg());
					return 1;
				}
			}
			krc_qmsg_done(rx);
			if (rb_send(tx, mr, v->buf)) {
				fprintf(stderr, "read_bench: echo: %s\n",
					krc_errmsg());
				return 1;
			}
		}
		if (tx)
			krc_qpop(tx, cqe, 8);
		if (!(++spins & 0x3fff) && !stat(stop, &st))
			return 0;
	}
}

static int run_server(const char *dir, int gid_index, int maxp)
{
	struct qp_info me[MAXP_MAX], peer, kinfo = {};
	struct ibv_qp *qp[MAXP_MAX];
	char name[64], stop[512], echo[512];
	struct krc_vq *vq;
	struct krc_mr kmr;
	struct verbs v;
	struct stat st;
	size_t i;
	int k;

	verbs_open(&v, gid_index, 64);
	for (i = 0; i < BUF_SIZE; i++)
		((uint8_t *)v.buf)[i] = (uint8_t)(i * 7 + 3);
	for (k = 0; k < maxp; k++) {
		qp[k] = verbs_qp(&v);
		verbs_info(&v, qp[k], &me[k]);
		snprintf(name, sizeof(name), "server.verbs.%d", k);
		write_file(dir, name, &me[k], sizeof(me[k]));
	}
	/* The same buffer, registered with krcore too. */
	if (krc_vq_open(&vq) < 0 ||
	    krc_reg_mr(vq, v.buf, MR_SIZE, KRCORE_ACCESS_REMOTE_READ |
		       KRCORE_ACCESS_REMOTE_WRITE, &kmr) < 0) {
		fprintf(stderr, "read_bench: %s\n", krc_errmsg());
		return 1;
	}
	kinfo.addr = (uintptr_t)v.buf;
	kinfo.rkey = kmr.rkey;
	write_file(dir, "server.krcore", &kinfo, sizeof(kinfo));
	for (k = 0; k < maxp; k++) {
		snprintf(name, sizeof(name), "client.verbs.%d", k);
		read_file(dir, name, &peer, sizeof(peer));
		verbs_connect(&v, qp[k], &me[k], &peer);
	}
	/* The round trip: client process 0 sends on QP 0 and to ECHO_PORT. */
	for (k = 0; k < RECVS; k++)
		verbs_recv(&v, qp[0], k);
	if (krc_qbind(vq, ECHO_PORT) < 0) {
		fprintf(stderr, "read_bench: bind: %s\n", krc_errmsg());
		return 1;
	}
	write_file(dir, "server.ready", &maxp, sizeof(maxp));
	snprintf(stop, sizeof(stop), "%s/stop", dir);
	snprintf(echo, sizeof(echo), "%s/echo", dir);
	while (stat(stop, &st)) {
		if (!stat(echo, &st))
			return serve_echo(&v, qp[0], vq, &kmr, stop);
		usleep(200000);
	}
	return 0;
}

/* One process's two paths to the server. */
struct side {
	/*
	 * post @n requests of @len bytes (the last one signaled): how many
	 * went in, or -errno when none did
	 */
	int (*post)(struct side *s, int op, int n, uint32_t len, uint64_t id);
	/* completions seen; 0 when none */
	int (*poll)(struct side *s, int max);
	struct verbs *v;
	struct ibv_qp *qp;
	struct krc_vq *vq;
	struct krc_vq *mvq;	/* process 0: bound to REPLY_PORT, to ECHO_PORT */
	struct krc_mr kmr;
	void *kbuf;
	uint64_t raddr;
	uint32_t rkey;
};

static int verbs_post(struct side *s, int op, int n, uint32_t len, uint64_t id)
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
		wr[i].opcode = op == OP_READ ? IBV_WR_RDMA_READ :
					       IBV_WR_RDMA_WRITE;
		wr[i].send_flags = i == n - 1 ? IBV_SEND_SIGNALED : 0;
		wr[i].wr.rdma.remote_addr = s->raddr + ((id + i) % 1000) * 64;
		wr[i].wr.rdma.rkey = s->rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	i = ibv_post_send(s->qp, wr, &bad);
	return i ? -i : n;
}

static int verbs_poll(struct side *s, int max)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(s->v->cq, max < 16 ? max : 16, wc), i;

	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "read_bench: verbs request failed: %s\n",
				ibv_wc_status_str(wc[i].status));
			exit(1);
		}
	return n;
}

static int krc_post(struct side *s, int op, int n, uint32_t len, uint64_t id)
{
	struct krcore_wr wr[BATCH];
	int i;

	memset(wr, 0, sizeof(wr[0]) * (size_t)n);
	for (i = 0; i < n; i++) {
		wr[i].wr_id = id + i;
		wr[i].opcode = op == OP_READ ? KRCORE_WR_READ : KRCORE_WR_WRITE;
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
			fprintf(stderr, "read_bench: krcore request failed: %s\n",
				krc_wc_status_str(cqe[i].status));
			exit(1);
		}
	return n;
}

/*
 * The parent's commands to its processes, and their results, in memory
 * shared with them. The parent fills in a command, then writes a byte to
 * the pipe of each process; each answers with a byte on one shared pipe
 * when done (an idle one at once).
 */
struct crew {
	int cmd;
	int op;
	int method;
	int procs;
	int iters;		/* CMD_LAT: samples per process */
	double t_start;		/* CMD_TPUT: the window, on CLOCK_MONOTONIC */
	double t_end;
	double ops[MAXP_MAX];	/* CMD_TPUT: completed inside the window */
	int nlat[MAXP_MAX];
	double lat[];		/* CMD_LAT: iters samples per process */
};

static void spin_poll(struct side *s, int yield)
{
	while (!s->poll(s, 1))
		if (yield)
			sched_yield();
}

static void run_latency(struct side *s, int op, int iters, double *lat,
			int yield, uint64_t *id)
{
	int i;

	for (i = 0; i < iters; i++) {
		double t0 = now_us();
		int n;

		while ((n = s->post(s, op, 1, 8, *id)) == -EAGAIN)
			sched_yield();
		if (n != 1) {
			fprintf(stderr, "read_bench: post failed: %s\n",
				strerror(-n));
			exit(1);
		}
		(*id)++;
		spin_poll(s, yield);
		if (lat)
			lat[i] = now_us() - t0;
	}
}

/*
 * Batches of 8 64-byte requests, 32 in flight, inside the window. The
 * shared send queue of krcore's connection may take part of a batch
 * (KRCORE_R_QP_FULL: other processes fill it); the rest, its signaled
 * last request among them, goes in on the next turns of the loop.
 */
static double run_throughput(struct side *s, int op, double t_start,
			     double t_end, int yield, uint64_t *id)
{
	int inflight = 0, pending = 0, n;
	double done = 0, t;
	uint64_t base = 0;

	t = now_us();
	if (t_start - t > 1000)
		usleep((useconds_t)(t_start - t - 500));
	while (now_us() < t_start)
		;
	for (;;) {
		t = now_us();
		if (t >= t_end && !inflight)
			break;
		if (!pending && inflight + BATCH <= WINDOW && t < t_end) {
			base = *id;
			*id += BATCH;
			pending = BATCH;
			inflight += BATCH;
		}
		if (pending) {
			n = s->post(s, op, pending, 64, base + BATCH - pending);
			if (n < 0 && n != -EAGAIN) {
				fprintf(stderr, "read_bench: post failed: %s\n",
					strerror(-n));
				exit(1);
			}
			if (n > 0)
				pending -= n;
		}
		n = s->poll(s, 16);
		if (!n && yield)
			sched_yield();
		/* one completion per batch: the batch's last, signaled */
		inflight -= n * BATCH;
		if (now_us() <= t_end)
			done += n * BATCH;
	}
	return done;
}

static void rtt_failed(const char *why)
{
	fprintf(stderr, "read_bench: round trip: %s\n", why);
	exit(1);
}

/*
 * @iters round trips of a MSG_LEN message through the server's echo
 * (serve_echo), timed from the send to the reply's arrival.
 */
static void run_rtt(struct side *s, int method, int iters, double *lat)
{
	struct krcore_cqe cqe;
	struct ibv_wc wc[4];
	struct krc_msg m;
	int i, j, n, sent, got;
	double t0;

	for (i = 0; i < iters; i++) {
		t0 = now_us();
		if (method == M_VERBS ? verbs_send(s->v, s->qp) :
					rb_send(s->mvq, &s->kmr, s->kbuf)) {
			fprintf(stderr, "read_bench: send failed\n");
			exit(1);
		}
		for (sent = 0, got = 0; !sent || !got;) {
			if (method == M_KRCORE) {
				if (krc_qpop(s->mvq, &cqe, 1) == 1) {
					if (cqe.status)
						rtt_failed(krc_wc_status_str(cqe.status));
					sent = 1;
				}
				if (!got && krc_qpop_msg(s->mvq, &m) == 1) {
					lat[i] = now_us() - t0;
					krc_qmsg_done(s->mvq);
					got = 1;
				}
				continue;
			}
			n = ibv_poll_cq(s->v->cq, 4, wc);
			for (j = 0; j < n; j++) {
				if (wc[j].status != IBV_WC_SUCCESS)
					rtt_failed(ibv_wc_status_str(wc[j].status));
				if (wc[j].opcode != IBV_WC_RECV) {
					sent = 1;
					continue;
				}
				lat[i] = now_us() - t0;
				verbs_recv(s->v, s->qp, (int)wc[j].wr_id);
				got = 1;
			}
		}
	}
}

/* One client process: connect both paths, then serve commands. */
static int client_proc(const char *addr, const char *dir, int gid_index,
		       int k, struct crew *c, int cmd_fd, int done_fd)
{
	struct qp_info me, srv, kinfo;
	struct krcore_qconnect qc;
	struct side sd[NMETHODS] = {
		{ .post = verbs_post, .poll = verbs_poll },
		{ .post = krc_post, .poll = krc_poll },
	};
	char name[64], b;
	struct verbs v;
	uint64_t id = 0;
	int m, ready;

	verbs_open(&v, gid_index, 256);
	sd[M_VERBS].v = &v;
	sd[M_VERBS].qp = verbs_qp(&v);
	snprintf(name, sizeof(name), "server.verbs.%d", k);
	read_file(dir, name, &srv, sizeof(srv));
	read_file(dir, "server.krcore", &kinfo, sizeof(kinfo));
	verbs_info(&v, sd[M_VERBS].qp, &me);
	snprintf(name, sizeof(name), "client.verbs.%d", k);
	write_file(dir, name, &me, sizeof(me));
	verbs_connect(&v, sd[M_VERBS].qp, &me, &srv);
	read_file(dir, "server.ready", &ready, sizeof(ready));
	sd[M_VERBS].raddr = srv.addr;
	sd[M_VERBS].rkey = srv.rkey;

	if (krc_vq_open(&sd[M_KRCORE].vq) < 0 ||
	    krc_qconnect(sd[M_KRCORE].vq, addr, 0, &qc) < 0) {
		fprintf(stderr, "read_bench: %s\n", krc_errmsg());
		return 1;
	}
	sd[M_KRCORE].kbuf = mmap(NULL, MR_SIZE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				 -1, 0);
	if (sd[M_KRCORE].kbuf == MAP_FAILED ||
	    krc_reg_mr(sd[M_KRCORE].vq, sd[M_KRCORE].kbuf, MR_SIZE,
		       KRCORE_ACCESS_LOCAL_WRITE, &sd[M_KRCORE].kmr) < 0) {
		fprintf(stderr, "read_bench: %s\n", krc_errmsg());
		return 1;
	}
	sd[M_KRCORE].raddr = kinfo.addr;
	sd[M_KRCORE].rkey = kinfo.rkey;
	if (!k) {
		/* the round trip's: receives, a VQ for messages (same lkey) */
		for (m = 0; m < RECVS; m++)
			verbs_recv(&v, sd[M_VERBS].qp, m);
		if (krc_vq_open(&sd[M_KRCORE].mvq) < 0 ||
		    krc_qbind(sd[M_KRCORE].mvq, REPLY_PORT) < 0 ||
		    krc_qconnect(sd[M_KRCORE].mvq, addr, ECHO_PORT, &qc) < 0) {
			fprintf(stderr, "read_bench: %s\n", krc_errmsg());
			return 1;
		}
	}
	/* Warm both paths up before the first command. */
	for (m = 0; m < NMETHODS; m++) {
		run_latency(&sd[m], OP_READ, 20, NULL, 0, &id);
		run_latency(&sd[m], OP_WRITE, 20, NULL, 0, &id);
	}
	if (write(done_fd, "r", 1) != 1)
		return 1;

	while (read(cmd_fd, &b, 1) == 1) {
		int yield = c->procs > 1;
		struct side *s = &sd[c->method];

		if (c->cmd == CMD_EXIT)
			return 0;
		if (!k && c->cmd == CMD_RTT) {
			run_rtt(s, c->method, c->iters, c->lat);
			c->nlat[k] = c->iters;
		} else if (k < c->procs && c->cmd == CMD_LAT) {
			run_latency(s, c->op, c->iters,
				    c->lat + (size_t)k * c->iters, yield, &id);
			c->nlat[k] = c->iters;
		} else if (k < c->procs && c->cmd == CMD_TPUT) {
			c->ops[k] = run_throughput(s, c->op, c->t_start,
						   c->t_end, yield, &id);
		}
		if (write(done_fd, "d", 1) != 1)
			return 1;
	}
	return 1;
}

struct client {
	struct crew *c;
	size_t crew_len;
	int maxp;
	int cmd_fd[MAXP_MAX];
	int done_fd;
	pid_t pid[MAXP_MAX];
};

/*
 * Wait for one byte from each of the @cl->maxp processes; 0, or -1 when
 * one exited or none answered for @timeout_s seconds.
 */
static int crew_wait(struct client *cl, int timeout_s)
{
	struct pollfd p = { .fd = cl->done_fd, .events = POLLIN };
	int got = 0, idle = 0;
	char b[MAXP_MAX];
	ssize_t n;

	while (got < cl->maxp) {
		if (poll(&p, 1, 1000) == 0) {
			if (++idle > timeout_s || waitpid(-1, NULL, WNOHANG))
				return -1;
			continue;
		}
		n = read(cl->done_fd, b, (size_t)(cl->maxp - got));
		if (n <= 0)
			return -1;
		got += (int)n;
		idle = 0;
	}
	return 0;
}

static int crew_cmd(struct client *cl)
{
	int k;

	for (k = 0; k < cl->maxp; k++)
		if (write(cl->cmd_fd[k], "c", 1) != 1)
			return -1;
	return crew_wait(cl, 300);
}

static int crew_start(struct client *cl, const char *addr, const char *dir,
		      int gid_index, int iters)
{
	int done[2], cmd[2], k, rc;

	cl->crew_len = sizeof(*cl->c) +
		       (size_t)cl->maxp * (size_t)iters * sizeof(double);
	cl->c = mmap(NULL, cl->crew_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cl->c == MAP_FAILED || pipe(done))
		die("crew");
	cl->done_fd = done[0];
	for (k = 0; k < cl->maxp; k++) {
		if (pipe(cmd))
			die("pipe");
		fflush(NULL);
		cl->pid[k] = fork();
		if (cl->pid[k] < 0)
			die("fork");
		if (!cl->pid[k]) {
			close(cmd[1]);
			close(done[0]);
			rc = client_proc(addr, dir, gid_index, k, cl->c,
					 cmd[0], done[1]);
			_exit(rc);
		}
		close(cmd[0]);
		cl->cmd_fd[k] = cmd[1];
	}
	close(done[1]);
	/* every process connected and warmed up */
	return crew_wait(cl, 180);
}

static int crew_stop(struct client *cl)
{
	int k, status, bad = 0;

	cl->c->cmd = CMD_EXIT;
	for (k = 0; k < cl->maxp; k++) {
		if (write(cl->cmd_fd[k], "x", 1) != 1)
			bad = 1;
		close(cl->cmd_fd[k]);
	}
	for (k = 0; k < cl->maxp; k++)
		if (waitpid(cl->pid[k], &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	munmap(cl->c, cl->crew_len);
	return bad ? -1 : 0;
}

static void crew_kill(struct client *cl)
{
	int k;

	for (k = 0; k < cl->maxp; k++)
		if (cl->pid[k] > 0)
			kill(cl->pid[k], SIGKILL);
	while (wait(NULL) > 0)
		;
}

/* The results of one process count, one operation, both methods. */
struct point {
	double *lat[NMETHODS];
	int nlat[NMETHODS];
	double win[NMETHODS][ROUNDS];
	int nwin[NMETHODS];
};

/*
 * Samples of a one-at-a-time command (CMD_LAT, CMD_RTT) from @procs
 * processes: ROUNDS rounds with the methods' order alternating, @per
 * samples per process each; out[m] gets them all, sorted.
 */
static int collect_samples(struct client *cl, int cmd, int procs, int per,
			   double *out[NMETHODS], int nout[NMETHODS])
{
	struct crew *c = cl->c;
	int r, i, k, m;

	for (m = 0; m < NMETHODS; m++) {
		out[m] = calloc((size_t)per * ROUNDS * (size_t)procs,
				sizeof(double));
		if (!out[m])
			die("calloc");
		nout[m] = 0;
	}
	c->procs = procs;
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < NMETHODS; i++) {
			m = r % 2 ? NMETHODS - 1 - i : i;
			c->cmd = cmd;
			c->method = m;
			c->iters = per;
			if (crew_cmd(cl))
				return -1;
			for (k = 0; k < procs; k++) {
				memcpy(out[m] + nout[m],
				       c->lat + (size_t)k * per,
				       sizeof(double) * (size_t)per);
				nout[m] += per;
			}
		}
	for (m = 0; m < NMETHODS; m++)
		qsort(out[m], (size_t)nout[m], sizeof(double), cmp_d);
	return 0;
}

static int measure(struct client *cl, int op, int procs, int iters,
		   double secs, struct point *pt)
{
	struct crew *c = cl->c;
	int per = iters / procs / ROUNDS, r, i, k, m;
	double ops;

	if (per < 1)
		per = 1;
	c->op = op;
	/* synchronous: alternating rounds, per samples per process each */
	if (collect_samples(cl, CMD_LAT, procs, per, pt->lat, pt->nlat))
		return -1;
	/* batched: alternating windows that the processes share */
	for (m = 0; m < NMETHODS; m++)
		pt->nwin[m] = 0;
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < NMETHODS; i++) {
			m = r % 2 ? NMETHODS - 1 - i : i;
			c->cmd = CMD_TPUT;
			c->method = m;
			c->t_start = now_us() + 5000;
			c->t_end = c->t_start + secs / ROUNDS * 1e6;
			memset(c->ops, 0, sizeof(c->ops));
			if (crew_cmd(cl))
				return -1;
			for (ops = 0, k = 0; k < procs; k++)
				ops += c->ops[k];
			pt->win[m][pt->nwin[m]++] =
				ops / ((c->t_end - c->t_start) / 1e6);
		}
	return 0;
}

/* The two-sided round trip, one process: @iters per method. */
static int measure_rtt(struct client *cl, const char *dir, int iters,
		       double *rtt[NMETHODS], int nrtt[NMETHODS])
{
	int per = iters / ROUNDS;

	if (per < 1)
		per = 1;
	write_file(dir, "echo", "", 0);
	return collect_samples(cl, CMD_RTT, 1, per, rtt, nrtt);
}

static double mean(const double *v, int n)
{
	double s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : 0;
}

static void print_point(int op, int procs, const struct point *pt)
{
	const double *lv = pt->lat[M_VERBS], *lk = pt->lat[M_KRCORE];
	int nv = pt->nlat[M_VERBS], nk = pt->nlat[M_KRCORE];
	double tv = mean(pt->win[M_VERBS], pt->nwin[M_VERBS]);
	double tk = mean(pt->win[M_KRCORE], pt->nwin[M_KRCORE]);

	printf(" %-5s %5d %9.1f %9.1f %9.1f %9.1f %7.3f %11.0f %11.0f %7.3f\n",
	       op_upper[op], procs, pct(lv, nv, 0.5), pct(lv, nv, 0.99),
	       pct(lk, nk, 0.5), pct(lk, nk, 0.99),
	       pct(lk, nk, 0.5) / pct(lv, nv, 0.5), tv, tk, tk / tv);
}

static void sample_point(int op, int procs, const struct point *pt)
{
	char fig[32], x[16];
	int m, i;

	snprintf(x, sizeof(x), "%d", procs);
	for (m = 0; m < NMETHODS; m++) {
		snprintf(fig, sizeof(fig), "%s_lat", op_name[op]);
		for (i = 0; i < pt->nlat[m]; i++)
			bench_sample(fig, m_name[m], x, pt->lat[m][i]);
		snprintf(fig, sizeof(fig), "%s_tput", op_name[op]);
		for (i = 0; i < pt->nwin[m]; i++)
			bench_sample(fig, m_name[m], x, pt->win[m][i]);
	}
}

static int run_client(const char *addr, const char *dir, int gid_index,
		      int iters, double secs, int maxp)
{
	struct point pt[NOPS][8];
	struct client cl = { .maxp = maxp };
	double *rtt[NMETHODS];
	int nrtt[NMETHODS];
	char fig[32], title[160];
	int procs, np = 0, op, i, m;

	if (crew_start(&cl, addr, dir, gid_index, iters)) {
		fprintf(stderr, "read_bench: a process did not get ready\n");
		crew_kill(&cl);
		return 1;
	}
	for (procs = 1; procs <= maxp; procs *= 2, np++)
		for (op = 0; op < NOPS; op++)
			if (measure(&cl, op, procs, iters, secs,
				    &pt[op][np])) {
				fprintf(stderr, "read_bench: a process failed\n");
				crew_kill(&cl);
				return 1;
			}
	if (measure_rtt(&cl, dir, iters, rtt, nrtt)) {
		fprintf(stderr, "read_bench: the round trip failed\n");
		crew_kill(&cl);
		return 1;
	}
	if (crew_stop(&cl)) {
		fprintf(stderr, "read_bench: a process failed\n");
		return 1;
	}
	write_file(dir, "stop", "", 0);

	printf("data plane: each process a private verbs RC QP vs a VQ on the shared connection\n");
	printf("  synchronous 8 B requests: about %d samples per method and point,\n",
	       iters);
	printf("  batched 64 B requests: %d in flight per process, posted %d per call,\n",
	       WINDOW, BATCH);
	printf("  %.1f s per method and point in %d alternating windows\n",
	       secs, ROUNDS);
	printf(" %-5s %5s %9s %9s %9s %9s %7s %11s %11s %7s\n", "op", "procs",
	       "verbs", "p99", "krcore", "p99", "ratio", "verbs", "krcore",
	       "ratio");
	printf(" %-5s %5s %9s %9s %9s %9s %7s %11s %11s %7s\n", "", "",
	       "med us", "us", "med us", "us", "k/v", "ops/s", "ops/s", "k/v");
	for (op = 0; op < NOPS; op++)
		for (i = 0; i < np; i++)
			print_point(op, 1 << i, &pt[op][i]);
	printf("targets: latency ratio <= 1.15, throughput ratio >= 0.9 at every process count\n");
	printf("two-sided %d B round trip (SEND, the server sends it back), one process,\n",
	       MSG_LEN);
	printf("  %d each in alternating rounds:\n", nrtt[M_VERBS]);
	printf("  verbs   median %8.1f us  p99 %8.1f us\n",
	       pct(rtt[M_VERBS], nrtt[M_VERBS], 0.5),
	       pct(rtt[M_VERBS], nrtt[M_VERBS], 0.99));
	printf("  krcore  median %8.1f us  p99 %8.1f us\n",
	       pct(rtt[M_KRCORE], nrtt[M_KRCORE], 0.5),
	       pct(rtt[M_KRCORE], nrtt[M_KRCORE], 0.99));
	printf("  ratio krcore/verbs: median %.3f\n",
	       pct(rtt[M_KRCORE], nrtt[M_KRCORE], 0.5) /
	       pct(rtt[M_VERBS], nrtt[M_VERBS], 0.5));
	bench_figure("msg_rtt", "us", "procs",
		     "Two-sided 64 B round trip: krcore messages vs verbs SEND/RECV");
	for (m = 0; m < NMETHODS; m++)
		for (i = 0; i < nrtt[m]; i++)
			bench_sample("msg_rtt", m_name[m], "1", rtt[m][i]);
	bench_ratio("msg_rtt", "krcore_over_verbs", "krcore", "verbs", NULL);

	for (op = 0; op < NOPS; op++) {
		snprintf(fig, sizeof(fig), "%s_lat", op_name[op]);
		snprintf(title, sizeof(title),
			 "Synchronous 8 B %s latency: a VQ each vs a private verbs QP each",
			 op_upper[op]);
		bench_figure(fig, "us", "procs", title);
		snprintf(fig, sizeof(fig), "%s_tput", op_name[op]);
		snprintf(title, sizeof(title),
			 "Batched 64 B %s throughput of all processes, 32 in flight each",
			 op_upper[op]);
		bench_figure(fig, "per_s", "procs", title);
		for (i = 0; i < np; i++)
			sample_point(op, 1 << i, &pt[op][i]);
		snprintf(fig, sizeof(fig), "%s_lat", op_name[op]);
		bench_ratio(fig, "krcore_over_verbs", "krcore", "verbs",
			    "<= 1.15");
		snprintf(fig, sizeof(fig), "%s_tput", op_name[op]);
		bench_ratio(fig, "krcore_over_verbs", "krcore", "verbs",
			    ">= 0.9");
	}
	return 0;
}

static int maxp_arg(const char *s)
{
	int p = atoi(s);

	/* a power of two, 1 .. MAXP_MAX */
	if (p < 1 || p > MAXP_MAX || (p & (p - 1))) {
		fprintf(stderr, "read_bench: MAXP must be 1, 2, 4, 8 or 16\n");
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	srand48(getpid());
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "server"))
		return run_server(argv[2], atoi(argv[3]),
				  argc > 4 ? maxp_arg(argv[4]) : 1);
	if (argc >= 5 && argc <= 8 && !strcmp(argv[1], "client"))
		return run_client(argv[2], argv[3], atoi(argv[4]),
				  argc > 5 ? atoi(argv[5]) : 5000,
				  argc > 6 ? atof(argv[6]) : 10.0,
				  argc > 7 ? maxp_arg(argv[7]) : 1);
	fprintf(stderr, "usage: read_bench server DIR GID_INDEX [MAXP]\n"
		"       read_bench client SERVER_ADDR DIR GID_INDEX [ITERS [SECONDS [MAXP]]]\n");
	return 2;
}
