// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_lkey - an lkey is its process's alone: a forked child that posts
 * with its parent's valid lkey (the memory mapped in the child too) is
 * refused with ENOKEY (reason LKEY), while the parent uses the same key
 * at the same time; the child's own registration works.
 *
 *   dp_lkey ADDR INFO
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dp/helpers.h"

/* The child: refused with the parent's @mr, served with its own. */
static void __attribute__((noreturn))
lkey_child(const char *addr, const struct dp_remote *r,
	   uint8_t *buf, const struct krc_mr *mr, int in, int out)
{
	struct krc_vq *cv = dp_connect(addr);
	const struct krcore_qpush *res;
	struct krcore_cqe c;
	struct krcore_wr wr;
	struct krc_mr own;
	char b;
	int n;

	/* buf is mapped here too (copy on write): only the key is foreign. */
	fill(&wr, KRCORE_WR_READ, buf, mr->lkey, 64, r->addr, r->rkey, 2);
	n = krc_qpush(cv, &wr, 1);
	res = krc_qpush_result(cv);
	if (n != -ENOKEY || res->done || res->reason != KRCORE_R_LKEY)
		FAIL("lkey: parent's lkey %#x in a child: ret %d reason %u, want ENOKEY",
		     mr->lkey, n, res->reason);
	if (write(out, "t", 1) != 1 || read(in, &b, 1) != 1)
		_exit(1);
	if (krc_reg_mr(cv, buf + 4096, 4096, KRCORE_ACCESS_LOCAL_WRITE,
		       &own) < 0)
		_exit(1);
	fill(&wr, KRCORE_WR_READ, buf + 4096, own.lkey, 64, r->addr,
	     r->rkey, 3);
	if (dp_one(cv, &wr, &c) || buf[4096] != tp_pattern(0))
		FAIL("lkey: the child's own lkey: %s",
		     krc_wc_status_str(c.status));
	_exit(dp_status());
}

static int do_lkey(const char *addr, const struct dp_remote *r)
{
	struct krc_vq *vq = dp_connect(addr);
	uint8_t *buf = tp_xalloc(8192);
	struct krcore_cqe c;
	struct krcore_wr wr;
	struct krc_mr mr;
	int st, p2c[2], c2p[2];
	char b;
	pid_t pid;

	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr) < 0 ||
	    pipe(p2c) || pipe(c2p))
		return 1;
	fill(&wr, KRCORE_WR_READ, buf, mr.lkey, 64, r->addr, r->rkey, 1);
	if (dp_one(vq, &wr, &c))
		FAIL("lkey: the owner's READ: %s", krc_wc_status_str(c.status));
	pid = fork();
	if (pid == 0)
		lkey_child(addr, r, buf, &mr, p2c[0], c2p[1]);
	if (pid < 0 || read(c2p[0], &b, 1) != 1)
		return 1;
	/* The key is valid: its owner uses it while the child was refused. */
	memset(buf, 0, 64);
	fill(&wr, KRCORE_WR_READ, buf, mr.lkey, 64, r->addr, r->rkey, 4);
	if (dp_one(vq, &wr, &c) || buf[0] != tp_pattern(0))
		FAIL("lkey: the owner's READ after the refusal: %s",
		     krc_wc_status_str(c.status));
	if (write(p2c[1], "g", 1) != 1 || waitpid(pid, &st, 0) != pid ||
	    !WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("lkey: the child failed");
	if (!dp_failures)
		printf(DP_TAG ": lkey: another process's valid lkey %#x: ENOKEY/LKEY\n",
		       mr.lkey);
	krc_vq_close(vq);
	return dp_status();
}

int main(int argc, char **argv)
{
	return dp_run(argc, argv, "dp_lkey ADDR INFO", do_lkey);
}
