// SPDX-License-Identifier: BSD-2-Clause
/*
 * vq_poll - poll(2) and epoll on a VQ's file descriptor (issue 8):
 *
 *   vq_poll SELF PORT
 *
 * On a VQ connected to this node: an empty ring is not readable; a
 * completion makes it readable (poll, level-triggered epoll); with
 * edge-triggered epoll every new completion is a new event even when the
 * ring was not drained; a message in the receive ring makes the binding VQ
 * readable; a connected VQ with room is writable. Exit 0 only if every
 * check held.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libkrcore.h"

static int failures;

#define FAIL(...) do { \
	fprintf(stderr, "vq_poll: FAIL: " __VA_ARGS__); \
	fputc('\n', stderr); \
	failures++; \
} while (0)

#define OK(...) do { \
	printf("vq_poll: ok: " __VA_ARGS__); \
	putchar('\n'); \
} while (0)

static void die(const char *what)
{
	fprintf(stderr, "vq_poll: %s: %s\n", what, krc_errmsg());
	exit(2);
}

static short poll_once(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (poll(&p, 1, timeout_ms) < 0)
		die("poll");
	return p.revents;
}

static void post_read(struct krc_vq *vq, char *buf, const struct krc_mr *mr,
		      uint64_t id)
{
	struct krcore_wr w;

	memset(&w, 0, sizeof(w));
	w.wr_id = id;
	w.opcode = KRCORE_WR_READ;
	w.flags = KRCORE_WR_SIGNALED;
	w.num_sge = 1;
	w.sg_list[0].addr = (uintptr_t)buf;
	w.sg_list[0].length = 64;
	w.sg_list[0].lkey = mr->lkey;
	w.remote_addr = (uintptr_t)buf + 4096;
	w.rkey = mr->rkey;
	if (krc_qpush(vq, &w, 1) != 1)
		die("qpush");
}

int main(int argc, char **argv)
{
	struct krcore_qconnect qc;
	struct krcore_cqe c[16];
	struct epoll_event ev, out[4];
	struct krc_vq *vq, *rx, *tx;
	struct krc_msg msg;
	struct krc_mr mr, tmr;
	int fd, ep, n, i, got;
	short re;
	char *buf;

	if (argc != 3) {
		fprintf(stderr, "usage: vq_poll SELF PORT\n");
		return 2;
	}
	if (krc_vq_open(&vq) || krc_qconnect(vq, argv[1], 0, &qc))
		die("connect");
	fd = krc_vq_fd(vq);
	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || krc_reg_mr(vq, buf, 8192,
					    KRCORE_ACCESS_LOCAL_WRITE |
					    KRCORE_ACCESS_REMOTE_READ, &mr))
		die("reg_mr");

	re = poll_once(fd, POLLIN | POLLOUT, 0);
	if (re != POLLOUT)
		FAIL("an idle connected VQ polls %#x, expected POLLOUT only", re);
	else
		OK("idle VQ: POLLOUT, not POLLIN");

	post_read(vq, buf, &mr, 1);
	re = poll_once(fd, POLLIN, 5000);
	if (!(re & POLLIN))
		FAIL("no POLLIN within 5 s of a completion (%#x)", re);
	else
		OK("a completion: POLLIN");
	if (krc_qpop(vq, c, 16) != 1)
		FAIL("the completion was not in the ring");
	re = poll_once(fd, POLLIN, 0);
	if (re & POLLIN)
		FAIL("POLLIN after the ring was drained");
	else
		OK("drained ring: no POLLIN");

	/* Level-triggered epoll. */
	ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.u32 = 1;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll");
	for (got = 0, i = 0; i < 20; i++) {
		post_read(vq, buf, &mr, 100 + i);
		n = epoll_wait(ep, out, 4, 5000);
		if (n != 1) {
			FAIL("epoll (level) returned %d for completion %d", n, i);
			break;
		}
		got += krc_qpop(vq, c, 16);
	}
	if (got == 20)
		OK("level-triggered epoll: 20 completions, each woke the waiter");
	else
		FAIL("level-triggered epoll: %d of 20 completions", got);
	n = epoll_wait(ep, out, 4, 0);
	if (n != 0)
		FAIL("level-triggered epoll reports an empty ring");

	/* Edge-triggered: a new completion is an event, drained or not. */
	ev.events = EPOLLIN | EPOLLET;
	if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev))
		die("epoll mod");
	for (i = 0; i < 10; i++) {
		post_read(vq, buf, &mr, 200 + i);
		n = epoll_wait(ep, out, 4, 5000);
		if (n != 1) {
			FAIL("edge-triggered epoll missed completion %d (%d)", i, n);
			break;
		}
	}
	got = 0;
	while (got < 10 && (n = krc_qpop(vq, c, 16)) > 0)
		got += n;
	if (i == 10 && got == 10)
		OK("edge-triggered epoll: 10 completions left in the ring, 10 events");
	else
		FAIL("edge-triggered epoll: %d events, %d completions", i, got);
	close(ep);

	/* The receive ring. */
	if (krc_vq_open(&rx) || krc_qbind(rx, (uint16_t)atoi(argv[2])))
		die("bind");
	if (poll_once(krc_vq_fd(rx), POLLIN, 0) & POLLIN)
		FAIL("an empty receive ring polls readable");
	if (krc_vq_open(&tx) || krc_qconnect(tx, argv[1], atoi(argv[2]), &qc) ||
	    krc_reg_mr(tx, buf, 8192, KRCORE_ACCESS_LOCAL_WRITE, &tmr))
		die("sender");
	{
		struct krcore_wr w;

		memset(&w, 0, sizeof(w));
		w.opcode = KRCORE_WR_SEND;
		w.num_sge = 1;
		w.sg_list[0].addr = (uintptr_t)buf;
		w.sg_list[0].length = 32;
		w.sg_list[0].lkey = tmr.lkey;
		if (krc_qpush(tx, &w, 1) != 1)
			die("send");
	}
	re = poll_once(krc_vq_fd(rx), POLLIN, 5000);
	if (!(re & POLLIN) || krc_qpop_msg(rx, &msg) != 1 || msg.len != 32)
		FAIL("a message did not make the receiver readable (%#x)", re);
	else
		OK("a message: POLLIN on the bound VQ");
	krc_qmsg_done(rx);
	krc_vq_close(tx);
	krc_vq_close(rx);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}
