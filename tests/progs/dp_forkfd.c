// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_forkfd - a VQ descriptor is its process's alone: a child inherits
 * it with the parent's READs in flight; every request of the child
 * (QPUSH, REG_MR, DEREG_MR of the parent's key) is refused with EACCES,
 * then it closes the descriptor and exits. The parent's N READs go on:
 * every completion in order with its data, its registration intact, no
 * recovery.
 *
 *   dp_forkfd ADDR INFO N
 */
#include <errno.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dp/helpers.h"

/* The child: each of its requests on the inherited VQ must be refused. */
static void __attribute__((noreturn))
forkfd_child(struct krc_vq *vq, struct krcore_wr *wr, uint8_t *buf,
	     const struct krc_mr *mr)
{
	int fd = krc_vq_fd(vq), bad = 0;
	struct krcore_qpush qp = {
		.wrs = (uintptr_t)wr, .count = 1,
	};
	struct krcore_reg_mr rm = {
		.addr = (uintptr_t)buf, .length = 4096,
		.access = KRCORE_ACCESS_LOCAL_WRITE,
	};
	struct krcore_dereg_mr dm = { .lkey = mr->lkey };

	if (ioctl(fd, KRCORE_IOC_QPUSH, &qp) != -1 || errno != EACCES)
		bad |= 1;
	if (ioctl(fd, KRCORE_IOC_REG_MR, &rm) != -1 || errno != EACCES)
		bad |= 2;
	if (ioctl(fd, KRCORE_IOC_DEREG_MR, &dm) != -1 || errno != EACCES)
		bad |= 4;
	close(fd);
	_exit(bad);
}

/* The parent's completions @c[0..@n): in order from @done, data right. */
static int forkfd_check(const struct krcore_cqe *c, int n, int done,
			const uint8_t *buf)
{
	int i, k;

	for (i = 0; i < n; i++, done++) {
		uint32_t off = (uint32_t)((uint64_t)done * 64 % (HALF - 64));

		if (c[i].wr_id != (uint64_t)done || c[i].status) {
			FAIL("forkfd: parent: completion %llu %s, expected %d",
			     (unsigned long long)c[i].wr_id,
			     krc_wc_status_str(c[i].status), done);
			return -1;
		}
		for (k = 0; k < 64; k++)
			if (buf[(done % 8) * 64 + k] != tp_pattern(off + k)) {
				FAIL("forkfd: parent: READ %d wrong data", done);
				return -1;
			}
	}
	return 0;
}

static int do_forkfd(const char *addr, const struct dp_remote *r, int total)
{
	struct krcore_qconnect qc;
	struct krc_vq *vq = tp_connect(addr, 0, &qc);
	struct krc_mr mr;
	uint8_t *buf = dp_reg(vq, 1 << 16, &mr);
	int posted = 0, done = 0, n, st, forked_at = -1;
	struct krcore_cqe c[16];
	struct krcore_wr wr;
	pid_t pid = -1;

	if (!buf)
		return 1;
	while (done < total) {
		while (posted < total && posted - done < 8) {
			fill(&wr, KRCORE_WR_READ, buf + (posted % 8) * 64, mr.lkey,
			     64, r->addr + (uint64_t)posted * 64 % (HALF - 64),
			     r->rkey, (uint64_t)posted);
			n = krc_qpush(vq, &wr, 1);
			if (n == -EAGAIN)
				break;
			if (n != 1) {
				FAIL("forkfd: parent qpush: %s", krc_errmsg());
				return 1;
			}
			posted++;
		}
		if (pid < 0 && posted > done && done >= total / 4) {
			forked_at = done;
			pid = fork();
			if (pid == 0)
				forkfd_child(vq, &wr, buf, &mr);
			if (pid < 0)
				return 1;
		}
		n = krc_qpop_wait(vq, c, 16, 30000);
		if (n <= 0) {
			FAIL("forkfd: parent: no completion (%d in flight)",
			     posted - done);
			return 1;
		}
		if (forkfd_check(c, n, done, buf))
			return 1;
		done += n;
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		FAIL("forkfd: the child's requests were not all refused with EACCES (%#x)",
		     pid < 0 ? -1 : st);
	/* The parent's registration survived the child's DEREG_MR and exit. */
	if (krc_read_sync(vq, buf, mr.lkey, 64, r->addr, r->rkey, 20000) ||
	    buf[0] != tp_pattern(0))
		FAIL("forkfd: the parent's registration: %s", krc_errmsg());
	if (dp_ring_header(vq, qc.ring_size).recoveries != 0)
		FAIL("forkfd: the parent's connection was recovered");
	if (!dp_failures)
		printf(DP_TAG ": forkfd: child refused at READ %d of %d; %d in order, ok\n",
		       forked_at, total, done);
	krc_vq_close(vq);
	return dp_status();
}

int main(int argc, char **argv)
{
	struct dp_remote r;

	if (dp_args(argc, argv, 4, "dp_forkfd ADDR INFO N", &r))
		return 2;
	return do_forkfd(argv[1], &r, atoi(argv[3]));
}
