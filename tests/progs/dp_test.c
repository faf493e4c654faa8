// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_test - the data plane, exercised for the cluster tests.
 *
 *   dp_test serve INFO               register a 4 MiB buffer (pattern in the
 *                                    first half), write "addr rkey" to INFO,
 *                                    serve until INFO.stop exists
 *   dp_test rw ADDR INFO             WRITE, READ back and compare, 8 B..1 MiB;
 *                                    FAA and CAS with their results checked
 *   dp_test share ADDR INFO PROCS N  PROCS processes, each N interleaved
 *                                    batches of READs: every completion goes
 *                                    to its process, data checked
 *   dp_test garbage ADDR INFO        every malformed request: refused with
 *                                    its errno, nothing posted
 *   dp_test flood ADDR INFO          post far beyond the queue depth: EAGAIN,
 *                                    never an overflow, all complete
 *   dp_test badrkey ADDR INFO        READ with a bad rkey: this process gets
 *                                    the remote access error
 *   dp_test steady ADDR INFO SECS    READs for SECS seconds, all must succeed
 *                                    (recovery may re-post them)
 *   dp_test inflight ADDR INFO       keep READs in flight forever (to be killed)
 *   dp_test echo PORT N INFO         bind PORT, send back each of N messages
 *                                    to its sender's node and port (for a
 *                                    WRITE_IMM: the bytes written); publish
 *                                    its buffer in INFO
 *   dp_test ping ADDR PORT N INFO    bind a port, send N-1 messages (SEND and
 *                                    SEND_IMM, 1 B..4080 B) and one WRITE_IMM
 *                                    to ADDR:PORT; check each echo
 * Exit 0 only if every check held; each failure is printed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libkrcore.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define SRV_SIZE	(4u << 20)
#define HALF		(SRV_SIZE / 2)
#define ATOMIC_OFF	(SRV_SIZE - 4096)

static int failures;

#define FAIL(...) do { \
	fprintf(stderr, "dp_test: FAIL: " __VA_ARGS__); \
	fputc('\n', stderr); \
	failures++; \
} while (0)

static uint8_t pattern(uint64_t i)
{
	return (uint8_t)(i * 7 + 3);
}

static void *xalloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

struct remote {
	uint64_t addr;
	uint32_t rkey;
};

static int read_info(const char *path, struct remote *r)
{
	unsigned long long a;
	unsigned int k;
	FILE *f;
	int n;

	for (n = 0; n < 600; n++) {
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%llx %x", &a, &k) == 2) {
				fclose(f);
				r->addr = a;
				r->rkey = k;
				return 0;
			}
			fclose(f);
		}
		usleep(100000);
	}
	fprintf(stderr, "dp_test: no server info in %s\n", path);
	return -1;
}

static int serve(const char *info)
{
	char tmp[512], stop[512];
	struct krc_vq *vq;
	struct krc_mr mr;
	struct stat st;
	uint8_t *buf;
	uint64_t i;
	FILE *f;

	if (krc_vq_open(&vq) < 0) {
		fprintf(stderr, "dp_test: %s\n", krc_errmsg());
		return 1;
	}
	buf = xalloc(SRV_SIZE);
	for (i = 0; i < HALF; i++)
		buf[i] = pattern(i);
	if (krc_reg_mr(vq, buf, SRV_SIZE, KRCORE_ACCESS_LOCAL_WRITE |
		       KRCORE_ACCESS_REMOTE_READ | KRCORE_ACCESS_REMOTE_WRITE |
		       KRCORE_ACCESS_REMOTE_ATOMIC, &mr) < 0) {
		fprintf(stderr, "dp_test: %s\n", krc_errmsg());
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", info);
	snprintf(stop, sizeof(stop), "%s.stop", info);
	f = fopen(tmp, "w");
	if (!f)
		return 1;
	fprintf(f, "%llx %x\n", (unsigned long long)(uintptr_t)buf, mr.rkey);
	fclose(f);
	rename(tmp, info);
	printf("dp_test: serving 4 MiB at %p rkey %#x\n", (void *)buf, mr.rkey);
	fflush(stdout);
	while (stat(stop, &st) != 0)
		usleep(200000);
	return 0;
}

static struct krc_vq *connect_to(const char *addr)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq;

	if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, addr, 0, &qc) < 0) {
		fprintf(stderr, "dp_test: %s\n", krc_errmsg());
		exit(1);
	}
	return vq;
}

static void fill(struct krcore_wr *wr, uint8_t op, void *local, uint32_t lkey,
		 uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->opcode = op;
	wr->flags = KRCORE_WR_SIGNALED;
	wr->num_sge = 1;
	wr->sg_list[0].addr = (uintptr_t)local;
	wr->sg_list[0].length = len;
	wr->sg_list[0].lkey = lkey;
	wr->remote_addr = raddr;
	wr->rkey = rkey;
}

/* Post one request and wait for its completion; its status. */
static int one(struct krc_vq *vq, struct krcore_wr *wr, struct krcore_cqe *cqe)
{
	int n;

	n = krc_qpush(vq, wr, 1);
	if (n != 1) {
		FAIL("qpush: %s", krc_errmsg());
		return -1;
	}
	n = krc_qpop_wait(vq, cqe, 1, 20000);
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

static int do_rw(const char *addr, const struct remote *r)
{
	static const uint32_t sizes[] = { 8, 64, 4096, 65536, 1 << 20 };
	struct krc_vq *vq = connect_to(addr);
	uint8_t *src = xalloc(1 << 20), *dst = xalloc(1 << 20);
	uint64_t *word = xalloc(4096), id = 1;
	struct krc_mr ms, md, mw;
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	uint32_t i, s;

	if (krc_reg_mr(vq, src, 1 << 20, KRCORE_ACCESS_LOCAL_WRITE, &ms) < 0 ||
	    krc_reg_mr(vq, dst, 1 << 20, KRCORE_ACCESS_LOCAL_WRITE, &md) < 0 ||
	    krc_reg_mr(vq, word, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mw) < 0) {
		FAIL("reg_mr: %s", krc_errmsg());
		return 1;
	}
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		uint32_t len = sizes[s];

		/* READ the server's pattern. */
		memset(dst, 0, len);
		fill(&wr, KRCORE_WR_READ, dst, md.lkey, len, r->addr + 13 * s, r->rkey, id++);
		if (one(vq, &wr, &cqe))
			FAIL("READ %u: %s", len, krc_wc_status_str(cqe.status));
		for (i = 0; i < len; i++)
			if (dst[i] != pattern(13 * s + i)) {
				FAIL("READ %u: byte %u is %u, expected %u", len, i,
				     dst[i], pattern(13 * s + i));
				break;
			}
		if (cqe.byte_len != len)
			FAIL("READ %u: byte_len %u", len, cqe.byte_len);
		/* WRITE a fresh pattern to the second half, READ it back. */
		for (i = 0; i < len; i++)
			src[i] = (uint8_t)(i * 31 + len + s);
		fill(&wr, KRCORE_WR_WRITE, src, ms.lkey, len, r->addr + HALF, r->rkey, id++);
		if (one(vq, &wr, &cqe))
			FAIL("WRITE %u: %s", len, krc_wc_status_str(cqe.status));
		memset(dst, 0, len);
		fill(&wr, KRCORE_WR_READ, dst, md.lkey, len, r->addr + HALF, r->rkey, id++);
		if (one(vq, &wr, &cqe))
			FAIL("READ back %u: %s", len, krc_wc_status_str(cqe.status));
		if (memcmp(src, dst, len))
			FAIL("WRITE %u: data read back differs", len);
		printf("dp_test: READ, WRITE and read-back of %u bytes ok\n", len);
	}
	/* Atomics on a word of the server: set it, FAA, CAS. */
	word[1] = 1000;
	fill(&wr, KRCORE_WR_WRITE, &word[1], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	if (one(vq, &wr, &cqe))
		FAIL("atomic setup: %s", krc_wc_status_str(cqe.status));
	fill(&wr, KRCORE_WR_ATOMIC_FAA, &word[0], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	wr.compare_add = 5;
	if (one(vq, &wr, &cqe) || word[0] != 1000)
		FAIL("FAA returned %llu (status %u), expected 1000",
		     (unsigned long long)word[0], cqe.status);
	fill(&wr, KRCORE_WR_ATOMIC_CAS, &word[0], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	wr.compare_add = 1005;
	wr.swap = 42;
	if (one(vq, &wr, &cqe) || word[0] != 1005)
		FAIL("CAS returned %llu, expected 1005", (unsigned long long)word[0]);
	fill(&wr, KRCORE_WR_ATOMIC_CAS, &word[0], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	wr.compare_add = 1005;	/* fails: the word is 42 now */
	wr.swap = 7;
	if (one(vq, &wr, &cqe) || word[0] != 42)
		FAIL("failing CAS returned %llu, expected 42", (unsigned long long)word[0]);
	fill(&wr, KRCORE_WR_READ, &word[2], mw.lkey, 8, r->addr + ATOMIC_OFF, r->rkey, id++);
	if (one(vq, &wr, &cqe) || word[2] != 42)
		FAIL("word after atomics is %llu, expected 42", (unsigned long long)word[2]);
	else
		printf("dp_test: FAA and CAS ok\n");
	/* A synchronous helper round. */
	if (krc_read_sync(vq, dst, md.lkey, 8, r->addr, r->rkey, 10000) ||
	    dst[0] != pattern(0))
		FAIL("krc_read_sync: %s", krc_errmsg());
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* One process of "share": batches of READs of its own regions. */
static int share_worker(const char *addr, const struct remote *r, int me,
			int batches)
{
	struct krc_vq *vq = connect_to(addr);
	uint8_t *buf = xalloc(1 << 16);
	struct krcore_wr wr[8];
	struct krcore_cqe cqe[8];
	struct krc_mr mr;
	int b, i, got, n;

	if (krc_reg_mr(vq, buf, 1 << 16, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	for (b = 0; b < batches; b++) {
		for (i = 0; i < 8; i++) {
			uint32_t off = (uint32_t)((me * 8 + i) * 64 + b) % (HALF - 64);

			fill(&wr[i], KRCORE_WR_READ, buf + i * 64, mr.lkey, 64,
			     r->addr + off, r->rkey,
			     ((uint64_t)me << 32) | ((uint64_t)b << 8) | i);
			/* Only every other request asks for a completion. */
			if (i % 2 == 0 && i != 7)
				wr[i].flags = 0;
		}
		n = krc_qpush(vq, wr, 8);
		if (n != 8) {
			FAIL("worker %d: qpush %d: %s", me, n, krc_errmsg());
			return 1;
		}
		for (got = 0; got < 4; ) {
			n = krc_qpop_wait(vq, cqe, 8, 20000);
			if (n <= 0) {
				FAIL("worker %d: completions missing", me);
				return 1;
			}
			for (i = 0; i < n; i++) {
				uint64_t id = cqe[i].wr_id;

				uint64_t k = id & 0xff;

				if ((int)(id >> 32) != me ||
				    ((id >> 8) & 0xffffff) != (uint64_t)b ||
				    !(k % 2 || k == 7) || cqe[i].status)
					FAIL("worker %d got completion %llx status %u",
					     me, (unsigned long long)id, cqe[i].status);
			}
			got += n;
		}
		for (i = 0; i < 8; i++) {
			uint32_t off = (uint32_t)((me * 8 + i) * 64 + b) % (HALF - 64);
			int k;

			for (k = 0; k < 64; k++)
				if (buf[i * 64 + k] != pattern(off + k)) {
					FAIL("worker %d batch %d: wrong data", me, b);
					return 1;
				}
		}
	}
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

static int forked(int procs, int (*fn)(const char *, const struct remote *, int, int),
		  const char *addr, const struct remote *r, int arg)
{
	int p, status, bad = 0;

	for (p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(fn(addr, r, p, arg));
		if (pid < 0)
			return 1;
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	printf("dp_test: %d processes, %d failed\n", procs, bad);
	return bad ? 1 : 0;
}

struct bad_case {
	const char *what;
	int errnum;
	uint32_t reason;
};

/* Break a good READ the way bad case @c says. */
static void mutate(struct krcore_wr *wr, int c, const struct krc_mr *mr,
		   const struct krc_mr *ro, uint8_t *buf)
{
	switch (c) {
	case 0:
		wr->opcode = 99;
		break;
	case 1:
		wr->flags = 0x80;
		break;
	case 2:
		wr->reserved1 = 1;
		break;
	case 3:
		wr->num_sge = 0;
		break;
	case 4:
		wr->num_sge = KRCORE_MAX_SGE + 1;
		break;
	case 5:
		wr->sg_list[0].length = 0;
		break;
	case 6:
		wr->opcode = KRCORE_WR_SEND;
		wr->sg_list[0].length = 4096;
		break;
	case 7:
		wr->opcode = KRCORE_WR_ATOMIC_FAA;
		wr->sg_list[0].length = 4;
		break;
	case 8:
		wr->opcode = KRCORE_WR_ATOMIC_CAS;
		wr->sg_list[0].length = 8;
		wr->remote_addr += 3;
		break;
	case 9:
		wr->sg_list[0].lkey = mr->lkey ^ 0x5a5a00;
		break;
	case 10:
		wr->sg_list[0].addr = (uintptr_t)buf + 4090;
		break;
	case 11:
		wr->sg_list[0].addr = (uintptr_t)buf + 4096;
		wr->sg_list[0].lkey = ro->lkey;
		break;
	default:
		wr->opcode = KRCORE_WR_SEND;
		break;
	}
}

static int do_garbage(const char *addr, const struct remote *r)
{
	struct krc_vq *vq = connect_to(addr), *nc;
	uint8_t *buf = xalloc(8192);
	struct krc_mr mr, ro;
	struct krcore_wr wr, good;
	const struct krcore_qpush *res;
	int n, c;
	static const struct bad_case cases[] = {
		{ "unknown opcode", EINVAL, KRCORE_R_OPCODE },
		{ "unknown flags", EINVAL, KRCORE_R_FLAGS },
		{ "reserved field", EINVAL, KRCORE_R_RESERVED },
		{ "no SGE", EINVAL, KRCORE_R_NUM_SGE },
		{ "too many SGEs", EINVAL, KRCORE_R_NUM_SGE },
		{ "zero length", EINVAL, KRCORE_R_ZERO_LENGTH },
		{ "too long", EMSGSIZE, KRCORE_R_TOO_LONG },
		{ "atomic of 4 bytes", EINVAL, KRCORE_R_ATOMIC_SIZE },
		{ "misaligned atomic", EINVAL, KRCORE_R_ATOMIC_ALIGN },
		{ "foreign lkey", ENOKEY, KRCORE_R_LKEY },
		{ "outside the registration", EFAULT, KRCORE_R_RANGE },
		{ "READ into a read-only registration", EACCES, KRCORE_R_ACCESS },
		{ "SEND without a port", EDESTADDRREQ, KRCORE_R_NO_PORT },
	};

	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0 ||
	    krc_reg_mr(vq, buf + 4096, 4096, 0, &ro) < 0) {
		FAIL("reg_mr: %s", krc_errmsg());
		return 1;
	}
	fill(&good, KRCORE_WR_READ, buf, mr.lkey, 64, r->addr, r->rkey, 1);
	for (c = 0; c < (int)ARRAY_SIZE(cases); c++) {
		wr = good;
		mutate(&wr, c, &mr, &ro, buf);
		n = krc_qpush(vq, &wr, 1);
		res = krc_qpush_result(vq);
		if (n != -cases[c].errnum || res->done != 0 ||
		    res->reason != cases[c].reason)
			FAIL("%s: qpush %d (reason %u), expected %d (reason %u)",
			     cases[c].what, n, res->reason, -cases[c].errnum,
			     cases[c].reason);
		else
			printf("dp_test: refused: %s: %s\n", cases[c].what,
			       krc_errmsg());
	}
	/* A batch: the good ones before a bad one are posted, not after. */
	{
		struct krcore_wr b[3] = { good, good, good };
		struct krcore_cqe cqe[4];
		int got = 0;

		b[1].opcode = 0;
		b[0].wr_id = 10;
		b[2].wr_id = 12;
		n = krc_qpush(vq, b, 3);
		if (n != 1)
			FAIL("batch with a bad second request: posted %d, expected 1", n);
		while (got < 1 && (n = krc_qpop_wait(vq, cqe, 4, 10000)) > 0)
			got += n;
		if (got != 1 || cqe[0].wr_id != 10 || cqe[0].status)
			FAIL("batch: completions %d, first wr_id %llu", got,
			     (unsigned long long)cqe[0].wr_id);
	}
	/* A VQ that is not connected. */
	if (krc_vq_open(&nc) == 0) {
		n = krc_qpush(nc, &good, 1);
		if (n != -ENOTCONN)
			FAIL("unconnected VQ: qpush %d, expected -ENOTCONN", n);
		krc_vq_close(nc);
	}
	/* And after all that the VQ works. */
	if (krc_read_sync(vq, buf, mr.lkey, 64, r->addr, r->rkey, 10000))
		FAIL("VQ broken after garbage: %s", krc_errmsg());
	krc_vq_close(vq);
	printf("dp_test: garbage: %d failures\n", failures);
	return failures ? 1 : 0;
}

static int do_flood(const char *addr, const struct remote *r)
{
	struct krc_vq *vq = connect_to(addr);
	uint8_t *buf = xalloc(1 << 16);
	struct krcore_wr wr[512];
	struct krcore_cqe cqe[64];
	int posted = 0, done = 0, again = 0, n, i, rounds = 0, popped = 0;
	struct krc_mr mr;

	if (krc_reg_mr(vq, buf, 1 << 16, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	for (i = 0; i < 512; i++)
		fill(&wr[i], KRCORE_WR_READ, buf + (i % 128) * 64, mr.lkey, 64,
		     r->addr, r->rkey, (uint64_t)i);
	/* 512 at once: more than the VQ's depth. */
	n = krc_qpush(vq, wr, 512);
	if (n <= 0 || n >= 512 || krc_qpush_result(vq)->error != EAGAIN)
		FAIL("flood: qpush of 512 posted %d (error %u)", n,
		     krc_qpush_result(vq)->error);
	else
		printf("dp_test: 512 at once: %d posted, then %s\n", n, krc_errmsg());
	posted = n > 0 ? n : 0;
	/* Keep pushing, never reading completions, until nothing fits. */
	for (i = 0; i < 1000; i++) {
		n = krc_qpush(vq, wr, 64);
		if (n == -EAGAIN)
			break;
		if (n < 0) {
			FAIL("flood: qpush: %s", krc_errmsg());
			break;
		}
		posted += n;
		usleep(1000);
	}
	if (i == 1000)
		FAIL("flood: the queue never filled (%d posted)", posted);
	/* Every completion is in the ring: none was lost to an overflow. */
	usleep(200000);
	while ((n = krc_qpop(vq, cqe, 64)) > 0)
		popped += n;
	done = popped;
	printf("dp_test: ring full after %d requests without reading: %d completions waiting\n",
	       posted, popped);
	if (popped > (int)krc_qpush_result(vq)->done + posted)
		FAIL("flood: more completions than requests");
	/* Then the normal way: pop, push, until 5000 were posted. */
	while ((posted < 5000 || done < posted) && rounds++ < 100000) {
		if (posted < 5000) {
			n = krc_qpush(vq, wr, 128);
			if (n == -EAGAIN)
				again++;
			else if (n < 0)
				FAIL("flood: qpush: %s", krc_errmsg());
			else
				posted += n;
		}
		n = krc_qpop_wait(vq, cqe, 64, 10000);
		if (n <= 0) {
			FAIL("flood: no completions (%d posted, %d done)", posted, done);
			break;
		}
		for (i = 0; i < n; i++)
			if (cqe[i].status)
				FAIL("flood: completion status %u", cqe[i].status);
		done += n;
	}
	if (done != posted)
		FAIL("flood: %d posted, %d completed", posted, done);
	printf("dp_test: flood: %d posted, %d completed, %d EAGAIN\n", posted,
	       done, again);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

static int do_badrkey(const char *addr, const struct remote *r)
{
	struct krc_vq *vq = connect_to(addr);
	uint8_t *buf = xalloc(4096);
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	struct krc_mr mr;
	int st;

	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	fill(&wr, KRCORE_WR_READ, buf, mr.lkey, 64, r->addr, r->rkey ^ 0x777700, 99);
	st = one(vq, &wr, &cqe);
	if (st != KRCORE_WC_REM_ACCESS_ERR)
		FAIL("bad rkey: status %d (%s), expected remote access error", st,
		     krc_wc_status_str((uint32_t)st));
	else
		printf("dp_test: bad rkey: %s\n", krc_wc_status_str(cqe.status));
	/* The VQ goes on working (on a recovered connection). */
	if (krc_read_sync(vq, buf, mr.lkey, 64, r->addr, r->rkey, 20000) ||
	    buf[0] != pattern(0))
		FAIL("after the error the VQ does not work: %s", krc_errmsg());
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* READs for @secs seconds with 8 in flight; every one must succeed. */
static int steady_worker(const char *addr, const struct remote *r, int me, int secs)
{
	struct krc_vq *vq = connect_to(addr);
	uint8_t *buf = xalloc(1 << 16);
	struct krcore_cqe cqe[16];
	struct krcore_wr wr;
	int inflight = 0, n, i;
	unsigned long done = 0;
	struct krc_mr mr;
	double end = now_s() + secs;
	uint64_t id = 0;

	if (krc_reg_mr(vq, buf, 1 << 16, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	double stuck = 0;

	while (now_s() < end || inflight) {
		while (inflight < 8 && now_s() < end) {
			fill(&wr, KRCORE_WR_READ, buf + (id % 64) * 64, mr.lkey, 64,
			     r->addr + (id % 1000) * 64, r->rkey, id);
			n = krc_qpush(vq, &wr, 1);
			if (n == -EAGAIN && !inflight) {
				/* Nothing to wait for: retry, but not forever. */
				if (!stuck)
					stuck = now_s();
				if (now_s() - stuck > 10) {
					FAIL("steady %d: EAGAIN (%s) for 10 s, none in flight",
					     me, krc_errmsg());
					return 1;
				}
				usleep(1000);
				continue;
			}
			stuck = 0;
			if (n == -EAGAIN)
				break;
			if (n != 1) {
				FAIL("steady %d: qpush: %s", me, krc_errmsg());
				return 1;
			}
			id++;
			inflight++;
		}
		if (!inflight)
			continue;
		n = krc_qpop_wait(vq, cqe, 16, 30000);
		if (n <= 0) {
			FAIL("steady %d: no completion (%d in flight)", me, inflight);
			return 1;
		}
		for (i = 0; i < n; i++)
			if (cqe[i].status) {
				FAIL("steady %d: READ %llu: %s", me,
				     (unsigned long long)cqe[i].wr_id,
				     krc_wc_status_str(cqe[i].status));
				return 1;
			}
		inflight -= n;
		done += (unsigned long)n;
	}
	printf("dp_test: steady %d: %lu READs, all succeeded\n", me, done);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

static int do_inflight(const char *addr, const struct remote *r)
{
	struct krc_vq *vq = connect_to(addr);
	uint8_t *buf = xalloc(1 << 20);
	struct krcore_cqe cqe[64];
	struct krcore_wr wr[32];
	struct krc_mr mr;
	int i;

	if (krc_reg_mr(vq, buf, 1 << 20, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	for (i = 0; i < 32; i++)
		fill(&wr[i], KRCORE_WR_READ, buf + i * 32768, mr.lkey, 32768,
		     r->addr + i * 32768, r->rkey, (uint64_t)i);
	printf("dp_test: keeping READs in flight\n");
	fflush(stdout);
	for (;;) {
		krc_qpush(vq, wr, 32);
		krc_qpop(vq, cqe, 64);
	}
	return 0;
}

static int send_one(struct krc_vq *vq, const struct krc_mr *mr, uint32_t len,
		    uint8_t op, uint32_t imm, uint64_t id)
{
	struct krcore_cqe cqe;
	struct krcore_wr wr;

	fill(&wr, op, mr->addr, mr->lkey, len, 0, 0, id);
	wr.imm_data = imm;
	return one(vq, &wr, &cqe);
}

static int do_echo(int port, int n, const char *info)
{
	struct krc_vq *rx, *tx = NULL;
	uint8_t *buf = xalloc(8192);
	struct krcore_qconnect qc;
	struct krc_msg m;
	struct krc_mr mr;
	char tmp[512];
	int i, st;
	FILE *f;

	if (krc_vq_open(&rx) < 0 || krc_qbind(rx, (uint16_t)port) < 0 ||
	    krc_reg_mr(rx, buf, 8192, KRCORE_ACCESS_LOCAL_WRITE |
		       KRCORE_ACCESS_REMOTE_WRITE, &mr) < 0) {
		FAIL("echo: %s", krc_errmsg());
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", info);
	f = fopen(tmp, "w");
	if (!f)
		return 1;
	fprintf(f, "%llx %x\n", (unsigned long long)(uintptr_t)buf + 4096, mr.rkey);
	fclose(f);
	rename(tmp, info);
	printf("dp_test: echo on port %d\n", port);
	fflush(stdout);
	for (i = 0; i < n; i++) {
		if (krc_qpop_msg_wait(rx, &m, 60000) != 1) {
			FAIL("echo: message %d never came", i);
			return 1;
		}
		if (!tx) {
			char a[KRC_GID_STRLEN];

			krc_gid_format(m.src_gid, a, sizeof(a));
			if (krc_vq_open(&tx) < 0 ||
			    krc_qconnect(tx, a, m.src_port, &qc) < 0) {
				FAIL("echo: connect back: %s", krc_errmsg());
				return 1;
			}
		}
		/* A WRITE_IMM's bytes are in our buffer already. */
		if (m.opcode == KRCORE_WR_WRITE_IMM)
			memcpy(buf, buf + 4096, m.len);
		else
			memcpy(buf, m.data, m.len);
		st = send_one(tx, &mr, m.len, m.opcode == KRCORE_WR_WRITE_IMM ?
			      KRCORE_WR_SEND_IMM : m.opcode, m.imm_data, i);
		krc_qmsg_done(rx);
		if (st)
			FAIL("echo: send back: status %d", st);
	}
	printf("dp_test: echoed %d messages, %u dropped\n", n, krc_msgs_dropped(rx));
	return failures ? 1 : 0;
}

static int do_ping(const char *addr, int port, int n, const char *info)
{
	struct krc_vq *vq;
	uint8_t *buf = xalloc(8192);
	struct krcore_qconnect qc;
	struct remote r;
	struct krc_msg m;
	struct krc_mr mr;
	int i, k;

	if (read_info(info, &r))
		return 1;
	if (krc_vq_open(&vq) < 0 || krc_qbind(vq, (uint16_t)(port + 1)) < 0 ||
	    krc_qconnect(vq, addr, (uint32_t)port, &qc) < 0 ||
	    krc_reg_mr(vq, buf, 8192, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0) {
		FAIL("ping: %s", krc_errmsg());
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint32_t len = i == n - 1 ? KRCORE_MAX_SEND :
			       1 + (uint32_t)(i * 997) % KRCORE_MAX_SEND;
		uint8_t op = i % 2 ? KRCORE_WR_SEND_IMM : KRCORE_WR_SEND;
		uint32_t imm = 0xabc000u + (uint32_t)i;
		struct krcore_cqe cqe;
		struct krcore_wr wr;

		for (k = 0; k < (int)len; k++)
			buf[k] = (uint8_t)(k + i);
		if (i == n - 1) {
			/* WRITE_IMM: 16-bit immediate; echoed as a SEND_IMM */
			len = KRCORE_MAX_SEND;
			imm = 0x1234;
			fill(&wr, KRCORE_WR_WRITE_IMM, buf, mr.lkey, len, r.addr,
			     r.rkey, (uint64_t)i);
			wr.imm_data = imm;
			if (one(vq, &wr, &cqe)) {
				FAIL("ping: WRITE_IMM failed: %u", cqe.status);
				return 1;
			}
			op = KRCORE_WR_SEND_IMM;
		} else if (send_one(vq, &mr, len, op, imm, (uint64_t)i)) {
			FAIL("ping: send %d failed", i);
			return 1;
		}
		if (krc_qpop_msg_wait(vq, &m, 30000) != 1) {
			FAIL("ping: no echo of %d", i);
			return 1;
		}
		if (m.len != len || m.opcode != op ||
		    (op == KRCORE_WR_SEND_IMM && m.imm_data != imm))
			FAIL("ping: echo %d: len %u op %u imm %x", i, m.len,
			     m.opcode, m.imm_data);
		for (k = 0; k < (int)len; k++)
			if (((const uint8_t *)m.data)[k] != (uint8_t)(k + i)) {
				FAIL("ping: echo %d: wrong byte %d", i, k);
				break;
			}
		krc_qmsg_done(vq);
	}
	printf("dp_test: %d messages echoed and checked\n", n);
	printf("dp_test: SEND and SEND_IMM of 1 to %u bytes, a WRITE_IMM\n",
	       KRCORE_MAX_SEND);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct remote r;

	if (argc >= 3 && !strcmp(argv[1], "serve"))
		return serve(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "echo"))
		return do_echo(atoi(argv[2]), atoi(argv[3]), argv[4]);
	if (argc == 6 && !strcmp(argv[1], "ping"))
		return do_ping(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]);
	if (argc < 4 || read_info(argv[3], &r))
		goto usage;
	if (!strcmp(argv[1], "rw"))
		return do_rw(argv[2], &r);
	if (!strcmp(argv[1], "share") && argc == 6)
		return forked(atoi(argv[4]), share_worker, argv[2], &r, atoi(argv[5]));
	if (!strcmp(argv[1], "garbage"))
		return do_garbage(argv[2], &r);
	if (!strcmp(argv[1], "flood"))
		return do_flood(argv[2], &r);
	if (!strcmp(argv[1], "badrkey"))
		return do_badrkey(argv[2], &r);
	if (!strcmp(argv[1], "steady") && argc == 6)
		return forked(atoi(argv[5]), steady_worker, argv[2], &r, atoi(argv[4]));
	if (!strcmp(argv[1], "inflight"))
		return do_inflight(argv[2], &r);
usage:
	fprintf(stderr, "usage: dp_test serve INFO\n"
		"       dp_test rw|garbage|flood|badrkey|inflight ADDR INFO\n"
		"       dp_test share ADDR INFO PROCS BATCHES\n"
		"       dp_test steady ADDR INFO SECS PROCS\n"
		"       dp_test echo PORT N INFO | ping ADDR PORT N INFO\n");
	return 2;
}
