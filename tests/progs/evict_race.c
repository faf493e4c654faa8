// SPDX-License-Identifier: BSD-2-Clause
/*
 * evict_race - recovery of a shared connection and the RC cap closing
 * its target at the same time (tests/cluster/t_evict_race.sh).
 *
 *   evict_race PEER INFO N MIB
 *
 * Two VQs of this process share pooled connection X to PEER (INFO: its
 * dp_serve buffer); the pool's other connection Y is idle. VQ B
 * posts a READ of MIB MiB, VQ A a READ with a bad rkey behind it, then B
 * N more READs of MIB MiB each (posted while the first one is under way,
 * so they are queued behind A's): A's READ breaks X, B's N READs are
 * flushed and recovery re-posts them on Y. Printed before the READs are
 * posted: "evict_race: broken X idle Y".
 * The test closes Y (fault_evict_conn) while recovery holds it as its
 * target (fault_recover_delay_ms): the re-posts must not land on a
 * connection being closed, and every READ of B must complete with the
 * server's data. Prints one line
 *   evict_race: bad=STATUS ok=N failed=F data_bad=D missing=M probe=P
 * (STATUS a number: REM_ACCESS_ERR is 10; N + 1 READs of B in all; P
 * what a probe of B said while recovery held it on X, -11 for EAGAIN) and
 * exits 0 only if bad is REM_ACCESS_ERR, every READ came back and every
 * successful READ carries the server's pattern.
 */
#include "tp.h"

#define MAX_READS	64

/* Do the pool's two ready connections to the peer of @vq exist? */
static int two_conns(struct krc_vq *vq, const uint8_t gid[16], uint32_t *ids)
{
	struct krcore_peer_info pi;
	unsigned int i, k, n;

	for (i = 0; krc_peer_info(vq, i, &pi) == 0; i++) {
		if (memcmp(pi.card.gid, gid, 16))
			continue;
		for (k = 0, n = 0; k < pi.nconns && k < KRCORE_PEER_MAX_CONNS; k++)
			if (pi.conns[k].state == KRCORE_CONN_READY && n < 2)
				ids[n++] = pi.conns[k].id;
		return n == 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct krcore_cqe cqe[MAX_READS + 1];
	struct krcore_wr wr[MAX_READS];
	struct krcore_qconnect qb, qa;
	struct krc_vq *a, *b, *extra[8];
	unsigned int n, mib, i, got, ok = 0, failed = 0, bad_data = 0;
	uint32_t rkey, ids[2], bad_status = ~0u;
	struct krc_mr mra, mrb;
	uint64_t raddr, t;
	uint8_t *bufa, *bufb;
	int nextra = 0, probe = 1;
	size_t len;

	if (argc != 5)
		tp_die("usage: evict_race PEER INFO N MIB");
	n = (unsigned int)atoi(argv[3]);
	mib = (unsigned int)atoi(argv[4]);
	if (!n || n > MAX_READS || !mib || mib > 2)
		tp_die("evict_race: 1 <= N <= %d, 1 <= MIB <= 2", MAX_READS);
	tp_read_info(argv[2], &raddr, &rkey);
	len = (size_t)mib * TP_MIB;

	b = tp_connect(argv[1], 0, &qb);
	/*
	 * The pool's second connection, grown in the background (after a
	 * round's eviction, tens of seconds on the debug kernel).
	 */
	for (t = tp_now_ms(); !two_conns(b, qb.card.gid, ids); usleep(50000))
		if (tp_now_ms() - t > 120000)
			tp_die("evict_race: the pool never had two connections");
	/* A: a VQ on B's connection (each new VQ takes the emptiest). */
	for (;;) {
		a = tp_connect(argv[1], 0, &qa);
		if (qa.conn_id == qb.conn_id)
			break;
		if (nextra == 8)
			tp_die("evict_race: no VQ landed on conn %u", qb.conn_id);
		extra[nextra++] = a;
	}
	while (nextra)
		krc_vq_close(extra[--nextra]);
	bufa = tp_reg(a, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mra);
	/*
	 * One page more than the READs fill: rxe in Debian's 6.1 reads one
	 * map pointer past its array when a copy ends exactly at the end of
	 * a registration of a multiple of 256 pages (rxe_mr_copy; harmless,
	 * but KASAN reports it on the debug kernel).
	 */
	bufb = tp_reg(b, len + 4096, KRCORE_ACCESS_LOCAL_WRITE, &mrb);
	printf("evict_race: broken %u idle %u\n", qb.conn_id,
	       ids[0] == qb.conn_id ? ids[1] : ids[0]);
	fflush(stdout);

	/* B's first READ keeps X busy while A's bad one and B's N queue. */
	tp_wr(wr, KRCORE_WR_READ, bufb, mrb.lkey, (uint32_t)len, raddr, rkey,
	      99, KRCORE_WR_SIGNALED);
	tp_push(b, wr, 1);
	tp_wr(wr, KRCORE_WR_READ, bufa, mra.lkey, 8, raddr, rkey ^ 0x5a5a00,
	      1, KRCORE_WR_SIGNALED);
	tp_push(a, wr, 1);
	for (i = 0; i < n; i++)
		tp_wr(&wr[i], KRCORE_WR_READ, bufb, mrb.lkey, (uint32_t)len,
		      raddr, rkey, 100 + i, KRCORE_WR_SIGNALED);
	tp_push(b, wr, n);

	if (tp_pop(a, cqe, 1, 60000) == 1)
		bad_status = cqe[0].status;
	/*
	 * X is failing and recovery holds B on it for fault_recover_delay_ms
	 * (its VQs move after the re-posts): a probe of B in that window
	 * must say EAGAIN (try again), not ENOTCONN (B is not connected).
	 * Before X is marked dead its READ fails otherwise; once B has
	 * moved it succeeds: the first answer that is one of the three.
	 */
	for (t = tp_now_ms(); tp_now_ms() - t < 20000; usleep(20000)) {
		struct krcore_probe pr;

		probe = krc_probe(b, &pr);
		if (!probe || probe == -EAGAIN || probe == -ENOTCONN)
			break;
	}
	n++;	/* the first one too */
	got = tp_pop(b, cqe, n, 120000);
	for (i = 0; i < got; i++) {
		if (cqe[i].status == KRCORE_WC_SUCCESS)
			ok++;
		else
			failed++;
	}
	/* Every READ wrote the same bytes: the server's first MIB MiB. */
	for (i = 0; ok && i < len; i++)
		if (bufb[i] != tp_pattern(i))
			bad_data++;
	printf("evict_race: bad=%u ok=%u failed=%u data_bad=%u missing=%u probe=%d\n",
	       bad_status, ok, failed, bad_data, n - got, probe);
	krc_vq_close(a);
	krc_vq_close(b);
	return bad_status == KRCORE_WC_REM_ACCESS_ERR && got == n &&
	       !bad_data ? 0 : 1;
}
