// SPDX-License-Identifier: BSD-2-Clause
/*
 * krc_lmr_counter - a counter in memory on another node, shared by
 * processes on any nodes: one process allocates it and hands its key to
 * the others (a file here), each adds with the owner's RNIC atomics.
 *
 *   krc_lmr_counter hold NODE FILE   allocate the counter on NODE, write
 *                                    "NODE ADDR RKEY" to FILE, wait for
 *                                    SIGTERM, print "final N", free it
 *   krc_lmr_counter add FILE N       add 1 to it N times, print the last
 *                                    value seen
 *
 * The key is a capability: whoever holds it may do what the region's
 * rights allow, until the holder frees the region; then it is refused.
 *
 * Build: cc krc_lmr_counter.c $(pkg-config --cflags --libs libkrcore)
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libkrcore.h>

static int fail(const char *what)
{
	fprintf(stderr, "krc_lmr_counter: %s: %s\n", what, krc_errmsg());
	return 1;
}

/* A VQ connected to @node, and 8 registered bytes for atomic results. */
static int open_vq(const char *node, struct krc_vq **vq, uint64_t **word,
		   struct krc_mr *mr)
{
	struct krcore_qconnect qc;

	*word = aligned_alloc(4096, 4096);
	if (!*word || krc_vq_open(vq) || krc_qconnect(*vq, node, 0, &qc) ||
	    krc_reg_mr(*vq, *word, 4096, KRCORE_ACCESS_LOCAL_WRITE, mr))
		return -1;
	return 0;
}

static int hold(const char *node, const char *file)
{
	struct krc_lmr lmr;
	struct krc_vq *vq;
	struct krc_mr mr;
	uint64_t *word;
	sigset_t term;
	FILE *f;
	int sig;

	/* SIGTERM waits for sigwait() below, from now on. */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (open_vq(node, &vq, &word, &mr))
		return fail("connect");
	if (krc_lmr_alloc(vq, node, 4096, KRCORE_ACCESS_REMOTE_READ |
			  KRCORE_ACCESS_REMOTE_WRITE | KRCORE_ACCESS_REMOTE_ATOMIC,
			  &lmr))
		return fail("alloc");
	f = fopen(file, "w");
	if (!f)
		return 1;
	fprintf(f, "%s %" PRIx64 " %x\n", node, lmr.addr, lmr.rkey);
	fclose(f);
	printf("holding\n");
	fflush(stdout);
	sigwait(&term, &sig);
	if (krc_lmr_read(vq, &lmr, 0, word, mr.lkey, 8))
		return fail("read");
	printf("final %" PRIu64 "\n", *word);
	return krc_lmr_free(vq, &lmr) ? fail("free") : 0;
}

static int add(const char *file, long n)
{
	struct krc_lmr lmr;
	struct krc_vq *vq;
	struct krc_mr mr;
	uint64_t *word;
	char node[64];
	FILE *f = fopen(file, "r");
	long i;

	memset(&lmr, 0, sizeof(lmr));
	if (!f || fscanf(f, "%63s %" SCNx64 " %x", node, &lmr.addr, &lmr.rkey) != 3)
		return 1;
	fclose(f);
	lmr.length = 4096;
	if (open_vq(node, &vq, &word, &mr))
		return fail("connect");
	for (i = 0; i < n; i++)
		if (krc_lmr_faa(vq, &lmr, 0, 1, word, mr.lkey))
			return fail("add");
	printf("added %ld, last seen %" PRIu64 "\n", n, *word + 1);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "add"))
		return add(argv[2], atol(argv[3]));
	fprintf(stderr, "usage: krc_lmr_counter hold NODE FILE | add FILE N\n");
	return 2;
}
