// SPDX-License-Identifier: BSD-2-Clause
/*
 * conn_floor - what a krcore connection costs beside the floor of this
 * kernel: the system calls and file of a null device, measured in the
 * same run on the same node.
 *
 *   conn_floor ADDR N
 *	N rounds, in a warm process and then each in a new (forked)
 *	process, the methods alternating within a round:
 *	- null: open /dev/null, one ioctl (FIONREAD: ENOTTY, the system
 *	  call's floor), close;
 *	- krcore_file: open /dev/krcore (a VQ), KRCORE_IOC_VERSION, close;
 *	- krcore_pooled: open /dev/krcore, KRCORE_IOC_QCONNECT to ADDR (the
 *	  node's pool already reaches it) with the completion ring in the
 *	  process's own memory (ABI 14, as libkrcore does: one buffer reused
 *	  by every round, in a new process the parent's, copied on write),
 *	  close: a pooled connection made and given back;
 *	- krcore_mapped: the same with the kernel's ring, mapped and
 *	  unmapped (mmap, munmap: as ABI 13 and KRC_KERNEL_RING=1);
 *	  each step of both timed on its own (the breakdown), the kernel's
 *	  part of the qconnect from its elapsed_ns;
 *	- first READ: on a connected VQ, KRCORE_IOC_PROBE (one RDMA READ of
 *	  the peer's node page over the VQ's connection), timed apart.
 *	Prints medians and p99 per method and step, and the ratios of
 *	krcore to the floor (target: a pooled connect in a warm process at
 *	most 2x the null open + ioctl + close).
 *	With KRC_BENCH_SAMPLES set, the samples go there too (figures
 *	conn_floor and conn_steps).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "libkrcore.h"

enum { M_NULL, M_FILE, M_POOLED, M_MAPPED, M_NR };
enum {
	S_OPEN, S_QCONNECT, S_KERNEL, S_MMAP, S_UNMAP, S_CLOSE, S_PROBE, S_NR
};

static const char * const m_names[M_NR] = {
	"null", "krcore_file", "krcore_pooled", "krcore_mapped",
};

static const char * const m_what[M_NR] = {
	"/dev/null: open + ioctl + close (the floor)",
	"/dev/krcore: open + VERSION + close",
	"krcore pooled: open + qconnect + close",
	"krcore pooled, kernel ring: + mmap + munmap",
};

static const char * const s_names[S_NR] = {
	"open", "qconnect", "qconnect_kernel", "mmap", "munmap", "close",
	"first_read",
};

static uint8_t gid[16];
static void *uring;		/* the ring in this process's memory */
static uint32_t uring_len;

/* One round of @m; 0 and its total (us), and the steps' times if asked. */
static int one(int m, double *total, double *steps)
{
	struct krcore_version v;
	struct krcore_qconnect qc;
	struct krcore_probe pr;
	double t0, t, s[S_NR] = { 0 };
	void *ring;
	int fd, x;

	t0 = now_us();
	if (m == M_NULL) {
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		(void)ioctl(fd, FIONREAD, &x);
		close(fd);
		*total = now_us() - t0;
		return 0;
	}
	fd = open(KRCORE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	t = now_us();
	s[S_OPEN] = t - t0;
	if (m == M_FILE) {
		memset(&v, 0, sizeof(v));
		x = ioctl(fd, KRCORE_IOC_VERSION, &v);
		close(fd);
		*total = now_us() - t0;
		return x ? -errno : 0;
	}
	memset(&qc, 0, sizeof(qc));
	memcpy(qc.gid, gid, 16);
	if (m == M_POOLED) {
		qc.ring_addr = (uintptr_t)uring;
		qc.ring_len = uring_len;
	}
	x = ioctl(fd, KRCORE_IOC_QCONNECT, &qc) ? -errno : 0;
	/* The ring asked for, or the kernel's. */
	if (!x && qc.ring_addr != (m == M_POOLED ? (uintptr_t)uring : 0))
		x = -EPROTO;
	if (x) {
		close(fd);
		return x;
	}
	s[S_QCONNECT] = now_us() - t;
	s[S_KERNEL] = qc.elapsed_ns / 1e3;
	ring = NULL;
	if (m == M_MAPPED) {
		t = now_us();
		ring = mmap(NULL, qc.ring_size, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, KRCORE_MMAP_RING);
		if (ring == MAP_FAILED) {
			x = -errno;
			close(fd);
			return x;
		}
		s[S_MMAP] = now_us() - t;
	}
	/* The first request, apart: not part of the connect's total. */
	if (steps) {
		double tp = now_us();

		memset(&pr, 0, sizeof(pr));
		if (ioctl(fd, KRCORE_IOC_PROBE, &pr)) {
			x = -errno;
			if (ring)
				munmap(ring, qc.ring_size);
			close(fd);
			return x;
		}
		s[S_PROBE] = now_us() - tp;
		t0 += s[S_PROBE];
	}
	if (ring) {
		t = now_us();
		munmap(ring, qc.ring_size);
		s[S_UNMAP] = now_us() - t;
	}
	t = now_us();
	close(fd);
	s[S_CLOSE] = now_us() - t;
	*total = now_us() - t0;
	if (steps)
		memcpy(steps, s, sizeof(s));
	return 0;
}

struct res {
	double total;
	double steps[S_NR];
	int err;
};

/* One round of @m in a new process (forked: nothing opened inherited). */
static struct res in_child(int m)
{
	struct res *shm, r;
	pid_t pid;

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		r.err = -errno;
		return r;
	}
	memset(shm, 0, sizeof(*shm));
	pid = fork();
	if (pid == 0) {
		shm->err = one(m, &shm->total, NULL);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	r = *shm;
	munmap(shm, sizeof(*shm));
	return r;
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_d);
	printf("  %-48s median %9.1f us  p99 %9.1f us  (%d)\n", what, v[n / 2],
	       v[(n - 1) * 99 / 100], n);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_d);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	static const char * const x[2] = { "warm_process", "new_process" };
	double *warm[M_NR], *fresh[M_NR], *step[M_NR][S_NR];
	double med[2][M_NR];
	struct res r;
	int n, i, k, m, p;
	char what[96];

	if (argc != 3 || krc_gid_parse(argv[1], gid) || atoi(argv[2]) < 1) {
		fprintf(stderr, "usage: conn_floor ADDR N\n");
		return 2;
	}
	n = atoi(argv[2]);
	for (m = 0; m < M_NR; m++) {
		warm[m] = calloc((size_t)n, sizeof(double));
		fresh[m] = calloc((size_t)n, sizeof(double));
		for (k = 0; k < S_NR; k++)
			step[m][k] = calloc((size_t)n, sizeof(double));
	}
	/* Three pages: the ring at the default vq_depth (128). */
	uring_len = 3 * (uint32_t)getpagesize();
	uring = mmap(NULL, uring_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (uring == MAP_FAILED)
		return 1;
	/* The node's pool reaches ADDR before anything is timed. */
	if (one(M_MAPPED, &med[0][0], NULL) || one(M_POOLED, &med[0][0], NULL)) {
		fprintf(stderr, "conn_floor: qconnect to %s failed\n", argv[1]);
		return 1;
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < M_NR; k++) {
			double s[S_NR];
			int steps;

			m = (i + k) % M_NR;	/* the order rotates */
			steps = m == M_POOLED || m == M_MAPPED;
			r.err = one(m, &warm[m][i], steps ? s : NULL);
			if (r.err) {
				fprintf(stderr, "conn_floor: %s: %s\n",
					m_names[m], strerror(-r.err));
				return 1;
			}
			if (steps)
				for (p = 0; p < S_NR; p++)
					step[m][p][i] = s[p];
			r = in_child(m);
			if (r.err) {
				fprintf(stderr, "conn_floor: new process, %s: %s\n",
					m_names[m], strerror(-r.err));
				return 1;
			}
			fresh[m][i] = r.total;
		}
	}
	bench_figure("conn_floor", "us", "process",
		     "A connection beside the floor: open + ioctl + close of a null device");
	bench_figure("conn_steps", "us", "step",
		     "Where a pooled connection's time goes (warm process)");
	for (m = 0; m < M_NR; m++)
		for (i = 0; i < n; i++) {
			bench_sample("conn_floor", m_names[m], x[0], warm[m][i]);
			bench_sample("conn_floor", m_names[m], x[1], fresh[m][i]);
		}
	for (m = M_POOLED; m <= M_MAPPED; m++)
		for (k = 0; k < S_NR; k++) {
			if (m == M_POOLED && (k == S_MMAP || k == S_UNMAP))
				continue;
			for (i = 0; i < n; i++)
				bench_sample("conn_steps", m_names[m],
					     s_names[k], step[m][k][i]);
		}
	bench_ratio("conn_floor", "pooled_over_null", "krcore_pooled", "null",
		    "<= 2x");
	bench_ratio("conn_floor", "mapped_over_null", "krcore_mapped", "null",
		    NULL);
	bench_ratio("conn_floor", "file_over_null", "krcore_file", "null",
		    NULL);

	printf("a connection beside the floor, %d rounds, methods alternating:\n", n);
	for (p = 0; p < 2; p++) {
		printf(" %s:\n", p ? "each in a new process (fork)" :
		       "in a warm process");
		for (m = 0; m < M_NR; m++) {
			report(m_what[m], p ? fresh[m] : warm[m], n);
			med[p][m] = median(p ? fresh[m] : warm[m], n);
		}
	}
	for (m = M_POOLED; m <= M_MAPPED; m++) {
		printf(" where a pooled connection's time goes (warm process, %s):\n",
		       m == M_POOLED ? "ring in its memory" : "kernel ring");
		for (k = 0; k < S_NR; k++) {
			if (m == M_POOLED && (k == S_MMAP || k == S_UNMAP))
				continue;
			if (m == M_MAPPED && k == S_PROBE)
				continue;
			snprintf(what, sizeof(what), "  %s%s", s_names[k],
				 k == S_KERNEL ? " (inside qconnect)" :
				 k == S_PROBE ? " (apart: one READ)" : "");
			report(what, step[m][k], n);
		}
	}
	for (p = 0; p < 2; p++) {
		printf("  ratio krcore pooled connect / null floor (%s, median): %.1fx%s\n",
		       x[p], med[p][M_POOLED] / med[p][M_NULL],
		       p ? "" : " (target <= 2x)");
		printf("  ratio krcore connect, kernel ring / null floor (%s, median): %.1fx\n",
		       x[p], med[p][M_MAPPED] / med[p][M_NULL]);
		printf("  ratio krcore open + VERSION + close / null floor (%s, median): %.1fx\n",
		       x[p], med[p][M_FILE] / med[p][M_NULL]);
	}
	return 0;
}
