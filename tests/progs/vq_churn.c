// SPDX-License-Identifier: BSD-2-Clause
/*
 * vq_churn - open and close many virtual queues from many processes.
 *
 *   vq_churn PROCS ROUNDS HELD
 * Each of PROCS processes opens HELD VQs at once, queries each of them and
 * closes them, ROUNDS times. Exit 0 only if every call succeeded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libkrcore.h"

static int churn(int rounds, int held)
{
	struct krc_vq **vqs = calloc((size_t)held, sizeof(*vqs));
	struct krcore_card card;
	int r, i, ret;

	if (!vqs)
		return 1;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < held; i++) {
			ret = krc_vq_open(&vqs[i]);
			if (ret < 0) {
				fprintf(stderr, "vq_churn: open: %s\n", krc_errmsg());
				return 1;
			}
		}
		for (i = 0; i < held; i++) {
			ret = krc_query_card(vqs[i], &card);
			if (ret < 0) {
				fprintf(stderr, "vq_churn: card: %s\n", krc_errmsg());
				return 1;
			}
		}
		for (i = 0; i < held; i++)
			krc_vq_close(vqs[i]);
	}
	free(vqs);
	return 0;
}

int main(int argc, char **argv)
{
	int procs, rounds, held, p, status, failed = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: vq_churn PROCS ROUNDS HELD\n");
		return 2;
	}
	procs = atoi(argv[1]);
	rounds = atoi(argv[2]);
	held = atoi(argv[3]);
	for (p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(churn(rounds, held));
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	printf("vq_churn: %d processes x %d rounds x %d VQs: %d failed\n",
	       procs, rounds, held, failed);
	return failed ? 1 : 0;
}
