// SPDX-License-Identifier: BSD-2-Clause
/*
 * stats.c - krbench_report's statistics: every series sorted and every
 * figure's x values put in the order they are shown, then per (figure,
 * method, x) the numbers below, and a ratio's value and outcome at one x.
 * The summary, the JSON document and the plots all take their numbers
 * from here, so they cannot disagree on a median.
 *
 * Statistics per (figure, method, x): n, the median (the middle value,
 * the mean of the two middle ones for an even n), p99 (nearest rank: the
 * ceil(0.99 n)-th smallest), the mean, min and max. A ratio at an x where
 * A or B has no sample is "missing", with a median of B of 0 (or a
 * quotient that is not finite) "undefined"; neither is a failure of the
 * report.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

const char *const krr_status_text[KRR_NSTATUS] = {
	[KRR_MET] = "met", [KRR_NOT_MET] = "not met",
	[KRR_NO_TARGET] = "no target", [KRR_MISSING] = "missing",
	[KRR_UNDEFINED] = "undefined",
};

static int krr_cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static const struct krr_figure *krr_sort_fig;	/* qsort has no context */

static int krr_cmp_x(const void *a, const void *b)
{
	const struct krr_figure *fg = krr_sort_fig;
	unsigned int i = *(const unsigned int *)a, j = *(const unsigned int *)b;

	if (fg->xval[i] != fg->xval[j])
		return fg->xval[i] < fg->xval[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

void krr_finish(struct krr *r)
{
	struct krr_figure *fg;
	unsigned int i, k;
	size_t s;

	if (r->finished)
		return;
	for (s = 0; s < r->nseries; s++) {
		if (r->series[s].sorted)
			continue;
		qsort(r->series[s].v, r->series[s].n, sizeof(double), krr_cmp_d);
		r->series[s].sorted = true;
	}
	for (i = 0; i < r->nfigs; i++) {
		fg = r->figs[i];
		for (k = 0; k < fg->nxs; k++)
			fg->order[k] = k;
		if (fg->x_numeric && fg->nxs > 1) {
			krr_sort_fig = fg;
			qsort(fg->order, fg->nxs, sizeof(fg->order[0]), krr_cmp_x);
			krr_sort_fig = NULL;
		}
	}
	r->finished = true;
}

const struct krr_series *krr_find_series(const struct krr *r,
					 unsigned int fig, int m,
					 unsigned int x)
{
	size_t i;

	if (m < 0)
		return NULL;
	for (i = 0; i < r->nseries; i++)
		if (r->series[i].fig == fig &&
		    r->series[i].method == (unsigned int)m &&
		    r->series[i].x == x && r->series[i].n)
			return &r->series[i];
	return NULL;
}

void krr_stats_of(const struct krr_series *s, struct krr_stats *st)
{
	size_t n = s->n, rank, i;
	double mean = 0;

	st->n = n;
	st->min = s->v[0];
	st->max = s->v[n - 1];
	if (n % 2)
		st->median = s->v[n / 2];
	else	/* halves first: no overflow for values near DBL_MAX */
		st->median = s->v[n / 2 - 1] / 2 + s->v[n / 2] / 2;
	rank = (n * 99 + 99) / 100;	/* ceil(0.99 n) */
	st->p99 = s->v[rank ? rank - 1 : 0];
	/* a running mean stays finite where a sum would overflow */
	for (i = 0; i < n; i++)
		mean += (s->v[i] - mean) / (double)(i + 1);
	st->mean = mean;
}

bool krr_row_stats(const struct krr *r, unsigned int fig, unsigned int m,
		   unsigned int k, unsigned int *x, struct krr_stats *st)
{
	const struct krr_series *s;

	*x = r->figs[fig]->order[k];
	s = krr_find_series(r, fig, (int)m, *x);
	if (!s)
		return false;
	krr_stats_of(s, st);
	return true;
}

/* The median of method @name of figure @fig at x @x; false if none. */
static bool krr_median(const struct krr *r, unsigned int fig,
		       const char *name, unsigned int x, double *med)
{
	const struct krr_figure *fg = r->figs[fig];
	const struct krr_series *s;
	struct krr_stats st;

	s = krr_find_series(r, fig, krr_find_name(fg->methods, fg->nmethods,
						  name), x);
	if (!s)
		return false;
	krr_stats_of(s, &st);
	*med = st.median;
	return true;
}

enum krr_status krr_ratio_at(const struct krr *r, unsigned int fig,
			     const struct krr_ratio *ra, unsigned int x,
			     double *val)
{
	double a, b, q;
	bool met;

	*val = NAN;
	if (!krr_median(r, fig, ra->a, x, &a) ||
	    !krr_median(r, fig, ra->b, x, &b))
		return KRR_MISSING;
	q = a / b;
	if (b == 0 || !isfinite(q))
		return KRR_UNDEFINED;
	*val = q;
	switch (ra->op) {
	case KRR_OP_GE:
		met = q >= ra->target;
		break;
	case KRR_OP_LE:
		met = q <= ra->target;
		break;
	case KRR_OP_GT:
		met = q > ra->target;
		break;
	case KRR_OP_LT:
		met = q < ra->target;
		break;
	default:
		return KRR_NO_TARGET;
	}
	return met ? KRR_MET : KRR_NOT_MET;
}

int krr_ratio_fig(const struct krr *r, const struct krr_ratio *ra)
{
	unsigned int i;

	for (i = 0; i < r->nfigs; i++)
		if (!strcmp(r->figs[i]->name, ra->fig))
			return (int)i;
	return -1;
}
