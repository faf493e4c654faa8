// SPDX-License-Identifier: BSD-2-Clause
/*
 * write_json.c - krbench_report's JSON document (results.json), written
 * with krctl's streaming writer (tools/krctl/json.c): what the input held,
 * per figure its series' statistics and its ratios' points, the ratios of
 * no figure, and a tally of every ratio point's outcome. The layout is
 * the one docs/benchmarks.md describes; the numbers are stats.c's.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "stats.h"

static void krr_json_ratio(const struct krr *r, struct json *j, int fig,
			   const struct krr_ratio *ra, uint64_t *tally)
{
	const struct krr_figure *fg;
	enum krr_status st;
	unsigned int k, x;
	double v;

	json_object_begin(j);
	json_kv_string(j, "name", ra->name);
	json_kv_string(j, "figure", ra->fig);
	json_kv_string(j, "a", ra->a);
	json_kv_string(j, "b", ra->b);
	json_key(j, "target");
	if (ra->op == KRR_OP_NONE) {
		json_null(j);
	} else {
		json_object_begin(j);
		json_kv_string(j, "op", krr_op_text[ra->op]);
		json_kv_double(j, "value", ra->target, 6);
		json_object_end(j);
	}
	json_key(j, "points");
	json_array_begin(j);
	if (fig < 0 || !r->figs[fig]->nxs) {
		json_object_begin(j);
		json_kv_null(j, "x");
		json_kv_null(j, "value");
		json_kv_string(j, "status", krr_status_text[KRR_MISSING]);
		json_object_end(j);
		tally[KRR_MISSING]++;
	} else {
		fg = r->figs[fig];
		for (k = 0; k < fg->nxs; k++) {
			x = fg->order[k];
			st = krr_ratio_at(r, (unsigned int)fig, ra, x, &v);
			tally[st]++;
			json_object_begin(j);
			json_kv_string(j, "x", fg->xs[x]);
			json_kv_double(j, "value", v, 6);
			json_kv_string(j, "status", krr_status_text[st]);
			json_object_end(j);
		}
	}
	json_array_end(j);
	json_object_end(j);
}

static void krr_json_figure(const struct krr *r, struct json *j,
			    unsigned int fig, uint64_t *tally)
{
	const struct krr_figure *fg = r->figs[fig];
	struct krr_stats st;
	unsigned int m, k, x;

	json_object_begin(j);
	json_kv_string(j, "name", fg->name);
	json_kv_string(j, "title", fg->title);
	json_kv_string(j, "unit", fg->unit);
	json_kv_string(j, "x_label", fg->xlabel);
	json_kv_bool(j, "declared", fg->declared);
	json_kv_bool(j, "x_numeric", fg->x_numeric);
	json_kv_u64(j, "samples", fg->nsamples);
	json_key(j, "methods");
	json_array_begin(j);
	for (m = 0; m < fg->nmethods; m++)
		json_string(j, fg->methods[m]);
	json_array_end(j);
	json_key(j, "xs");
	json_array_begin(j);
	for (k = 0; k < fg->nxs; k++)
		json_string(j, fg->xs[fg->order[k]]);
	json_array_end(j);
	json_key(j, "rows");
	json_array_begin(j);
	for (m = 0; m < fg->nmethods; m++) {
		for (k = 0; k < fg->nxs; k++) {
			if (!krr_row_stats(r, fig, m, k, &x, &st))
				continue;
			json_object_begin(j);
			json_kv_string(j, "method", fg->methods[m]);
			json_kv_string(j, "x", fg->xs[x]);
			json_kv_u64(j, "n", st.n);
			json_kv_double(j, "median", st.median, 6);
			json_kv_double(j, "p99", st.p99, 6);
			json_kv_double(j, "mean", st.mean, 6);
			json_kv_double(j, "min", st.min, 6);
			json_kv_double(j, "max", st.max, 6);
			json_object_end(j);
		}
	}
	json_array_end(j);
	json_key(j, "ratios");
	json_array_begin(j);
	for (k = 0; k < r->nratios; k++)
		if (!strcmp(r->ratios[k].fig, fg->name))
			krr_json_ratio(r, j, (int)fig, &r->ratios[k], tally);
	json_array_end(j);
	json_object_end(j);
}

int krr_write_json(struct krr *r, FILE *f)
{
	uint64_t tally[KRR_NSTATUS] = { 0 };
	struct json j;
	unsigned int i;
	size_t k;
	int ret;

	krr_finish(r);
	json_init(&j, f);
	json_object_begin(&j);
	json_kv_string(&j, "generator", "krbench_report");
	json_kv_u64(&j, "format", 1);
	json_key(&j, "input");
	json_object_begin(&j);
	json_key(&j, "files");
	json_array_begin(&j);
	for (k = 0; k < r->nfiles; k++)
		json_string(&j, r->files[k]);
	json_array_end(&j);
	json_kv_u64(&j, "lines", r->c.lines);
	json_kv_u64(&j, "ignored", r->c.ignored);
	json_kv_u64(&j, "samples", r->c.samples);
	json_kv_u64(&j, "malformed", r->c.malformed);
	json_kv_u64(&j, "dropped", r->c.dropped);
	json_kv_string(&j, "first_problem", r->problem);
	json_object_end(&j);
	json_key(&j, "figures");
	json_array_begin(&j);
	for (i = 0; i < r->nfigs; i++)
		krr_json_figure(r, &j, i, tally);
	json_array_end(&j);
	json_key(&j, "orphan_ratios");
	json_array_begin(&j);
	for (i = 0; i < r->nratios; i++)
		if (krr_ratio_fig(r, &r->ratios[i]) < 0)
			krr_json_ratio(r, &j, -1, &r->ratios[i], tally);
	json_array_end(&j);
	json_key(&j, "ratio_points");
	json_object_begin(&j);
	json_kv_u64(&j, "met", tally[KRR_MET]);
	json_kv_u64(&j, "not_met", tally[KRR_NOT_MET]);
	json_kv_u64(&j, "no_target", tally[KRR_NO_TARGET]);
	json_kv_u64(&j, "missing", tally[KRR_MISSING]);
	json_kv_u64(&j, "undefined", tally[KRR_UNDEFINED]);
	json_object_end(&j);
	json_object_end(&j);
	ret = json_end(&j);
	return ret || ferror(f) ? -1 : 0;
}
