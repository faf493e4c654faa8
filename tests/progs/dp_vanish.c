// SPDX-License-Identifier: BSD-2-Clause
/*
 * dp_vanish - a peer that vanishes without a word fails its requests in
 * bounded time: PROCS processes keep 8 READs in flight (data checked)
 * until the peer is gone; then every outstanding request must complete
 * UNREACHABLE (none with another error, none succeed after), and the VQ
 * report that it lost its connection (qpush and QWAIT: ENOTCONN, poll:
 * POLLHUP). Each process touches DIR/vanish.N once running.
 *
 *   dp_vanish ADDR INFO DIR PROCS
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "dp/helpers.h"

static const char *g_dir = ".";	/* the vanish.N files */

/* How the VQ reports its lost connection: ENOTCONN, POLLHUP. */
static void vanish_lost(struct krc_vq *vq, struct krcore_wr *wr, int me)
{
	struct krcore_qwait w = { .timeout_ms = 0 };
	struct pollfd pfd;
	int n;

	n = krc_qpush(vq, wr, 1);
	if (n != -ENOTCONN)
		FAIL("vanish %d: qpush after the peer vanished: %d, expected ENOTCONN",
		     me, n);
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QWAIT, &w) != -1 || errno != ENOTCONN)
		FAIL("vanish %d: QWAIT after the peer vanished: %s, expected ENOTCONN",
		     me, strerror(errno));
	pfd.fd = krc_vq_fd(vq);
	pfd.events = POLLIN | POLLOUT;
	if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLHUP))
		FAIL("vanish %d: poll: revents %#x, expected POLLHUP", me,
		     pfd.revents);
}

static int vanish_worker(const char *addr, const struct dp_remote *r, int me,
			 int unused)
{
	struct krc_vq *vq = dp_connect(addr);
	struct krc_mr mr;
	uint8_t *buf = dp_reg(vq, 4096, &mr);
	uint64_t next_post = 0, next_done = 0;
	int n, i, k, ready = 0, lost = 0, other = 0;
	double t_fail = 0, t0 = dp_now();
	struct krcore_cqe c[16];
	struct krcore_wr wr;
	char name[32];

	if (!buf)
		return 1;
	while (next_done < next_post || !t_fail) {
		while (!t_fail && next_post - next_done < 8) {
			fill(&wr, KRCORE_WR_READ, buf + (next_post % 8) * 64, mr.lkey,
			     64, r->addr + (next_post % 1000) * 64, r->rkey,
			     next_post);
			n = krc_qpush(vq, &wr, 1);
			if (n != 1)
				break;
			next_post++;
		}
		if (dp_now() - t0 > 600) {
			FAIL("vanish %d: the peer never went away", me);
			return 1;
		}
		if (next_post == next_done) {
			if (!t_fail)
				FAIL("vanish %d: qpush: %s (nothing in flight)", me,
				     krc_errmsg());
			break;
		}
		n = krc_qpop_wait(vq, c, 16, 1000);
		if (n < 0) {
			FAIL("vanish %d: qpop: %s", me, krc_errmsg());
			return 1;
		}
		if (t_fail && n == 0 && dp_now() - t_fail > 120) {
			FAIL("vanish %d: %llu requests never completed", me,
			     (unsigned long long)(next_post - next_done));
			return 1;
		}
		for (i = 0; i < n; i++, next_done++) {
			if (c[i].wr_id != next_done)
				FAIL("vanish %d: completion %llu, expected %llu", me,
				     (unsigned long long)c[i].wr_id,
				     (unsigned long long)next_done);
			if (c[i].status == KRCORE_WC_SUCCESS) {
				if (t_fail)
					other++;
				for (k = 0; k < 64; k++)
					if (buf[(next_done % 8) * 64 + k] !=
					    tp_pattern((next_done % 1000) * 64 + k))
						FAIL("vanish %d: READ %llu wrong data", me,
						     (unsigned long long)next_done);
				continue;
			}
			if (!t_fail)
				t_fail = dp_now();
			if (c[i].status == KRCORE_WC_UNREACHABLE) {
				lost++;
			} else {
				other++;
				FAIL("vanish %d: READ %llu: %s, expected UNREACHABLE", me,
				     (unsigned long long)c[i].wr_id,
				     krc_wc_status_str(c[i].status));
			}
		}
		if (!ready && next_done >= 16) {
			snprintf(name, sizeof(name), "vanish.%d", me);
			dp_touch(g_dir, name);
			ready = 1;
		}
	}
	vanish_lost(vq, &wr, me);
	printf(DP_TAG ": vanish %d: %llu READs, %d UNREACHABLE in %.1f s, ENOTCONN, POLLHUP\n",
	       me, (unsigned long long)next_done, lost,
	       t_fail ? dp_now() - t_fail : -1.0);
	if (!lost || other)
		FAIL("vanish %d: %d UNREACHABLE, %d other after the failure", me,
		     lost, other);
	krc_vq_close(vq);
	return dp_status();
}

int main(int argc, char **argv)
{
	struct dp_remote r;

	if (dp_args(argc, argv, 5, "dp_vanish ADDR INFO DIR PROCS", &r))
		return 2;
	g_dir = argv[3];
	return dp_forked(atoi(argv[4]), vanish_worker, argv[1], &r, 0);
}
