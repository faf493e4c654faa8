/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tp.h - what the test programs of tests/progs/ share: a server's buffer
 * description ("addr rkey", written by dp_serve), its pattern, VQs
 * connected and registered in one call, work requests, and completions
 * collected with a deadline. Header-only: each program is one file.
 */
#ifndef KRC_TESTS_TP_H
#define KRC_TESTS_TP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libkrcore.h"

/* dp_serve: 4 MiB (+ a page), the first half holds tp_pattern(). */
#define TP_SRV_SIZE	(4u << 20)
#define TP_SRV_HALF	(TP_SRV_SIZE / 2)
#define TP_MIB		(1024u * 1024u)

static inline void __attribute__((noreturn, format(printf, 1, 2)))
tp_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static inline uint8_t tp_pattern(uint64_t i)
{
	return (uint8_t)(i * 7 + 3);
}

static inline uint64_t tp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void *tp_xalloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		tp_die("mmap %zu: %s", len, strerror(errno));
	return p;
}

/* The "addr rkey" of a dp_serve buffer, waited for up to 60 s. */
static inline void tp_read_info(const char *path, uint64_t *addr,
				uint32_t *rkey)
{
	unsigned long long a;
	unsigned int k;
	FILE *f;
	int n;

	for (n = 0; n < 600; n++) {
		f = fopen(path, "r");
		if (f) {
			int got = fscanf(f, "%llx %x", &a, &k);

			fclose(f);
			if (got == 2) {
				*addr = a;
				*rkey = k;
				return;
			}
		}
		usleep(100000);
	}
	tp_die("no server info in %s", path);
}

/* A VQ connected to @addr (port @port, 0: none); @qc may be NULL. */
static inline struct krc_vq *tp_connect(const char *addr, uint32_t port,
					struct krcore_qconnect *qc)
{
	struct krcore_qconnect tmp;
	struct krc_vq *vq;

	if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, addr, port, qc ? qc : &tmp) < 0)
		tp_die("connect %s: %s", addr, krc_errmsg());
	return vq;
}

/* @len bytes of new memory registered on @vq's process with @access. */
static inline void *tp_reg(struct krc_vq *vq, size_t len, unsigned int access,
			   struct krc_mr *mr)
{
	void *buf = tp_xalloc(len);

	if (krc_reg_mr(vq, buf, len, access, mr) < 0)
		tp_die("reg_mr %zu: %s", len, krc_errmsg());
	return buf;
}

/* A one-SGE request: @len bytes at @local (@lkey), remote @raddr/@rkey. */
static inline void tp_wr(struct krcore_wr *w, uint8_t op, void *local,
			 uint32_t lkey, uint32_t len, uint64_t raddr,
			 uint32_t rkey, uint64_t id, uint32_t flags)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = id;
	w->opcode = op;
	w->flags = flags;
	w->num_sge = 1;
	w->remote_addr = raddr;
	w->rkey = rkey;
	w->sg_list[0].addr = (uintptr_t)local;
	w->sg_list[0].length = len;
	w->sg_list[0].lkey = lkey;
}

/* Post all @n requests (one call; dies unless all went). */
static inline void tp_push(struct krc_vq *vq, const struct krcore_wr *wrs,
			   unsigned int n)
{
	int ret = krc_qpush(vq, wrs, n);

	if (ret != (int)n)
		tp_die("qpush %u: %d: %s", n, ret, krc_errmsg());
}

/*
 * Collect completions of @vq into @cqes until @want came or @timeout_ms
 * passed: how many came.
 */
static inline unsigned int tp_pop(struct krc_vq *vq, struct krcore_cqe *cqes,
				  unsigned int want, int timeout_ms)
{
	uint64_t end = tp_now_ms() + (uint64_t)timeout_ms;
	unsigned int got = 0;

	while (got < want) {
		uint64_t now = tp_now_ms();
		int n;

		if (now >= end)
			break;
		n = krc_qpop_wait(vq, cqes + got, want - got, (int)(end - now));
		if (n < 0 && n != -EINTR && n != -ETIMEDOUT && n != -EAGAIN)
			tp_die("qpop: %s", krc_errmsg());
		if (n > 0)
			got += n;
	}
	return got;
}

#endif /* KRC_TESTS_TP_H */
