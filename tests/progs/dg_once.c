// SPDX-License-Identifier: BSD-2-Clause
/*
 * dg_once - one 8-byte READ from a new VQ, timed: for the datagram path's
 * tests (a silent peer must fail it in bounded time).
 *
 *   dg_once ADDR INFO    INFO holds "addr rkey" (hex) of the peer's buffer
 *                        (dp_serve: 4 MiB, REMOTE_READ/WRITE/ATOMIC)
 *
 * Prints the path, the completion status and the milliseconds from the
 * post to the completion. Exit 0: success; 3: the READ completed with an
 * error (its status printed); 1: anything else (no completion at all in
 * 120 s, a failed call).
 *
 *   dg_once ADDR INFO seq N
 *       N rounds of one batch [WRITE i, READ it back, FAA +1] on a new VQ,
 *       each checked: the READ returns i (the WRITE before it executed
 *       first), the FAA returns one more than the round before (exactly
 *       once, in order). Counts the rounds made on the datagram path and
 *       on RC (the VQ moves when RC is ready); prints both. Exit 0 only
 *       if every round held.
 *
 *   dg_once ADDR INFO split N
 *       N rounds, each on a new VQ, of a 64 KiB READ (many datagrams)
 *       whose first KiB lies before the peer's buffer: its first segment
 *       fails, the later ones succeed. Odd rounds wait for it: exactly
 *       one completion, REM_ACCESS_ERR, then an 8-byte READ on the same
 *       VQ succeeds; even rounds close the VQ at once, with the request's
 *       later datagrams still in flight (the kernel must keep the VQ
 *       until the last of them is answered). Exit 0 only if every round
 *       held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libkrcore.h"
#include "round.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Is @vq (connected to @gid) on the datagram path now? */
static int on_dgram(struct krc_vq *vq, const uint8_t gid[16])
{
	struct krcore_peer_info pi;
	unsigned int i;

	for (i = 0; krc_peer_info(vq, i, &pi) == 0; i++)
		if (!memcmp(pi.card.gid, gid, 16))
			return pi.dgram_vqs > 0;
	return 0;
}

static int do_seq(struct krc_vq *vq, const struct krcore_qconnect *qc,
		  uint64_t a, uint32_t k, unsigned int n)
{
	static uint64_t buf[3];
	unsigned int i, dg = 0, rc = 0, bad = 0;
	uint64_t base = 0, faa;
	struct krc_mr mr;
	char who[48];
	int r;

	if (krc_reg_mr(vq, buf, sizeof(buf), KRCORE_ACCESS_LOCAL_WRITE,
		       &mr) < 0) {
		fprintf(stderr, "dg_once: %s\n", krc_errmsg());
		return 1;
	}
	for (i = 0; i < n && bad < 5; i++) {
		if (on_dgram(vq, qc->card.gid))
			dg++;
		else
			rc++;
		snprintf(who, sizeof(who), "dg_once: round %u", i);
		r = round_run(who, vq, buf, mr.lkey, a, k, 0x5eed0000ULL + i,
			      &faa);
		if (r < 0)
			return 1;
		bad += r;
		if (!i) {
			base = faa;
		} else if (faa != base + i) {
			fprintf(stderr, "%s: FAA returned %llu, expected %llu\n",
				who, (unsigned long long)faa,
				(unsigned long long)(base + i));
			bad++;
		}
	}
	printf("dg_once: %u rounds, %u on datagrams, %u on RC, %u wrong\n",
	       i, dg, rc, bad);
	return bad ? 2 : 0;
}

#define SPLIT_LEN	(64u * 1024)

static int do_split(const char *addr, uint64_t a, uint32_t k, unsigned int n)
{
	static uint8_t buf[SPLIT_LEN];
	struct krcore_qconnect qc;
	struct krcore_cqe cqe[2];
	struct krcore_wr wr;
	unsigned int i, bad = 0;
	struct krc_mr mr;
	struct krc_vq *vq;
	int m;

	for (i = 0; i < n; i++) {
		if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, addr, 0, &qc) < 0 ||
		    krc_reg_mr(vq, buf, sizeof(buf), KRCORE_ACCESS_LOCAL_WRITE,
			       &mr) < 0) {
			fprintf(stderr, "dg_once: split %u: %s\n", i,
				krc_errmsg());
			return 1;
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1;
		wr.opcode = KRCORE_WR_READ;
		wr.flags = KRCORE_WR_SIGNALED;
		wr.num_sge = 1;
		wr.remote_addr = a - 1024;
		wr.rkey = k;
		wr.sg_list[0].addr = (uintptr_t)buf;
		wr.sg_list[0].length = SPLIT_LEN;
		wr.sg_list[0].lkey = mr.lkey;
		if (krc_qpush(vq, &wr, 1) != 1) {
			fprintf(stderr, "dg_once: split %u: %s\n", i,
				krc_errmsg());
			return 1;
		}
		if (i % 2 == 0) {
			krc_vq_close(vq);	/* its datagrams still out */
			continue;
		}
		m = krc_qpop_wait(vq, cqe, 2, 60000);
		if (m != 1 || cqe[0].wr_id != 1 ||
		    cqe[0].status != KRCORE_WC_REM_ACCESS_ERR) {
			fprintf(stderr, "dg_once: split %u: %d completions, first %s\n",
				i, m, m > 0 ? krc_wc_status_str(cqe[0].status) :
				"none");
			bad++;
		}
		/* No second completion for it, and the VQ goes on. */
		wr.wr_id = 2;
		wr.remote_addr = a;
		wr.sg_list[0].length = 8;
		if (krc_qpush(vq, &wr, 1) != 1) {
			fprintf(stderr, "dg_once: split %u: %s\n", i,
				krc_errmsg());
			return 1;
		}
		m = krc_qpop_wait(vq, cqe, 2, 60000);
		if (m != 1 || cqe[0].wr_id != 2 || cqe[0].status) {
			fprintf(stderr, "dg_once: split %u: then %d, wr_id %llu %s\n",
				i, m, m > 0 ? (unsigned long long)cqe[0].wr_id : 0ULL,
				m > 0 ? krc_wc_status_str(cqe[0].status) : "none");
			bad++;
		}
		krc_vq_close(vq);
	}
	printf("dg_once: split: %u rounds, %u wrong\n", i, bad);
	return bad ? 2 : 0;
}

int main(int argc, char **argv)
{
	static uint64_t buf;
	struct krcore_qconnect qc;
	unsigned long long a;
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	struct krc_mr mr;
	struct krc_vq *vq;
	const char *mode;
	char path[128];
	unsigned int k;
	double t0;
	FILE *f;
	int n;

	mode = argc == 5 ? argv[3] : "";
	if (argc != 3 && strcmp(mode, "seq") && strcmp(mode, "split")) {
		fprintf(stderr, "usage: dg_once ADDR INFO [seq N | split N]\n");
		return 1;
	}
	f = fopen(argv[2], "r");
	if (!f || fscanf(f, "%llx %x", &a, &k) != 2) {
		fprintf(stderr, "dg_once: no info in %s\n", argv[2]);
		return 1;
	}
	fclose(f);
	if (!strcmp(mode, "split"))
		return do_split(argv[1], a, k, (unsigned int)atoi(argv[4]));
	if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, argv[1], 0, &qc) < 0) {
		fprintf(stderr, "dg_once: %s\n", krc_errmsg());
		return 1;
	}
	if (argc == 5) {
		printf("dg_once: path %s\n",
		       krc_path_str(qc.path, path, sizeof(path)));
		return do_seq(vq, &qc, a, k, (unsigned int)atoi(argv[4]));
	}
	if (krc_reg_mr(vq, &buf, sizeof(buf), KRCORE_ACCESS_LOCAL_WRITE,
		       &mr) < 0) {
		fprintf(stderr, "dg_once: %s\n", krc_errmsg());
		return 1;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = KRCORE_WR_READ;
	wr.flags = KRCORE_WR_SIGNALED;
	wr.num_sge = 1;
	wr.remote_addr = a;
	wr.rkey = k;
	wr.sg_list[0].addr = (uintptr_t)&buf;
	wr.sg_list[0].length = sizeof(buf);
	wr.sg_list[0].lkey = mr.lkey;
	t0 = now_ms();
	if (krc_qpush(vq, &wr, 1) != 1) {
		fprintf(stderr, "dg_once: %s\n", krc_errmsg());
		return 1;
	}
	n = krc_qpop_wait(vq, &cqe, 1, 120000);
	if (n != 1) {
		fprintf(stderr, "dg_once: no completion: %s\n",
			n < 0 ? krc_errmsg() : "timeout");
		return 1;
	}
	printf("dg_once: path %s, %s after %.0f ms\n",
	       krc_path_str(qc.path, path, sizeof(path)),
	       krc_wc_status_str(cqe.status), now_ms() - t0);
	krc_vq_close(vq);
	return cqe.status ? 3 : 0;
}
