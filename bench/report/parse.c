// SPDX-License-Identifier: BSD-2-Clause
/*
 * parse.c - krbench_report's parser: sample lines (F, S and R records)
 * into the report of parse.h, and the report's life (new, free, what the
 * input held). It is the only part that reads bytes from outside, so it
 * stands apart from the statistics and the writers, which never see a
 * line; fuzz_krbench_report (tests/fuzz) aims at it.
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
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "parse.h"

#define KRR_STDERR_MAX	10	/* malformed lines reported on stderr */

const char *const krr_op_text[] = {
	[KRR_OP_NONE] = "", [KRR_OP_GE] = ">=", [KRR_OP_LE] = "<=",
	[KRR_OP_GT] = ">", [KRR_OP_LT] = "<",
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

int krr_find_name(const char names[][KRR_METHOD_LEN + 1], unsigned int n,
		  const char *s)
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
