// SPDX-License-Identifier: BSD-2-Clause
/*
 * rc_cap - traffic to several peers from one process under the RC cap
 * (rc_max): connections are closed and made again under it, and no
 * request may be lost, repeated or reordered.
 *
 *   rc_cap N BLOCK ADDR INFO [ADDR INFO ...]
 *       one VQ per peer (INFO: "addr rkey" of its dp_test serve buffer);
 *       N rounds, BLOCK in a row to one peer, then the next: each round
 *       one batch [WRITE a value, READ it back, FAA +1], checked: the
 *       READ returns the WRITE's value, each peer's FAA returns one more
 *       than its round before (exactly once, in order).
 *
 * Prints the rounds made on datagrams and on RC, the wrong ones, and the
 * most RC connections to other nodes seen at once (sampled before every
 * round). Exit 0 only if every round held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkrcore.h"

#define SRV_SIZE	(4u << 20)
#define SLOT_OFF	(SRV_SIZE - 512)	/* clear of dp_test's areas */
#define COUNT_OFF	(SRV_SIZE - 1024)
#define MAX_PEERS	8

struct peer {
	const char *addr;
	struct krc_vq *vq;
	struct krcore_qconnect qc;
	unsigned long long a;
	unsigned int k;
	uint64_t base;
	unsigned int rounds;
};

static void rw(struct krcore_wr *w, uint8_t op, void *local, uint32_t lkey,
	       uint64_t raddr, uint32_t rkey, uint64_t id)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = id;
	w->opcode = op;
	w->flags = KRCORE_WR_SIGNALED;
	w->num_sge = 1;
	w->remote_addr = raddr;
	w->rkey = rkey;
	w->sg_list[0].addr = (uintptr_t)local;
	w->sg_list[0].length = 8;
	w->sg_list[0].lkey = lkey;
	if (op == KRCORE_WR_ATOMIC_FAA)
		w->compare_add = 1;
}

/* Is the peer of @gid served on datagrams; RC connections to others. */
static void node_view(struct krc_vq *vq, const uint8_t gid[16], int *dgram,
		      unsigned int *rc)
{
	struct krcore_peer_info pi;
	unsigned int i;

	*dgram = 0;
	*rc = 0;
	for (i = 0; krc_peer_info(vq, i, &pi) == 0; i++) {
		if (!(pi.flags & KRCORE_PEER_F_LOCAL))
			*rc += pi.nconns;
		if (!memcmp(pi.card.gid, gid, 16))
			*dgram = pi.dgram_vqs > 0;
	}
}

static int one_round(struct peer *p, uint64_t *buf, uint32_t lkey,
		     unsigned int i)
{
	struct krcore_cqe cqe[3];
	struct krcore_wr wr[3];
	int got, m, bad = 0, j;

	buf[0] = 0xcab0000000000000ULL + i;
	buf[1] = 0;
	rw(&wr[0], KRCORE_WR_WRITE, &buf[0], lkey, p->a + SLOT_OFF, p->k, 1);
	rw(&wr[1], KRCORE_WR_READ, &buf[1], lkey, p->a + SLOT_OFF, p->k, 2);
	rw(&wr[2], KRCORE_WR_ATOMIC_FAA, &buf[2], lkey, p->a + COUNT_OFF,
	   p->k, 3);
	if (krc_qpush(p->vq, wr, 3) != 3) {
		fprintf(stderr, "rc_cap: %s round %u: %s\n", p->addr, i,
			krc_errmsg());
		return -1;
	}
	for (got = 0; got < 3; got += m) {
		m = krc_qpop_wait(p->vq, cqe + got, 3 - got, 60000);
		if (m <= 0) {
			fprintf(stderr, "rc_cap: %s round %u: no completion\n",
				p->addr, i);
			return -1;
		}
	}
	for (j = 0; j < 3; j++) {
		if (cqe[j].wr_id != (uint64_t)j + 1 || cqe[j].status) {
			fprintf(stderr, "rc_cap: %s round %u: cqe %d: wr_id %llu, %s\n",
				p->addr, i, j,
				(unsigned long long)cqe[j].wr_id,
				krc_wc_status_str(cqe[j].status));
			bad++;
		}
	}
	if (buf[1] != buf[0]) {
		fprintf(stderr, "rc_cap: %s round %u: READ after WRITE gave %llx\n",
			p->addr, i, (unsigned long long)buf[1]);
		bad++;
	}
	if (!p->rounds) {
		p->base = buf[2];
	} else if (buf[2] != p->base + p->rounds) {
		fprintf(stderr, "rc_cap: %s round %u: FAA returned %llu, expected %llu\n",
			p->addr, i, (unsigned long long)buf[2],
			(unsigned long long)(p->base + p->rounds));
		bad++;
	}
	p->rounds++;
	return bad;
}

int main(int argc, char **argv)
{
	static uint64_t buf[3];
	unsigned int n, block, np, i, dg = 0, rc = 0, bad = 0, conns, most = 0;
	struct peer peers[MAX_PEERS];
	struct krc_mr mr;
	int r, dgram;

	if (argc < 5 || (argc - 3) % 2 || (argc - 3) / 2 > MAX_PEERS) {
		fprintf(stderr, "usage: rc_cap N BLOCK ADDR INFO [ADDR INFO ...]\n");
		return 1;
	}
	n = (unsigned int)atoi(argv[1]);
	block = (unsigned int)atoi(argv[2]);
	np = (unsigned int)(argc - 3) / 2;
	if (!block)
		block = 1;
	memset(peers, 0, sizeof(peers));
	for (i = 0; i < np; i++) {
		struct peer *p = &peers[i];
		FILE *f = fopen(argv[4 + 2 * i], "r");

		p->addr = argv[3 + 2 * i];
		if (!f || fscanf(f, "%llx %x", &p->a, &p->k) != 2) {
			fprintf(stderr, "rc_cap: no info in %s\n", argv[4 + 2 * i]);
			return 1;
		}
		fclose(f);
		if (krc_vq_open(&p->vq) < 0 ||
		    krc_qconnect(p->vq, p->addr, 0, &p->qc) < 0) {
			fprintf(stderr, "rc_cap: %s: %s\n", p->addr, krc_errmsg());
			return 1;
		}
	}
	if (krc_reg_mr(peers[0].vq, buf, sizeof(buf),
		       KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0) {
		fprintf(stderr, "rc_cap: %s\n", krc_errmsg());
		return 1;
	}
	for (i = 0; i < n && bad < 5; i++) {
		struct peer *p = &peers[(i / block) % np];

		node_view(p->vq, p->qc.card.gid, &dgram, &conns);
		if (conns > most)
			most = conns;
		if (dgram)
			dg++;
		else
			rc++;
		r = one_round(p, buf, mr.lkey, i);
		if (r < 0)
			return 1;
		bad += r;
	}
	node_view(peers[0].vq, peers[0].qc.card.gid, &dgram, &conns);
	if (conns > most)
		most = conns;
	printf("rc_cap: %u rounds over %u peers, ", i, np);
	printf("%u on datagrams, %u on RC, %u wrong, most RC connections %u\n",
	       dg, rc, bad, most);
	for (i = 0; i < np; i++)
		krc_vq_close(peers[i].vq);
	return bad ? 2 : 0;
}
