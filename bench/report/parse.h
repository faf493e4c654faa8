/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * parse.h - the report as the parser (parse.c) leaves it: the figures,
 * their series of samples and the ratio declarations, with what the input
 * held. stats.c and the writers (write_*.c) read it, the program
 * (bench/krbench_report.c) checks its counts; whoever else uses the report
 * sees only the opaque struct krr of bench/krbench_report.h.
 */
#ifndef KRR_PARSE_H
#define KRR_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "krbench_report.h"

#define KRR_PROBLEM_LEN	256

struct krr_series {
	unsigned int fig;
	unsigned int method;	/* index in the figure's methods */
	unsigned int x;		/* index in the figure's xs */
	double *v;
	size_t n, cap;
	bool sorted;
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

/* An OP as an R line spells it ("" for none). */
extern const char *const krr_op_text[];

struct krr_ratio {
	char fig[KRR_NAME_LEN + 1];
	char name[KRR_METHOD_LEN + 1];
	char a[KRR_METHOD_LEN + 1];
	char b[KRR_METHOD_LEN + 1];
	enum krr_op op;
	double target;
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

/* The index of @s in @names (@n of them), or -1. */
int krr_find_name(const char names[][KRR_METHOD_LEN + 1], unsigned int n,
		  const char *s);

#endif /* KRR_PARSE_H */
