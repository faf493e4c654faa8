// SPDX-License-Identifier: BSD-2-Clause
/*
 * dg_partial - one request longer than the datagram window, on the
 * datagram path (tests/cluster/t_dgram_partial.sh).
 *
 *   dg_partial PEER INFO read|write KB [FILL]
 *
 * One VQ to PEER (INFO: its dp_serve buffer), which must take the
 * datagram path; one READ of KB KiB from the server's pattern, or one
 * WRITE of KB KiB of the byte FILL (default 0x5a) to the second half of
 * its buffer (the first keeps the pattern). Prints
 *   dg_partial: path=dgram|rc status=N data=ok|bad|unchecked
 * (data: a successful READ compared with the server's pattern). Exits 0
 * when the request completed (whatever its status).
 */
#include "tp.h"

int main(int argc, char **argv)
{
	struct krcore_qconnect qc;
	struct krcore_cqe cqe;
	struct krcore_wr wr;
	const char *data = "unchecked";
	struct krc_vq *vq;
	struct krc_mr mr;
	uint32_t rkey, kb, i;
	int write, fill = 0x5a;
	uint64_t raddr;
	uint8_t *buf;

	if (argc < 5 || argc > 6)
		tp_die("usage: dg_partial PEER INFO read|write KB [FILL]");
	write = !strcmp(argv[3], "write");
	if (!write && strcmp(argv[3], "read"))
		tp_die("dg_partial: read or write");
	kb = (uint32_t)atoi(argv[4]);
	if (!kb || kb * 1024u > TP_SRV_HALF)
		tp_die("dg_partial: 1 <= KB <= %u", TP_SRV_HALF / 1024);
	if (argc == 6)
		fill = (int)strtol(argv[5], NULL, 0);
	tp_read_info(argv[2], &raddr, &rkey);
	vq = tp_connect(argv[1], 0, &qc);
	buf = tp_reg(vq, kb * 1024u, KRCORE_ACCESS_LOCAL_WRITE, &mr);
	memset(buf, write ? fill : 0, kb * 1024u);
	tp_wr(&wr, write ? KRCORE_WR_WRITE : KRCORE_WR_READ, buf, mr.lkey,
	      kb * 1024u, write ? raddr + TP_SRV_HALF : raddr, rkey, 7,
	      KRCORE_WR_SIGNALED);
	tp_push(vq, &wr, 1);
	if (tp_pop(vq, &cqe, 1, 120000) != 1)
		tp_die("dg_partial: no completion in 120 s");
	if (!write && cqe.status == KRCORE_WC_SUCCESS) {
		data = "ok";
		for (i = 0; i < kb * 1024u; i++)
			if (buf[i] != tp_pattern(i))
				data = "bad";
	}
	printf("dg_partial: path=%s status=%u data=%s\n",
	       qc.path & KRCORE_PATH_DATAGRAM ? "dgram" : "rc", cqe.status,
	       data);
	krc_vq_close(vq);
	return 0;
}
