// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_msg - two-sided messages arrive whole and are answered: the echo
 * side binds PORT and sends back each of N messages to its sender's node
 * and port (for a WRITE_IMM: the bytes written into its buffer, which it
 * publishes in INFO); the ping side binds PORT + 1 and sends N - 1
 * messages (SEND and SEND_IMM, 1 B to KRCORE_MAX_SEND) and one WRITE_IMM
 * to ADDR:PORT, and checks each echo's length, opcode, immediate and
 * bytes.
 *
 *   dp_msg echo PORT N INFO
 *   dp_msg ping ADDR PORT N INFO
 *   dp_msg drain PORT        (binds PORT, consumes everything until killed)
 *   dp_msg hold PORT SECS DIR  (binds PORT, reads nothing, exits after SECS)
 *   dp_msg flood ADDR PORT N (sends, waiting for slots, until one fails)
 *   dp_msg twice ADDR PORT DIR (a send, then one after the receiver left)
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dp/helpers.h"

#define USAGE	"dp_msg echo PORT N INFO | ping ADDR PORT N INFO | drain PORT | hold PORT SECS DIR | flood ADDR PORT N | twice ADDR PORT DIR"

static int send_one(struct krc_vq *vq, const struct krc_mr *mr, uint32_t len,
		    uint8_t op, uint32_t imm, uint64_t id)
{
	struct krcore_cqe cqe;
	struct krcore_wr wr;

	fill(&wr, op, mr->addr, mr->lkey, len, 0, 0, id);
	wr.imm_data = imm;
	return dp_one(vq, &wr, &cqe);
}

static int do_echo(int port, int n, const char *info)
{
	struct krc_vq *rx, *tx = NULL;
	uint8_t *buf = tp_xalloc(8192);
	struct krcore_qconnect qc;
	struct krc_msg m;
	struct krc_mr mr;
	int i, st;

	if (krc_vq_open(&rx) < 0 || krc_qbind(rx, (uint16_t)port) < 0 ||
	    krc_reg_mr(rx, buf, 8192, KRCORE_ACCESS_LOCAL_WRITE |
		       KRCORE_ACCESS_REMOTE_WRITE, &mr) < 0) {
		FAIL("echo: %s", krc_errmsg());
		return 1;
	}
	if (dp_put_info(info, buf + 4096, mr.rkey))
		return 1;
	printf(DP_TAG ": echo on port %d\n", port);
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
	printf(DP_TAG ": echoed %d messages, %u dropped\n", n, krc_msgs_dropped(rx));
	return dp_status();
}

/* Message @i of @n: what ping sends, and what its echo must be. */
static int ping_one(struct krc_vq *vq, const struct krc_mr *mr,
		    const struct dp_remote *r, int i, int n)
{
	uint32_t len = i == n - 1 ? KRCORE_MAX_SEND :
		       1 + (uint32_t)(i * 997) % KRCORE_MAX_SEND;
	uint8_t op = i % 2 ? KRCORE_WR_SEND_IMM : KRCORE_WR_SEND;
	uint32_t imm = 0xabc000u + (uint32_t)i;
	uint8_t *buf = mr->addr;
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	struct krc_msg m;
	int k;

	for (k = 0; k < (int)len; k++)
		buf[k] = (uint8_t)(k + i);
	if (i == n - 1) {
		/* WRITE_IMM: 16-bit immediate; echoed as a SEND_IMM */
		len = KRCORE_MAX_SEND;
		imm = 0x1234;
		fill(&wr, KRCORE_WR_WRITE_IMM, buf, mr->lkey, len, r->addr,
		     r->rkey, (uint64_t)i);
		wr.imm_data = imm;
		if (dp_one(vq, &wr, &cqe)) {
			FAIL("ping: WRITE_IMM failed: %u", cqe.status);
			return -1;
		}
		op = KRCORE_WR_SEND_IMM;
	} else if (send_one(vq, mr, len, op, imm, (uint64_t)i)) {
		FAIL("ping: send %d failed", i);
		return -1;
	}
	if (krc_qpop_msg_wait(vq, &m, 30000) != 1) {
		FAIL("ping: no echo of %d", i);
		return -1;
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
	return 0;
}

static int do_ping(const char *addr, int port, int n, const char *info)
{
	struct krc_vq *vq;
	uint8_t *buf = tp_xalloc(8192);
	struct krcore_qconnect qc;
	struct dp_remote r;
	struct krc_mr mr;
	int i;

	dp_read_info(info, &r);
	if (krc_vq_open(&vq) < 0 || krc_qbind(vq, (uint16_t)(port + 1)) < 0 ||
	    krc_qconnect(vq, addr, (uint32_t)port, &qc) < 0 ||
	    krc_reg_mr(vq, buf, 8192, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0) {
		FAIL("ping: %s", krc_errmsg());
		return 1;
	}
	for (i = 0; i < n; i++)
		if (ping_one(vq, &mr, &r, i, n))
			return 1;
	printf(DP_TAG ": %d messages echoed and checked\n", n);
	printf(DP_TAG ": SEND and SEND_IMM of 1 to %u bytes, a WRITE_IMM\n",
	       KRCORE_MAX_SEND);
	krc_vq_close(vq);
	return dp_status();
}

/* Bind PORT and consume whatever comes, until killed. */
static int do_drain(int port)
{
	struct krc_msg m;
	struct krc_vq *rx;
	int k;

	if (krc_vq_open(&rx) < 0 || krc_qbind(rx, (uint16_t)port) < 0) {
		FAIL("drain: %s", krc_errmsg());
		return 1;
	}
	printf(DP_TAG ": drain on port %d\n", port);
	fflush(stdout);
	for (;;) {
		k = krc_qpop_msg_wait(rx, &m, 1000);
		if (k < 0) {
			FAIL("drain: %s", krc_errmsg());
			return 1;
		}
		if (k)
			krc_qmsg_done(rx);
	}
}

/* Bind PORT, read nothing, say so in DIR/hold.ready, exit after SECS. */
static int do_hold(int port, int secs, const char *dir)
{
	struct krc_vq *rx;

	if (krc_vq_open(&rx) < 0 || krc_qbind(rx, (uint16_t)port) < 0) {
		FAIL("hold: %s", krc_errmsg());
		return 1;
	}
	dp_touch(dir, "hold.ready");
	sleep((unsigned int)secs);
	printf(DP_TAG ": hold: port %d closes after %d s\n", port, secs);
	fflush(stdout);
	return 0;	/* its VQ closes with the process */
}

/* Does poll(2) say the VQ can send a message to its port (POLLWRBAND)? */
static int wrband(struct krc_vq *vq)
{
	struct pollfd p = { .fd = krc_vq_fd(vq), .events = POLLWRBAND };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLWRBAND);
}

/* A VQ connected to ADDR:PORT with a 4 KiB registration; NULL: FAIL. */
static struct krc_vq *sender(const char *who, const char *addr, int port,
			     struct krc_mr *mr, uint8_t **buf)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq;

	if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, addr, (uint32_t)port, &qc) < 0) {
		FAIL("%s: %s", who, krc_errmsg());
		return NULL;
	}
	*buf = dp_reg(vq, 4096, mr);
	return *buf ? vq : NULL;
}

/*
 * Send up to N messages to ADDR:PORT one by one, waiting for a slot
 * (krc_qflow_wait) whenever there is none, until one fails: prints
 * "flood: sent=K waits=W error=E wait_ms=T wrband_blocked=B wrband_after=A ..."
 * (E: errno of the failure, 0 if all N went; T: how long the last wait
 * took; B: POLLWRBAND when last held back, A: after the failure;
 * push_after=P: the errno of one more qpush after it).
 */
static int do_flood(const char *addr, int port, int n)
{
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	struct krc_vq *vq;
	struct krc_mr mr;
	uint8_t *buf;
	int sent = 0, waits = 0, err = 0, k, band_blocked = -1, band_after = -1;
	int push_after = -1;
	double t = 0, wait_ms = 0;

	vq = sender("flood", addr, port, &mr, &buf);
	if (!vq)
		return 1;
	while (sent < n) {
		fill(&wr, KRCORE_WR_SEND, buf, mr.lkey, 64, 0, 0, (uint64_t)sent);
		k = krc_qpush(vq, &wr, 1);
		if (k == 1) {
			if (krc_qpop_wait(vq, &cqe, 1, 20000) != 1 || cqe.status) {
				FAIL("flood: SEND %d did not complete", sent);
				return 1;
			}
			sent++;
			continue;
		}
		if (k != -EAGAIN) {
			err = -k;
			break;
		}
		/*
		 * No slot: poll must not say a message can go. (At an early
		 * EAGAIN a grant may come before the poll: the last one,
		 * with the ring full, is the one that counts.)
		 */
		band_blocked = wrband(vq);
		waits++;
		t = dp_now();
		k = krc_qflow_wait(vq, 120000);
		wait_ms = (dp_now() - t) * 1000;
		if (k < 0) {
			err = -k;
			break;
		}
	}
	/* Refused: poll says so, and the next qpush fails at once. */
	if (err) {
		band_after = wrband(vq);
		fill(&wr, KRCORE_WR_SEND, buf, mr.lkey, 64, 0, 0, (uint64_t)sent);
		k = krc_qpush(vq, &wr, 1);
		push_after = k < 0 ? -k : 0;
	}
	printf("flood: sent=%d waits=%d error=%d wait_ms=%.0f", sent, waits, err,
	       wait_ms);
	printf(" wrband_blocked=%d wrband_after=%d push_after=%d\n",
	       band_blocked, band_after, push_after);
	krc_vq_close(vq);
	return dp_status();
}

/*
 * One message to ADDR:PORT, then DIR/twice.sent; once DIR/twice.closed
 * appears (its receiver went away) and 3 s passed, one more: prints
 * "twice: first=E1 second=E2" (errno of each send, 0: sent).
 */
static int do_twice(const char *addr, int port, const char *dir)
{
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	struct krc_vq *vq;
	struct krc_mr mr;
	uint8_t *buf;
	int e[2], i, k;

	vq = sender("twice", addr, port, &mr, &buf);
	if (!vq)
		return 1;
	for (i = 0; i < 2; i++) {
		if (i) {
			if (dp_wait_file(dir, "twice.closed", 120))
				return 1;
			sleep(3);
		}
		fill(&wr, KRCORE_WR_SEND, buf, mr.lkey, 64, 0, 0, (uint64_t)i);
		k = krc_qpush(vq, &wr, 1);
		e[i] = k == 1 ? 0 : -k;
		if (k == 1 && (krc_qpop_wait(vq, &cqe, 1, 20000) != 1 || cqe.status))
			FAIL("twice: send %d did not complete", i);
		if (!i)
			dp_touch(dir, "twice.sent");
	}
	printf("twice: first=%d second=%d\n", e[0], e[1]);
	krc_vq_close(vq);
	return dp_status();
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "twice"))
		return do_twice(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 5 && !strcmp(argv[1], "hold"))
		return do_hold(atoi(argv[2]), atoi(argv[3]), argv[4]);
	if (argc == 5 && !strcmp(argv[1], "flood"))
		return do_flood(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "drain"))
		return do_drain(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "echo"))
		return do_echo(atoi(argv[2]), atoi(argv[3]), argv[4]);
	if (argc == 6 && !strcmp(argv[1], "ping"))
		return do_ping(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]);
	return dp_usage(USAGE);
}
