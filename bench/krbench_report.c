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
 * This file is the program: its command line, the results directory and
 * which writer fills which file. The parts are under bench/report/:
 * parse.c (the sample lines, whose format it describes), stats.c (the
 * statistics), and a writer per output: write_summary.c (summary.txt,
 * also on stdout), write_json.c (results.json) and write_plot.c (per
 * figure with samples FIGURE.dat and FIGURE.gp).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "krbench_report.h"
#include "report/parse.h"

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
