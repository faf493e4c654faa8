/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * krbench_report.h - the parts of krbench_report (bench/krbench_report.c,
 * bench/report/) the unit tests and the fuzzer call: parse sample lines,
 * then write the summary, the JSON document and each figure's data and
 * gnuplot script. The sample format is described at the top of
 * bench/report/parse.c and in docs/benchmarks.md.
 */
#ifndef KRBENCH_REPORT_H
#define KRBENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Limits: what goes past one is dropped and counted, never grown. */
#define KRR_MAX_LINE		4096	/* bytes of one line */
#define KRR_MAX_FIGURES		128
#define KRR_MAX_METHODS		32	/* per figure */
#define KRR_MAX_XS		128	/* distinct x values per figure */
#define KRR_MAX_SERIES		4096	/* (figure, method, x) in all */
#define KRR_MAX_RATIOS		256
#define KRR_MAX_SAMPLES		(16u << 20)	/* in all */
#define KRR_NAME_LEN		48	/* figure names (file names too) */
#define KRR_METHOD_LEN		32
#define KRR_X_LEN		24
#define KRR_UNIT_LEN		16
#define KRR_XLABEL_LEN		32
#define KRR_TITLE_LEN		160

struct krr;

/* What the input held; every line is counted in exactly one class. */
struct krr_counts {
	uint64_t files;
	uint64_t lines;
	uint64_t ignored;	/* blank lines and # comments */
	uint64_t samples;	/* S lines taken */
	uint64_t figure_decls;	/* F lines taken (a repeat included) */
	uint64_t ratio_decls;	/* R lines taken (a repeat included) */
	uint64_t malformed;	/* not in the format */
	uint64_t dropped;	/* in the format, but past a limit */
};

/* A new, empty report, or NULL (no memory). */
struct krr *krr_new(void);
void krr_free(struct krr *r);
/* No malformed lines on stderr (they are still counted). */
void krr_set_quiet(struct krr *r, bool quiet);

/* Parse @len bytes at @buf, lines of one input named @name. */
void krr_parse_buf(struct krr *r, const char *name, const char *buf,
		   size_t len);
/* Parse the file at @path ("-": stdin); 0, or -1 (errno) if unreadable. */
int krr_parse_file(struct krr *r, const char *path);

void krr_get_counts(const struct krr *r, struct krr_counts *c);
/* Where the first malformed or dropped line was, and why ("" if none). */
const char *krr_first_problem(const struct krr *r);

/* Figures, in the order of their first line. */
size_t krr_nfigures(const struct krr *r);
const char *krr_figure_name(const struct krr *r, size_t i);

/* The text summary; 0, or -1 on a write error. */
int krr_write_summary(struct krr *r, FILE *f);
/* The JSON document; 0, or -1 (a write error or a writer error). */
int krr_write_json(struct krr *r, FILE *f);
/* Figure @i's data (whitespace columns) and its gnuplot script. */
int krr_write_dat(struct krr *r, size_t i, FILE *f);
int krr_write_gnuplot(struct krr *r, size_t i, FILE *f);

/*
 * Everything into directory @dir (created if missing): summary.txt,
 * results.json, NAME.dat and NAME.gp per figure with samples; the summary
 * is also written to @echo unless it is NULL. 0, or -1 (errno).
 */
int krr_write_dir(struct krr *r, const char *dir, FILE *echo);

/* The program: krbench_report [-q] RESULTS_DIR [FILE...]. */
int krr_main(int argc, char **argv);

#endif /* KRBENCH_REPORT_H */
