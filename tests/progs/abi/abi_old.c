// SPDX-License-Identifier: BSD-2-Clause
/*
 * abi_old - a user of /dev/krcore built against an old ABI header (a frozen
 * copy of include/uapi/krcore.h, KRC_OLD_ABI = 2 or 3), with raw ioctls and
 * no libkrcore: the header promises that it runs on every later module.
 *
 *   abi_old ADDR
 * ADDR is a node registered with the MetaServer (this node's own address
 * works: a loopback connection). ABI 2: version, card, node info, lookup,
 * qconnect. ABI 3 adds memory registration, the completion ring, qpush (a
 * WRITE then a READ of the process's own memory through the connection,
 * data checked) and qwait. Prints "ok: STEP" or "FAIL: STEP: why" for
 * each; exits with the number of failures.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#if KRC_OLD_ABI == 2
#include "krcore_abi2.h"
#elif KRC_OLD_ABI == 3
#include "krcore_abi3.h"
#else
#error "KRC_OLD_ABI must be 2 or 3"
#endif

#if KRCORE_ABI_VERSION != KRC_OLD_ABI
#error "wrong frozen header"
#endif

static int failures;

static int step(const char *what, int ok, const char *why)
{
	if (ok) {
		printf("ok: %s\n", what);
		return 1;
	}
	printf("FAIL: %s: %s\n", what, why);
	failures++;
	return 0;
}

static int ioc(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

#if KRC_OLD_ABI >= 3
/* WRITE src to dst, READ dst back into back, through the connection. */
static void dataplane(int fd, const struct krcore_qconnect *qc)
{
	static char src[4096], dst[4096], back[4096];
	struct krcore_reg_mr rs = {}, rd = {}, rb = {};
	struct krcore_qpush push = {};
	struct krcore_qwait qw = {};
	struct krcore_ring *ring;
	unsigned int prod, cons;
	struct krcore_wr wr[2] = {};
	struct krcore_cqe *cqe;
	unsigned int seen = 0, i;
	void *mem;
	int ret;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (char)(i * 7 + KRC_OLD_ABI);
	rs.addr = (unsigned long)src;
	rs.length = sizeof(src);
	rs.access = KRCORE_ACCESS_LOCAL_WRITE;
	rd.addr = (unsigned long)dst;
	rd.length = sizeof(dst);
	rd.access = KRCORE_ACCESS_LOCAL_WRITE | KRCORE_ACCESS_REMOTE_READ |
		    KRCORE_ACCESS_REMOTE_WRITE;
	rb.addr = (unsigned long)back;
	rb.length = sizeof(back);
	rb.access = KRCORE_ACCESS_LOCAL_WRITE;
	ret = ioc(fd, KRCORE_IOC_REG_MR, &rs);
	if (!ret)
		ret = ioc(fd, KRCORE_IOC_REG_MR, &rd);
	if (!ret)
		ret = ioc(fd, KRCORE_IOC_REG_MR, &rb);
	if (!step("REG_MR (three buffers)", !ret, strerror(-ret)))
		return;
	mem = mmap(NULL, qc->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   KRCORE_MMAP_RING);
	if (!step("mmap of the completion ring", mem != MAP_FAILED &&
		  qc->ring_size, strerror(errno)))
		return;
	ring = mem;
	step("the ring's geometry", ring->entries &&
	     !(ring->entries & (ring->entries - 1)) && ring->size == qc->ring_size,
	     "entries or size");

	wr[0].wr_id = 1;
	wr[0].opcode = KRCORE_WR_WRITE;
	wr[0].num_sge = 1;
	wr[0].remote_addr = (unsigned long)dst;
	wr[0].rkey = rd.rkey;
	wr[0].sg_list[0].addr = (unsigned long)src;
	wr[0].sg_list[0].length = sizeof(src);
	wr[0].sg_list[0].lkey = rs.lkey;
	wr[1] = wr[0];
	wr[1].wr_id = 2;
	wr[1].opcode = KRCORE_WR_READ;
	wr[1].flags = KRCORE_WR_SIGNALED | KRCORE_WR_FENCE;
	wr[1].sg_list[0].addr = (unsigned long)back;
	wr[1].sg_list[0].lkey = rb.lkey;
	push.wrs = (unsigned long)wr;
	push.count = 2;
	ret = ioc(fd, KRCORE_IOC_QPUSH, &push);
	if (!step("QPUSH of a WRITE and a READ", ret == 2, strerror(ret < 0 ? -ret : EIO)))
		return;
	/* One completion: the signaled READ (the WRITE succeeded silently). */
	for (i = 0; i < 100 && !seen; i++) {
		qw.timeout_ms = 100;
		qw.available = 0;
		ret = ioc(fd, KRCORE_IOC_QWAIT, &qw);
		if (ret && ret != -ETIMEDOUT)
			break;
		seen = qw.available;
	}
	if (!step("QWAIT (the ABI's 8-byte structure)", !ret && seen >= 1,
		  ret ? strerror(-ret) : "no completion in 10 s"))
		return;
	prod = __atomic_load_n(&ring->producer, __ATOMIC_ACQUIRE);
	cons = __atomic_load_n(&ring->consumer, __ATOMIC_RELAXED);
	cqe = (struct krcore_cqe *)((char *)mem + ring->entry_offset) +
	      (cons & (ring->entries - 1));
	step("the completion is the READ's, successful",
	     prod - cons == 1 && cqe->wr_id == 2 &&
	     cqe->status == KRCORE_WC_SUCCESS, "wrong completion");
	__atomic_store_n(&ring->consumer, cons + 1, __ATOMIC_RELEASE);
	step("the WRITE wrote and the READ read the data",
	     !memcmp(src, dst, sizeof(src)) && !memcmp(src, back, sizeof(src)),
	     "data differs");
	munmap(mem, qc->ring_size);
}
#endif

int main(int argc, char **argv)
{
	struct krcore_version v = {};
	struct krcore_card card = {};
	struct krcore_node_info ni = {};
	struct krcore_lookup lk = {};
	struct krcore_qconnect qc = {};
	struct in_addr ip;
	int fd, ret;

	if (argc != 2 || inet_pton(AF_INET, argv[1], &ip) != 1) {
		fprintf(stderr, "usage: abi_old IPV4-ADDR\n");
		return 2;
	}
	printf("built against ABI %d\n", KRCORE_ABI_VERSION);
	fd = open(KRCORE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (!step("open", fd >= 0, strerror(errno)))
		return failures;
	ret = ioc(fd, KRCORE_IOC_VERSION, &v);
	step("VERSION: the module's ABI is at least ours",
	     !ret && v.abi_version >= KRCORE_ABI_VERSION, strerror(-ret));
	printf("module ABI %u\n", v.abi_version);
	ret = ioc(fd, KRCORE_IOC_QUERY_CARD, &card);
	step("QUERY_CARD", !ret && card.card_version == KRCORE_CARD_VERSION,
	     strerror(-ret));
	ret = ioc(fd, KRCORE_IOC_NODE_INFO, &ni);
	step("NODE_INFO: the control plane is up",
	     !ret && (ni.flags & KRCORE_NODE_F_UP), strerror(-ret));

	memset(lk.gid + 10, 0xff, 2);
	memcpy(lk.gid + 12, &ip, 4);
	lk.flags = KRCORE_LOOKUP_F_NOCACHE;
	ret = ioc(fd, KRCORE_IOC_LOOKUP, &lk);
	step("LOOKUP: one READ of the MetaServer's table",
	     !ret && lk.reads >= 1 && !memcmp(lk.card.gid, lk.gid, 16),
	     strerror(-ret));
	memcpy(qc.gid, lk.gid, 16);
	ret = ioc(fd, KRCORE_IOC_QCONNECT, &qc);
	if (step("QCONNECT", !ret && qc.path && !memcmp(qc.card.gid, qc.gid, 16),
		 strerror(-ret))) {
#if KRC_OLD_ABI >= 3
		dataplane(fd, &qc);
#endif
	}
	close(fd);
	printf("%d failure(s)\n", failures);
	return failures;
}
