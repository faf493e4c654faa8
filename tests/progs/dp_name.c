// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_name - names of remote memory (KRCORE_IOC_LMR_PUBLISH, _UNPUBLISH,
 * _LOOKUP; krc_lmr_publish(), krc_lmr_lookup(), krc_lmr_unpublish()).
 *
 *   dp_name hold OWNER   allocate A (64 KiB, every right; bytes 0..4095
 *                        a pattern) and B (4 KiB, READ only) on OWNER;
 *                        publish A as "ro" (READ) and "rw" (every right),
 *                        B as "b" and as a name of ro's bucket; bad
 *                        publishes get their exact errors; lookups
 *                        over datagrams only (a control message to the
 *                        owner) give the regions and keys that work;
 *                        print "published". On SIGUSR1 revoke "rw",
 *                        print "revoked"; then wait to be killed.
 *   dp_name use OWNER SLOT  look the names up on OWNER and use them within
 *                        their rights (WRITE, FAA, memset, lock with
 *                        "rw"; "ro" refused all but READ, by the owner's
 *                        RNIC or kernel); print "used". On SIGUSR1 (after
 *                        the revoke) "rw" is gone and its key dead, "ro"
 *                        still works: "revoke-checked". On SIGUSR1 (after
 *                        the holder died) every name and key is gone:
 *                        "gone-checked", "lookups N misses M".
 *   dp_name quota OWNER  publish names of one 4 KiB region, two per
 *                        bucket, until refused: exactly a quarter of the
 *                        table (240), then ENOSPC; print "quota-held" and
 *                        wait to be killed
 *   dp_name bucket OWNER with quota's names in place: six more names in
 *                        one bucket fill it, a seventh is ENOSPC
 *
 * SLOT (0..3) keeps the users' bytes apart. A failed check prints FAIL
 * and the exit status is 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dp/helpers.h"
#include "names.h"

#define TAG		"dp_name"
#define A_LEN		65536
#define ALL		(KRCORE_ACCESS_REMOTE_READ | KRCORE_ACCESS_REMOTE_WRITE | \
			 KRCORE_ACCESS_REMOTE_ATOMIC)
#define QUOTA		(KRC_NAME_SLOTS / 4)

static struct krc_vq *vq;
static uint8_t owner[16];
static uint8_t *buf;		/* 64 KiB, registered */
static struct krc_mr mr;
static uint64_t next_id = 1;

static void expect(int got, int want, const char *what)
{
	if (got != want)
		FAIL("%s: %s, expected %s", what, got ? strerror(-got) : "0",
		     want ? strerror(-want) : "0");
}

static int op(uint8_t opcode, void *local, uint32_t len, uint64_t raddr,
	      uint32_t rkey, uint64_t add)
{
	struct krcore_cqe cqe;
	struct krcore_wr wr;

	fill(&wr, opcode, local, mr.lkey, len, raddr, rkey, next_id++);
	wr.compare_add = add;
	return dp_one(vq, &wr, &cqe) ? (int)cqe.status : 0;
}

/*
 * Is a request with @rkey refused? By the owner's RNIC (a remote access
 * error), or, over loopback, by this kernel before it is posted (a key of
 * no region or name of this node: EACCES).
 */
static int refused(uint8_t opcode, void *local, uint32_t len, uint64_t raddr,
		   uint32_t rkey, uint64_t add)
{
	struct krcore_cqe cqe;
	struct krcore_wr wr;

	fill(&wr, opcode, local, mr.lkey, len, raddr, rkey, next_id++);
	wr.compare_add = add;
	if (krc_qpush(vq, &wr, 1) != 1)
		return krc_qpush_result(vq)->error == EACCES;
	if (krc_qpop_wait(vq, &cqe, 1, 20000 * dp_scale()) != 1) {
		FAIL("no completion: %s", krc_errmsg());
		return 0;
	}
	return cqe.status == KRCORE_WC_REM_ACCESS_ERR;
}

static void wait_signal(int sig)
{
	sigset_t set;
	int got;

	sigemptyset(&set);
	sigaddset(&set, sig);
	sigwait(&set, &got);
}

/* A VQ to @node, by whatever path qconnect takes: that path. */
static uint32_t setup(const char *node)
{
	struct krcore_qconnect qc;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (krc_gid_parse(node, owner))
		tp_die("bad address %s", node);
	if (krc_vq_open(&vq) < 0 || krc_qconnect_gid(vq, owner, 0, 0, &qc) < 0)
		tp_die("connect %s: %s", node, krc_errmsg());
	buf = dp_reg(vq, A_LEN + 4096, &mr);
	if (!buf)
		tp_die("no buffer");
	return qc.path;
}

/*
 * A lookup of @name, after the VQ has moved to RC: a VQ still on the
 * datagram path reads no table (ENOTCONN); it moves within seconds.
 */
static int lookup_rc(const char *name, struct krc_lmr *l)
{
	int ret, i;

	for (i = 0; i < 600; i++) {
		ret = krc_lmr_lookup(vq, name, l);
		if (ret != -ENOTCONN)
			return ret;
		usleep(50000);
	}
	return ret;
}

/* A name of bucket @want (any bucket if @want < 0) and its number. */
static void name_of(char name[KRC_NAME_LEN], const char *prefix,
		    unsigned int *i, int want)
{
	for (;; (*i)++) {
		memset(name, 0, KRC_NAME_LEN);
		snprintf(name, KRC_NAME_LEN, "%s%u", prefix, *i);
		if (want < 0 || krc_name_bucket(name) == (uint32_t)want)
			return;
	}
}

/* The first PREFIXn in the bucket of "ro": it shares ro's bucket. */
static void twin(char name[KRC_NAME_LEN], const char *prefix)
{
	char ro[KRC_NAME_LEN] = "ro";
	unsigned int i = 0;

	name_of(name, prefix, &i, (int)krc_name_bucket(ro));
}

static int publish_raw(uint32_t handle, const char *name, size_t n,
		       uint32_t access, int unpublish)
{
	struct krcore_lmr_publish p;

	memset(&p, 0, sizeof(p));
	memcpy(p.name, name, n);
	p.handle = handle;
	p.access = access;
	return ioctl(krc_vq_fd(vq), unpublish ? KRCORE_IOC_LMR_UNPUBLISH :
		     KRCORE_IOC_LMR_PUBLISH, &p) < 0 ? -errno : 0;
}

/*
 * Look @name (published for @r with @rights) up over the datagram path and
 * use it there: the region, its rights, a key that READs its bytes.
 */
static void lookup_dgram(const struct krc_lmr *r, const char *name,
			 uint32_t rights)
{
	struct krc_lmr l;
	uint32_t i;
	int st;

	memset(&l, 0, sizeof(l));
	expect(krc_lmr_lookup(vq, name, &l), 0, "lookup over datagrams");
	if (l.region != r->region || l.rights != rights ||
	    l.length != r->length || l.addr != r->addr ||
	    l.incarnation != r->incarnation || memcmp(l.gid, r->gid, 16))
		FAIL("lookup of %s over datagrams: region %u rights %#x %s",
		     name, l.region, l.rights, "not the published ones");
	memset(buf + 32768, 0, 4096);
	st = op(KRCORE_WR_READ, buf + 32768, 4096, l.addr, l.rkey, 0);
	for (i = 0; i < 4096 && buf[32768 + i] == buf[i]; i++)
		;
	if (st || (r->length == A_LEN && i != 4096))
		FAIL("%s: READ with the key looked up over datagrams: status %d, byte %u",
		     name, st, i);
	if (krc_lmr_free(vq, &l))
		FAIL("%s: forgetting the handle: %s", name, krc_errmsg());
}

static int do_hold(const char *node)
{
	char name[KRC_NAME_LEN];
	struct krc_lmr a, b, none;
	uint32_t path;
	uint32_t i;

	path = setup(node);
	if (krc_lmr_alloc(vq, node, A_LEN, ALL, &a) ||
	    krc_lmr_alloc(vq, node, 4096, KRCORE_ACCESS_REMOTE_READ, &b))
		tp_die("alloc: %s", krc_errmsg());
	for (i = 0; i < 4096; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	if (op(KRCORE_WR_WRITE, buf, 4096, a.addr, a.rkey, 0))
		FAIL("pattern not written");
	expect(krc_lmr_publish(vq, &a, "ro", KRCORE_ACCESS_REMOTE_READ), 0,
	       "publish ro");
	expect(krc_lmr_publish(vq, &a, "rw", ALL), 0, "publish rw");
	expect(krc_lmr_publish(vq, &b, "b", KRCORE_ACCESS_REMOTE_READ), 0,
	       "publish b");
	twin(name, "twin");
	expect(krc_lmr_publish(vq, &b, name, KRCORE_ACCESS_REMOTE_READ), 0,
	       "publish b under a name of ro's bucket");
	/* the owner refuses: a name taken, by this region or another */
	expect(krc_lmr_publish(vq, &a, "ro", KRCORE_ACCESS_REMOTE_READ),
	       -EEXIST, "ro again");
	expect(krc_lmr_publish(vq, &b, "rw", KRCORE_ACCESS_REMOTE_READ),
	       -EEXIST, "rw for another region");
	/* this kernel refuses */
	expect(krc_lmr_publish(vq, &b, "b-w", KRCORE_ACCESS_REMOTE_WRITE),
	       -EACCES, "a right B lacks");
	expect(publish_raw(b.handle, "a b", 3, KRCORE_ACCESS_REMOTE_READ, 0),
	       -EINVAL, "a name with a space");
	expect(publish_raw(b.handle, "", 0, KRCORE_ACCESS_REMOTE_READ, 0),
	       -EINVAL, "an empty name");
	expect(publish_raw(b.handle, "xxxxxxxxxxxxxxxxxxxxxxxx", 24,
			   KRCORE_ACCESS_REMOTE_READ, 0), -EINVAL,
	       "24 bytes, no NUL");
	expect(publish_raw(b.handle, "c", 1, 0, 0), -EINVAL, "no rights");
	expect(publish_raw(b.handle, "c", 1, KRCORE_ACCESS_LOCAL_WRITE, 0),
	       -EINVAL, "a local right");
	expect(publish_raw(b.handle, "b", 1, KRCORE_ACCESS_REMOTE_READ, 1),
	       -EINVAL, "unpublish with rights");
	expect(publish_raw(9999, "c", 1, KRCORE_ACCESS_REMOTE_READ, 0),
	       -ENOENT, "a handle never given");
	expect(krc_lmr_unpublish(vq, &b, "ro"), -ENOENT,
	       "unpublish a name of another region");
	/*
	 * Datagrams only (dg_policy 3), no RC to READ the table over: the
	 * owner's kernel answers a control message with what the READ
	 * would find.
	 */
	if (!(path & KRCORE_PATH_DATAGRAM))
		FAIL("hold: connected over RC, not datagrams (dg_policy 3)");
	lookup_dgram(&a, "ro", KRCORE_ACCESS_REMOTE_READ);
	lookup_dgram(&a, "rw", ALL);
	lookup_dgram(&b, name, KRCORE_ACCESS_REMOTE_READ);
	expect(krc_lmr_lookup(vq, "no-such", &none), -ENOENT,
	       "lookup over datagrams of no such name");
	printf(TAG ": hold: 4 lookups over datagrams only: by message\n");
	printf(TAG ": hold: ro, rw, b published; bad publishes refused\n");
	printf(TAG ": published\n");
	fflush(stdout);
	wait_signal(SIGUSR1);
	expect(krc_lmr_unpublish(vq, &a, "rw"), 0, "revoke rw");
	expect(krc_lmr_unpublish(vq, &a, "rw"), -ENOENT, "revoke rw again");
	printf(TAG ": revoked\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* READ @len bytes at @off of @l into buf + 32 KiB: 0 or a CQE status. */
static int rd(const struct krc_lmr *l, uint64_t off, uint32_t len)
{
	memset(buf + 32768, 0, len);
	return op(KRCORE_WR_READ, buf + 32768, len, l->addr + off, l->rkey, 0);
}

static void use_rights(const struct krc_lmr *ro, const struct krc_lmr *rw,
		       unsigned int slot)
{
	uint64_t *word = (uint64_t *)(buf + 40960);
	uint64_t woff = 16384 + 8 * slot, soff = 20000 + 256 * slot;
	struct krc_lock lk;
	uint32_t i;
	int st;

	/* the pattern, through either name: one region */
	st = rd(ro, 0, 4096);
	for (i = 0; i < 4096 && buf[32768 + i] == (uint8_t)(i * 7 + 1); i++)
		;
	if (st || i != 4096)
		FAIL("ro: READ of the pattern: status %d, byte %u", st, i);
	/* "ro": WRITE and FAA refused at the owner's RNIC, nothing changed */
	memset(buf, 0xee, 64);
	if (!refused(KRCORE_WR_WRITE, buf, 64, ro->addr + 8192, ro->rkey, 0))
		FAIL("WRITE with ro's key: not refused");
	if (!refused(KRCORE_WR_ATOMIC_FAA, word, 8, ro->addr + woff, ro->rkey, 1))
		FAIL("FAA with ro's key: not refused");
	st = rd(ro, 8192, 64);
	if (st || buf[32768] == 0xee)
		FAIL("after the refused WRITE: status %d, byte %#x", st,
		     buf[32768]);
	expect(krc_lmr_set(vq, ro, 0, 1, 8), -EACCES, "memset with ro");
	expect(krc_lock(vq, ro, 0, 1000, &lk), -EACCES, "lock with ro");
	/* "rw": WRITE, FAA, memset at the owner, a lock */
	for (i = 0; i < 100; i++)
		buf[i] = (uint8_t)(slot * 31 + i);
	st = op(KRCORE_WR_WRITE, buf, 100, rw->addr + 8192 + 128 * slot,
		rw->rkey, 0);
	st |= rd(ro, 8192 + 128 * slot, 100);
	if (st || memcmp(buf, buf + 32768, 100))
		FAIL("WRITE with rw, READ with ro: status %d or data", st);
	*word = 77;
	st = op(KRCORE_WR_ATOMIC_FAA, word, 8, rw->addr + woff, rw->rkey, 5);
	st |= op(KRCORE_WR_ATOMIC_FAA, word, 8, rw->addr + woff, rw->rkey, 0);
	if (st || *word != 5)
		FAIL("FAA with rw: %llu (status %d)", (unsigned long long)*word,
		     st);
	expect(krc_lmr_set(vq, rw, soff, 0x5a, 256), 0, "memset with rw");
	st = rd(ro, soff - 1, 258);
	for (i = 1; i < 257 && buf[32768 + i] == 0x5a; i++)
		;
	if (st || i != 257 || buf[32768] || buf[32768 + 257])
		FAIL("memset with rw: status %d, byte %u", st, i);
	expect(krc_lmr_set(vq, rw, A_LEN - 4, 1, 8), -ERANGE,
	       "memset past the end");
	expect(krc_lock(vq, rw, 24576 + 8 * slot, 5000, &lk), 0, "lock with rw");
	expect(krc_unlock(vq, &lk), 0, "unlock");
	printf(TAG ": use: ro READ only (WRITE, FAA, memset, lock refused); rw all\n");
}

/* The process's handle of a looked-up region is not its to name or free. */
static void use_handles(const struct krc_lmr *ro)
{
	struct krcore_lmr_lookup lk;
	struct krc_lmr again;

	memset(&lk, 0, sizeof(lk));
	memcpy(lk.name, "a b", 3);
	expect(ioctl(krc_vq_fd(vq), KRCORE_IOC_LMR_LOOKUP, &lk) < 0 ? -errno : 0,
	       -EINVAL, "lookup of a bad name");
	memset(&lk, 0, sizeof(lk));
	memcpy(lk.name, "ro", 2);
	lk.reserved = 1;
	expect(ioctl(krc_vq_fd(vq), KRCORE_IOC_LMR_LOOKUP, &lk) < 0 ? -errno : 0,
	       -EINVAL, "lookup with reserved");
	expect(krc_lmr_publish(vq, ro, "ro2", KRCORE_ACCESS_REMOTE_READ),
	       -EPERM, "publish of a looked-up region");
	expect(krc_lmr_copy(vq, ro, 0, ro, 64, 8), -EPERM,
	       "copy inside a looked-up region");
	expect(krc_lmr_lookup(vq, "ro", &again), 0, "ro looked up again");
	if (again.handle == ro->handle || again.rkey != ro->rkey)
		FAIL("a second lookup: handle %u (first %u), key %#x (%#x)",
		     again.handle, ro->handle, again.rkey, ro->rkey);
	expect(krc_lmr_free(vq, &again), 0, "free of a looked-up handle");
	expect(krc_lmr_free(vq, &again), -ENOENT, "second free");
	if (rd(ro, 0, 8))
		FAIL("the region is still there after the free of a lookup");
	printf(TAG ": use: a looked-up region is not published, copied or freed\n");
}

static int do_use(const char *node, unsigned int slot)
{
	struct krc_lmr ro, rw, b, tw, none;
	char name[KRC_NAME_LEN];
	unsigned int lookups = 0, misses = 0;

	setup(node);
	expect(lookup_rc("ro", &ro), 0, "lookup ro");
	expect(krc_lmr_lookup(vq, "rw", &rw), 0, "lookup rw");
	expect(krc_lmr_lookup(vq, "b", &b), 0, "lookup b");
	twin(name, "twin");
	expect(krc_lmr_lookup(vq, name, &tw), 0, "lookup of ro's twin");
	twin(name, "nope");
	expect(krc_lmr_lookup(vq, name, &none), -ENOENT,
	       "lookup of an absent name of ro's bucket");
	lookups += 4;
	misses++;
	if (tw.region != b.region)
		FAIL("ro's twin: region %u, not b's %u", tw.region, b.region);
	if (memcmp(ro.gid, owner, 16) || ro.rights != KRCORE_ACCESS_REMOTE_READ ||
	    ro.length != A_LEN || !ro.region || rw.rights != ALL ||
	    rw.region != ro.region || rw.rkey == ro.rkey ||
	    b.region == ro.region || b.length != 4096 ||
	    b.rights != KRCORE_ACCESS_REMOTE_READ)
		FAIL("lookups: ro %u %#x %llu, rw %u %#x, b %u %llu (region rights length)",
		     ro.region, ro.rights, (unsigned long long)ro.length,
		     rw.region, rw.rights, b.region,
		     (unsigned long long)b.length);
	printf(TAG ": use: ro, rw, b found with their rights; nope ENOENT\n");
	use_rights(&ro, &rw, slot);
	use_handles(&ro);
	lookups++;
	printf(TAG ": used\n");
	fflush(stdout);

	wait_signal(SIGUSR1);
	expect(krc_lmr_lookup(vq, "rw", &none), -ENOENT, "lookup of revoked rw");
	misses++;
	if (!refused(KRCORE_WR_READ, buf, 8, rw.addr, rw.rkey, 0))
		FAIL("READ with the revoked key: not refused");
	expect(krc_lmr_set(vq, &rw, 0, 1, 8), -ESTALE,
	       "memset with the revoked name's handle");
	expect(krc_lock(vq, &rw, 0, 1000, &(struct krc_lock){ 0 }), -EACCES,
	       "lock with the revoked key");
	if (rd(&ro, 0, 8) || buf[32768] != 1)
		FAIL("ro after rw's revoke: not readable");
	printf(TAG ": revoke-checked\n");
	fflush(stdout);

	wait_signal(SIGUSR1);
	expect(krc_lmr_lookup(vq, "ro", &none), -ENOENT, "lookup ro, region freed");
	expect(krc_lmr_lookup(vq, "b", &none), -ENOENT, "lookup b, region freed");
	twin(name, "twin");
	expect(krc_lmr_lookup(vq, name, &none), -ENOENT,
	       "lookup of the twin, region freed");
	misses += 3;
	if (!refused(KRCORE_WR_READ, buf, 8, ro.addr, ro.rkey, 0))
		FAIL("READ with ro's key after the free: not refused");
	expect(krc_lmr_set(vq, &rw, 0, 1, 8), -ESTALE,
	       "memset with rw's handle, region freed");
	printf(TAG ": gone-checked\n");
	printf(TAG ": lookups %u misses %u\n", lookups, misses);
	return dp_status();
}

static int do_quota(const char *node)
{
	unsigned int per[KRC_NAME_BUCKETS] = { 0 }, i = 0, n = 0;
	char name[KRC_NAME_LEN];
	struct krc_lmr q;
	int ret = 0;

	setup(node);
	if (krc_lmr_alloc(vq, node, 4096, KRCORE_ACCESS_REMOTE_READ, &q))
		tp_die("alloc: %s", krc_errmsg());
	/* two per bucket: the quarter fills every bucket to 2 exactly */
	while (!ret && n < QUOTA) {
		name_of(name, "q", &i, -1);
		i++;
		if (per[krc_name_bucket(name)] == 2)
			continue;
		ret = krc_lmr_publish(vq, &q, name, KRCORE_ACCESS_REMOTE_READ);
		if (!ret) {
			per[krc_name_bucket(name)]++;
			n++;
		}
	}
	if (ret || n != QUOTA)
		FAIL("quota: %u names published, then %s", n, strerror(-ret));
	/* its bucket has room for 6 more: the node's share is what is full */
	name_of(name, "q", &i, -1);
	expect(krc_lmr_publish(vq, &q, name, KRCORE_ACCESS_REMOTE_READ),
	       -ENOSPC, "the publish past the quarter");
	printf(TAG ": quota: %u names, then ENOSPC\n", n);
	printf(TAG ": quota-held\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int do_bucket(const char *node)
{
	char name[KRC_NAME_LEN];
	struct krc_lmr q;
	unsigned int i = 0, k;

	setup(node);
	if (krc_lmr_alloc(vq, node, 4096, KRCORE_ACCESS_REMOTE_READ, &q))
		tp_die("alloc: %s", krc_errmsg());
	for (k = 0; k < KRC_NAME_WAYS - 2; k++, i++) {
		name_of(name, "bk", &i, 17);
		expect(krc_lmr_publish(vq, &q, name, KRCORE_ACCESS_REMOTE_READ),
		       0, "a name of bucket 17");
	}
	name_of(name, "bk", &i, 17);
	expect(krc_lmr_publish(vq, &q, name, KRCORE_ACCESS_REMOTE_READ),
	       -ENOSPC, "a ninth name of bucket 17");
	expect(krc_lmr_free(vq, &q), 0, "free");
	printf(TAG ": bucket: 6 more names fill bucket 17, the next is ENOSPC\n");
	return dp_status();
}

int main(int argc, char **argv)
{
	const char *usage = "dp_name hold|quota|bucket OWNER | use OWNER SLOT";

	if (argc == 3 && !strcmp(argv[1], "hold"))
		return do_hold(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "use"))
		return do_use(argv[2], (unsigned int)strtoul(argv[3], NULL, 0) & 3);
	if (argc == 3 && !strcmp(argv[1], "quota"))
		return do_quota(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "bucket"))
		return do_bucket(argv[2]);
	return dp_usage(usage);
}
