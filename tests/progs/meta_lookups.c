// SPDX-License-Identifier: BSD-2-Clause
/*
 * meta_lookups - many MetaServer lookups of random entries of a table
 * filled with synthetic cards (the MetaServer host's test_meta_fill=N
 * registers 10.200.0.0 + i for i < N).
 *
 *   meta_lookups N COUNT SEED
 * Looks up COUNT random filled addresses without caching (every lookup
 * READs the table) and COUNT / 10 addresses just past the filled range
 * (each must be ENXIO). Checks every card found is the one registered at
 * that address. Prints key=value lines: lookups, one_read, two_reads,
 * more_reads, max_reads, reads (total), wrong (cards that are not the
 * address's), errors (failed lookups of filled entries), misses (ENXIO
 * of unfilled ones), miss_reads (their READs), miss_errors (other
 * outcomes for those). Exit 0 if
 * every call could be made, whatever the counts: the test judges them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkrcore.h"
#include "meta_fill.h"

int main(int argc, char **argv)
{
	unsigned long one = 0, two = 0, more = 0, max = 0, reads = 0;
	unsigned long wrong = 0, errors = 0, misses = 0, miss_errors = 0;
	unsigned long miss_reads = 0;
	unsigned int n, count, k, i;
	struct krcore_lookup lk;
	struct krc_vq *vq;
	char addr[32];
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: meta_lookups N COUNT SEED\n");
		return 2;
	}
	n = (unsigned int)strtoul(argv[1], NULL, 0);
	count = (unsigned int)strtoul(argv[2], NULL, 0);
	srandom((unsigned int)strtoul(argv[3], NULL, 0));
	if (!n || n > (1U << 20) - count / 10) {
		fprintf(stderr, "meta_lookups: N out of range\n");
		return 2;
	}
	if (krc_vq_open(&vq) < 0) {
		fprintf(stderr, "meta_lookups: %s\n", krc_errmsg());
		return 1;
	}
	for (k = 0; k < count; k++) {
		i = (unsigned int)random() % n;
		krc_fill_addr(i, addr, sizeof(addr));
		ret = krc_lookup(vq, addr, KRCORE_LOOKUP_F_NOCACHE, &lk);
		if (ret < 0) {
			if (errors++ < 5)
				fprintf(stderr, "meta_lookups: %s: %s\n", addr,
					krc_errmsg());
			continue;
		}
		if (!krc_fill_card_ok(&lk.card, i))
			wrong++;
		reads += lk.reads;
		if (lk.reads == 1)
			one++;
		else if (lk.reads == 2)
			two++;
		else
			more++;
		if (lk.reads > max)
			max = lk.reads;
	}
	for (k = 0; k < count / 10; k++) {
		krc_fill_addr(n + k, addr, sizeof(addr));
		ret = krc_lookup(vq, addr, KRCORE_LOOKUP_F_NOCACHE, &lk);
		miss_reads += lk.reads;
		if (ret == -ENXIO)
			misses++;
		else
			miss_errors++;
	}
	krc_vq_close(vq);
	printf("lookups=%u\none_read=%lu\ntwo_reads=%lu\nmore_reads=%lu\n"
	       "max_reads=%lu\nreads=%lu\nwrong=%lu\nerrors=%lu\nmisses=%lu\n"
	       "miss_reads=%lu\nmiss_errors=%lu\n", count, one, two, more, max,
	       reads, wrong, errors, misses, miss_reads, miss_errors);
	return 0;
}
