// SPDX-License-Identifier: BSD-2-Clause
/*
 * fair_greedy - one process that keeps a peer's shared queue as full as
 * the kernel lets it (tests/cluster/t_fair.sh).
 *
 *   fair_greedy PEER INFO NVQ KB SECS
 *
 * NVQ VQs to PEER (INFO: its dp_serve buffer), each kept full of
 * READs of KB KiB for SECS seconds: whatever a qpush takes is posted, and
 * every completion is replaced at once. Prints once a second
 *   fair_greedy: t=S done=N MiB=M
 * and at the end
 *   fair_greedy: done=N failed=F MiB=M mib_per_s=R
 * It is meant to be killed part way too (SIGKILL: its VQs close with
 * requests in flight); SIGTERM ends it early as if SECS were over. Exit 0
 * if no READ failed.
 */
#include <poll.h>
#include <signal.h>

#include "tp.h"

#define MAX_VQ	16
#define BATCH	32

/* SIGTERM, held pending (blocked at the start): time to stop. */
static int term_pending(void)
{
	sigset_t set;

	return !sigpending(&set) && sigismember(&set, SIGTERM) == 1;
}

int main(int argc, char **argv)
{
	struct krcore_cqe cqe[BATCH];
	struct krcore_wr wr[BATCH];
	struct krc_vq *vq[MAX_VQ];
	struct krc_mr mr[MAX_VQ];
	uint64_t raddr, t0, next, done = 0, failed = 0, bytes = 0;
	unsigned int nvq, kb, secs, i, k;
	uint8_t *buf[MAX_VQ];
	uint32_t rkey;
	sigset_t term;

	if (argc != 6)
		tp_die("usage: fair_greedy PEER INFO NVQ KB SECS");
	nvq = (unsigned int)atoi(argv[3]);
	kb = (unsigned int)atoi(argv[4]);
	secs = (unsigned int)atoi(argv[5]);
	if (!nvq || nvq > MAX_VQ || !kb || kb * 1024u > TP_SRV_HALF)
		tp_die("fair_greedy: 1 <= NVQ <= %d, 1 <= KB <= %u", MAX_VQ,
		       TP_SRV_HALF / 1024);
	tp_read_info(argv[2], &raddr, &rkey);
	for (i = 0; i < nvq; i++) {
		vq[i] = tp_connect(argv[1], 0, NULL);
		/*
		 * A page more than a READ fills: the rxe of Linux 6.1 reads
		 * one pointer past an MR's page map when a copy ends at the
		 * end of a map of 256 pages (rxe_mr_copy; KASAN on the debug
		 * kernel), as a READ of 1 MiB into an MR of exactly 1 MiB does.
		 */
		buf[i] = tp_reg(vq[i], kb * 1024u + 4096, KRCORE_ACCESS_LOCAL_WRITE,
				&mr[i]);
	}
	t0 = tp_now_ms();
	next = t0 + 1000;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	while (!term_pending() && tp_now_ms() - t0 < (uint64_t)secs * 1000) {
		for (i = 0; i < nvq; i++) {
			int n;

			/* Post as many as the kernel takes. */
			for (k = 0; k < BATCH; k++)
				tp_wr(&wr[k], KRCORE_WR_READ, buf[i], mr[i].lkey,
				      kb * 1024u, raddr, rkey, k,
				      KRCORE_WR_SIGNALED);
			krc_qpush(vq[i], wr, BATCH);
			n = krc_qpop(vq[i], cqe, BATCH);
			for (k = 0; n > 0 && k < (unsigned int)n; k++) {
				if (cqe[k].status == KRCORE_WC_SUCCESS) {
					done++;
					bytes += kb * 1024u;
				} else {
					failed++;
				}
			}
		}
		poll(NULL, 0, 1);
		if (tp_now_ms() >= next) {
			printf("fair_greedy: t=%llu done=%llu MiB=%llu\n",
			       (unsigned long long)((tp_now_ms() - t0) / 1000),
			       (unsigned long long)done,
			       (unsigned long long)(bytes >> 20));
			fflush(stdout);
			next += 1000;
		}
	}
	printf("fair_greedy: done=%llu failed=%llu MiB=%llu mib_per_s=%.2f\n",
	       (unsigned long long)done, (unsigned long long)failed,
	       (unsigned long long)(bytes >> 20),
	       (double)bytes / (1 << 20) / ((tp_now_ms() - t0) / 1000.0));
	for (i = 0; i < nvq; i++)
		krc_vq_close(vq[i]);
	return failed ? 1 : 0;
}
