// SPDX-License-Identifier: BSD-2-Clause
/*
 * dg_once - one 8-byte READ from a new VQ, timed: for the datagram path's
 * tests (a silent peer must fail it in bounded time).
 *
 *   dg_once ADDR INFO    INFO holds "addr rkey" (hex) of the peer's buffer
 *
 * Prints the path, the completion status and the milliseconds from the
 * post to the completion. Exit 0: success; 3: the READ completed with an
 * error (its status printed); 1: anything else (no completion at all in
 * 120 s, a failed call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libkrcore.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
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
	char path[128];
	unsigned int k;
	double t0;
	FILE *f;
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: dg_once ADDR INFO\n");
		return 1;
	}
	f = fopen(argv[2], "r");
	if (!f || fscanf(f, "%llx %x", &a, &k) != 2) {
		fprintf(stderr, "dg_once: no info in %s\n", argv[2]);
		return 1;
	}
	fclose(f);
	if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, argv[1], 0, &qc) < 0 ||
	    krc_reg_mr(vq, &buf, sizeof(buf), KRCORE_ACCESS_LOCAL_WRITE,
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
