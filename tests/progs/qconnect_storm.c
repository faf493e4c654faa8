// SPDX-License-Identifier: BSD-2-Clause
/*
 * qconnect_storm - many processes qconnect fresh VQs to one node.
 *
 *   qconnect_storm ADDR PROCS PER_PROC [HOLD]
 * Each of PROCS processes opens PER_PROC VQs one after another and
 * connects each to ADDR (HOLD=1: keeps them all open until the end, else
 * closes each at once). Prints how many took each path, how many failed,
 * the pooled connections used and the kernel-side time of pooled connects
 * (median, p99), then one line of totals for the tests:
 *   totals: qconnects=N failed=N conns=N pooled=N handshakes=N
 * A child that cannot run its qconnects exits non-zero and counts as
 * failed. Exit 0 only if every qconnect succeeded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libkrcore.h"

struct result {
	int ret;
	uint32_t path;
	uint32_t conn_id;
	uint64_t elapsed_ns;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Returns how many of the @n qconnects failed. */
static int worker(const char *addr, struct result *res, int n, int hold)
{
	struct krc_vq **vqs = calloc((size_t)n, sizeof(*vqs));
	struct krcore_qconnect qc;
	int i, bad = 0;

	if (!vqs)
		return n;
	for (i = 0; i < n; i++) {
		memset(&qc, 0, sizeof(qc));
		res[i].ret = krc_vq_open(&vqs[i]);
		if (res[i].ret == 0)
			res[i].ret = krc_qconnect(vqs[i], addr, 0, &qc);
		if (res[i].ret < 0) {
			fprintf(stderr, "qconnect_storm: %s\n", krc_errmsg());
			bad++;
		} else {
			res[i].path = qc.path;
			res[i].conn_id = qc.conn_id;
			res[i].elapsed_ns = qc.elapsed_ns;
		}
		if (!hold) {
			krc_vq_close(vqs[i]);
			vqs[i] = NULL;
		}
	}
	for (i = 0; i < n; i++)
		krc_vq_close(vqs[i]);
	free(vqs);
	return bad;
}

int main(int argc, char **argv)
{
	int procs, per, hold, total, p, i, failed = 0, status, dead = 0;
	unsigned int by_path[64] = { 0 };
	uint64_t *pooled;
	struct result *res;
	int npooled = 0, nconns = 0, nhs = 0, k;
	uint32_t conns[16];
	char path[64];

	if (argc < 4) {
		fprintf(stderr, "usage: qconnect_storm ADDR PROCS PER_PROC [HOLD]\n");
		return 2;
	}
	procs = atoi(argv[2]);
	per = atoi(argv[3]);
	hold = argc > 4 ? atoi(argv[4]) : 0;
	total = procs * per;
	if (procs <= 0 || per <= 0)
		return 2;
	res = mmap(NULL, sizeof(*res) * (size_t)total, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return 1;
	/* A child that never gets to a qconnect leaves it failed. */
	for (i = 0; i < total; i++)
		res[i].ret = -ECHILD;
	for (p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(worker(argv[1], res + p * per, per, hold) ? 1 : 0);
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			dead++;
	pooled = calloc((size_t)total, sizeof(*pooled));
	if (!pooled)
		return 1;
	for (i = 0; i < total; i++) {
		if (res[i].ret < 0) {
			failed++;
			continue;
		}
		by_path[res[i].path & 63]++;
		if (res[i].path & KRCORE_PATH_HANDSHAKE)
			nhs++;
		for (k = 0; k < nconns && conns[k] != res[i].conn_id; k++)
			;
		if (k == nconns && nconns < 16)
			conns[nconns++] = res[i].conn_id;
		if (res[i].path & KRCORE_PATH_POOLED)
			pooled[npooled++] = res[i].elapsed_ns;
	}
	printf("qconnect_storm: %d processes x %d qconnects to %s: %d failed, %d children failed\n",
	       procs, per, argv[1], failed, dead);
	for (i = 0; i < 64; i++)
		if (by_path[i])
			printf("  path %-28s %u\n",
			       krc_path_str((uint32_t)i, path, sizeof(path)),
			       by_path[i]);
	printf("  pooled connections used: %d\n", nconns);
	if (npooled) {
		qsort(pooled, (size_t)npooled, sizeof(*pooled), cmp_u64);
		printf("  pooled qconnect in the kernel: median %llu ns, p99 %llu ns\n",
		       (unsigned long long)pooled[npooled / 2],
		       (unsigned long long)pooled[(npooled * 99) / 100]);
	}
	free(pooled);
	printf("totals: qconnects=%d failed=%d conns=%d pooled=%d handshakes=%d\n",
	       total, failed, nconns, npooled, nhs);
	return failed || dead ? 1 : 0;
}
