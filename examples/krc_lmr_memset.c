// SPDX-License-Identifier: BSD-2-Clause
/*
 * krc_lmr_memset - LITE's remote memset, in three calls: allocate memory
 * on another node, set all of it there, free it.
 *
 *   krc_lmr_memset NODE MIB VALUE
 *
 * Prints the first and last byte read back, then "ok".
 *
 * Build: cc krc_lmr_memset.c $(pkg-config --cflags --libs libkrcore)
 */
#include <stdio.h>
#include <stdlib.h>
#include <libkrcore.h>

int main(int argc, char **argv)
{
	struct krcore_qconnect qc;
	struct krc_lmr lmr;
	struct krc_vq *vq;
	struct krc_mr mr;
	unsigned char b[2];

	if (argc != 4) {
		fprintf(stderr, "usage: krc_lmr_memset NODE MIB VALUE\n");
		return 2;
	}
	if (krc_vq_open(&vq) ||
	    krc_lmr_alloc(vq, argv[1], strtoull(argv[2], NULL, 0) << 20,
			  KRCORE_ACCESS_REMOTE_READ | KRCORE_ACCESS_REMOTE_WRITE, &lmr) ||
	    krc_lmr_set(vq, &lmr, 0, atoi(argv[3]), lmr.length))
		goto fail;

	/* Read the ends back over a connection to that node. */
	if (krc_qconnect(vq, argv[1], 0, &qc) ||
	    krc_reg_mr(vq, b, sizeof(b), KRCORE_ACCESS_LOCAL_WRITE, &mr) ||
	    krc_lmr_read(vq, &lmr, 0, &b[0], mr.lkey, 1) ||
	    krc_lmr_read(vq, &lmr, lmr.length - 1, &b[1], mr.lkey, 1) ||
	    krc_lmr_free(vq, &lmr))
		goto fail;
	printf("first %d last %d\nok\n", b[0], b[1]);
	return 0;
fail:
	fprintf(stderr, "krc_lmr_memset: %s\n", krc_errmsg());
	return 1;
}
