// SPDX-License-Identifier: BSD-2-Clause
/*
 * state_table - QPs and bytes of QP state per node for verbs RC full
 * mesh, krcore's pool, krcore with an RC cap and DC, for N nodes and P
 * processes per node (the model of common/qp_state.h), printed as a table
 * like the SRC paper's (per cluster size, the state of each scheme), or
 * as sample lines for krbench_report.
 *
 *   state_table [OPTIONS]            the table
 *   state_table -s [OPTIONS]         F/S/R lines (krbench_report's format)
 *
 *   -n N,N,...       node counts (default 32,128,512,10000)
 *   -p P,P,...       processes per node (default 1,8,24,48)
 *   --rc-bytes B     bytes of state of an RC QP (default 750, assumed)
 *   --ud-bytes B     of a UD QP (default 750, assumed)
 *   --dct-bytes B    of a DC target (default 750, assumed)
 *   --dci-bytes B    of a DC initiator (default 750, assumed)
 *   --pool-size K    krcore's RC QPs per other node (default 2, as the
 *                    module's pool_size)
 *   --rc-max M       the RC cap of the "krcore RC cap" column (default 64;
 *                    the module's rc_max is 0, no cap, by default)
 *   --ctrl-ud K      krcore's control UD QPs per node (default 1)
 *   --measured       the costs given are measurements (qp_cost): label
 *                    them "measured" rather than "given"
 *   --dc-as-rc       a DCT and a DCI cost what an RC QP costs (where DC
 *                    cannot be measured: the RC cost measured includes
 *                    its queues, a DCI has them too); labelled "as RC"
 *   --fixed-rc K     krcore's RC QPs independent of N (default 5: the
 *                    module's spare_qps of 4 and the kernel loopback QP)
 *
 * The default byte costs are assumptions, not measurements, and every
 * output says so: the SRC slides' table (RC 8.869 / 36.335 / 146.198 MB
 * at N = 32 / 128 / 512, XRC 1/20 of it) is what P = 20 processes and
 * 750 B per QP give with MB = 2^20 bytes; the model's verbs RC column
 * reproduces it (tests/unit/test_qp_state.c). A cost given on the command
 * line is labelled "given".
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qp_state.h"

#define ST_MAX_LIST	16
#define ST_MIB		1048576.0

struct st_opts {
	u64 nodes[ST_MAX_LIST];
	int nnodes;
	u64 procs[ST_MAX_LIST];
	int nprocs;
	struct krc_qp_costs costs;
	bool given[4];		/* rc, ud, dct, dci: from the command line */
	const char *given_as;	/* "given" or "measured" */
	bool dc_as_rc;		/* DCT and DCI cost an RC QP's */
	struct krc_qp_cluster c;
	bool samples;
};

static const char *const st_label[KRC_QPS_NR] = {
	[KRC_QPS_VERBS_RC]	= "verbs RC",
	[KRC_QPS_POOL]		= "krcore pool",
	[KRC_QPS_RC_CAP]	= "krcore RC cap",
	[KRC_QPS_DC]		= "DC",
};

/* A number of 1..10^12; false if @s is not one. */
static bool st_u64(const char *s, u64 *v)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || x > 1000000000000ULL)
		return false;
	*v = x;
	return true;
}

/* "a,b,c" into @v (at most ST_MAX_LIST, each >= 1); their count or -1. */
static int st_list(const char *s, u64 *v)
{
	char buf[256], *tok, *save;
	int n = 0;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == ST_MAX_LIST || !st_u64(tok, &v[n]) || !v[n])
			return -1;
		n++;
	}
	return n ? n : -1;
}

static void st_cost_text(const struct st_opts *o, char *buf, size_t cap)
{
	const char *how[2] = { "assumed", o->given_as };
	const char *dc = o->dc_as_rc ? "as RC" : NULL;

	snprintf(buf, cap,
		 "RC QP %llu B (%s), UD QP %llu B (%s), DCT %llu B (%s), DCI %llu B (%s)",
		 (unsigned long long)o->costs.rc, how[o->given[0]],
		 (unsigned long long)o->costs.ud, how[o->given[1]],
		 (unsigned long long)o->costs.dct, dc ? dc : how[o->given[2]],
		 (unsigned long long)o->costs.dci, dc ? dc : how[o->given[3]]);
}

static double st_mib(u64 bytes)
{
	return (double)bytes / ST_MIB;
}

static int st_state(const struct st_opts *o, u64 n, u64 p, int s,
		    struct krc_qp_state *out)
{
	struct krc_qp_cluster c = o->c;

	c.nodes = n;
	c.procs = p;
	return krc_qp_state((enum krc_qp_scheme)s, &c, &o->costs, out);
}

static int st_table(const struct st_opts *o)
{
	struct krc_qp_state st;
	char costs[256], col[64];
	int pi, ni, s, i;

	st_cost_text(o, costs, sizeof(costs));
	for (pi = 0; pi < o->nprocs; pi++) {
		for (i = 0; i < 100; i++)
			putchar('-');
		printf("\n QP state per node, P = %llu process(es) per node: ",
		       (unsigned long long)o->procs[pi]);
		printf("MiB of QP state [QPs]\n");
		printf(" costs: %s\n", costs);
		printf(" krcore: pool_size %llu, %llu control UD QP(s), ",
		       (unsigned long long)o->c.pool_size,
		       (unsigned long long)o->c.ctrl_ud);
		printf("%llu fixed RC QPs; RC cap: rc_max %llu\n",
		       (unsigned long long)o->c.fixed_rc,
		       (unsigned long long)o->c.rc_max);
		for (i = 0; i < 100; i++)
			putchar('-');
		printf("\n %9s", "nodes (N)");
		for (s = 0; s < KRC_QPS_NR; s++)
			printf("  %21s", st_label[s]);
		putchar('\n');
		for (ni = 0; ni < o->nnodes; ni++) {
			printf(" %9llu", (unsigned long long)o->nodes[ni]);
			for (s = 0; s < KRC_QPS_NR; s++) {
				if (st_state(o, o->nodes[ni], o->procs[pi], s,
					     &st))
					return -1;
				snprintf(col, sizeof(col), "%.3f [%llu]",
					 st_mib(st.bytes),
					 (unsigned long long)st.qps);
				printf("  %21s", col);
			}
			putchar('\n');
		}
	}
	for (i = 0; i < 100; i++)
		putchar('-');
	printf("\n verbs RC: P*P*(N-1) RC QPs; krcore pool: pool_size*(N-1) RC QPs + fixed;\n"
	       " RC cap: pool_size*min(N-1, rc_max) RC QPs + fixed, the rest on datagrams;\n"
	       " DC: 1 DCT + P DCIs (one per process, none shared). MiB = 2^20 bytes.\n");
	return 0;
}

static int st_samples(const struct st_opts *o)
{
	struct krc_qp_state st;
	char costs[256];
	int pi, ni, s, ngiven = 0;
	const char *how;
	u64 p;

	for (s = 0; s < 4; s++)
		ngiven += o->given[s];
	how = !ngiven ? "assumed" : ngiven == 4 ? o->given_as : "partly assumed";
	if (o->dc_as_rc && o->given[0] && o->given[1])
		how = !strcmp(o->given_as, "measured") ?
		      "measured, DC as RC" : "given, DC as RC";
	st_cost_text(o, costs, sizeof(costs));
	printf("# state_table: %s; krcore pool_size %llu, rc_max %llu\n", costs,
	       (unsigned long long)o->c.pool_size,
	       (unsigned long long)o->c.rc_max);
	for (pi = 0; pi < o->nprocs; pi++) {
		p = o->procs[pi];
		printf("F state_mib_p%llu MiB nodes ", (unsigned long long)p);
		printf("QP state per node, P = %llu (MiB; per-QP costs %s)\n",
		       (unsigned long long)p, how);
		printf("F state_qps_p%llu qps nodes QPs per node, P = %llu\n",
		       (unsigned long long)p, (unsigned long long)p);
		for (ni = 0; ni < o->nnodes; ni++) {
			for (s = 0; s < KRC_QPS_NR; s++) {
				if (st_state(o, o->nodes[ni], p, s, &st))
					return -1;
				printf("S state_mib_p%llu %s %llu %.6f\n",
				       (unsigned long long)p,
				       krc_qp_scheme_name(s),
				       (unsigned long long)o->nodes[ni],
				       st_mib(st.bytes));
				printf("S state_qps_p%llu %s %llu %llu\n",
				       (unsigned long long)p,
				       krc_qp_scheme_name(s),
				       (unsigned long long)o->nodes[ni],
				       (unsigned long long)st.qps);
			}
		}
		printf("R state_mib_p%llu verbs_rc_vs_pool verbs_rc krcore_pool\n",
		       (unsigned long long)p);
		printf("R state_mib_p%llu pool_vs_rc_cap krcore_pool krcore_rc_cap\n",
		       (unsigned long long)p);
	}
	return 0;
}

static void st_usage(void)
{
	fprintf(stderr, "usage: state_table [-s] [-n N,N,...] [-p P,P,...] [--rc-bytes B]\n"
		"       [--ud-bytes B] [--dct-bytes B] [--dci-bytes B] [--pool-size K]\n"
		"       [--rc-max M] [--ctrl-ud K] [--fixed-rc K] [--measured]\n"
		"       [--dc-as-rc]\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rc-bytes", required_argument, NULL, 'R' },
		{ "ud-bytes", required_argument, NULL, 'U' },
		{ "dct-bytes", required_argument, NULL, 'T' },
		{ "dci-bytes", required_argument, NULL, 'I' },
		{ "pool-size", required_argument, NULL, 'k' },
		{ "rc-max", required_argument, NULL, 'm' },
		{ "ctrl-ud", required_argument, NULL, 'u' },
		{ "fixed-rc", required_argument, NULL, 'f' },
		{ "samples", no_argument, NULL, 's' },
		{ "measured", no_argument, NULL, 'M' },
		{ "dc-as-rc", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct st_opts o = {
		.nodes = { 32, 128, 512, 10000 },
		.nnodes = 4,
		.procs = { 1, 8, 24, 48 },
		.nprocs = 4,
		.costs = { .rc = 750, .ud = 750, .dct = 750, .dci = 750 },
		.given_as = "given",
		.c = { .pool_size = 2, .rc_max = 64, .ctrl_ud = 1,
		       .fixed_rc = 5 },
	};
	u64 *dst;
	int ch;

	while ((ch = getopt_long(argc, argv, "sn:p:", longopts, NULL)) != -1) {
		dst = NULL;
		switch (ch) {
		case 's':
			o.samples = true;
			continue;
		case 'M':
			o.given_as = "measured";
			continue;
		case 'D':
			o.dc_as_rc = true;
			continue;
		case 'n':
			o.nnodes = st_list(optarg, o.nodes);
			if (o.nnodes < 0)
				goto usage;
			continue;
		case 'p':
			o.nprocs = st_list(optarg, o.procs);
			if (o.nprocs < 0)
				goto usage;
			continue;
		case 'R':
			dst = &o.costs.rc;
			o.given[0] = true;
			break;
		case 'U':
			dst = &o.costs.ud;
			o.given[1] = true;
			break;
		case 'T':
			dst = &o.costs.dct;
			o.given[2] = true;
			break;
		case 'I':
			dst = &o.costs.dci;
			o.given[3] = true;
			break;
		case 'k':
			dst = &o.c.pool_size;
			break;
		case 'm':
			dst = &o.c.rc_max;
			break;
		case 'u':
			dst = &o.c.ctrl_ud;
			break;
		case 'f':
			dst = &o.c.fixed_rc;
			break;
		default:
			goto usage;
		}
		if (!st_u64(optarg, dst))
			goto usage;
	}
	if (o.dc_as_rc) {
		o.costs.dct = o.costs.rc;
		o.costs.dci = o.costs.rc;
	}
	if (optind != argc || !o.c.pool_size)
		goto usage;
	if (o.samples ? st_samples(&o) : st_table(&o)) {
		fprintf(stderr, "state_table: the model refused the input\n");
		return 1;
	}
	return 0;
usage:
	st_usage();
	return 2;
}
