// SPDX-License-Identifier: BSD-2-Clause
/*
 * connect_bench - how long until a new process holds a reliable
 * connection to another node: krcore against user-space verbs, side by
 * side in one run on the same two nodes.
 *
 *   connect_bench server PORT       accept rdma_cm connections forever
 *   connect_bench client ADDR PORT N
 *       N times, alternating, each in a fresh process (fork, no library
 *       state inherited), from the process's start to a connection ready
 *       for its first request:
 *       - krcore: open /dev/krcore (a VQ), qconnect, map the ring; the
 *         node's pool already reaches ADDR (the first one, measured
 *         separately, pays a MetaServer lookup and a handshake);
 *       - verbs: what a process does alone: load the driver context,
 *         PD, CQ, RC QP, connect it with rdma_cm (address and route
 *         resolution, the CM exchange, the QP's three state changes).
 *       Then N connects of a warm verbs process (context already open;
 *       the teardown of each is not timed).
 *       Prints medians and p99, and the ratio verbs/krcore.
 *   connect_bench rate ADDR PORT K ROUNDS
 *       1, 2, 4 and 8 processes at once, each making K connections one
 *       after the other (krcore: VQ open + qconnect + close; a warm
 *       rdma_cm process: QP + connect + disconnect), ROUNDS rounds
 *       alternating the two: connect latency and connections per second.
 *       Then the same with 1, 2, 4 and 8 threads of one process.
 *       KRC_BENCH_RATE_SUFFIX is appended to the figures' names (another
 *       run's beside these: bench/cores.sh on nodes of 2 vCPUs).
 *   connect_bench mesh PORT P KIND ADDR...
 *       one node's part of a full mesh (bench/mesh.sh runs it on every
 *       node at once): P processes, each connecting to every ADDR
 *       (KIND krcore or rdma_cm); prints the microseconds from their
 *       start to the last connection ready.
 *   With KRC_BENCH_SAMPLES set, every sample is also appended to that
 *   file as krbench_report input (figures connect, connect_conc,
 *   connect_rate, connect_conc_thr, connect_rate_thr; in connect,
 *   krcore_pooled_kernel is the kernel's part of each krcore_pooled
 *   sample, the qconnect's elapsed_ns).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "libkrcore.h"
#include "bench.h"

static int run_server(const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo hints = {}, *res;
	struct ibv_qp_init_attr attr = {};
	struct rdma_conn_param param = {};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *listen;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;

	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	if (!ch || rdma_getaddrinfo(NULL, port, &hints, &res) ||
	    rdma_create_id(ch, &listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen, res->ai_src_addr) || rdma_listen(listen, 64)) {
		perror("connect_bench: listen");
		return 1;
	}
	printf("connect_bench: listening on port %s\n", port);
	fflush(stdout);
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = 16;
	attr.cap.max_recv_wr = 16;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	for (;;) {
		if (rdma_get_cm_event(ch, &ev))
			return 1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct rdma_cm_id *id = ev->id;

			if (!pd)
				pd = ibv_alloc_pd(id->verbs);
			if (!cq)
				cq = ibv_create_cq(id->verbs, 1024, NULL, NULL, 0);
			attr.send_cq = cq;
			attr.recv_cq = cq;
			if (!pd || !cq || rdma_create_qp(id, pd, &attr) ||
			    rdma_accept(id, &param))
				perror("connect_bench: accept");
		} else if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
			struct rdma_cm_id *id = ev->id;

			rdma_ack_cm_event(ev);
			rdma_destroy_qp(id);
			rdma_destroy_id(id);
			continue;
		}
		rdma_ack_cm_event(ev);
	}
}

/* A user-space verbs connection, its objects kept for the teardown. */
struct vconn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

/* Resolve, PD, CQ, QP, connect: 0 when established. */
static int verbs_connect(const char *addr, const char *port, struct vconn *c)
{
	struct rdma_addrinfo hints = {}, *res;
	struct ibv_qp_init_attr attr = {};
	struct rdma_conn_param param = {};

	memset(c, 0, sizeof(*c));
	c->ch = rdma_create_event_channel();
	hints.ai_port_space = RDMA_PS_TCP;
	if (!c->ch || rdma_getaddrinfo(addr, port, &hints, &res))
		return -1;
	if (rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->id, NULL, res->ai_dst_addr, 2000) ||
	    cm_wait(c->ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
	    rdma_resolve_route(c->id, 2000) ||
	    cm_wait(c->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL)) {
		rdma_freeaddrinfo(res);
		return -1;
	}
	rdma_freeaddrinfo(res);
	/* What the process needs of its own: PD, CQ, QP. */
	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cq = c->pd ? ibv_create_cq(c->id->verbs, 32, NULL, NULL, 0) : NULL;
	if (!c->cq)
		return -1;
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	attr.cap.max_send_wr = 16;
	attr.cap.max_recv_wr = 16;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 7;
	if (rdma_create_qp(c->id, c->pd, &attr) || rdma_connect(c->id, &param) ||
	    cm_wait(c->ch, RDMA_CM_EVENT_ESTABLISHED, NULL))
		return -1;
	return 0;
}

/* Disconnect and free what verbs_connect() made (not timed). */
static void verbs_teardown(struct vconn *c)
{
	rdma_disconnect(c->id);
	cm_wait(c->ch, RDMA_CM_EVENT_DISCONNECTED, NULL);
	rdma_destroy_qp(c->id);
	rdma_destroy_id(c->id);
	ibv_destroy_cq(c->cq);
	ibv_dealloc_pd(c->pd);
	rdma_destroy_event_channel(c->ch);
}

static int krc_connect_once(const char *addr, uint64_t *kernel_ns,
			    uint32_t *path)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq;

	if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, addr, 0, &qc) < 0) {
		fprintf(stderr, "connect_bench: %s\n", krc_errmsg());
		return -1;
	}
	*kernel_ns = qc.elapsed_ns;
	*path = qc.path;
	return 0;
}

struct sample {
	double us;
	double kernel_us;
	uint32_t path;
	int ok;
};

/*
 * Fork a fresh process that connects with @kind and reports how long it
 * took from its first instruction to a ready connection.
 */
static struct sample in_child(int kind, const char *addr, const char *port)
{
	struct sample *shm, s;
	pid_t pid;

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(shm, 0, sizeof(*shm));
	pid = fork();
	if (pid == 0) {
		double t0 = now_us();
		uint64_t kns = 0;
		struct vconn c;
		int ret;

		ret = kind ? verbs_connect(addr, port, &c) :
			     krc_connect_once(addr, &kns, &shm->path);
		shm->us = now_us() - t0;
		shm->kernel_us = kns / 1e3;
		shm->ok = ret == 0;
		_exit(ret ? 1 : 0);
	}
	waitpid(pid, NULL, 0);
	s = *shm;
	munmap(shm, sizeof(*shm));
	return s;
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_d);
	printf("  %-44s median %10.1f us  p99 %10.1f us  (%d)\n", what, v[n / 2],
	       v[(n - 1) * 99 / 100], n);
}

#define CONC_MAX	8

/*
 * One connection of @kind made and torn down (a krcore VQ opened,
 * connected and closed; a warm rdma_cm QP connected and disconnected):
 * true if it was made. *@us, if not NULL, is the time up to ready, the
 * teardown excluded. Any thread.
 */
static bool connect_timed(int kind, const char *addr, const char *port,
			  double *us)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq = NULL;
	double t = now_us();
	struct vconn vc;
	bool ok;

	if (kind) {
		ok = !verbs_connect(addr, port, &vc);
		if (us)
			*us = now_us() - t;
		if (ok)
			verbs_teardown(&vc);
		else
			fprintf(stderr, "connect_bench: rdma_cm connect failed\n");
		return ok;
	}
	ok = krc_vq_open(&vq) >= 0 && krc_qconnect(vq, addr, 0, &qc) >= 0;
	if (us)
		*us = now_us() - t;
	if (!ok)
		fprintf(stderr, "connect_bench: %s\n", krc_errmsg());
	if (vq)
		krc_vq_close(vq);
	return ok;
}

/*
 * Connection rate at a concurrency: @procs processes, forked and warmed
 * up (each has made one connection and closed it: a verbs process has
 * its device context), wait at a pipe; then each makes @k connections one
 * after the other (connect_timed()). The time of each connect up to ready
 * goes to @lat (procs * k values), the rate is every connection made
 * over the wall time from the start to the last process's end.
 */
static int conc_round(int kind, const char *addr, const char *port,
		      int procs, int k, double *lat, double *rate)
{
	size_t len = sizeof(double) * (size_t)procs * (size_t)k;
	struct bench_gate gate;
	int i, j, bad = 0;
	double *shm, t0;
	pid_t pid;

	if (bench_gate_open(&gate, len))
		return -1;
	shm = gate.shm;
	for (i = 0; i < procs; i++) {
		pid = bench_gate_fork(&gate);
		if (pid < 0) {
			bad = 1;
			break;
		}
		if (pid == 0) {
			bool ok;

			ok = connect_timed(kind, addr, port, NULL);
			if (bench_gate_child(&gate))
				_exit(1);
			for (j = 0; ok && j < k; j++)
				ok = connect_timed(kind, addr, port,
						   &shm[i * k + j]);
			_exit(ok ? 0 : 1);
		}
	}
	if (bench_gate_run(&gate, &t0))
		bad = 1;
	*rate = procs * k / ((now_us() - t0) / 1e6);
	memcpy(lat, shm, len);
	bench_gate_close(&gate);
	return bad ? -1 : 0;
}

/* One round at a concurrency: conc_round() or thr_round(). */
typedef int round_fn(int kind, const char *addr, const char *port, int n,
		     int k, double *lat, double *rate);

struct thr_arg {
	pthread_barrier_t *ready;
	const char *addr, *port;
	double *lat;		/* @k connect times of this thread */
	double start;		/* when it passed the barrier */
	double end;		/* when its last connection was made */
	int kind, k;
	bool ok;
};

/* One thread of thr_round(): warm up, wait for the others, connect @k times. */
static void *thr_main(void *p)
{
	struct thr_arg *a = p;
	int j;

	a->ok = connect_timed(a->kind, a->addr, a->port, NULL);
	pthread_barrier_wait(a->ready);
	a->start = now_us();
	for (j = 0; a->ok && j < a->k; j++)
		a->ok = connect_timed(a->kind, a->addr, a->port, &a->lat[j]);
	a->end = now_us();
	return NULL;
}

/*
 * conc_round() with @threads threads of this process instead of
 * processes: each warms up (one connection made and closed), all start
 * together, each makes @k connections; the rate is every connection made
 * over the time from the start to the last thread's end.
 */
static int thr_round(int kind, const char *addr, const char *port,
		     int threads, int k, double *lat, double *rate)
{
	struct thr_arg a[CONC_MAX];
	pthread_barrier_t ready;
	pthread_t tid[CONC_MAX];
	int i, made = 0, bad = 0;
	double t0, end = 0;

	if (threads > CONC_MAX ||
	    pthread_barrier_init(&ready, NULL, (unsigned int)threads + 1))
		return -1;
	for (i = 0; i < threads; i++) {
		a[i] = (struct thr_arg){ .ready = &ready, .addr = addr,
					 .port = port, .lat = lat + i * k,
					 .kind = kind, .k = k };
		if (pthread_create(&tid[i], NULL, thr_main, &a[i]))
			break;
		made++;
	}
	if (made < threads) {
		/* The barrier counts on all of them: it cannot be passed. */
		fprintf(stderr, "connect_bench: only %d of %d threads\n", made,
			threads);
		exit(1);
	}
	pthread_barrier_wait(&ready);
	/*
	 * From the first thread's start (with more than one CPU, threads
	 * may run, and even finish, before this one reads the clock).
	 */
	t0 = now_us();
	for (i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		if (!a[i].ok)
			bad = 1;
		if (a[i].end > end)
			end = a[i].end;
		if (a[i].start < t0)
			t0 = a[i].start;
	}
	pthread_barrier_destroy(&ready);
	*rate = threads * k / ((end - t0) / 1e6);
	return bad ? -1 : 0;
}

/*
 * Connect latency and connections per second with 1, 2, 4 and 8
 * processes at once: krcore pooled against a warm rdma_cm process,
 * alternating round by round, @rounds rounds of @k connects per process.
 */
static int run_concurrency(const char *addr, const char *port, int k,
			   int rounds, int threads)
{
	static const int procs[] = { 1, 2, 4, CONC_MAX };
	static const char *const name[] = { "krcore_pooled", "rdma_cm_warm" };
	double *lat = calloc((size_t)CONC_MAX * k, sizeof(double));
	double rate[2][4][16] = {}, med[2][4] = {};
	int p, r, kind, i, first;
	char x[8];

	/* Another run's figures (bench/cores.sh: _cpus2) beside these. */
	const char *sfx = getenv("KRC_BENCH_RATE_SUFFIX");
	const char *who = threads ? "threads" : "procs";
	char fc[48], fr[48];
	round_fn *one_round = threads ? thr_round : conc_round;

	if (!lat || rounds > 16)
		return 1;
	snprintf(fc, sizeof(fc), "connect_conc%s%s", threads ? "_thr" : "",
		 sfx ? sfx : "");
	snprintf(fr, sizeof(fr), "connect_rate%s%s", threads ? "_thr" : "",
		 sfx ? sfx : "");
	if (threads) {
		bench_figure(fc, "us", who,
			     "Connect latency (to ready, teardown excluded) vs concurrent threads of one process");
		bench_figure(fr, "per_s", who,
			     "Connections per second per node vs concurrent threads of one process");
	} else {
		bench_figure(fc, "us", who,
			     "Connect latency (to ready, teardown excluded) vs concurrent processes");
		bench_figure(fr, "per_s", who,
			     "Connections per second per node vs concurrent processes");
	}
	for (p = 0; p < 4; p++) {
		snprintf(x, sizeof(x), "%d", procs[p]);
		for (r = 0; r < rounds; r++) {
			for (i = 0; i < 2; i++) {
				kind = (r + i) % 2;
				if (one_round(kind, addr, port, procs[p], k,
					      lat, &rate[kind][p][r])) {
					fprintf(stderr, "connect_bench: %s, %d %s failed\n",
						name[kind], procs[p], who);
					return 1;
				}
				for (first = 0; first < procs[p] * k; first++)
					bench_sample(fc, name[kind], x, lat[first]);
				bench_sample(fr, name[kind], x, rate[kind][p][r]);
			}
		}
		for (kind = 0; kind < 2; kind++) {
			qsort(rate[kind][p], (size_t)rounds, sizeof(double), cmp_d);
			med[kind][p] = rate[kind][p][rounds / 2];
		}
	}
	bench_ratio(fc, "rdma_cm_over_krcore", "rdma_cm_warm",
		    "krcore_pooled", NULL);
	bench_ratio(fr, "krcore_over_rdma_cm", "krcore_pooled",
		    "rdma_cm_warm", ">= 50x");
	printf("connection rate, P %s at once, %d connects each, %d rounds, %ld CPUs (median):\n",
	       who, k, rounds, sysconf(_SC_NPROCESSORS_ONLN));
	printf("  %-7s %16s %16s %8s\n", who, "krcore conn/s",
	       "rdma_cm conn/s", "ratio");
	for (p = 0; p < 4; p++)
		printf("  %-7d %16.0f %16.1f %7.0fx\n", procs[p], med[0][p],
		       med[1][p], med[1][p] > 0 ? med[0][p] / med[1][p] : 0);
	free(lat);
	return 0;
}

static int run_client(const char *addr, const char *port, int n)
{
	double *kr = calloc((size_t)n, sizeof(double));
	double *kk = calloc((size_t)n, sizeof(double));
	double *vc = calloc((size_t)n, sizeof(double));
	double *vw = calloc((size_t)n, sizeof(double));
	struct sample first, s;
	char path[64];
	int i, nk = 0, nv = 0, nw = 0;

	/* The node's first contact with ADDR: lookup and handshake. */
	first = in_child(0, addr, port);
	if (!first.ok)
		return 1;
	for (i = 0; i < n; i++) {
		s = in_child(i % 2, addr, port);
		if (!s.ok)
			return 1;
		if (i % 2) {
			vc[nv++] = s.us;
		} else {
			kr[nk] = s.us;
			kk[nk++] = s.kernel_us;
		}
		s = in_child(!(i % 2), addr, port);
		if (!s.ok)
			return 1;
		if (!(i % 2)) {
			vc[nv++] = s.us;
		} else {
			kr[nk] = s.us;
			kk[nk++] = s.kernel_us;
		}
	}
	/* Verbs at its best: a process that has its context already. */
	for (i = 0; i < n; i++) {
		struct vconn c;
		double t0 = now_us();

		if (verbs_connect(addr, port, &c))
			return 1;
		vw[nw++] = now_us() - t0;
		verbs_teardown(&c);
	}
	printf("connection setup, %d new processes per path, alternating:\n", n);
	printf("  %-44s %10.1f us (path %s; %.1f us in the kernel)\n",
	       "krcore, first contact with the node", first.us,
	       krc_path_str(first.path, path, sizeof(path)), first.kernel_us);
	report("krcore, new process, pooled: open + qconnect", kr, nk);
	report("  of which in the kernel's qconnect", kk, nk);
	report("verbs, new process: context + QP + rdma_cm", vc, nv);
	report("verbs, warm process: QP + rdma_cm", vw, nw);
	printf("  ratio verbs/krcore (new process, median): %.0fx\n",
	       vc[nv / 2] / kr[nk / 2]);
	printf("  ratio verbs warm/krcore (median): %.0fx\n",
	       vw[nw / 2] / kr[nk / 2]);

	bench_figure("connect", "us", "case",
		     "Connect latency: a new process to a ready connection");
	bench_sample("connect", "krcore_first_contact", "new_process", first.us);
	for (i = 0; i < nk; i++)
		bench_sample("connect", "krcore_pooled", "new_process", kr[i]);
	for (i = 0; i < nk; i++)
		bench_sample("connect", "krcore_pooled_kernel", "new_process",
			     kk[i]);
	for (i = 0; i < nv; i++)
		bench_sample("connect", "verbs_new", "new_process", vc[i]);
	for (i = 0; i < nw; i++)
		bench_sample("connect", "rdma_cm_warm", "new_process", vw[i]);
	bench_ratio("connect", "verbs_new_over_pooled", "verbs_new",
		    "krcore_pooled", ">= 1000x");
	bench_ratio("connect", "rdma_cm_warm_over_pooled", "rdma_cm_warm",
		    "krcore_pooled", ">= 100x");
	return 0;
}

#define MESH_MAX	64

/*
 * One node's part of a full mesh: @procs processes, forked at once with
 * nothing opened, each connecting to every one of @addrs in turn (krcore:
 * a VQ per peer node, qconnect; rdma_cm: a QP per peer node, as a new
 * process that also loads its device context). Prints the time from the
 * start to the last connection ready on this node, in microseconds.
 */
static int run_mesh(const char *port, int procs, const char *kind,
		    char **addrs, int naddr)
{
	int rdma_cm = !strcmp(kind, "rdma_cm"), i, bad = 0;
	struct bench_gate gate;
	double *done, t0, end;
	pid_t pid;

	if ((!rdma_cm && strcmp(kind, "krcore")) || procs < 1 ||
	    procs > MESH_MAX) {
		fprintf(stderr, "connect_bench: mesh: KIND krcore or rdma_cm, 1-%d processes\n",
			MESH_MAX);
		return 2;
	}
	if (bench_gate_open(&gate, sizeof(double) * (size_t)procs))
		return 1;
	done = gate.shm;
	for (i = 0; i < procs; i++) {
		pid = bench_gate_fork(&gate);
		if (pid < 0) {
			bad = 1;
			break;
		}
		if (pid == 0) {
			struct krcore_qconnect qc;
			struct krc_vq *vq;
			struct vconn vc;
			bool ok = true;
			int j;

			if (bench_gate_child(&gate))
				_exit(1);
			for (j = 0; ok && j < naddr; j++) {
				if (rdma_cm)
					ok = !verbs_connect(addrs[j], port, &vc);
				else
					ok = krc_vq_open(&vq) >= 0 &&
					     krc_qconnect(vq, addrs[j], 0, &qc) >= 0;
				if (!ok)
					fprintf(stderr, "connect_bench: %s to %s: %s\n",
						kind, addrs[j], rdma_cm ?
						"rdma_cm connect failed" :
						krc_errmsg());
			}
			done[i] = now_us();
			_exit(ok ? 0 : 1);
		}
	}
	if (bench_gate_run(&gate, &t0))
		bad = 1;
	for (end = t0, i = 0; i < procs; i++)
		if (done[i] > end)
			end = done[i];
	bench_gate_close(&gate);
	if (bad) {
		fprintf(stderr, "connect_bench: a mesh process failed\n");
		return 1;
	}
	printf("%.1f\n", end - t0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return run_server(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "client"))
		return run_client(argv[2], argv[3], atoi(argv[4]));
	if (argc == 6 && !strcmp(argv[1], "rate"))
		return run_concurrency(argv[2], argv[3], atoi(argv[4]),
				       atoi(argv[5]), 0) ||
		       run_concurrency(argv[2], argv[3], atoi(argv[4]),
				       atoi(argv[5]), 1);
	if (argc >= 6 && !strcmp(argv[1], "mesh"))
		return run_mesh(argv[2], atoi(argv[3]), argv[4], argv + 5,
				argc - 5);
	fprintf(stderr, "usage: connect_bench server PORT\n"
		"       connect_bench client ADDR PORT N\n"
		"       connect_bench rate ADDR PORT K ROUNDS\n"
		"       connect_bench mesh PORT P krcore|rdma_cm ADDR...\n");
	return 2;
}
