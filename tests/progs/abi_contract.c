// SPDX-License-Identifier: BSD-2-Clause
/*
 * abi_contract - every statement of include/uapi/krcore.h checked against
 * the running module (issue 8 part 3), run inside the cluster nodes by
 * tests/cluster/t_abi_contract.sh. Raw ioctl()s and mmap()s on the VQ's
 * file descriptor; libkrcore only to parse addresses. One line per
 * statement: "ok: <statement>" or "FAIL: <statement> (what was seen)";
 * exit status 1 if any failed.
 *
 *   abi_contract static              sizes, command numbers (no module)
 *   abi_contract nometa ADDR         the MetaServer unreachable, no card
 *                                    cached: qconnect EHOSTUNREACH
 *   abi_contract busy PEER           the peer refuses (half-open cap):
 *                                    qconnect EBUSY
 *   abi_contract main PEER INFO SELF everything else, against the buffer
 *                                    `dp_serve` published in INFO;
 *                                    with ABI_SLOW=1 in the environment
 *                                    also qconnect's 60 s timeout cap and
 *                                    EINTR (a minute longer)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "libkrcore.h"

static int failures;

/* The header statement @what holds if @ok; else say what was seen. */
__attribute__((format(printf, 3, 4)))
static void check(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("abi_contract: ok: %s\n", what);
	} else {
		printf("abi_contract: FAIL: %s (", what);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf(")\n");
		failures++;
	}
	fflush(stdout);
}

static void die(const char *what)
{
	fprintf(stderr, "abi_contract: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_param(const char *name, unsigned long v)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "/sys/module/krcore/parameters/%s", name);
	f = fopen(p, "w");
	if (!f || fprintf(f, "%lu\n", v) < 0 || fclose(f))
		die(name);
}

static unsigned long read_param(const char *name)
{
	unsigned long v;
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "/sys/module/krcore/parameters/%s", name);
	f = fopen(p, "r");
	if (!f || fscanf(f, "%lu", &v) != 1)
		die(name);
	fclose(f);
	return v;
}

static int vq_open(void)
{
	int fd = open(KRCORE_DEVICE_PATH, O_RDWR);

	if (fd < 0)
		die("open " KRCORE_DEVICE_PATH);
	return fd;
}

static void gid_of(const char *addr, uint8_t gid[16])
{
	if (krc_gid_parse(addr, gid)) {
		fprintf(stderr, "abi_contract: bad address %s\n", addr);
		exit(2);
	}
}

/* QCONNECT with @flags: 0 or the errno. */
static int qconnect_flags(int fd, const char *addr, uint32_t port,
			  uint32_t tmo, uint32_t flags,
			  struct krcore_qconnect *qc)
{
	memset(qc, 0, sizeof(*qc));
	gid_of(addr, qc->gid);
	qc->port = port;
	qc->flags = flags;
	qc->timeout_ms = tmo;
	return ioctl(fd, KRCORE_IOC_QCONNECT, qc) ? errno : 0;
}

/*
 * QCONNECT on RC (KRCORE_QCONNECT_F_RC): the statements about handshakes,
 * pooled connections and their errors hold whatever dg_policy the module
 * runs with. The datagram path's own are in check_qconnect_datagram().
 */
static int qconnect(int fd, const char *addr, uint32_t port, uint32_t tmo,
		    struct krcore_qconnect *qc)
{
	return qconnect_flags(fd, addr, port, tmo, KRCORE_QCONNECT_F_RC, qc);
}

/* An RC qconnect whose handshake answers are all lost (700 ms timeout). */
static int qconnect_unanswered(int fd, const char *peer,
			       struct krcore_qconnect *qc)
{
	int e;

	write_param("fault_ctrl_drop_type", 2);
	write_param("fault_ctrl_drop_rx", 1000);
	e = qconnect(fd, peer, 0, 700, qc);
	write_param("fault_ctrl_drop_rx", 0);
	write_param("fault_ctrl_drop_type", 0);
	return e;
}

static int vq_connected(const char *addr, uint32_t port,
			struct krcore_qconnect *qc)
{
	struct krcore_qconnect tmp;
	int fd = vq_open();

	if (qconnect(fd, addr, port, 0, qc ? qc : &tmp)) {
		fprintf(stderr, "abi_contract: qconnect %s: %s\n", addr,
			strerror(errno));
		exit(2);
	}
	return fd;
}

/* A VQ's completion ring, read by hand. */
struct ring {
	struct krcore_ring *hdr;
	struct krcore_cqe *cqes;
	uint32_t cons, mask, size;
};

static void ring_map(int fd, uint32_t size, struct ring *r)
{
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       KRCORE_MMAP_RING);

	if (m == MAP_FAILED)
		die("mmap ring");
	r->hdr = m;
	r->cqes = (struct krcore_cqe *)((char *)m + r->hdr->entry_offset);
	r->mask = r->hdr->entries - 1;
	r->cons = 0;
	r->size = size;
}

/* Up to @max completions within @ms. */
static int ring_pop(int fd, struct ring *r, struct krcore_cqe *c, int max,
		    int ms)
{
	struct krcore_qwait w;
	uint64_t end = now_ms() + ms;
	uint32_t prod;
	int n = 0;

	for (;;) {
		prod = __atomic_load_n(&r->hdr->producer, __ATOMIC_ACQUIRE);
		while (r->cons != prod && n < max)
			c[n++] = r->cqes[r->cons++ & r->mask];
		__atomic_store_n(&r->hdr->consumer, r->cons, __ATOMIC_RELEASE);
		if (n >= max || now_ms() >= end)
			return n;
		memset(&w, 0, sizeof(w));
		w.timeout_ms = 100;
		ioctl(fd, KRCORE_IOC_QWAIT, &w);
	}
}

static void *alloc_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static int reg_mr(int fd, void *addr, uint64_t len, uint32_t access,
		  struct krcore_reg_mr *mr)
{
	memset(mr, 0, sizeof(*mr));
	mr->addr = (uintptr_t)addr;
	mr->length = len;
	mr->access = access;
	return ioctl(fd, KRCORE_IOC_REG_MR, mr) ? errno : 0;
}

static void wr_rw(struct krcore_wr *w, uint8_t op, void *buf, uint32_t len,
		  uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = id;
	w->opcode = op;
	w->flags = KRCORE_WR_SIGNALED;
	w->num_sge = 1;
	w->sg_list[0].addr = (uintptr_t)buf;
	w->sg_list[0].length = len;
	w->sg_list[0].lkey = lkey;
	w->remote_addr = raddr;
	w->rkey = rkey;
}

#define SENTINEL	0xdead5eedu

/* QPUSH with sentinels in the fields the kernel writes back. */
static int qpush(int fd, const struct krcore_wr *wrs, uint32_t n,
		 struct krcore_qpush *res)
{
	memset(res, 0, sizeof(*res));
	res->wrs = (uintptr_t)wrs;
	res->count = n;
	res->done = SENTINEL;
	res->error = SENTINEL;
	res->reason = SENTINEL;
	return ioctl(fd, KRCORE_IOC_QPUSH, res);
}

/* The request fails alone with @err/@reason, done = 0, written back. */
static void expect_refused(int fd, const struct krcore_wr *w, int err,
			   uint32_t reason, const char *what)
{
	struct krcore_qpush res;
	int ret = qpush(fd, w, 1, &res);
	int e = errno;

	check(ret == -1 && e == err && res.done == 0 &&
	      res.error == (uint32_t)err && res.reason == reason, what,
	      "ret %d errno %d done %#x error %#x reason %#x", ret,
	      ret ? e : 0, res.done, res.error, res.reason);
}

/* ---- static: sizes and command numbers ---- */

static void ioc(unsigned long cmd, unsigned int nr, size_t size,
		const char *what)
{
	check(_IOC_TYPE(cmd) == KRCORE_IOC_MAGIC && _IOC_NR(cmd) == nr &&
	      _IOC_DIR(cmd) == (_IOC_READ | _IOC_WRITE) &&
	      _IOC_SIZE(cmd) == size, what,
	      "type %#x nr %#x dir %u size %u", (unsigned int)_IOC_TYPE(cmd),
	      (unsigned int)_IOC_NR(cmd), (unsigned int)_IOC_DIR(cmd),
	      (unsigned int)_IOC_SIZE(cmd));
}

#define IOC(cmd, nr, type) \
	ioc(cmd, nr, sizeof(struct type), \
	    #cmd ": _IOWR(0xC7, " #nr ", struct " #type ")")

#define SIZE(type, n) \
	check(sizeof(struct type) == (n), \
	      "struct " #type " keeps its layout: " #n " bytes", \
	      "%zu bytes", sizeof(struct type))

static void do_static(void)
{
	check(KRCORE_ABI_VERSION == 14,
	      "this contract test is of ABI version 14", "%d",
	      KRCORE_ABI_VERSION);
	check(sizeof(struct krcore_card) == KRCORE_CARD_SIZE &&
	      KRCORE_CARD_SIZE == 64, "the node address card: 64 bytes",
	      "%zu", sizeof(struct krcore_card));
	IOC(KRCORE_IOC_VERSION, 0x00, krcore_version);
	IOC(KRCORE_IOC_QUERY_CARD, 0x01, krcore_card);
	IOC(KRCORE_IOC_QUERY_PORT, 0x02, krcore_port_info);
	IOC(KRCORE_IOC_NODE_INFO, 0x03, krcore_node_info);
	IOC(KRCORE_IOC_PEER_INFO, 0x04, krcore_peer_info);
	IOC(KRCORE_IOC_LOOKUP, 0x05, krcore_lookup);
	IOC(KRCORE_IOC_QCONNECT, 0x06, krcore_qconnect);
	IOC(KRCORE_IOC_PROBE, 0x07, krcore_probe);
	IOC(KRCORE_IOC_REG_MR, 0x08, krcore_reg_mr);
	IOC(KRCORE_IOC_DEREG_MR, 0x09, krcore_dereg_mr);
	IOC(KRCORE_IOC_QPUSH, 0x0a, krcore_qpush);
	IOC(KRCORE_IOC_QWAIT, 0x0b, krcore_qwait);
	IOC(KRCORE_IOC_QBIND, 0x0c, krcore_qbind);
	IOC(KRCORE_IOC_PEER_STATS, 0x0d, krcore_peer_stats);
	check(_IO(0xC7, 0x0e) == KRCORE_IOC_QCONSUMED,
	      "KRCORE_IOC_QCONSUMED: _IO(0xC7, 0x0e)", "%#lx",
	      (unsigned long)KRCORE_IOC_QCONSUMED);
	IOC(KRCORE_IOC_FLOW_WAIT, 0x0f, krcore_flow_wait);
	SIZE(krcore_flow_wait, 8);
	IOC(KRCORE_IOC_MEMBERS, 0x10, krcore_members);
	SIZE(krcore_members, 48);
	SIZE(krcore_member, 32);
	IOC(KRCORE_IOC_LMR_ALLOC, 0x11, krcore_lmr_alloc);
	SIZE(krcore_lmr_alloc, 64);
	IOC(KRCORE_IOC_LMR_FREE, 0x12, krcore_lmr_free);
	SIZE(krcore_lmr_free, 8);
	IOC(KRCORE_IOC_LMR_SET, 0x13, krcore_lmr_set);
	SIZE(krcore_lmr_set, 32);
	IOC(KRCORE_IOC_LMR_COPY, 0x14, krcore_lmr_copy);
	SIZE(krcore_lmr_copy, 40);
	IOC(KRCORE_IOC_LOCK, 0x15, krcore_lock);
	SIZE(krcore_lock, 48);
	IOC(KRCORE_IOC_UNLOCK, 0x16, krcore_unlock);
	SIZE(krcore_unlock, 16);
	IOC(KRCORE_IOC_LMR_PUBLISH, 0x17, krcore_lmr_publish);
	IOC(KRCORE_IOC_LMR_UNPUBLISH, 0x18, krcore_lmr_publish);
	SIZE(krcore_lmr_publish, 48);
	IOC(KRCORE_IOC_LMR_LOOKUP, 0x19, krcore_lmr_lookup);
	SIZE(krcore_lmr_lookup, 88);
	IOC(KRCORE_IOC_QPRIO, 0x1a, krcore_qprio);
	SIZE(krcore_qprio, 8);
	check(KRCORE_PRIO_NORMAL == 0 && KRCORE_PRIO_HIGH == 1,
	      "priority classes: NORMAL 0, HIGH 1", "%d %d",
	      KRCORE_PRIO_NORMAL, KRCORE_PRIO_HIGH);
	check(KRCORE_NAME_LEN == 24, "a name: 24 bytes with its NUL", "%d",
	      KRCORE_NAME_LEN);
	check(KRCORE_MEMBERS_POLL_MS == 20 &&
	      KRCORE_MEMBERS_MAX_WAIT_MS == 60000,
	      "MEMBERS: polls every 20 ms, waits 60 s at most", "%d %d",
	      KRCORE_MEMBERS_POLL_MS, KRCORE_MEMBERS_MAX_WAIT_MS);
	SIZE(krcore_version, 40);
	SIZE(krcore_port_info, 136);
	SIZE(krcore_qconnect, 144);
	SIZE(krcore_probe, 72);
	SIZE(krcore_lookup, 104);
	SIZE(krcore_node_info, 120);
	SIZE(krcore_peer_info, 288);
	SIZE(krcore_peer_stats, 152);
	SIZE(krcore_reg_mr, 32);
	SIZE(krcore_dereg_mr, 8);
	SIZE(krcore_qpush, 24);
	SIZE(krcore_qwait, 16);
	SIZE(krcore_qbind, 8);
	SIZE(krcore_sge, 16);
	SIZE(krcore_wr, 112);
	SIZE(krcore_cqe, 32);
	SIZE(krcore_ring, 184);
	SIZE(krcore_msg, 32);
	SIZE(krcore_recv_ring, 184);
	check(KRCORE_MAX_SGE == 4 && KRCORE_MAX_MSG == 1u << 30 &&
	      KRCORE_MAX_SEND == 4080,
	      "limits: 4 SGEs, 1 GiB READ/WRITE, 4080 B SEND", "%d %u %d",
	      KRCORE_MAX_SGE, KRCORE_MAX_MSG, KRCORE_MAX_SEND);
}

/* ---- nometa / busy: qconnect errnos that need the cluster's help ---- */

static void do_nometa(const char *addr)
{
	struct krcore_node_info ni = {};
	struct krcore_qconnect qc;
	int fd = vq_open(), e;

	check(!ioctl(fd, KRCORE_IOC_NODE_INFO, &ni) &&
	      ni.meta_state != KRCORE_META_REGISTERED &&
	      ni.meta_state != KRCORE_META_NONE,
	      "NODE_INFO: meta_state CONNECTING or DOWN while the MetaServer is away",
	      "meta_state %u", ni.meta_state);
	e = qconnect(fd, addr, 0, 2000, &qc);
	check(e == EHOSTUNREACH,
	      "qconnect: EHOSTUNREACH (no card cached and MetaServer unreachable)",
	      "%s", strerror(e));
	{
		struct krcore_members ms = {};
		int r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);

		e = errno;
		check(r == -1 && e == EHOSTUNREACH,
		      "MEMBERS: EHOSTUNREACH while the MetaServer is away",
		      "%d %s", r, strerror(e));
	}
	close(fd);
}

static void do_busy(const char *peer)
{
	struct krcore_qconnect qc;
	int fd = vq_open(), e;

	e = qconnect(fd, peer, 0, 3000, &qc);
	check(e == EBUSY,
	      "qconnect: EBUSY (the peer refused: too many half-open connections)",
	      "%s", strerror(e));
	close(fd);
}

/* ---- main ---- */

static void check_version(int fd)
{
	struct krcore_version v;
	char sys[64] = "";
	FILE *f;

	memset(&v, 0xff, sizeof(v));
	check(!ioctl(fd, KRCORE_IOC_VERSION, &v) &&
	      v.abi_version == KRCORE_ABI_VERSION,
	      "VERSION: abi_version is the module's KRCORE_ABI_VERSION",
	      "abi %u", v.abi_version);
	check(v.reserved == 0, "VERSION: reserved is 0", "%u", v.reserved);
	check(memchr(v.module_version, 0, sizeof(v.module_version)) &&
	      v.module_version[0],
	      "VERSION: module_version NUL-terminated", "not terminated");
	f = fopen("/sys/module/krcore/version", "r");
	if (f) {
		if (!fgets(sys, sizeof(sys), f))
			sys[0] = 0;
		sys[strcspn(sys, "\n")] = 0;
		fclose(f);
		check(!strcmp(sys, v.module_version),
		      "VERSION: module_version is the module's version",
		      "'%s' vs '%s'", v.module_version, sys);
	}
}

static void check_numbers(int fd)
{
	char big[512];

	memset(big, 0, sizeof(big));
	check(ioctl(fd, _IOWR(KRCORE_IOC_MAGIC, 0x0d, struct krcore_qwait),
		    big) == -1 && errno == ENOTTY,
	      "an unknown command number: ENOTTY", "%s", strerror(errno));
	check(ioctl(fd, _IOWR(0xC6, 0x00, struct krcore_version), big) == -1 &&
	      errno == ENOTTY, "another ioctl magic: ENOTTY", "%s",
	      strerror(errno));
	check(ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, KRCORE_IOC_MAGIC, 0x00,
			     sizeof(struct krcore_version) - 8), big) == -1 &&
	      errno == ENOTTY,
	      "VERSION with a smaller structure size in the number: ENOTTY",
	      "%s", strerror(errno));
	check(ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, KRCORE_IOC_MAGIC, 0x0a,
			     sizeof(struct krcore_qpush) + 8), big) == -1 &&
	      errno == ENOTTY,
	      "QPUSH with a larger structure size in the number: ENOTTY",
	      "%s", strerror(errno));
	check(ioctl(fd, _IOR(KRCORE_IOC_MAGIC, 0x00, struct krcore_version),
		    big) == -1 && errno == ENOTTY,
	      "VERSION with another direction (_IOR): ENOTTY", "%s",
	      strerror(errno));
}

/*
 * PEER_STATS: the same index as PEER_INFO (@npeers of them), the same
 * peer's gid, counters that only grow, ENOENT past the end, EINVAL for
 * reserved fields not 0.
 */
static void check_peer_stats(int fd, unsigned int npeers)
{
	struct krcore_peer_stats st, st2;
	struct krcore_peer_info pe;
	unsigned int i, same = 0, zero = 1;
	int r, e;

	for (i = 0; i < npeers; i++) {
		memset(&pe, 0, sizeof(pe));
		memset(&st, 0xa5, sizeof(st));
		pe.index = i;
		st.index = i;
		st.reserved = 0;
		if (ioctl(fd, KRCORE_IOC_PEER_INFO, &pe) ||
		    ioctl(fd, KRCORE_IOC_PEER_STATS, &st))
			break;
		same += !memcmp(pe.card.gid, st.gid, 16) && st.index == i;
		for (unsigned int k = 0; k < 5; k++)
			zero &= st.reserved2[k] == 0;
		zero &= st.reserved == 0;
	}
	check(i == npeers && same == npeers,
	      "PEER_STATS: index i names PEER_INFO's peer i (its gid)",
	      "%u of %u", same, npeers);
	check(zero, "PEER_STATS: reserved fields out are 0", "not 0");
	memset(&st, 0, sizeof(st));
	st.index = npeers;
	r = ioctl(fd, KRCORE_IOC_PEER_STATS, &st);
	e = errno;
	check(r == -1 && e == ENOENT, "PEER_STATS: ENOENT past the last peer",
	      "%d %s", r, strerror(e));
	memset(&st, 0, sizeof(st));
	st.reserved = 1;
	r = ioctl(fd, KRCORE_IOC_PEER_STATS, &st);
	e = errno;
	check(r == -1 && e == EINVAL, "PEER_STATS: reserved not 0: EINVAL",
	      "%d %s", r, strerror(e));
	if (!npeers)
		return;
	memset(&st, 0, sizeof(st));
	memset(&st2, 0, sizeof(st2));
	r = ioctl(fd, KRCORE_IOC_PEER_STATS, &st);
	r |= ioctl(fd, KRCORE_IOC_PEER_STATS, &st2);
	check(!r && st2.wr_posted >= st.wr_posted &&
	      st2.wr_bytes >= st.wr_bytes && st2.recoveries >= st.recoveries,
	      "PEER_STATS: counters only grow", "%d", r);
}

static void check_node(int fd, const char *self, const char *peer)
{
	struct krcore_card card;
	struct krcore_port_info pi;
	struct krcore_node_info ni;
	struct krcore_peer_info pe;
	uint8_t gid[16];
	int i, prim = 0, e;

	gid_of(self, gid);
	memset(&card, 0, sizeof(card));
	check(!ioctl(fd, KRCORE_IOC_QUERY_CARD, &card) &&
	      !memcmp(card.gid, gid, 16) &&
	      card.card_version == KRCORE_CARD_VERSION &&
	      (card.flags & (KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4)) ==
	      (KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4),
	      "QUERY_CARD: this node's GID (IPv4-mapped), card_version 1, RoCE v2",
	      "version %u flags %#x", card.card_version, card.flags);
	check(card.incarnation && card.ud_qpn && card.node_id &&
	      card.active_mtu >= 1 && card.active_mtu <= 5,
	      "QUERY_CARD: non-zero incarnation, control QPN, node id; MTU 1..5",
	      "inc %llx qpn %u id %u mtu %u",
	      (unsigned long long)card.incarnation, card.ud_qpn, card.node_id,
	      card.active_mtu);
	for (i = 0; i < 16; i++) {
		memset(&pi, 0, sizeof(pi));
		pi.index = i;
		if (ioctl(fd, KRCORE_IOC_QUERY_PORT, &pi))
			break;
		if (pi.flags & KRCORE_PORT_F_PRIMARY)
			prim++;
		if (!memchr(pi.ibdev, 0, sizeof(pi.ibdev)) ||
		    !memchr(pi.netdev, 0, sizeof(pi.netdev)))
			prim = 100;
	}
	e = errno;
	check(i >= 1 && i < 16 && e == ENOENT,
	      "QUERY_PORT: index 0, 1, ... until ENOENT", "%d ports, %s", i,
	      strerror(e));
	check(prim == 1,
	      "QUERY_PORT: exactly one PRIMARY port, names NUL-terminated",
	      "%d", prim);
	memset(&ni, 0, sizeof(ni));
	check(!ioctl(fd, KRCORE_IOC_NODE_INFO, &ni) &&
	      (ni.flags & KRCORE_NODE_F_UP) &&
	      !(ni.flags & KRCORE_NODE_F_META_HOST) &&
	      ni.meta_state == KRCORE_META_REGISTERED &&
	      !memcmp(&ni.card, &card, sizeof(card)),
	      "NODE_INFO: UP, a member REGISTERED, its card is QUERY_CARD's",
	      "flags %#x meta_state %u", ni.flags, ni.meta_state);
	gid_of(peer, gid);
	check(!memcmp(ni.meta_gid, gid, 16),
	      "NODE_INFO: meta_gid is the MetaServer's address", "differs");
	for (i = 0; i < 4096; i++) {
		memset(&pe, 0, sizeof(pe));
		pe.index = i;
		if (ioctl(fd, KRCORE_IOC_PEER_INFO, &pe))
			break;
	}
	e = errno;
	check(i < 4096 && e == ENOENT,
	      "PEER_INFO: index 0, 1, ... until ENOENT", "%d, %s", i,
	      strerror(e));
	check_peer_stats(fd, i);
}

/*
 * MEMBERS on two nodes (this one and the MetaServer's): both listed,
 * sorted by GID, with their cards' incarnations and node ids, SELF and
 * META_HOST where they belong; max bounds what is written; a wait for
 * the current generation times out with it, a wait for another one does
 * not wait; EINVAL and EFAULT as the header says.
 */
static void check_members(int fd, const char *self, const char *peer)
{
	struct krcore_member m[4];
	struct krcore_members ms;
	struct krcore_lookup lk;
	struct krcore_card card;
	uint8_t sg[16], pg[16];
	uint64_t t0, t1;
	int r, e, is, ip;

	gid_of(self, sg);
	gid_of(peer, pg);
	memset(&card, 0, sizeof(card));
	memset(&lk, 0, sizeof(lk));
	memcpy(lk.gid, pg, 16);
	if (ioctl(fd, KRCORE_IOC_QUERY_CARD, &card) ||
	    ioctl(fd, KRCORE_IOC_LOOKUP, &lk)) {
		check(0, "MEMBERS: the cards to compare with", "%s",
		      strerror(errno));
		return;
	}
	memset(m, 0xa5, sizeof(m));
	memset(&ms, 0, sizeof(ms));
	ms.entries = (uintptr_t)m;
	ms.max = 4;
	r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);
	e = errno;
	check(!r && ms.count == 2 && ms.self < 2,
	      "MEMBERS: two members, this node among them", "%d %s count %u self %u",
	      r, strerror(e), ms.count, ms.self);
	if (r || ms.count != 2 || ms.self >= 2)
		return;
	is = (int)ms.self;
	ip = 1 - is;
	check(memcmp(m[0].gid, m[1].gid, 16) < 0,
	      "MEMBERS: sorted by GID", "not sorted");
	check(!memcmp(m[is].gid, sg, 16) &&
	      m[is].incarnation == card.incarnation &&
	      m[is].node_id == card.node_id &&
	      m[is].flags == KRCORE_MEMBER_F_SELF,
	      "MEMBERS: this node's entry at @self: its card's incarnation and node id, SELF only",
	      "flags %#x", m[is].flags);
	check(!memcmp(m[ip].gid, pg, 16) &&
	      m[ip].incarnation == lk.card.incarnation &&
	      m[ip].node_id == lk.card.node_id &&
	      m[ip].flags == KRCORE_MEMBER_F_META_HOST,
	      "MEMBERS: the MetaServer's entry: its card's incarnation and node id, META_HOST only",
	      "flags %#x", m[ip].flags);
	check(m[2].incarnation == 0xa5a5a5a5a5a5a5a5ULL,
	      "MEMBERS: nothing written past count", "written");

	/* max 1: count says 2, one entry written */
	memset(m, 0xa5, sizeof(m));
	ms.max = 1;
	r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);
	check(!r && ms.count == 2 && m[1].incarnation == 0xa5a5a5a5a5a5a5a5ULL &&
	      m[0].incarnation != 0xa5a5a5a5a5a5a5a5ULL,
	      "MEMBERS: max 1 writes one entry, count is still 2", "%d count %u",
	      r, ms.count);
	ms.max = 0;
	ms.entries = 0;
	r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);
	check(!r && ms.count == 2, "MEMBERS: max 0 and no array: the count",
	      "%d count %u", r, ms.count);

	/* the generation does not change: the wait ends at its timeout */
	ms.since_gen = ms.gen;
	ms.timeout_ms = 300;
	t0 = now_ms();
	r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);
	t1 = now_ms();
	check(!r && ms.gen == ms.since_gen && t1 - t0 >= 300,
	      "MEMBERS: a wait for a change that does not come returns 0 with the same gen after timeout_ms",
	      "%d after %llu ms", r, (unsigned long long)(t1 - t0));
	ms.since_gen = ms.gen + 2;
	ms.timeout_ms = 60000;
	t0 = now_ms();
	r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);
	t1 = now_ms();
	check(!r && ms.gen != ms.since_gen && t1 - t0 < 5000,
	      "MEMBERS: a wait for another generation than the list's returns at once",
	      "%d after %llu ms", r, (unsigned long long)(t1 - t0));

	memset(&ms, 0, sizeof(ms));
	ms.flags = 1;
	r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);
	e = errno;
	check(r == -1 && e == EINVAL, "MEMBERS: flags not 0: EINVAL", "%d %s",
	      r, strerror(e));
	memset(&ms, 0, sizeof(ms));
	ms.reserved = 1;
	r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);
	e = errno;
	check(r == -1 && e == EINVAL, "MEMBERS: reserved not 0: EINVAL", "%d %s",
	      r, strerror(e));
	memset(&ms, 0, sizeof(ms));
	ms.timeout_ms = KRCORE_MEMBERS_MAX_WAIT_MS + 1;
	r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);
	e = errno;
	check(r == -1 && e == EINVAL,
	      "MEMBERS: timeout_ms above KRCORE_MEMBERS_MAX_WAIT_MS: EINVAL",
	      "%d %s", r, strerror(e));
	memset(&ms, 0, sizeof(ms));
	ms.entries = 8;
	ms.max = 2;
	r = ioctl(fd, KRCORE_IOC_MEMBERS, &ms);
	e = errno;
	check(r == -1 && e == EFAULT, "MEMBERS: an unwritable array: EFAULT",
	      "%d %s", r, strerror(e));
}

static void check_lookup(int fd, const char *peer)
{
	struct krcore_lookup lk;
	uint8_t gid[16];

	gid_of(peer, gid);
	memset(&lk, 0, sizeof(lk));
	memcpy(lk.gid, gid, 16);
	lk.flags = 1u << 1;
	check(ioctl(fd, KRCORE_IOC_LOOKUP, &lk) == -1 && errno == EINVAL,
	      "LOOKUP: unknown flags EINVAL", "%s", strerror(errno));
	memset(&lk, 0, sizeof(lk));
	check(ioctl(fd, KRCORE_IOC_LOOKUP, &lk) == -1 && errno == EINVAL,
	      "LOOKUP: a zero GID EINVAL", "%s", strerror(errno));
	memset(&lk, 0, sizeof(lk));
	memcpy(lk.gid, gid, 16);
	lk.flags = KRCORE_LOOKUP_F_NOCACHE;
	check(!ioctl(fd, KRCORE_IOC_LOOKUP, &lk) &&
	      lk.path == KRCORE_PATH_LOOKUP && lk.reads >= 1 &&
	      !memcmp(lk.card.gid, gid, 16),
	      "LOOKUP with F_NOCACHE: path LOOKUP, >= 1 READ, the node's card",
	      "path %#x reads %u", lk.path, lk.reads);
	memset(&lk, 0, sizeof(lk));
	memcpy(lk.gid, gid, 16);
	check(!ioctl(fd, KRCORE_IOC_LOOKUP, &lk) &&
	      lk.path == KRCORE_PATH_CACHED && lk.reads == 0,
	      "LOOKUP again: path CACHED, no READ", "path %#x reads %u",
	      lk.path, lk.reads);
}

static void on_alarm(int sig)
{
}

/*
 * With the peer's answers lost and many retries allowed: a child asks for
 * 2^32-1 ms and gets ETIMEDOUT after the 60 s cap; meanwhile this process
 * connects to the same peer, waits behind the child, and a signal ends
 * its wait with EINTR.
 */
static void check_slow_qconnect(const char *peer)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct krcore_qconnect qc;
	uint64_t res[3] = { 0, 0, 0 };
	int pfd[2], fd, e, st;
	pid_t pid;

	if (pipe(pfd))
		die("pipe");
	write_param("hs_retries", 1000);
	write_param("fault_ctrl_drop_type", 2);
	write_param("fault_ctrl_drop_rx", 100000);
	pid = fork();
	if (pid == 0) {
		uint64_t t = now_ms();

		fd = vq_open();
		res[0] = qconnect(fd, peer, 0, 0xffffffffu, &qc);
		res[1] = now_ms() - t;
		res[2] = qc.elapsed_ns / 1000000;
		_exit(write(pfd[1], res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	sleep(2);
	sigaction(SIGALRM, &sa, NULL);
	alarm(2);
	fd = vq_open();
	e = qconnect(fd, peer, 0, 0, &qc);
	alarm(0);
	check(e == EINTR,
	      "qconnect: EINTR (a signal while it waits for another connect to the peer)",
	      "%s", strerror(e));
	close(fd);
	if (read(pfd[0], res, sizeof(res)) != sizeof(res))
		res[0] = 0;
	waitpid(pid, &st, 0);
	write_param("fault_ctrl_drop_rx", 0);
	write_param("fault_ctrl_drop_type", 0);
	write_param("hs_retries", 5);
	check(res[0] == ETIMEDOUT && res[1] >= 59000 && res[1] < 70000 &&
	      res[2] >= 59000 && res[2] < 70000,
	      "qconnect: timeout_ms is capped at 60000 (2^32-1: ETIMEDOUT after 60 s, elapsed_ns written back)",
	      "%s after %llu ms, elapsed_ns %llu ms", strerror((int)res[0]),
	      (unsigned long long)res[1], (unsigned long long)res[2]);
	close(pfd[0]);
	close(pfd[1]);
}

/*
 * The DATAGRAM path (dg_policy 3: datagrams only, so that no RC connection
 * is built behind it and the next statements still see the first
 * handshake): conn_id and qpn 0, a ring, PROBE ENOTCONN; with
 * KRCORE_QCONNECT_F_RC never datagrams (the handshake then fails here as
 * the peer does not answer it).
 */
static void check_qconnect_datagram(const char *peer)
{
	unsigned long policy = read_param("dg_policy");
	struct krcore_qconnect qc;
	struct krcore_probe pr;
	int fd = vq_open(), e;

	write_param("dg_policy", 3);
	e = qconnect_flags(fd, peer, 0, 0, 0, &qc);
	check(!e && (qc.path & KRCORE_PATH_DATAGRAM) &&
	      !(qc.path & (KRCORE_PATH_HANDSHAKE | KRCORE_PATH_POOLED)) &&
	      !qc.conn_id && !qc.qpn && qc.ring_size && qc.depth &&
	      !qc.attempts,
	      "qconnect: path DATAGRAM with no ready pooled connection (dg_policy 3): conn_id and qpn 0, a ring, no handshake",
	      "%s path %#x conn %u qpn %u ring %u depth %u attempts %u",
	      strerror(e), qc.path, qc.conn_id, qc.qpn, qc.ring_size,
	      qc.depth, qc.attempts);
	memset(&pr, 0, sizeof(pr));
	e = ioctl(fd, KRCORE_IOC_PROBE, &pr) ? errno : 0;
	check(e == ENOTCONN, "PROBE of a VQ on datagrams: ENOTCONN (needs RC)",
	      "%s", strerror(e));
	close(fd);
	fd = vq_open();
	e = qconnect_unanswered(fd, peer, &qc);
	check(e == ETIMEDOUT,
	      "qconnect with KRCORE_QCONNECT_F_RC never takes the datagram path (ETIMEDOUT when the handshake fails, under dg_policy 3)",
	      "%s path %#x", strerror(e), e ? 0 : qc.path);
	close(fd);
	write_param("dg_policy", policy);
}

static void check_qconnect(const char *peer, const char *self)
{
	struct krcore_qconnect qc, qc2;
	uint8_t gid[16];
	int fd = vq_open(), fd2, e;

	/* The handshake's answers are lost: ETIMEDOUT, then no more loss. */
	e = qconnect_unanswered(fd, peer, &qc);
	check(e == ETIMEDOUT,
	      "qconnect: ETIMEDOUT (peer did not answer the handshake)", "%s",
	      strerror(e));

	/* Every request names a wrong incarnation: the peer keeps refusing. */
	write_param("fault_hs_bad_incarnation", 100);
	e = qconnect(fd, peer, 0, 5000, &qc);
	write_param("fault_hs_bad_incarnation", 0);
	check(e == ESTALE, "qconnect: ESTALE (peer keeps rejecting its card)",
	      "%s", strerror(e));

	write_param("max_peers", 0);
	e = qconnect(fd, "10.77.0.77", 0, 0, &qc);
	write_param("max_peers", 65536);
	check(e == ENOSPC, "qconnect: ENOSPC (too many peers known)", "%s",
	      strerror(e));
	e = qconnect(fd, "10.77.0.77", 0, 0, &qc);
	check(e == ENXIO, "qconnect: ENXIO (node unknown to the MetaServer)",
	      "%s", strerror(e));
	memset(&qc, 0, sizeof(qc));
	e = ioctl(fd, KRCORE_IOC_QCONNECT, &qc) ? errno : 0;
	check(e == EINVAL, "qconnect: EINVAL (bad GID: zero)", "%s",
	      strerror(e));
	memset(&qc, 0, sizeof(qc));
	gid_of(peer, qc.gid);
	qc.flags = 1u << 1;
	e = ioctl(fd, KRCORE_IOC_QCONNECT, &qc) ? errno : 0;
	check(e == EINVAL, "qconnect: EINVAL (unknown flags)", "%s",
	      strerror(e));
	e = qconnect(fd, peer, 65536 + 7001, 0, &qc);
	check(e == EINVAL,
	      "qconnect: EINVAL (port above 65535, never truncated)", "%s",
	      strerror(e));
	e = qconnect(fd, peer, 0xffffffffu, 0, &qc);
	check(e == EINVAL, "qconnect: EINVAL (port 2^32-1)", "%s",
	      strerror(e));
	e = ioctl(fd, KRCORE_IOC_QCONNECT, (void *)8) ? errno : 0;
	check(e == EFAULT, "qconnect: EFAULT (unreadable argument)", "%s",
	      strerror(e));

	check_qconnect_datagram(peer);

	/* After all these failures the same VQ still connects. */
	e = qconnect(fd, peer, 0, 0, &qc);
	gid_of(peer, gid);
	check(!e, "after a failed qconnect the VQ is unconnected and may try again",
	      "%s", strerror(e));
	check(!e && (qc.path & KRCORE_PATH_HANDSHAKE) &&
	      (qc.path & (KRCORE_PATH_CACHED | KRCORE_PATH_LOOKUP)) &&
	      qc.attempts >= 1 && qc.conn_id && qc.qpn && qc.elapsed_ns &&
	      !memcmp(qc.card.gid, gid, 16),
	      "qconnect out: path HANDSHAKE + card CACHED/LOOKUP, attempts, conn_id, qpn, elapsed_ns, the peer's card",
	      "path %#x attempts %u conn %u qpn %u", qc.path, qc.attempts,
	      qc.conn_id, qc.qpn);
	check(qc.ring_size && qc.depth, "qconnect out: ring_size and depth",
	      "%u %u", qc.ring_size, qc.depth);
	e = qconnect(fd, peer, 0, 0, &qc2);
	check(e == EISCONN, "qconnect: EISCONN (VQ already connected)", "%s",
	      strerror(e));
	fd2 = vq_open();
	e = qconnect(fd2, peer, 0, 0, &qc2);
	check(!e && (qc2.path & KRCORE_PATH_POOLED) && qc2.reads == 0 &&
	      qc2.attempts == 0,
	      "qconnect: POOLED when a pooled connection existed (no READ, no handshake)",
	      "%s path %#x reads %u attempts %u", strerror(e), qc2.path,
	      qc2.reads, qc2.attempts);
	close(fd2);
	fd2 = vq_open();
	e = qconnect(fd2, self, 0, 0, &qc2);
	check(!e && (qc2.path & KRCORE_PATH_LOCAL),
	      "qconnect to this node: path LOCAL", "%s path %#x",
	      strerror(e), qc2.path);
	close(fd2);
	close(fd);
}

static void check_probe(const char *peer)
{
	struct krcore_qconnect qc;
	struct krcore_probe pr;
	int fd = vq_open(), e;

	e = ioctl(fd, KRCORE_IOC_PROBE, &pr) ? errno : 0;
	check(e == ENOTCONN, "PROBE of an unconnected VQ: ENOTCONN", "%s",
	      strerror(e));
	if (qconnect(fd, peer, 0, 0, &qc))
		die("qconnect");
	memset(&pr, 0, sizeof(pr));
	e = ioctl(fd, KRCORE_IOC_PROBE, &pr) ? errno : 0;
	check(!e && !memcmp(&pr.card, &qc.card, sizeof(pr.card)) &&
	      pr.elapsed_ns,
	      "PROBE: the card READ from the peer is qconnect's card",
	      "%s", strerror(e));
	close(fd);
}

static void check_ring_maps(const char *peer)
{
	struct krcore_qconnect qc;
	struct krcore_ring *r;
	size_t pg = getpagesize();
	void *m;
	int fd = vq_open();

	m = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 KRCORE_MMAP_RING);
	check(m == MAP_FAILED && errno == ENOTCONN,
	      "mmap of the ring before it exists: ENOTCONN", "%s",
	      m == MAP_FAILED ? strerror(errno) : "mapped");
	if (qconnect(fd, peer, 0, 0, &qc))
		die("qconnect");
	m = mmap(NULL, qc.ring_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		 KRCORE_MMAP_RING);
	check(m == MAP_FAILED && errno == EINVAL,
	      "ring mapping must be MAP_SHARED: MAP_PRIVATE EINVAL", "%s",
	      m == MAP_FAILED ? strerror(errno) : "mapped");
	m = mmap(NULL, qc.ring_size, PROT_READ | PROT_EXEC, MAP_SHARED, fd,
		 KRCORE_MMAP_RING);
	check(m == MAP_FAILED && errno == EPERM,
	      "ring mapping never executable: PROT_EXEC EPERM", "%s",
	      m == MAP_FAILED ? strerror(errno) : "mapped");
	m = mmap(NULL, qc.ring_size + pg, PROT_READ, MAP_SHARED, fd,
		 KRCORE_MMAP_RING);
	check(m == MAP_FAILED && errno == EINVAL,
	      "ring mapping of another size than ring_size: EINVAL", "%s",
	      m == MAP_FAILED ? strerror(errno) : "mapped");
	m = mmap(NULL, qc.ring_size, PROT_READ, MAP_SHARED, fd, 2 * pg);
	check(m == MAP_FAILED && errno == EINVAL,
	      "a mapping at another offset: EINVAL", "%s",
	      m == MAP_FAILED ? strerror(errno) : "mapped");
	m = mmap(NULL, qc.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 KRCORE_MMAP_RING);
	check(m != MAP_FAILED, "ring mapped shared read/write at KRCORE_MMAP_RING",
	      "%s", strerror(errno));
	if (m == MAP_FAILED)
		return;
	check(mprotect(m, qc.ring_size, PROT_READ | PROT_EXEC) == -1 &&
	      errno == EACCES,
	      "ring mapping never executable: mprotect(PROT_EXEC) EACCES", "%s",
	      strerror(errno));
	r = m;
	check(r->entries && !(r->entries & (r->entries - 1)) &&
	      r->depth == qc.depth && r->size == qc.ring_size &&
	      r->entry_offset >= sizeof(*r) &&
	      r->entry_offset + (uint64_t)r->entries *
	      sizeof(struct krcore_cqe) <= r->size &&
	      r->producer == 0 && r->consumer == 0 && r->recoveries == 0,
	      "ring header: entries a power of two, depth, size = ring_size, entries fit, indexes 0",
	      "entries %u depth %u size %u off %u", r->entries, r->depth,
	      r->size, r->entry_offset);
	munmap(m, qc.ring_size);
	close(fd);
}

struct dp {
	int fd;
	struct ring ring;
	char *buf;			/* 64 KiB, LOCAL_WRITE */
	struct krcore_reg_mr mr;
	uint64_t raddr;			/* the peer's 4 MiB */
	uint32_t rkey;
};

static void dp_open(struct dp *d, const char *peer, uint32_t port,
		    uint64_t raddr, uint32_t rkey)
{
	struct krcore_qconnect qc;

	d->fd = vq_connected(peer, port, &qc);
	ring_map(d->fd, qc.ring_size, &d->ring);
	d->buf = alloc_buf(65536);
	if (reg_mr(d->fd, d->buf, 65536, KRCORE_ACCESS_LOCAL_WRITE, &d->mr))
		die("reg_mr");
	d->raddr = raddr;
	d->rkey = rkey;
}

/* QCONNECT over RC with the ring at @addr (@len bytes): 0 or the errno. */
static int qconnect_ring(int fd, const char *addr, void *ring, uint32_t len,
			 struct krcore_qconnect *qc)
{
	memset(qc, 0, sizeof(*qc));
	gid_of(addr, qc->gid);
	qc->flags = KRCORE_QCONNECT_F_RC;
	qc->ring_addr = (uintptr_t)ring;
	qc->ring_len = len;
	return ioctl(fd, KRCORE_IOC_QCONNECT, qc) ? errno : 0;
}

/* Drop CAP_IPC_LOCK from the effective set: RLIMIT_MEMLOCK applies. */
static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct c[2];

	if (syscall(SYS_capget, &h, c))
		die("capget");
	c[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &h, c))
		die("capset");
}

/*
 * The completion ring in the caller's memory (ABI 14): its errors, the
 * header the kernel sets, completions written there, the released flag,
 * RLIMIT_MEMLOCK, and no ring of another process's.
 */
static void check_user_ring(struct dp *d, const char *self, const char *peer)
{
	size_t pg = getpagesize(), len = 64 * pg;
	struct krcore_qconnect qc;
	struct krcore_qpush res;
	struct krcore_wr w;
	struct krcore_ring *r;
	struct krcore_cqe *c;
	char *mem = alloc_buf(len), *ro;
	uint32_t need;
	pid_t pid;
	int fd, fd2, e, st;
	void *m;

	fd = vq_open();
	e = qconnect_ring(fd, peer, mem + 8, len - pg, &qc);
	check(e == EINVAL, "ring_addr not page-aligned: EINVAL", "%s",
	      strerror(e));
	qc.reserved = 1;
	qc.ring_addr = (uintptr_t)mem;
	e = ioctl(fd, KRCORE_IOC_QCONNECT, &qc) ? errno : 0;
	check(e == EINVAL, "qconnect reserved set: EINVAL", "%s", strerror(e));
	e = qconnect_ring(fd, peer, mem, pg, &qc);
	need = qc.ring_size;
	check(e == EMSGSIZE && need > pg && !(need % pg) && !qc.ring_addr,
	      "ring_len below the ring's size: EMSGSIZE, ring_size says what it needs, ring_addr 0",
	      "%s, ring_size %u, ring_addr %llx", strerror(e), need,
	      (unsigned long long)qc.ring_addr);
	ro = mmap(NULL, need, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		die("mmap");
	e = qconnect_ring(fd, peer, ro, need, &qc);
	check(e == EFAULT, "a ring in read-only memory: EFAULT", "%s",
	      strerror(e));
	munmap(ro, need);
	e = qconnect_ring(fd, peer, ro, need, &qc);
	check(e == EFAULT, "a ring in unmapped memory: EFAULT", "%s",
	      strerror(e));
	/* A failed connect keeps the ring it took: the next names it. */
	memset(mem, 0xa5, pg);	/* the header the kernel must set */
	e = qconnect_ring(fd, "10.77.0.99", mem, need, &qc);
	check(e == ENXIO && qc.ring_addr == (uintptr_t)mem,
	      "a qconnect that fails after taking the ring: ring_addr out names it",
	      "%s, ring_addr %llx", strerror(e),
	      (unsigned long long)qc.ring_addr);
	e = qconnect_ring(fd, peer, mem + need, need, &qc);
	check(e == EINVAL, "a later qconnect naming another ring: EINVAL", "%s",
	      strerror(e));
	e = qconnect_ring(fd, peer, mem, need, &qc);
	r = (struct krcore_ring *)mem;
	check(!e && qc.ring_addr == (uintptr_t)mem && qc.ring_size == need,
	      "qconnect with the ring in the caller's memory: ring_addr out, ring_size",
	      "%s, ring_addr %llx size %u", strerror(e),
	      (unsigned long long)qc.ring_addr, qc.ring_size);
	check(!e && r->entries && !(r->entries & (r->entries - 1)) &&
	      r->depth == qc.depth && r->size == need &&
	      r->entry_offset == pg && r->producer == 0 && r->consumer == 0 &&
	      r->recoveries == 0 && r->released == 0,
	      "the caller's ring: header set when the kernel took it, indexes 0, released 0",
	      "entries %u depth %u size %u off %u prod %u cons %u rel %u",
	      r->entries, r->depth, r->size, r->entry_offset, r->producer,
	      r->consumer, r->released);
	m = mmap(NULL, need, PROT_READ, MAP_SHARED, fd, KRCORE_MMAP_RING);
	check(m == MAP_FAILED && errno == EINVAL,
	      "mmap of KRCORE_MMAP_RING of a VQ with the caller's ring: EINVAL",
	      "%s", m == MAP_FAILED ? strerror(errno) : "mapped");
	wr_rw(&w, KRCORE_WR_READ, d->buf, 64, d->mr.lkey, d->raddr, d->rkey,
	      0x7515);
	e = qpush(fd, &w, 1, &res) == 1 ? 0 : errno;
	c = (struct krcore_cqe *)(mem + r->entry_offset);
	{
		uint64_t end = now_ms() + 10000;

		while (!e && !__atomic_load_n(&r->producer, __ATOMIC_ACQUIRE) &&
		       now_ms() < end)
			usleep(1000);
	}
	check(!e && r->producer == 1 && c[0].wr_id == 0x7515 &&
	      c[0].status == KRCORE_WC_SUCCESS && c[0].byte_len == 64,
	      "a completion written into the caller's ring",
	      "%s (reason %u), producer %u, wr_id %llx status %u len %u",
	      strerror(e), res.reason, r->producer,
	      (unsigned long long)c[0].wr_id, c[0].status,
	      c[0].byte_len);
	/* released: when the file is, not at the first close. */
	fd2 = dup(fd);
	close(fd);
	check(r->released == 0,
	      "released stays 0 while another descriptor holds the file", "%u",
	      r->released);
	close(fd2);
	check(__atomic_load_n(&r->released, __ATOMIC_ACQUIRE) == 1,
	      "released 1 once the VQ's file is released", "%u", r->released);

	/* Over RLIMIT_MEMLOCK without CAP_IPC_LOCK: ENOMEM. */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };

		drop_ipc_lock();
		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(3);
		fd = vq_open();
		e = qconnect_ring(fd, self, mem, need, &qc);
		_exit(e == ENOMEM ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "a ring over RLIMIT_MEMLOCK without CAP_IPC_LOCK: ENOMEM",
	      "status %d", st);
	/* Another process's VQ: never a ring of its own memory. */
	fd = vq_open();
	pid = fork();
	if (pid == 0) {
		e = qconnect_ring(fd, self, mem, need, &qc);
		_exit(e == EINVAL ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "a ring of a VQ another process opened: EINVAL", "status %d", st);
	close(fd);
	munmap(mem, len);
}

static void check_reg_mr(struct dp *d)
{
	struct krcore_dereg_mr dm = {};
	struct krcore_reg_mr mr;
	char *b = alloc_buf(8192);

	check(reg_mr(d->fd, b, 8192, 1u << 4, &mr) == EINVAL,
	      "REG_MR: unknown access bits EINVAL", "%s", strerror(errno));
	check(reg_mr(d->fd, b, 0, KRCORE_ACCESS_LOCAL_WRITE, &mr) == EINVAL,
	      "REG_MR: length 0 EINVAL", "%s", strerror(errno));
	memset(&mr, 0, sizeof(mr));
	mr.addr = (uintptr_t)b;
	mr.length = 8192;
	mr.reserved = 1;
	check(ioctl(d->fd, KRCORE_IOC_REG_MR, &mr) == -1 && errno == EINVAL,
	      "REG_MR: reserved not 0 EINVAL", "%s", strerror(errno));
	check(!reg_mr(d->fd, b, 8192, KRCORE_ACCESS_REMOTE_READ, &mr) &&
	      mr.lkey && mr.rkey && mr.reserved == 0,
	      "REG_MR: lkey and rkey out", "lkey %#x rkey %#x", mr.lkey,
	      mr.rkey);
	dm.lkey = mr.lkey;
	dm.reserved = 1;
	check(ioctl(d->fd, KRCORE_IOC_DEREG_MR, &dm) == -1 && errno == EINVAL,
	      "DEREG_MR: reserved not 0 EINVAL", "%s", strerror(errno));
	dm.reserved = 0;
	check(!ioctl(d->fd, KRCORE_IOC_DEREG_MR, &dm),
	      "DEREG_MR of a registration: 0", "%s", strerror(errno));
	check(ioctl(d->fd, KRCORE_IOC_DEREG_MR, &dm) == -1 && errno == ENOKEY,
	      "DEREG_MR of an lkey this process does not hold: ENOKEY", "%s",
	      strerror(errno));
	munmap(b, 8192);
}

/* Every malformed request: errno and reason written back, done 0. */
static void check_malformed(struct dp *d, const char *peer)
{
	struct krcore_reg_mr ro;
	struct krcore_wr w;
	char *b = alloc_buf(4096);
	int pfd;

	wr_rw(&w, 0, d->buf, 8, d->mr.lkey, d->raddr, d->rkey, 1);
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_OPCODE,
		       "qpush: EINVAL/OPCODE for opcode 0");
	w.opcode = 8;
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_OPCODE,
		       "qpush: EINVAL/OPCODE for opcode 8");
	wr_rw(&w, KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr, d->rkey, 1);
	w.flags = 1u << 2;
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_FLAGS,
		       "qpush: EINVAL/FLAGS for unknown flag bits");
	w.flags = 0;
	w.reserved0 = 1;
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_RESERVED,
		       "qpush: EINVAL/RESERVED for reserved0");
	w.reserved0 = 0;
	w.reserved1 = 1;
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_RESERVED,
		       "qpush: EINVAL/RESERVED for reserved1");
	w.reserved1 = 0;
	w.num_sge = 0;
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_NUM_SGE,
		       "qpush: EINVAL/NUM_SGE for 0 SGEs");
	w.num_sge = KRCORE_MAX_SGE + 1;
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_NUM_SGE,
		       "qpush: EINVAL/NUM_SGE for KRCORE_MAX_SGE + 1");
	w.num_sge = 1;
	w.sg_list[0].length = 0;
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_ZERO_LENGTH,
		       "qpush: EINVAL/ZERO_LENGTH for an SGE of length 0");
	w.sg_list[0].length = KRCORE_MAX_MSG + 1;
	expect_refused(d->fd, &w, EMSGSIZE, KRCORE_R_TOO_LONG,
		       "qpush: an over-long READ (KRCORE_MAX_MSG + 1): EMSGSIZE/TOO_LONG");
	w.opcode = KRCORE_WR_WRITE;
	expect_refused(d->fd, &w, EMSGSIZE, KRCORE_R_TOO_LONG,
		       "qpush: an over-long WRITE (KRCORE_MAX_MSG + 1): EMSGSIZE/TOO_LONG");
	w.num_sge = 2;
	w.sg_list[0].length = KRCORE_MAX_MSG / 2 + 1;
	w.sg_list[1] = w.sg_list[0];
	expect_refused(d->fd, &w, EMSGSIZE, KRCORE_R_TOO_LONG,
		       "qpush: a WRITE over KRCORE_MAX_MSG in two SGEs: EMSGSIZE/TOO_LONG");
	w.num_sge = 1;
	w.opcode = KRCORE_WR_SEND;
	w.sg_list[0].length = KRCORE_MAX_SEND + 1;
	expect_refused(d->fd, &w, EMSGSIZE, KRCORE_R_TOO_LONG,
		       "qpush: a SEND of KRCORE_MAX_SEND + 1: EMSGSIZE/TOO_LONG");
	w.sg_list[0].length = 8;
	expect_refused(d->fd, &w, EDESTADDRREQ, KRCORE_R_NO_PORT,
		       "qpush: EDESTADDRREQ/NO_PORT for a SEND from a VQ without a port");
	w.opcode = KRCORE_WR_WRITE_IMM;
	expect_refused(d->fd, &w, EDESTADDRREQ, KRCORE_R_NO_PORT,
		       "qpush: EDESTADDRREQ/NO_PORT for a WRITE_IMM from a VQ without a port");
	wr_rw(&w, KRCORE_WR_ATOMIC_FAA, d->buf, 4, d->mr.lkey, d->raddr,
	      d->rkey, 1);
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_ATOMIC_SIZE,
		       "qpush: EINVAL/ATOMIC_SIZE for a 4-byte FAA");
	wr_rw(&w, KRCORE_WR_ATOMIC_CAS, d->buf, 8, d->mr.lkey, d->raddr + 4,
	      d->rkey, 1);
	expect_refused(d->fd, &w, EINVAL, KRCORE_R_ATOMIC_ALIGN,
		       "qpush: EINVAL/ATOMIC_ALIGN for a CAS at remote_addr % 8 = 4");
	wr_rw(&w, KRCORE_WR_READ, d->buf, 8, d->mr.lkey ^ 0x5a5a00, d->raddr,
	      d->rkey, 1);
	expect_refused(d->fd, &w, ENOKEY, KRCORE_R_LKEY,
		       "qpush: ENOKEY/LKEY for an lkey this process did not register");
	wr_rw(&w, KRCORE_WR_READ, d->buf + 65536 - 4, 8, d->mr.lkey, d->raddr,
	      d->rkey, 1);
	expect_refused(d->fd, &w, EFAULT, KRCORE_R_RANGE,
		       "qpush: EFAULT/RANGE for a buffer beyond its registration");
	if (reg_mr(d->fd, b, 4096, KRCORE_ACCESS_REMOTE_READ, &ro))
		die("reg_mr ro");
	wr_rw(&w, KRCORE_WR_READ, b, 8, ro.lkey, d->raddr, d->rkey, 1);
	expect_refused(d->fd, &w, EACCES, KRCORE_R_ACCESS,
		       "qpush: EACCES/ACCESS for a READ into a registration without LOCAL_WRITE");
	wr_rw(&w, KRCORE_WR_ATOMIC_FAA, b, 8, ro.lkey, d->raddr, d->rkey, 1);
	expect_refused(d->fd, &w, EACCES, KRCORE_R_ACCESS,
		       "qpush: EACCES/ACCESS for an atomic into a registration without LOCAL_WRITE");

	/* With a port: the WRITE_IMM immediate is 16 bits. */
	pfd = vq_connected(peer, 7001, NULL);
	wr_rw(&w, KRCORE_WR_WRITE_IMM, d->buf, 8, d->mr.lkey, d->raddr,
	      d->rkey, 1);
	w.imm_data = 0x10000;
	expect_refused(pfd, &w, EINVAL, KRCORE_R_IMM,
		       "qpush: EINVAL/IMM for a WRITE_IMM immediate beyond 16 bits");
	close(pfd);

	/* Not connected. */
	pfd = vq_open();
	wr_rw(&w, KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr, d->rkey, 1);
	expect_refused(pfd, &w, ENOTCONN, KRCORE_R_NOT_CONNECTED,
		       "qpush: ENOTCONN/NOT_CONNECTED on an unconnected VQ");
	close(pfd);
}

/* The -1 paths of qpush that are not about one malformed request. */
static void check_qpush_writeback(struct dp *d)
{
	struct krcore_qpush res;
	struct krcore_wr *w, three[3];
	struct krcore_cqe c[32];
	size_t pg = getpagesize();
	uint32_t prod;
	char *area;
	int i, ret, n, fd;

	/* Success: returns count, the structure is not written back. */
	wr_rw(&three[0], KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr,
	      d->rkey, 100);
	ret = qpush(d->fd, three, 1, &res);
	check(ret == 1 && res.done == SENTINEL && res.error == SENTINEL &&
	      res.reason == SENTINEL,
	      "qpush returns count when all were posted and does not write the structure back",
	      "ret %d done %#x", ret, res.done);
	n = ring_pop(d->fd, &d->ring, c, 1, 10000);
	check(n == 1 && c[0].wr_id == 100 && c[0].status == KRCORE_WC_SUCCESS &&
	      c[0].opcode == KRCORE_WR_READ,
	      "a signaled READ completes in the ring: wr_id, SUCCESS, opcode READ",
	      "n %d wr_id %llu status %u", n,
	      (unsigned long long)c[0].wr_id, c[0].status);

	/* [good, bad, good]: the first posted, then the batch stops. */
	wr_rw(&three[0], KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr,
	      d->rkey, 201);
	three[1] = three[0];
	three[1].opcode = 99;
	three[1].wr_id = 202;
	three[2] = three[0];
	three[2].wr_id = 203;
	ret = qpush(d->fd, three, 3, &res);
	check(ret == -1 && errno == EINVAL && res.done == 1 &&
	      res.error == EINVAL && res.reason == KRCORE_R_OPCODE,
	      "qpush: the first failing request stops the batch: done 1, error/reason of wrs[1]",
	      "ret %d done %u error %u reason %u", ret, res.done, res.error,
	      res.reason);
	n = ring_pop(d->fd, &d->ring, c, 8, 1500);
	check(n == 1 && c[0].wr_id == 201,
	      "qpush: the ones before are posted, it and the ones after are not",
	      "%d completions, first wr_id %llu", n,
	      (unsigned long long)c[0].wr_id);

	/* An unreadable array: EFAULT, reason FAULT, written back. */
	memset(&res, 0, sizeof(res));
	res.wrs = 8;
	res.count = 4;
	res.done = SENTINEL;
	res.error = SENTINEL;
	res.reason = SENTINEL;
	ret = ioctl(d->fd, KRCORE_IOC_QPUSH, &res);
	check(ret == -1 && errno == EFAULT && res.done == 0 &&
	      res.error == EFAULT && res.reason == KRCORE_R_FAULT,
	      "qpush: an unreadable wrs array: -1 EFAULT, done 0, error EFAULT, reason FAULT written back",
	      "ret %d errno %d done %#x error %#x reason %#x", ret, errno,
	      res.done, res.error, res.reason);
	fd = vq_open();
	res.done = SENTINEL;
	res.error = SENTINEL;
	res.reason = SENTINEL;
	ret = ioctl(fd, KRCORE_IOC_QPUSH, &res);
	check(ret == -1 && errno == EFAULT && res.done == 0 &&
	      res.error == EFAULT && res.reason == KRCORE_R_FAULT,
	      "qpush: an unreadable wrs array on an unconnected VQ: EFAULT/FAULT written back",
	      "ret %d errno %d done %#x error %#x reason %#x", ret, errno,
	      res.done, res.error, res.reason);
	close(fd);

	/* Unreadable after 16 requests: done 16. */
	area = alloc_buf(4 * pg);
	munmap(area + 2 * pg, 2 * pg);
	w = (struct krcore_wr *)(area + 2 * pg - 16 * sizeof(*w));
	for (i = 0; i < 16; i++)
		wr_rw(&w[i], KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr,
		      d->rkey, 300 + i);
	ret = qpush(d->fd, w, 20, &res);
	check(ret == -1 && errno == EFAULT && res.done == 16 &&
	      res.error == EFAULT && res.reason == KRCORE_R_FAULT,
	      "qpush: EFAULT mid-batch: done = the 16 readable requests, error EFAULT, reason FAULT",
	      "ret %d errno %d done %#x error %#x reason %#x", ret, errno,
	      res.done, res.error, res.reason);
	n = ring_pop(d->fd, &d->ring, c, 16, 10000);
	n += ring_pop(d->fd, &d->ring, c, 16, 300);
	check(n == 16, "qpush: the 16 requests before the fault were posted",
	      "%d completions", n);
	munmap(area, 2 * pg);

	/* The structure itself unreadable: EFAULT, nothing to write. */
	ret = ioctl(d->fd, KRCORE_IOC_QPUSH, (void *)8);
	check(ret == -1 && errno == EFAULT,
	      "qpush: the structure itself unreadable: EFAULT", "ret %d %s",
	      ret, strerror(errno));

	/* More than fits: EAGAIN, VQ_FULL or QP_FULL. */
	w = calloc(300, sizeof(*w));
	for (i = 0; i < 300; i++)
		wr_rw(&w[i], KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr,
		      d->rkey, 1000 + i);
	prod = __atomic_load_n(&d->ring.hdr->producer, __ATOMIC_ACQUIRE);
	ret = qpush(d->fd, w, 300, &res);
	prod = __atomic_load_n(&d->ring.hdr->producer, __ATOMIC_ACQUIRE) -
	       prod;
	check(ret == -1 && errno == EAGAIN && res.done >= 1 &&
	      res.done < 300 && res.error == EAGAIN &&
	      (res.reason == KRCORE_R_VQ_FULL || res.reason == KRCORE_R_QP_FULL),
	      "qpush: EAGAIN (VQ_FULL/QP_FULL) for what does not fit, done = what did",
	      "ret %d errno %d done %u error %u reason %u", ret, errno,
	      res.done, res.error, res.reason);
	/* Some may have completed while the batch was being posted. */
	check(res.done <= d->ring.hdr->depth + prod,
	      "ring depth: outstanding requests allowed per VQ",
	      "done %u depth %u completed meanwhile %u", res.done,
	      d->ring.hdr->depth, prod);
	for (n = 0, i = 0; i < 100 && n < (int)res.done; i++)
		n += ring_pop(d->fd, &d->ring, c, 8, 1000);
	check(n == (int)res.done, "every posted request completed",
	      "%d of %u", n, res.done);
	free(w);
}

/* byte_len, signaling, data. */
static void check_completions(struct dp *d)
{
	struct krcore_qpush res;
	struct krcore_wr w[2];
	struct krcore_cqe c[4];
	static const char msg[] = "abi contract: what a READ brings back";
	uint64_t off = 3 << 20;		/* the unused half of the buffer */
	int ret, n;

	memcpy(d->buf, msg, sizeof(msg));
	memset(d->buf + sizeof(msg), 'z', 100 - sizeof(msg));
	wr_rw(&w[0], KRCORE_WR_WRITE, d->buf, 100, d->mr.lkey, d->raddr + off,
	      d->rkey, 400);
	w[0].flags = 0;		/* unsignaled: no completion */
	wr_rw(&w[1], KRCORE_WR_READ, d->buf + 1024, 60, d->mr.lkey,
	      d->raddr + off, d->rkey, 401);
	w[1].num_sge = 2;
	w[1].sg_list[1].addr = (uintptr_t)d->buf + 2048;
	w[1].sg_list[1].length = 40;
	w[1].sg_list[1].lkey = d->mr.lkey;
	ret = qpush(d->fd, w, 2, &res);
	n = ring_pop(d->fd, &d->ring, c, 4, 3000);
	check(ret == 2 && n == 1 && c[0].wr_id == 401,
	      "an unsignaled successful request gives no completion",
	      "ret %d n %d wr_id %llu", ret, n, (unsigned long long)c[0].wr_id);
	check(n >= 1 && c[0].status == KRCORE_WC_SUCCESS && c[0].byte_len == 100,
	      "a READ's completion has byte_len = the bytes it read (100, two SGEs)",
	      "status %u byte_len %u", c[0].status, c[0].byte_len);
	check(!memcmp(d->buf + 1024, d->buf, 60) &&
	      !memcmp(d->buf + 2048, d->buf + 60, 40),
	      "READ data: what the WRITE put there, scattered over the SGEs",
	      "differs");
}

/*
 * "producer: written by the kernel": the kernel keeps its own index. A
 * value the process writes there is overwritten by the next completion,
 * which lands at the kernel's index (issue 24, ring geometry).
 */
static void check_producer_kernel(struct dp *d)
{
	struct krcore_ring *h = d->ring.hdr;
	uint32_t next = d->ring.cons, lie = next + 1000, prod;
	uint64_t end = now_ms() + 5000, id;
	struct krcore_qpush res;
	struct krcore_wr w;
	int ret;

	wr_rw(&w, KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr, d->rkey,
	      403);
	__atomic_store_n(&h->producer, lie, __ATOMIC_RELEASE);
	ret = qpush(d->fd, &w, 1, &res);
	do {
		prod = __atomic_load_n(&h->producer, __ATOMIC_ACQUIRE);
	} while (ret == 1 && prod == lie && now_ms() < end && !usleep(1000));
	id = d->ring.cqes[next & d->ring.mask].wr_id;
	check(ret == 1 && prod == next + 1 && id == 403,
	      "ring producer written by the kernel only: a value the process wrote there is not believed",
	      "ret %d producer %u (wrote %u, expected %u), entry %u wr_id %llu",
	      ret, prod, lie, next + 1, next & d->ring.mask,
	      (unsigned long long)id);
	/* Our index again, past the completion, whatever happened. */
	__atomic_store_n(&h->producer, next + 1, __ATOMIC_RELEASE);
	d->ring.cons = next + 1;
	__atomic_store_n(&h->consumer, d->ring.cons, __ATOMIC_RELEASE);
}

/* The culprit of a remote access error: its statuses, then usable. */
static void check_culprit(struct dp *d)
{
	struct krcore_qpush res;
	struct krcore_wr w[2];
	struct krcore_cqe c[4];
	uint64_t rec = d->ring.hdr->recoveries;
	int ret, n;

	wr_rw(&w[0], KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr,
	      d->rkey ^ 0x5a5a5a00, 500);
	w[0].flags = 0;		/* unsignaled: a failure completes anyway */
	wr_rw(&w[1], KRCORE_WR_READ, d->buf + 8, 8, d->mr.lkey, d->raddr,
	      d->rkey, 501);
	ret = qpush(d->fd, w, 2, &res);
	n = ring_pop(d->fd, &d->ring, c, 2, 20000);
	check(ret == 2 && n >= 1 && c[0].wr_id == 500 &&
	      c[0].status == KRCORE_WC_REM_ACCESS_ERR,
	      "a failed request always completes, signaled or not: bad rkey, REM_ACCESS_ERR",
	      "ret %d n %d wr_id %llu status %u", ret, n,
	      (unsigned long long)c[0].wr_id, c[0].status);
	check(n == 2 && c[1].wr_id == 501 && c[1].status == KRCORE_WC_FLUSHED,
	      "the culprit VQ's later outstanding requests complete FLUSHED",
	      "n %d wr_id %llu status %u", n, (unsigned long long)c[1].wr_id,
	      c[1].status);
	wr_rw(&w[0], KRCORE_WR_READ, d->buf + 4096, 100, d->mr.lkey,
	      d->raddr + (3 << 20), d->rkey, 502);
	memset(d->buf + 4096, 0, 100);
	/* EAGAIN (RECOVERING) only says: retry later. */
	for (n = 0; n < 50; n++) {
		ret = qpush(d->fd, w, 1, &res);
		if (ret != -1 || errno != EAGAIN)
			break;
		usleep(200000);
	}
	n = ring_pop(d->fd, &d->ring, c, 1, 20000);
	check(ret == 1 && n == 1 && c[0].wr_id == 502 &&
	      c[0].status == KRCORE_WC_SUCCESS &&
	      !memcmp(d->buf + 4096, d->buf + 1024, 60),
	      "the culprit VQ stays usable: new requests accepted and executed",
	      "ret %d errno %d n %d status %u", ret, errno, n, c[0].status);
	check(d->ring.hdr->recoveries > rec,
	      "ring recoveries: times this VQ's connection was recovered",
	      "%llu -> %llu", (unsigned long long)rec,
	      (unsigned long long)d->ring.hdr->recoveries);
}

static void check_qwait(struct dp *d)
{
	struct krcore_qwait w;
	struct krcore_wr wr;
	struct krcore_qpush res;
	struct krcore_cqe c;
	uint64_t t;
	int fd, ret, e;

	fd = vq_open();
	memset(&w, 0, sizeof(w));
	w.available = SENTINEL;
	w.messages = SENTINEL;
	ret = ioctl(fd, KRCORE_IOC_QWAIT, &w);
	e = errno;
	check(ret == -1 && e == ENOTCONN && w.available == 0 &&
	      w.messages == 0,
	      "QWAIT without a ring: -1 ENOTCONN, available and messages written back",
	      "ret %d %s available %#x messages %#x", ret, strerror(e),
	      w.available, w.messages);
	close(fd);
	memset(&w, 0, sizeof(w));
	w.available = SENTINEL;
	w.messages = SENTINEL;
	ret = ioctl(d->fd, KRCORE_IOC_QWAIT, &w);
	e = errno;
	check(ret == -1 && e == ETIMEDOUT && w.available == 0 &&
	      w.messages == 0,
	      "QWAIT timeout_ms 0, rings empty: -1 ETIMEDOUT at once, available/messages 0",
	      "ret %d %s available %#x", ret, strerror(e), w.available);
	w.timeout_ms = 300;
	t = now_ms();
	ret = ioctl(d->fd, KRCORE_IOC_QWAIT, &w);
	e = errno;
	t = now_ms() - t;
	check(ret == -1 && e == ETIMEDOUT && t >= 250,
	      "QWAIT timeout: -1 ETIMEDOUT after timeout_ms",
	      "ret %d %s after %llu ms", ret, strerror(e),
	      (unsigned long long)t);
	wr_rw(&wr, KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr, d->rkey,
	      600);
	qpush(d->fd, &wr, 1, &res);
	memset(&w, 0, sizeof(w));
	w.timeout_ms = 10000;
	ret = ioctl(d->fd, KRCORE_IOC_QWAIT, &w);
	check(ret == 0 && w.available == 1 && w.messages == 0,
	      "QWAIT: 0 when the ring has entries, available = entries",
	      "ret %d available %u", ret, w.available);
	ring_pop(d->fd, &d->ring, &c, 1, 1000);
	ret = ioctl(d->fd, KRCORE_IOC_QWAIT, (void *)8);
	check(ret == -1 && errno == EFAULT, "QWAIT: EFAULT", "%s",
	      strerror(errno));
}

static void check_poll(struct dp *d)
{
	struct krcore_qpush res;
	struct krcore_wr wr;
	struct krcore_cqe c;
	struct pollfd p = { .fd = d->fd, .events = POLLIN | POLLOUT };
	int n;

	n = poll(&p, 1, 0);
	check(n == 1 && p.revents == POLLOUT,
	      "poll: POLLOUT when the VQ can take a request, no POLLIN when empty",
	      "n %d revents %#x", n, p.revents);
	wr_rw(&wr, KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr, d->rkey,
	      700);
	qpush(d->fd, &wr, 1, &res);
	p.events = POLLIN;
	n = poll(&p, 1, 10000);
	check(n == 1 && (p.revents & POLLIN),
	      "poll: POLLIN when the completion ring has entries",
	      "n %d revents %#x", n, p.revents);
	ring_pop(d->fd, &d->ring, &c, 1, 1000);
}

/* A forked child with the inherited descriptor. */
static void check_fork(struct dp *d)
{
	struct krcore_qpush res;
	struct krcore_wr wr;
	struct krcore_cqe c;
	int pfd[2], st, ret;
	pid_t pid;

	if (pipe(pfd))
		die("pipe");
	pid = fork();
	if (pid == 0) {
		struct krcore_dereg_mr dm = { .lkey = d->mr.lkey };
		struct krcore_version v;
		struct krcore_reg_mr mr;
		char out[4] = { 0 };

		wr_rw(&wr, KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr,
		      d->rkey, 800);
		ret = qpush(d->fd, &wr, 1, &res);
		out[0] = ret == -1 && errno == EACCES && res.done == 0 &&
			 res.error == EACCES && res.reason == KRCORE_R_OK;
		out[1] = reg_mr(d->fd, d->buf, 4096,
				KRCORE_ACCESS_LOCAL_WRITE, &mr) == EACCES;
		out[2] = ioctl(d->fd, KRCORE_IOC_DEREG_MR, &dm) == -1 &&
			 errno == EACCES;
		out[3] = !ioctl(d->fd, KRCORE_IOC_VERSION, &v);
		_exit(write(pfd[1], out, 4) == 4 ? 0 : 1);
	}
	{
		char in[4] = { 0 };

		if (read(pfd[0], in, 4) != 4)
			memset(in, 0, 4);
		waitpid(pid, &st, 0);
		check(in[0],
		      "forked child, inherited VQ: QPUSH -1 EACCES, done 0, error EACCES, reason OK written back",
		      "no");
		check(in[1], "forked child, inherited VQ: REG_MR EACCES", "no");
		check(in[2], "forked child, inherited VQ: DEREG_MR EACCES",
		      "no");
		check(in[3], "forked child, inherited VQ: VERSION answered",
		      "no");
	}
	close(pfd[0]);
	close(pfd[1]);
	wr_rw(&wr, KRCORE_WR_READ, d->buf, 8, d->mr.lkey, d->raddr, d->rkey,
	      801);
	ret = qpush(d->fd, &wr, 1, &res);
	check(ret == 1 && ring_pop(d->fd, &d->ring, &c, 1, 10000) == 1 &&
	      c.status == KRCORE_WC_SUCCESS,
	      "the VQ and its registration still serve the process that opened it",
	      "ret %d", ret);
}

/* A WRITE_IMM: the bytes written, and a message naming them. */
static void check_write_imm(int b, struct krcore_recv_ring *rr, void *map,
			    struct krcore_reg_mr *mr, char *buf)
{
	struct krcore_reg_mr tmr;
	struct krcore_qpush res;
	struct krcore_wr wr;
	struct krcore_msg *m;
	char *tgt = alloc_buf(4096);
	uint64_t end = now_ms() + 10000;
	int ret;

	if (reg_mr(b, tgt, 4096, KRCORE_ACCESS_REMOTE_WRITE, &tmr))
		die("reg_mr tgt");
	memcpy(buf, "sixteen bytes!!!", 16);
	wr_rw(&wr, KRCORE_WR_WRITE_IMM, buf, 16, mr->lkey, (uintptr_t)tgt + 64,
	      tmr.rkey, 904);
	wr.flags = 0;
	wr.imm_data = 0x1234;
	ret = qpush(b, &wr, 1, &res);
	while (__atomic_load_n(&rr->producer, __ATOMIC_ACQUIRE) < 2 &&
	       now_ms() < end)
		usleep(10000);
	m = (struct krcore_msg *)((char *)map + rr->entry_offset) + 1;
	check(ret == 1 && rr->producer == 2 &&
	      m->opcode == KRCORE_WR_WRITE_IMM && m->len == 16 &&
	      (m->flags & KRCORE_MSG_F_IMM) && m->imm_data == 0x1234 &&
	      !memcmp(tgt + 64, "sixteen bytes!!!", 16),
	      "a WRITE_IMM writes remote memory and notifies the port: opcode, len = bytes written, 16-bit imm",
	      "ret %d prod %u op %u len %u imm %#x", ret, rr->producer,
	      m->opcode, m->len, m->imm_data);
	__atomic_store_n(&rr->consumer, 2, __ATOMIC_RELEASE);
}

/* More messages than the ring holds: the rest dropped and counted. */
/*
 * A sender never overfills a receive ring: of entries + 1 SENDs into a
 * ring nobody reads, fewer are posted (EAGAIN, reason NO_CREDIT: no slot
 * lent), every one posted arrives, none is dropped.
 */
static void check_ring_full(int b, struct krcore_recv_ring *rr,
			    struct krcore_reg_mr *mr, char *buf)
{
	uint32_t n = rr->entries + 1, i, prod0 = rr->producer;
	uint32_t dropped0 = rr->dropped, posted;
	uint64_t end = now_ms() + 20000;
	struct krcore_qpush res;
	struct krcore_wr *w;
	int ret;

	w = calloc(n, sizeof(*w));
	for (i = 0; i < n; i++) {
		wr_rw(&w[i], KRCORE_WR_SEND, buf, 8, mr->lkey, 0, 0, 950 + i);
		w[i].flags = 0;
	}
	ret = qpush(b, w, n, &res);
	posted = ret >= 0 ? (uint32_t)ret : res.done;
	while (rr->producer - prod0 < posted && now_ms() < end)
		usleep(20000);
	usleep(500000);
	check(ret < 0 && errno == EAGAIN && res.reason == KRCORE_R_NO_CREDIT &&
	      posted >= 1 && posted < n && rr->producer - prod0 == posted &&
	      rr->dropped == dropped0 &&
	      rr->producer - rr->consumer <= rr->entries,
	      "SENDs into a ring nobody reads stop at its lent slots (EAGAIN/NO_CREDIT), all posted arrive, none dropped",
	      "ret %d reason %u posted %u of %u arrived %u dropped %u used %u of %u",
	      ret, res.reason, posted, n, rr->producer - prod0,
	      rr->dropped - dropped0, rr->producer - rr->consumer, rr->entries);
	free(w);
}

/* Loopback: RKEY; two-sided messages to a bound port of this node. */
static void check_loopback(const char *self)
{
	struct krcore_recv_ring *rr;
	struct krcore_qbind qb, qb2;
	struct krcore_qwait w;
	struct krcore_reg_mr mr;
	struct krcore_qpush res;
	struct krcore_wr wr;
	struct krcore_msg *m;
	uint8_t gid[16];
	char *buf = alloc_buf(8192), *data;
	void *map;
	int a, b, a2, ret;

	b = vq_connected(self, 7100, NULL);
	if (reg_mr(b, buf, 8192, KRCORE_ACCESS_LOCAL_WRITE |
		   KRCORE_ACCESS_REMOTE_READ, &mr))
		die("reg_mr");
	wr_rw(&wr, KRCORE_WR_READ, buf, 8, mr.lkey, (uintptr_t)buf + 4096,
	      mr.rkey ^ 0x5a5a5a00, 900);
	expect_refused(b, &wr, EACCES, KRCORE_R_RKEY,
		       "loopback: an rkey this process did not register: EACCES/RKEY");
	wr_rw(&wr, KRCORE_WR_READ, buf, 64, mr.lkey,
	      (uintptr_t)buf + 8192 - 32, mr.rkey, 901);
	expect_refused(b, &wr, EACCES, KRCORE_R_RKEY,
		       "loopback: a range outside its registration: EACCES/RKEY");
	wr_rw(&wr, KRCORE_WR_WRITE, buf, 8, mr.lkey, (uintptr_t)buf + 4096,
	      mr.rkey, 902);
	expect_refused(b, &wr, EACCES, KRCORE_R_RKEY,
		       "loopback: a WRITE without REMOTE_WRITE access: EACCES/RKEY");

	a = vq_open();
	memset(&qb, 0, sizeof(qb));
	qb.port = 0;
	check(ioctl(a, KRCORE_IOC_QBIND, &qb) == -1 && errno == EINVAL,
	      "QBIND port 0: EINVAL (1..65535)", "%s", strerror(errno));
	qb.port = 65536 + 7100;
	check(ioctl(a, KRCORE_IOC_QBIND, &qb) == -1 && errno == EINVAL,
	      "QBIND port above 65535: EINVAL", "%s", strerror(errno));
	qb.port = 7100;
	check(!ioctl(a, KRCORE_IOC_QBIND, &qb) && qb.ring_size,
	      "QBIND 7100: ring_size out", "%s", strerror(errno));
	a2 = vq_open();
	qb2.port = 7100;
	check(ioctl(a2, KRCORE_IOC_QBIND, &qb2) == -1 && errno == EADDRINUSE,
	      "QBIND: one VQ per port (EADDRINUSE)", "%s", strerror(errno));
	close(a2);
	map = mmap(NULL, qb.ring_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, a,
		   KRCORE_MMAP_RECV * getpagesize());
	check(map == MAP_FAILED && errno == EINVAL,
	      "receive ring: MAP_PRIVATE EINVAL", "%s",
	      map == MAP_FAILED ? strerror(errno) : "mapped");
	map = mmap(NULL, qb.ring_size, PROT_READ | PROT_EXEC, MAP_SHARED, a,
		   KRCORE_MMAP_RECV * getpagesize());
	check(map == MAP_FAILED && errno == EPERM,
	      "receive ring: PROT_EXEC EPERM", "%s",
	      map == MAP_FAILED ? strerror(errno) : "mapped");
	map = mmap(NULL, qb.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, a,
		   KRCORE_MMAP_RECV * getpagesize());
	if (map == MAP_FAILED)
		die("mmap recv");
	rr = map;
	check(rr->entries && !(rr->entries & (rr->entries - 1)) &&
	      rr->size == qb.ring_size && rr->slot_size >= KRCORE_MAX_SEND &&
	      rr->entry_offset + (uint64_t)rr->entries * sizeof(*m) <=
	      rr->data_offset &&
	      rr->data_offset + (uint64_t)rr->entries * rr->slot_size <= rr->size,
	      "receive ring header: entries a power of two, size, entries and slots fit",
	      "entries %u slot %u eo %u do %u size %u", rr->entries,
	      rr->slot_size, rr->entry_offset, rr->data_offset, rr->size);

	memcpy(buf, "hello, port", 11);
	wr_rw(&wr, KRCORE_WR_SEND_IMM, buf, 11, mr.lkey, 0, 0, 903);
	wr.imm_data = 0xabcdef;
	ret = qpush(b, &wr, 1, &res);
	memset(&w, 0, sizeof(w));
	w.timeout_ms = 10000;
	check(ret == 1 && !ioctl(a, KRCORE_IOC_QWAIT, &w) && w.messages == 1 &&
	      w.available == 0,
	      "QWAIT on the bound VQ: 0, messages = receive ring entries",
	      "ret %d messages %u", ret, w.messages);
	m = (struct krcore_msg *)((char *)map + rr->entry_offset);
	data = (char *)map + rr->data_offset;
	gid_of(self, gid);
	check(rr->producer == 1 && m->len == 11 &&
	      m->opcode == KRCORE_WR_SEND_IMM &&
	      (m->flags & KRCORE_MSG_F_IMM) && m->imm_data == 0xabcdef &&
	      m->src_port == 0 && !memcmp(m->src_gid, gid, 16) &&
	      !memcmp(data, "hello, port", 11),
	      "a SEND_IMM lands in the bound port's ring: len, opcode, IMM flag, imm, src_port 0, src_gid, data in slot 0",
	      "prod %u len %u op %u flags %u imm %#x src_port %u", rr->producer,
	      m->len, m->opcode, m->flags, m->imm_data, m->src_port);
	__atomic_store_n(&rr->consumer, 1, __ATOMIC_RELEASE);
	check_write_imm(b, rr, map, &mr, buf);
	check_ring_full(b, rr, &mr, buf);
	munmap(map, qb.ring_size);
	close(a);
	close(b);
	munmap(buf, 8192);
}

/* A process that keeps breaking shared connections: EBUSY/THROTTLED. */
static void check_throttle(const char *peer, uint64_t raddr, uint32_t rkey)
{
	struct krcore_qpush res;
	struct krcore_wr w;
	struct krcore_cqe c;
	struct dp d;
	int i, ret, st, e;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid) {
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			failures++;
		return;
	}
	failures = 0;
	dp_open(&d, peer, 0, raddr, rkey);
	for (i = 0; i < 3; i++) {
		wr_rw(&w, KRCORE_WR_READ, d.buf, 8, d.mr.lkey, d.raddr,
		      d.rkey ^ 0x5a5a5a00, 1100 + i);
		do {
			ret = qpush(d.fd, &w, 1, &res);
		} while (ret == -1 && errno == EAGAIN && !usleep(200000));
		if (ret != 1 || ring_pop(d.fd, &d.ring, &c, 1, 20000) != 1 ||
		    c.status != KRCORE_WC_REM_ACCESS_ERR)
			break;
	}
	wr_rw(&w, KRCORE_WR_READ, d.buf, 8, d.mr.lkey, d.raddr, d.rkey, 1200);
	ret = qpush(d.fd, &w, 1, &res);
	e = errno;
	check(i == 3 && ret == -1 && e == EBUSY && res.done == 0 &&
	      res.error == EBUSY && res.reason == KRCORE_R_THROTTLED,
	      "after break_limit remote access errors: EBUSY/THROTTLED, written back",
	      "breaks %d ret %d %s done %#x error %#x reason %#x", i, ret,
	      strerror(e), res.done, res.error, res.reason);
	fflush(stdout);
	_exit(failures ? 1 : 0);
}

static void do_main(const char *peer, const char *info, const char *self)
{
	unsigned long long a;
	unsigned int k;
	struct dp d;
	FILE *f;
	int fd;

	/* A minute long: only when asked (ABI_SLOW=1). */
	if (getenv("ABI_SLOW"))
		check_slow_qconnect(peer);
	fd = vq_open();
	check_version(fd);
	check_numbers(fd);
	check_qconnect(peer, self);
	check_node(fd, self, peer);
	check_lookup(fd, peer);
	check_members(fd, self, peer);
	check_probe(peer);
	check_ring_maps(peer);
	close(fd);

	f = fopen(info, "r");
	if (!f || fscanf(f, "%llx %x", &a, &k) != 2) {
		fprintf(stderr, "abi_contract: cannot read %s\n", info);
		exit(2);
	}
	fclose(f);
	dp_open(&d, peer, 0, a, k);
	check_reg_mr(&d);
	check_malformed(&d, peer);
	check_qpush_writeback(&d);
	check_completions(&d);
	check_producer_kernel(&d);
	check_qwait(&d);
	check_poll(&d);
	check_fork(&d);
	check_culprit(&d);
	check_user_ring(&d, self, peer);
	check_loopback(self);
	check_throttle(peer, a, k);
}

static const char usage[] =
	"usage: abi_contract static | nometa ADDR | busy PEER |\n"
	"                    main PEER INFO SELF\n";

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 2 && !strcmp(argv[1], "static"))
		do_static();
	else if (argc == 3 && !strcmp(argv[1], "nometa"))
		do_nometa(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "busy"))
		do_busy(argv[2]);
	else if (argc == 5 && !strcmp(argv[1], "main"))
		do_main(argv[2], argv[3], argv[4]);
	else
		return fputs(usage, stderr), 2;
	printf("abi_contract: %s: %d failure(s)\n", argv[1], failures);
	return failures ? 1 : 0;
}
