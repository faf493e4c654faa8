// SPDX-License-Identifier: BSD-2-Clause
/*
 * lmr_bench - remote memory and its locks (issue 27, "Benchmark"), each
 * beside what a process does without them, in the same run. bench/lmr.sh
 * runs it on three nodes (the memory on node2) and prints the ratios.
 *
 *   lmr_bench read NODE N
 *       a region of 4 KiB on NODE; N 8-byte READs through krc_lmr_read
 *       and N through krc_read_sync with the same address and key (the raw
 *       VQ READ), in 10 rounds that alternate the two: the median and p99
 *       of each.
 *   lmr_bench alloc NODE N KIB
 *       N regions of KIB KiB allocated one after the other on NODE (each
 *       timed), then freed (each timed): the median allocation and free,
 *       and allocations per second (N over the allocations' total time).
 *   lmr_bench mem NODE MIB REPS
 *       two regions A and B of MIB MiB on NODE; REPS times, alternating:
 *       all of A set to a byte at the owner (krc_lmr_set), and the same
 *       bytes written from this process (1 MiB WRITEs of a local buffer);
 *       all of A copied to B at the owner (krc_lmr_copy), and the same
 *       done by this process (1 MiB READ from A, then WRITE to B). The
 *       median of each, in ms and MiB/s; the last bytes checked.
 *   lmr_bench hold NODE FILE
 *       a region of 4 KiB on NODE for the lock runs: its key to FILE
 *       ("NODE ADDR RKEY"), then wait for SIGTERM and free it.
 *   lmr_bench lock FILE krcore|cas P SECS START
 *       P processes (forked) take and release the lock of word 0 of the
 *       region in FILE for SECS seconds, starting when the file START
 *       exists: krcore's (krc_lock, krc_unlock) or one built from the
 *       owner's RNIC CAS (0 to this process's id, retried at once until
 *       it succeeds; released with a CAS back to 0). Prints the
 *       acquisitions of all P.
 *
 * Output: "lmr_bench: WHAT key=value ..." lines, times in microseconds
 * (_us) or milliseconds (_ms). Exit 0; 1 if an operation failed or the
 * data is wrong; 2 on a usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "libkrcore.h"
#include "bench.h"

#define LB_ROUNDS	10
#define LB_CHUNK	1048576u	/* 1 MiB */
#define LB_PROCS_MAX	64
#define LB_ALL		(KRCORE_ACCESS_REMOTE_READ | KRCORE_ACCESS_REMOTE_WRITE | \
			 KRCORE_ACCESS_REMOTE_ATOMIC)

static struct krc_vq *vq;
static struct krc_mr mr;
static uint8_t *buf;		/* LB_CHUNK + 4 KiB, registered */

static int die(const char *what)
{
	fprintf(stderr, "lmr_bench: %s: %s\n", what, krc_errmsg());
	exit(1);
}

static void open_vq(const char *node)
{
	struct krcore_qconnect qc;

	buf = aligned_alloc(4096, LB_CHUNK + 4096);
	if (!buf)
		exit(1);
	memset(buf, 0, LB_CHUNK + 4096);
	if (krc_vq_open(&vq) || krc_qconnect(vq, node, 0, &qc) ||
	    krc_reg_mr(vq, buf, LB_CHUNK + 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr))
		die("connect");
}

static void report(const char *what, double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	printf("lmr_bench: %s n=%d median_us=%.1f p99_us=%.1f min_us=%.1f\n",
	       what, n, pct(v, n, 0.5), pct(v, n, 0.99), v[0]);
}

static int do_read(const char *node, int n)
{
	double *lmr_us = calloc(n, sizeof(double));
	double *raw_us = calloc(n, sizeof(double));
	struct krc_lmr r;
	int i, k = 0, j = 0, round;
	double t;

	open_vq(node);
	if (!lmr_us || !raw_us || n < LB_ROUNDS)
		return 2;
	if (krc_lmr_alloc(vq, node, 4096, KRCORE_ACCESS_REMOTE_READ, &r))
		die("alloc");
	for (i = 0; i < 20; i++)	/* warm up both */
		if (krc_lmr_read(vq, &r, 0, buf, mr.lkey, 8) ||
		    krc_read_sync(vq, buf, mr.lkey, 8, r.addr, r.rkey, -1))
			die("read");
	for (round = 0; round < LB_ROUNDS; round++) {
		for (i = 0; i < n / LB_ROUNDS; i++) {
			t = now_us();
			if (krc_lmr_read(vq, &r, 0, buf, mr.lkey, 8))
				die("lmr read");
			lmr_us[k++] = now_us() - t;
		}
		for (i = 0; i < n / LB_ROUNDS; i++) {
			t = now_us();
			if (krc_read_sync(vq, buf, mr.lkey, 8, r.addr, r.rkey, -1))
				die("raw read");
			raw_us[j++] = now_us() - t;
		}
	}
	report("read8_lmr", lmr_us, k);
	report("read8_raw", raw_us, j);
	return krc_lmr_free(vq, &r) ? die("free") : 0;
}

static int do_alloc(const char *node, int n, unsigned int kib)
{
	struct krc_lmr *r = calloc(n, sizeof(*r));
	double *a_us = calloc(n, sizeof(double));
	double *f_us = calloc(n, sizeof(double));
	double t, total = 0;
	int i;

	open_vq(node);
	if (!r || !a_us || !f_us || n < 1)
		return 2;
	for (i = 0; i < n; i++) {
		t = now_us();
		if (krc_lmr_alloc(vq, node, (uint64_t)kib << 10, LB_ALL, &r[i]))
			die("alloc");
		a_us[i] = now_us() - t;
		total += a_us[i];
	}
	for (i = 0; i < n; i++) {
		t = now_us();
		if (krc_lmr_free(vq, &r[i]))
			die("free");
		f_us[i] = now_us() - t;
	}
	printf("lmr_bench: alloc_rate kib=%u n=%d per_s=%.1f\n", kib, n,
	       n / (total / 1e6));
	report("alloc", a_us, n);
	report("free", f_us, n);
	return 0;
}

/* All of @r set to @v by this process: 1 MiB WRITEs of a local buffer. */
static void push_set(const struct krc_lmr *r, uint8_t v)
{
	uint64_t off;

	memset(buf, v, LB_CHUNK);
	for (off = 0; off < r->length; off += LB_CHUNK)
		if (krc_lmr_write(vq, r, off, buf, mr.lkey, LB_CHUNK))
			die("write");
}

/* @a copied to @b by this process: 1 MiB READ, then WRITE. */
static void pull_push(const struct krc_lmr *a, const struct krc_lmr *b)
{
	uint64_t off;

	for (off = 0; off < a->length; off += LB_CHUNK)
		if (krc_lmr_read(vq, a, off, buf, mr.lkey, LB_CHUNK) ||
		    krc_lmr_write(vq, b, off, buf, mr.lkey, LB_CHUNK))
			die("read, write");
}

/* The last 8 bytes of @r are all @v? */
static int last_is(const struct krc_lmr *r, uint8_t v)
{
	int i;

	if (krc_lmr_read(vq, r, r->length - 8, buf, mr.lkey, 8))
		die("read");
	for (i = 0; i < 8; i++)
		if (buf[i] != v)
			return 0;
	return 1;
}

static void report_mem(const char *what, double *ms, int n, uint64_t bytes)
{
	qsort(ms, n, sizeof(*ms), cmp_d);
	printf("lmr_bench: %s mib=%" PRIu64 " n=%d median_ms=%.1f mib_per_s=%.1f\n",
	       what, bytes >> 20, n, pct(ms, n, 0.5),
	       (double)(bytes >> 20) / (pct(ms, n, 0.5) / 1e3));
}

static int do_mem(const char *node, unsigned int mib, int reps)
{
	double set_ms[64], push_ms[64], copy_ms[64], pp_ms[64], t;
	uint64_t len = (uint64_t)mib << 20;
	struct krc_lmr a, b;
	int i, bad = 0;

	if (!mib || reps < 1 || reps > 64)
		return 2;
	open_vq(node);
	if (krc_lmr_alloc(vq, node, len, LB_ALL, &a) ||
	    krc_lmr_alloc(vq, node, len, LB_ALL, &b))
		die("alloc");
	for (i = 0; i < reps; i++) {
		t = now_us();
		if (krc_lmr_set(vq, &a, 0, 0x11 + i, len))
			die("set");
		set_ms[i] = (now_us() - t) / 1e3;
		bad |= !last_is(&a, 0x11 + i);
		t = now_us();
		push_set(&a, 0x51 + i);
		push_ms[i] = (now_us() - t) / 1e3;
		bad |= !last_is(&a, 0x51 + i);
		t = now_us();
		if (krc_lmr_copy(vq, &b, 0, &a, 0, len))
			die("copy");
		copy_ms[i] = (now_us() - t) / 1e3;
		bad |= !last_is(&b, 0x51 + i);
		if (krc_lmr_set(vq, &a, 0, 0x91 + i, len))
			die("set");
		t = now_us();
		pull_push(&a, &b);
		pp_ms[i] = (now_us() - t) / 1e3;
		bad |= !last_is(&b, 0x91 + i);
	}
	report_mem("memset_owner", set_ms, reps, len);
	report_mem("memset_push", push_ms, reps, len);
	report_mem("copy_owner", copy_ms, reps, len);
	report_mem("copy_pull_push", pp_ms, reps, len);
	if (bad)
		fprintf(stderr, "lmr_bench: mem: wrong bytes after an operation\n");
	if (krc_lmr_free(vq, &a) || krc_lmr_free(vq, &b))
		die("free");
	return bad;
}

static int do_hold(const char *node, const char *file)
{
	struct krc_lmr r;
	sigset_t term;
	char tmp[512];
	FILE *f;
	int sig;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	open_vq(node);
	if (krc_lmr_alloc(vq, node, 4096, LB_ALL, &r))
		die("alloc");
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s %" PRIx64 " %x\n", node, r.addr, r.rkey) < 0 ||
	    fclose(f) || rename(tmp, file))
		return 1;
	printf("lmr_bench: holding\n");
	fflush(stdout);
	sigwait(&term, &sig);
	return krc_lmr_free(vq, &r) ? die("free") : 0;
}

/* One locker: acquisitions in @secs from when @start exists. */
static long locker(const struct krc_lmr *r, const char *node, int cas,
		   double secs, const char *start, uint64_t me)
{
	struct krc_lock lk;
	uint64_t *word;
	struct stat st;
	double end;
	long n = 0;

	open_vq(node);
	word = (uint64_t *)buf;
	while (stat(start, &st))
		usleep(10000);
	end = now_us() + secs * 1e6;
	while (now_us() < end) {
		if (!cas) {
			if (krc_lock(vq, r, 0, 60000, &lk) || krc_unlock(vq, &lk))
				die("lock");
			n++;
			continue;
		}
		do {
			if (krc_lmr_cas(vq, r, 8, 0, me, word, mr.lkey))
				die("cas");
		} while (*word != 0);
		if (krc_lmr_cas(vq, r, 8, me, 0, word, mr.lkey))
			die("cas");
		if (*word != me) {
			fprintf(stderr, "lmr_bench: the CAS lock was not ours\n");
			exit(1);
		}
		n++;
	}
	return n;
}

static int do_lock(const char *file, const char *mode, int p, double secs,
		   const char *start)
{
	int fds[LB_PROCS_MAX][2], i, status, bad = 0;
	pid_t pids[LB_PROCS_MAX];
	struct krc_lmr r;
	char node[64];
	long total = 0, n;
	FILE *f = fopen(file, "r");

	memset(&r, 0, sizeof(r));
	if (!f || fscanf(f, "%63s %" SCNx64 " %x", node, &r.addr, &r.rkey) != 3 ||
	    p < 1 || p > LB_PROCS_MAX || secs <= 0 ||
	    (strcmp(mode, "krcore") && strcmp(mode, "cas")))
		return 2;
	fclose(f);
	r.length = 4096;
	if (krc_gid_parse(node, r.gid))
		return 2;
	for (i = 0; i < p; i++) {
		if (pipe(fds[i]))
			return 1;
		pids[i] = fork();
		if (pids[i] < 0)
			return 1;
		if (!pids[i]) {
			n = locker(&r, node, !strcmp(mode, "cas"), secs, start,
				   ((uint64_t)getpid() << 8) | 1);
			if (write(fds[i][1], &n, sizeof(n)) != sizeof(n))
				_exit(1);
			_exit(0);
		}
		close(fds[i][1]);
	}
	for (i = 0; i < p; i++) {
		if (read(fds[i][0], &n, sizeof(n)) == sizeof(n))
			total += n;
		else
			bad = 1;
		waitpid(pids[i], &status, 0);
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	}
	printf("lmr_bench: lock mode=%s procs=%d secs=%.1f acquired=%ld per_s=%.1f\n",
	       mode, p, secs, total, total / secs);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "read"))
		return do_read(argv[2], atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "alloc"))
		return do_alloc(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "mem"))
		return do_mem(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return do_hold(argv[2], argv[3]);
	if (argc == 7 && !strcmp(argv[1], "lock"))
		return do_lock(argv[2], argv[3], atoi(argv[4]), atof(argv[5]),
			       argv[6]);
	fprintf(stderr, "usage: lmr_bench read NODE N | alloc NODE N KIB | mem NODE MIB REPS |\n"
		"       hold NODE FILE | lock FILE krcore|cas P SECS START\n");
	return 2;
}
