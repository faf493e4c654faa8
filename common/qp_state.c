// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp_state.c - the per-node QP state model (see qp_state.h).
 */
#include "qp_state.h"

static const char *const krc_qp_scheme_names[KRC_QPS_NR] = {
	[KRC_QPS_VERBS_RC]	= "verbs_rc",
	[KRC_QPS_POOL]		= "krcore_pool",
	[KRC_QPS_RC_CAP]	= "krcore_rc_cap",
	[KRC_QPS_DC]		= "dc",
};

const char *krc_qp_scheme_name(enum krc_qp_scheme s)
{
	if ((unsigned int)s >= KRC_QPS_NR)
		return "?";
	return krc_qp_scheme_names[s];
}

u64 krc_qp_mul_sat(u64 a, u64 b)
{
	u64 r;

	if (__builtin_mul_overflow(a, b, &r))
		return KRC_QP_SAT;
	return r;
}

u64 krc_qp_add_sat(u64 a, u64 b)
{
	u64 r;

	if (__builtin_add_overflow(a, b, &r))
		return KRC_QP_SAT;
	return r;
}

/* krcore's RC QPs to @peers other nodes, plus its fixed QPs. */
static void krc_qp_krcore(const struct krc_qp_cluster *c, u64 peers,
			  struct krc_qp_state *out)
{
	out->rc_qps = krc_qp_add_sat(krc_qp_mul_sat(peers, c->pool_size),
				     c->fixed_rc);
	out->ud_qps = c->ctrl_ud;
	out->rc_peers = peers;
	out->dg_peers = c->nodes - 1 - peers;
}

int krc_qp_state(enum krc_qp_scheme s, const struct krc_qp_cluster *c,
		 const struct krc_qp_costs *costs, struct krc_qp_state *out)
{
	u64 others, peers;

	memset(out, 0, sizeof(*out));
	if (!c->nodes || (unsigned int)s >= KRC_QPS_NR)
		return -EINVAL;
	others = c->nodes - 1;
	switch (s) {
	case KRC_QPS_VERBS_RC:
		out->rc_qps = krc_qp_mul_sat(krc_qp_mul_sat(c->procs, c->procs),
					     others);
		out->rc_peers = others;
		break;
	case KRC_QPS_POOL:
	case KRC_QPS_RC_CAP:
		if (!c->pool_size)
			return -EINVAL;
		peers = others;
		if (s == KRC_QPS_RC_CAP && c->rc_max && c->rc_max < peers)
			peers = c->rc_max;
		krc_qp_krcore(c, peers, out);
		break;
	case KRC_QPS_DC:
		out->dc_qps = krc_qp_add_sat(1, c->procs);
		break;
	default:
		return -EINVAL;
	}
	out->qps = krc_qp_add_sat(krc_qp_add_sat(out->rc_qps, out->ud_qps),
				  out->dc_qps);
	if (s == KRC_QPS_DC)
		out->bytes = krc_qp_add_sat(costs->dct,
					    krc_qp_mul_sat(c->procs, costs->dci));
	else
		out->bytes = krc_qp_add_sat(krc_qp_mul_sat(out->rc_qps, costs->rc),
					    krc_qp_mul_sat(out->ud_qps, costs->ud));
	return 0;
}
