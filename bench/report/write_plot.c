// SPDX-License-Identifier: BSD-2-Clause
/*
 * write_plot.c - what bench/plot.sh draws from: per figure a data file
 * and a gnuplot script. The two are one file because they must agree on
 * the columns and on bars against lines; the numbers are stats.c's.
 *
 * Per figure with samples, FIGURE.dat (x, then median and p99 per method,
 * NaN where a method has no sample) and FIGURE.gp, which draws FIGURE.png
 * when gnuplot runs it in RESULTS_DIR: lines and points of the medians
 * against x per method, bars per method when the figure has a single x;
 * the y axis (and a numeric x axis) is logarithmic when its values are
 * all positive and span more than two decades.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "stats.h"

/* Bars (a single x) or lines. */
static bool krr_bars(const struct krr_figure *fg)
{
	return fg->nxs == 1;
}

/* Do the positive values @lo..@hi span more than two decades? */
static bool krr_log(double lo, double hi, bool all_positive)
{
	return all_positive && lo > 0 && hi / lo > 100;
}

static void krr_dat_num(FILE *f, const struct krr_series *s, bool p99)
{
	struct krr_stats st;

	if (!s) {
		fputs(" NaN", f);
		return;
	}
	krr_stats_of(s, &st);
	fprintf(f, " %.9g", p99 ? st.p99 : st.median);
}

int krr_write_dat(struct krr *r, size_t i, FILE *f)
{
	const struct krr_figure *fg;
	unsigned int m, k, x;

	if (i >= r->nfigs)
		return -1;
	krr_finish(r);
	fg = r->figs[i];
	fprintf(f, "# krbench_report: figure %s, unit %s, x %s\n", fg->name,
		fg->unit, fg->xlabel);
	if (krr_bars(fg)) {
		fprintf(f, "# one row per method at %s = %s: method median p99\n",
			fg->xlabel, fg->nxs ? fg->xs[0] : "-");
		for (m = 0; m < fg->nmethods; m++) {
			fprintf(f, "%s", fg->methods[m]);
			krr_dat_num(f, krr_find_series(r, i, (int)m, 0), false);
			krr_dat_num(f, krr_find_series(r, i, (int)m, 0), true);
			fputc('\n', f);
		}
		return ferror(f) ? -1 : 0;
	}
	fprintf(f, "# %s, then per method its median and p99 (NaN: no sample)\n#",
		fg->xlabel);
	for (m = 0; m < fg->nmethods; m++)
		fprintf(f, " %s.median %s.p99", fg->methods[m], fg->methods[m]);
	fputc('\n', f);
	for (k = 0; k < fg->nxs; k++) {
		x = fg->order[k];
		fputs(fg->xs[x], f);
		for (m = 0; m < fg->nmethods; m++) {
			krr_dat_num(f, krr_find_series(r, i, (int)m, x), false);
			krr_dat_num(f, krr_find_series(r, i, (int)m, x), true);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

/* @s as a gnuplot single-quoted string ('' is a quote inside one). */
static void krr_gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

int krr_write_gnuplot(struct krr *r, size_t i, FILE *f)
{
	const struct krr_figure *fg;
	const struct krr_series *s;
	double lo = INFINITY, hi = -INFINITY, xlo = INFINITY, xhi = -INFINITY;
	bool pos = true, xpos = true;
	struct krr_stats st;
	unsigned int m, k;

	if (i >= r->nfigs)
		return -1;
	krr_finish(r);
	fg = r->figs[i];
	for (k = 0; k < r->nseries; k++) {
		s = &r->series[k];
		if (s->fig != i || !s->n)
			continue;
		krr_stats_of(s, &st);
		if (st.median <= 0)
			pos = false;
		if (st.median < lo)
			lo = st.median;
		if (st.median > hi)
			hi = st.median;
	}
	for (k = 0; k < fg->nxs; k++) {
		if (fg->xval[k] <= 0)
			xpos = false;
		if (fg->xval[k] < xlo)
			xlo = fg->xval[k];
		if (fg->xval[k] > xhi)
			xhi = fg->xval[k];
	}
	fprintf(f, "# krbench_report: draws %s.png from %s.dat; run in its directory:\n"
		"#   gnuplot %s.gp\n", fg->name, fg->name, fg->name);
	fputs("if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
	      "\tset terminal pngcairo noenhanced size 960,600\n"
	      "} else {\n"
	      "\tset terminal png noenhanced size 960,600\n"
	      "}\n", f);
	fprintf(f, "set output '%s.png'\n", fg->name);
	fputs("set title ", f);
	krr_gp_string(f, fg->title);
	fputc('\n', f);
	fprintf(f, "set ylabel '%s(%s)'\n", krr_bars(fg) ? "" : "median ",
		fg->unit);
	fputs("set grid\nset key outside right top\n"
	      "set datafile missing 'NaN'\n", f);
	if (krr_log(lo, hi, pos))
		fputs("set logscale y\n", f);
	if (krr_bars(fg)) {
		fprintf(f, "set xlabel '%s = %s'\n", fg->xlabel,
			fg->nxs ? fg->xs[0] : "-");
		fputs("set style fill solid 0.6 border -1\nset boxwidth 0.6\n", f);
		fprintf(f, "set xrange [-0.6:%u.4]\n",
			fg->nmethods ? fg->nmethods - 1 : 0);
		if (!krr_log(lo, hi, pos))
			fputs("set yrange [0:*]\n", f);
		/* more than four names side by side run into each other */
		if (fg->nmethods > 4)
			fputs("set xtics rotate by 30 right\n", f);
		fprintf(f, "plot '%s.dat' using 0:2:xtic(1) with boxes title 'median', \\\n"
			"\t'' using 0:3 with points pt 7 title 'p99'\n", fg->name);
		return ferror(f) ? -1 : 0;
	}
	fprintf(f, "set xlabel '%s'\n", fg->xlabel);
	fputs("set offsets graph 0.03, graph 0.03, 0, 0\n", f);
	if (fg->x_numeric && krr_log(xlo, xhi, xpos))
		fputs("set logscale x\n", f);
	fputs("plot ", f);
	for (m = 0; m < fg->nmethods; m++) {
		if (m)
			fputs(", \\\n\t", f);
		if (fg->x_numeric)
			fprintf(f, "'%s.dat' using 1:%u", fg->name, 2 + 2 * m);
		else
			fprintf(f, "'%s.dat' using 0:%u:xtic(1)", fg->name,
				2 + 2 * m);
		fprintf(f, " with linespoints title '%s'", fg->methods[m]);
	}
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}
