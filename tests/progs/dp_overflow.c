// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_overflow - a receive ring that is never read overflows without
 * harm: the spray side sends N messages to ADDR:FULL_PORT, a port bound
 * and never read, and M to ADDR:PORT, a port read as they come, in
 * interleaved bursts, every SEND completing. The sink side reads PORT's
 * M in order and intact; then FULL_PORT's ring holds its first `entries`
 * messages, in order and intact, and counts the others as dropped
 * ("sink: kept=K dropped=D entries=E"). The two sides meet through
 * DIR/sink.ready and DIR/spray.done.
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

/* Read @m messages from @live, each in order and intact. */
static int sink_live(struct krc_vq *live, uint32_t port, int m)
{
	double end = dp_now() + 300;
	struct krc_msg msg;
	int i, k;

	for (i = 0; i < m; ) {
		k = krc_qpop_msg_wait(live, &msg, 1000);
		if (k < 0) {
			FAIL("sink: %s", krc_errmsg());
			return -1;
		}
		if (k == 0) {
			if (dp_now() > end) {
				FAIL("sink: port %u: only %d of %d messages", port, i, m);
				return -1;
			}
			continue;
		}
		if (!msg_ok(&msg, (uint32_t)i))
			FAIL("sink: port %u: message %d wrong (len %u)", port, i,
			     msg.len);
		krc_qmsg_done(live);
		end = dp_now() + 120;
		i++;
	}
	return 0;
}

static int do_sink(uint32_t port, uint32_t fport, int n, int m,
		   const char *dir)
{
	struct krc_vq *full, *live;
	struct krcore_recv_ring h;
	struct krc_msg msg;
	int kept = 0;
	uint32_t dropped;
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
	dp_touch(dir, "sink.ready");
	if (sink_live(live, port, m))
		return 1;
	if (dp_wait_file(dir, "spray.done", 600))
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
	printf(DP_TAG ": sink: port %u: %d read in order; port %u: %d sent, ring %u\n",
	       port, m, fport, n, h.entries);
	printf("sink: kept=%d dropped=%u entries=%u\n", kept, dropped, h.entries);
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

static int do_spray(const char *addr, uint32_t port, uint32_t fport, int n,
		    int m, const char *dir)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq[2];
	int todo[2] = { n, m }, sent[2] = { 0, 0 }, v, i, burst;
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
		int want[2];

		/* Bursts of up to 8 per port, both ports at once. */
		for (v = 0; v < 2; v++) {
			want[v] = spray_burst(wr, buf + v * 16 * MSG_LEN, mr.lkey,
					      sent[v], todo[v] - sent[v]);
			if (want[v] &&
			    krc_qpush(vq[v], wr, (unsigned int)want[v]) != want[v]) {
				FAIL("spray: qpush of %d: %s", want[v], krc_errmsg());
				return 1;
			}
		}
		for (v = 0; v < 2; v++) {
			burst = dp_reap(vq[v], c, want[v], sent[v], 120);
			for (i = 0; i < burst; i++)
				if (c[i].status)
					FAIL("spray: SEND %d: %s", sent[v] + i,
					     krc_wc_status_str(c[i].status));
			sent[v] += want[v];
		}
	}
	printf(DP_TAG ": spray: %d SENDs to port %u, %d to port %u, all completed\n",
	       n, fport, m, port);
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
