// SPDX-License-Identifier: BSD-2-Clause
/*
 * krc_example - libkrcore in one page.
 *
 *   krc_example serve FILE        register 64 KiB, write "addr rkey" to FILE,
 *                                 wait (Ctrl-C to stop)
 *   krc_example read ADDR FILE    connect to node ADDR, READ and WRITE the
 *                                 buffer FILE names, with the synchronous
 *                                 helpers and with a batch
 *
 * Build: cc krc_example.c $(pkg-config --cflags --libs libkrcore)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libkrcore.h>

#define SIZE	65536

static int die(const char *what)
{
	fprintf(stderr, "krc_example: %s: %s\n", what, krc_errmsg());
	return 1;
}

static int serve(const char *file)
{
	static char buf[SIZE];
	struct krc_vq *vq;
	struct krc_mr mr;
	FILE *f;

	/* A VQ is the handle to krcore; registrations belong to the process. */
	if (krc_vq_open(&vq) < 0)
		return die("open");
	strcpy(buf, "hello from krcore");
	if (krc_reg_mr(vq, buf, SIZE, KRCORE_ACCESS_REMOTE_READ |
		       KRCORE_ACCESS_REMOTE_WRITE, &mr) < 0)
		return die("register");
	f = fopen(file, "w");
	if (!f || fprintf(f, "%lx %x\n", (unsigned long)buf, mr.rkey) < 0 ||
	    fclose(f)) {
		fprintf(stderr, "krc_example: cannot write %s: %s\n", file,
			strerror(errno));
		return 1;
	}
	printf("serving %d bytes at %p, rkey %#x\n", SIZE, (void *)buf, mr.rkey);
	for (;;)
		pause();
}

static int client(const char *addr, const char *file)
{
	static char local[SIZE];
	struct krcore_qconnect qc;
	struct krcore_wr wr[4];
	struct krcore_cqe cqe[4];
	unsigned long raddr;
	unsigned int rkey;
	struct krc_vq *vq;
	struct krc_mr mr;
	char path[64];
	int i, n, got;
	FILE *f;

	/* The file 'krc_example serve FILE' wrote on the serving node. */
	f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "krc_example: cannot read %s: %s (see 'krc_example serve')\n",
			file, strerror(errno));
		return 1;
	}
	n = fscanf(f, "%lx %x", &raddr, &rkey);
	fclose(f);
	if (n != 2) {
		fprintf(stderr, "krc_example: %s: not \"ADDR RKEY\" (see 'krc_example serve')\n",
			file);
		return 1;
	}

	/* 1. A VQ connected to the node: microseconds if the pool has it. */
	if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, addr, 0, &qc) < 0)
		return die("connect");
	printf("connected to %s: path %s, %.1f us in the kernel\n", addr,
	       krc_path_str(qc.path, path, sizeof(path)), qc.elapsed_ns / 1e3);

	/* 2. Local memory for the requests, zero-copy. */
	if (krc_reg_mr(vq, local, SIZE, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0)
		return die("register");

	/* 3. Synchronous helpers: one request, wait for it. */
	if (krc_read_sync(vq, local, mr.lkey, 32, raddr, rkey, 5000) < 0)
		return die("read");
	printf("read: \"%s\"\n", local);
	strcpy(local, "written by krc_example");
	if (krc_write_sync(vq, local, mr.lkey, 32, raddr + 4096, rkey, 5000) < 0)
		return die("write");

	/* 4. A batch in one system call; completions without one. */
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 4; i++) {
		wr[i].wr_id = i;
		wr[i].opcode = KRCORE_WR_READ;
		wr[i].flags = KRCORE_WR_SIGNALED;
		wr[i].num_sge = 1;
		wr[i].sg_list[0].addr = (unsigned long)(local + 1024 * (i + 1));
		wr[i].sg_list[0].length = 32;
		wr[i].sg_list[0].lkey = mr.lkey;
		wr[i].remote_addr = i % 2 ? raddr + 4096 : raddr;
		wr[i].rkey = rkey;
	}
	n = krc_qpush(vq, wr, 4);
	if (n < 0)
		return die("qpush");
	for (got = 0; got < n; got += i) {
		i = krc_qpop_wait(vq, cqe, 4, 5000);
		if (i <= 0)
			return die("qpop");
	}
	printf("batch of %d READs done: \"%s\", \"%s\"\n", n, local + 1024,
	       local + 2048);

	/* 5. Errors are -errno plus a sentence. */
	wr[0].opcode = 42;
	if (krc_qpush(vq, wr, 1) < 0)
		printf("a bad request is refused: %s\n", krc_errmsg());
	krc_vq_close(vq);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "read"))
		return client(argv[2], argv[3]);
	fprintf(stderr, "usage: krc_example serve FILE | read ADDR FILE\n");
	return 2;
}
