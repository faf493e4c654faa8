// SPDX-License-Identifier: BSD-2-Clause
/*
 * write_summary.c - krbench_report's text summary (summary.txt, and
 * stdout): per figure a perftest-style table of its series' statistics
 * and a line per ratio at each x (why one is missing, when it is), the
 * ratios that name no figure of the input, then what the input held.
 * Only the layout of text lives here; the numbers are stats.c's.
 */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

/* Decimals for a number of magnitude @a written without an exponent. */
static int krr_decimals(double a)
{
	return a >= 100 ? 1 : a >= 1 ? 2 : 3;
}

/* @v in at most 12 characters, with digits that fit its size. */
static void krr_fmt(char *buf, size_t cap, double v)
{
	double a = fabs(v);

	if (a >= 1e9 || (a > 0 && a < 0.01))
		snprintf(buf, cap, "%.3e", v);
	else
		snprintf(buf, cap, "%.*f", krr_decimals(a), v);
}

static void krr_fmt_ratio(char *buf, size_t cap, double v)
{
	double a = fabs(v);

	if (a >= 1e6 || (a > 0 && a < 0.001))
		snprintf(buf, cap, "%.3gx", v);
	else
		snprintf(buf, cap, "%.*fx", krr_decimals(a), v);
}

static void krr_rule(FILE *f, int width)
{
	int i;

	for (i = 0; i < width; i++)
		fputc('-', f);
	fputc('\n', f);
}

/* Why a ratio is missing at x @x (UINT_MAX: anywhere in the figure). */
static void krr_missing_why(const struct krr *r, unsigned int fig,
			    const struct krr_ratio *ra, unsigned int x,
			    char *buf, size_t cap)
{
	const struct krr_figure *fg = r->figs[fig];
	int ma = krr_find_name(fg->methods, fg->nmethods, ra->a);
	int mb = krr_find_name(fg->methods, fg->nmethods, ra->b);
	bool has_a = ma >= 0, has_b = mb >= 0;
	const char *where = x == UINT_MAX ? "" : " at this x";

	if (x != UINT_MAX) {
		has_a = krr_find_series(r, fig, ma, x);
		has_b = krr_find_series(r, fig, mb, x);
	}
	if (!has_a && !has_b)
		snprintf(buf, cap, "no samples of %s nor of %s%s", ra->a, ra->b,
			 where);
	else
		snprintf(buf, cap, "no samples of %s%s", has_a ? ra->b : ra->a,
			 where);
}

static void krr_summary_ratio(const struct krr *r, FILE *f, unsigned int fig,
			      const struct krr_ratio *ra)
{
	const struct krr_figure *fg = r->figs[fig];
	char val[32], why[128];
	enum krr_status st;
	bool any = false;
	unsigned int k, x;
	double v;

	for (k = 0; k < fg->nxs; k++) {
		x = fg->order[k];
		st = krr_ratio_at(r, fig, ra, x, &v);
		if (st == KRR_MISSING &&
		    (krr_find_name(fg->methods, fg->nmethods, ra->a) < 0 ||
		     krr_find_name(fg->methods, fg->nmethods, ra->b) < 0))
			break;	/* said once, below */
		any = true;
		fprintf(f, " ratio %s at x=%s: ", ra->name, fg->xs[x]);
		if (st == KRR_MISSING) {
			krr_missing_why(r, fig, ra, x, why, sizeof(why));
			fprintf(f, "missing (%s)\n", why);
			continue;
		}
		if (st == KRR_UNDEFINED) {
			fprintf(f, "undefined (median of %s is 0, or the quotient overflows)\n",
				ra->b);
			continue;
		}
		krr_fmt_ratio(val, sizeof(val), v);
		fprintf(f, "%s (%s/%s", val, ra->a, ra->b);
		if (ra->op != KRR_OP_NONE)
			fprintf(f, ", target %s %gx: %s", krr_op_text[ra->op],
				ra->target, krr_status_text[st]);
		fputs(")\n", f);
	}
	if (!any) {
		krr_missing_why(r, fig, ra, UINT_MAX, why, sizeof(why));
		fprintf(f, " ratio %s: missing (%s)\n", ra->name, why);
	}
}

static void krr_summary_figure(struct krr *r, FILE *f, unsigned int fig)
{
	const struct krr_figure *fg = r->figs[fig];
	char num[5][32], h[5][KRR_UNIT_LEN + 16];
	static const char *const cols[] = {
		"median", "p99", "mean", "min", "max",
	};
	int mw = 6, xw = 1, cw[5], width, i;
	unsigned int m, k, x;
	struct krr_stats st;

	for (m = 0; m < fg->nmethods; m++)
		if ((int)strlen(fg->methods[m]) > mw)
			mw = (int)strlen(fg->methods[m]);
	for (k = 0; k < fg->nxs; k++)
		if ((int)strlen(fg->xs[k]) > xw)
			xw = (int)strlen(fg->xs[k]);
	if ((int)strlen(fg->xlabel) > xw)
		xw = (int)strlen(fg->xlabel);
	width = 1 + mw + 2 + xw + 2 + 8;
	for (i = 0; i < 5; i++) {
		snprintf(h[i], sizeof(h[i]), "%s(%s)", cols[i], fg->unit);
		cw[i] = (int)strlen(h[i]) > 12 ? (int)strlen(h[i]) : 12;
		width += 2 + cw[i];
	}
	krr_rule(f, width);
	fprintf(f, " %s\n", fg->title);
	fprintf(f, " figure %s, x: %s, values in %s\n", fg->name, fg->xlabel,
		fg->unit);
	krr_rule(f, width);
	if (!fg->nsamples) {
		fprintf(f, " (no samples)\n");
	} else {
		fprintf(f, " %-*s  %*s  %8s", mw, "method", xw, fg->xlabel, "n");
		for (i = 0; i < 5; i++)
			fprintf(f, "  %*s", cw[i], h[i]);
		fputc('\n', f);
		for (m = 0; m < fg->nmethods; m++) {
			for (k = 0; k < fg->nxs; k++) {
				if (!krr_row_stats(r, fig, m, k, &x, &st))
					continue;
				krr_fmt(num[0], sizeof(num[0]), st.median);
				krr_fmt(num[1], sizeof(num[1]), st.p99);
				krr_fmt(num[2], sizeof(num[2]), st.mean);
				krr_fmt(num[3], sizeof(num[3]), st.min);
				krr_fmt(num[4], sizeof(num[4]), st.max);
				fprintf(f, " %-*s  %*s  %8zu", mw, fg->methods[m],
					xw, fg->xs[x], st.n);
				for (i = 0; i < 5; i++)
					fprintf(f, "  %*s", cw[i], num[i]);
				fputc('\n', f);
			}
		}
	}
	for (i = 0; i < (int)r->nratios; i++)
		if (!strcmp(r->ratios[i].fig, fg->name))
			krr_summary_ratio(r, f, fig, &r->ratios[i]);
}

int krr_write_summary(struct krr *r, FILE *f)
{
	const struct krr_ratio *ra;
	unsigned int i;
	bool head = false;

	krr_finish(r);
	for (i = 0; i < r->nfigs; i++)
		krr_summary_figure(r, f, i);
	for (i = 0; i < r->nratios; i++) {
		ra = &r->ratios[i];
		if (krr_ratio_fig(r, ra) >= 0)
			continue;
		if (!head)
			krr_rule(f, 72);
		head = true;
		fprintf(f, " ratio %s: missing (no figure %s)\n", ra->name,
			ra->fig);
	}
	krr_rule(f, 72);
	fprintf(f, " input: %llu file(s), %llu lines, %llu samples, %llu malformed, %llu dropped\n",
		(unsigned long long)r->c.files, (unsigned long long)r->c.lines,
		(unsigned long long)r->c.samples,
		(unsigned long long)r->c.malformed,
		(unsigned long long)r->c.dropped);
	if (r->problem[0])
		fprintf(f, " first problem: %s\n", r->problem);
	return ferror(f) ? -1 : 0;
}
