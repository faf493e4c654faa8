// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_lmr - remote memory regions (KRCORE_IOC_LMR_ALLOC, _FREE): memory a
 * process allocates on another node, used with its VQ's own requests.
 *
 *   dp_lmr ADDR rw       a region with every right: zero at first; WRITE,
 *                        READ back (1 B .. 1 MiB, unaligned), FAA and CAS;
 *                        freed: its rkey is refused, a second free ENOENT
 *   dp_lmr ADDR big MIB  a region of MIB MiB: its first and last bytes,
 *                        then all of it set to one value at the owner
 *   dp_lmr ADDR set      memset at the owner: a whole region to one byte,
 *                        a range inside to another, exact edges; ERANGE,
 *                        EACCES (READ-only), EINVAL, ENOENT
 *   dp_lmr ADDR copy OTHER  copies at the owner between two regions and
 *                        inside one (overlapping both ways, across chunks),
 *                        checked against memmove; EACCES, ERANGE, EINVAL,
 *                        ENOENT, and EXDEV with a region on OTHER
 *   dp_lmr ADDR rights   a READ-only region: a WRITE and an atomic with its
 *                        rkey fail at the owner's RNIC and change nothing
 *   dp_lmr ADDR pool MIB the owner's pool is MIB MiB: MIB/2 fits, MIB does
 *                        not (ENOSPC), and fits again once freed
 *   dp_lmr ADDR hold N   allocate N regions of 1 MiB, print "held", sleep
 *   dp_lmr ADDR reload FILE  a region written with a pattern, "held", then
 *                        once FILE exists (the owner reloaded meanwhile):
 *                        memset ESTALE, copy ESTALE, publish ESTALE; its
 *                        old key reads nothing (refused or an error, never
 *                        the data); free 0 and then ENOENT; a new region
 *                        on the new incarnation reads zero
 *   dp_lmr ADDR args     bad arguments: exact errors
 *
 * With DP_LMR_PATH=dg (or rc) its VQ must have connected over datagrams
 * (or RC): the path the checks then exercise. Each line it prints says
 * what was checked and held; a failed check
 * prints FAIL and the exit status is 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dp/helpers.h"

#define TAG	"dp_lmr"

static struct krc_vq *vq;
static uint8_t owner[16];
static uint64_t next_id = 1;

/* KRCORE_IOC_LMR_ALLOC: 0 or -errno. */
static int lmr_alloc(uint64_t len, uint32_t access, struct krcore_lmr_alloc *a)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->gid, owner, 16);
	a->length = len;
	a->access = access;
	/* 160 MiB takes the debug kernel's owner more than the default 3 s */
	a->timeout_ms = 30000;
	return ioctl(krc_vq_fd(vq), KRCORE_IOC_LMR_ALLOC, a) < 0 ? -errno : 0;
}

static int lmr_free(uint32_t handle)
{
	struct krcore_lmr_free f = { .handle = handle };

	return ioctl(krc_vq_fd(vq), KRCORE_IOC_LMR_FREE, &f) < 0 ? -errno : 0;
}

static int lmr_set(uint32_t handle, uint32_t value, uint64_t off, uint64_t len)
{
	struct krcore_lmr_set st = {
		.handle = handle, .value = value, .offset = off, .length = len,
		.timeout_ms = 30000,
	};

	return ioctl(krc_vq_fd(vq), KRCORE_IOC_LMR_SET, &st) < 0 ? -errno : 0;
}

static int lmr_copy(uint32_t dst, uint64_t doff, uint32_t src, uint64_t soff,
		    uint64_t len)
{
	struct krcore_lmr_copy cp = {
		.dst_handle = dst, .src_handle = src, .dst_offset = doff,
		.src_offset = soff, .length = len, .timeout_ms = 30000,
	};

	return ioctl(krc_vq_fd(vq), KRCORE_IOC_LMR_COPY, &cp) < 0 ? -errno : 0;
}

static int op(uint8_t opcode, void *local, uint32_t lkey, uint32_t len,
	      uint64_t raddr, uint32_t rkey, uint64_t add, uint64_t swap)
{
	struct krcore_cqe cqe;
	struct krcore_wr wr;

	fill(&wr, opcode, local, lkey, len, raddr, rkey, next_id++);
	wr.compare_add = add;
	wr.swap = swap;
	return dp_one(vq, &wr, &cqe) ? (int)cqe.status : 0;
}

static struct krcore_lmr_alloc must_alloc(uint64_t len, uint32_t access)
{
	struct krcore_lmr_alloc a;
	int ret = lmr_alloc(len, access, &a);

	if (ret)
		tp_die("alloc of %llu bytes: %s", (unsigned long long)len,
		       strerror(-ret));
	if (!a.handle || !a.rkey || !a.region || !a.incarnation ||
	    a.length != len || a.reserved)
		FAIL("alloc: handle %u rkey %x region %u incarnation %llx",
		     a.handle, a.rkey, a.region,
		     (unsigned long long)a.incarnation);
	return a;
}

static int do_rw(void)
{
	static const uint32_t sizes[] = { 1, 8, 4095, 65536, 1 << 20 };
	const uint32_t all = KRCORE_ACCESS_REMOTE_READ |
			     KRCORE_ACCESS_REMOTE_WRITE |
			     KRCORE_ACCESS_REMOTE_ATOMIC;
	struct krcore_lmr_alloc a = must_alloc(2 * MIB + 7, all);
	struct krc_mr ms, md, mw;
	uint8_t *src = dp_reg(vq, MIB_MR, &ms), *dst = dp_reg(vq, MIB_MR, &md);
	uint64_t *word = dp_reg(vq, 4096, &mw);
	uint32_t i, s, st;

	if (!src || !dst || !word)
		return 1;
	/* Zeroed by the owner: nothing of another's use shows through. */
	memset(dst, 0xee, MIB);
	st = op(KRCORE_WR_READ, dst, md.lkey, MIB, a.addr + MIB + 7, a.rkey, 0, 0);
	for (i = 0; i < MIB && dst[i] == 0; i++)
		;
	if (st || i != MIB)
		FAIL("fresh region: status %u, byte %u not zero", st, i);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		uint32_t len = sizes[s];
		uint64_t at = a.addr + 3 * s + (s & 1);

		for (i = 0; i < len; i++)
			src[i] = (uint8_t)(i * 7 + s + 1);
		st = op(KRCORE_WR_WRITE, src, ms.lkey, len, at, a.rkey, 0, 0);
		if (st)
			FAIL("WRITE %u: %s", len, krc_wc_status_str(st));
		memset(dst, 0, len);
		st = op(KRCORE_WR_READ, dst, md.lkey, len, at, a.rkey, 0, 0);
		if (st || memcmp(src, dst, len))
			FAIL("READ back %u: status %u or data differs", len, st);
	}
	printf(TAG ": rw: WRITE and READ back of 1 B .. 1 MiB ok\n");
	word[1] = 1000;
	st = op(KRCORE_WR_WRITE, &word[1], mw.lkey, 8, a.addr + 2 * MIB - 8, a.rkey, 0, 0);
	st |= op(KRCORE_WR_ATOMIC_FAA, &word[0], mw.lkey, 8, a.addr + 2 * MIB - 8, a.rkey, 5, 0);
	if (st || word[0] != 1000)
		FAIL("FAA returned %llu (status %u)", (unsigned long long)word[0], st);
	st = op(KRCORE_WR_ATOMIC_CAS, &word[0], mw.lkey, 8, a.addr + 2 * MIB - 8, a.rkey, 1005, 42);
	st |= op(KRCORE_WR_READ, &word[2], mw.lkey, 8, a.addr + 2 * MIB - 8, a.rkey, 0, 0);
	if (st || word[0] != 1005 || word[2] != 42)
		FAIL("CAS returned %llu, word %llu (status %u)",
		     (unsigned long long)word[0], (unsigned long long)word[2], st);
	printf(TAG ": rw: FAA and CAS ok\n");
	/* Past its end: the owner's RNIC refuses. */
	st = op(KRCORE_WR_READ, dst, md.lkey, 16, a.addr + 2 * MIB + 7 - 8, a.rkey, 0, 0);
	if (st != KRCORE_WC_REM_ACCESS_ERR)
		FAIL("READ across the end: status %u, expected a remote access error", st);
	st = op(KRCORE_WR_READ, dst, md.lkey, 8, a.addr, a.rkey, 0, 0);
	if (st)
		FAIL("READ after the refused one: %s", krc_wc_status_str(st));
	if (lmr_free(a.handle))
		FAIL("free: %s", strerror(errno));
	st = op(KRCORE_WR_READ, dst, md.lkey, 8, a.addr, a.rkey, 0, 0);
	if (st != KRCORE_WC_REM_ACCESS_ERR)
		FAIL("READ after free: status %u, expected a remote access error", st);
	if (lmr_free(a.handle) != -ENOENT)
		FAIL("second free: not ENOENT");
	printf(TAG ": rw: freed: its rkey is refused, a second free ENOENT\n");
	return dp_status();
}

static int do_big(uint64_t mib)
{
	struct krcore_lmr_alloc a = must_alloc(mib * MIB,
					       KRCORE_ACCESS_REMOTE_READ |
					       KRCORE_ACCESS_REMOTE_WRITE);
	struct krc_mr m;
	uint8_t *buf = dp_reg(vq, 4096, &m);
	uint64_t ends[] = { 0, mib * MIB / 2 + 1, mib * MIB - 16 };
	uint32_t i, st;

	if (!buf)
		return 1;
	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		memset(buf, 0xa0 + i, 16);
		st = op(KRCORE_WR_WRITE, buf, m.lkey, 16, a.addr + ends[i], a.rkey, 0, 0);
		memset(buf + 64, 0, 16);
		st |= op(KRCORE_WR_READ, buf + 64, m.lkey, 16, a.addr + ends[i], a.rkey, 0, 0);
		if (st || memcmp(buf, buf + 64, 16))
			FAIL("big: 16 B at %llu: status %u or data differs",
			     (unsigned long long)ends[i], st);
	}
	printf(TAG ": big: %llu MiB region written and read at both ends\n",
	       (unsigned long long)mib);
	if (lmr_set(a.handle, 0xc3, 0, mib * MIB))
		FAIL("big: memset of all of it: %s", strerror(errno));
	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		memset(buf + 64, 0, 16);
		st = op(KRCORE_WR_READ, buf + 64, m.lkey, 16, a.addr + ends[i], a.rkey, 0, 0);
		memset(buf, 0xc3, 16);
		if (st || memcmp(buf, buf + 64, 16))
			FAIL("big: after the memset, 16 B at %llu: status %u or not 0xc3",
			     (unsigned long long)ends[i], st);
	}
	if (lmr_free(a.handle))
		FAIL("big: free: %s", strerror(errno));
	printf(TAG ": big: all %llu MiB set to 0xc3 at the owner\n",
	       (unsigned long long)mib);
	return dp_status();
}

static void expect(int got, int want, const char *what)
{
	if (got != want)
		FAIL("%s: %s, expected %s", what, got ? strerror(-got) : "0",
		     strerror(-want));
}

/* The bytes [off - 1, off + len] of @a, read back: edges of a memset. */
static int edges(const struct krcore_lmr_alloc *a, uint8_t *buf, uint32_t lkey,
		 uint64_t off, uint64_t len, uint8_t in, uint8_t out)
{
	uint64_t at[] = { off - 1, off, off + len - 1, off + len };
	uint8_t want[] = { out, in, in, out };
	uint32_t i, st;

	for (i = 0; i < 4; i++) {
		buf[0] = (uint8_t)~want[i];
		st = op(KRCORE_WR_READ, buf, lkey, 1, a->addr + at[i], a->rkey, 0, 0);
		if (st || buf[0] != want[i]) {
			FAIL("set: byte %llu is %#x (status %u), expected %#x",
			     (unsigned long long)at[i], buf[0], st, want[i]);
			return -1;
		}
	}
	return 0;
}

static int do_set(void)
{
	const uint64_t len = 40 * MIB + 3;
	struct krcore_lmr_alloc a = must_alloc(len, KRCORE_ACCESS_REMOTE_READ |
					       KRCORE_ACCESS_REMOTE_WRITE);
	struct krcore_lmr_alloc ro = must_alloc(4096, KRCORE_ACCESS_REMOTE_READ);
	struct krc_mr m;
	uint8_t *buf = dp_reg(vq, 4096, &m);
	int ret;

	if (!buf)
		return 1;
	ret = lmr_set(a.handle, 0x5a, 0, len);
	if (ret)
		FAIL("set: all of it: %s", strerror(-ret));
	/* the first and last bytes, through the edges of an inner range */
	edges(&a, buf, m.lkey, 1, len - 2, 0x5a, 0x5a);
	ret = lmr_set(a.handle, 0, MIB + 1, 2 * MIB + 4095);
	if (ret)
		FAIL("set: inner range: %s", strerror(-ret));
	edges(&a, buf, m.lkey, MIB + 1, 2 * MIB + 4095, 0, 0x5a);
	ret = lmr_set(a.handle, 0xff, len - 1, 1);
	if (ret)
		FAIL("set: last byte: %s", strerror(-ret));
	memset(buf, 0, 2);
	if (op(KRCORE_WR_READ, buf, m.lkey, 2, a.addr + len - 2, a.rkey, 0, 0) ||
	    buf[0] != 0x5a || buf[1] != 0xff)
		FAIL("set: the last two bytes are %#x %#x, expected 0x5a 0xff",
		     buf[0], buf[1]);
	printf(TAG ": set: 40 MiB to 0x5a, an inner range to 0, the last byte to 0xff\n");
	expect(lmr_set(a.handle, 1, len - 1, 2), -ERANGE, "set: past the end");
	expect(lmr_set(a.handle, 1, len + 1, 1), -ERANGE, "set: beyond the end");
	expect(lmr_set(a.handle, 1, 1ULL << 62, 1ULL << 62), -ERANGE, "set: far beyond");
	expect(lmr_set(a.handle, 256, 0, 1), -EINVAL, "set: value 256");
	expect(lmr_set(a.handle, 1, 0, 0), -EINVAL, "set: length 0");
	expect(lmr_set(ro.handle, 1, 0, 1), -EACCES, "set: a READ-only region");
	expect(lmr_set(a.handle + ro.handle + 100, 1, 0, 1), -ENOENT, "set: no such handle");
	buf[0] = 7;
	if (op(KRCORE_WR_READ, buf, m.lkey, 1, ro.addr, ro.rkey, 0, 0) || buf[0] != 0)
		FAIL("set: the READ-only region changed");
	if (lmr_free(a.handle) || lmr_free(ro.handle))
		FAIL("set: free: %s", strerror(errno));
	expect(lmr_set(a.handle, 1, 0, 1), -ENOENT, "set: a freed handle");
	printf(TAG ": set: ERANGE, EINVAL, EACCES, ENOENT as they should be\n");
	return dp_status();
}

/* Read all of region @a (@len bytes) and compare it with @model. */
static void same(const char *what, const struct krcore_lmr_alloc *a,
		 uint8_t *buf, uint32_t lkey, const uint8_t *model, uint64_t len)
{
	uint64_t i;
	uint32_t st;

	uint64_t at, n;

	/* in READs of 1 MiB: a longer one is slow on the testbed */
	memset(buf, 0xee, len);
	st = 0;
	for (at = 0; at < len && !st; at += n) {
		n = len - at < MIB ? len - at : MIB;
		st = op(KRCORE_WR_READ, buf + at, lkey, (uint32_t)n,
			a->addr + at, a->rkey, 0, 0);
	}
	for (i = 0; i < len && buf[i] == model[i]; i++)
		;
	if (st || i != len)
		FAIL("copy: %s: status %u, byte %llu is %#x, expected %#x", what,
		     st, (unsigned long long)i, i < len ? buf[i] : 0,
		     i < len ? model[i] : 0);
}

static int do_copy(const char *other)
{
	const uint32_t rw = KRCORE_ACCESS_REMOTE_READ | KRCORE_ACCESS_REMOTE_WRITE;
	const uint64_t la = 3 * MIB + 5, lb = MIB + 3;
	struct krcore_lmr_alloc a = must_alloc(la, rw), b = must_alloc(lb, rw);
	struct krcore_lmr_alloc r = must_alloc(8192, KRCORE_ACCESS_REMOTE_READ);
	struct krcore_lmr_alloc x;
	uint8_t *ma = tp_xalloc(la), *mb = tp_xalloc(lb);
	struct krc_mr m;
	uint8_t *buf = dp_reg(vq, 4 * MIB, &m), keep[16];
	uint64_t i;
	uint32_t st;

	if (!buf)
		return 1;
	for (i = 0; i < la; i++)
		ma[i] = (uint8_t)(i * 131 + 7 + (i >> 16));
	memset(mb, 0, lb);
	memcpy(buf, ma, la);
	st = op(KRCORE_WR_WRITE, buf, m.lkey, (uint32_t)MIB, a.addr, a.rkey, 0, 0);
	st |= op(KRCORE_WR_WRITE, buf + MIB, m.lkey, (uint32_t)MIB, a.addr + MIB, a.rkey, 0, 0);
	st |= op(KRCORE_WR_WRITE, buf + 2 * MIB, m.lkey, (uint32_t)(la - 2 * MIB),
		 a.addr + 2 * MIB, a.rkey, 0, 0);
	if (st)
		FAIL("copy: WRITE of the pattern: %s", krc_wc_status_str(st));
	/* region to region */
	expect(lmr_copy(b.handle, 3, a.handle, 100, MIB), 0, "copy: A to B");
	memcpy(mb + 3, ma + 100, MIB);
	same("A to B", &b, buf, m.lkey, mb, lb);
	/* inside A, overlapping, forward then backward, across chunks */
	expect(lmr_copy(a.handle, 1000, a.handle, 0, 2 * MIB + 5000), 0,
	       "copy: inside A, to a higher address");
	memmove(ma + 1000, ma, 2 * MIB + 5000);
	same("inside A, up", &a, buf, m.lkey, ma, la);
	expect(lmr_copy(a.handle, 10, a.handle, 5000, 2 * MIB), 0,
	       "copy: inside A, to a lower address");
	memmove(ma + 10, ma + 5000, 2 * MIB);
	same("inside A, down", &a, buf, m.lkey, ma, la);
	/* from a READ-only region */
	expect(lmr_copy(a.handle, la - 8192, r.handle, 0, 8192), 0,
	       "copy: from a READ-only region");
	memset(ma + la - 8192, 0, 8192);
	same("from R", &a, buf, m.lkey, ma, la);
	printf(TAG ": copy: A to B, inside A both ways across chunks, from R: as memmove\n");
	expect(lmr_copy(r.handle, 0, a.handle, 0, 8), -EACCES, "copy: into R");
	expect(lmr_copy(b.handle, lb - 7, a.handle, 0, 8), -ERANGE, "copy: past B's end");
	expect(lmr_copy(b.handle, 0, a.handle, la - 7, 8), -ERANGE, "copy: from past A's end");
	expect(lmr_copy(b.handle, 0, a.handle, 1ULL << 62, 8), -ERANGE, "copy: far past");
	expect(lmr_copy(b.handle, 0, a.handle, 0, 0), -EINVAL, "copy: length 0");
	expect(lmr_copy(b.handle, 0, 777, 0, 8), -ENOENT, "copy: no such source");
	memcpy(keep, owner, 16);
	if (krc_gid_parse(other, owner))
		tp_die("bad address %s", other);
	x = must_alloc(4096, rw);
	memcpy(owner, keep, 16);
	expect(lmr_copy(a.handle, 0, x.handle, 0, 8), -EXDEV, "copy: from another node");
	same("after the refused ones", &a, buf, m.lkey, ma, la);
	if (lmr_free(a.handle) || lmr_free(b.handle) || lmr_free(r.handle) ||
	    lmr_free(x.handle))
		FAIL("copy: free: %s", strerror(errno));
	printf(TAG ": copy: EACCES, ERANGE, EINVAL, ENOENT, EXDEV as they should be\n");
	return dp_status();
}

static int do_rights(void)
{
	struct krcore_lmr_alloc a = must_alloc(4096, KRCORE_ACCESS_REMOTE_READ);
	struct krc_mr m;
	uint64_t *w = dp_reg(vq, 4096, &m);
	uint32_t st;

	if (!w)
		return 1;
	w[0] = 0x1122334455667788ULL;
	st = op(KRCORE_WR_WRITE, w, m.lkey, 8, a.addr + 64, a.rkey, 0, 0);
	if (st != KRCORE_WC_REM_ACCESS_ERR)
		FAIL("WRITE with a READ-only key: status %u, expected a remote access error", st);
	st = op(KRCORE_WR_ATOMIC_FAA, &w[1], m.lkey, 8, a.addr + 64, a.rkey, 1, 0);
	if (st != KRCORE_WC_REM_ACCESS_ERR)
		FAIL("FAA with a READ-only key: status %u, expected a remote access error", st);
	w[2] = 99;
	st = op(KRCORE_WR_READ, &w[2], m.lkey, 8, a.addr + 64, a.rkey, 0, 0);
	if (st || w[2] != 0)
		FAIL("READ after the refused WRITE: status %u, word %llu (expected 0)",
		     st, (unsigned long long)w[2]);
	if (lmr_free(a.handle))
		FAIL("rights: free: %s", strerror(errno));
	printf(TAG ": rights: WRITE and FAA refused with a READ-only key, memory unchanged\n");
	return dp_status();
}

static int do_pool(uint64_t mib)
{
	struct krcore_lmr_alloc a, b;
	int ret;

	a = must_alloc(mib * MIB / 2, KRCORE_ACCESS_REMOTE_READ);
	ret = lmr_alloc(mib * MIB, KRCORE_ACCESS_REMOTE_READ, &b);
	if (ret != -ENOSPC)
		FAIL("pool: %llu MiB more: %d, expected ENOSPC", (unsigned long long)mib, ret);
	ret = lmr_alloc(mib * MIB / 2, KRCORE_ACCESS_REMOTE_READ, &b);
	if (ret)
		FAIL("pool: the other half: %s", strerror(-ret));
	if (lmr_free(a.handle) || lmr_free(b.handle))
		FAIL("pool: free: %s", strerror(errno));
	a = must_alloc(mib * MIB, KRCORE_ACCESS_REMOTE_READ);
	if (lmr_free(a.handle))
		FAIL("pool: free: %s", strerror(errno));
	printf(TAG ": pool: ENOSPC past %llu MiB, room again once freed\n",
	       (unsigned long long)mib);
	return dp_status();
}

static int do_hold(unsigned int n)
{
	struct krcore_lmr_alloc a;
	unsigned int i;

	for (i = 0; i < n; i++)
		a = must_alloc(MIB, KRCORE_ACCESS_REMOTE_READ);
	printf(TAG ": held %u (last handle %u)\n", n, a.handle);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

/* A READ of @len at @raddr/@rkey on a new VQ: its status, or -1 if none. */
static int read_fresh(uint8_t *buf, uint32_t len, uint64_t raddr,
		      uint32_t rkey)
{
	struct krcore_qconnect qc;
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	struct krc_vq *v;
	struct krc_mr m;
	int st = -1;

	if (krc_vq_open(&v) < 0)
		return -1;
	if (krc_qconnect_gid(v, owner, 0, 0, &qc) < 0 ||
	    krc_reg_mr(v, buf, len, KRCORE_ACCESS_LOCAL_WRITE, &m) < 0)
		goto out;
	fill(&wr, KRCORE_WR_READ, buf, m.lkey, len, raddr, rkey, next_id++);
	if (krc_qpush(v, &wr, 1) == 1 &&
	    krc_qpop_wait(v, &cqe, 1, 20000 * dp_scale()) == 1)
		st = (int)cqe.status;
	krc_dereg_mr(v, &m);
out:
	krc_vq_close(v);
	return st;
}

static int do_reload(const char *file)
{
	const uint32_t all = KRCORE_ACCESS_REMOTE_READ |
			     KRCORE_ACCESS_REMOTE_WRITE;
	struct krcore_lmr_alloc a = must_alloc(MIB, all), b;
	struct krcore_lmr_publish p = { .access = KRCORE_ACCESS_REMOTE_READ };
	uint8_t *buf = tp_xalloc(4096);
	unsigned int i;
	int st;

	if (lmr_set(a.handle, 0x5a, 0, MIB))
		FAIL("reload: the first memset: %s", strerror(errno));
	st = read_fresh(buf, 4096, a.addr, a.rkey);
	for (i = 0; i < 4096 && buf[i] == 0x5a; i++)
		;
	if (st || i != 4096)
		FAIL("reload: before: status %d, byte %u not 0x5a", st, i);
	printf(TAG ": reload: held (incarnation %llx)\n",
	       (unsigned long long)a.incarnation);
	fflush(stdout);
	while (access(file, F_OK))
		usleep(100000);
	expect(lmr_set(a.handle, 1, 0, 8), -ESTALE, "memset after the reload");
	expect(lmr_copy(a.handle, 0, a.handle, 8, 8), -ESTALE,
	       "copy after the reload");
	p.handle = a.handle;
	snprintf(p.name, sizeof(p.name), "after-reload");
	p.timeout_ms = 30000;
	expect(ioctl(krc_vq_fd(vq), KRCORE_IOC_LMR_PUBLISH, &p) < 0 ? -errno : 0,
	       -ESTALE, "publish after the reload");
	memset(buf, 0, 4096);
	st = read_fresh(buf, 4096, a.addr, a.rkey);
	for (i = 0; i < 4096 && buf[i] != 0x5a; i++)
		;
	if (st == KRCORE_WC_SUCCESS || i != 4096)
		FAIL("reload: the old key read something: status %d, byte %u", st, i);
	else
		printf(TAG ": reload: the old key reads nothing (status %d)\n", st);
	expect(lmr_free(a.handle), 0, "free of the old region");
	expect(lmr_free(a.handle), -ENOENT, "its second free");
	if (lmr_alloc(4096, all, &b))
		FAIL("reload: a new region: %s", strerror(errno));
	else if (b.incarnation == a.incarnation)
		FAIL("reload: the new region's incarnation is the old one");
	else if (read_fresh(buf, 4096, b.addr, b.rkey) != 0 || buf[0] || buf[4095])
		FAIL("reload: the new region does not read zero");
	else
		printf(TAG ": reload: a new region on the new incarnation reads zero\n");
	return dp_status();
}

static int do_args(const char *self)
{
	struct krcore_lmr_alloc a;
	struct krcore_lmr_free f = { .handle = 1, .reserved = 1 };
	uint8_t keep[16];

	expect(lmr_alloc(0, KRCORE_ACCESS_REMOTE_READ, &a), -EINVAL, "length 0");
	expect(lmr_alloc(KRCORE_LMR_MAX_LEN + 1, KRCORE_ACCESS_REMOTE_READ, &a),
	       -EINVAL, "length past the maximum");
	expect(lmr_alloc(4096, 0, &a), -EINVAL, "no rights");
	expect(lmr_alloc(4096, KRCORE_ACCESS_LOCAL_WRITE, &a), -EINVAL, "LOCAL_WRITE");
	expect(lmr_alloc(4096, 1u << 7, &a), -EINVAL, "unknown bits");
	memset(&a, 0, sizeof(a));
	memcpy(a.gid, owner, 16);
	a.length = 4096;
	a.access = KRCORE_ACCESS_REMOTE_READ;
	a.reserved = 1;
	expect(ioctl(krc_vq_fd(vq), KRCORE_IOC_LMR_ALLOC, &a) < 0 ? -errno : 0,
	       -EINVAL, "reserved");
	expect(lmr_alloc(1ULL << 41, KRCORE_ACCESS_REMOTE_READ, &a), -EINVAL,
	       "2 TiB");
	expect(lmr_alloc(1ULL << 39, KRCORE_ACCESS_REMOTE_READ, &a), -ENOSPC,
	       "512 GiB (past the pool)");
	memcpy(keep, owner, 16);
	if (krc_gid_parse(self, owner))
		tp_die("bad address %s", self);
	/* This node's own memory: a region like any other (ABI 11). */
	expect(lmr_alloc(4096, KRCORE_ACCESS_REMOTE_READ, &a), 0, "this node");
	expect(lmr_free(a.handle), 0, "free of the region on this node");
	krc_gid_parse("10.99.99.99", owner);
	expect(lmr_alloc(4096, KRCORE_ACCESS_REMOTE_READ, &a), -EHOSTUNREACH,
	       "a node nobody knows");
	memcpy(owner, keep, 16);
	expect(lmr_free(0), -ENOENT, "free of handle 0");
	expect(lmr_free(12345), -ENOENT, "free of a handle never given");
	expect(ioctl(krc_vq_fd(vq), KRCORE_IOC_LMR_FREE, &f) < 0 ? -errno : 0,
	       -EINVAL, "free with reserved");
	printf(TAG ": args: every bad argument refused with its error\n");
	return dp_status();
}

int main(int argc, char **argv)
{
	const char *usage =
		"dp_lmr ADDR rw|big MIB|set|copy OTHER|rights|pool MIB|hold N|\n"
		"       reload FILE|args SELF";
	struct krcore_qconnect qc;
	const char *path;

	if (argc < 3)
		return dp_usage(usage);
	if (krc_gid_parse(argv[1], owner))
		tp_die("bad address %s", argv[1]);
	if (krc_vq_open(&vq) < 0 || krc_qconnect_gid(vq, owner, 0, 0, &qc) < 0)
		tp_die("connect %s: %s", argv[1], krc_errmsg());
	/* DP_LMR_PATH=dg|rc: the path this test claims to exercise. */
	path = getenv("DP_LMR_PATH");
	if (path && !strcmp(path, "dg") != !!(qc.path & KRCORE_PATH_DATAGRAM))
		tp_die("connected by path %#x, not the one asked for (%s)",
		       qc.path, path);
	if (path)
		printf(TAG ": connected over %s\n",
		       qc.path & KRCORE_PATH_DATAGRAM ? "datagrams" : "RC");
	if (!strcmp(argv[2], "rw"))
		return do_rw();
	if (!strcmp(argv[2], "rights"))
		return do_rights();
	if (!strcmp(argv[2], "set"))
		return do_set();
	if (argc == 4 && !strcmp(argv[2], "big"))
		return do_big(strtoull(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[2], "pool"))
		return do_pool(strtoull(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[2], "hold"))
		return do_hold((unsigned int)strtoul(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[2], "reload"))
		return do_reload(argv[3]);
	if (argc == 4 && !strcmp(argv[2], "args"))
		return do_args(argv[3]);
	if (argc == 4 && !strcmp(argv[2], "copy"))
		return do_copy(argv[3]);
	return dp_usage(usage);
}
