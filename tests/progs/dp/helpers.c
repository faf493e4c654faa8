// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp/helpers.c - the shared part of the data-plane test programs
 * (tests/progs/dp_*.c): see helpers.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

int dp_failures;

void dp_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, DP_TAG ": FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	dp_failures++;
}

int dp_usage(const char *usage)
{
	fprintf(stderr, "usage: %s\n", usage);
	return 2;
}

int dp_args(int argc, char **argv, int want, const char *usage,
	    struct dp_remote *r)
{
	if (argc != want)
		return dp_usage(usage);
	dp_read_info(argv[2], r);
	return 0;
}

int dp_run(int argc, char **argv, const char *usage, dp_scenario fn)
{
	struct dp_remote r;

	if (dp_args(argc, argv, 3, usage, &r))
		return 2;
	return fn(argv[1], &r);
}

int dp_put_info(const char *path, const void *addr, uint32_t rkey)
{
	char tmp[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%llx %x\n", (unsigned long long)(uintptr_t)addr, rkey);
	fclose(f);
	return rename(tmp, path);
}

void dp_read_info(const char *path, struct dp_remote *r)
{
	tp_read_info(path, &r->addr, &r->rkey);
}

void *dp_reg(struct krc_vq *vq, size_t len, struct krc_mr *mr)
{
	void *buf = tp_xalloc(len);

	if (krc_reg_mr(vq, buf, len, KRCORE_ACCESS_LOCAL_WRITE, mr) < 0) {
		FAIL("reg_mr of %zu bytes: %s", len, krc_errmsg());
		return NULL;
	}
	return buf;
}

int dp_scale(void)
{
	static int k;
	struct utsname u;

	if (!k)
		k = !uname(&u) && strstr(u.release, "krcdbg") ? 4 : 1;
	return k;
}

int dp_one(struct krc_vq *vq, struct krcore_wr *wr, struct krcore_cqe *cqe)
{
	int n;

	n = krc_qpush(vq, wr, 1);
	if (n != 1) {
		FAIL("qpush: %s", krc_errmsg());
		return -1;
	}
	n = krc_qpop_wait(vq, cqe, 1, 20000 * dp_scale());
	if (n != 1) {
		FAIL("no completion: %s", n < 0 ? krc_errmsg() : "timeout");
		return -1;
	}
	if (cqe->wr_id != wr->wr_id)
		FAIL("completion of wr_id %llu, expected %llu",
		     (unsigned long long)cqe->wr_id,
		     (unsigned long long)wr->wr_id);
	return (int)cqe->status;
}

int dp_reap(struct krc_vq *vq, struct krcore_cqe *c, int n, int base,
	    int timeout_s)
{
	struct krcore_cqe tmp[16];
	double end = dp_now() + timeout_s * dp_scale();
	int got = 0, k, i;

	while (got < n && dp_now() < end) {
		k = krc_qpop_wait(vq, tmp, 16, 1000);
		if (k < 0) {
			FAIL("qpop: %s", krc_errmsg());
			return got;
		}
		for (i = 0; i < k; i++) {
			uint64_t at = tmp[i].wr_id - (uint64_t)base;

			if (at >= (uint64_t)n) {
				FAIL("completion of unexpected wr_id %llu",
				     (unsigned long long)tmp[i].wr_id);
				continue;
			}
			c[at] = tmp[i];
			got++;
		}
	}
	if (got != n)
		FAIL("%d of %d completions within %d s", got, n, timeout_s);
	return got;
}

struct krcore_ring dp_ring_header(struct krc_vq *vq, uint32_t size)
{
	const struct krcore_ring *r = krc_vq_ring(vq);
	struct krcore_ring h;

	memset(&h, 0xff, sizeof(h));
	if (!r) {
		FAIL("no completion ring");
		return h;
	}
	memcpy(&h, r, sizeof(h));
	h.recoveries = __atomic_load_n(&r->recoveries, __ATOMIC_ACQUIRE);
	return h;
}

int dp_ring_available(struct krc_vq *vq)
{
	struct krcore_qwait w = { .timeout_ms = 0 };

	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QWAIT, &w) < 0 && errno != ETIMEDOUT)
		return -errno;
	return (int)w.available;
}

static FILE *param_file(const char *name, const char *mode)
{
	char p[256];

	snprintf(p, sizeof(p), "/sys/module/krcore/parameters/%s", name);
	return fopen(p, mode);
}

void dp_set_param(const char *name, unsigned long v)
{
	FILE *f = param_file(name, "w");

	if (!f || fprintf(f, "%lu\n", v) < 0 || fclose(f)) {
		FAIL("cannot set %s to %lu", name, v);
		exit(1);
	}
}

unsigned long dp_param(const char *name)
{
	FILE *f = param_file(name, "r");
	unsigned long v = 0;

	if (!f || fscanf(f, "%lu", &v) != 1) {
		FAIL("cannot read %s", name);
		exit(1);
	}
	fclose(f);
	return v;
}

double dp_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int dp_exists(const char *dir, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

void dp_touch(const char *dir, const char *name)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f)
		fclose(f);
}

void dp_put_conn(const char *dir, const char *name, uint32_t conn_id)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f) {
		FAIL("cannot write %s: %s", p, strerror(errno));
		return;
	}
	fprintf(f, "%u\n", conn_id);
	if (fclose(f))
		FAIL("cannot write %s: %s", p, strerror(errno));
}

int dp_wait_file(const char *dir, const char *name, int secs)
{
	int i;

	for (i = 0; i < secs * 10 && !dp_exists(dir, name); i++)
		usleep(100000);
	if (!dp_exists(dir, name)) {
		FAIL("%s/%s never appeared", dir, name);
		return -1;
	}
	return 0;
}

int dp_forked(int procs, dp_worker fn, const char *addr,
	      const struct dp_remote *r, int arg)
{
	int p, status, bad = 0;

	for (p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid == 0) {
			int rc = fn(addr, r, p, arg);

			fflush(NULL);	/* _exit() does not flush stdio */
			_exit(rc);
		}
		if (pid < 0)
			return 1;
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	printf(DP_TAG ": %d processes, %d failed\n", procs, bad);
	return bad ? 1 : 0;
}
