/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dp/helpers.h - what the data-plane test programs (tests/progs/dp_*.c,
 * one scenario each) share: the server's buffer and its "addr rkey" INFO
 * file, failures counted and reported, VQs and registrations, requests
 * posted and completions awaited, the module's parameters, the files the
 * cluster scripts and the programs signal each other with, and processes
 * forked to run a scenario side by side. Linked into each program
 * (Makefile: DP_HELPERS); tp.h brings the basic pieces.
 */
#ifndef KRC_TESTS_DP_HELPERS_H
#define KRC_TESTS_DP_HELPERS_H

#include <stdint.h>

#include "../tp.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The prefix of every line the programs print: the cluster scripts grep
 * for some ("dp_test: mixed: expect", "dp_test: steady ...recoveries=").
 */
#define DP_TAG		"dp_test"

/* The buffer of dp_serve: 4 MiB, the first half holds tp_pattern(). */
#define SRV_SIZE	TP_SRV_SIZE
#define HALF		TP_SRV_HALF
#define ATOMIC_OFF	(SRV_SIZE - 4096)
/*
 * The server registers one page more than it serves: rxe in Linux 6.1
 * (rxe_mr_copy) reads one pointer past its page map when an access
 * touches the last page of an MR whose pages are a multiple of 256
 * (KASAN: slab-out-of-bounds on the debug kernel). The tests use the
 * first SRV_SIZE bytes only, so that page is never the MR's last.
 */
#define SRV_MR_SIZE	(SRV_SIZE + 4096)
/* The same for the clients' 1 MiB buffers (1 MiB is 256 pages). */
#define MIB		TP_MIB
#define MIB_MR		(MIB + 4096)

/* Where in the server's second half dp_mixed and dp_sge WRITE. */
#define MIXED_OFF	(HALF + (1u << 20))

struct dp_remote {
	uint64_t addr;
	uint32_t rkey;
};

/* Checks that failed in this process (each printed by FAIL). */
extern int dp_failures;

void dp_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define FAIL(...)	dp_fail(__VA_ARGS__)

/* The exit status of a scenario: 0 only if every check held. */
static inline int dp_status(void)
{
	return dp_failures ? 1 : 0;
}

/* Print "usage: @usage" and return 2 (main's usage exit). */
int dp_usage(const char *usage);
/*
 * The arguments of a scenario against a server: ADDR INFO and the rest,
 * @argc in all. Reads INFO into @r; if @argc is not that, prints @usage
 * and returns 2.
 */
int dp_args(int argc, char **argv, int want, const char *usage,
	    struct dp_remote *r);

typedef int (*dp_scenario)(const char *addr, const struct dp_remote *r);
/* main() of a scenario whose arguments are ADDR INFO: @fn's status. */
int dp_run(int argc, char **argv, const char *usage, dp_scenario fn);

/* INFO: "addr rkey", written whole (through INFO.tmp, renamed). */
int dp_put_info(const char *path, const void *addr, uint32_t rkey);
/* The "addr rkey" in @path, waited for up to 60 s (exits if none). */
void dp_read_info(const char *path, struct dp_remote *r);

static inline struct krc_vq *dp_connect(const char *addr)
{
	return tp_connect(addr, 0, NULL);
}

/* @len bytes of new memory registered on @vq (LOCAL_WRITE); NULL: FAIL. */
void *dp_reg(struct krc_vq *vq, size_t len, struct krc_mr *mr);

/* A signaled one-SGE request. */
static inline void fill(struct krcore_wr *wr, uint8_t op, void *local,
			uint32_t lkey, uint32_t len, uint64_t raddr,
			uint32_t rkey, uint64_t id)
{
	tp_wr(wr, op, local, lkey, len, raddr, rkey, id, KRCORE_WR_SIGNALED);
}

/*
 * 4 on the debug kernel (KASAN, lockdep: three times slower, more with
 * four nodes on two CPUs), else 1: dp_one's and dp_reap's waits are
 * that many times longer.
 */
int dp_scale(void);

/* Post one request and wait for its completion; its status. */
int dp_one(struct krc_vq *vq, struct krcore_wr *wr, struct krcore_cqe *cqe);
/*
 * Wait up to @timeout_s for @n completions of wr_ids @base..@base+n-1
 * into @c (indexed by wr_id - @base); how many came.
 */
int dp_reap(struct krc_vq *vq, struct krcore_cqe *c, int n, int base,
	    int timeout_s);

/* The kernel's copy of a VQ ring header, read through a mapping. */
struct krcore_ring dp_ring_header(struct krc_vq *vq, uint32_t size);
/* Completions waiting in a VQ's ring (KRCORE_IOC_QWAIT, no sleep). */
int dp_ring_available(struct krc_vq *vq);

/* krcore's module parameters (exit on failure). */
unsigned long dp_param(const char *name);
void dp_set_param(const char *name, unsigned long v);

double dp_now(void);

/* Files in @dir that the scripts and the programs signal each other by. */
int dp_exists(const char *dir, const char *name);
void dp_touch(const char *dir, const char *name);
/* @dir/@name, holding @conn_id (the pooled connection a VQ got). */
void dp_put_conn(const char *dir, const char *name, uint32_t conn_id);
/* Wait up to @secs for @dir/@name; -1 (and FAIL) if it never came. */
int dp_wait_file(const char *dir, const char *name, int secs);

/* The bytes WRITE @id of process @me puts at its byte @k. */
static inline uint8_t dp_wpat(int me, uint64_t id, int k)
{
	return (uint8_t)(id * 5 + (uint64_t)k * 3 + (uint64_t)me * 11 + 1);
}

typedef int (*dp_worker)(const char *addr, const struct dp_remote *r,
			 int me, int arg);
/*
 * @procs processes each run @fn(addr, r, me, arg); prints how many
 * failed, 0 only if none did.
 */
int dp_forked(int procs, dp_worker fn, const char *addr,
	      const struct dp_remote *r, int arg);

#endif /* KRC_TESTS_DP_HELPERS_H */
