// SPDX-License-Identifier: BSD-2-Clause
/*
 * krbench_report - the reporting half of the benchmarks: reads the sample
 * lines benchmark programs print and writes, into a results directory, a
 * perftest-style text summary, one JSON document, and per figure a data
 * file and a gnuplot script (bench/plot.sh turns those into PNGs).
 *
 *   krbench_report [-q] RESULTS_DIR [FILE...]
 *       FILE "-" or none: standard input. -q: the summary is not also
 *       printed on stdout. Exit 0 (malformed lines are counted, reported
 *       on stderr and in the outputs, and skipped), 1 if an input cannot
 *       be read or an output cannot be written, 2 on a usage error.
 *
 * The sample format: one record per line, fields separated by spaces or
 * tabs; blank lines and lines starting with '#' are ignored; a trailing
 * CR is dropped. Other lines (a benchmark's own "KIND value..." lines,
 * for instance) are counted as malformed and skipped.
 *
 *   F FIGURE UNIT XLABEL TITLE...
 *       declares a figure: the unit of its values (us, ms, per_s, qps,
 *       bytes, MiB...), what its x is (procs, nodes...), a title (the rest
 *       of the line). The first declaration of a figure counts; a figure
 *       with samples and no F line gets its name as its title and the unit
 *       "value".
 *   S FIGURE METHOD X VALUE
 *       one sample of METHOD (krcore_pooled, verbs, rdma_cm...) at X, in
 *       the figure's unit. X is a token: when every X of a figure is a
 *       number, x is numeric (sorted, plotted to scale), else x values
 *       are categories in the order they first appear.
 *   R FIGURE NAME METHOD_A METHOD_B [OP TARGET]
 *       a ratio: median(A) / median(B) at every x of the figure, with an
 *       optional target: OP is >=, <=, > or <, TARGET a number (a
 *       trailing 'x' is allowed: ">= 100x"). The first declaration of a
 *       (figure, name) counts.
 *
 * Names (FIGURE, METHOD, NAME), X and UNIT/XLABEL are tokens of letters,
 * digits and _ . : + - (a figure name, also a file name, and a method
 * start with a letter, a digit or _), at most KRR_*_LEN bytes. VALUE and
 * TARGET must be finite numbers (strtod). A line longer than
 * KRR_MAX_LINE bytes, holding a NUL byte, or with a field out of these
 * rules is malformed; one past a limit of krbench_report.h (figures,
 * methods, x values, samples) is dropped. Neither stops the report.
 *
 * Statistics per (figure, method, x): n, the median (the middle value,
 * the mean of the two middle ones for an even n), p99 (nearest rank: the
 * ceil(0.99 n)-th smallest), the mean, min and max. A ratio at an x where
 * A or B has no sample is "missing", with a median of B of 0 (or a
 * quotient that is not finite) "undefined"; neither is a failure of the
 * report.
 *
 * Outputs in RESULTS_DIR: summary.txt (also on stdout), results.json, and
 * per figure with samples FIGURE.dat (x, then median and p99 per method,
 * NaN where a method has no sample) and FIGURE.gp, which draws FIGURE.png
 * when gnuplot runs it in RESULTS_DIR: lines and points of the medians
 * against x per method, bars per method when the figure has a single x;
 * the y axis (and a numeric x axis) is logarithmic when its values are
 * all positive and span more than two decades.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "json.h"
#include "krbench_report.h"

#define KRR_PROBLEM_LEN	256
#define KRR_STDERR_MAX	10	/* malformed lines reported on stderr */

struct krr_series {
	unsigned int fig;
	unsigned int method;	/* index in the figure's methods */
	unsigned int x;		/* index in the figure's xs */
	double *v;
	size_t n, cap;
	bool sorted;
};

struct krr_stats {
	size_t n;
	double median, p99, mean, min, max;
};

struct krr_figure {
	char name[KRR_NAME_LEN + 1];
	char unit[KRR_UNIT_LEN + 1];
	char xlabel[KRR_XLABEL_LEN + 1];
	char title[KRR_TITLE_LEN + 1];
	bool declared;
	char methods[KRR_MAX_METHODS][KRR_METHOD_LEN + 1];
	unsigned int nmethods;
	char xs[KRR_MAX_XS][KRR_X_LEN + 1];
	double xval[KRR_MAX_XS];	/* the number, when numeric */
	unsigned int nxs;
	bool x_numeric;			/* every x so far is a number */
	unsigned int order[KRR_MAX_XS];	/* xs in the order they are shown */
	size_t nsamples;
};

enum krr_op { KRR_OP_NONE, KRR_OP_GE, KRR_OP_LE, KRR_OP_GT, KRR_OP_LT };

static const char *const krr_op_text[] = {
	[KRR_OP_NONE] = "", [KRR_OP_GE] = ">=", [KRR_OP_LE] = "<=",
	[KRR_OP_GT] = ">", [KRR_OP_LT] = "<",
};

struct krr_ratio {
	char fig[KRR_NAME_LEN + 1];
	char name[KRR_METHOD_LEN + 1];
	char a[KRR_METHOD_LEN + 1];
	char b[KRR_METHOD_LEN + 1];
	enum krr_op op;
	double target;
};

/* The outcome of a ratio at one x. */
enum krr_status {
	KRR_MET, KRR_NOT_MET, KRR_NO_TARGET, KRR_MISSING, KRR_UNDEFINED,
	KRR_NSTATUS,
};

static const char *const krr_status_text[KRR_NSTATUS] = {
	[KRR_MET] = "met", [KRR_NOT_MET] = "not met",
	[KRR_NO_TARGET] = "no target", [KRR_MISSING] = "missing",
	[KRR_UNDEFINED] = "undefined",
};

struct krr {
	struct krr_figure *figs[KRR_MAX_FIGURES];
	unsigned int nfigs;
	struct krr_series *series;
	size_t nseries, series_cap;
	struct krr_ratio ratios[KRR_MAX_RATIOS];
	unsigned int nratios;
	struct krr_counts c;
	size_t last;		/* the series of the last sample (a cache) */
	unsigned int reported;	/* problems written to stderr */
	bool quiet_errors;	/* no stderr (the fuzzer, the tests) */
	char problem[KRR_PROBLEM_LEN];
	char **files;
	size_t nfiles;
	bool finished;		/* series sorted, x order set */
};

struct krr *krr_new(void)
{
	struct krr *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->last = SIZE_MAX;
	return r;
}

void krr_free(struct krr *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nfigs; i++)
		free(r->figs[i]);
	for (i = 0; i < r->nseries; i++)
		free(r->series[i].v);
	for (i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	free(r->series);
	free(r);
}

void krr_set_quiet(struct krr *r, bool quiet)
{
	r->quiet_errors = quiet;
}

void krr_get_counts(const struct krr *r, struct krr_counts *c)
{
	*c = r->c;
}

const char *krr_first_problem(const struct krr *r)
{
	return r->problem;
}

size_t krr_nfigures(const struct krr *r)
{
	return r->nfigs;
}

const char *krr_figure_name(const struct krr *r, size_t i)
{
	return i < r->nfigs ? r->figs[i]->name : NULL;
}

/* ---- parsing ---- */

/* A line being parsed: its fields, NUL-terminated in a copy. */
struct krr_line {
	char buf[KRR_MAX_LINE + 1];
	char *f[8];
	int nf;
	char *rest;		/* the text after field 4 (an F line's title) */
	const char *file;
	uint64_t no;
};

static void krr_problem(struct krr *r, const struct krr_line *l,
			const char *why, bool dropped)
{
	if (dropped)
		r->c.dropped++;
	else
		r->c.malformed++;
	if (!r->problem[0])
		snprintf(r->problem, sizeof(r->problem), "%s:%llu: %s%s",
			 l->file, (unsigned long long)l->no,
			 dropped ? "dropped: " : "", why);
	if (r->quiet_errors || r->reported >= KRR_STDERR_MAX)
		return;
	r->reported++;
	fprintf(stderr, "krbench_report: %s:%llu: %s%s\n", l->file,
		(unsigned long long)l->no, dropped ? "dropped: " : "", why);
}

static bool krr_is_sep(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Split the line into at most @max fields; the rest of the line after
 * field @rest_after (its leading blanks skipped) is kept in l->rest.
 */
static void krr_split(struct krr_line *l, int max, int rest_after)
{
	char *p = l->buf;

	l->nf = 0;
	l->rest = NULL;
	for (;;) {
		while (krr_is_sep(*p))
			p++;
		if (!*p)
			return;
		if (l->nf == rest_after) {
			l->rest = p;
			return;
		}
		if (l->nf == max) {
			l->nf++;	/* one too many: the caller refuses it */
			return;
		}
		l->f[l->nf++] = p;
		while (*p && !krr_is_sep(*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static bool krr_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* A token of [A-Za-z0-9_.:+-], 1..@max bytes; @name: starts [A-Za-z0-9_]. */
static bool krr_token(const char *s, size_t max, bool name)
{
	size_t i;

	if (!s[0])
		return false;
	if (name && !krr_alnum(s[0]) && s[0] != '_')
		return false;
	for (i = 0; s[i]; i++) {
		if (i >= max)
			return false;
		if (!krr_alnum(s[i]) && !strchr("_.:+-", s[i]))
			return false;
	}
	return true;
}

/* A finite number spelled by all of @s. */
static bool krr_number(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return end != s && !*end && isfinite(*v);
}

static struct krr_figure *krr_figure(struct krr *r, const char *name,
				     bool *dropped)
{
	struct krr_figure *fg;
	unsigned int i;

	*dropped = false;
	for (i = 0; i < r->nfigs; i++)
		if (!strcmp(r->figs[i]->name, name))
			return r->figs[i];
	if (r->nfigs >= KRR_MAX_FIGURES) {
		*dropped = true;
		return NULL;
	}
	fg = calloc(1, sizeof(*fg));
	if (!fg) {
		*dropped = true;
		return NULL;
	}
	snprintf(fg->name, sizeof(fg->name), "%s", name);
	snprintf(fg->unit, sizeof(fg->unit), "value");
	snprintf(fg->xlabel, sizeof(fg->xlabel), "x");
	snprintf(fg->title, sizeof(fg->title), "%s", name);
	fg->x_numeric = true;
	r->figs[r->nfigs++] = fg;
	return fg;
}

/* @s into @dst of @cap bytes: control bytes become spaces, cut cleanly. */
static void krr_copy_text(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(s), i;

	while (n && krr_is_sep(s[n - 1]))
		n--;
	if (n >= cap) {
		n = cap - 1;
		/* not in the middle of a UTF-8 sequence */
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	dst[n] = '\0';
}

static void krr_line_f(struct krr *r, struct krr_line *l)
{
	struct krr_figure *fg;
	bool dropped;

	krr_split(l, 4, 4);
	if (l->nf != 4 || !l->rest) {
		krr_problem(r, l, "F: want F FIGURE UNIT XLABEL TITLE...", false);
		return;
	}
	if (!krr_token(l->f[1], KRR_NAME_LEN, true) ||
	    !krr_token(l->f[2], KRR_UNIT_LEN, false) ||
	    !krr_token(l->f[3], KRR_XLABEL_LEN, false)) {
		krr_problem(r, l, "F: a bad figure name, unit or x label", false);
		return;
	}
	fg = krr_figure(r, l->f[1], &dropped);
	if (!fg) {
		krr_problem(r, l, "F: too many figures", true);
		return;
	}
	r->c.figure_decls++;
	if (fg->declared)
		return;
	fg->declared = true;
	snprintf(fg->unit, sizeof(fg->unit), "%s", l->f[2]);
	snprintf(fg->xlabel, sizeof(fg->xlabel), "%s", l->f[3]);
	krr_copy_text(fg->title, sizeof(fg->title), l->rest);
}

/* The index of @s in @names (@n of them), or -1. */
static int krr_find_name(const char (*names)[KRR_METHOD_LEN + 1],
			 unsigned int n, const char *s)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return (int)i;
	return -1;
}

static int krr_find_x(const struct krr_figure *fg, const char *s)
{
	unsigned int i;

	for (i = 0; i < fg->nxs; i++)
		if (!strcmp(fg->xs[i], s))
			return (int)i;
	return -1;
}

static struct krr_series *krr_series_of(struct krr *r, unsigned int fig,
					unsigned int m, unsigned int x)
{
	struct krr_series *s;
	size_t i;

	if (r->last < r->nseries) {
		s = &r->series[r->last];
		if (s->fig == fig && s->method == m && s->x == x)
			return s;
	}
	for (i = 0; i < r->nseries; i++) {
		s = &r->series[i];
		if (s->fig == fig && s->method == m && s->x == x) {
			r->last = i;
			return s;
		}
	}
	if (r->nseries >= KRR_MAX_SERIES)
		return NULL;
	if (r->nseries == r->series_cap) {
		size_t cap = r->series_cap ? r->series_cap * 2 : 64;

		s = realloc(r->series, cap * sizeof(*s));
		if (!s)
			return NULL;
		r->series = s;
		r->series_cap = cap;
	}
	s = &r->series[r->nseries];
	memset(s, 0, sizeof(*s));
	s->fig = fig;
	s->method = m;
	s->x = x;
	r->last = r->nseries++;
	return s;
}

static unsigned int krr_fig_index(const struct krr *r,
				  const struct krr_figure *fg)
{
	unsigned int i;

	for (i = 0; i < r->nfigs; i++)
		if (r->figs[i] == fg)
			break;
	return i;
}

static void krr_line_s(struct krr *r, struct krr_line *l)
{
	struct krr_figure *fg;
	struct krr_series *s;
	bool dropped;
	double v, xv;
	int m, x;

	krr_split(l, 5, -1);
	if (l->nf != 5) {
		krr_problem(r, l, "S: want S FIGURE METHOD X VALUE", false);
		return;
	}
	if (!krr_token(l->f[1], KRR_NAME_LEN, true) ||
	    !krr_token(l->f[2], KRR_METHOD_LEN, true) ||
	    !krr_token(l->f[3], KRR_X_LEN, false)) {
		krr_problem(r, l, "S: a bad figure, method or x", false);
		return;
	}
	if (!krr_number(l->f[4], &v)) {
		krr_problem(r, l, "S: the value is not a finite number", false);
		return;
	}
	if (r->c.samples >= KRR_MAX_SAMPLES) {
		krr_problem(r, l, "S: too many samples", true);
		return;
	}
	fg = krr_figure(r, l->f[1], &dropped);
	if (!fg) {
		krr_problem(r, l, "S: too many figures", true);
		return;
	}
	m = krr_find_name(fg->methods, fg->nmethods, l->f[2]);
	if (m < 0) {
		if (fg->nmethods >= KRR_MAX_METHODS) {
			krr_problem(r, l, "S: too many methods in the figure", true);
			return;
		}
		m = (int)fg->nmethods;
	}
	x = krr_find_x(fg, l->f[3]);
	if (x < 0) {
		if (fg->nxs >= KRR_MAX_XS) {
			krr_problem(r, l, "S: too many x values in the figure", true);
			return;
		}
		x = (int)fg->nxs;
	}
	s = krr_series_of(r, krr_fig_index(r, fg), (unsigned int)m,
			  (unsigned int)x);
	if (!s) {
		krr_problem(r, l, "S: too many series, or no memory", true);
		return;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		double *nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv) {
			krr_problem(r, l, "S: out of memory", true);
			return;
		}
		s->v = nv;
		s->cap = cap;
	}
	/* Only now: a dropped sample adds no method or x of its own. */
	if ((unsigned int)m == fg->nmethods)
		snprintf(fg->methods[fg->nmethods++], KRR_METHOD_LEN + 1, "%s",
			 l->f[2]);
	if ((unsigned int)x == fg->nxs) {
		snprintf(fg->xs[x], KRR_X_LEN + 1, "%s", l->f[3]);
		if (krr_number(l->f[3], &xv))
			fg->xval[x] = xv;
		else
			fg->x_numeric = false;
		fg->nxs++;
	}
	s->v[s->n++] = v;
	s->sorted = false;
	fg->nsamples++;
	r->c.samples++;
	r->finished = false;
}

static void krr_line_r(struct krr *r, struct krr_line *l)
{
	struct krr_ratio *ra;
	enum krr_op op = KRR_OP_NONE;
	double t = 0;
	unsigned int i;
	size_t n;

	krr_split(l, 7, -1);
	if (l->nf != 5 && l->nf != 7) {
		krr_problem(r, l, "R: want R FIGURE NAME A B [OP TARGET]", false);
		return;
	}
	if (!krr_token(l->f[1], KRR_NAME_LEN, true) ||
	    !krr_token(l->f[2], KRR_METHOD_LEN, true) ||
	    !krr_token(l->f[3], KRR_METHOD_LEN, true) ||
	    !krr_token(l->f[4], KRR_METHOD_LEN, true)) {
		krr_problem(r, l, "R: a bad figure, ratio or method name", false);
		return;
	}
	if (l->nf == 7) {
		for (i = KRR_OP_GE; i <= KRR_OP_LT; i++)
			if (!strcmp(l->f[5], krr_op_text[i]))
				op = (enum krr_op)i;
		n = strlen(l->f[6]);
		if (n > 1 && l->f[6][n - 1] == 'x')
			l->f[6][n - 1] = '\0';
		if (op == KRR_OP_NONE || !krr_number(l->f[6], &t)) {
			krr_problem(r, l, "R: the target is not OP NUMBER (OP: >= <= > <)",
				    false);
			return;
		}
	}
	for (i = 0; i < r->nratios; i++)
		if (!strcmp(r->ratios[i].fig, l->f[1]) &&
		    !strcmp(r->ratios[i].name, l->f[2])) {
			r->c.ratio_decls++;	/* a repeat: the first counts */
			return;
		}
	if (r->nratios >= KRR_MAX_RATIOS) {
		krr_problem(r, l, "R: too many ratios", true);
		return;
	}
	ra = &r->ratios[r->nratios++];
	snprintf(ra->fig, sizeof(ra->fig), "%s", l->f[1]);
	snprintf(ra->name, sizeof(ra->name), "%s", l->f[2]);
	snprintf(ra->a, sizeof(ra->a), "%s", l->f[3]);
	snprintf(ra->b, sizeof(ra->b), "%s", l->f[4]);
	ra->op = op;
	ra->target = t;
	r->c.ratio_decls++;
}

/* One line of @len bytes (no newline). */
static void krr_parse_line(struct krr *r, const char *file, uint64_t no,
			   const char *p, size_t len)
{
	static struct krr_line l;	/* 4 KiB: not on the stack */
	size_t i;

	r->c.lines++;
	l.file = file;
	l.no = no;
	if (len && p[len - 1] == '\r')
		len--;
	if (len > KRR_MAX_LINE) {
		krr_problem(r, &l, "line too long", false);
		return;
	}
	if (memchr(p, '\0', len)) {
		krr_problem(r, &l, "a NUL byte in the line", false);
		return;
	}
	for (i = 0; i < len && krr_is_sep(p[i]); i++)
		;
	if (i == len || p[i] == '#') {
		r->c.ignored++;
		return;
	}
	memcpy(l.buf, p, len);
	l.buf[len] = '\0';
	if (len - i >= 2 && krr_is_sep(p[i + 1])) {
		switch (p[i]) {
		case 'S':
			krr_line_s(r, &l);
			return;
		case 'F':
			krr_line_f(r, &l);
			return;
		case 'R':
			krr_line_r(r, &l);
			return;
		}
	}
	krr_problem(r, &l, "not an S, F or R line", false);
}

/* Remember the name of an input (for the JSON document). */
static const char *krr_add_file(struct krr *r, const char *name)
{
	char **nf, *s;

	r->c.files++;
	s = strdup(name);
	if (!s)
		return name;
	nf = realloc(r->files, (r->nfiles + 1) * sizeof(*nf));
	if (!nf) {
		free(s);
		return name;
	}
	r->files = nf;
	r->files[r->nfiles++] = s;
	return s;
}

void krr_parse_buf(struct krr *r, const char *name, const char *buf,
		   size_t len)
{
	const char *file = krr_add_file(r, name);
	const char *p = buf, *end = buf + len, *nl;
	uint64_t no = 0;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		krr_parse_line(r, file, ++no, p, (size_t)(nl - p));
		p = nl + 1;
	}
}

int krr_parse_file(struct krr *r, const char *path)
{
	bool in = !strcmp(path, "-");
	FILE *f = in ? stdin : fopen(path, "r");
	const char *file;
	uint64_t no = 0;
	size_t cap = 0;
	char *line = NULL;
	ssize_t n;
	int err;

	if (!f)
		return -1;
	file = krr_add_file(r, in ? "(stdin)" : path);
	while ((n = getline(&line, &cap, f)) != -1) {
		if (n && line[n - 1] == '\n')
			n--;
		krr_parse_line(r, file, ++no, line, (size_t)n);
	}
	err = ferror(f) ? EIO : 0;
	free(line);
	if (!in)
		fclose(f);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* ---- statistics ---- */

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

/* Sort every series and put each figure's xs in the order shown. */
static void krr_finish(struct krr *r)
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

static const struct krr_series *krr_find_series(const struct krr *r,
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

static void krr_stats_of(const struct krr_series *s, struct krr_stats *st)
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

/* A ratio at one x: its value (when defined) and its outcome. */
static enum krr_status krr_ratio_at(const struct krr *r, unsigned int fig,
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

/* The figure a ratio belongs to, or -1. */
static int krr_ratio_fig(const struct krr *r, const struct krr_ratio *ra)
{
	unsigned int i;

	for (i = 0; i < r->nfigs; i++)
		if (!strcmp(r->figs[i]->name, ra->fig))
			return (int)i;
	return -1;
}

/* ---- the text summary ---- */

/* @v in at most 12 characters, with digits that fit its size. */
static void krr_fmt(char *buf, size_t cap, double v)
{
	double a = fabs(v);

	if (a >= 1e9 || (a > 0 && a < 0.01))
		snprintf(buf, cap, "%.3e", v);
	else if (a >= 100)
		snprintf(buf, cap, "%.1f", v);
	else if (a >= 1)
		snprintf(buf, cap, "%.2f", v);
	else
		snprintf(buf, cap, "%.3f", v);
}

static void krr_fmt_ratio(char *buf, size_t cap, double v)
{
	double a = fabs(v);

	if (a >= 1e6 || (a > 0 && a < 0.001))
		snprintf(buf, cap, "%.3gx", v);
	else if (a >= 100)
		snprintf(buf, cap, "%.1fx", v);
	else if (a >= 1)
		snprintf(buf, cap, "%.2fx", v);
	else
		snprintf(buf, cap, "%.3fx", v);
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
	const struct krr_series *s;
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
				x = fg->order[k];
				s = krr_find_series(r, fig, (int)m, x);
				if (!s)
					continue;
				krr_stats_of(s, &st);
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

/* ---- JSON ---- */

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
	const struct krr_series *s;
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
			x = fg->order[k];
			s = krr_find_series(r, fig, (int)m, x);
			if (!s)
				continue;
			krr_stats_of(s, &st);
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

/* ---- data and gnuplot ---- */

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

/* ---- files ---- */

static int krr_mkdirs(const char *dir)
{
	char path[4096];
	size_t n = strlen(dir), i;

	if (!n || n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i])
			continue;
		path[i] = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -1;
		path[i] = i < n ? '/' : '\0';
	}
	return 0;
}

typedef int (*krr_writer)(struct krr *r, size_t i, FILE *f);

/* DIR/NAME.EXT (or DIR/NAME when @ext is NULL) by @w, or the summary. */
static int krr_write_one(struct krr *r, const char *dir, const char *name,
			 const char *ext, krr_writer w, size_t i)
{
	char path[4200];
	int ret;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, ext ? ext : "");
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = w(r, i, f);
	if (fclose(f))
		return -1;
	if (ret) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static int krr_w_summary(struct krr *r, size_t i, FILE *f)
{
	return krr_write_summary(r, f);
}

static int krr_w_json(struct krr *r, size_t i, FILE *f)
{
	return krr_write_json(r, f);
}

int krr_write_dir(struct krr *r, const char *dir, FILE *echo)
{
	size_t i;

	if (krr_mkdirs(dir))
		return -1;
	if (krr_write_one(r, dir, "summary.txt", NULL, krr_w_summary, 0) ||
	    krr_write_one(r, dir, "results.json", NULL, krr_w_json, 0))
		return -1;
	for (i = 0; i < r->nfigs; i++) {
		if (!r->figs[i]->nsamples)
			continue;
		if (krr_write_one(r, dir, r->figs[i]->name, ".dat",
				  krr_write_dat, i) ||
		    krr_write_one(r, dir, r->figs[i]->name, ".gp",
				  krr_write_gnuplot, i))
			return -1;
	}
	if (echo && (krr_write_summary(r, echo) || fflush(echo)))
		return -1;
	return 0;
}

int krr_main(int argc, char **argv)
{
	struct krr *r;
	bool quiet = false;
	const char *dir;
	int i = 1, ret = 0;

	if (i < argc && !strcmp(argv[i], "-q")) {
		quiet = true;
		i++;
	}
	if (i >= argc || argv[i][0] == '-') {
		fprintf(stderr, "usage: krbench_report [-q] RESULTS_DIR [FILE...]\n"
			"  FILE: lines 'F FIGURE UNIT XLABEL TITLE...', 'S FIGURE METHOD X VALUE',\n"
			"  'R FIGURE NAME METHOD_A METHOD_B [OP TARGET]' (see docs/benchmarks.md);\n"
			"  none or -: standard input\n");
		return 2;
	}
	dir = argv[i++];
	r = krr_new();
	if (!r) {
		fprintf(stderr, "krbench_report: out of memory\n");
		return 1;
	}
	if (i == argc && krr_parse_file(r, "-"))
		ret = 1;
	for (; i < argc; i++) {
		if (!krr_parse_file(r, argv[i]))
			continue;
		fprintf(stderr, "krbench_report: %s: %s\n", argv[i],
			strerror(errno));
		ret = 1;
	}
	if (r->c.malformed || r->c.dropped)
		fprintf(stderr, "krbench_report: %llu malformed, %llu dropped line(s); first: %s\n",
			(unsigned long long)r->c.malformed,
			(unsigned long long)r->c.dropped, r->problem);
	if (krr_write_dir(r, dir, quiet ? NULL : stdout)) {
		fprintf(stderr, "krbench_report: writing %s: %s\n", dir,
			strerror(errno));
		ret = 1;
	}
	krr_free(r);
	return ret;
}

#ifndef KRR_NO_MAIN
int main(int argc, char **argv)
{
	return krr_main(argc, argv);
}
#endif
