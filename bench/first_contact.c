// SPDX-License-Identifier: BSD-2-Clause
/*
 * first_contact - how long a brand-new process takes from its open to its
 * first completed 8 B READ on a node this node never contacted, through
 * krcore's datagram path, krcore's RC first contact, librdmacm and
 * user-space verbs; the pieces of the RC first contact's protocol
 * minimum; the synchronous READ latency of a VQ on datagrams and on RC.
 * bench/first_contact.sh runs it: before every krcore sample it reloads
 * krcore.ko on the serving node, then on the measuring node, so that
 * neither knows the other (with the serving node's old state for the
 * measuring node's old incarnation, the datagram path gets no answer:
 * KRC_BENCH_FC_SERVER_RELOAD=0 shows it).
 *
 *   first_contact server DIR ADDR PORT GID_INDEX
 *       serve on node ADDR (this node): an 8 B value registered with
 *       verbs, an rdma_cm listener on PORT, a UD echo; published under
 *       DIR; until DIR/fc.stop exists.
 *   first_contact kserver DIR
 *       the same value registered with krcore, until DIR/fc.kstop exists
 *       (the server's krcore is reloaded too between samples).
 *   first_contact krcore LABEL ADDR DIR
 *       one sample, this process: open /dev/krcore, qconnect, register
 *       8 B, READ the server's value. LABEL dg... expects the datagram
 *       path, rc... a handshake.
 *   first_contact rdmacm ADDR PORT DIR
 *       one sample with librdmacm's own API: rdma_getaddrinfo,
 *       rdma_create_ep, rdma_connect, rdma_reg_msgs, rdma_post_read.
 *   first_contact verbs ADDR PORT DIR
 *       one sample as a verbs application does it: the device context
 *       (through rdma_cm), PD, CQ, QP, rdma_cm connect, MR, READ.
 *   first_contact parts ADDR DIR GID_INDEX N
 *       the pieces of an RC first contact, N times each: a MetaServer
 *       lookup (kernel time, no cache), a UD round trip and RC QP state
 *       changes (user-space verbs, stand-ins for the kernel's).
 *   first_contact latency ADDR DIR ITERS
 *       (krcore loaded with dg_policy=3, peer never contacted) one VQ on
 *       the datagram path, one on RC, ITERS synchronous 8 B READs each,
 *       interleaved.
 *   first_contact report FILE
 *       the table, from the lines the other commands printed.
 *
 * Every command but server and report prints "KIND value..." lines, in
 * microseconds.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "libkrcore.h"
#include "bench.h"

#define FC_MAGIC	0x6b72636f72652131ULL	/* the value READ: "krcore!1" */
#define FC_BUF		4096
#define FC_UD_MSG	64
#define FC_GRH		40
#define FC_UD_RECVS	16
#define FC_QKEY		0x4b524331
#define FC_TIMEOUT_US	10e6

/* What the server publishes: where its value is, and its UD echo. */
struct fc_mem {
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

struct fc_ud {
	uint32_t qpn;
	uint32_t pad;
	uint8_t gid[16];
};

static void die(const char *what)
{
	fprintf(stderr, "first_contact: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void die_krc(const char *what)
{
	fprintf(stderr, "first_contact: %s: %s\n", what, krc_errmsg());
	exit(1);
}

static void check_value(uint64_t v, const char *path)
{
	if (v == FC_MAGIC)
		return;
	fprintf(stderr, "first_contact: %s READ returned %#llx, expected %#llx\n",
		path, (unsigned long long)v, (unsigned long long)FC_MAGIC);
	exit(1);
}

/* ---- the server (node0) ---- */

struct ud_echo {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* FC_UD_RECVS receive slots, then a send slot */
	struct ibv_ah *ah;	/* of the last sender */
	uint32_t ah_qpn;
	uint8_t ah_gid[16];
};

static void ud_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *buf,
			 int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + (size_t)slot * (FC_GRH + FC_UD_MSG),
		.length = FC_GRH + FC_UD_MSG,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv");
}

/* A UD QP, RESET to RTS; receives posted. */
static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = FC_UD_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		die("ibv_create_qp (UD)");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = FC_QKEY;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("UD INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("UD RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD RTS");
	return qp;
}

static void ud_send(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t qpn,
		    struct ibv_mr *mr, void *data)
{
	struct ibv_sge sge = { .addr = (uintptr_t)data, .length = 8,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = {}, *bad;

	wr.wr_id = UINT64_MAX;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = FC_QKEY;
	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send (UD)");
}

static void ud_echo_open(struct ud_echo *u, struct ibv_context *ctx,
			 int gid_index, const char *dir)
{
	size_t len = (FC_UD_RECVS + 1) * (FC_GRH + FC_UD_MSG);
	union ibv_gid gid;
	struct fc_ud pub = {};
	int i;

	u->ctx = ctx;
	u->pd = ibv_alloc_pd(ctx);
	u->ch = ibv_create_comp_channel(ctx);
	u->cq = u->ch ? ibv_create_cq(ctx, 64, NULL, u->ch, 0) : NULL;
	u->buf = calloc(1, len);
	if (!u->pd || !u->cq || !u->buf)
		die("UD echo resources");
	u->mr = ibv_reg_mr(u->pd, u->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr)
		die("ibv_reg_mr (UD)");
	u->qp = ud_qp(u->pd, u->cq);
	for (i = 0; i < FC_UD_RECVS; i++)
		ud_post_recv(u->qp, u->mr, u->buf, i);
	if (ibv_req_notify_cq(u->cq, 0) || ibv_query_gid(ctx, 1, gid_index, &gid))
		die("UD echo setup");
	pub.qpn = u->qp->qp_num;
	memcpy(pub.gid, gid.raw, 16);
	if (bench_write_file(dir, "fc.ud", &pub, sizeof(pub)))
		die("write fc.ud");
}

/* Take the completion channel's event and arm the CQ again. */
static void ud_echo_event(struct ud_echo *u)
{
	struct ibv_cq *cq;
	void *cqctx;

	if (ibv_get_cq_event(u->ch, &cq, &cqctx))
		die("ibv_get_cq_event");
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(u->cq, 0))
		die("ibv_req_notify_cq");
}

/* Answer every datagram received with its first 8 bytes; how many. */
static int ud_echo_drain(struct ud_echo *u)
{
	struct ibv_wc wc;
	int n = 0;

	while (ibv_poll_cq(u->cq, 1, &wc) == 1) {
		uint8_t *slot = u->buf + wc.wr_id * (FC_GRH + FC_UD_MSG);
		uint8_t *out = u->buf + FC_UD_RECVS * (FC_GRH + FC_UD_MSG);

		if (wc.wr_id == UINT64_MAX)
			continue;	/* a reply sent */
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "first_contact: UD receive: %s\n",
				ibv_wc_status_str(wc.status));
			exit(1);
		}
		/* The sender's GID is the GRH's source (bytes 8..23). */
		if (!u->ah || u->ah_qpn != wc.src_qp ||
		    memcmp(u->ah_gid, slot + 8, 16)) {
			if (u->ah)
				ibv_destroy_ah(u->ah);
			u->ah = ibv_create_ah_from_wc(u->pd, &wc,
						      (struct ibv_grh *)slot, 1);
			if (!u->ah)
				die("ibv_create_ah_from_wc");
			u->ah_qpn = wc.src_qp;
			memcpy(u->ah_gid, slot + 8, 16);
		}
		memcpy(out, slot + FC_GRH, 8);
		ud_send(u->qp, u->ah, wc.src_qp, u->mr, out);
		ud_post_recv(u->qp, u->mr, u->buf, (int)wc.wr_id);
		n++;
	}
	return n;
}

static void cm_serve(struct rdma_event_channel *ch, struct ibv_pd *pd,
		     struct ibv_cq *cq)
{
	struct ibv_qp_init_attr attr = {};
	struct rdma_conn_param param = {};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	id = ev->id;
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		attr.qp_type = IBV_QPT_RC;
		attr.send_cq = cq;
		attr.recv_cq = cq;
		attr.cap.max_send_wr = 4;
		attr.cap.max_recv_wr = 4;
		attr.cap.max_send_sge = 1;
		attr.cap.max_recv_sge = 1;
		param.responder_resources = 4;
		param.initiator_depth = 4;
		if (rdma_create_qp(id, pd, &attr) || rdma_accept(id, &param))
			perror("first_contact: accept");
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		rdma_ack_cm_event(ev);
		rdma_disconnect(id);
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
		return;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
}

static int run_server(const char *dir, const char *addr, const char *port,
		      int gid_index)
{
	struct rdma_addrinfo hints = {}, *res;
	struct rdma_event_channel *ch;
	struct fc_mem vpub = {};
	struct rdma_cm_id *listen;
	struct pollfd pfd[2];
	struct ud_echo u = {};
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	double spin_until = 0;
	char stop[512];
	struct stat st;
	uint64_t *buf;

	if (posix_memalign((void **)&buf, FC_BUF, FC_BUF))
		die("posix_memalign");
	memset(buf, 0, FC_BUF);
	buf[0] = FC_MAGIC;
	/* Registered on the device rdma_cm connections arrive on. */
	ch = rdma_create_event_channel();
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	if (!ch || rdma_getaddrinfo(addr, port, &hints, &res) ||
	    rdma_create_id(ch, &listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen, res->ai_src_addr) || rdma_listen(listen, 64) ||
	    !listen->verbs)
		die("rdma_cm listen");
	rdma_freeaddrinfo(res);
	pd = ibv_alloc_pd(listen->verbs);
	cq = pd ? ibv_create_cq(listen->verbs, 256, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, buf, FC_BUF, IBV_ACCESS_REMOTE_READ) : NULL;
	if (!mr)
		die("verbs registration");
	vpub.addr = (uintptr_t)buf;
	vpub.rkey = mr->rkey;
	ud_echo_open(&u, listen->verbs, gid_index, dir);
	if (bench_write_file(dir, "fc.cm", &vpub, sizeof(vpub)))
		die("write fc.cm");
	printf("first_contact: serving on %s port %s\n", addr, port);
	fflush(stdout);
	snprintf(stop, sizeof(stop), "%s/fc.stop", dir);
	pfd[0].fd = ch->fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = u.ch->fd;
	pfd[1].events = POLLIN;
	/*
	 * Sleep in poll(), but busy-poll the UD CQ for 2 s after each
	 * datagram: the round trips measured are the network's and the
	 * device's, not this process's wake-ups.
	 */
	while (stat(stop, &st)) {
		int spin = now_us() < spin_until;

		if (poll(pfd, 2, spin ? 0 : 200) < 0 && errno != EINTR)
			die("poll");
		if (pfd[0].revents & POLLIN)
			cm_serve(ch, pd, cq);
		if (pfd[1].revents & POLLIN)
			ud_echo_event(&u);
		if (ud_echo_drain(&u))
			spin_until = now_us() + 2e6;
	}
	return 0;
}

/* The value, registered with krcore, until DIR/fc.kstop exists. */
static int run_kserver(const char *dir)
{
	struct fc_mem pub = {};
	struct krc_vq *vq;
	struct krc_mr kmr;
	char stop[512];
	struct stat st;
	uint64_t *buf;

	if (posix_memalign((void **)&buf, FC_BUF, FC_BUF))
		die("posix_memalign");
	memset(buf, 0, FC_BUF);
	buf[0] = FC_MAGIC;
	if (krc_vq_open(&vq) < 0 ||
	    krc_reg_mr(vq, buf, FC_BUF, KRCORE_ACCESS_REMOTE_READ, &kmr) < 0)
		die_krc("krcore registration");
	pub.addr = (uintptr_t)buf;
	pub.rkey = kmr.rkey;
	if (bench_write_file(dir, "fc.krcore", &pub, sizeof(pub)))
		die("write fc.krcore");
	snprintf(stop, sizeof(stop), "%s/fc.kstop", dir);
	while (stat(stop, &st))
		usleep(100000);
	krc_vq_close(vq);
	return 0;
}

/* ---- krcore ---- */

/* One signaled 8 B READ on @vq, busy-polled; its time in us. */
static double krc_read8(struct krc_vq *vq, uint64_t *local, uint32_t lkey,
			const struct fc_mem *srv, const char *path)
{
	struct krcore_wr wr = {};
	struct krcore_cqe cqe;
	double t0 = now_us();
	int n;

	*local = 0;
	wr.wr_id = 1;
	wr.opcode = KRCORE_WR_READ;
	wr.flags = KRCORE_WR_SIGNALED;
	wr.num_sge = 1;
	wr.sg_list[0].addr = (uintptr_t)local;
	wr.sg_list[0].length = 8;
	wr.sg_list[0].lkey = lkey;
	wr.remote_addr = srv->addr;
	wr.rkey = srv->rkey;
	if (krc_qpush(vq, &wr, 1) != 1)
		die_krc("qpush");
	while (!(n = krc_qpop(vq, &cqe, 1)))
		if (now_us() - t0 > FC_TIMEOUT_US) {
			fprintf(stderr, "first_contact: %s READ: no completion\n",
				path);
			exit(1);
		}
	if (n < 0 || cqe.status) {
		fprintf(stderr, "first_contact: %s READ failed: %s\n", path,
			n < 0 ? krc_errmsg() : krc_wc_status_str(cqe.status));
		exit(1);
	}
	t0 = now_us() - t0;
	check_value(*local, path);
	return t0;
}

/* A counter of krcore.ko, or -1. */
static double krc_counter(const char *name)
{
	char path[128];
	double v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/misc/krcore/counters/%s",
		 name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lf", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The counters fc_* of an RC first contact's qconnect, in ns, and their count. */
static const char * const fc_part[] = {
	"fc_lookup_ns", "fc_spare_ns", "fc_send_ns", "fc_rtt_ns", "fc_qp_ns",
	"fc_total_ns", "fc_connects",
};

#define FC_PARTS	7

/* The counters fc_* now; -1 if krcore has none. */
static int fc_snapshot(double *v)
{
	int i;

	for (i = 0; i < FC_PARTS; i++) {
		v[i] = krc_counter(fc_part[i]);
		if (v[i] < 0)
			return -1;
	}
	return 0;
}

/*
 * Where the kernel spent the RC first contact this process made (counters
 * fc_*, summed over the qconnects that made a handshake: what they grew
 * by since @before, one handshake unless another process made one too):
 * "LABEL_parts lookup spare send rtt qp other", in us.
 */
static int print_rc_parts(const char *label, const double *before)
{
	double v[FC_PARTS], n, sum = 0;
	int i;

	if (fc_snapshot(v))
		return -1;
	for (i = 0; i < FC_PARTS; i++)
		v[i] -= before[i];
	n = v[FC_PARTS - 1];
	if (n <= 0)
		return -1;
	printf("%s_parts", label);
	for (i = 0; i < 5; i++) {
		printf(" %.1f", v[i] / n / 1e3);
		sum += v[i];
	}
	printf(" %.1f\n", (v[5] - sum) / n / 1e3);
	return 0;
}

/*
 * The accepting side of the same (on the serving node, before its
 * reload): "acc_parts verify qp total", in us, over the REQs it answered
 * for a node whose card it had to READ; nothing if none.
 */
static int run_accepts(void)
{
	double n = krc_counter("fc_accepts");

	if (n <= 0)
		return 0;
	printf("acc_parts %.1f %.1f %.1f\n",
	       krc_counter("fc_verify_ns") / n / 1e3,
	       krc_counter("fc_accept_qp_ns") / n / 1e3,
	       krc_counter("fc_accept_ns") / n / 1e3);
	return 0;
}

static int run_krcore(const char *label, const char *addr, const char *dir)
{
	static uint64_t local __attribute__((aligned(64)));
	double t0, t1, t2, rd, before[FC_PARTS];
	struct krcore_qconnect qc;
	struct fc_mem srv;
	struct krc_vq *vq;
	struct krc_mr mr;
	char path[64];
	int dg = !strncmp(label, "dg", 2);

	if (bench_read_file(dir, "fc.krcore", &srv, sizeof(srv)))
		return 1;
	if (!dg && fc_snapshot(before)) {
		fprintf(stderr, "first_contact: no fc_* counters\n");
		return 1;
	}
	t0 = now_us();
	if (krc_vq_open(&vq) < 0)
		die_krc("open");
	t1 = now_us();
	if (krc_qconnect(vq, addr, 0, &qc) < 0)
		die_krc("qconnect");
	t2 = now_us();
	if (krc_reg_mr(vq, &local, sizeof(local), KRCORE_ACCESS_LOCAL_WRITE,
		       &mr) < 0)
		die_krc("reg_mr");
	rd = krc_read8(vq, &local, mr.lkey, &srv, label);
	krc_path_str(qc.path, path, sizeof(path));
	if (dg != !!(qc.path & KRCORE_PATH_DATAGRAM) ||
	    (!dg && !(qc.path & KRCORE_PATH_HANDSHAKE)) ||
	    (qc.path & KRCORE_PATH_POOLED)) {
		fprintf(stderr, "first_contact: %s: qconnect took path %s\n",
			label, path);
		return 1;
	}
	printf("%s %.1f %.1f %.1f %.1f %s\n", label, now_us() - t0, t2 - t1,
	       qc.elapsed_ns / 1e3, rd, path);
	if (!dg && print_rc_parts(label, before)) {
		fprintf(stderr, "first_contact: no fc_* counters after %s\n",
			label);
		return 1;
	}
	return 0;
}

/* ---- librdmacm and verbs ---- */

static int run_rdmacm(const char *addr, const char *port, const char *dir)
{
	static uint64_t local __attribute__((aligned(64)));
	struct rdma_addrinfo hints = {}, *res;
	struct ibv_qp_init_attr attr = {};
	struct rdma_conn_param param = {};
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	struct fc_mem srv;
	double t0, tc, tr;

	if (bench_read_file(dir, "fc.cm", &srv, sizeof(srv)))
		return 1;
	t0 = now_us();
	hints.ai_port_space = RDMA_PS_TCP;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 1;
	attr.cap.max_send_wr = 4;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 7;
	if (rdma_getaddrinfo(addr, port, &hints, &res) ||
	    rdma_create_ep(&id, res, NULL, &attr) || rdma_connect(id, &param))
		die("rdma_cm connect");
	tc = now_us();
	mr = rdma_reg_msgs(id, &local, sizeof(local));
	if (!mr)
		die("rdma_reg_msgs");
	tr = now_us();
	if (rdma_post_read(id, NULL, &local, sizeof(local), mr, 0, srv.addr,
			   srv.rkey) ||
	    rdma_get_send_comp(id, &wc) != 1)
		die("rdma_post_read");
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "first_contact: rdma_cm READ: %s\n",
			ibv_wc_status_str(wc.status));
		return 1;
	}
	printf("cm %.1f %.1f 0 %.1f\n", now_us() - t0, tc - t0, now_us() - tr);
	check_value(local, "rdma_cm");
	rdma_freeaddrinfo(res);
	return 0;
}

static int run_verbs(const char *addr, const char *port, const char *dir)
{
	static uint64_t local __attribute__((aligned(64)));
	struct rdma_addrinfo hints = {}, *res;
	struct ibv_qp_init_attr attr = {};
	struct rdma_conn_param param = {};
	struct rdma_event_channel *ch;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge;
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct fc_mem srv;
	double t0, ta, tb, tc, td, tr;
	int n;

	if (bench_read_file(dir, "fc.cm", &srv, sizeof(srv)))
		return 1;
	t0 = now_us();
	/* The device context comes with rdma_cm's first use. */
	ch = rdma_create_event_channel();
	hints.ai_port_space = RDMA_PS_TCP;
	if (!ch || rdma_getaddrinfo(addr, port, &hints, &res) ||
	    rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_cm");
	ta = now_us();
	if (rdma_resolve_addr(id, NULL, res->ai_dst_addr, 2000) ||
	    cm_wait(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
	    rdma_resolve_route(id, 2000) ||
	    cm_wait(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		die("rdma_cm resolve");
	tb = now_us();
	pd = ibv_alloc_pd(id->verbs);
	cq = pd ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) : NULL;
	if (!cq)
		die("PD, CQ");
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.cap.max_send_wr = 4;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 7;
	if (rdma_create_qp(id, pd, &attr))
		die("rdma_create_qp");
	tc = now_us();
	if (rdma_connect(id, &param) ||
	    cm_wait(ch, RDMA_CM_EVENT_ESTABLISHED, NULL))
		die("rdma_connect");
	td = now_us();
	mr = ibv_reg_mr(pd, &local, sizeof(local), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	tr = now_us();
	sge.addr = (uintptr_t)&local;
	sge.length = sizeof(local);
	sge.lkey = mr->lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = srv.addr;
	wr.wr.rdma.rkey = srv.rkey;
	if (ibv_post_send(id->qp, &wr, &bad))
		die("ibv_post_send");
	while (!(n = ibv_poll_cq(cq, 1, &wc)))
		if (now_us() - tr > FC_TIMEOUT_US)
			die("verbs READ: no completion");
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "first_contact: verbs READ: %s\n",
			n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		return 1;
	}
	/* The rdma_cm connect alone: resolution and the CM exchange. */
	printf("verbs %.1f %.1f 0 %.1f\n", now_us() - t0, (tb - ta) + (td - tc),
	       now_us() - tr);
	check_value(local, "verbs");
	rdma_freeaddrinfo(res);
	return 0;
}

/* ---- the pieces of an RC first contact ---- */

static void parts_lookup(const char *addr, int n)
{
	struct krcore_lookup lk;
	struct krc_vq *vq;
	int i;

	if (krc_vq_open(&vq) < 0)
		die_krc("open");
	for (i = 0; i < n + 2; i++) {
		if (krc_lookup(vq, addr, KRCORE_LOOKUP_F_NOCACHE, &lk) < 0)
			die_krc("lookup");
		if (!(lk.path & KRCORE_PATH_LOOKUP)) {
			fprintf(stderr, "first_contact: lookup -f took no READ\n");
			exit(1);
		}
		if (i >= 2)	/* the first two warm up */
			printf("lookup %.1f\n", lk.elapsed_ns / 1e3);
	}
	krc_vq_close(vq);
}

static void parts_ud(struct ibv_pd *pd, struct ibv_cq *cq, int gid_index,
		     const struct fc_ud *srv, int n)
{
	size_t len = FC_GRH + FC_UD_MSG + 8;
	struct ibv_ah_attr ah_attr = {};
	uint8_t *buf = calloc(1, len);
	struct ibv_qp *qp = ud_qp(pd, cq);
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int i, got, k;

	mr = buf ? ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr)
		die("UD buffer");
	ah_attr.is_global = 1;
	memcpy(ah_attr.grh.dgid.raw, srv->gid, 16);
	ah_attr.grh.sgid_index = (uint8_t)gid_index;
	ah_attr.grh.hop_limit = 64;
	ah_attr.port_num = 1;
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah)
		die("ibv_create_ah");
	for (i = 0; i < n + 5; i++) {
		double t0;

		ud_post_recv(qp, mr, buf, 0);
		memcpy(buf + FC_GRH + FC_UD_MSG, &i, sizeof(i));
		t0 = now_us();
		ud_send(qp, ah, srv->qpn, mr, buf + FC_GRH + FC_UD_MSG);
		for (got = 0; got < 2;) {
			k = ibv_poll_cq(cq, 1, &wc);
			if (k < 0 || (k && wc.status != IBV_WC_SUCCESS))
				die("UD round trip");
			got += k;
			if (now_us() - t0 > FC_TIMEOUT_US) {
				fprintf(stderr, "first_contact: UD echo silent\n");
				exit(1);
			}
		}
		if (memcmp(buf + FC_GRH, &i, sizeof(i))) {
			fprintf(stderr, "first_contact: UD echo: wrong reply\n");
			exit(1);
		}
		if (i >= 5)
			printf("ud %.1f\n", now_us() - t0);
	}
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	free(buf);
}

/* RC QPs through INIT, RTR and RTS as a handshake moves them. */
static void parts_qp(struct ibv_pd *pd, struct ibv_cq *cq, int gid_index,
		     const struct fc_ud *srv, int n)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 256, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int i;

	for (i = 0; i < n + 2; i++) {
		struct ibv_qp *qp = ibv_create_qp(pd, &init);
		struct ibv_qp_attr a = {};
		double t0, t1, t2, t3;

		if (!qp)
			die("ibv_create_qp (RC)");
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_WRITE;
		t0 = now_us();
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
			die("INIT");
		t1 = now_us();
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = srv->qpn + 1 + (uint32_t)i;
		a.rq_psn = 1;
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 12;
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, srv->gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
			die("RTR");
		t2 = now_us();
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = 1;
		a.max_rd_atomic = 16;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
			die("RTS");
		t3 = now_us();
		ibv_destroy_qp(qp);
		if (i < 2)
			continue;
		printf("init %.1f\n", t1 - t0);
		printf("rtr %.1f\n", t2 - t1);
		printf("rts %.1f\n", t3 - t2);
	}
}

static int run_parts(const char *addr, const char *dir, int gid_index, int n)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct fc_ud srv;
	int nd;

	if (bench_read_file(dir, "fc.ud", &srv, sizeof(srv)))
		return 1;
	parts_lookup(addr, n);
	list = ibv_get_device_list(&nd);
	if (!list || !nd)
		die("no RDMA device");
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	if (!cq)
		die("verbs resources");
	parts_ud(pd, cq, gid_index, &srv, n);
	parts_qp(pd, cq, gid_index, &srv, n);
	return 0;
}

/* ---- READ latency: a VQ on datagrams beside a VQ on RC ---- */

static void set_dg_policy(const char *v)
{
	FILE *f = fopen("/sys/module/krcore/parameters/dg_policy", "w");

	if (!f || fputs(v, f) < 0 || fclose(f))
		die("dg_policy");
}

static int run_latency(const char *addr, const char *dir, int iters)
{
	static uint64_t local __attribute__((aligned(64)));
	struct krcore_qconnect qd, qr;
	struct krc_vq *vd, *vr;
	struct fc_mem srv;
	struct krc_mr mr;
	char pd[64], pr[64];
	double *ld, *lr;
	FILE *f;
	long sw = -1;
	int i;

	if (bench_read_file(dir, "fc.krcore", &srv, sizeof(srv)))
		return 1;
	ld = calloc((size_t)iters, sizeof(double));
	lr = calloc((size_t)iters, sizeof(double));
	if (!ld || !lr)
		die("calloc");
	/* dg_policy=3: the first VQ takes datagrams and keeps them... */
	if (krc_vq_open(&vd) < 0 || krc_qconnect(vd, addr, 0, &qd) < 0)
		die_krc("datagram VQ");
	/* ... the second makes a handshake while dg_policy=0. */
	set_dg_policy("0");
	if (krc_vq_open(&vr) < 0 || krc_qconnect(vr, addr, 0, &qr) < 0)
		die_krc("RC VQ");
	set_dg_policy("3");
	krc_path_str(qd.path, pd, sizeof(pd));
	krc_path_str(qr.path, pr, sizeof(pr));
	if (!(qd.path & KRCORE_PATH_DATAGRAM) ||
	    (qr.path & KRCORE_PATH_DATAGRAM)) {
		fprintf(stderr, "first_contact: latency: paths %s and %s\n", pd, pr);
		return 1;
	}
	if (krc_reg_mr(vd, &local, sizeof(local), KRCORE_ACCESS_LOCAL_WRITE,
		       &mr) < 0)
		die_krc("reg_mr");
	for (i = 0; i < 50; i++) {
		krc_read8(vd, &local, mr.lkey, &srv, "datagram");
		krc_read8(vr, &local, mr.lkey, &srv, "RC");
	}
	for (i = 0; i < iters; i++) {
		if (i % 2) {
			ld[i] = krc_read8(vd, &local, mr.lkey, &srv, "datagram");
			lr[i] = krc_read8(vr, &local, mr.lkey, &srv, "RC");
		} else {
			lr[i] = krc_read8(vr, &local, mr.lkey, &srv, "RC");
			ld[i] = krc_read8(vd, &local, mr.lkey, &srv, "datagram");
		}
	}
	/* The datagram VQ must not have moved to RC meanwhile. */
	f = fopen("/sys/class/misc/krcore/counters/dg_switches", "r");
	if (!f || fscanf(f, "%ld", &sw) != 1 || sw) {
		fprintf(stderr, "first_contact: latency: dg_switches %ld\n", sw);
		return 1;
	}
	fclose(f);
	for (i = 0; i < iters; i++)
		printf("lat_dg %.1f\nlat_rc %.1f\n", ld[i], lr[i]);
	return 0;
}

/* ---- the report ---- */

#define FC_SERIES	24
#define FC_VALS		6

struct series {
	char kind[32];
	int n, cap;
	double *v[FC_VALS];
};

static struct series ser[FC_SERIES];

static struct series *series_of(const char *kind)
{
	int i;

	for (i = 0; i < FC_SERIES && ser[i].kind[0]; i++)
		if (!strcmp(ser[i].kind, kind))
			return &ser[i];
	return i < FC_SERIES ? &ser[i] : NULL;
}

static void add(const char *kind, const double *v, int nv)
{
	struct series *s = series_of(kind);
	int k;

	if (!s)
		return;
	if (!s->kind[0])
		snprintf(s->kind, sizeof(s->kind), "%s", kind);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		for (k = 0; k < FC_VALS; k++) {
			s->v[k] = realloc(s->v[k], (size_t)s->cap * sizeof(double));
			if (!s->v[k])
				die("realloc");
		}
	}
	for (k = 0; k < FC_VALS; k++)
		s->v[k][s->n] = k < nv ? v[k] : 0;
	s->n++;
}

/* Median (p = 0.5) or another quantile of value @k of @kind; 0 if none. */
static double q(const char *kind, int k, double p)
{
	struct series *s = series_of(kind);

	if (!s || !s->kind[0] || !s->n)
		return 0;
	qsort(s->v[k], (size_t)s->n, sizeof(double), cmp_d);
	return pct(s->v[k], s->n, p);
}

static int count(const char *kind)
{
	struct series *s = series_of(kind);

	return s && s->kind[0] ? s->n : 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void row(const char *name, const char *kind)
{
	if (!count(kind))
		return;
	printf(" %-38s %8d %11.1f %11.1f %11.1f %11.1f %11.1f\n", name,
	       count(kind), q(kind, 0, 0.5), q(kind, 0, 0.99), q(kind, 1, 0.5),
	       q(kind, 2, 0.5), q(kind, 3, 0.5));
}

static void piece(const char *name, const char *kind)
{
	printf(" %-38s %8d %11.1f %11.1f\n", name, count(kind), q(kind, 0, 0.5),
	       q(kind, 0, 0.99));
}

static void kpiece(const char *name, const char *kind, int k)
{
	if (!count(kind))
		return;
	printf(" %-38s %8d %11.1f %11.1f\n", name, count(kind), q(kind, k, 0.5),
	       q(kind, k, 0.99));
}

/*
 * The kernel's parts of the RC first contacts of path @label (series
 * LABEL_parts), with the accepting peer's (series @peer) if given.
 */
static void rc_parts_table(const char *label, const char *peer)
{
	char parts[32];

	snprintf(parts, sizeof(parts), "%s_parts", label);
	printf(" %-38s %8s %11s %11s\n", "part", "#samples", "median", "p99");
	kpiece("MetaServer lookup (READ)", parts, 0);
	kpiece("a place and a spare QP", parts, 1);
	kpiece("AH + first REQ posted", parts, 2);
	kpiece("REQ posted to answer woken", parts, 3);
	if (peer) {
		kpiece(" peer: card check (MetaServer READ)", peer, 0);
		kpiece(" peer: its RTR + RTS", peer, 1);
		kpiece(" peer: REQ in to REP posted", peer, 2);
	}
	kpiece("our RTR + RTS", parts, 4);
	kpiece("other (pool pick, locks, ioctl)", parts, 5);
	kpiece("kernel qconnect (elapsed_ns)", label, 2);
}

/* " NAME   R.Rx TARGET", the ratio with @prec decimals. */
static void ratio_line(const char *name, double r, int prec,
		       const char *target)
{
	printf(" %-51s %7.*fx%s\n", name, prec, r, target);
}

/* A line of dashes, as wide as the table. */
static void rule(void)
{
	int i;

	for (i = 0; i < 100; i++)
		putchar('-');
	putchar('\n');
}

static int run_report(const char *file)
{
	double v[FC_VALS], dg, rc, cm, vb, min, lk, ud, rtr, rts, kmin = 0;
	const char *dgk;
	char buf[256], kind[32];
	FILE *f = fopen(file, "r");
	int nv;

	if (!f)
		die(file);
	while (fgets(buf, sizeof(buf), f)) {
		nv = sscanf(buf, "%31s %lf %lf %lf %lf %lf %lf", kind, &v[0],
			    &v[1], &v[2], &v[3], &v[4], &v[5]);
		if (nv >= 2)
			add(kind, v, nv - 1);
	}
	fclose(f);
	rule();
	printf(" first contact: a brand-new process, from its open to its first completed\n"
	       " 8 B READ, on a node never contacted (krcore reloaded on both nodes before\n"
	       " each krcore sample); paths alternate round by round; times in us,\n"
	       " connect/kernel/READ: medians. \"code warm\": after the reloads\n"
	       " a third node contacted the server and the measuring node contacted\n"
	       " the third, so krcore's code has run once on both (under TCG, code\n"
	       " run for the first time is translated first), and still neither\n"
	       " knows the other\n");
	rule();
	printf(" %-38s %8s %11s %11s %11s %11s %11s\n", "path", "#samples",
	       "median", "p99", "connect", "kernel", "READ");
	row("krcore datagram (dg_policy=3)", "dg3");
	row("krcore datagram, RC behind (policy 1)", "dg1");
	row("krcore RC first contact (dg_policy=0)", "rc");
	row("krcore datagram, code warm", "dg3w");
	row("krcore RC first contact, code warm", "rcw");
	row("rdma_cm (librdmacm create_ep+connect)", "cm");
	row("verbs (ctx, PD, CQ, QP, rdma_cm, MR)", "verbs");
	printf(" connect: the qconnect call / rdma_create_ep + rdma_connect /\n"
	       " address + route resolution + rdma_connect to ESTABLISHED;\n"
	       " kernel: krcore's own part of qconnect (elapsed_ns)\n");
	rule();
	printf(" RC first contact, its protocol minimum (same nodes):\n");
	printf(" %-38s %8s %11s %11s\n", "piece", "#samples", "median", "p99");
	piece("MetaServer lookup, 1 READ (kernel)", "lookup");
	piece("UD round trip (user verbs)", "ud");
	piece("QP INIT->RTR (user ibv_modify_qp)", "rtr");
	piece("QP RTR->RTS (user ibv_modify_qp)", "rts");
	lk = q("lookup", 0, 0.5);
	ud = q("ud", 0, 0.5);
	rtr = q("rtr", 0, 0.5);
	rts = q("rts", 0, 0.5);
	min = lk + ud + 2 * (rtr + rts);
	printf(" %-38s %8s %11.1f\n", "minimum: READ + UD RTT + 4 changes", "",
	       min);
	if (count("rc_parts")) {
		rule();
		printf(" RC first contact in the kernel (counters fc_*), medians:\n");
		rc_parts_table("rc", "acc_parts");
		/*
		 * What the exchange itself costs once the peer's own work is
		 * taken out: the network and both nodes' scheduling.
		 */
		kmin = q("rc_parts", 0, 0.5) + q("rc_parts", 3, 0.5) -
		       q("acc_parts", 2, 0.5) + q("acc_parts", 1, 0.5) +
		       q("rc_parts", 4, 0.5);
		printf(" %-38s %8s %11.1f\n",
		       "minimum, kernel parts: READ + RTT + 4", "", kmin);
		printf(" (the peer's card check is a second MetaServer READ inside the\n"
		       " round trip: a node answers a REQ only for the card the\n"
		       " MetaServer holds, docs/trust-model.md)\n");
	}
	if (count("rcw_parts")) {
		rule();
		printf(" the same with krcore's code warm (this node's parts only):\n");
		rc_parts_table("rcw", NULL);
	}
	rule();
	dgk = count("dg3") ? "dg3" : "dg1";
	dg = q(dgk, 0, 0.5);
	rc = q("rc", 0, 0.5);
	cm = q("cm", 0, 0.5);
	vb = q("verbs", 1, 0.5);
	printf(" ratios (medians), krcore just loaded:\n");
	printf(" rdma_cm connect, new process / datagram first READ: %7.1fx  (target >= 20x)\n",
	       ratio(q("cm", 1, 0.5), dg));
	printf(" rdma_cm connect alone / datagram first READ:        %7.1fx  (strictest: >= 20x)\n",
	       ratio(vb, dg));
	printf(" rdma_cm new process, first READ / datagram's:       %7.1fx\n",
	       ratio(cm, dg));
	printf(" verbs new process, first READ / datagram's:         %7.1fx\n",
	       ratio(q("verbs", 0, 0.5), dg));
	printf(" RC first contact / datagram first READ:             %7.1fx  (target >= 5x)\n",
	       ratio(rc, dg));
	printf(" RC first contact qconnect (kernel) / minimum:       %7.2fx  (target <= 2x)\n",
	       ratio(q("rc", 2, 0.5), min));
	printf(" RC first contact qconnect (call) / minimum:         %7.2fx\n",
	       ratio(q("rc", 1, 0.5), min));
	if (count("rc_parts") && count("acc_parts"))
		printf(" RC first contact qconnect (kernel) / kernel parts' minimum: %.2fx\n",
		       ratio(q("rc", 2, 0.5), kmin));
	if (count("dg3w") && count("rcw")) {
		dg = q("dg3w", 0, 0.5);
		printf(" with krcore's code warm:\n");
		ratio_line("rdma_cm connect, new process / datagram first READ:",
			   ratio(q("cm", 1, 0.5), dg), 1, "  (target >= 20x)");
		ratio_line("rdma_cm new process, first READ / datagram's:",
			   ratio(cm, dg), 1, "");
		ratio_line("RC first contact / datagram first READ:",
			   ratio(q("rcw", 0, 0.5), dg), 1, "  (target >= 5x)");
		ratio_line("RC first contact qconnect (kernel) / minimum:",
			   ratio(q("rcw", 2, 0.5), min), 2, "  (target <= 2x)");
	}
	printf(" (rdma_cm connect, new process: rdma_getaddrinfo + rdma_create_ep +\n"
	       " rdma_connect, device context included; alone: address and route\n"
	       " resolution + the CM exchange, from the verbs row)\n");
	if (count("lat_dg")) {
		rule();
		printf(" synchronous 8 B READ, one process, a VQ on datagrams and a VQ on RC,\n"
		       " interleaved READ by READ (us)\n");
		printf(" %-38s %8s %11s %11s\n", "path", "#READs", "median", "p99");
		piece("krcore datagram (dg_policy=3)", "lat_dg");
		piece("krcore RC", "lat_rc");
		printf(" ratio datagram/RC: median %.2f  p99 %.2f\n",
		       ratio(q("lat_dg", 0, 0.5), q("lat_rc", 0, 0.5)),
		       ratio(q("lat_dg", 0, 0.99), q("lat_rc", 0, 0.99)));
	}
	rule();
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "server"))
		return run_server(argv[2], argv[3], argv[4], atoi(argv[5]));
	if (argc == 3 && !strcmp(argv[1], "kserver"))
		return run_kserver(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "krcore"))
		return run_krcore(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "rdmacm"))
		return run_rdmacm(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "verbs"))
		return run_verbs(argv[2], argv[3], argv[4]);
	if (argc == 6 && !strcmp(argv[1], "parts"))
		return run_parts(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "latency"))
		return run_latency(argv[2], argv[3], atoi(argv[4]));
	if (argc == 2 && !strcmp(argv[1], "accepts"))
		return run_accepts();
	if (argc == 3 && !strcmp(argv[1], "report"))
		return run_report(argv[2]);
	fprintf(stderr, "usage: first_contact server DIR ADDR PORT GID_INDEX\n"
		"       first_contact kserver DIR\n"
		"       first_contact krcore LABEL ADDR DIR\n"
		"       first_contact rdmacm|verbs ADDR PORT DIR\n"
		"       first_contact parts ADDR DIR GID_INDEX N\n"
		"       first_contact latency ADDR DIR ITERS\n"
		"       first_contact report FILE\n");
	return 2;
}
