// SPDX-License-Identifier: BSD-2-Clause
/*
 * dg_uffd - a process whose registered buffer is no longer mapped as it
 * was: the datagram path's READ results go to the registration, never
 * through the process's mapping (tests/cluster/t_dg_mapping.sh).
 *
 *   dg_uffd PEER INFO HOLD_S
 *
 * A VQ to PEER on the datagram path; 64 KiB registered (LOCAL_WRITE),
 * then the same addresses mapped anew and handed to userfaultfd, which
 * this program never serves: any access through the mapping blocks until
 * the program lets go of it, HOLD_S seconds later. A READ of 4 KiB of the
 * server's pattern into the buffer is posted at once. Prints
 *   dg_uffd: posted
 *   dg_uffd: completed status=N after_ms=T      (or: no completion)
 *   dg_uffd: released at_ms=U    (U: CLOCK_BOOTTIME in ms, /proc/uptime's clock)
 * and exits 0 once released. The test runs other processes' READs to the
 * same peer meanwhile: they must not wait for this one's mapping.
 */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "tp.h"

#define LEN	(64u * 1024u)

int main(int argc, char **argv)
{
	struct uffdio_register reg = {};
	struct uffdio_api api = { .api = UFFD_API };
	struct krcore_qconnect qc;
	struct krcore_cqe cqe = { .status = ~0u };
	struct krcore_wr wr;
	struct krc_vq *vq;
	struct krc_mr mr;
	uint64_t raddr, t0, hold;
	uint32_t rkey;
	void *buf, *again;
	int uffd;

	if (argc != 4)
		tp_die("usage: dg_uffd PEER INFO HOLD_S");
	hold = (uint64_t)atoi(argv[3]) * 1000;
	tp_read_info(argv[2], &raddr, &rkey);
	vq = tp_connect(argv[1], 0, &qc);
	if (!(qc.path & KRCORE_PATH_DATAGRAM))
		tp_die("dg_uffd: not on the datagram path (path %#x)", qc.path);
	buf = tp_reg(vq, LEN, KRCORE_ACCESS_LOCAL_WRITE, &mr);

	/* The same addresses, mapped anew, faults left to userfaultfd. */
	again = mmap(buf, LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (again != buf)
		tp_die("dg_uffd: mmap over the buffer: %s", strerror(errno));
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		tp_die("dg_uffd: userfaultfd: %s", strerror(errno));
	reg.range.start = (uintptr_t)buf;
	reg.range.len = LEN;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		tp_die("dg_uffd: UFFDIO_REGISTER: %s", strerror(errno));

	tp_wr(&wr, KRCORE_WR_READ, buf, mr.lkey, 4096, raddr, rkey, 1,
	      KRCORE_WR_SIGNALED);
	tp_push(vq, &wr, 1);
	printf("dg_uffd: posted\n");
	fflush(stdout);
	t0 = tp_now_ms();
	if (tp_pop(vq, &cqe, 1, (int)hold) == 1)
		printf("dg_uffd: completed status=%u after_ms=%llu\n", cqe.status,
		       (unsigned long long)(tp_now_ms() - t0));
	else
		printf("dg_uffd: no completion\n");
	fflush(stdout);
	/* Keep the mapping blocking for the whole hold, then let go. */
	while (tp_now_ms() - t0 < hold)
		usleep(100000);
	close(uffd);
	{
		struct timespec ts;

		clock_gettime(CLOCK_BOOTTIME, &ts);
		printf("dg_uffd: released at_ms=%llu\n",
		       (unsigned long long)ts.tv_sec * 1000 +
		       (unsigned long long)ts.tv_nsec / 1000000);
	}
	fflush(stdout);
	krc_vq_close(vq);
	return 0;
}
