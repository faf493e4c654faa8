/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats.h - the statistics of a parsed report (stats.c), which every
 * writer takes its numbers from.
 */
#ifndef KRR_STATS_H
#define KRR_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "parse.h"

struct krr_stats {
	size_t n;
	double median, p99, mean, min, max;
};

/* The outcome of a ratio at one x. */
enum krr_status {
	KRR_MET, KRR_NOT_MET, KRR_NO_TARGET, KRR_MISSING, KRR_UNDEFINED,
	KRR_NSTATUS,
};

extern const char *const krr_status_text[KRR_NSTATUS];

/* Sort every series and put each figure's xs in the order shown. */
void krr_finish(struct krr *r);
/* The series of method @m of figure @fig at x @x, if it has samples. */
const struct krr_series *krr_find_series(const struct krr *r,
					 unsigned int fig, int m,
					 unsigned int x);
/* The statistics of a sorted series with samples. */
void krr_stats_of(const struct krr_series *s, struct krr_stats *st);
/*
 * A row of figure @fig's tables: the statistics of method @m at the @k-th
 * x shown, whose index goes in @x; false if that series has no sample.
 */
bool krr_row_stats(const struct krr *r, unsigned int fig, unsigned int m,
		   unsigned int k, unsigned int *x, struct krr_stats *st);
/* A ratio at one x: its value (when defined) and its outcome. */
enum krr_status krr_ratio_at(const struct krr *r, unsigned int fig,
			     const struct krr_ratio *ra, unsigned int x,
			     double *val);
/* The figure a ratio belongs to, or -1. */
int krr_ratio_fig(const struct krr *r, const struct krr_ratio *ra);

#endif /* KRR_STATS_H */
