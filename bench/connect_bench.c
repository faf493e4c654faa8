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
 *       Then N connects of a warm verbs process (context already open).
 *       Prints medians and p99, and the ratio verbs/krcore.
 */
#include <errno.h>
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

/* A verbs connection: resolve, QP, connect; 0 when established. */
static int verbs_connect(const char *addr, const char *port, int teardown)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo hints = {}, *res;
	struct ibv_qp_init_attr attr = {};
	struct rdma_conn_param param = {};
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	hints.ai_port_space = RDMA_PS_TCP;
	if (!ch || rdma_getaddrinfo(addr, port, &hints, &res) ||
	    rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, res->ai_dst_addr, 2000) ||
	    cm_wait(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
	    rdma_resolve_route(id, 2000) ||
	    cm_wait(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		return -1;
	/* What the process needs of its own: PD, CQ, QP. */
	pd = ibv_alloc_pd(id->verbs);
	cq = pd ? ibv_create_cq(id->verbs, 32, NULL, NULL, 0) : NULL;
	if (!cq)
		return -1;
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.cap.max_send_wr = 16;
	attr.cap.max_recv_wr = 16;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 7;
	if (rdma_create_qp(id, pd, &attr) || rdma_connect(id, &param) ||
	    cm_wait(ch, RDMA_CM_EVENT_ESTABLISHED, NULL))
		return -1;
	rdma_freeaddrinfo(res);
	if (teardown) {
		rdma_disconnect(id);
		cm_wait(ch, RDMA_CM_EVENT_DISCONNECTED, NULL);
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
		ibv_destroy_cq(cq);
		ibv_dealloc_pd(pd);
		rdma_destroy_event_channel(ch);
	}
	return 0;
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
		int ret;

		ret = kind ? verbs_connect(addr, port, 0) :
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
		double t0 = now_us();

		if (verbs_connect(addr, port, 1))
			return 1;
		vw[nw++] = now_us() - t0;
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
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return run_server(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "client"))
		return run_client(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: connect_bench server PORT\n"
		"       connect_bench client ADDR PORT N\n");
	return 2;
}
