// SPDX-License-Identifier: BSD-2-Clause
/*
 * src_flood - an outsider with a verbs QP and many addresses against a
 * node's control UD QP: well-formed messages that name their source
 * truthfully, from as many sources as it has addresses, as fast as the
 * send queue allows.
 *
 *   src_flood DEV TARGET_IPV4 QPN QKEY SECONDS MODE GIDX [GIDX...]
 *
 * DEV: the RDMA device (rxe0); TARGET_IPV4: the target node's address
 * (its GID is ::ffff:a.b.c.d); QPN, QKEY: its control UD QP (hex or
 * decimal); SECONDS: how long to send (monotonic clock); GIDX: up to 256
 * indexes of RoCE v2 IPv4 GIDs of DEV's port 1, one source each (an
 * address handle from it to the target). One UD QP sends for all of them.
 * MODE:
 *   req    CONNECT_REQs (common/proto.h) carrying the card of their source:
 *          its GID, our QP's number, QKEY, an incarnation of its own, the
 *          netdev's MAC, the port's MTU; so they pass the receiver's source
 *          check and reach its verification of the card
 *   dgram  datagram-transport READ requests (common/dgram.h) of 8 bytes,
 *          each with a new random stream
 *   both   req and dgram alternate, for each source and from one
 *          message to the next (the j-th message of source s is a req
 *          if j + s is even)
 * Message i goes to source i mod K (of K); every message is checked with
 * the receiver's decoder before it is sent. Prints one line per source,
 * then one summary line. Exit 0, 1 on a setup or send error (says why),
 * 2 on a usage error.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "card.h"
#include "dgram.h"
#include "proto.h"
#include "ud.h"

#define PORT		1
#define MAX_SRC		256
#define SQ_DEPTH	512	/* sends outstanding at most */
#define BATCH		32	/* sends per post, the last one signaled */
#define SLOT		128	/* bytes of one message's buffer */
#define OWN_QKEY	0x11111111	/* our QP's: see ud_qp() */
#define STALL_MS	5000	/* the longest wait for a completion */
#define MAX_SECONDS	86400.0

enum flood_mode { MODE_REQ, MODE_DGRAM, MODE_BOTH };

struct source {
	uint8_t gidx;
	struct ibv_ah *ah;
	struct krcore_card card;
};

struct flood {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;			/* SQ_DEPTH slots */
	struct source src[MAX_SRC];
	unsigned int nsrc;
	uint32_t qpn, qkey;		/* the target's */
	uint64_t rng;
	uint64_t done;			/* sends completed (in order) */
};

static void print_usage(void)
{
	fprintf(stderr,
		"usage: src_flood DEV TARGET_IPV4 QPN QKEY SECONDS req|dgram|both GIDX [GIDX...]\n"
		"       (at most %d GIDX, each a RoCE v2 IPv4 GID index of DEV port %d)\n",
		MAX_SRC, PORT);
}

/* splitmix64: fast, and good enough to make fields unpredictable. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A number (decimal, 0x hex or 0 octal) up to @max; 0 or -1. */
static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* The MAC of network interface @ifindex; 0 or -1 (errno). */
static int netdev_mac(uint32_t ifindex, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd, ret;

	memset(&ifr, 0, sizeof(ifr));
	if (!if_indextoname(ifindex, ifr.ifr_name))
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ret = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (ret)
		return -1;
	if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

/* Source @s's card (its GID, our QP), its address handle; prints it. */
static int source_init(struct flood *f, struct source *s,
		       const struct ibv_port_attr *pa, const uint8_t dgid[16])
{
	struct ibv_gid_entry e;
	struct krcore_card *c = &s->card;
	char text[KRC_GID_STRLEN];
	int ret;

	ret = ibv_query_gid_ex(f->ctx, PORT, s->gidx, &e, 0);
	if (ret) {
		fprintf(stderr, "src_flood: GID index %u of %s port %d: %s\n",
			s->gidx, ibv_get_device_name(f->ctx->device), PORT,
			strerror(ret));
		return -1;
	}
	if (e.gid_type != IBV_GID_TYPE_ROCE_V2 ||
	    !krc_gid_is_v4mapped(e.gid.raw)) {
		fprintf(stderr, "src_flood: GID index %u is not a RoCE v2 IPv4 GID\n",
			s->gidx);
		return -1;
	}
	memset(c, 0, sizeof(*c));
	memcpy(c->gid, e.gid.raw, 16);
	if (netdev_mac(e.ndev_ifindex, c->mac)) {
		fprintf(stderr, "src_flood: the MAC of GID index %u's netdev (ifindex %u): %s\n",
			s->gidx, e.ndev_ifindex, strerror(errno));
		return -1;
	}
	c->card_version = KRCORE_CARD_VERSION;
	c->flags = KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4;
	c->node_id = krc_gid_node_id(c->gid);
	c->ud_qpn = f->qp->qp_num;
	c->ud_qkey = f->qkey;
	c->port_num = PORT;
	c->active_mtu = (uint8_t)pa->active_mtu;
	do
		c->incarnation = rnd(&f->rng);
	while (!c->incarnation);
	if (krc_card_check(c)) {
		fprintf(stderr, "src_flood: the card of GID index %u is not valid\n",
			s->gidx);
		return -1;
	}
	s->ah = ud_ah(f->pd, PORT, s->gidx, dgid);
	if (!s->ah) {
		fprintf(stderr, "src_flood: address handle from GID index %u to the target: %s\n",
			s->gidx, strerror(errno));
		return -1;
	}
	krc_gid_format(c->gid, text, sizeof(text));
	printf("src_flood: source %u = %s\n", s->gidx, text);
	return 0;
}

/* A CONNECT_REQ of source @s into @out; its length, 0 if it fails to decode. */
static uint32_t make_req(struct flood *f, const struct source *s, uint8_t *out)
{
	struct krc_ctrl_msg m, chk;
	int ret;

	memset(&m, 0, sizeof(m));
	m.type = KRC_MSG_CONNECT_REQ;
	m.req_id = rnd(&f->rng);
	m.card = s->card;
	m.dst_incarnation = 0;
	m.qpn = 2 + (uint32_t)(rnd(&f->rng) % 0xfffffe);
	m.psn = (uint32_t)rnd(&f->rng) & 0xffffff;
	krc_msg_encode(&m, out);
	ret = krc_msg_decode(out, KRC_MSG_SIZE, &chk);
	if (ret || chk.type != KRC_MSG_CONNECT_REQ) {
		fprintf(stderr, "src_flood: a REQ that does not decode (%d)\n",
			ret);
		return 0;
	}
	return KRC_MSG_SIZE;
}

/* A datagram READ request into @out; its length, 0 if it fails to decode. */
static uint32_t make_dgram(struct flood *f, uint8_t *out)
{
	struct krc_dg_hdr h, chk;
	int ret;

	memset(&h, 0, sizeof(h));
	h.type = KRC_DG_REQ;
	h.opcode = KRCORE_WR_READ;
	h.flags = KRC_DG_F_LAST;
	h.seq = 0;
	h.len = 8;
	do
		h.stream = rnd(&f->rng);
	while (!h.stream);
	h.dst_incarnation = 0;
	h.remote_addr = 0x1000;
	h.swap = h.remote_addr;	/* the request's segment: 8 bytes at 0x1000 */
	h.compare_add = h.len;
	h.rkey = (uint32_t)rnd(&f->rng);
	krc_dg_encode(&h, out);
	ret = krc_dg_decode(out, KRC_DG_HDR_SIZE, &chk);
	if (ret || chk.type != KRC_DG_REQ) {
		fprintf(stderr, "src_flood: a datagram REQ that does not decode (%d)\n",
			ret);
		return 0;
	}
	return KRC_DG_HDR_SIZE;
}

/*
 * Wait (at most STALL_MS) for at least one completion; sends complete in
 * order, so a signaled one completes every send up to it. 0 or -1.
 */
static int reap(struct flood *f)
{
	uint64_t until = now_ns() + STALL_MS * 1000000ULL;
	struct ibv_wc wc[16];
	int n, k;

	for (;;) {
		n = ibv_poll_cq(f->cq, 16, wc);
		if (n < 0) {
			fprintf(stderr, "src_flood: ibv_poll_cq failed (%d)\n", n);
			return -1;
		}
		for (k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "src_flood: send %llu: %s\n",
					(unsigned long long)wc[k].wr_id,
					ibv_wc_status_str(wc[k].status));
				return -1;
			}
			f->done = wc[k].wr_id + 1;
		}
		if (n)
			return 0;
		if (now_ns() >= until) {
			fprintf(stderr, "src_flood: no send completion in %d ms (%llu done)\n",
				STALL_MS, (unsigned long long)f->done);
			return -1;
		}
		sched_yield();
	}
}

/*
 * Send until @seconds have passed: batches of BATCH, the last of each
 * signaled, at most SQ_DEPTH outstanding (a multiple of BATCH, so the
 * oldest outstanding batch always ends with a signaled send). The CQ has
 * room for SQ_DEPTH completions: even an error flushing every outstanding
 * send (signaled or not) cannot overflow it. 0 or -1.
 */
static int flood_run(struct flood *f, enum flood_mode mode, double seconds,
		     uint64_t *nreq, uint64_t *ndg, double *elapsed)
{
	struct ibv_send_wr wr[BATCH], *bad;
	struct ibv_sge sge[BATCH];
	uint64_t start = now_ns(), posted = 0, i, r, d;
	uint64_t end = start + (uint64_t)(seconds * 1e9);
	const struct source *s;
	uint8_t *slot;
	int k, ret;
	bool req;

	while (now_ns() < end) {
		while (posted - f->done > SQ_DEPTH - BATCH)
			if (reap(f))
				return -1;
		r = 0;
		d = 0;
		for (k = 0; k < BATCH; k++) {
			i = posted + k;
			s = &f->src[i % f->nsrc];
			slot = f->buf + (i % SQ_DEPTH) * SLOT;
			/* both: the j-th message of source s is a REQ if j + s is even */
			req = mode == MODE_REQ ||
			      (mode == MODE_BOTH &&
			       !((i / f->nsrc + i % f->nsrc) & 1));
			memset(&sge[k], 0, sizeof(sge[k]));
			sge[k].addr = (uintptr_t)slot;
			sge[k].lkey = f->mr->lkey;
			sge[k].length = req ? make_req(f, s, slot) :
					      make_dgram(f, slot);
			if (!sge[k].length)
				return -1;
			if (req)
				r++;
			else
				d++;
			memset(&wr[k], 0, sizeof(wr[k]));
			wr[k].wr_id = i;
			wr[k].next = k + 1 < BATCH ? &wr[k + 1] : NULL;
			wr[k].sg_list = &sge[k];
			wr[k].num_sge = 1;
			wr[k].opcode = IBV_WR_SEND;
			wr[k].send_flags = k + 1 < BATCH ? 0 : IBV_SEND_SIGNALED;
			wr[k].wr.ud.ah = s->ah;
			wr[k].wr.ud.remote_qpn = f->qpn;
			wr[k].wr.ud.remote_qkey = f->qkey;
		}
		ret = ibv_post_send(f->qp, wr, &bad);
		if (ret) {
			fprintf(stderr, "src_flood: ibv_post_send: %s\n",
				strerror(ret));
			return -1;
		}
		posted += BATCH;
		*nreq += r;
		*ndg += d;
	}
	while (f->done < posted)
		if (reap(f))
			return -1;
	*elapsed = (double)(now_ns() - start) / 1e9;
	return 0;
}

static void flood_free(struct flood *f)
{
	unsigned int i;

	/* The QP first: sends still outstanding after an error use the rest. */
	if (f->qp && ibv_destroy_qp(f->qp))
		fprintf(stderr, "src_flood: ibv_destroy_qp failed\n");
	for (i = 0; i < f->nsrc; i++)
		if (f->src[i].ah && ibv_destroy_ah(f->src[i].ah))
			fprintf(stderr, "src_flood: ibv_destroy_ah failed\n");
	if (f->mr && ibv_dereg_mr(f->mr))
		fprintf(stderr, "src_flood: ibv_dereg_mr failed\n");
	if (f->cq && ibv_destroy_cq(f->cq))
		fprintf(stderr, "src_flood: ibv_destroy_cq failed\n");
	if (f->pd && ibv_dealloc_pd(f->pd))
		fprintf(stderr, "src_flood: ibv_dealloc_pd failed\n");
	if (f->ctx && ibv_close_device(f->ctx))
		fprintf(stderr, "src_flood: ibv_close_device failed\n");
	free(f->buf);
}

/* Device, PD, CQ, buffers, QP, then every source. 0 or -1 (says why). */
static int flood_setup(struct flood *f, const char *dev, const uint8_t dgid[16])
{
	struct ibv_port_attr pa;
	unsigned int i;
	int ret;

	f->ctx = ud_open(dev);
	if (!f->ctx) {
		fprintf(stderr, "src_flood: no RDMA device %s\n", dev);
		return -1;
	}
	ret = ibv_query_port(f->ctx, PORT, &pa);
	if (ret) {
		fprintf(stderr, "src_flood: %s port %d: %s\n", dev, PORT,
			strerror(ret));
		return -1;
	}
	if (pa.state != IBV_PORT_ACTIVE ||
	    pa.link_layer != IBV_LINK_LAYER_ETHERNET ||
	    pa.active_mtu < IBV_MTU_256 || pa.active_mtu > IBV_MTU_4096) {
		fprintf(stderr, "src_flood: %s port %d is not an active RoCE port\n",
			dev, PORT);
		return -1;
	}
	f->pd = ibv_alloc_pd(f->ctx);
	if (!f->pd) {
		fprintf(stderr, "src_flood: ibv_alloc_pd: %s\n", strerror(errno));
		return -1;
	}
	f->cq = ibv_create_cq(f->ctx, SQ_DEPTH + 1, NULL, NULL, 0);
	if (!f->cq) {
		fprintf(stderr, "src_flood: ibv_create_cq: %s\n", strerror(errno));
		return -1;
	}
	f->buf = calloc(SQ_DEPTH, SLOT);
	if (!f->buf) {
		fprintf(stderr, "src_flood: out of memory\n");
		return -1;
	}
	f->mr = ibv_reg_mr(f->pd, f->buf, SQ_DEPTH * SLOT,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!f->mr) {
		fprintf(stderr, "src_flood: ibv_reg_mr: %s\n", strerror(errno));
		return -1;
	}
	f->qp = ud_qp(f->pd, f->cq, SQ_DEPTH, PORT, OWN_QKEY);
	if (!f->qp) {
		fprintf(stderr, "src_flood: a UD QP: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < f->nsrc; i++)
		if (source_init(f, &f->src[i], &pa, dgid))
			return -1;
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t nreq = 0, ndg = 0;
	double seconds, elapsed = 0;
	struct flood *f;
	uint8_t dgid[16], ip[4];
	uint32_t v;
	enum flood_mode mode;
	char *end;
	int i, j, ret;

	if (argc < 8 || argc - 7 > MAX_SRC) {
		print_usage();
		return 2;
	}
	if (inet_pton(AF_INET, argv[2], ip) != 1) {
		fprintf(stderr, "src_flood: bad target address %s\n", argv[2]);
		return 2;
	}
	krc_gid_from_ipv4(dgid, ip);
	f = calloc(1, sizeof(*f));
	if (!f) {
		fprintf(stderr, "src_flood: out of memory\n");
		return 1;
	}
	ret = 2;
	if (parse_u32(argv[3], 0xffffff, &f->qpn) || f->qpn < 2) {
		fprintf(stderr, "src_flood: bad QPN %s\n", argv[3]);
		goto out;
	}
	if (parse_u32(argv[4], 0xffffffff, &f->qkey)) {
		fprintf(stderr, "src_flood: bad QKEY %s\n", argv[4]);
		goto out;
	}
	errno = 0;
	seconds = strtod(argv[5], &end);
	if (errno || end == argv[5] || *end || !isfinite(seconds) ||
	    seconds <= 0 || seconds > MAX_SECONDS) {
		fprintf(stderr, "src_flood: bad SECONDS %s\n", argv[5]);
		goto out;
	}
	if (!strcmp(argv[6], "req")) {
		mode = MODE_REQ;
	} else if (!strcmp(argv[6], "dgram")) {
		mode = MODE_DGRAM;
	} else if (!strcmp(argv[6], "both")) {
		mode = MODE_BOTH;
	} else {
		fprintf(stderr, "src_flood: bad MODE %s\n", argv[6]);
		goto out;
	}
	for (i = 7; i < argc; i++) {
		if (parse_u32(argv[i], 255, &v)) {
			fprintf(stderr, "src_flood: bad GID index %s\n", argv[i]);
			goto out;
		}
		for (j = 0; j < (int)f->nsrc; j++)
			if (f->src[j].gidx == v) {
				fprintf(stderr, "src_flood: GID index %u given twice\n",
					v);
				goto out;
			}
		f->src[f->nsrc++].gidx = (uint8_t)v;
	}
	ret = 1;
	if (getrandom(&f->rng, sizeof(f->rng), 0) != sizeof(f->rng)) {
		fprintf(stderr, "src_flood: getrandom: %s\n", strerror(errno));
		goto out;
	}
	if (flood_setup(f, argv[1], dgid) ||
	    flood_run(f, mode, seconds, &nreq, &ndg, &elapsed))
		goto out;
	printf("src_flood: sent %llu (req %llu, dgram %llu) from %u sources in %.1f s\n",
	       (unsigned long long)(nreq + ndg), (unsigned long long)nreq,
	       (unsigned long long)ndg, f->nsrc, elapsed);
	ret = 0;
out:
	flood_free(f);
	free(f);
	if (fflush(stdout) && !ret) {
		perror("src_flood: stdout");
		ret = 1;
	}
	return ret;
}
