/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench.h - helpers the benchmarks share: a clock, sorting and
 * percentiles, files that pass small records between the nodes (their
 * run directory is shared), and waiting for an rdma_cm event.
 */
#ifndef KRC_BENCH_H
#define KRC_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <rdma/rdma_cma.h>

static inline double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static inline int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @p quantile (0..1) of @v, @n values sorted ascending. */
static inline double pct(const double *v, int n, double p)
{
	return n ? v[(int)((n - 1) * p)] : 0;
}

/* Write DIR/NAME atomically (a temporary file renamed); 0 or -1. */
static inline int bench_write_file(const char *dir, const char *name,
				   const void *data, size_t len)
{
	char path[512], tmp[520];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	if (len && fwrite(data, len, 1, f) != 1) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return rename(tmp, path);
}

/* Wait up to 120 s for DIR/NAME and read @len bytes of it; 0 or -1. */
static inline int bench_read_file(const char *dir, const char *name,
				  void *data, size_t len)
{
	char path[512];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (i = 0; i < 1200; i++) {
		f = fopen(path, "r");
		if (f) {
			size_t n = fread(data, len, 1, f);

			fclose(f);
			if (n == 1)
				return 0;
		}
		usleep(100000);
	}
	fprintf(stderr, "bench: no %s\n", path);
	return -1;
}

/*
 * A start gate for forked processes that get ready (open a VQ, warm up)
 * and then start their timed part together, with @len bytes of zeroed
 * memory shared with them for their results (g->shm). The parent opens
 * it and forks with bench_gate_fork() (a fork() that counts its
 * children); each child calls bench_gate_child() when ready: it says so
 * and waits for the start (0, or -1 when the parent went away). The
 * parent then calls bench_gate_run(): it waits until every child is
 * ready (one that died before counts as a failure: its end of the pipe
 * is closed), notes the start time in *@t0, lets them all go and waits
 * for each to exit; 0, or -1 when a child failed. bench_gate_close()
 * unmaps the memory.
 */
struct bench_gate {
	int go[2];
	int ready[2];
	void *shm;
	size_t len;
	int forked;
};

static inline int bench_gate_open(struct bench_gate *g, size_t len)
{
	g->forked = 0;
	g->len = len;
	g->shm = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->shm == MAP_FAILED)
		return -1;
	if (pipe(g->go))
		goto unmap;
	if (pipe(g->ready)) {
		close(g->go[0]);
		close(g->go[1]);
		goto unmap;
	}
	return 0;
unmap:
	munmap(g->shm, len);
	return -1;
}

static inline pid_t bench_gate_fork(struct bench_gate *g)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid > 0)
		g->forked++;
	return pid;
}

static inline int bench_gate_child(struct bench_gate *g)
{
	char c;

	close(g->go[1]);
	close(g->ready[0]);
	if (write(g->ready[1], "r", 1) != 1)
		return -1;
	close(g->ready[1]);
	return read(g->go[0], &c, 1) == 1 ? 0 : -1;
}

static inline int bench_gate_run(struct bench_gate *g, double *t0)
{
	int i, status, bad = 0;
	char c;

	close(g->go[0]);
	close(g->ready[1]);
	for (i = 0; i < g->forked; i++)
		if (read(g->ready[0], &c, 1) != 1)
			bad = 1;
	close(g->ready[0]);
	*t0 = now_us();
	for (i = 0; i < g->forked; i++)
		if (write(g->go[1], "g", 1) != 1)
			bad = 1;
	close(g->go[1]);
	for (i = 0; i < g->forked; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad = 1;
	return bad ? -1 : 0;
}

static inline void bench_gate_close(struct bench_gate *g)
{
	munmap(g->shm, g->len);
}

/*
 * Sample lines for bench/krbench_report (its F/S/R format), appended to
 * the file KRC_BENCH_SAMPLES names; without that variable they go
 * nowhere. Only the process that measured writes them (forked children
 * hand their numbers to it), one stdio stream, flushed at exit.
 */
static inline FILE *bench_samples(void)
{
	static FILE *f;
	static int tried;
	const char *path;

	if (!tried) {
		tried = 1;
		path = getenv("KRC_BENCH_SAMPLES");
		if (path && *path) {
			f = fopen(path, "a");
			if (!f)
				perror(path);
		}
	}
	return f;
}

/* F line: a figure, its unit, what its x is, a title. */
static inline void bench_figure(const char *fig, const char *unit,
				const char *xlabel, const char *title)
{
	FILE *f = bench_samples();

	if (f)
		fprintf(f, "F %s %s %s %s\n", fig, unit, xlabel, title);
}

/* S line: one sample of @method at @x. */
static inline void bench_sample(const char *fig, const char *method,
				const char *x, double v)
{
	FILE *f = bench_samples();

	if (f)
		fprintf(f, "S %s %s %s %.3f\n", fig, method, x, v);
}

/* R line: median(@a) / median(@b) at every x, @target like ">= 100x". */
static inline void bench_ratio(const char *fig, const char *name,
			       const char *a, const char *b,
			       const char *target)
{
	FILE *f = bench_samples();

	if (f)
		fprintf(f, "R %s %s %s %s %s\n", fig, name, a, b,
			target ? target : "");
}

/* Wait for the next CM event of @ch; it must be @want. */
static inline int cm_wait(struct rdma_event_channel *ch,
			  enum rdma_cm_event_type want, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	int ok;

	if (rdma_get_cm_event(ch, &ev))
		return -1;
	ok = ev->event == want;
	if (!ok)
		fprintf(stderr, "bench: CM event %s, expected %s\n",
			rdma_event_str(ev->event), rdma_event_str(want));
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	return ok ? 0 : -1;
}

#endif /* KRC_BENCH_H */
