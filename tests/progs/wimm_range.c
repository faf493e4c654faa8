// SPDX-License-Identifier: BSD-2-Clause
/*
 * wimm_range - a WRITE_IMM whose range is partly outside the memory its
 * rkey names (tests/cluster/t_dg_hostile.sh).
 *
 *   wimm_range serve PORT INFO SECS
 *       a VQ bound to PORT and 64 KiB of zeros registered for remote
 *       write, "addr rkey" in INFO; for SECS seconds prints each message
 *       that arrives ("wimm_range: message imm=0xNNNN") and then
 *       "wimm_range: messages=N written=B head=H" (B: bytes no longer
 *       zero; H: of them, in the first 16 KiB)
 *   wimm_range send PEER PORT INFO
 *       WRITE_IMM of 8 KiB of 0xab from 4 KiB before the served memory
 *       (imm 0x1234: its last 4 KiB would land in the first 16 KiB),
 *       then one at 32 KiB into it (imm 0x4321):
 *       "wimm_range: straddling status=N inside status=M"
 * An RDMA responder refuses the first one whole (no byte written, no
 * immediate delivered): the server must see one message, 8 KiB written,
 * none of them in its first 16 KiB.
 */
#include <sys/stat.h>

#include "tp.h"

#define SRV_LEN	(64u * 1024u)
#define LEN	(8u * 1024u)

static int serve(unsigned int port, const char *info, unsigned int secs)
{
	char tmp[512];
	struct krc_msg msg;
	struct krc_vq *vq;
	struct krc_mr mr;
	unsigned int n = 0, written = 0, head = 0, i;
	uint64_t end;
	uint8_t *buf;
	FILE *f;

	if (krc_vq_open(&vq) < 0 || krc_qbind(vq, (uint16_t)port) < 0)
		tp_die("wimm_range: %s", krc_errmsg());
	buf = tp_reg(vq, SRV_LEN, KRCORE_ACCESS_LOCAL_WRITE |
		     KRCORE_ACCESS_REMOTE_WRITE, &mr);
	snprintf(tmp, sizeof(tmp), "%s.tmp", info);
	f = fopen(tmp, "w");
	if (!f)
		tp_die("wimm_range: %s", tmp);
	fprintf(f, "%llx %x\n", (unsigned long long)(uintptr_t)buf, mr.rkey);
	fclose(f);
	rename(tmp, info);
	end = tp_now_ms() + (uint64_t)secs * 1000;
	while (tp_now_ms() < end) {
		int ret = krc_qpop_msg_wait(vq, &msg, 200);

		if (ret == 1) {
			printf("wimm_range: message imm=0x%04x\n", msg.imm_data);
			fflush(stdout);
			n++;
			krc_qmsg_done(vq);
		}
	}
	for (i = 0; i < SRV_LEN; i++) {
		written += buf[i] != 0;
		head += i < 16384 && buf[i];
	}
	printf("wimm_range: messages=%u written=%u head=%u\n", n, written,
	       head);
	krc_vq_close(vq);
	return 0;
}

static int send_two(const char *peer, unsigned int port, const char *info)
{
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	struct krc_vq *vq;
	struct krc_mr mr;
	uint32_t rkey, st[2] = { ~0u, ~0u };
	uint64_t raddr;
	uint8_t *buf;
	int k;

	tp_read_info(info, &raddr, &rkey);
	vq = tp_connect(peer, port, NULL);
	buf = tp_reg(vq, LEN, KRCORE_ACCESS_LOCAL_WRITE, &mr);
	memset(buf, 0xab, LEN);
	for (k = 0; k < 2; k++) {
		tp_wr(&wr, KRCORE_WR_WRITE_IMM, buf, mr.lkey, LEN,
		      k ? raddr + 32768 : raddr - 4096, rkey, k,
		      KRCORE_WR_SIGNALED);
		wr.imm_data = k ? 0x4321 : 0x1234;
		tp_push(vq, &wr, 1);
		if (tp_pop(vq, &cqe, 1, 60000) == 1)
			st[k] = cqe.status;
	}
	printf("wimm_range: straddling status=%u inside status=%u\n", st[0],
	       st[1]);
	krc_vq_close(vq);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "serve"))
		return serve((unsigned int)atoi(argv[2]), argv[3],
			     (unsigned int)atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "send"))
		return send_two(argv[2], (unsigned int)atoi(argv[3]), argv[4]);
	tp_die("usage: wimm_range serve PORT INFO SECS | send PEER PORT INFO");
}
