// SPDX-License-Identifier: BSD-2-Clause
/*
 * krc_lmr_workq - a work queue in memory on one node, guarded by a lock,
 * shared by worker processes on any nodes: each job is taken by exactly
 * one worker.
 *
 *   krc_lmr_workq hold NODE FILE N   allocate the queue on NODE with jobs
 *                                    1 .. N, write "NODE ADDR RKEY" to
 *                                    FILE, wait for SIGTERM, then print
 *                                    "done D sum S" and free it
 *   krc_lmr_workq work FILE          take jobs until the queue is empty,
 *                                    print how many it took
 *
 * The region: word 0 the lock, 8 the next job's index, 16 the number of
 * jobs, 24 the sum of the jobs done, 32 how many were done, jobs from 64.
 * Taking a job is a read and a write of the index under the lock; a job
 * done is counted with the owner's RNIC atomics.
 *
 * Build: cc krc_lmr_workq.c $(pkg-config --cflags --libs libkrcore)
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libkrcore.h>

#define LOCK	0
#define NEXT	8
#define COUNT	16
#define SUM	24
#define DONE	32
#define JOBS	64
#define SIZE	8192
#define MAXJOBS	512	/* one 4 KiB write fills them */

static int fail(const char *what)
{
	fprintf(stderr, "krc_lmr_workq: %s: %s\n", what, krc_errmsg());
	return 1;
}

/* A VQ connected to @node, and 4 KiB registered for the requests. */
static int open_vq(const char *node, struct krc_vq **vq, uint64_t **buf,
		   struct krc_mr *mr)
{
	struct krcore_qconnect qc;

	*buf = aligned_alloc(4096, 4096);
	if (!*buf || krc_vq_open(vq) || krc_qconnect(*vq, node, 0, &qc) ||
	    krc_reg_mr(*vq, *buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, mr))
		return -1;
	return 0;
}

static int hold(const char *node, const char *file, uint64_t n)
{
	struct krc_lmr q;
	struct krc_vq *vq;
	struct krc_mr mr;
	uint64_t *buf, i;
	sigset_t term;
	FILE *f;
	int sig;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (!n || n > MAXJOBS) {
		fprintf(stderr, "krc_lmr_workq: 1 .. %d jobs\n", MAXJOBS);
		return 2;
	}
	if (open_vq(node, &vq, &buf, &mr))
		return fail("connect");
	if (krc_lmr_alloc(vq, node, SIZE, KRCORE_ACCESS_REMOTE_READ |
			  KRCORE_ACCESS_REMOTE_WRITE | KRCORE_ACCESS_REMOTE_ATOMIC,
			  &q))
		return fail("alloc");
	for (i = 0; i < n; i++)		/* the jobs: 1 .. n */
		buf[i] = i + 1;
	if (krc_lmr_write(vq, &q, JOBS, buf, mr.lkey, 8 * n))
		return fail("write");
	buf[0] = n;
	if (krc_lmr_write(vq, &q, COUNT, buf, mr.lkey, 8))
		return fail("write");
	f = fopen(file, "w");
	if (!f)
		return 1;
	fprintf(f, "%s %" PRIx64 " %x\n", node, q.addr, q.rkey);
	fclose(f);
	printf("holding %" PRIu64 " jobs\n", n);
	fflush(stdout);
	sigwait(&term, &sig);
	if (krc_lmr_read(vq, &q, SUM, buf, mr.lkey, 16))
		return fail("read");
	printf("done %" PRIu64 " sum %" PRIu64 "\n", buf[1], buf[0]);
	return krc_lmr_free(vq, &q) ? fail("free") : 0;
}

static int work(const char *file)
{
	uint64_t *buf, job, taken = 0;
	struct krc_lock lk;
	struct krc_lmr q;
	struct krc_vq *vq;
	struct krc_mr mr;
	char node[64];
	FILE *f = fopen(file, "r");

	memset(&q, 0, sizeof(q));
	if (!f || fscanf(f, "%63s %" SCNx64 " %x", node, &q.addr, &q.rkey) != 3)
		return 1;
	fclose(f);
	q.length = SIZE;
	if (krc_gid_parse(node, q.gid) || open_vq(node, &vq, &buf, &mr))
		return fail("connect");
	for (;;) {
		/* Take the next job under the lock: index and count at once. */
		if (krc_lock(vq, &q, LOCK, 30000, &lk))
			return fail("lock");
		if (krc_lmr_read(vq, &q, NEXT, buf, mr.lkey, 16))
			return fail("read");
		if (buf[0] == buf[1]) {
			krc_unlock(vq, &lk);
			break;
		}
		job = buf[0]++;
		if (krc_lmr_write(vq, &q, NEXT, buf, mr.lkey, 8) ||
		    krc_unlock(vq, &lk))
			return fail("take");
		/* The job itself: read it, add it to the sum, count it. */
		if (krc_lmr_read(vq, &q, JOBS + 8 * job, buf, mr.lkey, 8))
			return fail("read job");
		if (krc_lmr_faa(vq, &q, SUM, buf[0], buf + 1, mr.lkey) ||
		    krc_lmr_faa(vq, &q, DONE, 1, buf + 1, mr.lkey))
			return fail("done");
		taken++;
	}
	printf("took %" PRIu64 "\n", taken);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3], strtoull(argv[4], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "work"))
		return work(argv[2]);
	fprintf(stderr, "usage: krc_lmr_workq hold NODE FILE N | work FILE\n");
	return 2;
}
