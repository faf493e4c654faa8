// SPDX-License-Identifier: BSD-2-Clause
/*
 * serverless - the serverless transfer of make demo-serverless (KRCore's
 * serverless case): short-lived function processes on a compute node
 * each fetch an object from a storage node with RDMA READs, through
 * krcore and through raw verbs, and the end-to-end time of every
 * invocation is measured, the two methods alternating.
 *
 *   serverless store DIR ADDR MIB
 *       the storage node: an object of MIB MiB (a pseudo-random pattern)
 *       registered with krcore and, in an rdma_cm listener's PD at
 *       ADDR, with verbs (bench/kvs_krcore.c, bench/kvs_verbs.c);
 *       publishes DIR/sl.krcore, DIR/sl.verbs and the object's size and
 *       checksum in DIR/sl.sum, then serves until DIR/stop exists.
 *   serverless invoke DIR N
 *       the compute node: N invocations per method, alternating
 *       (krcore, verbs, verbs, krcore, ...), the first a krcore one
 *       reported apart (the node's first). Each is a new process (fork
 *       and exec of this program: `serverless fn METHOD DIR`) that
 *       connects, registers a buffer, READs the object in 256 KiB
 *       pieces, 4 at a time, and checks its checksum; the time is taken
 *       from before the fork to the process's exit.
 *   serverless fn METHOD DIR
 *       one function (METHOD krcore or verbs); prints "ok CONNECT_US
 *       FETCH_US" on success.
 *
 * With KRC_BENCH_SAMPLES set, the invocations' times are appended there
 * as krbench_report input (figure serverless).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "kvs_backend.h"

#define SL_PORT		(KVS_VERBS_PORT + 1)
#define SL_MAX_MIB	256

struct sl_sum {
	uint64_t len;
	uint64_t hash;
};

/* FNV-1a over 8-byte words: the object's checksum. */
static uint64_t sl_hash(const void *p, uint64_t len)
{
	const uint64_t *w = p;
	uint64_t h = 0xcbf29ce484222325ULL, i;

	for (i = 0; i < len / 8; i++) {
		h ^= w[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int run_store(const char *dir, const char *addr, int mib)
{
	struct kvs_pub kp = {}, vp = {};
	struct kvs_verbs_srv *srv;
	struct sl_sum sum;
	char stop[512];
	struct stat st;
	uint64_t *w, x = 0x9e3779b97f4a7c15ULL, i;
	void *obj;

	if (mib < 1 || mib > SL_MAX_MIB) {
		fprintf(stderr, "serverless: MIB must be 1-%d\n", SL_MAX_MIB);
		return 2;
	}
	sum.len = (uint64_t)mib << 20;
	/*
	 * Registered one page larger than the object: rxe of Linux 6.1
	 * reads one pointer past an MR's page map when an access ends in
	 * the last page of an MR of a multiple of 256 pages (KASAN sees it
	 * on the debug kernel). Functions READ the whole registration.
	 */
	obj = mmap(NULL, sum.len + 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (obj == MAP_FAILED) {
		perror("serverless: mmap");
		return 1;
	}
	for (w = obj, i = 0; i < sum.len / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
	sum.hash = sl_hash(obj, sum.len);
	snprintf(kp.addr, sizeof(kp.addr), "%s", addr);
	snprintf(vp.addr, sizeof(vp.addr), "%s", addr);
	vp.port = SL_PORT;
	if (kvs_krcore_serve(obj, sum.len + 4096, &kp) ||
	    kvs_verbs_serve(obj, sum.len + 4096, &vp, &srv))
		return 1;
	if (bench_write_file(dir, "sl.krcore", &kp, sizeof(kp)) ||
	    bench_write_file(dir, "sl.verbs", &vp, sizeof(vp)) ||
	    bench_write_file(dir, "sl.sum", &sum, sizeof(sum))) {
		perror("serverless: publish");
		return 1;
	}
	printf("serverless: storage node ready, a %d MiB object\n", mib);
	fflush(stdout);
	snprintf(stop, sizeof(stop), "%s/stop", dir);
	while (stat(stop, &st))
		kvs_verbs_poll(srv, 200);
	return 0;
}

/* One function: connect, fetch, check. */
static int run_fn(const char *method, const char *dir)
{
	int verbs = !strcmp(method, "verbs");
	struct kvs_conn conn = {};
	struct kvs_pub pub;
	struct sl_sum sum;
	double t0, t1;
	void *dst;
	int ret;

	if (!verbs && strcmp(method, "krcore"))
		return 2;
	if (bench_read_file(dir, verbs ? "sl.verbs" : "sl.krcore", &pub,
			    sizeof(pub)) ||
	    bench_read_file(dir, "sl.sum", &sum, sizeof(sum)))
		return 1;
	if (pub.len != sum.len + 4096 || !sum.len ||
	    sum.len > (uint64_t)SL_MAX_MIB << 20) {
		fprintf(stderr, "serverless: a bad object size\n");
		return 1;
	}
	t0 = now_us();
	ret = verbs ? kvs_verbs_connect(&pub, &conn) :
		      kvs_krcore_connect(&pub, &conn);
	if (ret)
		return 1;
	t1 = now_us();
	dst = mmap(NULL, pub.len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dst == MAP_FAILED || conn.fetch(conn.ctx, 0, dst, pub.len))
		return 1;
	if (sl_hash(dst, sum.len) != sum.hash) {
		fprintf(stderr, "serverless: %s: the object's checksum differs\n",
			method);
		return 1;
	}
	printf("ok %.1f %.1f\n", t1 - t0, now_us() - t1);
	return 0;
}

struct inv {
	double e2e;		/* fork to exit, us */
	double connect;		/* the function's own: connection ready */
	double fetch;		/* registration, READs and the check */
};

/* One invocation of @method in a new process: 0 or -1. */
static int invoke(const char *self, const char *method, const char *dir,
		  struct inv *r)
{
	char line[128] = "";
	int p[2], status;
	double t0;
	ssize_t n;
	pid_t pid;

	if (pipe(p))
		return -1;
	fflush(NULL);
	t0 = now_us();
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[0]);
		if (dup2(p[1], 1) < 0)
			_exit(1);
		execl(self, "serverless", "fn", method, dir, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	r->e2e = now_us() - t0;
	if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    sscanf(line, "ok %lf %lf", &r->connect, &r->fetch) != 2) {
		fprintf(stderr, "serverless: a %s function failed\n", method);
		return -1;
	}
	return 0;
}

static void row(const char *name, struct inv *v, int n, double *tmp)
{
	int i;

	for (i = 0; i < n; i++)
		tmp[i] = v[i].e2e / 1e3;
	qsort(tmp, (size_t)n, sizeof(double), cmp_d);
	printf("  %-7s %10.1f %10.1f", name, pct(tmp, n, 0.5), pct(tmp, n, 0.99));
	for (i = 0; i < n; i++)
		tmp[i] = v[i].connect / 1e3;
	qsort(tmp, (size_t)n, sizeof(double), cmp_d);
	printf(" %12.1f", pct(tmp, n, 0.5));
	for (i = 0; i < n; i++)
		tmp[i] = v[i].fetch / 1e3;
	qsort(tmp, (size_t)n, sizeof(double), cmp_d);
	printf(" %12.1f\n", pct(tmp, n, 0.5));
}

static int run_invoke(const char *dir, int n)
{
	struct inv first, *k, *v;
	double *tmp, mk, mv;
	char self[512];
	struct sl_sum sum;
	ssize_t len;
	int i;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0 || n < 1 || n > 10000)
		return 2;
	self[len] = 0;
	k = calloc((size_t)n, sizeof(*k));
	v = calloc((size_t)n, sizeof(*v));
	tmp = calloc((size_t)n, sizeof(*tmp));
	if (!k || !v || !tmp ||
	    bench_read_file(dir, "sl.sum", &sum, sizeof(sum)))
		return 1;
	if (invoke(self, "krcore", dir, &first))
		return 1;
	for (i = 0; i < n; i++) {
		const char *a = i % 2 ? "verbs" : "krcore";
		const char *b = i % 2 ? "krcore" : "verbs";

		if (invoke(self, a, dir, i % 2 ? &v[i] : &k[i]) ||
		    invoke(self, b, dir, i % 2 ? &k[i] : &v[i]))
			return 1;
	}
	printf("serverless: %d invocations per method, alternating; each a new process\n", n);
	printf("  (fork + exec) that connects to the storage node, READs a %llu MiB object\n",
	       (unsigned long long)(sum.len >> 20));
	printf("  and checks it; end-to-end from the fork to the exit, ms\n");
	printf("  the node's first (krcore): %.1f ms (connect %.1f, fetch %.1f)\n",
	       first.e2e / 1e3, first.connect / 1e3, first.fetch / 1e3);
	printf("  %-7s %10s %10s %12s %12s\n", "method", "median", "p99",
	       "connect med", "fetch med");
	row("verbs", v, n, tmp);
	row("krcore", k, n, tmp);
	for (i = 0; i < n; i++)
		tmp[i] = k[i].e2e;
	qsort(tmp, (size_t)n, sizeof(double), cmp_d);
	mk = pct(tmp, n, 0.5);
	for (i = 0; i < n; i++)
		tmp[i] = v[i].e2e;
	qsort(tmp, (size_t)n, sizeof(double), cmp_d);
	mv = pct(tmp, n, 0.5);
	printf("verdict: a krcore function is done %.1fx sooner than a verbs one (median)\n",
	       mv / mk);

	bench_figure("serverless", "ms", "case",
		     "Serverless: a new function process fetches an object, end to end");
	bench_sample("serverless", "krcore_first", "invocation",
		     first.e2e / 1e3);
	for (i = 0; i < n; i++) {
		bench_sample("serverless", "krcore", "invocation",
			     k[i].e2e / 1e3);
		bench_sample("serverless", "verbs", "invocation",
			     v[i].e2e / 1e3);
	}
	bench_ratio("serverless", "verbs_over_krcore", "verbs", "krcore",
		    NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "store"))
		return run_store(argv[2], argv[3], atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "invoke"))
		return run_invoke(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "fn"))
		return run_fn(argv[2], argv[3]);
	fprintf(stderr, "usage: serverless store DIR ADDR MIB\n"
		"       serverless invoke DIR N\n"
		"       serverless fn krcore|verbs DIR\n");
	return 2;
}
