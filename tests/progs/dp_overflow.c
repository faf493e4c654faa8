// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_overflow - a receive ring that is not read holds back only its own
 * senders, and loses nothing: the spray side sends N messages to
 * ADDR:FULL_PORT, a port bound and not read for now, and M to ADDR:PORT,
 * a port read as they come, in interleaved bursts. PORT's M all arrive,
 * in order and intact, while FULL_PORT's sender is held back (qpush:
 * EAGAIN, reason KRCORE_R_NO_CREDIT) once the ring is full. Then the sink
 * reads FULL_PORT's ring, the sender waits for slots (krc_qflow_wait) and
 * goes on, and all N arrive in order and intact, none dropped
 * ("sink: full_at_block=F kept=K dropped=D entries=E",
 * "spray: blocked=B waits=W"). The two sides meet through DIR/sink.ready,
 * DIR/spray.blocked and DIR/spray.done.
 *
 *   dp_overflow sink PORT FULL_PORT N M DIR
 *   dp_overflow spray ADDR PORT FULL_PORT N M DIR
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp/helpers.h"

#define USAGE	"dp_overflow sink PORT FULL_PORT N M DIR | spray ADDR PORT FULL_PORT N M DIR"
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

/* The receive ring of @vq mapped (its header first); its size in @sz. */
static void *map_recv_ring(struct krc_vq *vq, long *sz)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *hdr = MAP_FAILED;

	/* A mapping must have the ring's exact size: find it. */
	for (*sz = pg; hdr == MAP_FAILED && *sz <= 1024 * pg; *sz += pg)
		hdr = mmap(NULL, (size_t)*sz, PROT_READ, MAP_SHARED,
			   krc_vq_fd(vq), (off_t)pg * KRCORE_MMAP_RECV);
	*sz -= pg;
	return hdr;
}

/* Read @n messages from @vq, each in order and intact. */
static int sink_read(struct krc_vq *vq, uint32_t port, int n)
{
	double end = dp_now() + 300;
	struct krc_msg msg;
	int i, k;

	for (i = 0; i < n; ) {
		k = krc_qpop_msg_wait(vq, &msg, 1000);
		if (k < 0) {
			FAIL("sink: %s", krc_errmsg());
			return -1;
		}
		if (k == 0) {
			if (dp_now() > end) {
				FAIL("sink: port %u: only %d of %d messages", port, i, n);
				return -1;
			}
			continue;
		}
		if (!msg_ok(&msg, (uint32_t)i))
			FAIL("sink: port %u: message %d wrong (len %u)", port, i,
			     msg.len);
		krc_qmsg_done(vq);
		end = dp_now() + 120;
		i++;
	}
	return 0;
}

static int do_sink(uint32_t port, uint32_t fport, int n, int m,
		   const char *dir)
{
	struct krc_vq *full, *live;
	const struct krcore_recv_ring *h;
	uint32_t dropped, at_block = 0;
	double end;
	void *hdr;
	long sz;

	if (krc_vq_open(&full) < 0 || krc_qbind(full, (uint16_t)fport) < 0 ||
	    krc_vq_open(&live) < 0 || krc_qbind(live, (uint16_t)port) < 0) {
		FAIL("sink: %s", krc_errmsg());
		return 1;
	}
	hdr = map_recv_ring(full, &sz);
	if (hdr == MAP_FAILED) {
		FAIL("sink: mmap of the receive ring: %s", strerror(errno));
		return 1;
	}
	h = hdr;
	dp_touch(dir, "sink.ready");
	if (sink_read(live, port, m))
		return 1;
	/* The sender of FULL_PORT is held back: its ring is full, no more. */
	if (dp_wait_file(dir, "spray.blocked", 600))
		return 1;
	for (end = dp_now() + 30; dp_now() < end; usleep(10000)) {
		at_block = __atomic_load_n(&h->producer, __ATOMIC_ACQUIRE);
		if (at_block >= h->entries)
			break;
	}
	if (at_block != h->entries)
		FAIL("sink: the ring of %u held %u messages when its sender was held back",
		     h->entries, at_block);
	/* Now read it: the sender gets slots again and sends the rest. */
	if (sink_read(full, fport, n))
		return 1;
	dropped = krc_msgs_dropped(full);
	if (dropped)
		FAIL("sink: %u of port %u's messages dropped", dropped, fport);
	printf(DP_TAG ": sink: port %u: %d read in order; port %u: %d, once full\n",
	       port, m, fport, n);
	printf("sink: full_at_block=%u kept=%d dropped=%u entries=%u\n",
	       at_block, n, dropped, h->entries);
	munmap(hdr, (size_t)sz);
	krc_vq_close(full);
	krc_vq_close(live);
	return dp_status();
}

/* Up to 8 SENDs of sequence numbers @seq.. into @wr, from @buf. */
static int spray_burst(struct krcore_wr *wr, uint8_t *buf, uint32_t lkey,
		       int seq, int left)
{
	int want = left < 8 ? left : 8, i, k;

	for (i = 0; i < want; i++) {
		uint8_t *d = buf + i * MSG_LEN;
		uint32_t s = (uint32_t)(seq + i);

		memcpy(d, &s, 4);
		for (k = 4; k < MSG_LEN; k++)
			d[k] = mpat(s, k);
		fill(&wr[i], KRCORE_WR_SEND, d, lkey, MSG_LEN, 0, 0, s);
	}
	return want;
}

/*
 * Push @want of @wr on @vq: how many were posted (0 when the port has no
 * slot: *blocked counts it), or -1.
 */
static int spray_push(struct krc_vq *vq, struct krcore_wr *wr, int want,
		      int *blocked)
{
	int k = krc_qpush(vq, wr, (unsigned int)want);

	if (k == -EAGAIN &&
	    krc_qpush_result(vq)->reason == KRCORE_R_NO_CREDIT) {
		(*blocked)++;
		return 0;
	}
	if (k < 0) {
		FAIL("spray: qpush of %d: %s", want, krc_errmsg());
		return -1;
	}
	if (k < want && krc_qpush_result(vq)->reason == KRCORE_R_NO_CREDIT)
		(*blocked)++;
	return k;
}

static int do_spray(const char *addr, uint32_t port, uint32_t fport, int n,
		    int m, const char *dir)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq[2];
	int todo[2] = { n, m }, sent[2] = { 0, 0 }, blocked[2] = { 0, 0 };
	int v, i, k, waits = 0, told = 0;
	struct krcore_cqe c[64];
	struct krcore_wr wr[64];
	struct krc_mr mr;
	uint8_t *buf;

	if (dp_wait_file(dir, "sink.ready", 300))
		return 1;
	vq[0] = tp_connect(addr, fport, &qc);
	vq[1] = tp_connect(addr, port, &qc);
	buf = dp_reg(vq[0], 1 << 16, &mr);
	if (!buf)
		return 1;
	while (sent[0] < n || sent[1] < m) {
		int posted[2] = { 0, 0 };

		/* Bursts of up to 8 per port, both ports at once. */
		for (v = 0; v < 2; v++) {
			int want = spray_burst(wr, buf + v * 16 * MSG_LEN,
					       mr.lkey, sent[v],
					       todo[v] - sent[v]);

			if (!want)
				continue;
			k = spray_push(vq[v], wr, want, &blocked[v]);
			if (k < 0)
				return 1;
			posted[v] = k;
		}
		for (v = 0; v < 2; v++) {
			k = dp_reap(vq[v], c, posted[v], sent[v], 120);
			for (i = 0; i < k; i++)
				if (c[i].status)
					FAIL("spray: SEND %d: %s", sent[v] + i,
					     krc_wc_status_str(c[i].status));
			sent[v] += posted[v];
		}
		if (posted[0] || sent[0] == n)
			continue;
		/*
		 * FULL_PORT has no slot for us. Once PORT's messages are all
		 * sent, tell the sink (it then reads FULL_PORT), and wait.
		 */
		if (sent[1] < m)
			continue;
		if (!told) {
			dp_touch(dir, "spray.blocked");
			told = 1;
		}
		waits++;
		if (krc_qflow_wait(vq[0], 120000) <= 0) {
			FAIL("spray: no slot of port %u: %s", fport, krc_errmsg());
			return 1;
		}
	}
	if (!told)
		dp_touch(dir, "spray.blocked");	/* never held back */
	printf(DP_TAG ": spray: %d SENDs to port %u, %d to port %u, all completed\n",
	       n, fport, m, port);
	printf("spray: blocked=%d waits=%d live_blocked=%d\n", blocked[0], waits,
	       blocked[1]);
	dp_touch(dir, "spray.done");
	krc_vq_close(vq[0]);
	krc_vq_close(vq[1]);
	return dp_status();
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "sink"))
		return do_sink((uint32_t)atoi(argv[2]), (uint32_t)atoi(argv[3]),
			       atoi(argv[4]), atoi(argv[5]), argv[6]);
	if (argc == 8 && !strcmp(argv[1], "spray"))
		return do_spray(argv[2], (uint32_t)atoi(argv[3]),
				(uint32_t)atoi(argv[4]), atoi(argv[5]),
				atoi(argv[6]), argv[7]);
	return dp_usage(USAGE);
}
