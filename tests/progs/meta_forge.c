// SPDX-License-Identifier: BSD-2-Clause
/*
 * meta_forge - attack the MetaServer's rdma_cm listener as an unprivileged
 * process without the cluster key would: librdmacm and libibverbs only,
 * no /dev/krcore (common/auth.h, kernel/control/meta_member.c).
 *
 *   meta_forge SERVER_IPV4 PORT MODE [SRC_PORT]
 *
 * SRC_PORT: bind that local port (rdma_bind_addr) before resolving; 0,
 * the default, lets rdma_cm pick one. MODE:
 *
 *   v1         connect with a version 1 hello (24 bytes, no nonce):
 *                meta_forge: v1: rejected | accepted | error WHAT
 *              "rejected" is a REJECTED event of reason 28 (consumer
 *              defined: the listener's rdma_reject); another reason
 *              (8: nothing listens on PORT) is "error rejected reason N"
 *   nomac      connect with a version 2 hello (random nonce); decode the
 *              accept's table descriptor; post 4 receives; SEND one
 *              META_REGISTER of a card of this very address (its GID the
 *              IPv4-mapped source address of the connection, ud_qpn a UD
 *              QP of this process, ud_qkey 0x11111111, node_id as
 *              card.h derives it) with a MAC of random bytes; wait up to
 *              8 s for a reply or the disconnection:
 *                meta_forge: nomac: desc=ok|bad reply=none|status N
 *                    disconnected=yes|no after_ms=MS|-1
 *              (MS from the SEND to the DISCONNECTED event)
 *   silent     connect (version 2), send nothing, wait up to 12 s:
 *                meta_forge: silent: disconnected=yes|no after_ms=MS|-1
 *              (MS from ESTABLISHED to DISCONNECTED)
 *   pending N  open N connections (version 2 hellos) one after the other,
 *              each from its own port (SRC_PORT + i when SRC_PORT is
 *              given), keep them open, count the outcomes:
 *                meta_forge: pending: established=E rejected=R
 *              (rejected: reason 28, as for v1; a connection that ends
 *              otherwise, or not within 10 s, is named on stderr and in
 *              neither count), then close them all.
 *
 * Exit 0 when it ran to its verdict line, 2 on a usage error, 1 when it
 * could not set up what the mode needs (v1 prints its error line then
 * too; nomac and silent also when their connection is not established).
 * Every wait has a timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "card.h"
#include "proto.h"

#define RESOLVE_MS	3000	/* address and route resolution, each */
#define CONNECT_MS	10000	/* from rdma_connect to its outcome */
#define NOMAC_MS	8000	/* from the SEND */
#define SILENT_MS	12000	/* from ESTABLISHED */
#define PENDING_MAX	256
#define NRX		4
#define FORGE_QKEY	0x11111111U
#define V1_HELLO_SIZE	24
/*
 * The REJECT reason of rdma_reject(..., IB_CM_REJ_CONSUMER_DEFINED), the
 * MetaServer's refusal; 8 (invalid service id) means no one listens.
 */
#define REJ_CONSUMER	28

static const char *prog = "meta_forge";

/* One rdma_cm connection and what it owns. */
struct conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp;	/* nomac: completions wake poll() */
	struct ibv_cq *cq;
	bool qp;			/* rdma_create_qp done */
	bool established;
	struct ibv_mr *mr;		/* nomac: NRX receives + 1 send */
	u8 *buf;
	struct ibv_cq *ud_cq;		/* nomac: the forged card's UD QP */
	struct ibv_qp *ud_qp;
	u8 gid[16];			/* the source address, IPv4-mapped */
	u8 priv[256];			/* the accept's private data */
	size_t priv_len;
	int status;			/* of the last event (REJECTED: reason) */
};

/* -errno of the call that just failed (never 0). */
static int err_no(void)
{
	return errno ? -errno : -EIO;
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return err_no();
	return 0;
}

static int random_bytes(void *p, size_t n)
{
	u8 *b = p;

	while (n) {
		ssize_t r = getrandom(b, n, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return err_no();
		}
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* A random non-zero u64. */
static int random_u64(u64 *v)
{
	int ret;

	do {
		ret = random_bytes(v, sizeof(*v));
	} while (!ret && !*v);
	return ret;
}

static const char *ev_name(enum rdma_cm_event_type e)
{
	switch (e) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		return "addr_error";
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return "route_error";
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return "connect_error";
	case RDMA_CM_EVENT_UNREACHABLE:
		return "unreachable";
	case RDMA_CM_EVENT_REJECTED:
		return "rejected";
	case RDMA_CM_EVENT_ESTABLISHED:
		return "established";
	case RDMA_CM_EVENT_DISCONNECTED:
		return "disconnected";
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return "device_removal";
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return "timewait_exit";
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return "addr_change";
	default:
		return rdma_event_str(e);
	}
}

/*
 * The next event of @c within @deadline (now_ms()): its type in *type
 * and, for ESTABLISHED, the private data kept in c->priv. 0, -ETIMEDOUT
 * or err_no(). The event is acknowledged before this returns.
 */
static int cm_next(struct conn *c, long long deadline,
		   enum rdma_cm_event_type *type)
{
	struct rdma_cm_event *ev;
	struct pollfd pfd;
	int n;

	*type = RDMA_CM_EVENT_TIMEWAIT_EXIT;	/* none yet */
	for (;;) {
		long long left = deadline - now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		pfd.fd = c->ch->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		n = poll(&pfd, 1, (int)(left > INT_MAX ? INT_MAX : left));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_no();
		}
		if (!n)
			continue;
		if (rdma_get_cm_event(c->ch, &ev)) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return err_no();
		}
		*type = ev->event;
		c->status = ev->status;
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
			size_t len = ev->param.conn.private_data_len;

			if (len > sizeof(c->priv))
				len = sizeof(c->priv);
			if (ev->param.conn.private_data)
				memcpy(c->priv, ev->param.conn.private_data, len);
			else
				len = 0;
			c->priv_len = len;
		}
		if (rdma_ack_cm_event(ev))
			return err_no();
		return 0;
	}
}

/* Wait for @want within @ms: 0, -EPROTO (another event, in *got) or err_no(). */
static int cm_expect(struct conn *c, enum rdma_cm_event_type want, int ms,
		     enum rdma_cm_event_type *got)
{
	int ret = cm_next(c, now_ms() + ms, got);

	if (ret)
		return ret;
	return *got == want ? 0 : -EPROTO;
}

static void conn_close(struct conn *c)
{
	/* after DISCONNECTED too: it answers the peer's request */
	if (c->established && rdma_disconnect(c->id))
		fprintf(stderr, "%s: rdma_disconnect: %s\n", prog, strerror(errno));
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->ud_qp && ibv_destroy_qp(c->ud_qp))
		fprintf(stderr, "%s: ibv_destroy_qp: %s\n", prog, strerror(errno));
	if (c->ud_cq && ibv_destroy_cq(c->ud_cq))
		fprintf(stderr, "%s: ibv_destroy_cq: %s\n", prog, strerror(errno));
	if (c->mr && ibv_dereg_mr(c->mr))
		fprintf(stderr, "%s: ibv_dereg_mr: %s\n", prog, strerror(errno));
	free(c->buf);
	if (c->cq && ibv_destroy_cq(c->cq))
		fprintf(stderr, "%s: ibv_destroy_cq: %s\n", prog, strerror(errno));
	if (c->comp && ibv_destroy_comp_channel(c->comp))
		fprintf(stderr, "%s: ibv_destroy_comp_channel: %s\n", prog,
			strerror(errno));
	if (c->pd && ibv_dealloc_pd(c->pd))
		fprintf(stderr, "%s: ibv_dealloc_pd: %s\n", prog, strerror(errno));
	if (c->id && rdma_destroy_id(c->id))
		fprintf(stderr, "%s: rdma_destroy_id: %s\n", prog, strerror(errno));
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	memset(c, 0, sizeof(*c));
}

/* Report a failed step: "meta_forge: MODE: WHAT: why". */
static void step_failed(const char *mode, const char *what, int err,
			enum rdma_cm_event_type got)
{
	if (err == -EPROTO)
		fprintf(stderr, "%s: %s: %s: got %s\n", prog, mode, what,
			ev_name(got));
	else
		fprintf(stderr, "%s: %s: %s: %s\n", prog, mode, what,
			strerror(-err));
}

/*
 * Channel, id, optional bind to @src_port, address and route to @dst,
 * PD and CQ (a completion channel with @comp), the RC QP. 0, or err_no()
 * after a message; @c is to be closed either way.
 */
static int conn_setup(struct conn *c, const char *mode,
		      const struct sockaddr_in *dst, unsigned int src_port,
		      bool comp)
{
	struct ibv_qp_init_attr attr;
	enum rdma_cm_event_type got;
	struct sockaddr_in *src;
	int ret;

	memset(c, 0, sizeof(*c));
	c->ch = rdma_create_event_channel();
	if (!c->ch) {
		ret = err_no();
		step_failed(mode, "rdma_create_event_channel", ret, 0);
		return ret;
	}
	ret = set_nonblock(c->ch->fd);
	if (ret) {
		step_failed(mode, "event channel", ret, 0);
		return ret;
	}
	if (rdma_create_id(c->ch, &c->id, c, RDMA_PS_TCP)) {
		ret = err_no();
		c->id = NULL;
		step_failed(mode, "rdma_create_id", ret, 0);
		return ret;
	}
	if (src_port) {
		struct sockaddr_in any;

		memset(&any, 0, sizeof(any));
		any.sin_family = AF_INET;
		any.sin_addr.s_addr = htonl(INADDR_ANY);
		any.sin_port = htons((u16)src_port);
		if (rdma_bind_addr(c->id, (struct sockaddr *)&any)) {
			ret = err_no();
			fprintf(stderr, "%s: %s: rdma_bind_addr port %u: %s\n",
				prog, mode, src_port, strerror(-ret));
			return ret;
		}
	}
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)dst,
			      RESOLVE_MS)) {
		ret = err_no();
		step_failed(mode, "rdma_resolve_addr", ret, 0);
		return ret;
	}
	ret = cm_expect(c, RDMA_CM_EVENT_ADDR_RESOLVED, RESOLVE_MS + 1000, &got);
	if (ret) {
		step_failed(mode, "address resolution", ret, got);
		return ret;
	}
	if (rdma_resolve_route(c->id, RESOLVE_MS)) {
		ret = err_no();
		step_failed(mode, "rdma_resolve_route", ret, 0);
		return ret;
	}
	ret = cm_expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED, RESOLVE_MS + 1000,
			&got);
	if (ret) {
		step_failed(mode, "route resolution", ret, got);
		return ret;
	}
	src = (struct sockaddr_in *)rdma_get_local_addr(c->id);
	if (!src || src->sin_family != AF_INET || !c->id->verbs) {
		fprintf(stderr, "%s: %s: no IPv4 source address or device\n",
			prog, mode);
		return -EADDRNOTAVAIL;
	}
	krc_gid_from_ipv4(c->gid, (const u8 *)&src->sin_addr.s_addr);

	c->pd = ibv_alloc_pd(c->id->verbs);
	if (!c->pd) {
		ret = err_no();
		step_failed(mode, "ibv_alloc_pd", ret, 0);
		return ret;
	}
	if (comp) {
		c->comp = ibv_create_comp_channel(c->id->verbs);
		if (!c->comp) {
			ret = err_no();
			step_failed(mode, "ibv_create_comp_channel", ret, 0);
			return ret;
		}
		ret = set_nonblock(c->comp->fd);
		if (ret) {
			step_failed(mode, "completion channel", ret, 0);
			return ret;
		}
	}
	c->cq = ibv_create_cq(c->id->verbs, 2 * (NRX + 1), NULL, c->comp, 0);
	if (!c->cq) {
		ret = err_no();
		step_failed(mode, "ibv_create_cq", ret, 0);
		return ret;
	}
	if (comp && ibv_req_notify_cq(c->cq, 0)) {
		ret = err_no();
		step_failed(mode, "ibv_req_notify_cq", ret, 0);
		return ret;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	attr.sq_sig_all = 1;
	attr.cap.max_send_wr = 2;
	attr.cap.max_recv_wr = NRX;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &attr)) {
		ret = err_no();
		step_failed(mode, "rdma_create_qp", ret, 0);
		return ret;
	}
	c->qp = true;
	return 0;
}

/* rdma_connect with @hello as private data; no wait. */
static int conn_connect(struct conn *c, const char *mode, const u8 *hello,
			u8 len)
{
	struct rdma_conn_param param;
	int ret;

	memset(&param, 0, sizeof(param));
	param.private_data = hello;
	param.private_data_len = len;
	param.initiator_depth = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (rdma_connect(c->id, &param)) {
		ret = err_no();
		step_failed(mode, "rdma_connect", ret, 0);
		return ret;
	}
	return 0;
}

/* The outcome of rdma_connect: ESTABLISHED, REJECTED, ... or err_no(). */
static int conn_outcome(struct conn *c, enum rdma_cm_event_type *got)
{
	long long deadline = now_ms() + CONNECT_MS;
	int ret;

	for (;;) {
		ret = cm_next(c, deadline, got);
		if (ret)
			return ret;
		switch (*got) {
		case RDMA_CM_EVENT_ESTABLISHED:
			c->established = true;
			return 0;
		case RDMA_CM_EVENT_REJECTED:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			return 0;
		default:
			continue;	/* e.g. ADDR_CHANGE: not an outcome */
		}
	}
}

/* A version 2 hello (common/proto.h) from the source address of @c. */
static int hello_v2(const struct conn *c, u8 buf[KRC_CM_HELLO_SIZE])
{
	struct krc_meta_hello h;
	int ret;

	memset(&h, 0, sizeof(h));
	h.node_id = krc_gid_node_id(c->gid);
	ret = random_u64(&h.incarnation);
	if (!ret)
		ret = random_bytes(h.nonce, sizeof(h.nonce));
	if (ret)
		return ret;
	krc_meta_hello_encode(&h, buf);
	return 0;
}

static int mode_v1(const struct sockaddr_in *dst, unsigned int src_port)
{
	enum rdma_cm_event_type got;
	u8 hello[V1_HELLO_SIZE];
	struct conn c;
	u64 inc;
	int ret;

	ret = conn_setup(&c, "v1", dst, src_port, false);
	if (!ret)
		ret = random_u64(&inc);
	if (ret) {
		printf("%s: v1: error setup: %s\n", prog, strerror(-ret));
		conn_close(&c);
		return 1;
	}
	/* KRCM, version 1, kind 1 (hello), node_id, incarnation; no nonce */
	memset(hello, 0, sizeof(hello));
	krc_put_le32(hello, KRC_CM_MAGIC);
	hello[4] = 1;
	hello[5] = 1;
	krc_put_le32(hello + 8, krc_gid_node_id(c.gid));
	krc_put_le64(hello + 16, inc);
	ret = conn_connect(&c, "v1", hello, sizeof(hello));
	if (ret) {
		printf("%s: v1: error rdma_connect: %s\n", prog, strerror(-ret));
		conn_close(&c);
		return 1;
	}
	ret = conn_outcome(&c, &got);
	if (ret == -ETIMEDOUT)
		printf("%s: v1: error timeout\n", prog);
	else if (ret)
		printf("%s: v1: error %s\n", prog, strerror(-ret));
	else if (got == RDMA_CM_EVENT_REJECTED && c.status == REJ_CONSUMER)
		printf("%s: v1: rejected\n", prog);
	else if (got == RDMA_CM_EVENT_REJECTED)
		printf("%s: v1: error rejected reason %d\n", prog, c.status);
	else if (got == RDMA_CM_EVENT_ESTABLISHED)
		printf("%s: v1: accepted\n", prog);
	else
		printf("%s: v1: error %s\n", prog, ev_name(got));
	conn_close(&c);
	return ret && ret != -ETIMEDOUT ? 1 : 0;
}

/* Set up, connect with a version 2 hello and wait: 0 when ESTABLISHED. */
static int connect_v2(struct conn *c, const char *mode,
		      const struct sockaddr_in *dst, unsigned int src_port,
		      bool comp)
{
	enum rdma_cm_event_type got;
	u8 hello[KRC_CM_HELLO_SIZE];
	int ret;

	ret = conn_setup(c, mode, dst, src_port, comp);
	if (ret)
		return ret;
	ret = hello_v2(c, hello);
	if (ret) {
		step_failed(mode, "getrandom", ret, 0);
		return ret;
	}
	ret = conn_connect(c, mode, hello, sizeof(hello));
	if (ret)
		return ret;
	ret = conn_outcome(c, &got);
	if (ret) {
		step_failed(mode, "connect", ret, 0);
		return ret;
	}
	if (got != RDMA_CM_EVENT_ESTABLISHED) {
		fprintf(stderr, "%s: %s: connect: %s (status %d)\n", prog, mode,
			ev_name(got), c->status);
		return -ECONNREFUSED;
	}
	return 0;
}

/* The MAC address of the interface that holds the IPv4 address @ip. */
static void source_mac(const u8 ip[4], u8 mac[6])
{
	struct ifaddrs *all, *a, *b;

	memset(mac, 0, 6);
	if (getifaddrs(&all))
		return;
	for (a = all; a; a = a->ifa_next) {
		const struct sockaddr_in *sin = (void *)a->ifa_addr;

		if (!sin || sin->sin_family != AF_INET ||
		    memcmp(&sin->sin_addr.s_addr, ip, 4))
			continue;
		for (b = all; b; b = b->ifa_next) {
			const struct sockaddr_ll *ll = (void *)b->ifa_addr;

			if (ll && ll->sll_family == AF_PACKET &&
			    ll->sll_halen == 6 &&
			    !strcmp(a->ifa_name, b->ifa_name)) {
				memcpy(mac, ll->sll_addr, 6);
				break;
			}
		}
		break;
	}
	freeifaddrs(all);
}

/* A UD QP in RTS with qkey FORGE_QKEY: the forged card's control QP. */
static int make_ud_qp(struct conn *c)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	c->ud_cq = ibv_create_cq(c->id->verbs, 4, NULL, NULL, 0);
	if (!c->ud_cq)
		return err_no();
	memset(&init, 0, sizeof(init));
	init.qp_type = IBV_QPT_UD;
	init.send_cq = c->ud_cq;
	init.recv_cq = c->ud_cq;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	c->ud_qp = ibv_create_qp(c->pd, &init);
	if (!c->ud_qp)
		return err_no();
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = c->id->port_num;
	attr.qkey = FORGE_QKEY;
	if (ibv_modify_qp(c->ud_qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return err_no();
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(c->ud_qp, &attr, IBV_QP_STATE))
		return err_no();
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(c->ud_qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return err_no();
	return 0;
}

/*
 * The card a node at the source address of @c would publish, but for its
 * UD QP (this process's), its qkey and its incarnation (random).
 */
static int forge_card(struct conn *c, struct krcore_card *card)
{
	struct ibv_port_attr pa;
	u64 inc;
	int ret;

	memset(card, 0, sizeof(*card));
	memcpy(card->gid, c->gid, 16);
	source_mac(c->gid + 12, card->mac);
	card->card_version = KRCORE_CARD_VERSION;
	card->flags = KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4;
	card->node_id = krc_gid_node_id(c->gid);
	card->ud_qpn = c->ud_qp->qp_num;
	card->ud_qkey = FORGE_QKEY;
	card->port_num = c->id->port_num;
	card->active_mtu = IBV_MTU_1024;
	if (!ibv_query_port(c->id->verbs, c->id->port_num, &pa) &&
	    pa.active_mtu >= IBV_MTU_256 && pa.active_mtu <= IBV_MTU_4096)
		card->active_mtu = (u8)pa.active_mtu;
	ret = random_u64(&inc);
	if (ret)
		return ret;
	card->incarnation = inc;
	return krc_card_check(card);
}

static int post_recv(struct conn *c, int i)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;

	sge.addr = (uintptr_t)(c->buf + i * KRC_MSG_SIZE);
	sge.length = KRC_MSG_SIZE;
	sge.lkey = c->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (u64)i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(c->id->qp, &wr, &bad) ? err_no() : 0;
}

static int post_send(struct conn *c)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	sge.addr = (uintptr_t)(c->buf + NRX * KRC_MSG_SIZE);
	sge.length = KRC_MSG_SIZE;
	sge.lkey = c->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = NRX;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(c->id->qp, &wr, &bad) ? err_no() : 0;
}

/* What came back after the forged SEND. */
struct nomac_result {
	bool replied;
	unsigned int status;
	bool disconnected;
	long long after_ms;
};

/* Take the completions there are: a META_REPLY sets r->replied. */
static int nomac_drain(struct conn *c, struct nomac_result *r)
{
	struct ibv_wc wc[NRX + 1];
	struct krc_ctrl_msg m;
	int n, i;

	while ((n = ibv_poll_cq(c->cq, NRX + 1, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
					fprintf(stderr, "%s: nomac: %s completion: %s\n",
						prog, wc[i].wr_id == NRX ? "send" : "receive",
						ibv_wc_status_str(wc[i].status));
				continue;
			}
			if (wc[i].wr_id >= NRX)
				continue;	/* our SEND went out */
			if (krc_msg_decode(c->buf + wc[i].wr_id * KRC_MSG_SIZE,
					   wc[i].byte_len, &m) ||
			    m.type != KRC_MSG_META_REPLY) {
				fprintf(stderr, "%s: nomac: received %u bytes, "
					"not a META_REPLY\n", prog,
					wc[i].byte_len);
				continue;
			}
			if (!r->replied) {
				r->replied = true;
				r->status = m.status;
			}
		}
	}
	return n < 0 ? -EIO : 0;
}

/* Until DISCONNECTED or @deadline, taking completions on the way. */
static int nomac_wait(struct conn *c, long long sent, long long deadline,
		      struct nomac_result *r)
{
	enum rdma_cm_event_type got;
	struct pollfd pfd[2];
	struct ibv_cq *cq;
	void *ctx;
	int n, ret;

	for (;;) {
		long long left = deadline - now_ms();

		if (left <= 0)
			return 0;
		pfd[0].fd = c->ch->fd;
		pfd[0].events = POLLIN;
		pfd[0].revents = 0;
		pfd[1].fd = c->comp->fd;
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		n = poll(pfd, 2, (int)left);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_no();
		}
		if (pfd[1].revents & POLLIN) {
			if (!ibv_get_cq_event(c->comp, &cq, &ctx)) {
				ibv_ack_cq_events(cq, 1);
				if (ibv_req_notify_cq(c->cq, 0))
					return err_no();
			} else if (errno != EAGAIN) {
				return err_no();
			}
			ret = nomac_drain(c, r);
			if (ret)
				return ret;
		}
		if (pfd[0].revents & POLLIN) {
			/* a short deadline: the channel is readable */
			ret = cm_next(c, now_ms() + 1000, &got);
			if (ret == -ETIMEDOUT)
				continue;
			if (ret)
				return ret;
			if (got == RDMA_CM_EVENT_DISCONNECTED) {
				r->disconnected = true;
				r->after_ms = now_ms() - sent;
				/* what arrived before it */
				return nomac_drain(c, r);
			}
			fprintf(stderr, "%s: nomac: event %s\n", prog,
				ev_name(got));
		}
	}
}

static int mode_nomac(const struct sockaddr_in *dst, unsigned int src_port)
{
	const size_t len = (NRX + 1) * KRC_MSG_SIZE;
	struct nomac_result r = { .after_ms = -1 };
	struct krc_mt_desc desc;
	struct krc_ctrl_msg m, check;
	const char *what;
	long long sent;
	struct conn c;
	bool desc_ok;
	int i, ret;

	ret = connect_v2(&c, "nomac", dst, src_port, true);
	if (ret)
		goto out;
	desc_ok = !krc_mt_desc_decode(c.priv, c.priv_len, &desc);

	what = "buffers";
	c.buf = calloc(1, len);
	ret = -ENOMEM;
	if (!c.buf)
		goto fail;
	c.mr = ibv_reg_mr(c.pd, c.buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c.mr) {
		ret = err_no();
		goto fail;
	}
	what = "ibv_post_recv";
	for (i = 0; i < NRX; i++) {
		ret = post_recv(&c, i);
		if (ret)
			goto fail;
	}
	what = "UD QP";
	ret = make_ud_qp(&c);
	if (ret)
		goto fail;

	/* A REGISTER of our own address's card, and a MAC of random bytes. */
	what = "forged REGISTER";
	memset(&m, 0, sizeof(m));
	m.type = KRC_MSG_META_REGISTER;
	ret = random_bytes(&m.req_id, sizeof(m.req_id));
	if (!ret)
		ret = forge_card(&c, &m.card);
	if (!ret)
		ret = random_bytes(m.mac, sizeof(m.mac));
	if (ret)
		goto fail;
	krc_msg_encode(&m, c.buf + NRX * KRC_MSG_SIZE);
	/* what the server sees decodes: only the MAC is wrong */
	ret = krc_msg_decode(c.buf + NRX * KRC_MSG_SIZE, KRC_MSG_SIZE, &check);
	if (ret)
		goto fail;
	what = "ibv_post_send";
	sent = now_ms();
	ret = post_send(&c);
	if (ret)
		goto fail;
	ret = nomac_wait(&c, sent, sent + NOMAC_MS, &r);
	if (ret) {
		what = "waiting";
		goto fail;
	}
	printf("%s: nomac: desc=%s reply=", prog, desc_ok ? "ok" : "bad");
	if (r.replied)
		printf("status %u", r.status);
	else
		printf("none");
	printf(" disconnected=%s after_ms=%lld\n",
	       r.disconnected ? "yes" : "no", r.after_ms);
	conn_close(&c);
	return 0;
fail:
	step_failed("nomac", what, ret, 0);
out:
	conn_close(&c);
	return 1;
}

static int mode_silent(const struct sockaddr_in *dst, unsigned int src_port)
{
	enum rdma_cm_event_type got;
	long long start, deadline;
	long long after = -1;
	struct conn c;
	int ret;

	ret = connect_v2(&c, "silent", dst, src_port, false);
	if (ret) {
		conn_close(&c);
		return 1;
	}
	start = now_ms();
	deadline = start + SILENT_MS;
	for (;;) {
		ret = cm_next(&c, deadline, &got);
		if (ret == -ETIMEDOUT)
			break;
		if (ret) {
			step_failed("silent", "waiting", ret, 0);
			conn_close(&c);
			return 1;
		}
		if (got == RDMA_CM_EVENT_DISCONNECTED) {
			after = now_ms() - start;
			break;
		}
		fprintf(stderr, "%s: silent: event %s\n", prog, ev_name(got));
	}
	printf("%s: silent: disconnected=%s after_ms=%lld\n", prog,
	       after >= 0 ? "yes" : "no", after);
	conn_close(&c);
	return 0;
}

static int mode_pending(const struct sockaddr_in *dst, unsigned int src_port,
			unsigned int n)
{
	unsigned int i, est = 0, rej = 0;
	enum rdma_cm_event_type got;
	u8 hello[KRC_CM_HELLO_SIZE];
	struct conn *c;
	int ret = 0;

	c = calloc(n, sizeof(*c));
	if (!c) {
		fprintf(stderr, "%s: pending: out of memory\n", prog);
		return 1;
	}
	for (i = 0; i < n; i++) {
		ret = conn_setup(&c[i], "pending", dst,
				 src_port ? src_port + i : 0, false);
		if (!ret) {
			ret = hello_v2(&c[i], hello);
			if (ret)
				step_failed("pending", "getrandom", ret, 0);
		}
		if (!ret)
			ret = conn_connect(&c[i], "pending", hello,
					   sizeof(hello));
		if (ret)
			break;
		ret = conn_outcome(&c[i], &got);
		if (ret == -ETIMEDOUT) {
			fprintf(stderr, "%s: pending: connection %u: no outcome in %d ms\n",
				prog, i, CONNECT_MS);
			ret = 0;
			continue;
		}
		if (ret) {
			step_failed("pending", "connect", ret, 0);
			break;
		}
		if (got == RDMA_CM_EVENT_ESTABLISHED)
			est++;
		else if (got == RDMA_CM_EVENT_REJECTED &&
			 c[i].status == REJ_CONSUMER)
			rej++;
		else
			fprintf(stderr, "%s: pending: connection %u: %s (status %d)\n",
				prog, i, ev_name(got), c[i].status);
	}
	if (!ret)
		printf("%s: pending: established=%u rejected=%u\n", prog, est,
		       rej);
	for (i = 0; i < n; i++)
		conn_close(&c[i]);
	free(c);
	return ret ? 1 : 0;
}

static int bad_args(void)
{
	fprintf(stderr,
		"usage: %s SERVER_IPV4 PORT MODE [SRC_PORT]\n"
		"  MODE: v1 | nomac | silent | pending N (1..%d)\n"
		"  SRC_PORT: bind this local port first (default 0: any;\n"
		"  pending binds SRC_PORT + i for its i-th connection)\n",
		prog, PENDING_MAX);
	return 2;
}

/* A decimal number in [min, max], all of @s. */
static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int port, src_port = 0, n = 0;
	struct sockaddr_in dst;
	const char *mode;
	int rest;

	if (argc < 4)
		return bad_args();
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	if (inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1 ||
	    parse_uint(argv[2], 1, 65535, &port))
		return bad_args();
	dst.sin_port = htons((u16)port);
	mode = argv[3];
	rest = 4;
	if (!strcmp(mode, "pending")) {
		if (argc < 5 || parse_uint(argv[4], 1, PENDING_MAX, &n))
			return bad_args();
		rest = 5;
	} else if (strcmp(mode, "v1") && strcmp(mode, "nomac") &&
		   strcmp(mode, "silent")) {
		return bad_args();
	}
	if (argc > rest + 1)
		return bad_args();
	if (argc == rest + 1 &&
	    parse_uint(argv[rest], 0, 65535 - (n ? n - 1 : 0), &src_port))
		return bad_args();

	if (!strcmp(mode, "v1"))
		return mode_v1(&dst, src_port);
	if (!strcmp(mode, "nomac"))
		return mode_nomac(&dst, src_port);
	if (!strcmp(mode, "silent"))
		return mode_silent(&dst, src_port);
	return mode_pending(&dst, src_port, n);
}
