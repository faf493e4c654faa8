// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_krbench_report.c - libFuzzer target for the benchmarks' report
 * (bench/report/: the parser, the statistics, the writers): any bytes as
 * sample lines, then every writer (summary, JSON, each figure's data and
 * gnuplot script) into memory.
 * Checks: every line is counted in exactly one class, the limits hold,
 * the JSON writer saw its calls in order, a second report of the same
 * state is the same bytes, and what a gnuplot script quotes cannot end
 * its string early.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krbench_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* Bytes @w writes for @r (figure @i); the caller frees them. */
static char *written(struct krr *r, int w, size_t i, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int ret = -1;

	check(f);
	switch (w) {
	case 0:
		ret = krr_write_summary(r, f);
		break;
	case 1:
		ret = krr_write_json(r, f);
		break;
	case 2:
		ret = krr_write_dat(r, i, f);
		break;
	default:
		ret = krr_write_gnuplot(r, i, f);
		break;
	}
	check(!fclose(f));
	check(ret == 0);
	return buf;
}

/* Every line of a gnuplot script: its single quotes pair up. */
static void check_quotes(const char *s, size_t len)
{
	size_t i;
	bool in = false;

	for (i = 0; i < len; i++) {
		if (s[i] == '\'')
			in = !in;
		else if (s[i] == '\n')
			check(!in);
	}
	check(!in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct krr *r = krr_new();
	struct krr_counts c;
	char *a, *b;
	size_t la, lb, i;
	int w;

	check(r);
	krr_set_quiet(r, true);
	krr_parse_buf(r, "fuzz", (const char *)data, size);
	krr_get_counts(r, &c);
	check(c.files == 1);
	check(c.lines == c.ignored + c.samples + c.figure_decls +
	      c.ratio_decls + c.malformed + c.dropped);
	check(c.lines <= size + 1);
	check(krr_nfigures(r) <= KRR_MAX_FIGURES);
	check(!(c.malformed + c.dropped) == !krr_first_problem(r)[0]);
	for (w = 0; w < 2; w++) {
		a = written(r, w, 0, &la);
		b = written(r, w, 0, &lb);
		check(la == lb && !memcmp(a, b, la));
		free(a);
		free(b);
	}
	for (i = 0; i < krr_nfigures(r); i++) {
		check(krr_figure_name(r, i));
		a = written(r, 2, i, &la);
		free(a);
		a = written(r, 3, i, &la);
		check_quotes(a, la);
		free(a);
	}
	krr_free(r);
	return 0;
}
