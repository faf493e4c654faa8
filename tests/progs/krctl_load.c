// SPDX-License-Identifier: BSD-2-Clause
/*
 * krctl_load - known traffic to one peer, for t_krctl: krctl must count it
 * exactly.
 *
 *   krctl_load reads ADDR INFO N SIZE     one VQ, N READs of SIZE bytes, one
 *                                         at a time, each waited for
 *   krctl_load run ADDR INFO SECONDS SIZE [STOP]
 *                                         one VQ, READs of SIZE bytes for
 *                                         SECONDS, or until the file STOP
 *                                         exists
 *
 * INFO is the "addr rkey" file of 'dp_serve' (a 4 MiB buffer). Prints
 * "posted N bytes B" (what it posted) and exits 0 only if every READ
 * completed successfully.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libkrcore.h"

#define SRV_SIZE	(4u << 20)

static int die(const char *what)
{
	fprintf(stderr, "krctl_load: %s: %s\n", what, krc_errmsg());
	return 1;
}

static int read_info(const char *path, unsigned long long *addr, unsigned int *rkey)
{
	FILE *f;
	int n, ok;

	for (n = 0; n < 600; n++) {
		f = fopen(path, "r");
		if (f) {
			ok = fscanf(f, "%llx %x", addr, rkey) == 2;
			fclose(f);
			if (ok)
				return 0;
		}
		usleep(100000);
	}
	fprintf(stderr, "krctl_load: no server info in %s\n", path);
	return -1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long raddr, posted = 0, count;
	const char *stop;
	struct krcore_qconnect qc;
	unsigned long size;
	struct krc_vq *vq;
	unsigned int rkey;
	bool timed;
	struct krc_mr mr;
	double end = 0;
	void *buf;
	int ret;

	if (argc == 6 && !strcmp(argv[1], "reads")) {
		timed = false;
	} else if ((argc == 6 || argc == 7) && !strcmp(argv[1], "run")) {
		timed = true;
	} else {
		fprintf(stderr, "usage: krctl_load reads ADDR INFO N SIZE\n"
			"       krctl_load run ADDR INFO SECONDS SIZE [STOP]\n");
		return 2;
	}
	stop = argc == 7 ? argv[6] : NULL;
	count = strtoull(argv[4], NULL, 10);
	size = strtoul(argv[5], NULL, 10);
	if (!size || size > SRV_SIZE) {
		fprintf(stderr, "krctl_load: SIZE from 1 to %u\n", SRV_SIZE);
		return 2;
	}
	if (read_info(argv[3], &raddr, &rkey) < 0)
		return 1;
	buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) {
		perror("krctl_load: mmap");
		return 1;
	}
	if (krc_vq_open(&vq) < 0)
		return die("open");
	if (krc_qconnect(vq, argv[2], 0, &qc) < 0)
		return die("qconnect");
	if (krc_reg_mr(vq, buf, size, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return die("reg_mr");
	if (timed)
		end = now() + (double)count;
	while (timed ? now() < end && !(stop && !access(stop, F_OK)) :
		       posted < count) {
		ret = krc_read_sync(vq, buf, mr.lkey, size, raddr, rkey, 10000);
		posted++;
		if (ret < 0) {
			fprintf(stderr, "krctl_load: READ %llu: %s\n", posted, krc_errmsg());
			return 1;
		}
	}
	printf("posted %llu bytes %llu\n", posted, posted * size);
	krc_dereg_mr(vq, &mr);
	krc_vq_close(vq);
	return 0;
}
