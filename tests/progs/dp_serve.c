// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_serve - the other end of the data-plane tests: a process that
 * registers a 4 MiB buffer (REMOTE_READ/WRITE/ATOMIC; tp_pattern() in
 * its first half), publishes it in INFO ("addr rkey") and serves until
 * INFO.stop exists. The scenarios (dp_rw, dp_steady, ...) and other
 * programs of tests/progs READ, WRITE and update it from other nodes.
 *
 *   dp_serve INFO
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dp/helpers.h"

static int serve(const char *info)
{
	char stop[512];
	struct krc_vq *vq;
	struct krc_mr mr;
	struct stat st;
	uint8_t *buf;
	uint64_t i;

	if (krc_vq_open(&vq) < 0) {
		fprintf(stderr, DP_TAG ": %s\n", krc_errmsg());
		return 1;
	}
	buf = tp_xalloc(SRV_MR_SIZE);
	for (i = 0; i < HALF; i++)
		buf[i] = tp_pattern(i);
	if (krc_reg_mr(vq, buf, SRV_MR_SIZE, KRCORE_ACCESS_LOCAL_WRITE |
		       KRCORE_ACCESS_REMOTE_READ | KRCORE_ACCESS_REMOTE_WRITE |
		       KRCORE_ACCESS_REMOTE_ATOMIC, &mr) < 0) {
		fprintf(stderr, DP_TAG ": %s\n", krc_errmsg());
		return 1;
	}
	if (dp_put_info(info, buf, mr.rkey))
		return 1;
	printf(DP_TAG ": serving 4 MiB at %p rkey %#x\n", (void *)buf, mr.rkey);
	fflush(stdout);
	snprintf(stop, sizeof(stop), "%s.stop", info);
	while (stat(stop, &st) != 0)
		usleep(200000);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return dp_usage("dp_serve INFO");
	return serve(argv[1]);
}
