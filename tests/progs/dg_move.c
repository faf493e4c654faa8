// SPDX-License-Identifier: BSD-2-Clause
/*
 * dg_move - a pipelined stream of every kind of request across a VQ's
 * move from the datagram path to RC (tests/cluster/t_dg_move.sh).
 *
 *   dg_move recv PORT SECS N
 *       a VQ bound to PORT: for SECS seconds (or until the message of
 *       request N - 1, the sender's last) takes 8-byte messages carrying
 *       sequence numbers and prints
 *       "dg_move: recv n=M in_order=K dups=D gaps=G last=L"
 *   dg_move send PEER INFO PORT N DEPTH
 *       a VQ to PEER (INFO: its dp_serve buffer; PORT: where recv
 *       listens) keeps DEPTH requests in flight until N have completed,
 *       request i being, by i % 4: a WRITE of i to slot (i/4) % 64 of the
 *       server's buffer, a READ of that slot back, a FAA +1 of a counter,
 *       a SEND of i to PORT. Checked as they complete, in posting order:
 *       every READ returns the value its WRITE wrote (none reordered),
 *       every FAA returns one more than the one before (none lost, none
 *       executed twice), every request succeeds; the receiver checks the
 *       SENDs. Prints
 *         dg_move: send n=N ok=K bad=B faa_first=F faa_last=L
 *                  dg_before=X dg_after=Y
 *       (dg_before / dg_after: whether the VQ was on datagrams when the
 *       stream started / ended, as 1 or 0) and exits 0 only if all held.
 */
#include <stdbool.h>

#include "tp.h"

#define SLOTS		64
#define SLOT_BASE	(TP_SRV_SIZE - 8192)	/* clear of the dp_* scenarios' areas */
#define COUNT_OFF	(TP_SRV_SIZE - 1024)
#define MAXDEPTH	64

static int on_dgram(struct krc_vq *vq, const uint8_t gid[16])
{
	struct krcore_peer_info pi;
	unsigned int i;

	for (i = 0; krc_peer_info(vq, i, &pi) == 0; i++)
		if (!memcmp(pi.card.gid, gid, 16))
			return pi.dgram_vqs > 0;
	return -1;
}

static int recv_loop(unsigned int port, unsigned int secs, uint64_t last)
{
	uint64_t end = tp_now_ms() + (uint64_t)secs * 1000, v, expect = 3;
	unsigned int n = 0, in_order = 0, dups = 0, gaps = 0;
	struct krc_msg msg;
	struct krc_vq *vq;

	if (krc_vq_open(&vq) < 0 || krc_qbind(vq, (uint16_t)port) < 0)
		tp_die("dg_move: %s", krc_errmsg());
	printf("dg_move: recv ready\n");
	fflush(stdout);
	while (tp_now_ms() < end) {
		if (krc_qpop_msg_wait(vq, &msg, 200) != 1)
			continue;
		if (msg.len != 8) {
			gaps++;
			krc_qmsg_done(vq);
			continue;
		}
		memcpy(&v, msg.data, 8);
		krc_qmsg_done(vq);
		n++;
		if (v == expect)
			in_order++;
		else if (v < expect)
			dups++;
		else
			gaps++;
		expect = v + 4;
		if (v == last)
			break;
	}
	printf("dg_move: recv n=%u in_order=%u dups=%u gaps=%u last=%llu\n", n,
	       in_order, dups, gaps, (unsigned long long)(expect - 4));
	krc_vq_close(vq);
	return 0;
}

struct pending {
	uint64_t i;
	uint8_t op;
};

static int send_loop(const char *peer, const char *info, unsigned int port,
		     uint64_t n, unsigned int depth)
{
	uint64_t raddr, posted = 0, done = 0, ok = 0, bad = 0, prev_faa = 0;
	uint64_t faa_first = 0, slotval[SLOTS];
	struct pending pend[MAXDEPTH];
	unsigned int head = 0, tail = 0;
	struct krcore_qconnect qc;
	struct krcore_cqe cqe[MAXDEPTH];
	struct krc_vq *vq;
	struct krc_mr mr;
	uint64_t *buf;
	uint32_t rkey;
	int before, after;

	tp_read_info(info, &raddr, &rkey);
	vq = tp_connect(peer, port, &qc);
	buf = tp_reg(vq, MAXDEPTH * 8 * 2, KRCORE_ACCESS_LOCAL_WRITE, &mr);
	before = on_dgram(vq, qc.card.gid);
	memset(slotval, 0, sizeof(slotval));
	while (done < n) {
		while (posted < n && tail - head < depth) {
			struct krcore_wr w;
			uint64_t i = posted;
			unsigned int b = tail % MAXDEPTH;
			uint64_t slot = SLOT_BASE + ((i / 4) % SLOTS) * 8;
			uint8_t op;

			switch (i % 4) {
			case 0:
				op = KRCORE_WR_WRITE;
				buf[b] = i;
				tp_wr(&w, op, &buf[b], mr.lkey, 8,
				      raddr + slot, rkey, i, KRCORE_WR_SIGNALED);
				break;
			case 1:
				op = KRCORE_WR_READ;
				buf[b] = ~0ULL;
				tp_wr(&w, op, &buf[b], mr.lkey, 8,
				      raddr + slot, rkey, i, KRCORE_WR_SIGNALED);
				break;
			case 2:
				op = KRCORE_WR_ATOMIC_FAA;
				tp_wr(&w, op, &buf[b], mr.lkey, 8,
				      raddr + COUNT_OFF, rkey, i,
				      KRCORE_WR_SIGNALED);
				w.compare_add = 1;
				break;
			default:
				op = KRCORE_WR_SEND;
				buf[b] = i;
				tp_wr(&w, op, &buf[b], mr.lkey, 8, 0, 0, i,
				      KRCORE_WR_SIGNALED);
				break;
			}
			if (krc_qpush(vq, &w, 1) != 1) {
				const struct krcore_qpush *r = krc_qpush_result(vq);

				if (r->error != EAGAIN)
					tp_die("dg_move: qpush %llu: %s",
					       (unsigned long long)i, krc_errmsg());
				/*
				 * A SEND without a slot of the receiver's, and
				 * nothing in flight whose completion could wake
				 * us: wait for the slot itself.
				 */
				if (r->reason == KRCORE_R_NO_CREDIT &&
				    tail == head &&
				    krc_qflow_wait(vq, 60000) < 0)
					tp_die("dg_move: no slot in 60 s (%llu of %llu done): %s",
					       (unsigned long long)done,
					       (unsigned long long)n, krc_errmsg());
				break;
			}
			pend[b].i = i;
			pend[b].op = op;
			tail++;
			posted++;
		}
		if (tail == head)
			continue;	/* nothing in flight: post again */
		{
			int got = krc_qpop_wait(vq, cqe, MAXDEPTH, 60000);
			int k;

			if (got <= 0)
				tp_die("dg_move: no completion in 60 s (%llu of %llu done)",
				       (unsigned long long)done,
				       (unsigned long long)n);
			for (k = 0; k < got; k++, head++, done++) {
				unsigned int b = head % MAXDEPTH;
				uint64_t i = pend[b].i;
				bool good = cqe[k].status == KRCORE_WC_SUCCESS &&
					    cqe[k].wr_id == i;

				if (good && pend[b].op == KRCORE_WR_WRITE)
					slotval[(i / 4) % SLOTS] = i;
				if (good && pend[b].op == KRCORE_WR_READ)
					good = buf[b] == slotval[(i / 4) % SLOTS];
				if (good && pend[b].op == KRCORE_WR_ATOMIC_FAA) {
					if (i == 2)
						faa_first = buf[b];
					else
						good = buf[b] == prev_faa + 1;
					prev_faa = buf[b];
				}
				if (good) {
					ok++;
				} else {
					bad++;
					if (bad <= 5)
						fprintf(stderr, "dg_move: request %llu (op %u): "
							"status %u wr_id %llu value %llu\n",
							(unsigned long long)i,
							pend[b].op, cqe[k].status,
							(unsigned long long)cqe[k].wr_id,
							(unsigned long long)buf[b]);
				}
			}
		}
	}
	after = on_dgram(vq, qc.card.gid);
	printf("dg_move: send n=%llu ok=%llu bad=%llu faa_first=%llu "
	       "faa_last=%llu dg_before=%d dg_after=%d\n",
	       (unsigned long long)n, (unsigned long long)ok,
	       (unsigned long long)bad, (unsigned long long)faa_first,
	       (unsigned long long)prev_faa, before, after);
	krc_vq_close(vq);
	return bad || ok != n ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "recv"))
		return recv_loop((unsigned int)atoi(argv[2]),
				 (unsigned int)atoi(argv[3]),
				 strtoull(argv[4], NULL, 0) - 1);
	if (argc == 7 && !strcmp(argv[1], "send")) {
		unsigned int depth = (unsigned int)atoi(argv[6]);

		if (!depth || depth > MAXDEPTH)
			tp_die("dg_move: 1 <= DEPTH <= %d", MAXDEPTH);
		return send_loop(argv[2], argv[3], (unsigned int)atoi(argv[4]),
				 strtoull(argv[5], NULL, 0), depth);
	}
	tp_die("usage: dg_move recv PORT SECS N | send PEER INFO PORT N DEPTH");
}
