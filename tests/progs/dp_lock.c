// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_lock - locks and barriers on remote memory (KRCORE_IOC_LOCK, _UNLOCK;
 * krc_lock(), krc_barrier_wait()), by processes on any nodes that share a
 * region's key through a file.
 *
 *   dp_lock hold NODE FILE     allocate 4 KiB with every right on NODE,
 *                              write its key to FILE, print "holding",
 *                              and on SIGTERM print "final N" (the
 *                              counter at byte 8) and free it
 *   dp_lock count FILE N       N times: lock word 0, READ the counter at
 *                              byte 8, WRITE it plus one, unlock
 *   dp_lock order FILE WAIT HOLD TAG  after WAIT ms take the lock, print
 *                              "TAG grant G", keep it HOLD ms, unlock
 *   dp_lock hang FILE          take the lock, print "locked G", sleep
 *   dp_lock errors FILE        bad locks get their exact errors; a lock
 *                              not granted in time leaves the queue
 *   dp_lock barrier FILE N RANK ROUNDS  ROUNDS barriers of N processes:
 *                              before each, write the round to slot RANK
 *                              (one process 300 ms late to it each round);
 *                              after it, every slot must show that round
 *   dp_lock stale FILE         the region is gone: ESTALE
 *   dp_lock value FILE         print "value N", the counter at byte 8
 *   dp_lock nospace FILE       a lock refused: ENOSPC (the owner's table)
 *
 * A failed check prints FAIL and the exit status is 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dp/helpers.h"

#define TAG		"dp_lock"
#define COUNTER		8	/* the counter guarded by the lock at 0 */
#define BARRIER		16	/* the barrier's counter */
#define SLOTS		64	/* one word per barrier process */

static struct krc_vq *vq;
static struct krc_lmr lmr;	/* the shared region */
static uint64_t *buf;		/* 4 KiB, registered */
static struct krc_mr mr;

static void expect(int got, int want, const char *what)
{
	if (got != want)
		FAIL("%s: %s, expected %s", what, got ? strerror(-got) : "0",
		     strerror(-want));
}

/* The key file: "NODE ADDR RKEY LENGTH". */
static void load(const char *file)
{
	char node[64];
	FILE *f = fopen(file, "r");

	memset(&lmr, 0, sizeof(lmr));
	if (!f || fscanf(f, "%63s %" SCNu64 " %" SCNu32 " %" SCNu64, node,
			 &lmr.addr, &lmr.rkey, &lmr.length) != 4)
		tp_die("no key in %s", file);
	fclose(f);
	if (krc_gid_parse(node, lmr.gid))
		tp_die("bad node %s", node);
}

static void connect_to(const uint8_t gid[16])
{
	struct krcore_qconnect qc;

	if (krc_vq_open(&vq) < 0 || krc_qconnect_gid(vq, gid, 0, 0, &qc) < 0)
		tp_die("connect: %s", krc_errmsg());
	buf = dp_reg(vq, 4096, &mr);
}

static int lock_raw(uint64_t addr, uint32_t rkey, uint32_t timeout_ms,
		    struct krcore_lock *lk)
{
	memset(lk, 0, sizeof(*lk));
	memcpy(lk->gid, lmr.gid, 16);
	lk->addr = addr;
	lk->rkey = rkey;
	lk->timeout_ms = timeout_ms;
	return ioctl(krc_vq_fd(vq), KRCORE_IOC_LOCK, lk) < 0 ? -errno : 0;
}

static int unlock_raw(uint32_t handle)
{
	struct krcore_unlock u = { .handle = handle };

	return ioctl(krc_vq_fd(vq), KRCORE_IOC_UNLOCK, &u) < 0 ? -errno : 0;
}

static int do_hold(const char *node, const char *file)
{
	struct krcore_qconnect qc;
	char tmp[512];
	sigset_t term;
	FILE *f;
	int sig;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, node, 0, &qc) < 0)
		tp_die("connect %s: %s", node, krc_errmsg());
	buf = dp_reg(vq, 4096, &mr);
	if (krc_lmr_alloc(vq, node, 4096, KRCORE_ACCESS_REMOTE_READ |
			  KRCORE_ACCESS_REMOTE_WRITE |
			  KRCORE_ACCESS_REMOTE_ATOMIC, &lmr))
		tp_die("alloc: %s", krc_errmsg());
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s %" PRIu64 " %" PRIu32 " %" PRIu64 "\n", node,
			  lmr.addr, lmr.rkey, lmr.length) < 0 || fclose(f) ||
	    rename(tmp, file))
		tp_die("write %s", file);
	printf(TAG ": holding region %u\n", lmr.region);
	fflush(stdout);
	sigwait(&term, &sig);
	if (krc_lmr_read(vq, &lmr, COUNTER, buf, mr.lkey, 8))
		tp_die("read: %s", krc_errmsg());
	printf("final %" PRIu64 "\n", buf[0]);
	if (krc_lmr_free(vq, &lmr))
		tp_die("free: %s", krc_errmsg());
	return 0;
}

static int do_count(unsigned int n)
{
	struct krc_lock lk;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (krc_lock(vq, &lmr, 0, 30000, &lk))
			tp_die("lock %u: %s", i, krc_errmsg());
		if (krc_lmr_read(vq, &lmr, COUNTER, buf, mr.lkey, 8))
			tp_die("read: %s", krc_errmsg());
		buf[0]++;
		if (krc_lmr_write(vq, &lmr, COUNTER, buf, mr.lkey, 8))
			tp_die("write: %s", krc_errmsg());
		if (krc_unlock(vq, &lk))
			tp_die("unlock %u: %s", i, krc_errmsg());
	}
	printf(TAG ": counted %u\n", n);
	return 0;
}

static int do_order(unsigned int wait_ms, unsigned int hold_ms,
		    const char *tag)
{
	struct krc_lock lk;

	usleep(wait_ms * 1000);
	if (krc_lock(vq, &lmr, 0, 60000, &lk))
		tp_die("lock: %s", krc_errmsg());
	printf("%s grant %" PRIu64 "\n", tag, lk.grant);
	fflush(stdout);
	usleep(hold_ms * 1000);
	expect(krc_unlock(vq, &lk), 0, "unlock");
	return dp_status();
}

static int do_hang(void)
{
	struct krc_lock lk;

	if (krc_lock(vq, &lmr, 0, 60000, &lk))
		tp_die("lock: %s", krc_errmsg());
	printf(TAG ": locked %" PRIu64 "\n", lk.grant);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

static int do_errors(void)
{
	struct krcore_lock lk, lk2;
	struct krcore_unlock u = { .handle = 1, .reserved = 1 };
	uint64_t t0;
	int ret;

	expect(lock_raw(lmr.addr + 4, lmr.rkey, 0, &lk), -EINVAL, "misaligned");
	expect(lock_raw(lmr.addr & (KRCORE_LMR_MAX_LEN - 1), lmr.rkey, 0, &lk),
	       -EINVAL, "region 0");
	expect(lock_raw(lmr.addr, lmr.rkey, KRCORE_LMR_MAX_WAIT_MS + 1, &lk),
	       -EINVAL, "timeout too long");
	memset(&lk, 0, sizeof(lk));
	memcpy(lk.gid, lmr.gid, 16);
	lk.addr = lmr.addr;
	lk.rkey = lmr.rkey;
	lk.reserved = 1;
	expect(ioctl(krc_vq_fd(vq), KRCORE_IOC_LOCK, &lk) < 0 ? -errno : 0,
	       -EINVAL, "reserved");
	expect(lock_raw(lmr.addr, lmr.rkey ^ 0x80, 0, &lk), -EACCES,
	       "another key");
	expect(lock_raw(lmr.addr + lmr.length, lmr.rkey, 0, &lk), -ERANGE,
	       "past the end");
	expect(lock_raw(lmr.addr + lmr.length - 4, lmr.rkey, 0, &lk), -EINVAL,
	       "the last 4 bytes");
	expect(lock_raw(lmr.addr + 1000 * KRCORE_LMR_MAX_LEN, lmr.rkey, 0, &lk),
	       -ESTALE, "a region that does not exist");
	expect(unlock_raw(0), -ENOENT, "unlock of handle 0");
	expect(unlock_raw(777), -ENOENT, "unlock of a handle never given");
	expect(ioctl(krc_vq_fd(vq), KRCORE_IOC_UNLOCK, &u) < 0 ? -errno : 0,
	       -EINVAL, "unlock with reserved");

	/* The last word of the region is a lock too, and is released. */
	ret = lock_raw(lmr.addr + lmr.length - 8, lmr.rkey, 0, &lk);
	expect(ret, 0, "the last word");
	if (!ret) {
		expect(unlock_raw(lk.handle), 0, "its unlock");
		expect(unlock_raw(lk.handle), -ENOENT, "a second unlock");
	}

	/* Held by this process: a second lock waits, times out, leaves. */
	ret = lock_raw(lmr.addr + 32, lmr.rkey, 0, &lk);
	expect(ret, 0, "lock word 32");
	if (ret)
		return dp_status();
	t0 = tp_now_ms();
	expect(lock_raw(lmr.addr + 32, lmr.rkey, 400, &lk2), -ETIMEDOUT,
	       "a second lock of a held word");
	if (tp_now_ms() - t0 < 350)
		FAIL("the second lock gave up after %" PRIu64 " ms, not 400",
		     tp_now_ms() - t0);
	expect(unlock_raw(lk.handle), 0, "unlock word 32");
	/* The waiter that gave up is not granted: the next lock is. */
	ret = lock_raw(lmr.addr + 32, lmr.rkey, 5000, &lk);
	expect(ret, 0, "lock word 32 again");
	if (!ret && lk.grant != 1)
		FAIL("word 32 granted as number %llu, not 1: the lock was not "
		     "idle (the waiter that left was queued)",
		     (unsigned long long)lk.grant);
	if (!ret)
		expect(unlock_raw(lk.handle), 0, "unlock word 32 again");
	printf(TAG ": errors: every bad lock refused with its error\n");
	return dp_status();
}

static int do_barrier(unsigned int n, unsigned int rank, unsigned int rounds)
{
	struct krc_barrier b;
	uint64_t *slots = buf + 8;
	unsigned int r, i;

	if (n > 64 || rank >= n)
		tp_die("at most 64 processes");
	if (krc_barrier_init(&b, &lmr, BARRIER, n))
		tp_die("barrier: %s", krc_errmsg());
	for (r = 1; r <= rounds; r++) {
		if (r % n == rank)
			usleep(300000);		/* the late one this round */
		buf[0] = r;
		if (krc_lmr_write(vq, &lmr, SLOTS + 8 * rank, buf, mr.lkey, 8))
			tp_die("write: %s", krc_errmsg());
		if (krc_barrier_wait(vq, &b, buf, mr.lkey, 60000))
			tp_die("barrier round %u: %s", r, krc_errmsg());
		if (krc_lmr_read(vq, &lmr, SLOTS, slots, mr.lkey, 8 * n))
			tp_die("read: %s", krc_errmsg());
		for (i = 0; i < n; i++)
			if (slots[i] < r)
				FAIL("round %u: process %u is at round %" PRIu64
				     " after the barrier", r, i, slots[i]);
	}
	printf(TAG ": barrier: %u rounds of %u passed\n", rounds, n);
	return dp_status();
}

static int do_stale(void)
{
	struct krcore_lock lk;

	expect(lock_raw(lmr.addr, lmr.rkey, 0, &lk), -ESTALE,
	       "a lock on a freed region");
	printf(TAG ": stale: a freed region's lock refused\n");
	return dp_status();
}

static int do_nospace(void)
{
	struct krcore_lock lk;

	expect(lock_raw(lmr.addr, lmr.rkey, 5000, &lk), -ENOSPC,
	       "a lock past this node's share of the owner's table");
	printf(TAG ": nospace: refused\n");
	return dp_status();
}

static int do_value(void)
{
	if (krc_lmr_read(vq, &lmr, COUNTER, buf, mr.lkey, 8))
		tp_die("read: %s", krc_errmsg());
	printf("value %" PRIu64 "\n", buf[0]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *usage =
		"dp_lock hold NODE FILE | count FILE N | order FILE WAIT HOLD TAG |\n"
		"        hang FILE | errors FILE | barrier FILE N RANK ROUNDS |\n"
		"        stale FILE | value FILE | nospace FILE";

	if (argc == 4 && !strcmp(argv[1], "hold"))
		return do_hold(argv[2], argv[3]);
	if (argc < 3)
		return dp_usage(usage);
	load(argv[2]);
	connect_to(lmr.gid);
	if (argc == 4 && !strcmp(argv[1], "count"))
		return do_count((unsigned int)strtoul(argv[3], NULL, 0));
	if (argc == 6 && !strcmp(argv[1], "order"))
		return do_order((unsigned int)strtoul(argv[3], NULL, 0),
				(unsigned int)strtoul(argv[4], NULL, 0),
				argv[5]);
	if (argc == 3 && !strcmp(argv[1], "hang"))
		return do_hang();
	if (argc == 3 && !strcmp(argv[1], "errors"))
		return do_errors();
	if (argc == 3 && !strcmp(argv[1], "nospace"))
		return do_nospace();
	if (argc == 3 && !strcmp(argv[1], "value"))
		return do_value();
	if (argc == 3 && !strcmp(argv[1], "stale"))
		return do_stale();
	if (argc == 6 && !strcmp(argv[1], "barrier"))
		return do_barrier((unsigned int)strtoul(argv[3], NULL, 0),
				  (unsigned int)strtoul(argv[4], NULL, 0),
				  (unsigned int)strtoul(argv[5], NULL, 0));
	return dp_usage(usage);
}
