// SPDX-License-Identifier: BSD-2-Clause
/*
 * meta_bench - the MetaServer (KRCore, figure 9): how long a member
 * node's lookup of a card in the MetaServer's table takes, and how many
 * lookups per second the node makes, with the table more or less full.
 *
 * The MetaServer host registers N synthetic cards when root writes N to
 * /sys/module/krcore/parameters/test_meta_fill, at the addresses
 * 10.(200 + (i >> 16)).((i >> 8) & 255).(i & 255) for i < N. Every
 * lookup here is of one of them, chosen at random, with
 * KRCORE_LOOKUP_F_NOCACHE: the kernel READs the table (one READ in the
 * common case) whatever its cache holds; the card found is checked
 * against the one registered at that address.
 *
 *   meta_bench lat N COUNT
 *       one process, 10 lookups to warm up (not timed), then COUNT
 *       lookups one after the other, each timed from the call to its
 *       return (CLOCK_MONOTONIC): the median and p99, the kernel's part
 *       (the lookup's elapsed_ns), the READs each took.
 *   meta_bench rate N SECS P...
 *       for each P: P processes (forked; each opens its VQ and makes one
 *       lookup to warm up) start together at a pipe, each looks up for
 *       SECS seconds; the node's lookups per second: every lookup made
 *       over the time from the start to the last process's end.
 *
 * Occupancy is N as a share of 100,000 cards, the table's design point
 * (the default table of 131,072 slots holds those at 76%); the table
 * also holds the real members' cards. With KRC_BENCH_SAMPLES set, the
 * samples go there for bench/krbench_report, x the occupancy in %, one
 * sample per timed lookup: figure meta_lat (method krcore_lookup, the
 * call's time; krcore_lookup_kernel, its kernel part), meta_reads
 * (method krcore_lookup, the READs the lookup took: the mean is the
 * READs per lookup); and meta_rate (method lookup_OCCpct, x the
 * processes, one sample per P). A lat run, or a rate at one P, in which
 * a lookup failed or found another card writes no sample.
 *
 * Exit 0; 1 if a lookup failed or found another card than the one
 * registered, or the VQ could not be opened; 2 on a usage error.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libkrcore.h"
#include "meta_fill.h"
#include "bench.h"

#define META_CARDS	100000		/* occupancy 100% */
#define FILL_MAX	1048576		/* 2^20, test_meta_fill's bound */
#define COUNT_MAX	10000000
#define PROCS_MAX	64
#define WARMUP		10
#define ERRS_SHOWN	5		/* failures on stderr, per process */

/* What a process's lookups came to. */
struct tally {
	unsigned long lookups;	/* made */
	unsigned long errors;	/* failed */
	unsigned long wrong;	/* succeeded with another card */
	unsigned long reads;	/* READs of the successful ones */
	unsigned long one, two, more, max;
};

/*
 * One uncached lookup of the filled entry @i, counted in @t; its time in
 * us from the call to the return in *@us, its kernel part in *@kus and
 * the READs it took in *@reads. True if it found the card registered
 * there.
 */
static bool lookup_one(struct krc_vq *vq, unsigned int i, struct tally *t,
		       double *us, double *kus, unsigned int *reads)
{
	struct krcore_lookup lk = {};
	char addr[32];
	double t0;
	int ret;

	krc_fill_addr(i, addr, sizeof(addr));
	t0 = now_us();
	ret = krc_lookup(vq, addr, KRCORE_LOOKUP_F_NOCACHE, &lk);
	*us = now_us() - t0;
	*kus = lk.elapsed_ns / 1e3;
	*reads = lk.reads;
	t->lookups++;
	if (ret < 0) {
		if (t->errors++ < ERRS_SHOWN)
			fprintf(stderr, "meta_bench: %s: %s\n", addr,
				krc_errmsg());
		return false;
	}
	if (!krc_fill_card_ok(&lk.card, i)) {
		if (t->wrong++ < ERRS_SHOWN)
			fprintf(stderr, "meta_bench: %s: another card found\n",
				addr);
		return false;
	}
	t->reads += lk.reads;
	if (lk.reads <= 1)
		t->one++;
	else if (lk.reads == 2)
		t->two++;
	else
		t->more++;
	if (lk.reads > t->max)
		t->max = lk.reads;
	return true;
}

static bool lookup_random(struct krc_vq *vq, unsigned int n, struct tally *t,
			  double *us, double *kus, unsigned int *reads)
{
	return lookup_one(vq, (unsigned int)random() % n, t, us, kus, reads);
}

/* The occupancy, N as a share of META_CARDS, as an x value: "1", "50". */
static void occupancy(unsigned int n, char *buf, size_t len)
{
	snprintf(buf, len, "%g", n * 100.0 / META_CARDS);
}

/* The table's slots and the peers this node holds, or 0 when unknown. */
static void node_info(struct krc_vq *vq, unsigned int *slots,
		      unsigned int *peers)
{
	struct krcore_node_info ni;

	*slots = 0;
	*peers = 0;
	if (krc_node_info(vq, &ni) < 0)
		return;
	*slots = ni.meta_nslots;
	*peers = ni.peers;
}

static void header(unsigned int n, unsigned int slots, const char *what)
{
	char occ[16];

	occupancy(n, occ, sizeof(occ));
	printf("MetaServer %s: %u synthetic cards (%s%% of %u", what, n, occ,
	       META_CARDS);
	if (slots)
		printf("; %.1f%% of the table's %u slots", n * 100.0 / slots,
		       slots);
	printf("), uncached lookups of random ones\n");
}

static int run_lat(unsigned int n, unsigned int count)
{
	double *lat = calloc(count, sizeof(double));
	double *klat = calloc(count, sizeof(double));
	unsigned int *nreads = calloc(count, sizeof(unsigned int));
	unsigned int k, ok = 0, slots, peers, rd;
	struct tally w = {}, t = {};
	char x[16], occ[24];
	struct krc_vq *vq;
	double us, kus;
	int ret = 0;

	if (!lat || !klat || !nreads) {
		fprintf(stderr, "meta_bench: out of memory\n");
		ret = 1;
		goto out;
	}
	if (krc_vq_open(&vq) < 0) {
		fprintf(stderr, "meta_bench: %s\n", krc_errmsg());
		ret = 1;
		goto out;
	}
	for (k = 0; k < WARMUP; k++)
		lookup_random(vq, n, &w, &us, &kus, &rd);
	for (k = 0; k < count; k++) {
		if (!lookup_random(vq, n, &t, &us, &kus, &rd))
			continue;
		lat[ok] = us;
		nreads[ok] = rd;
		klat[ok++] = kus;
	}
	node_info(vq, &slots, &peers);
	krc_vq_close(vq);

	if (t.errors || t.wrong || w.errors || w.wrong || !ok)
		ret = 1;
	occupancy(n, x, sizeof(x));
	bench_figure("meta_lat", "us", "occupancy_pct",
		     "MetaServer lookup latency (uncached, one process) vs table occupancy (% of 100000 cards)");
	bench_figure("meta_reads", "reads", "occupancy_pct",
		     "MetaServer READs per lookup (uncached, one process) vs table occupancy (% of 100000 cards)");
	for (k = 0; !ret && k < ok; k++) {
		bench_sample("meta_lat", "krcore_lookup", x, lat[k]);
		bench_sample("meta_lat", "krcore_lookup_kernel", x, klat[k]);
		bench_sample("meta_reads", "krcore_lookup", x, nreads[k]);
	}

	header(n, slots, "lookup latency");
	qsort(lat, ok, sizeof(double), cmp_d);
	qsort(klat, ok, sizeof(double), cmp_d);
	printf("  %-10s %10s %14s %14s %18s\n", "occupancy", "#lookups",
	       "median(us)", "p99(us)", "kernel median(us)");
	snprintf(occ, sizeof(occ), "%s%%", x);
	printf("  %-10s %10u %14.1f %14.1f %18.1f\n", occ, ok,
	       pct(lat, (int)ok, 0.5), pct(lat, (int)ok, 0.99),
	       pct(klat, (int)ok, 0.5));
	printf("  READs 1: %lu, 2: %lu, more: %lu, max %lu, %.3f per lookup\n",
	       t.one, t.two, t.more, t.max, ok ? (double)t.reads / ok : 0);
	printf("  failed %lu, another card %lu (warm-up: %lu, %lu)\n",
	       t.errors, t.wrong, w.errors, w.wrong);
	printf("  peers this node knows: %u\n", peers);
out:
	free(lat);
	free(klat);
	free(nreads);
	return ret;
}

/* What a process of a rate round hands back. */
struct proc_res {
	struct tally t;
	double end;		/* when it made its last lookup */
};

/*
 * @procs processes, forked, each with its VQ and one lookup made, wait
 * at a pipe; then each looks up random entries of @n for @secs seconds.
 * *@rate: every lookup made over the time from the start to the last
 * process's end; *@sum: their tallies. 0, or -1 if a process could not
 * run or a lookup failed.
 */
static int rate_round(unsigned int n, double secs, int procs, double *rate,
		      struct tally *sum)
{
	size_t len = sizeof(struct proc_res) * (size_t)procs;
	unsigned int seed = (unsigned int)time(NULL);
	struct bench_gate gate;
	int i, bad = 0;
	struct proc_res *shm;
	double t0, end = 0;
	pid_t pid;

	memset(sum, 0, sizeof(*sum));
	if (bench_gate_open(&gate, len))
		return -1;
	shm = gate.shm;
	for (i = 0; i < procs; i++) {
		pid = bench_gate_fork(&gate);
		if (pid < 0) {
			bad = 1;
			break;
		}
		if (pid == 0) {
			struct krc_vq *vq = NULL;
			struct tally warm = {};
			double us, kus, stop;
			unsigned int rd;
			bool ok;

			srandom(seed ^ (unsigned int)getpid());
			ok = krc_vq_open(&vq) >= 0;
			if (!ok)
				fprintf(stderr, "meta_bench: %s\n",
					krc_errmsg());
			else
				ok = lookup_random(vq, n, &warm, &us, &kus,
						   &rd);
			shm[i].t.errors = warm.errors;
			shm[i].t.wrong = warm.wrong;
			if (bench_gate_child(&gate))
				_exit(1);
			stop = now_us() + secs * 1e6;
			while (ok && now_us() < stop)
				lookup_random(vq, n, &shm[i].t, &us, &kus,
					      &rd);
			shm[i].end = now_us();
			krc_vq_close(vq);
			_exit(ok ? 0 : 1);
		}
	}
	if (bench_gate_run(&gate, &t0))
		bad = 1;
	for (i = 0; i < gate.forked; i++) {
		sum->lookups += shm[i].t.lookups;
		sum->errors += shm[i].t.errors;
		sum->wrong += shm[i].t.wrong;
		sum->reads += shm[i].t.reads;
		if (shm[i].end > end)
			end = shm[i].end;
	}
	bench_gate_close(&gate);
	*rate = end > t0 ? sum->lookups / ((end - t0) / 1e6) : 0;
	return bad || sum->errors || sum->wrong || !sum->lookups ? -1 : 0;
}

static int run_rate(unsigned int n, double secs, const int *procs, int np)
{
	unsigned int slots = 0, peers = 0;
	char x[8], method[40], occ[16];
	struct krc_vq *vq;
	struct tally t;
	int p, ret = 0;
	double rate;

	if (krc_vq_open(&vq) < 0) {
		fprintf(stderr, "meta_bench: %s\n", krc_errmsg());
		return 1;
	}
	node_info(vq, &slots, &peers);
	krc_vq_close(vq);
	occupancy(n, occ, sizeof(occ));
	snprintf(method, sizeof(method), "lookup_%spct", occ);
	bench_figure("meta_rate", "per_s", "procs",
		     "MetaServer lookups per second of a node (uncached) vs concurrent processes, per table occupancy");
	header(n, slots, "lookup rate");
	printf("  %g s per run, processes started together\n", secs);
	printf("  %-7s %14s %12s %14s %8s\n", "procs", "lookups/s",
	       "#lookups", "READs/lookup", "failed");
	for (p = 0; p < np; p++) {
		if (rate_round(n, secs, procs[p], &rate, &t)) {
			ret = 1;
			printf("  %-7d %14s %12lu %14s %8lu\n", procs[p], "-",
			       t.lookups, "-", t.errors + t.wrong);
			fprintf(stderr,
				"meta_bench: rate at %d processes failed\n",
				procs[p]);
			continue;
		}
		snprintf(x, sizeof(x), "%d", procs[p]);
		bench_sample("meta_rate", method, x, rate);
		printf("  %-7d %14.1f %12lu %14.3f %8lu\n", procs[p], rate,
		       t.lookups, (double)t.reads / t.lookups, 0UL);
	}
	return ret;
}

/* A whole number in [@min, @max], or -1. */
static long arg_num(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	return v;
}

static int bad_args(void)
{
	fprintf(stderr, "usage: meta_bench lat N COUNT\n"
		"       meta_bench rate N SECS P...\n"
		"  N: the cards test_meta_fill registered (1..%u)\n", FILL_MAX);
	return 2;
}

int main(int argc, char **argv)
{
	int procs[PROCS_MAX], np = 0, i;
	long n, count, p;
	double secs;
	char *end;

	if (argc < 4)
		return bad_args();
	n = arg_num(argv[2], 1, FILL_MAX);
	if (n < 0)
		return bad_args();
	if (argc == 4 && !strcmp(argv[1], "lat")) {
		count = arg_num(argv[3], 1, COUNT_MAX);
		if (count < 0)
			return bad_args();
		srandom((unsigned int)(time(NULL) ^ getpid()));
		return run_lat((unsigned int)n, (unsigned int)count);
	}
	if (argc < 5 || argc - 4 > PROCS_MAX || strcmp(argv[1], "rate"))
		return bad_args();
	secs = strtod(argv[3], &end);
	if (end == argv[3] || *end || !(secs > 0 && secs <= 3600))
		return bad_args();
	for (i = 4; i < argc; i++) {
		p = arg_num(argv[i], 1, PROCS_MAX);
		if (p < 0)
			return bad_args();
		procs[np++] = (int)p;
	}
	return run_rate((unsigned int)n, secs, procs, np);
}
