// SPDX-License-Identifier: BSD-2-Clause
/*
 * prio_probe - priority classes on a shared connection
 * (tests/cluster/t_prio.sh).
 *
 *   prio_probe lat PEER INFO normal|high N
 *	one VQ to PEER of that class, N 8-byte READs of the dp_serve
 *	buffer (INFO) one after another, each checked against its pattern;
 *	the first 5 are not counted (the connection starts yielding to a
 *	high VQ at its first post). Prints
 *	  prio_probe: class=C n=N ok=K median_us=M p90_us=P max_us=X
 *	exit 0 if all N completed with their data.
 *   prio_probe limits PEER INFO HIGH_VQS HIGH_BYTES
 *	the bounds of the high class (module parameters prio_high_vqs and
 *	prio_high_bytes as given): EINVAL for an unknown class or a reserved
 *	word; HIGH_VQS VQs set high, the next EPERM, one set back to normal
 *	or closed gives its place; a high VQ's READ of HIGH_BYTES completes
 *	with its data, one of HIGH_BYTES + 1 is refused (TOO_LONG) and so
 *	is nothing else: the same READ on a normal VQ completes. Prints
 *	"prio_probe: ok: ..." or "prio_probe: FAIL: ..." per check; exit 0
 *	if none failed.
 */
#include <sys/ioctl.h>

#include "tp.h"

#define MAX_N	4096
#define MAX_VQS	64

static int failed;

static void check(int ok, const char *what)
{
	printf("prio_probe: %s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failed = 1;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One READ of @len bytes at offset 0 of the buffer: 0 if its data came. */
static int read_once(struct krc_vq *vq, uint8_t *buf, uint32_t lkey,
		     uint32_t len, uint64_t raddr, uint32_t rkey, int *reason)
{
	struct krcore_wr wr;
	struct krcore_cqe cqe;
	uint32_t i;
	int ret;

	memset(buf, 0, len);
	tp_wr(&wr, KRCORE_WR_READ, buf, lkey, len, raddr, rkey, 1,
	      KRCORE_WR_SIGNALED);
	do {
		ret = krc_qpush(vq, &wr, 1);
	} while (ret == -EAGAIN);
	if (ret != 1) {
		if (reason)
			*reason = (int)krc_qpush_result(vq)->reason;
		return -1;
	}
	if (tp_pop(vq, &cqe, 1, 60000) != 1 ||
	    cqe.status != KRCORE_WC_SUCCESS)
		return -2;
	for (i = 0; i < len; i++)
		if (buf[i] != tp_pattern(i))
			return -3;
	return 0;
}

static int do_lat(int argc, char **argv)
{
	static uint64_t us[MAX_N];
	unsigned int n, i, ok = 0, k = 0;
	int high = !strcmp(argv[4], "high");
	struct krc_vq *vq;
	struct krc_mr mr;
	uint64_t raddr, t;
	uint32_t rkey;
	uint8_t *buf;

	n = (unsigned int)atoi(argv[5]);
	if (argc != 6 || n < 1 || n > MAX_N ||
	    (!high && strcmp(argv[4], "normal")))
		tp_die("usage: prio_probe lat PEER INFO normal|high N");
	tp_read_info(argv[3], &raddr, &rkey);
	vq = tp_connect(argv[2], 0, NULL);
	buf = tp_reg(vq, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr);
	if (high && krc_qprio(vq, KRCORE_PRIO_HIGH) < 0)
		tp_die("qprio: %s", krc_errmsg());
	for (i = 0; i < n + 5; i++) {
		t = now_us();
		if (read_once(vq, buf, mr.lkey, 8, raddr, rkey, NULL)) {
			fprintf(stderr, "prio_probe: READ %u failed: %s\n", i,
				krc_errmsg());
			continue;
		}
		if (i < 5)
			continue;
		us[k++] = now_us() - t;
		ok++;
	}
	qsort(us, k, sizeof(us[0]), cmp_u64);
	printf("prio_probe: class=%s n=%u ok=%u median_us=%llu p90_us=%llu max_us=%llu\n",
	       argv[4], n, ok, k ? (unsigned long long)us[k / 2] : 0ULL,
	       k ? (unsigned long long)us[k * 9 / 10] : 0ULL,
	       k ? (unsigned long long)us[k - 1] : 0ULL);
	krc_vq_close(vq);
	return ok == n ? 0 : 1;
}

static int raw_prio(struct krc_vq *vq, uint32_t prio, uint32_t reserved)
{
	struct krcore_qprio qp = { .prio = prio, .reserved = reserved };

	return ioctl(krc_vq_fd(vq), KRCORE_IOC_QPRIO, &qp) ? -errno : 0;
}

static int do_limits(int argc, char **argv)
{
	struct krc_vq *vq[MAX_VQS], *extra;
	unsigned int nhigh, hbytes, i;
	int reason = 0, ret;
	struct krc_mr mr;
	uint64_t raddr;
	uint32_t rkey;
	uint8_t *buf;
	char what[160];

	if (argc != 6)
		tp_die("usage: prio_probe limits PEER INFO HIGH_VQS HIGH_BYTES");
	nhigh = (unsigned int)atoi(argv[4]);
	hbytes = (unsigned int)atoi(argv[5]);
	if (nhigh < 1 || nhigh + 1 > MAX_VQS || hbytes < 8 ||
	    hbytes + 1 > TP_SRV_HALF)
		tp_die("prio_probe: 1 <= HIGH_VQS < %d, 8 <= HIGH_BYTES < %u",
		       MAX_VQS, TP_SRV_HALF);
	tp_read_info(argv[3], &raddr, &rkey);
	for (i = 0; i <= nhigh; i++)
		vq[i] = tp_connect(argv[2], 0, NULL);
	buf = tp_reg(vq[0], hbytes + 1, KRCORE_ACCESS_LOCAL_WRITE, &mr);

	check(raw_prio(vq[0], 2, 0) == -EINVAL, "class 2: EINVAL");
	check(raw_prio(vq[0], 0xffffffffu, 0) == -EINVAL,
	      "class 0xffffffff: EINVAL");
	check(raw_prio(vq[0], KRCORE_PRIO_HIGH, 1) == -EINVAL,
	      "a reserved word not zero: EINVAL");
	for (i = 0, ret = 0; i < nhigh && !ret; i++)
		ret = krc_qprio(vq[i], KRCORE_PRIO_HIGH);
	snprintf(what, sizeof(what), "%u VQs set high", nhigh);
	check(!ret, what);
	check(krc_qprio(vq[0], KRCORE_PRIO_HIGH) == 0,
	      "setting a high VQ high again takes no second place");
	check(krc_qprio(vq[nhigh], KRCORE_PRIO_HIGH) == -EPERM,
	      "one more high VQ: EPERM");
	check(krc_qprio(vq[nhigh - 1], KRCORE_PRIO_NORMAL) == 0 &&
	      krc_qprio(vq[nhigh], KRCORE_PRIO_HIGH) == 0,
	      "one set back to normal gives its place");
	check(krc_qprio(vq[nhigh - 1], KRCORE_PRIO_HIGH) == -EPERM,
	      "and the bound holds again: EPERM");
	krc_vq_close(vq[nhigh]);
	extra = tp_connect(argv[2], 0, NULL);
	check(krc_qprio(extra, KRCORE_PRIO_HIGH) == 0,
	      "a high VQ closed gives its place");
	krc_vq_close(extra);

	/* vq[0] is high: its requests are bounded, nothing else is. */
	snprintf(what, sizeof(what),
		 "a high VQ's READ of %u bytes completes with its data", hbytes);
	check(read_once(vq[0], buf, mr.lkey, hbytes, raddr, rkey, NULL) == 0,
	      what);
	ret = read_once(vq[0], buf, mr.lkey, hbytes + 1, raddr, rkey, &reason);
	snprintf(what, sizeof(what),
		 "one of %u bytes is refused, TOO_LONG (got %d, reason %d)",
		 hbytes + 1, ret, reason);
	check(ret == -1 && reason == KRCORE_R_TOO_LONG, what);
	check(read_once(vq[0], buf, mr.lkey, 8, raddr, rkey, NULL) == 0,
	      "and the high VQ goes on: an 8-byte READ completes");
	check(krc_qprio(vq[0], KRCORE_PRIO_NORMAL) == 0 &&
	      read_once(vq[0], buf, mr.lkey, hbytes + 1, raddr, rkey,
			NULL) == 0,
	      "set back to normal, the same READ completes with its data");
	for (i = 0; i < nhigh; i++)
		krc_vq_close(vq[i]);
	return failed;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "lat") && argc == 6)
		return do_lat(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "limits"))
		return do_limits(argc, argv);
	tp_die("usage: prio_probe lat|limits ...");
	return 2;
}
