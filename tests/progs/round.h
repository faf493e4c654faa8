/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * round.h - the checked round of the datagram and RC-cap tests
 * (dg_once seq, rc_cap): one batch [WRITE a value, READ it back, FAA +1]
 * into the buffer of a dp_serve process, all three completions checked.
 */
#ifndef KRC_TESTS_ROUND_H
#define KRC_TESTS_ROUND_H

#include <stdio.h>
#include <string.h>

#include "libkrcore.h"

#define SRV_SIZE	(4u << 20)		/* dp_serve's buffer */
#define SLOT_OFF	(SRV_SIZE - 512)	/* clear of the dp_* scenarios' areas */
#define COUNT_OFF	(SRV_SIZE - 1024)

/* An 8-byte signaled request on @local (FAA: add 1). */
static inline void round_wr(struct krcore_wr *w, uint8_t op, void *local,
			    uint32_t lkey, uint64_t raddr, uint32_t rkey,
			    uint64_t id)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = id;
	w->opcode = op;
	w->flags = KRCORE_WR_SIGNALED;
	w->num_sge = 1;
	w->remote_addr = raddr;
	w->rkey = rkey;
	w->sg_list[0].addr = (uintptr_t)local;
	w->sg_list[0].length = 8;
	w->sg_list[0].lkey = lkey;
	if (op == KRCORE_WR_ATOMIC_FAA)
		w->compare_add = 1;
}

/*
 * One round on @vq against the server buffer at @a (rkey @k): WRITE
 * @value, READ it back, FAA the counter; buf[3] registered (@lkey).
 * *faa gets what the FAA returned (the caller checks the sequence).
 * Returns the number of wrong checks (each printed, prefixed @who), or
 * -1 when a call failed or no completion came in 60 s.
 */
static inline int round_run(const char *who, struct krc_vq *vq, uint64_t *buf,
			    uint32_t lkey, uint64_t a, uint32_t k,
			    uint64_t value, uint64_t *faa)
{
	struct krcore_cqe cqe[3];
	struct krcore_wr wr[3];
	int got, m, j, bad = 0;

	buf[0] = value;
	buf[1] = 0;
	round_wr(&wr[0], KRCORE_WR_WRITE, &buf[0], lkey, a + SLOT_OFF, k, 1);
	round_wr(&wr[1], KRCORE_WR_READ, &buf[1], lkey, a + SLOT_OFF, k, 2);
	round_wr(&wr[2], KRCORE_WR_ATOMIC_FAA, &buf[2], lkey, a + COUNT_OFF,
		 k, 3);
	if (krc_qpush(vq, wr, 3) != 3) {
		fprintf(stderr, "%s: %s\n", who, krc_errmsg());
		return -1;
	}
	for (got = 0; got < 3; got += m) {
		m = krc_qpop_wait(vq, cqe + got, 3 - got, 60000);
		if (m <= 0) {
			fprintf(stderr, "%s: no completion\n", who);
			return -1;
		}
	}
	for (j = 0; j < 3; j++) {
		if (cqe[j].wr_id != (uint64_t)j + 1 || cqe[j].status) {
			fprintf(stderr, "%s: cqe %d: wr_id %llu, %s\n", who, j,
				(unsigned long long)cqe[j].wr_id,
				krc_wc_status_str(cqe[j].status));
			bad++;
		}
	}
	if (buf[1] != value) {
		fprintf(stderr, "%s: READ after WRITE gave %llx\n", who,
			(unsigned long long)buf[1]);
		bad++;
	}
	*faa = buf[2];
	return bad;
}

#endif
