// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_steady - traffic that must come through whatever happens beside it
 * (garbage, a bad rkey, broken connections): PROCS processes each keep 8
 * READs and WRITEs in flight until DIR/stop exists; every completion
 * must come in order (wr_id), succeed and name its opcode, every READ's
 * data be right, and each WRITE block hold its last WRITE at the end.
 * Each process writes DIR/ready.N once 16 requests completed: the id of
 * the pooled connection its VQ got (harden breakers aims at those).
 * REC is the recoveries each VQ may have seen: 0, 1+ or any.
 *
 *   dp_steady ADDR INFO DIR PROCS REC
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dp/helpers.h"

/* Region of the server's second half that steady process @me WRITEs. */
#define STEADY_OFF	(HALF + (3u << 19))
#define STEADY_BLOCKS	64

static const char *g_dir = ".";	/* ready and stop files */
static const char *g_rec = "any";	/* recoveries expected: 0, 1+, any */

static uint32_t steady_roff(int me, uint64_t id)
{
	return (uint32_t)(((uint64_t)me * 977 + id * 64) % (HALF - 64));
}

/* The remote address of WRITE block @block of process @me. */
static uint64_t steady_block(const struct dp_remote *r, int me, uint64_t block)
{
	return r->addr + STEADY_OFF + (uint64_t)me * 4096 + block * 64;
}

/* Completion @c of request @id: in order, successful, its data right. */
static int steady_check(int me, const struct krcore_cqe *c, uint64_t id,
			const uint8_t *rd)
{
	uint8_t op = id % 2 ? KRCORE_WR_WRITE : KRCORE_WR_READ;
	int k;

	if (c->wr_id != id || c->status || c->opcode != op ||
	    (op == KRCORE_WR_READ && c->byte_len != 64)) {
		FAIL("steady %d: cqe %llu %s op %u len %u, want %llu op %u",
		     me, (unsigned long long)c->wr_id,
		     krc_wc_status_str(c->status), c->opcode, c->byte_len,
		     (unsigned long long)id, op);
		return -1;
	}
	if (op == KRCORE_WR_WRITE)
		return 0;
	for (k = 0; k < 64; k++)
		if (rd[(id % 8) * 64 + k] != tp_pattern(steady_roff(me, id) + k)) {
			FAIL("steady %d: READ %llu: wrong byte %d",
			     me, (unsigned long long)id, k);
			return -1;
		}
	return 1;
}

/* What the WRITEs left behind: each block holds its last WRITE. */
static int steady_written(struct krc_vq *vq, const struct krc_mr *mr,
			  const struct dp_remote *r, int me, uint8_t *back,
			  const uint64_t *last)
{
	int i, k;

	if (krc_read_sync(vq, back, mr->lkey, STEADY_BLOCKS * 64,
			  steady_block(r, me, 0), r->rkey, 20000)) {
		FAIL("steady %d: read back: %s", me, krc_errmsg());
		return -1;
	}
	for (i = 0; i < STEADY_BLOCKS; i++) {
		if (last[i] == UINT64_MAX)
			continue;
		for (k = 0; k < 64; k++)
			if (back[i * 64 + k] != dp_wpat(me, last[i], k)) {
				FAIL("steady %d: block %d does not hold WRITE %llu",
				     me, i, (unsigned long long)last[i]);
				return -1;
			}
	}
	return 0;
}

static int steady_worker(const char *addr, const struct dp_remote *r, int me,
			 int unused)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq = tp_connect(addr, 0, &qc);
	struct krc_mr mr;
	uint8_t *rd = dp_reg(vq, 1 << 16, &mr), *src = rd ? rd + 4096 : NULL;
	uint64_t last[STEADY_BLOCKS], next_post = 0, next_done = 0;
	double t0 = dp_now(), stuck = 0;
	unsigned long reads = 0, writes = 0;
	struct krcore_cqe cqe[16];
	struct krcore_ring h;
	struct krcore_wr wr;
	char name[32];
	int n, i, k, ready = 0, stop = 0;

	memset(last, 0xff, sizeof(last));
	if (!rd)
		return 1;
	for (;;) {
		if (!stop)
			stop = dp_exists(g_dir, "stop");
		if (!stop && dp_now() - t0 > 900) {
			FAIL("steady %d: never told to stop", me);
			return 1;
		}
		while (!stop && next_post - next_done < 8) {
			uint64_t id = next_post;
			uint32_t slot = (uint32_t)(id % 8) * 64;

			if (id % 2 == 0) {
				fill(&wr, KRCORE_WR_READ, rd + slot, mr.lkey, 64,
				     r->addr + steady_roff(me, id), r->rkey, id);
			} else {
				for (k = 0; k < 64; k++)
					src[slot + k] = dp_wpat(me, id, k);
				fill(&wr, KRCORE_WR_WRITE, src + slot, mr.lkey, 64,
				     steady_block(r, me, (id / 2) % STEADY_BLOCKS),
				     r->rkey, id);
			}
			n = krc_qpush(vq, &wr, 1);
			if (n == -EAGAIN && next_post == next_done) {
				/* Recovering, nothing to wait for: retry a while. */
				if (!stuck)
					stuck = dp_now();
				if (dp_now() - stuck > 30) {
					FAIL("steady %d: EAGAIN (%s) for 30 s, none in flight",
					     me, krc_errmsg());
					return 1;
				}
				usleep(1000);
				continue;
			}
			stuck = 0;
			if (n == -EAGAIN)
				break;
			if (n != 1) {
				FAIL("steady %d: qpush: %s", me, krc_errmsg());
				return 1;
			}
			if (id % 2)
				last[(id / 2) % STEADY_BLOCKS] = id;
			next_post++;
		}
		if (next_post == next_done) {
			if (stop)
				break;
			continue;
		}
		n = krc_qpop_wait(vq, cqe, 16, 30000);
		if (n <= 0) {
			FAIL("steady %d: no completion (%llu in flight)", me,
			     (unsigned long long)(next_post - next_done));
			return 1;
		}
		for (i = 0; i < n; i++, next_done++) {
			k = steady_check(me, &cqe[i], next_done, rd);
			if (k < 0)
				return 1;
			if (k)
				reads++;
			else
				writes++;
		}
		if (!ready && next_done >= 16) {
			snprintf(name, sizeof(name), "ready.%d", me);
			dp_put_conn(g_dir, name, qc.conn_id);
			ready = 1;
		}
	}
	if (steady_written(vq, &mr, r, me, rd + 8192, last))
		return 1;
	h = dp_ring_header(vq, qc.ring_size);
	if ((!strcmp(g_rec, "0") && h.recoveries != 0) ||
	    (!strcmp(g_rec, "1+") && (h.recoveries < 1 || h.recoveries > 1000)))
		FAIL("steady %d: the VQ's connection was recovered %llu times, expected %s",
		     me, (unsigned long long)h.recoveries, g_rec);
	printf(DP_TAG ": steady %d: %lu READs, %lu WRITEs in order, data ok, recoveries=%llu\n",
	       me, reads, writes, (unsigned long long)h.recoveries);
	krc_vq_close(vq);
	return dp_status();
}

int main(int argc, char **argv)
{
	struct dp_remote r;

	if (dp_args(argc, argv, 6, "dp_steady ADDR INFO DIR PROCS 0|1+|any", &r))
		return 2;
	g_dir = argv[3];
	g_rec = argv[5];
	return dp_forked(atoi(argv[4]), steady_worker, argv[1], &r, 0);
}
