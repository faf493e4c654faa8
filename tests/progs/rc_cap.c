// SPDX-License-Identifier: BSD-2-Clause
/*
 * rc_cap - traffic to several peers from one process under the RC cap
 * (rc_max): connections are closed and made again under it, and no
 * request may be lost, repeated or reordered.
 *
 *   rc_cap N BLOCK ADDR INFO [ADDR INFO ...]
 *       one VQ per peer (INFO: "addr rkey" of its dp_serve buffer);
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
#include "round.h"

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

/* One checked round to @p; its FAA must return one more than before. */
static int one_round(struct peer *p, uint64_t *buf, uint32_t lkey,
		     unsigned int i)
{
	char who[96];
	uint64_t faa;
	int bad;

	snprintf(who, sizeof(who), "rc_cap: %s round %u", p->addr, i);
	bad = round_run(who, p->vq, buf, lkey, p->a, p->k,
			0xcab0000000000000ULL + i, &faa);
	if (bad < 0)
		return bad;
	if (!p->rounds) {
		p->base = faa;
	} else if (faa != p->base + p->rounds) {
		fprintf(stderr, "%s: FAA returned %llu, expected %llu\n", who,
			(unsigned long long)faa,
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
