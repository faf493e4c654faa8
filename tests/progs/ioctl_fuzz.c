// SPDX-License-Identifier: BSD-2-Clause
/*
 * ioctl_fuzz - a multi-process fuzzer of /dev/krcore, run inside a
 * cluster node (tests/cluster/t_ioctl_fuzz.sh, make soak).
 *
 *   ioctl_fuzz run SECONDS SEED SELF PEER INFO [WORKERS]
 *       WORKERS processes (default 4) issue random and boundary arguments
 *       to every ioctl, random sequences (open, connect to this node, to
 *       PEER, to nodes that do not exist, register, push, pop, bind, send
 *       messages to themselves and to PEER, close, fork), map both rings
 *       and scribble over them. The parent kills a random worker with
 *       SIGKILL every second or so and starts another. INFO names a buffer
 *       served on PEER ("addr rkey") so that some remote keys are valid.
 *       Exits 0 when every worker could be reaped (a process stuck in the
 *       kernel is a failure); prints per-operation counts of calls and
 *       errnos. Worker i uses seed SEED + i * 7919 + respawns: the seed is
 *       printed so that a run can be replayed.
 *   ioctl_fuzz good PEER INFO SECONDS
 *       the well-behaved process beside the fuzzer: WRITE a fresh pattern
 *       to its own slice of the buffer served on PEER, READ it back and
 *       compare, for SECONDS; every request must succeed with its data.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#ifndef fallthrough
#define fallthrough __attribute__((__fallthrough__))
#endif

#include "libkrcore.h"

#define MAXVQ		4
#define MAXMR		8
#define BUFSZ		(1024u * 1024u)
#define NERR		140

enum op {
	OP_OPEN, OP_CLOSE, OP_QCONNECT, OP_REG, OP_DEREG, OP_PUSH, OP_MAP,
	OP_SCRIBBLE, OP_POP, OP_WAIT, OP_BIND, OP_LOOKUP, OP_PROBE, OP_INFO,
	OP_RANDOM, OP_FORK, OP_MUNMAP, OP_FLOW_WAIT, OP_CONSUMED, OP_MEMBERS,
	OP_LMR_ALLOC, OP_LMR_FREE, OP_LMR_SET, OP_LMR_COPY, OP_LOCK, OP_UNLOCK,
	OP_PUBLISH, OP_NAME_LOOKUP, OP_QPRIO,
	OP_NR
};

static const char * const op_names[OP_NR] = {
	"open", "close", "qconnect", "reg_mr", "dereg_mr", "qpush", "mmap",
	"scribble", "qpop", "qwait", "qbind", "lookup", "probe", "info",
	"random_cmd", "fork", "munmap", "flow_wait", "qconsumed", "members",
	"lmr_alloc", "lmr_free", "lmr_set", "lmr_copy", "lock", "unlock",
	"publish", "name_lookup", "qprio",
};

/* Shared by every worker (MAP_SHARED): calls and errnos per operation. */
struct stats {
	unsigned long calls[OP_NR];
	unsigned long ok[OP_NR];
	unsigned long err[OP_NR][NERR];
	unsigned long posted;
	unsigned long completions;
	unsigned long connected;
	unsigned long messages;
};

static struct stats *st;
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t pick(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void count(enum op op, int ret)
{
	__atomic_add_fetch(&st->calls[op], 1, __ATOMIC_RELAXED);
	if (ret >= 0)
		__atomic_add_fetch(&st->ok[op], 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&st->err[op][errno < NERR ? errno : 0], 1,
				   __ATOMIC_RELAXED);
}

struct vqs {
	int fd;
	void *ring;
	size_t ring_size;
	void *rring;
	size_t rring_size;
	uint32_t ring_bytes;	/* from qconnect / qbind */
	uint32_t rring_bytes;
	uint8_t *uring;		/* the ring the kernel took in our memory */
};

struct mrs {
	uint32_t lkey, rkey;
	uint64_t addr, len;
};

static struct vqs vq[MAXVQ];
static struct mrs mr[MAXMR];
static int nmr;
static uint8_t *buf, *ro, *guard;	/* guard: the page after is unmapped */
#define URING_PAGES	16
static uint8_t *urings;			/* memory offered as rings (ABI 14) */
static uint8_t self_gid[16], peer_gid[16];
static uint64_t peer_addr;
static uint32_t peer_rkey;
static long pagesz;

/* A pointer for an ioctl argument: mostly good, sometimes hostile. */
static void *arg_ptr(void *good, size_t len)
{
	switch (pick(24)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)0xffff888000000000ull;
	case 2:
		return ro;			/* read-only: outputs fault */
	case 3:
		return guard + pagesz - len / 2;	/* crosses into nothing */
	case 4:
		return (void *)(uintptr_t)(rnd() | 1);
	default:
		return good;
	}
}

static uint32_t any_u32(void)
{
	static const uint32_t edge[] = {
		0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0xffff, 0x10000,
		4096, 4095, 4097, 1u << 30, (1u << 30) + 1,
	};

	return pick(3) ? (uint32_t)rnd() : edge[pick(sizeof(edge) / 4)];
}

static uint64_t any_u64(void)
{
	static const uint64_t edge[] = {
		0, 1, ~0ull, 0x7fffffffffffffffull, 0xffff888000000000ull,
		0x1000, 0xfffffffffffff000ull,
	};

	return pick(3) ? rnd() : edge[pick(sizeof(edge) / 8)];
}

/* A VQ: mostly an open one, sometimes whatever is in the slot (-1). */
static int rvq(void)
{
	int i = pick(MAXVQ), k;

	for (k = 0; k < MAXVQ && pick(8); k++, i = (i + 1) % MAXVQ)
		if (vq[i].fd >= 0)
			break;
	return vq[i].fd;
}

static void pick_gid(uint8_t gid[16])
{
	switch (pick(6)) {
	case 0:
	case 1:
		memcpy(gid, self_gid, 16);
		break;
	case 2:
	case 3:
		memcpy(gid, peer_gid, 16);
		break;
	case 4:	/* a node that does not exist */
		krc_gid_parse("10.77.0.77", gid);
		break;
	default:
		for (int i = 0; i < 16; i++)
			gid[i] = (uint8_t)rnd();
	}
}

static void do_open(void)
{
	int i = pick(MAXVQ), fd;

	if (vq[i].fd >= 0)
		return;
	fd = open(KRCORE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	count(OP_OPEN, fd);
	if (fd >= 0) {
		memset(&vq[i], 0, sizeof(vq[i]));
		vq[i].fd = fd;
	}
}

static void unmap_rings(struct vqs *v)
{
	if (v->ring)
		munmap(v->ring, v->ring_size);
	if (v->rring)
		munmap(v->rring, v->rring_size);
	v->ring = NULL;
	v->rring = NULL;
}

static void do_close(void)
{
	int i = pick(MAXVQ);

	if (vq[i].fd < 0)
		return;
	if (pick(2))
		unmap_rings(&vq[i]);	/* else the mapping keeps the file */
	count(OP_CLOSE, close(vq[i].fd));
	vq[i].fd = -1;
	if (vq[i].ring || vq[i].rring) {
		/* Forget them: the VQ lives on until they are unmapped. */
		if (pick(2))
			unmap_rings(&vq[i]);
	}
}

static void do_qconnect(void)
{
	static const uint32_t ports[] = {
		0, 7000, 7001, 7002, 7003, 65535, 65536, 0xffffffff, 80,
	};
	struct krcore_qconnect qc;
	int i = pick(MAXVQ), ret;

	memset(&qc, 0, sizeof(qc));
	pick_gid(qc.gid);
	qc.port = ports[pick(sizeof(ports) / 4)];
	qc.timeout_ms = 1 + pick(300);
	if (!pick(20))
		qc.flags = any_u32();
	/* A ring in this process's memory: good, too small, not ours... */
	switch (pick(10)) {
	case 0:
	case 1:
	case 2:
		qc.ring_addr = (uintptr_t)(urings + pagesz * pick(URING_PAGES));
		break;
	case 3:
		qc.ring_addr = (uintptr_t)(buf + pagesz * pick(BUFSZ / pagesz));
		break;
	case 4:
		qc.ring_addr = (uintptr_t)(pick(2) ? ro : guard);
		break;
	case 5:
		qc.ring_addr = any_u64() & ~(uint64_t)(pagesz - 1);
		break;
	case 6:
		qc.ring_addr = any_u64();
		break;
	}
	qc.ring_len = pick(3) ? pagesz * (1 + pick(URING_PAGES)) : any_u32();
	if (!pick(20))
		qc.reserved = any_u32();
	ret = ioctl(vq[i].fd, KRCORE_IOC_QCONNECT, arg_ptr(&qc, sizeof(qc)));
	count(OP_QCONNECT, ret);
	if (vq[i].fd >= 0 && qc.ring_addr &&
	    (uint8_t *)(uintptr_t)qc.ring_addr >= urings &&
	    (uint8_t *)(uintptr_t)qc.ring_addr < urings + URING_PAGES * pagesz)
		vq[i].uring = (uint8_t *)(uintptr_t)qc.ring_addr;
	if (!ret) {
		__atomic_add_fetch(&st->connected, 1, __ATOMIC_RELAXED);
		vq[i].ring_bytes = qc.ring_size;
	}
}

static void do_reg(void)
{
	struct krcore_reg_mr r;
	int ret;

	memset(&r, 0, sizeof(r));
	switch (pick(8)) {
	case 0:
		r.addr = (uintptr_t)ro;
		r.length = pagesz;
		break;
	case 1:
		r.addr = any_u64();
		r.length = any_u64();
		break;
	case 2:
		r.addr = (uintptr_t)guard;
		r.length = 2 * pagesz;	/* runs into the unmapped page */
		break;
	default:
		r.addr = (uintptr_t)buf + pick(BUFSZ / 2);
		r.length = 1 + pick(BUFSZ / 2);
	}
	r.access = pick(8) ? pick(16) : any_u32();
	if (!pick(20))
		r.reserved = 1;
	ret = ioctl(rvq(), KRCORE_IOC_REG_MR, arg_ptr(&r, sizeof(r)));
	count(OP_REG, ret);
	if (!ret) {
		int k = nmr < MAXMR ? nmr++ : (int)pick(MAXMR);

		mr[k].lkey = r.lkey;
		mr[k].rkey = r.rkey;
		mr[k].addr = r.addr;
		mr[k].len = r.length;
	}
}

static void do_dereg(void)
{
	struct krcore_dereg_mr d = { 0 };

	d.lkey = nmr && pick(4) ? mr[pick(nmr)].lkey : any_u32();
	if (!pick(20))
		d.reserved = any_u32();
	count(OP_DEREG, ioctl(rvq(), KRCORE_IOC_DEREG_MR, arg_ptr(&d, sizeof(d))));
}

static void gen_wr(struct krcore_wr *w)
{
	int k, n;

	memset(w, 0, sizeof(*w));
	w->wr_id = rnd();
	w->opcode = pick(10) ? 1 + pick(7) : (uint8_t)rnd();
	w->flags = pick(4) ? pick(4) : (uint8_t)rnd();
	n = pick(10) ? 1 + pick(KRCORE_MAX_SGE) : pick(8);
	w->num_sge = (uint8_t)n;
	for (k = 0; k < KRCORE_MAX_SGE; k++) {
		struct mrs *m = nmr ? &mr[pick(nmr)] : NULL;

		if (m && pick(6)) {
			uint64_t len = 1 + pick(m->len < 65536 ? (uint32_t)m->len : 65536);

			w->sg_list[k].lkey = m->lkey;
			w->sg_list[k].addr = m->addr + pick((uint32_t)(m->len - len + 1));
			w->sg_list[k].length = (uint32_t)len;
		} else {
			w->sg_list[k].lkey = any_u32();
			w->sg_list[k].addr = any_u64();
			w->sg_list[k].length = any_u32();
		}
		if (w->opcode >= KRCORE_WR_ATOMIC_CAS && pick(2))
			w->sg_list[k].length = 8;
	}
	switch (pick(6)) {
	case 0:
	case 1:
	case 2:	/* the buffer served by the peer */
		w->remote_addr = peer_addr + (pick(4096) & ~7u);
		w->rkey = pick(8) ? peer_rkey : peer_rkey ^ (1u + pick(255));
		break;
	case 3:	/* this process's own registration (loopback) */
		if (nmr) {
			struct mrs *m = &mr[pick(nmr)];

			w->remote_addr = m->addr + (pick((uint32_t)m->len) & ~7u);
			w->rkey = m->rkey;
			break;
		}
		fallthrough;
	default:
		w->remote_addr = any_u64();
		w->rkey = any_u32();
	}
	w->imm_data = pick(2) ? pick(65536) : any_u32();
	w->compare_add = rnd();
	w->swap = rnd();
	if (!pick(30))
		w->reserved0 = 1;
	if (!pick(30))
		w->reserved1 = any_u32();
}

static void do_push(void)
{
	static struct krcore_wr *tail;	/* ends at the unmapped page */
	struct krcore_wr wrs[64];
	struct krcore_qpush q;
	uint32_t n = 1 + pick(pick(4) ? 8 : 64), i;
	int ret;

	for (i = 0; i < n; i++)
		gen_wr(&wrs[i]);
	memset(&q, 0, sizeof(q));
	q.count = pick(30) ? n : any_u32();
	switch (pick(12)) {
	case 0:
		q.wrs = 0;
		break;
	case 1:
		q.wrs = any_u64();
		break;
	case 2:
		/* The array crosses into an unmapped page. */
		tail = (struct krcore_wr *)(guard + pagesz) - (n > 1 ? n / 2 : 1);
		memcpy(tail, wrs, (n > 1 ? n / 2 : 1) * sizeof(*tail));
		q.wrs = (uintptr_t)tail;
		break;
	default:
		q.wrs = (uintptr_t)wrs;
	}
	ret = ioctl(rvq(), KRCORE_IOC_QPUSH, arg_ptr(&q, sizeof(q)));
	count(OP_PUSH, ret);
	if (ret > 0)
		__atomic_add_fetch(&st->posted, (unsigned long)ret, __ATOMIC_RELAXED);
	else if (ret < 0 && q.done && q.done != 0xffffffff)
		__atomic_add_fetch(&st->posted, q.done, __ATOMIC_RELAXED);
}

static void do_map(void)
{
	struct vqs *v = &vq[pick(MAXVQ)];
	int recv = pick(2), prot, flags;
	size_t len;
	void *m;

	if (v->fd < 0)
		return;
	len = recv ? v->rring_bytes : v->ring_bytes;
	if (!len || !pick(6))
		len = pagesz * (1 + pick(64));
	prot = pick(6) ? PROT_READ | PROT_WRITE : (int)(pick(8) & 7);
	flags = pick(6) ? MAP_SHARED : MAP_PRIVATE;
	m = mmap(NULL, len, prot, flags, v->fd,
		 (off_t)(pick(10) ? (uint32_t)recv : pick(4)) * pagesz);
	count(OP_MAP, m == MAP_FAILED ? -1 : 0);
	if (m == MAP_FAILED)
		return;
	if (!(prot & PROT_WRITE) || !(prot & PROT_READ) || flags != MAP_SHARED ||
	    (recv ? v->rring : v->ring)) {
		munmap(m, len);
		return;
	}
	if (recv) {
		v->rring = m;
		v->rring_size = len;
	} else {
		v->ring = m;
		v->ring_size = len;
	}
}

static void scribble(uint8_t *p, size_t len)
{
	size_t i, n = 1 + pick(64);

	for (i = 0; i < n; i++) {
		size_t at = pick(4) ? pick(256) : pick((uint32_t)len);

		if (pick(2))
			*(uint32_t *)(p + (at & ~3ul) % (len - 4)) = any_u32();
		else
			p[at % len] = (uint8_t)rnd();
	}
}

static void do_scribble(void)
{
	struct vqs *v = &vq[pick(MAXVQ)];

	if (v->ring)
		scribble(v->ring, v->ring_size);
	if (v->rring)
		scribble(v->rring, v->rring_size);
	if (v->uring)	/* within urings: at most its end */
		scribble(v->uring, (size_t)(urings + URING_PAGES * pagesz -
					    v->uring));
	/* The rings in our memory unmapped under the kernel, and new ones. */
	if (!pick(16) && mmap(urings, URING_PAGES * pagesz,
			      PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
	    MAP_FAILED)
		exit(2);
	count(OP_SCRIBBLE, 0);
}

static void do_pop(void)
{
	struct vqs *v = &vq[pick(MAXVQ)];
	struct krcore_ring *r = v->ring;
	struct krcore_recv_ring *rr = v->rring;
	uint32_t p;

	if (r) {
		p = __atomic_load_n(&r->producer, __ATOMIC_ACQUIRE);
		if (p - r->consumer <= 4096)	/* not a scribbled index */
			__atomic_add_fetch(&st->completions, p - r->consumer,
					   __ATOMIC_RELAXED);
		__atomic_store_n(&r->consumer, pick(8) ? p : (uint32_t)rnd(),
				 __ATOMIC_RELEASE);
	}
	if (rr) {
		p = __atomic_load_n(&rr->producer, __ATOMIC_ACQUIRE);
		if (p - rr->consumer <= 4096)
			__atomic_add_fetch(&st->messages, p - rr->consumer,
					   __ATOMIC_RELAXED);
		__atomic_store_n(&rr->consumer, p, __ATOMIC_RELEASE);
	}
	count(OP_POP, 0);
}

static void do_wait(void)
{
	struct krcore_qwait w = { .timeout_ms = pick(50) };

	if (!pick(20))
		w.reserved = any_u32();
	count(OP_WAIT, ioctl(rvq(), KRCORE_IOC_QWAIT, arg_ptr(&w, sizeof(w))));
}

/* Wait for a slot of the port a VQ sends to (ABI 8), any arguments. */
static void do_flow_wait(void)
{
	struct krcore_flow_wait w = { .timeout_ms = pick(50) };

	if (!pick(10))
		w.timeout_ms = any_u32() % 200;
	count(OP_FLOW_WAIT, ioctl(rvq(), KRCORE_IOC_FLOW_WAIT,
				  arg_ptr(&w, sizeof(w))));
}

/* The member list (ABI 9): any array, size, generation and wait. */
static void do_members(void)
{
	struct krcore_member m[4];
	struct krcore_members ms = {
		.max = pick(3) ? pick(6) : any_u32(),
		.since_gen = pick(2) ? 0 : any_u64(),
		.timeout_ms = pick(4) ? 0 : pick(60),
	};

	ms.entries = (uintptr_t)arg_ptr(m, sizeof(m));
	if (!pick(10))
		ms.flags = any_u32();
	if (!pick(10))
		ms.reserved = any_u32();
	if (!pick(20))
		ms.timeout_ms = any_u32();
	count(OP_MEMBERS, ioctl(rvq(), KRCORE_IOC_MEMBERS,
				arg_ptr(&ms, sizeof(ms))));
}

/* Remote memory (ABI 10): any node, length, rights, timeout, reserved. */
/* Regions this process allocated (the last few): do_lock() uses them. */
#define NKEYS	4
static struct krcore_lmr_alloc keys[NKEYS];

static void do_lmr_alloc(void)
{
	struct krcore_lmr_alloc a = {
		.length = pick(4) ? 1 + pick(1 << 20) : any_u64(),
		.access = pick(4) ? 1u << pick(5) | 1u << pick(5) : any_u32(),
		.timeout_ms = pick(3) ? 0 : pick(300),
	};
	int ret;

	pick_gid(a.gid);
	if (!pick(10))
		a.reserved = any_u32();
	if (!pick(10))
		a.addr = any_u64();	/* an out field: ignored */
	ret = ioctl(rvq(), KRCORE_IOC_LMR_ALLOC, arg_ptr(&a, sizeof(a)));
	count(OP_LMR_ALLOC, ret);
	if (ret == 0 && a.rkey)
		keys[pick(NKEYS)] = a;	/* for do_lock() */
}

/* Any handle: ones it holds (small numbers), others, with reserved. */
static void do_lmr_free(void)
{
	struct krcore_lmr_free f = {
		.handle = pick(4) ? pick(8) : any_u32(),
	};

	if (!pick(10))
		f.reserved = any_u32();
	count(OP_LMR_FREE, ioctl(rvq(), KRCORE_IOC_LMR_FREE,
				 arg_ptr(&f, sizeof(f))));
}

/* A memset at the owner: any handle, value, range, timeout. */
static void do_lmr_set(void)
{
	struct krcore_lmr_set ls = {
		.handle = pick(4) ? pick(8) : any_u32(),
		.value = pick(4) ? pick(256) : any_u32(),
		.offset = pick(2) ? pick(1 << 20) : any_u64(),
		.length = pick(2) ? 1 + pick(1 << 20) : any_u64(),
		.timeout_ms = pick(3) ? 0 : pick(300),
	};

	if (!pick(10))
		ls.reserved = any_u32();
	count(OP_LMR_SET, ioctl(rvq(), KRCORE_IOC_LMR_SET,
				arg_ptr(&ls, sizeof(ls))));
}

/* A copy at the owner: any two handles, offsets, length, timeout. */
static void do_lmr_copy(void)
{
	struct krcore_lmr_copy cp = {
		.dst_handle = pick(4) ? pick(8) : any_u32(),
		.src_handle = pick(4) ? pick(8) : any_u32(),
		.dst_offset = pick(2) ? pick(1 << 20) : any_u64(),
		.src_offset = pick(2) ? pick(1 << 20) : any_u64(),
		.length = pick(2) ? 1 + pick(1 << 20) : any_u64(),
		.timeout_ms = pick(3) ? 0 : pick(300),
	};

	if (!pick(10))
		cp.reserved = any_u32();
	count(OP_LMR_COPY, ioctl(rvq(), KRCORE_IOC_LMR_COPY,
				 arg_ptr(&cp, sizeof(cp))));
}

/*
 * A lock: any node, word (aligned or not, of any region id), key, timeout;
 * or a word of a region this process allocated, with its key or not.
 */
static void do_lock(void)
{
	const struct krcore_lmr_alloc *k = &keys[pick(NKEYS)];
	struct krcore_lock lk = {
		.addr = pick(2) ? (uint64_t)(1 + pick(8)) << 40 | pick(1 << 12) :
			any_u64(),
		.rkey = any_u32(),
		.timeout_ms = pick(3) ? 0 : pick(300),
	};

	pick_gid(lk.gid);
	if (k->rkey && pick(2)) {
		memcpy(lk.gid, k->gid, 16);
		lk.addr = k->addr + (pick(4) ? 8 * pick(k->length / 8 + 2) :
				     pick(k->length + 16));
		lk.rkey = pick(8) ? k->rkey : any_u32();
	}
	if (!pick(10))
		lk.reserved = any_u32();
	if (!pick(10))
		lk.grant = any_u64();	/* an out field: ignored */
	count(OP_LOCK, ioctl(rvq(), KRCORE_IOC_LOCK, arg_ptr(&lk, sizeof(lk))));
}

static void do_unlock(void)
{
	struct krcore_unlock u = {
		.handle = pick(4) ? pick(8) : any_u32(),
		.timeout_ms = pick(3) ? 0 : pick(300),
	};

	if (!pick(10))
		u.reserved = any_u64();
	count(OP_UNLOCK, ioctl(rvq(), KRCORE_IOC_UNLOCK,
			       arg_ptr(&u, sizeof(u))));
}

/* A name: one of a few valid ones, or any 24 bytes. */
static void pick_name(char name[KRCORE_NAME_LEN])
{
	static const char * const names[] = { "a", "fz-1", "fz-2",
					      "zzzzzzzzzzzzzzzzzzzzzzz" };
	unsigned int i;

	memset(name, 0, KRCORE_NAME_LEN);
	if (pick(4)) {
		strcpy(name, names[pick(4)]);
		return;
	}
	for (i = 0; i < KRCORE_NAME_LEN; i++)
		name[i] = (char)any_u32();
}

/*
 * A publish or unpublish: of a region this process allocated (or any
 * handle), any name, any rights, any timeout.
 */
static void do_publish(void)
{
	const struct krcore_lmr_alloc *k = &keys[pick(NKEYS)];
	struct krcore_lmr_publish p = {
		.handle = k->handle && pick(2) ? k->handle :
			  pick(4) ? pick(8) : any_u32(),
		.access = pick(2) ? 2u << pick(3) : any_u32(),
		.timeout_ms = pick(3) ? 0 : pick(300),
	};
	int unpublish = pick(2);

	pick_name(p.name);
	if (unpublish && pick(4))
		p.access = 0;
	if (!pick(10))
		p.reserved = any_u64();
	if (!pick(10))
		p.rkey = any_u32();	/* an out field: ignored */
	count(OP_PUBLISH, ioctl(rvq(), unpublish ? KRCORE_IOC_LMR_UNPUBLISH :
				KRCORE_IOC_LMR_PUBLISH, arg_ptr(&p, sizeof(p))));
}

/* A lookup of any name over any VQ, connected or not. */
static void do_name_lookup(void)
{
	struct krcore_lmr_lookup lk = { 0 };

	pick_name(lk.name);
	if (!pick(10))
		lk.reserved = any_u64();
	if (!pick(10))
		lk.handle = any_u32();	/* an out field: ignored */
	count(OP_NAME_LOOKUP, ioctl(rvq(), KRCORE_IOC_LMR_LOOKUP,
				    arg_ptr(&lk, sizeof(lk))));
}

/*
 * Any priority class on any VQ, connected or not, with requests in flight
 * or not: mostly the two classes (so high VQs post, and the others yield
 * to them), sometimes any value or a reserved word.
 */
static void do_qprio(void)
{
	struct krcore_qprio qp = { 0 };

	qp.prio = pick(8) ? (uint32_t)pick(2) : any_u32();
	if (!pick(10))
		qp.reserved = any_u32();
	count(OP_QPRIO, ioctl(rvq(), KRCORE_IOC_QPRIO,
			      arg_ptr(&qp, sizeof(qp))));
}

/* "I consumed": on any VQ, after any consumer index (scribble sets it). */
static void do_consumed(void)
{
	count(OP_CONSUMED, ioctl(rvq(), KRCORE_IOC_QCONSUMED,
				 pick(4) ? NULL : arg_ptr(NULL, 0)));
}

static void do_bind(void)
{
	struct krcore_qbind b = { 0 };
	int i = pick(MAXVQ), ret;

	b.port = pick(3) ? 7000 + pick(4) : any_u32();
	ret = ioctl(vq[i].fd, KRCORE_IOC_QBIND, arg_ptr(&b, sizeof(b)));
	count(OP_BIND, ret);
	if (!ret)
		vq[i].rring_bytes = b.ring_size;
}

static void do_lookup(void)
{
	struct krcore_lookup lk;

	memset(&lk, 0, sizeof(lk));
	pick_gid(lk.gid);
	lk.flags = pick(4) ? pick(2) : any_u32();
	count(OP_LOOKUP, ioctl(rvq(), KRCORE_IOC_LOOKUP, arg_ptr(&lk, sizeof(lk))));
}

static void do_probe(void)
{
	struct krcore_probe p;

	count(OP_PROBE, ioctl(rvq(), KRCORE_IOC_PROBE, arg_ptr(&p, sizeof(p))));
}

static void do_info(void)
{
	union {
		struct krcore_version v;
		struct krcore_card c;
		struct krcore_port_info p;
		struct krcore_node_info n;
		struct krcore_peer_info pi;
		struct krcore_peer_stats ps;
	} u;
	static const unsigned long cmds[] = {
		KRCORE_IOC_VERSION, KRCORE_IOC_QUERY_CARD, KRCORE_IOC_QUERY_PORT,
		KRCORE_IOC_NODE_INFO, KRCORE_IOC_PEER_INFO,
		KRCORE_IOC_PEER_STATS,
	};

	memset(&u, 0, sizeof(u));
	u.pi.index = pick(3) ? pick(4) : any_u32();
	if (!pick(4))	/* PEER_STATS: reserved must be 0 */
		u.ps.reserved = any_u32();
	count(OP_INFO, ioctl(rvq(), cmds[pick(6)], arg_ptr(&u, sizeof(u))));
}

static void do_random_cmd(void)
{
	uint8_t junk[512];
	unsigned long cmd;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rnd();
	switch (pick(3)) {
	case 0:	/* a krcore number with the wrong size or direction */
		cmd = _IOC(pick(4), KRCORE_IOC_MAGIC, pick(16), pick(512));
		break;
	case 1:
		cmd = _IOC(pick(4), KRCORE_IOC_MAGIC, pick(256), pick(0x3fff));
		break;
	default:
		cmd = (unsigned long)rnd();
	}
	count(OP_RANDOM, ioctl(rvq(), cmd, arg_ptr(junk, sizeof(junk))));
}

static void do_fork(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* The child uses the inherited VQs: refused, never harmful. */
		do_push();
		do_reg();
		do_wait();
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	count(OP_FORK, pid < 0 ? -1 : 0);
}

static void do_munmap(void)
{
	struct vqs *v = &vq[pick(MAXVQ)];

	unmap_rings(v);
	count(OP_MUNMAP, 0);
}

static void worker(uint64_t seed)
{
	rng = seed ? seed : 1;
	for (int i = 0; i < MAXVQ; i++)
		vq[i].fd = -1;
	for (;;) {
		switch (pick(OP_NR + 6)) {
		case OP_OPEN:
			do_open();
			break;
		case OP_CLOSE:
			if (!pick(3))
				do_close();
			break;
		case OP_QCONNECT:
			do_qconnect();
			break;
		case OP_REG:
			do_reg();
			break;
		case OP_DEREG:
			if (!pick(2))
				do_dereg();
			break;
		case OP_MAP:
			do_map();
			break;
		case OP_SCRIBBLE:
			do_scribble();
			break;
		case OP_POP:
			do_pop();
			break;
		case OP_WAIT:
			do_wait();
			break;
		case OP_BIND:
			do_bind();
			break;
		case OP_LOOKUP:
			do_lookup();
			break;
		case OP_PROBE:
			if (!pick(4))
				do_probe();
			break;
		case OP_INFO:
			do_info();
			break;
		case OP_RANDOM:
			do_random_cmd();
			break;
		case OP_FORK:
			if (!pick(8))
				do_fork();
			break;
		case OP_MUNMAP:
			if (!pick(4))
				do_munmap();
			break;
		case OP_FLOW_WAIT:
			do_flow_wait();
			break;
		case OP_CONSUMED:
			do_consumed();
			break;
		case OP_MEMBERS:
			do_members();
			break;
		case OP_LMR_ALLOC:
			if (!pick(2))
				do_lmr_alloc();
			break;
		case OP_LMR_FREE:
			do_lmr_free();
			break;
		case OP_LMR_SET:
			do_lmr_set();
			break;
		case OP_LMR_COPY:
			do_lmr_copy();
			break;
		case OP_LOCK:
			if (!pick(2))
				do_lock();
			break;
		case OP_UNLOCK:
			do_unlock();
			break;
		case OP_PUBLISH:
			do_publish();
			break;
		case OP_NAME_LOOKUP:
			do_name_lookup();
			break;
		case OP_QPRIO:
			do_qprio();
			break;
		default:
			do_push();
			do_pop();
			break;
		}
	}
}

static void setup(const char *self, const char *peer, const char *info)
{
	unsigned long long a;
	unsigned int k;
	FILE *f;

	pagesz = sysconf(_SC_PAGESIZE);
	buf = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, pagesz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	guard = mmap(NULL, 2 * pagesz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || ro == MAP_FAILED || guard == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	munmap(guard + pagesz, pagesz);
	urings = mmap(NULL, URING_PAGES * pagesz, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (urings == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	if (krc_gid_parse(self, self_gid) || krc_gid_parse(peer, peer_gid)) {
		fprintf(stderr, "ioctl_fuzz: bad address\n");
		exit(2);
	}
	f = fopen(info, "r");
	if (!f || fscanf(f, "%llx %x", &a, &k) != 2) {
		fprintf(stderr, "ioctl_fuzz: cannot read %s\n", info);
		exit(2);
	}
	fclose(f);
	peer_addr = a;
	peer_rkey = k;
}

static int reap_all(pid_t *pids, int n)
{
	int i, stuck = 0;
	uint64_t end;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		end = now_ms() + 60000;
		while (waitpid(pids[i], NULL, WNOHANG) == 0) {
			if (now_ms() > end) {
				fprintf(stderr, "ioctl_fuzz: FAIL: worker %d stuck\n",
					pids[i]);
				stuck++;
				break;
			}
			usleep(10000);
		}
	}
	return stuck;
}

static void print_stats(void)
{
	int op, e;

	printf("ioctl_fuzz: %lu requests posted, %lu completions, %lu messages, %lu connects\n",
	       st->posted, st->completions, st->messages, st->connected);
	for (op = 0; op < OP_NR; op++) {
		printf("ioctl_fuzz: %-10s %8lu calls %8lu ok", op_names[op],
		       st->calls[op], st->ok[op]);
		for (e = 0; e < NERR; e++)
			if (st->err[op][e])
				printf(" %s:%lu", e ? strerrorname_np(e) : "?",
				       st->err[op][e]);
		printf("\n");
	}
}

static int fuzz_run(int secs, uint64_t seed, int workers)
{
	pid_t pids[32];
	uint64_t end = now_ms() + (uint64_t)secs * 1000;
	unsigned long spawned = 0;
	int i, stuck;

	if (workers > 32)
		workers = 32;
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return 2;
	printf("ioctl_fuzz: %d workers, %d s, seed %llu\n", workers, secs,
	       (unsigned long long)seed);
	fflush(stdout);
	for (i = 0; i < workers; i++)
		pids[i] = -1;
	rng = seed ^ 0x9e3779b97f4a7c15ull;
	while (now_ms() < end) {
		for (i = 0; i < workers; i++) {
			if (pids[i] > 0)
				continue;
			pids[i] = fork();
			if (pids[i] == 0)
				worker(seed + spawned * 7919);
			spawned++;
		}
		usleep(200000 + pick(1500000));
		/* Kill one at a random moment: whatever it had in flight. */
		i = pick(workers);
		kill(pids[i], SIGKILL);
		if (waitpid(pids[i], NULL, 0) == pids[i])
			pids[i] = -1;
	}
	stuck = reap_all(pids, workers);
	printf("ioctl_fuzz: %lu workers run\n", spawned);
	print_stats();
	return stuck ? 1 : 0;
}

/* The well-behaved process: WRITE, READ back, compare, for SECONDS. */
static int well_behaved(const char *peer, const char *info, int secs)
{
	struct krcore_qconnect qc;
	struct krc_vq *v;
	struct krc_mr m;
	unsigned long n = 0;
	uint64_t end = now_ms() + (uint64_t)secs * 1000, base;
	uint8_t *out, *in;
	uint32_t len, i;
	int ret;

	setup(peer, peer, info);
	if (krc_vq_open(&v) || krc_qconnect(v, peer, 0, &qc)) {
		fprintf(stderr, "ioctl_fuzz good: connect: %s\n", krc_errmsg());
		return 1;
	}
	if (krc_reg_mr(v, buf, BUFSZ, KRCORE_ACCESS_LOCAL_WRITE, &m)) {
		fprintf(stderr, "ioctl_fuzz good: reg: %s\n", krc_errmsg());
		return 1;
	}
	/* Its own slice of the served buffer: the second half, never touched
	 * by the fuzzers (they stay in its first 4 KiB).
	 */
	base = peer_addr + (2u << 20);
	out = buf;
	in = buf + BUFSZ / 2;
	rng = (uint64_t)getpid() * 2654435761u + 1;
	while (now_ms() < end) {
		len = 8 + pick(64 * 1024 - 8);
		for (i = 0; i < len; i++)
			out[i] = (uint8_t)(n * 131 + i * 7);
		ret = krc_write_sync(v, out, m.lkey, len, base, peer_rkey, 30000);
		if (!ret)
			ret = krc_read_sync(v, in, m.lkey, len, base, peer_rkey,
					    30000);
		if (ret == -EAGAIN) {
			usleep(1000);
			continue;
		}
		if (ret) {
			fprintf(stderr, "ioctl_fuzz good: FAIL: request %lu: %s\n",
				n, krc_errmsg());
			return 1;
		}
		if (memcmp(out, in, len)) {
			fprintf(stderr, "ioctl_fuzz good: FAIL: data of request %lu differ\n",
				n);
			return 1;
		}
		n++;
	}
	printf("ioctl_fuzz good: %lu WRITE+READ pairs verified\n", n);
	krc_vq_close(v);
	return n ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 7 && !strcmp(argv[1], "run")) {
		setup(argv[4], argv[5], argv[6]);
		return fuzz_run(atoi(argv[2]), strtoull(argv[3], NULL, 0),
			   argc > 7 ? atoi(argv[7]) : 4);
	}
	if (argc == 5 && !strcmp(argv[1], "good"))
		return well_behaved(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: ioctl_fuzz run SECONDS SEED SELF PEER INFO [WORKERS]\n"
		"       ioctl_fuzz good PEER INFO SECONDS\n");
	return 2;
}
