// SPDX-License-Identifier: BSD-2-Clause
/*
 * qp_cost - the memory one QP costs on this node's RDMA device, measured:
 * the kernel memory in use (slab objects in use, from /proc/slabinfo,
 * and vmalloc'ed pages, VmallocUsed) before and after creating N QPs of
 * a kind, divided by N, the median of ROUNDS rounds (each round destroys
 * its QPs again). Run as root (/proc/slabinfo). Kinds: an RC QP and a
 * UD QP with a 128-entry send queue and a 128-entry receive queue of one
 * SGE each (what a verbs process or krcore's pool asks for), sharing one
 * CQ.
 *
 *   qp_cost [N [ROUNDS]]     (default 256 QPs, 5 rounds)
 *
 * Prints a line per kind and, for bench/report.sh, "cost rc BYTES" and
 * "cost ud BYTES". On Soft-RoCE this is host memory (rxe keeps the QP and
 * its queues in kernel memory); on a hardware RNIC the QP context lives
 * in the adapter's memory (ICM) and this measures only the host side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#define QPC_MAX		4096
#define ROUNDS_MAX	16

/* VmallocUsed from /proc/meminfo, in bytes; -1 on error. */
static long long vmalloc_used(void)
{
	long long v, used = -1;
	char line[256], key[64];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %lld", key, &v) == 2 &&
		    !strcmp(key, "VmallocUsed"))
			used = v * 1024;
	fclose(f);
	return used;
}

/* Bytes of the slab objects in use, every cache; -1 on error. */
static long long slab_used(void)
{
	long long active, total, size, sum = 0;
	char line[512], name[128];
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld %lld %lld", name, &active, &total,
			   &size) == 4)
			sum += active * size;
	fclose(f);
	return sum;
}

/*
 * The kernel memory in use: slab objects in use (not their pages: freed
 * objects stay in their caches) and vmalloc'ed pages (rxe's queues).
 */
static long long mem_used(void)
{
	long long s = slab_used(), v = vmalloc_used();

	return s < 0 || v < 0 ? -1 : s + v;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* One round: bytes per QP of @type over @n QPs; -1 on error. */
static long long one_round(struct ibv_pd *pd, struct ibv_cq *cq,
			   enum ibv_qp_type type, int n)
{
	static struct ibv_qp *qps[QPC_MAX];
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 128, .max_recv_wr = 128,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	long long before, after;
	int i, made;

	before = mem_used();
	for (made = 0; made < n; made++) {
		qps[made] = ibv_create_qp(pd, &attr);
		if (!qps[made])
			break;
	}
	after = mem_used();
	for (i = 0; i < made; i++)
		ibv_destroy_qp(qps[i]);
	if (made < n) {
		fprintf(stderr, "qp_cost: only %d of %d QPs created\n", made, n);
		return -1;
	}
	return before < 0 || after < 0 ? -1 : (after - before) / n;
}

int main(int argc, char **argv)
{
	static const struct {
		enum ibv_qp_type type;
		const char *name;
	} kinds[] = { { IBV_QPT_RC, "rc" }, { IBV_QPT_UD, "ud" } };
	int n = argc > 1 ? atoi(argv[1]) : 256;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	long long v[ROUNDS_MAX];
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int k, r;

	if (n < 1 || n > QPC_MAX || rounds < 1 || rounds > ROUNDS_MAX) {
		fprintf(stderr, "usage: qp_cost [N (1-%d) [ROUNDS (1-%d)]]\n",
			QPC_MAX, ROUNDS_MAX);
		return 2;
	}
	devs = ibv_get_device_list(NULL);
	if (!devs || !devs[0]) {
		fprintf(stderr, "qp_cost: no RDMA device\n");
		return 1;
	}
	ctx = ibv_open_device(devs[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "qp_cost: cannot open %s\n",
			ibv_get_device_name(devs[0]));
		return 1;
	}
	printf("qp_cost: %s, %d QPs per round, %d rounds, send/recv queues of 128\n",
	       ibv_get_device_name(devs[0]), n, rounds);
	for (k = 0; k < 2; k++) {
		/* A first round unmeasured: slab caches grow to their size. */
		if (one_round(pd, cq, kinds[k].type, n) < 0)
			return 1;
		for (r = 0; r < rounds; r++) {
			v[r] = one_round(pd, cq, kinds[k].type, n);
			if (v[r] < 0)
				return 1;
		}
		qsort(v, (size_t)rounds, sizeof(v[0]), cmp_ll);
		printf("  %s QP: %lld bytes (median; min %lld, max %lld)\n",
		       kinds[k].name, v[rounds / 2], v[0], v[rounds - 1]);
		printf("cost %s %lld\n", kinds[k].name, v[rounds / 2]);
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	return 0;
}
