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
 *   dp_test flood ADDR INFO          four VQs post far beyond their depth:
 *                                    VQ_FULL, then QP_FULL at qp_depth; each
 *                                    ring filled unread: none lost
 *   dp_test badrkey ADDR INFO        READ with a bad rkey: this process gets
 *                                    the remote access error
 *   dp_test steady ADDR INFO DIR PROCS REC
 *                                    PROCS processes of READs and WRITEs until
 *                                    DIR/stop: in order, data checked (WRITEs
 *                                    read back), DIR/ready.N once running
 *                                    (it holds the VQ's connection id);
 *                                    recoveries of each VQ: 0, 1+ or any
 *   dp_test inflight ADDR INFO DIR   keep READs in flight until killed
 *                                    (DIR/inflight.ready once they are)
 *   dp_test echo PORT N INFO         bind PORT, send back each of N messages
 *                                    to its sender's node and port (for a
 *                                    WRITE_IMM: the bytes written); publish
 *                                    its buffer in INFO
 *   dp_test ping ADDR PORT N INFO    bind a port, send N-1 messages (SEND and
 *                                    SEND_IMM, 1 B..4080 B) and one WRITE_IMM
 *                                    to ADDR:PORT; check each echo
 *   dp_test qpfull ADDR INFO         VQs fill the shared send queue: QP_FULL
 *                                    at exactly qp_depth, VQ_FULL at a share
 *   dp_test mixed ADDR INFO NVQ PORT
 *                                    a shared QP fails under mixed traffic:
 *                                    READ/WRITE re-posted, the others
 *                                    NOT_EXECUTED_OR_UNKNOWN (exact counts)
 *   dp_test sge ADDR INFO            multi-SGE WRITE and READs, data checked
 *   dp_test lkey ADDR INFO           another process's valid lkey: ENOKEY
 *   dp_test forkfd ADDR INFO N       a forked child's use of an inherited VQ
 *                                    fd is refused; the parent's N READs go on
 *   dp_test vanish ADDR INFO DIR PROCS
 *                                    READs in flight when the peer vanishes:
 *                                    UNREACHABLE, then ENOTCONN and POLLHUP
 *   dp_test sink PORT FULL_PORT N M DIR / spray ADDR PORT FULL_PORT N M DIR
 *                                    N messages to a ring never read, M to
 *                                    one read: kept, dropped, all delivered
 * Exit 0 only if every check held; each failure is printed.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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
/*
 * The server registers one page more than it serves: rxe in Linux 6.1
 * (rxe_mr_copy) reads one pointer past its page map when an access
 * touches the last page of an MR whose pages are a multiple of 256
 * (KASAN: slab-out-of-bounds on the debug kernel). The tests use the
 * first SRV_SIZE bytes only, so that page is never the MR's last.
 */
#define SRV_MR_SIZE	(SRV_SIZE + 4096)
/* The same for the clients' 1 MiB buffers (1 MiB is 256 pages). */
#define MIB		(1024u * 1024u)
#define MIB_MR		(MIB + 4096)

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
	buf = xalloc(SRV_MR_SIZE);
	for (i = 0; i < HALF; i++)
		buf[i] = pattern(i);
	if (krc_reg_mr(vq, buf, SRV_MR_SIZE, KRCORE_ACCESS_LOCAL_WRITE |
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

static struct krc_vq *connect_qc(const char *addr, uint32_t port,
				 struct krcore_qconnect *qc)
{
	struct krc_vq *vq;

	if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, addr, port, qc) < 0) {
		fprintf(stderr, "dp_test: %s\n", krc_errmsg());
		exit(1);
	}
	return vq;
}

static struct krc_vq *connect_to(const char *addr)
{
	struct krcore_qconnect qc;

	return connect_qc(addr, 0, &qc);
}

static int exists(const char *dir, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void touch(const char *dir, const char *name)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f)
		fclose(f);
}

/* @dir/@name, holding @conn_id (the pooled connection a VQ got). */
static void put_conn(const char *dir, const char *name, uint32_t conn_id)
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

/* The kernel's copy of a VQ ring header field, read through a mapping. */
static struct krcore_ring ring_header(struct krc_vq *vq, uint32_t size)
{
	struct krcore_ring h;
	void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, krc_vq_fd(vq), 0);

	memset(&h, 0xff, sizeof(h));
	if (m == MAP_FAILED) {
		FAIL("mmap of the completion ring: %s", strerror(errno));
		return h;
	}
	memcpy(&h, m, sizeof(h));
	munmap(m, size);
	return h;
}

/* Completions waiting in a VQ's ring (KRCORE_IOC_QWAIT, no sleep). */
static int ring_available(struct krc_vq *vq)
{
	struct krcore_qwait w = { .timeout_ms = 0 };

	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QWAIT, &w) < 0 && errno != ETIMEDOUT)
		return -errno;
	return (int)w.available;
}

static void write_param(const char *name, unsigned long v)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "/sys/module/krcore/parameters/%s", name);
	f = fopen(p, "w");
	if (!f || fprintf(f, "%lu\n", v) < 0 || fclose(f)) {
		FAIL("cannot set %s to %lu", name, v);
		exit(1);
	}
}

static unsigned long read_param(const char *name)
{
	unsigned long v = 0;
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "/sys/module/krcore/parameters/%s", name);
	f = fopen(p, "r");
	if (!f || fscanf(f, "%lu", &v) != 1) {
		FAIL("cannot read %s", name);
		exit(1);
	}
	fclose(f);
	return v;
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
	uint8_t *src = xalloc(MIB_MR), *dst = xalloc(MIB_MR);
	uint64_t *word = xalloc(4096), id = 1;
	struct krc_mr ms, md, mw;
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	uint32_t i, s;

	if (krc_reg_mr(vq, src, MIB_MR, KRCORE_ACCESS_LOCAL_WRITE, &ms) < 0 ||
	    krc_reg_mr(vq, dst, MIB_MR, KRCORE_ACCESS_LOCAL_WRITE, &md) < 0 ||
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

/*
 * Four VQs of this process on one shared QP. 1: each in turn posts 512
 * READs of 64 KiB at once: the first two get their share of the send
 * queue (VQ_FULL), the next ones QP_FULL once qp_depth requests are
 * outstanding. 2: without reading a completion, each VQ is pushed until
 * its completion ring would be full: exactly ring entries complete, none
 * lost. 3: 5000 small READs the normal way.
 */
#define FLOOD_VQS	4

static int do_flood(const char *addr, const struct remote *r)
{
	struct krc_vq *vq[FLOOD_VQS];
	struct krcore_qconnect qc[FLOOD_VQS];
	uint8_t *buf = xalloc(MIB_MR);
	struct krcore_wr *wr = calloc(512, sizeof(*wr)), small[64];
	struct krcore_cqe cqe[64];
	unsigned long depth = read_param("qp_depth"), share;
	int posted[FLOOD_VQS] = { 0 }, got[FLOOD_VQS] = { 0 };
	int total = 0, qpfull = 0, n, i, v, round, again = 0, done = 0, early;
	uint32_t entries;
	struct krc_mr mr;

	share = depth * read_param("vq_qp_share") / 100;
	for (v = 0; v < FLOOD_VQS; v++) {
		vq[v] = connect_qc(addr, 0, &qc[v]);
		if (qc[v].conn_id != qc[0].conn_id)
			FAIL("flood: VQ %d on connection %u, VQ 0 on %u", v,
			     qc[v].conn_id, qc[0].conn_id);
	}
	/* A registration serves every VQ of the process. */
	if (!wr || krc_reg_mr(vq[0], buf, MIB_MR, KRCORE_ACCESS_LOCAL_WRITE,
			      &mr) < 0)
		return 1;
	for (i = 0; i < 512; i++)
		fill(&wr[i], KRCORE_WR_READ, buf + (i % 16) * (64 << 10), mr.lkey,
		     64 << 10, r->addr + (i % 32) * (64 << 10), r->rkey,
		     (uint64_t)i);
	for (v = 0; v < FLOOD_VQS; v++) {
		const struct krcore_qpush *res;

		n = krc_qpush(vq[v], wr, 512);
		res = krc_qpush_result(vq[v]);
		posted[v] = n > 0 ? n : 0;
		/*
		 * A READ that completed while the batch was being posted gave
		 * its place back: its completion is in the ring by now.
		 */
		early = ring_available(vq[v]);
		printf("dp_test: flood: VQ %d: 512 READs of 64 KiB: %d posted "
		       "(%d done meanwhile), then %s\n",
		       v, posted[v], early, krc_errmsg());
		if (n >= 512 || (n < 0 && n != -EAGAIN) || res->error != EAGAIN)
			FAIL("flood: VQ %d: qpush of 512 returned %d (error %u)",
			     v, n, res->error);
		if (v < 2 && (posted[v] < (int)share || early < 0 ||
			      posted[v] > (int)share + early ||
			      res->reason != KRCORE_R_VQ_FULL))
			FAIL("flood: VQ %d: %d posted, %d done (reason %u), "
			     "want %lu outstanding, VQ_FULL",
			     v, posted[v], early, res->reason, share);
		if (res->reason == KRCORE_R_QP_FULL && !qpfull++ &&
		    total + posted[v] < (int)depth)
			FAIL("flood: QP_FULL with %d posted in all, the queue holds %lu",
			     total + posted[v], depth);
		total += posted[v];
	}
	if (!qpfull)
		FAIL("flood: the shared send queue (%lu) never refused a request: %d posted",
		     depth, total);
	else
		printf("dp_test: flood: %d VQs refused with QP_FULL, %d posted in all\n",
		       qpfull, total);
	for (v = 0; v < FLOOD_VQS; v++) {
		while (got[v] < posted[v]) {
			n = krc_qpop_wait(vq[v], cqe, 64, 30000);
			if (n <= 0) {
				FAIL("flood: VQ %d: %d of %d completions", v,
				     got[v], posted[v]);
				return 1;
			}
			for (i = 0; i < n; i++)
				if (cqe[i].status || cqe[i].wr_id != (uint64_t)got[v] + i)
					FAIL("flood: VQ %d: completion %llu status %u",
					     v, (unsigned long long)cqe[i].wr_id,
					     cqe[i].status);
			got[v] += n;
		}
	}
	/* 2: fill each VQ's completion ring without reading it. */
	entries = ring_header(vq[0], qc[0].ring_size).entries;
	for (i = 0; i < 64; i++)
		fill(&small[i], KRCORE_WR_READ, buf + i * 64, mr.lkey, 64,
		     r->addr + i * 64, r->rkey, (uint64_t)i);
	memset(posted, 0, sizeof(posted));
	for (round = 0; round < 20000; round++) {
		int full = 0;

		for (v = 0; v < FLOOD_VQS; v++) {
			n = krc_qpush(vq[v], small, 64);
			if (n > 0)
				posted[v] += n;
			else if (n != -EAGAIN)
				FAIL("flood: qpush: %s", krc_errmsg());
			full += posted[v] >= (int)entries;
		}
		if (full == FLOOD_VQS)
			break;
		usleep(1000);
	}
	for (v = 0; v < FLOOD_VQS; v++) {
		n = 0;
		/* All complete into the ring; none may be lost. */
		for (i = 0; i < 300 && ring_available(vq[v]) < posted[v]; i++)
			usleep(100000);
		got[v] = 0;
		while ((n = krc_qpop(vq[v], cqe, 64)) > 0) {
			for (i = 0; i < n; i++)
				if (cqe[i].status)
					FAIL("flood: status %u", cqe[i].status);
			got[v] += n;
		}
		if (posted[v] != (int)entries || got[v] != posted[v])
			FAIL("flood: VQ %d: %d posted unread, %d completions, ring of %u",
			     v, posted[v], got[v], entries);
	}
	printf("dp_test: flood: unread, each VQ took its ring's %u entries, all completed\n",
	       entries);
	/* 3: the normal way, round robin, until 5000 were posted. */
	total = 0;
	for (round = 0; (total < 5000 || done < total) && round < 100000; round++) {
		v = round % FLOOD_VQS;
		if (total < 5000) {
			n = krc_qpush(vq[v], small, 64);
			if (n == -EAGAIN)
				again++;
			else if (n < 0)
				FAIL("flood: qpush: %s", krc_errmsg());
			else
				total += n;
		}
		n = krc_qpop_wait(vq[v], cqe, 64, total > done ? 10 : 0);
		if (n < 0) {
			FAIL("flood: qpop: %s", krc_errmsg());
			break;
		}
		for (i = 0; i < n; i++)
			if (cqe[i].status)
				FAIL("flood: completion status %u", cqe[i].status);
		done += n;
	}
	if (done != total)
		FAIL("flood: %d posted, %d completed", total, done);
	printf("dp_test: flood: %d posted, %d completed, %d EAGAIN\n", total,
	       done, again);
	for (v = 0; v < FLOOD_VQS; v++)
		krc_vq_close(vq[v]);
	free(wr);
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

/* Region of the server's second half that steady process @me WRITEs. */
#define STEADY_OFF	(HALF + (3u << 19))
#define STEADY_BLOCKS	64

static const char *g_dir = ".";	/* ready and stop files */
static const char *g_rec = "any";	/* recoveries expected: 0, 1+, any */

static uint8_t wpat(int me, uint64_t id, int k)
{
	return (uint8_t)(id * 5 + (uint64_t)k * 3 + (uint64_t)me * 11 + 1);
}

static uint32_t steady_roff(int me, uint64_t id)
{
	return (uint32_t)(((uint64_t)me * 977 + id * 64) % (HALF - 64));
}

/*
 * READs (data checked) and WRITEs (data read back at the end) with 8 in
 * flight until g_dir/stop exists; every completion must come in order
 * (wr_id), succeed, and name its opcode. Writes g_dir/ready.<me> once 16
 * requests completed: the id of the pooled connection the VQ got
 * (harden breakers aims at those). Checks the VQ's recoveries count
 * against g_rec.
 */
static int steady_worker(const char *addr, const struct remote *r, int me,
			 int unused)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq = connect_qc(addr, 0, &qc);
	uint8_t *buf = xalloc(1 << 16);
	uint8_t *rd = buf, *src = buf + 4096, *back = buf + 8192;
	uint64_t last[STEADY_BLOCKS], next_post = 0, next_done = 0;
	double t0 = now_s(), stuck = 0;
	unsigned long reads = 0, writes = 0;
	struct krcore_cqe cqe[16];
	struct krcore_ring h;
	struct krcore_wr wr;
	struct krc_mr mr;
	char name[32];
	int n, i, k, ready = 0, stop = 0;

	memset(last, 0xff, sizeof(last));
	if (krc_reg_mr(vq, buf, 1 << 16, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0) {
		FAIL("steady %d: reg_mr: %s", me, krc_errmsg());
		return 1;
	}
	for (;;) {
		if (!stop)
			stop = exists(g_dir, "stop");
		if (!stop && now_s() - t0 > 900) {
			FAIL("steady %d: never told to stop", me);
			return 1;
		}
		while (!stop && next_post - next_done < 8) {
			uint64_t id = next_post;
			uint32_t slot = (uint32_t)(id % 8) * 64;

			if (id % 2 == 0) {
				fill(&wr, KRCORE_WR_READ, rd + slot, mr.lkey, 64,
				     r->addr + steady_roff(me, id), r->rkey, id);
			} else {
				for (k = 0; k < 64; k++)
					src[slot + k] = wpat(me, id, k);
				fill(&wr, KRCORE_WR_WRITE, src + slot, mr.lkey, 64,
				     r->addr + STEADY_OFF + (uint64_t)me * 4096 +
				     ((id / 2) % STEADY_BLOCKS) * 64, r->rkey, id);
			}
			n = krc_qpush(vq, &wr, 1);
			if (n == -EAGAIN && next_post == next_done) {
				/* Recovering, nothing to wait for: retry a while. */
				if (!stuck)
					stuck = now_s();
				if (now_s() - stuck > 30) {
					FAIL("steady %d: EAGAIN (%s) for 30 s, none in flight",
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
			if (id % 2)
				last[(id / 2) % STEADY_BLOCKS] = id;
			next_post++;
		}
		if (next_post == next_done) {
			if (stop)
				break;
			continue;
		}
		n = krc_qpop_wait(vq, cqe, 16, 30000);
		if (n <= 0) {
			FAIL("steady %d: no completion (%llu in flight)", me,
			     (unsigned long long)(next_post - next_done));
			return 1;
		}
		for (i = 0; i < n; i++, next_done++) {
			uint64_t id = next_done;
			uint8_t op = id % 2 ? KRCORE_WR_WRITE : KRCORE_WR_READ;

			if (cqe[i].wr_id != id || cqe[i].status ||
			    cqe[i].opcode != op ||
			    (op == KRCORE_WR_READ && cqe[i].byte_len != 64)) {
				FAIL("steady %d: cqe %llu %s op %u len %u, want %llu op %u",
				     me, (unsigned long long)cqe[i].wr_id,
				     krc_wc_status_str(cqe[i].status),
				     cqe[i].opcode, cqe[i].byte_len,
				     (unsigned long long)id, op);
				return 1;
			}
			if (op == KRCORE_WR_WRITE) {
				writes++;
				continue;
			}
			reads++;
			for (k = 0; k < 64; k++)
				if (rd[(id % 8) * 64 + k] !=
				    pattern(steady_roff(me, id) + k)) {
					FAIL("steady %d: READ %llu: wrong byte %d",
					     me, (unsigned long long)id, k);
					return 1;
				}
		}
		if (!ready && next_done >= 16) {
			snprintf(name, sizeof(name), "ready.%d", me);
			put_conn(g_dir, name, qc.conn_id);
			ready = 1;
		}
	}
	/* What the WRITEs left behind: each block holds its last WRITE. */
	if (krc_read_sync(vq, back, mr.lkey, STEADY_BLOCKS * 64,
			  r->addr + STEADY_OFF + (uint64_t)me * 4096, r->rkey,
			  20000)) {
		FAIL("steady %d: read back: %s", me, krc_errmsg());
		return 1;
	}
	for (i = 0; i < STEADY_BLOCKS; i++) {
		if (last[i] == UINT64_MAX)
			continue;
		for (k = 0; k < 64; k++)
			if (back[i * 64 + k] != wpat(me, last[i], k)) {
				FAIL("steady %d: block %d does not hold WRITE %llu",
				     me, i, (unsigned long long)last[i]);
				return 1;
			}
	}
	h = ring_header(vq, qc.ring_size);
	if ((!strcmp(g_rec, "0") && h.recoveries != 0) ||
	    (!strcmp(g_rec, "1+") && (h.recoveries < 1 || h.recoveries > 1000)))
		FAIL("steady %d: the VQ's connection was recovered %llu times, expected %s",
		     me, (unsigned long long)h.recoveries, g_rec);
	printf("dp_test: steady %d: %lu READs, %lu WRITEs in order, data ok, recoveries=%llu\n",
	       me, reads, writes, (unsigned long long)h.recoveries);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/*
 * Keep 32 READs of 32 KiB in flight until killed; every call checked.
 * Touches @dir/inflight.ready once requests are in flight.
 */
static int do_inflight(const char *addr, const struct remote *r,
		       const char *dir)
{
	struct krc_vq *vq = connect_to(addr);
	uint8_t *buf = xalloc(MIB_MR);
	struct krcore_cqe cqe[64];
	struct krcore_wr wr[32];
	unsigned long posted = 0, done = 0;
	struct krc_mr mr;
	int i, n, ready = 0;

	if (krc_reg_mr(vq, buf, MIB_MR, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0) {
		FAIL("inflight: reg_mr: %s", krc_errmsg());
		return 1;
	}
	for (i = 0; i < 32; i++)
		fill(&wr[i], KRCORE_WR_READ, buf + i * 32768, mr.lkey, 32768,
		     r->addr + i * 32768, r->rkey, (uint64_t)i);
	for (;;) {
		n = krc_qpush(vq, wr, 32);
		if (n < 0 && n != -EAGAIN) {
			FAIL("inflight: qpush: %s", krc_errmsg());
			return 1;
		}
		if (n > 0)
			posted += (unsigned long)n;
		if (!ready && posted > done) {
			printf("dp_test: %lu READs in flight\n", posted - done);
			fflush(stdout);
			touch(dir, "inflight.ready");
			ready = 1;
		}
		n = krc_qpop(vq, cqe, 64);
		if (n < 0) {
			FAIL("inflight: qpop: %s", krc_errmsg());
			return 1;
		}
		for (i = 0; i < n; i++)
			if (cqe[i].status) {
				FAIL("inflight: READ failed: %s",
				     krc_wc_status_str(cqe[i].status));
				return 1;
			}
		done += (unsigned long)n;
	}
	return 0;
}

/* Wait for @n completions of @vq into @c (indexed by wr_id < @n). */
static int reap_by_id(struct krc_vq *vq, struct krcore_cqe *c, int n,
		      int timeout_s)
{
	struct krcore_cqe tmp[16];
	double end = now_s() + timeout_s;
	int got = 0, k, i;

	while (got < n && now_s() < end) {
		k = krc_qpop_wait(vq, tmp, 16, 1000);
		if (k < 0) {
			FAIL("qpop: %s", krc_errmsg());
			return got;
		}
		for (i = 0; i < k; i++) {
			if (tmp[i].wr_id >= (uint64_t)n) {
				FAIL("completion of unknown wr_id %llu",
				     (unsigned long long)tmp[i].wr_id);
				continue;
			}
			c[tmp[i].wr_id] = tmp[i];
			got++;
		}
	}
	if (got != n)
		FAIL("%d of %d completions within %d s", got, n, timeout_s);
	return got;
}

/* @n completions of wr_ids @base .. @base + n - 1, into @c by id - @base. */
static int reap_by_id_base(struct krc_vq *vq, struct krcore_cqe *c, int n,
			   int base)
{
	struct krcore_cqe tmp[16];
	double end = now_s() + 120;
	int got = 0, k, i;

	while (got < n && now_s() < end) {
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
		FAIL("%d of %d completions within 120 s", got, n);
	return got;
}

/*
 * Long enough that none completes while this process posts them all
 * (128 KiB was not, on a quiet host; 4 MiB took minutes): 31 x 1 MiB.
 */
#define QPF_LEN		(1024u * 1024)

/*
 * qpfull: qp_depth / share VQs fill the shared send queue with READs of
 * QPF_LEN (share = qp_depth * vq_qp_share / 100 each, the last one less
 * one); one more VQ posting 3 gets 1 in, then EAGAIN/QP_FULL, then 0;
 * a full VQ gets VQ_FULL. All complete; then the extra VQ's 3 go in.
 */
static int do_qpfull(const char *addr, const struct remote *r)
{
	unsigned long depth = read_param("qp_depth");
	unsigned long share = depth * read_param("vq_qp_share") / 100;
	int nvq = share ? (int)(depth / share) : 0, v, n, i;
	struct krcore_qconnect qc[17];
	struct krc_vq *vq[17];
	struct krcore_wr wr[64];
	struct krcore_cqe c[64];
	const struct krcore_qpush *res;
	uint8_t *buf = xalloc(QPF_LEN + 4096);
	struct krc_mr mr;

	if (nvq < 2 || nvq > 16 || share > 64 || depth % share) {
		FAIL("qpfull: qp_depth %lu with a share of %lu: not a test", depth,
		     share);
		return 1;
	}
	for (v = 0; v <= nvq; v++) {
		vq[v] = connect_qc(addr, 0, &qc[v]);
		if (qc[v].conn_id != qc[0].conn_id)
			FAIL("qpfull: VQ %d on connection %u, not %u", v,
			     qc[v].conn_id, qc[0].conn_id);
	}
	if (krc_reg_mr(vq[0], buf, QPF_LEN + 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	for (i = 0; i < 64; i++)
		fill(&wr[i], KRCORE_WR_READ, buf, mr.lkey, QPF_LEN, r->addr,
		     r->rkey, (uint64_t)i);
	/* depth - 1 requests outstanding, spread over nvq VQs. */
	for (v = 0; v < nvq; v++) {
		int want = (int)share - (v == nvq - 1);

		n = krc_qpush(vq[v], wr, (unsigned int)want);
		if (n != want)
			FAIL("qpfull: VQ %d: %d of %d posted: %s", v, n, want,
			     krc_errmsg());
	}
	/* The extra VQ: 1 of 3 fits, then the shared queue is full. */
	n = krc_qpush(vq[nvq], wr, 3);
	res = krc_qpush_result(vq[nvq]);
	if (n != 1 || res->done != 1 || res->error != EAGAIN ||
	    res->reason != KRCORE_R_QP_FULL)
		FAIL("qpfull: 3 with 1 slot free: ret %d done %u error %u reason %u",
		     n, res->done, res->error, res->reason);
	else
		printf("dp_test: qpfull: %lu of %d VQs, qp_depth %lu: 1 of 3 more posted, %s\n",
		       depth - 1, nvq, depth, krc_errmsg());
	n = krc_qpush(vq[nvq], wr, 1);
	res = krc_qpush_result(vq[nvq]);
	if (n != -EAGAIN || res->done != 0 || res->reason != KRCORE_R_QP_FULL)
		FAIL("qpfull: a full shared queue: ret %d done %u reason %u", n,
		     res->done, res->reason);
	n = krc_qpush(vq[0], wr, 1);
	res = krc_qpush_result(vq[0]);
	if (n != -EAGAIN || res->done != 0 || res->reason != KRCORE_R_VQ_FULL)
		FAIL("qpfull: a VQ at its share: ret %d done %u reason %u, expected VQ_FULL",
		     n, res->done, res->reason);
	for (v = 0; v <= nvq; v++) {
		int want = v == nvq ? 1 : (int)share - (v == nvq - 1);

		reap_by_id(vq[v], c, want, 120);
		for (i = 0; i < want; i++)
			if (c[i].status || c[i].byte_len != QPF_LEN)
				FAIL("qpfull: VQ %d READ %d: %s, %u bytes", v, i,
				     krc_wc_status_str(c[i].status), c[i].byte_len);
	}
	n = krc_qpush(vq[nvq], wr, 3);
	if (n != 3)
		FAIL("qpfull: once drained, 3 READs: %d: %s", n, krc_errmsg());
	else if (reap_by_id(vq[nvq], c, 3, 120) == 3)
		printf("dp_test: qpfull: drained, then 3 posted and completed\n");
	for (v = 0; v <= nvq; v++)
		krc_vq_close(vq[v]);
	return failures ? 1 : 0;
}

#define MIXED_OFF	(HALF + (1u << 20))
#define MIXED_N		8
#define STALL_N		4
#define STALL_LEN	(256u << 10)

static const uint8_t mixed_ops[MIXED_N] = {
	KRCORE_WR_READ, KRCORE_WR_WRITE, KRCORE_WR_ATOMIC_FAA, KRCORE_WR_SEND,
	KRCORE_WR_READ, KRCORE_WR_WRITE, KRCORE_WR_ATOMIC_CAS,
	KRCORE_WR_WRITE_IMM,
};

struct mixed_vq {
	struct krc_vq *vq;
	struct krcore_qconnect qc;
	uint8_t *buf;
	struct krc_mr mr;
	struct krcore_wr wr[MIXED_N];
};

/* VQ @me's batch: READ, WRITE, FAA, SEND, READ, WRITE, CAS, WRITE_IMM. */
static void mixed_prepare(struct mixed_vq *m, const struct remote *r, int me)
{
	uint64_t base = r->addr + MIXED_OFF + (uint64_t)me * 4096;
	int i, k;

	for (i = 0; i < MIXED_N; i++) {
		uint8_t *l = m->buf + i * 128;
		struct krcore_wr *w = &m->wr[i];

		switch (mixed_ops[i]) {
		case KRCORE_WR_READ:
			fill(w, KRCORE_WR_READ, l, m->mr.lkey, 64,
			     r->addr + me * 4096 + i * 64, r->rkey, i);
			break;
		case KRCORE_WR_WRITE:
		case KRCORE_WR_WRITE_IMM:
			for (k = 0; k < 64; k++)
				l[k] = wpat(me + 100, i, k);
			fill(w, mixed_ops[i], l, m->mr.lkey, 64, base + i * 64,
			     r->rkey, i);
			w->imm_data = mixed_ops[i] == KRCORE_WR_WRITE_IMM ? 0x55 : 0;
			break;
		case KRCORE_WR_SEND:
			fill(w, KRCORE_WR_SEND, l, m->mr.lkey, 32, 0, 0, i);
			break;
		default:	/* atomics on words of this VQ's region */
			fill(w, mixed_ops[i], l, m->mr.lkey, 8, base + 2048 + i * 8,
			     r->rkey, i);
			w->compare_add = 1;
			break;
		}
	}
}

/* VQ @me after the failure: statuses, data, the WRITEs in remote memory. */
static void mixed_verify(struct mixed_vq *m, const struct remote *r, int me)
{
	uint64_t base = r->addr + MIXED_OFF + (uint64_t)me * 4096;
	struct krcore_cqe c[MIXED_N];
	int i, k;

	reap_by_id(m->vq, c, MIXED_N, 120);
	for (i = 0; i < MIXED_N; i++) {
		uint8_t op = mixed_ops[i];
		uint32_t want = op == KRCORE_WR_READ || op == KRCORE_WR_WRITE ?
				KRCORE_WC_SUCCESS : KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;

		if (c[i].status != want || c[i].opcode != op)
			FAIL("mixed VQ %d: request %d (opcode %u): %s, expected %s",
			     me, i, op, krc_wc_status_str(c[i].status),
			     krc_wc_status_str(want));
		if (op != KRCORE_WR_READ || c[i].status)
			continue;
		for (k = 0; k < 64; k++)
			if (m->buf[i * 128 + k] != pattern(me * 4096 + i * 64 + k)) {
				FAIL("mixed VQ %d: READ %d: wrong data", me, i);
				break;
			}
	}
	/* The re-posted WRITEs wrote their data. */
	if (krc_read_sync(m->vq, m->buf + 4096, m->mr.lkey, 512, base, r->rkey,
			  20000))
		FAIL("mixed VQ %d: read back: %s", me, krc_errmsg());
	for (i = 0; i < MIXED_N; i++) {
		if (mixed_ops[i] != KRCORE_WR_WRITE)
			continue;
		for (k = 0; k < 64; k++)
			if (m->buf[4096 + i * 64 + k] != wpat(me + 100, i, k)) {
				FAIL("mixed VQ %d: WRITE %d not in remote memory", me, i);
				break;
			}
	}
	if (ring_header(m->vq, m->qc.ring_size).recoveries != 1)
		FAIL("mixed VQ %d: not moved exactly once", me);
}

/*
 * mixed: a staller VQ posts STALL_N READs of STALL_LEN, then NVQ VQs post
 * MIXED_N requests each behind them on the same shared QP, all from this
 * process in consecutive calls; while the staller has not completed (so
 * that all are outstanding) the connection is failed (fault_conn_error).
 * READs and WRITEs must be re-posted and succeed, atomics, SEND and
 * WRITE_IMM complete NOT_EXECUTED_OR_UNKNOWN. Prints the exact counts
 * the kernel must report.
 */
static int do_mixed(const char *addr, const struct remote *r, int nvq,
		    uint32_t port)
{
	struct mixed_vq *m = calloc((size_t)nvq, sizeof(*m));
	struct krcore_cqe c[STALL_N];
	struct krcore_wr wr[STALL_N];
	struct krcore_qconnect qc;
	struct krc_vq *vq = connect_qc(addr, 0, &qc);
	uint8_t *buf = xalloc(STALL_LEN);
	struct krc_mr mr;
	int v, i, waiting;

	if (!m || krc_reg_mr(vq, buf, STALL_LEN, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	for (v = 0; v < nvq; v++) {
		m[v].vq = connect_qc(addr, port, &m[v].qc);
		m[v].buf = xalloc(8192);
		if (m[v].qc.conn_id != qc.conn_id)
			FAIL("mixed: VQ %d on connection %u, not %u", v,
			     m[v].qc.conn_id, qc.conn_id);
		if (krc_reg_mr(m[v].vq, m[v].buf, 8192, KRCORE_ACCESS_LOCAL_WRITE,
			       &m[v].mr) < 0)
			return 1;
		mixed_prepare(&m[v], r, v);
	}
	for (i = 0; i < STALL_N; i++)
		fill(&wr[i], KRCORE_WR_READ, buf, mr.lkey, STALL_LEN, r->addr,
		     r->rkey, (uint64_t)i);
	if (krc_qpush(vq, wr, STALL_N) != STALL_N)
		FAIL("mixed: staller: %s", krc_errmsg());
	for (v = 0; v < nvq; v++)
		if (krc_qpush(m[v].vq, m[v].wr, MIXED_N) != MIXED_N)
			FAIL("mixed: VQ %d: qpush: %s", v, krc_errmsg());
	/* Nothing of the staller completed: all requests are outstanding. */
	waiting = ring_available(vq);
	if (waiting != 0)
		FAIL("mixed: %d staller READs done before the fault: counts inexact",
		     waiting);
	write_param("fault_conn_error", qc.conn_id);
	reap_by_id(vq, c, STALL_N, 300);
	for (i = 0; i < STALL_N; i++)
		if (c[i].status || c[i].byte_len != STALL_LEN)
			FAIL("mixed: staller READ %d: %s", i,
			     krc_wc_status_str(c[i].status));
	if (ring_header(vq, qc.ring_size).recoveries != 1)
		FAIL("mixed: the staller's VQ was not moved exactly once");
	for (v = 0; v < nvq; v++) {
		mixed_verify(&m[v], r, v);
		krc_vq_close(m[v].vq);
	}
	if (!failures)
		printf("dp_test: mixed: %d VQs: READ/WRITE re-posted, data ok, others not\n",
		       nvq);
	printf("dp_test: mixed: expect reposted=%d not_executed=%d\n",
	       STALL_N + nvq * 4, nvq * 4);
	krc_vq_close(vq);
	free(m);
	return failures ? 1 : 0;
}

/* sge: WRITE from 4 SGEs of two registrations, READ back into 3. */
static int do_sge(const char *addr, const struct remote *r)
{
	static const uint32_t wo[4] = { 100, 8192 + 7, 4000, 8192 + 5000 };
	static const uint32_t wl[4] = { 300, 1000, 96, 2700 };
	static const uint32_t ro[3] = { 16384 + 1, 16384 + 8192 + 333, 16384 + 3000 };
	static const uint32_t rl[3] = { 1500, 1596, 1000 };
	struct krc_vq *vq = connect_to(addr);
	uint8_t *buf = xalloc(32768), expect[4096];
	uint64_t raddr = r->addr + MIXED_OFF + 65536;
	struct krc_mr m[4];
	struct krcore_cqe c;
	struct krcore_wr wr;
	uint32_t i, k, at;

	/* Four registrations: two to WRITE from, two to READ into. */
	for (i = 0; i < 4; i++)
		if (krc_reg_mr(vq, buf + i * 8192, 8192, KRCORE_ACCESS_LOCAL_WRITE,
			       &m[i]) < 0) {
			FAIL("sge: reg_mr: %s", krc_errmsg());
			return 1;
		}
	for (i = 0; i < 16384; i++)
		buf[i] = (uint8_t)(i * 13 + 5);
	fill(&wr, KRCORE_WR_WRITE, NULL, 0, 0, raddr, r->rkey, 1);
	wr.num_sge = 4;
	for (i = 0, at = 0; i < 4; at += wl[i], i++) {
		wr.sg_list[i].addr = (uintptr_t)buf + wo[i];
		wr.sg_list[i].length = wl[i];
		wr.sg_list[i].lkey = m[wo[i] / 8192].lkey;
		memcpy(expect + at, buf + wo[i], wl[i]);
	}
	if (one(vq, &wr, &c))
		FAIL("sge: WRITE of 4 SGEs: %s", krc_wc_status_str(c.status));
	fill(&wr, KRCORE_WR_READ, NULL, 0, 0, raddr, r->rkey, 2);
	wr.num_sge = 3;
	for (i = 0; i < 3; i++) {
		wr.sg_list[i].addr = (uintptr_t)buf + ro[i];
		wr.sg_list[i].length = rl[i];
		wr.sg_list[i].lkey = m[ro[i] / 8192].lkey;
	}
	if (one(vq, &wr, &c) || c.byte_len != 4096)
		FAIL("sge: READ into 3 SGEs: %s, %u bytes",
		     krc_wc_status_str(c.status), c.byte_len);
	for (i = 0, at = 0; i < 3; at += rl[i], i++)
		for (k = 0; k < rl[i]; k++)
			if (buf[ro[i] + k] != expect[at + k]) {
				FAIL("sge: byte %u of SGE %u read back wrong", k, i);
				return 1;
			}
	/* A READ of the server's pattern into 4 SGEs. */
	fill(&wr, KRCORE_WR_READ, NULL, 0, 0, r->addr + 777, r->rkey, 3);
	wr.num_sge = 4;
	for (i = 0; i < 4; i++) {
		wr.sg_list[i].addr = (uintptr_t)buf + 16384 + i * 4096 + i;
		wr.sg_list[i].length = 1000 + i * 10;
		wr.sg_list[i].lkey = m[2 + i / 2].lkey;
	}
	if (one(vq, &wr, &c) || c.byte_len != 4060)
		FAIL("sge: READ into 4 SGEs: %s, %u bytes",
		     krc_wc_status_str(c.status), c.byte_len);
	for (i = 0, at = 777; i < 4; at += 1000 + i * 10, i++)
		for (k = 0; k < 1000 + i * 10; k++)
			if (buf[16384 + i * 4096 + i + k] != pattern(at + k)) {
				FAIL("sge: 4-SGE READ: SGE %u byte %u wrong", i, k);
				return 1;
			}
	if (!failures)
		printf("dp_test: sge: WRITE of 4 SGEs, READs into 3 and 4 SGEs, data checked\n");
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/*
 * lkey: another process's valid lkey is refused (ENOKEY, reason LKEY),
 * while that process uses it at the same time; the child's own works.
 */
static int do_lkey(const char *addr, const struct remote *r)
{
	struct krc_vq *vq = connect_to(addr);
	uint8_t *buf = xalloc(8192);
	struct krcore_cqe c;
	struct krcore_wr wr;
	struct krc_mr mr;
	int st, p2c[2], c2p[2];
	char b;
	pid_t pid;

	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0 ||
	    pipe(p2c) || pipe(c2p))
		return 1;
	fill(&wr, KRCORE_WR_READ, buf, mr.lkey, 64, r->addr, r->rkey, 1);
	if (one(vq, &wr, &c))
		FAIL("lkey: the owner's READ: %s", krc_wc_status_str(c.status));
	pid = fork();
	if (pid == 0) {
		struct krc_vq *cv = connect_to(addr);
		const struct krcore_qpush *res;
		struct krc_mr own;
		int n;

		/* buf is mapped here too (copy on write): only the key is foreign. */
		fill(&wr, KRCORE_WR_READ, buf, mr.lkey, 64, r->addr, r->rkey, 2);
		n = krc_qpush(cv, &wr, 1);
		res = krc_qpush_result(cv);
		if (n != -ENOKEY || res->done || res->reason != KRCORE_R_LKEY)
			FAIL("lkey: parent's lkey %#x in a child: ret %d reason %u, want ENOKEY",
			     mr.lkey, n, res->reason);
		if (write(c2p[1], "t", 1) != 1 || read(p2c[0], &b, 1) != 1)
			_exit(1);
		if (krc_reg_mr(cv, buf + 4096, 4096, KRCORE_ACCESS_LOCAL_WRITE,
			       &own) < 0)
			_exit(1);
		fill(&wr, KRCORE_WR_READ, buf + 4096, own.lkey, 64, r->addr,
		     r->rkey, 3);
		if (one(cv, &wr, &c) || buf[4096] != pattern(0))
			FAIL("lkey: the child's own lkey: %s",
			     krc_wc_status_str(c.status));
		_exit(failures ? 1 : 0);
	}
	if (pid < 0 || read(c2p[0], &b, 1) != 1)
		return 1;
	/* The key is valid: its owner uses it while the child was refused. */
	memset(buf, 0, 64);
	fill(&wr, KRCORE_WR_READ, buf, mr.lkey, 64, r->addr, r->rkey, 4);
	if (one(vq, &wr, &c) || buf[0] != pattern(0))
		FAIL("lkey: the owner's READ after the refusal: %s",
		     krc_wc_status_str(c.status));
	if (write(p2c[1], "g", 1) != 1 || waitpid(pid, &st, 0) != pid ||
	    !WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("lkey: the child failed");
	if (!failures)
		printf("dp_test: lkey: another process's valid lkey %#x: ENOKEY/LKEY\n",
		       mr.lkey);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/*
 * forkfd: a child inherits a VQ descriptor with the parent's READs in
 * flight: every request of the child (QPUSH, REG_MR, DEREG_MR of the
 * parent's key) is refused with EACCES, then it closes the descriptor and
 * exits; the parent's traffic goes on: every completion in order with its
 * data, its registration intact, no recovery.
 */
static int do_forkfd(const char *addr, const struct remote *r, int total)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq = connect_qc(addr, 0, &qc);
	uint8_t *buf = xalloc(1 << 16);
	int posted = 0, done = 0, n, i, k, st, forked_at = -1;
	struct krcore_cqe c[16];
	struct krcore_wr wr;
	struct krc_mr mr;
	pid_t pid = -1;

	if (krc_reg_mr(vq, buf, 1 << 16, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	while (done < total) {
		while (posted < total && posted - done < 8) {
			fill(&wr, KRCORE_WR_READ, buf + (posted % 8) * 64, mr.lkey,
			     64, r->addr + (uint64_t)posted * 64 % (HALF - 64),
			     r->rkey, (uint64_t)posted);
			n = krc_qpush(vq, &wr, 1);
			if (n == -EAGAIN)
				break;
			if (n != 1) {
				FAIL("forkfd: parent qpush: %s", krc_errmsg());
				return 1;
			}
			posted++;
		}
		if (pid < 0 && posted > done && done >= total / 4) {
			forked_at = done;
			pid = fork();
			if (pid == 0) {
				int fd = krc_vq_fd(vq), bad = 0;
				struct krcore_qpush qp = {
					.wrs = (uintptr_t)&wr, .count = 1,
				};
				struct krcore_reg_mr rm = {
					.addr = (uintptr_t)buf, .length = 4096,
					.access = KRCORE_ACCESS_LOCAL_WRITE,
				};
				struct krcore_dereg_mr dm = { .lkey = mr.lkey };

				if (ioctl(fd, KRCORE_IOC_QPUSH, &qp) != -1 ||
				    errno != EACCES)
					bad |= 1;
				if (ioctl(fd, KRCORE_IOC_REG_MR, &rm) != -1 ||
				    errno != EACCES)
					bad |= 2;
				if (ioctl(fd, KRCORE_IOC_DEREG_MR, &dm) != -1 ||
				    errno != EACCES)
					bad |= 4;
				close(fd);
				_exit(bad);
			}
			if (pid < 0)
				return 1;
		}
		n = krc_qpop_wait(vq, c, 16, 30000);
		if (n <= 0) {
			FAIL("forkfd: parent: no completion (%d in flight)",
			     posted - done);
			return 1;
		}
		for (i = 0; i < n; i++, done++) {
			uint32_t off = (uint32_t)((uint64_t)done * 64 % (HALF - 64));

			if (c[i].wr_id != (uint64_t)done || c[i].status) {
				FAIL("forkfd: parent: completion %llu %s, expected %d",
				     (unsigned long long)c[i].wr_id,
				     krc_wc_status_str(c[i].status), done);
				return 1;
			}
			for (k = 0; k < 64; k++)
				if (buf[(done % 8) * 64 + k] != pattern(off + k)) {
					FAIL("forkfd: parent: READ %d wrong data", done);
					return 1;
				}
		}
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		FAIL("forkfd: the child's requests were not all refused with EACCES (%#x)",
		     pid < 0 ? -1 : st);
	/* The parent's registration survived the child's DEREG_MR and exit. */
	if (krc_read_sync(vq, buf, mr.lkey, 64, r->addr, r->rkey, 20000) ||
	    buf[0] != pattern(0))
		FAIL("forkfd: the parent's registration: %s", krc_errmsg());
	if (ring_header(vq, qc.ring_size).recoveries != 0)
		FAIL("forkfd: the parent's connection was recovered");
	if (!failures)
		printf("dp_test: forkfd: child refused at READ %d of %d; %d in order, ok\n",
		       forked_at, total, done);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

static int wait_file(const char *dir, const char *name, int secs)
{
	int i;

	for (i = 0; i < secs * 10 && !exists(dir, name); i++)
		usleep(100000);
	if (!exists(dir, name)) {
		FAIL("%s/%s never appeared", dir, name);
		return -1;
	}
	return 0;
}

#define MSG_LEN	64

static uint8_t mpat(uint32_t seq, int k)
{
	return (uint8_t)(seq * 3 + (uint32_t)k * 7 + 1);
}

/* One message: MSG_LEN bytes, its sequence number first, then a pattern. */
static int msg_ok(const struct krc_msg *m, uint32_t seq)
{
	const uint8_t *d = m->data;
	uint32_t got;
	int k;

	if (m->len != MSG_LEN || m->opcode != KRCORE_WR_SEND)
		return 0;
	memcpy(&got, d, 4);
	if (got != seq)
		return 0;
	for (k = 4; k < MSG_LEN; k++)
		if (d[k] != mpat(seq, k))
			return 0;
	return 1;
}

/*
 * sink (receiving node): port FPORT is bound and never read while N
 * messages come; port PORT is read as its M messages come. Then FPORT's
 * ring holds its first `entries` messages, in order and intact, and
 * counts the others as dropped.
 */
static int do_sink(uint32_t port, uint32_t fport, int n, int m,
		   const char *dir)
{
	long pg = sysconf(_SC_PAGESIZE), sz;
	struct krc_vq *full, *live;
	struct krcore_recv_ring h;
	struct krc_msg msg;
	double end;
	int i, kept = 0, k;
	uint32_t dropped;
	void *hdr;

	if (krc_vq_open(&full) < 0 || krc_qbind(full, (uint16_t)fport) < 0 ||
	    krc_vq_open(&live) < 0 || krc_qbind(live, (uint16_t)port) < 0) {
		FAIL("sink: %s", krc_errmsg());
		return 1;
	}
	/* A mapping must have the ring's exact size: find it. */
	for (sz = pg, hdr = MAP_FAILED; hdr == MAP_FAILED && sz <= 1024 * pg;
	     sz += pg)
		hdr = mmap(NULL, (size_t)sz, PROT_READ, MAP_SHARED,
			   krc_vq_fd(full), (off_t)pg * KRCORE_MMAP_RECV);
	sz -= pg;
	if (hdr == MAP_FAILED) {
		FAIL("sink: mmap of the receive ring: %s", strerror(errno));
		return 1;
	}
	touch(dir, "sink.ready");
	end = now_s() + 300;
	for (i = 0; i < m; ) {
		k = krc_qpop_msg_wait(live, &msg, 1000);
		if (k < 0) {
			FAIL("sink: %s", krc_errmsg());
			return 1;
		}
		if (k == 0) {
			if (now_s() > end) {
				FAIL("sink: port %u: only %d of %d messages", port, i, m);
				return 1;
			}
			continue;
		}
		if (!msg_ok(&msg, (uint32_t)i))
			FAIL("sink: port %u: message %d wrong (len %u)", port, i,
			     msg.len);
		krc_qmsg_done(live);
		end = now_s() + 120;
		i++;
	}
	if (wait_file(dir, "spray.done", 600))
		return 1;
	memcpy(&h, hdr, sizeof(h));
	while (krc_qpop_msg(full, &msg) == 1) {
		if (!msg_ok(&msg, (uint32_t)kept))
			FAIL("sink: full ring: message %d wrong", kept);
		krc_qmsg_done(full);
		kept++;
	}
	dropped = krc_msgs_dropped(full);
	if (kept != (n < (int)h.entries ? n : (int)h.entries) ||
	    dropped != (uint32_t)(n - kept))
		FAIL("sink: %d messages into a ring of %u never read: %d kept, %u dropped",
		     n, h.entries, kept, dropped);
	printf("dp_test: sink: port %u: %d read in order; port %u: %d sent, ring %u\n",
	       port, m, fport, n, h.entries);
	printf("sink: kept=%d dropped=%u entries=%u\n", kept, dropped, h.entries);
	munmap(hdr, (size_t)sz);
	krc_vq_close(full);
	krc_vq_close(live);
	return failures ? 1 : 0;
}

/* spray: N messages to ADDR:FPORT and M to ADDR:PORT, interleaved bursts. */
static int do_spray(const char *addr, uint32_t port, uint32_t fport, int n,
		    int m, const char *dir)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq[2];
	int todo[2] = { n, m }, sent[2] = { 0, 0 }, v, i, k, burst;
	uint8_t *buf = xalloc(1 << 16);
	struct krcore_cqe c[64];
	struct krcore_wr wr[64];
	struct krc_mr mr;

	if (wait_file(dir, "sink.ready", 300))
		return 1;
	vq[0] = connect_qc(addr, fport, &qc);
	vq[1] = connect_qc(addr, port, &qc);
	if (krc_reg_mr(vq[0], buf, 1 << 16, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	while (sent[0] < n || sent[1] < m) {
		int want[2];

		/* Bursts of up to 8 per port, both ports at once. */
		for (v = 0; v < 2; v++) {
			want[v] = todo[v] - sent[v] < 8 ? todo[v] - sent[v] : 8;
			for (i = 0; i < want[v]; i++) {
				uint8_t *d = buf + (v * 16 + i) * MSG_LEN;
				uint32_t seq = (uint32_t)(sent[v] + i);

				memcpy(d, &seq, 4);
				for (k = 4; k < MSG_LEN; k++)
					d[k] = mpat(seq, k);
				fill(&wr[i], KRCORE_WR_SEND, d, mr.lkey, MSG_LEN, 0,
				     0, seq);
			}
			if (want[v] &&
			    krc_qpush(vq[v], wr, (unsigned int)want[v]) != want[v]) {
				FAIL("spray: qpush of %d: %s", want[v], krc_errmsg());
				return 1;
			}
		}
		for (v = 0; v < 2; v++) {
			burst = reap_by_id_base(vq[v], c, want[v], sent[v]);
			for (i = 0; i < burst; i++)
				if (c[i].status)
					FAIL("spray: SEND %d: %s", sent[v] + i,
					     krc_wc_status_str(c[i].status));
			sent[v] += want[v];
		}
	}
	printf("dp_test: spray: %d SENDs to port %u, %d to port %u, all completed\n",
	       n, fport, m, port);
	touch(dir, "spray.done");
	krc_vq_close(vq[0]);
	krc_vq_close(vq[1]);
	return failures ? 1 : 0;
}

/*
 * vanish: PROCS processes keep 8 READs in flight (data checked) until
 * the peer vanishes without a word: then every outstanding request must
 * complete UNREACHABLE, and the VQ reports that it lost its connection
 * (qpush and QWAIT: ENOTCONN, poll: POLLHUP). Touches DIR/vanish.N once
 * running.
 */
static int vanish_worker(const char *addr, const struct remote *r, int me,
			 int unused)
{
	struct krc_vq *vq = connect_to(addr);
	uint8_t *buf = xalloc(4096);
	uint64_t next_post = 0, next_done = 0;
	int n, i, k, ready = 0, lost = 0, other = 0;
	double t_fail = 0, t0 = now_s();
	struct krcore_qwait w = { .timeout_ms = 0 };
	struct krcore_cqe c[16];
	struct krcore_wr wr;
	struct pollfd pfd;
	struct krc_mr mr;
	char name[32];

	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return 1;
	while (next_done < next_post || !t_fail) {
		while (!t_fail && next_post - next_done < 8) {
			fill(&wr, KRCORE_WR_READ, buf + (next_post % 8) * 64, mr.lkey,
			     64, r->addr + (next_post % 1000) * 64, r->rkey,
			     next_post);
			n = krc_qpush(vq, &wr, 1);
			if (n != 1)
				break;
			next_post++;
		}
		if (now_s() - t0 > 600) {
			FAIL("vanish %d: the peer never went away", me);
			return 1;
		}
		if (next_post == next_done) {
			if (!t_fail)
				FAIL("vanish %d: qpush: %s (nothing in flight)", me,
				     krc_errmsg());
			break;
		}
		n = krc_qpop_wait(vq, c, 16, 1000);
		if (n < 0) {
			FAIL("vanish %d: qpop: %s", me, krc_errmsg());
			return 1;
		}
		if (t_fail && n == 0 && now_s() - t_fail > 120) {
			FAIL("vanish %d: %llu requests never completed", me,
			     (unsigned long long)(next_post - next_done));
			return 1;
		}
		for (i = 0; i < n; i++, next_done++) {
			if (c[i].wr_id != next_done)
				FAIL("vanish %d: completion %llu, expected %llu", me,
				     (unsigned long long)c[i].wr_id,
				     (unsigned long long)next_done);
			if (c[i].status == KRCORE_WC_SUCCESS) {
				if (t_fail)
					other++;
				for (k = 0; k < 64; k++)
					if (buf[(next_done % 8) * 64 + k] !=
					    pattern((next_done % 1000) * 64 + k))
						FAIL("vanish %d: READ %llu wrong data", me,
						     (unsigned long long)next_done);
				continue;
			}
			if (!t_fail)
				t_fail = now_s();
			if (c[i].status == KRCORE_WC_UNREACHABLE) {
				lost++;
			} else {
				other++;
				FAIL("vanish %d: READ %llu: %s, expected UNREACHABLE", me,
				     (unsigned long long)c[i].wr_id,
				     krc_wc_status_str(c[i].status));
			}
		}
		if (!ready && next_done >= 16) {
			snprintf(name, sizeof(name), "vanish.%d", me);
			touch(g_dir, name);
			ready = 1;
		}
	}
	n = krc_qpush(vq, &wr, 1);
	if (n != -ENOTCONN)
		FAIL("vanish %d: qpush after the peer vanished: %d, expected ENOTCONN",
		     me, n);
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QWAIT, &w) != -1 || errno != ENOTCONN)
		FAIL("vanish %d: QWAIT after the peer vanished: %s, expected ENOTCONN",
		     me, strerror(errno));
	pfd.fd = krc_vq_fd(vq);
	pfd.events = POLLIN | POLLOUT;
	if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLHUP))
		FAIL("vanish %d: poll: revents %#x, expected POLLHUP", me,
		     pfd.revents);
	printf("dp_test: vanish %d: %llu READs, %d UNREACHABLE in %.1f s, ENOTCONN, POLLHUP\n",
	       me, (unsigned long long)next_done, lost,
	       t_fail ? now_s() - t_fail : -1.0);
	if (!lost || other)
		FAIL("vanish %d: %d UNREACHABLE, %d other after the failure", me,
		     lost, other);
	krc_vq_close(vq);
	return failures ? 1 : 0;
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
	if (argc == 7 && !strcmp(argv[1], "sink"))
		return do_sink((uint32_t)atoi(argv[2]), (uint32_t)atoi(argv[3]),
			       atoi(argv[4]), atoi(argv[5]), argv[6]);
	if (argc == 8 && !strcmp(argv[1], "spray"))
		return do_spray(argv[2], (uint32_t)atoi(argv[3]),
				(uint32_t)atoi(argv[4]), atoi(argv[5]),
				atoi(argv[6]), argv[7]);
	if (argc < 4 || read_info(argv[3], &r))
		goto usage;
	if (!strcmp(argv[1], "qpfull"))
		return do_qpfull(argv[2], &r);
	if (!strcmp(argv[1], "mixed") && argc == 6)
		return do_mixed(argv[2], &r, atoi(argv[4]), (uint32_t)atoi(argv[5]));
	if (!strcmp(argv[1], "sge"))
		return do_sge(argv[2], &r);
	if (!strcmp(argv[1], "lkey"))
		return do_lkey(argv[2], &r);
	if (!strcmp(argv[1], "forkfd") && argc == 5)
		return do_forkfd(argv[2], &r, atoi(argv[4]));
	if (!strcmp(argv[1], "vanish") && argc == 6) {
		g_dir = argv[4];
		return forked(atoi(argv[5]), vanish_worker, argv[2], &r, 0);
	}
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
	if (!strcmp(argv[1], "steady") && argc == 7) {
		g_dir = argv[4];
		g_rec = argv[6];
		return forked(atoi(argv[5]), steady_worker, argv[2], &r, 0);
	}
	if (!strcmp(argv[1], "inflight") && argc == 5)
		return do_inflight(argv[2], &r, argv[4]);
usage:
	fprintf(stderr, "usage: dp_test serve INFO\n"
		"       dp_test rw|garbage|flood|badrkey ADDR INFO\n"
		"       dp_test inflight ADDR INFO DIR\n"
		"       dp_test share ADDR INFO PROCS BATCHES\n"
		"       dp_test steady ADDR INFO DIR PROCS 0|1+|any\n"
		"       dp_test echo PORT N INFO | ping ADDR PORT N INFO\n"
		"       dp_test qpfull|sge|lkey ADDR INFO\n"
		"       dp_test mixed ADDR INFO NVQ PORT\n"
		"       dp_test forkfd ADDR INFO N\n"
		"       dp_test vanish ADDR INFO DIR PROCS\n"
		"       dp_test sink PORT FULL_PORT N M DIR\n"
		"       dp_test spray ADDR PORT FULL_PORT N M DIR\n");
	return 2;
}
