// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_krbench_report.c - the benchmarks' report (bench/krbench_report.c
 * and bench/report/): the statistics of a series (median, p99, mean, min,
 * max), ratio lines and their targets, a ratio whose method or figure is
 * missing, malformed and over-limit lines counted and skipped, numeric and
 * categorical x, the files written into a results directory (summary as on
 * stdout, one JSON document, which a small validator parses, data and
 * gnuplot scripts with log scales and bars where they belong, hostile
 * titles quoted).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "krbench_report.h"

/* ---- helpers ---- */

static struct krr *parse(const char *text)
{
	struct krr *r = krr_new();

	assert_non_null(r);
	krr_set_quiet(r, true);
	krr_parse_buf(r, "in", text, strlen(text));
	return r;
}

/* The text @w writes for @r (figure @i), malloc'ed. */
static char *capture(struct krr *r, int what, size_t i)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret = -1;

	assert_non_null(f);
	switch (what) {
	case 0:
		ret = krr_write_summary(r, f);
		break;
	case 1:
		ret = krr_write_json(r, f);
		break;
	case 2:
		ret = krr_write_dat(r, i, f);
		break;
	case 3:
		ret = krr_write_gnuplot(r, i, f);
		break;
	}
	assert_int_equal(fclose(f), 0);
	assert_int_equal(ret, 0);
	return buf;
}

static void has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing \"%s\" in:\n%s", want, text);
}

static void hasnt(const char *text, const char *want)
{
	if (strstr(text, want))
		fail_msg("unexpected \"%s\" in:\n%s", want, text);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/* A fresh temporary directory. */
static void tmpdir(char *buf, size_t cap)
{
	snprintf(buf, cap, "/tmp/test_krbench_report.XXXXXX");
	assert_non_null(mkdtemp(buf));
}

static void rm_rf(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A strict JSON syntax check (RFC 8259 grammar, no semantics): returns
 * the end of the value at @p, or NULL.
 */
static const char *js_value(const char *p, int depth);

static const char *js_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *js_string(const char *p)
{
	int i;

	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF",
						    p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *js_number(const char *p)
{
	const char *s;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (*p == '.') {
		s = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == s)
			return NULL;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		s = p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == s)
			return NULL;
	}
	return p;
}

static const char *js_container(const char *p, int depth, char close,
				bool object)
{
	p = js_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (object) {
			p = js_string(p);
			if (!p)
				return NULL;
			p = js_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = js_value(p, depth + 1);
		if (!p)
			return NULL;
		p = js_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *js_value(const char *p, int depth)
{
	if (depth > 64)
		return NULL;
	p = js_ws(p);
	switch (*p) {
	case '{':
		return js_container(p, depth, '}', true);
	case '[':
		return js_container(p, depth, ']', false);
	case '"':
		return js_string(p);
	case 't':
		return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f':
		return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n':
		return strncmp(p, "null", 4) ? NULL : p + 4;
	default:
		return js_number(p);
	}
}

/* One JSON document and nothing after it but white space. */
static void json_valid(const char *text)
{
	const char *end = js_value(text, 0);

	if (!end || *js_ws(end))
		fail_msg("not one JSON document:\n%s", text);
}

/* ---- tests ---- */

static void test_stats(void **unused)
{
	char line[64], *text = NULL, *s;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct krr *r;
	int i;

	assert_non_null(f);
	fputs("F lat us procs READ latency\n", f);
	/* 1..100 in a shuffled order */
	for (i = 0; i < 100; i++) {
		snprintf(line, sizeof(line), "S lat a 1 %d\n", (i * 37) % 100 + 1);
		fputs(line, f);
	}
	fputs("S lat b 1 5\nS lat b 1 7\nS lat b 1 6\n", f);
	fclose(f);
	r = parse(text);
	s = capture(r, 0, 0);
	has(s, " READ latency\n");
	has(s, "median(us)");
	has(s, "p99(us)");
	/* a: n 100, median 50.5, p99 the 99th smallest, mean 50.5 */
	has(s, " a           1       100         50.50         99.00"
	       "         50.50          1.00         100.0\n");
	/* b: n 3, median 6, p99 the largest (ceil(2.97) = 3rd) */
	has(s, " b           1         3          6.00          7.00"
	       "          6.00          5.00          7.00\n");
	free(s);
	s = capture(r, 1, 0);
	json_valid(s);
	has(s, "{\"method\":\"a\",\"x\":\"1\",\"n\":100,\"median\":50.500000,"
	       "\"p99\":99.000000,\"mean\":50.500000,\"min\":1.000000,"
	       "\"max\":100.000000}");
	free(s);
	free(text);
	krr_free(r);
}

static const char *const ratio_input =
	"F conn us procs Connect: new process to a ready connection\n"
	"S conn krcore 1 10\nS conn krcore 1 20\nS conn krcore 1 30\n"
	"S conn verbs 1 20000\nS conn verbs 1 40000\n"
	"S conn krcore 8 100\nS conn verbs 8 5000\n"
	"S conn rdma_cm 8 2000\n"
	"R conn verbs_vs_krcore verbs krcore >= 1000x\n"
	"R conn cm_vs_krcore rdma_cm krcore >= 100\n"
	"R conn plain verbs krcore\n"
	"R conn zero krcore nobody < 2\n"
	"R nofigure r1 a b\n"
	"F empty us x Declared, never measured\n"
	"R empty r2 a b >= 1\n";

static void test_ratios(void **unused)
{
	struct krr *r = parse(ratio_input);
	char *s = capture(r, 0, 0);

	has(s, " ratio verbs_vs_krcore at x=1: 1500.0x (verbs/krcore, target >= 1000x: met)\n");
	has(s, " ratio verbs_vs_krcore at x=8: 50.00x (verbs/krcore, target >= 1000x: not met)\n");
	/* rdma_cm was measured at 8 only */
	has(s, " ratio cm_vs_krcore at x=1: missing (no samples of rdma_cm at this x)\n");
	has(s, " ratio cm_vs_krcore at x=8: 20.00x (rdma_cm/krcore, target >= 100x: not met)\n");
	has(s, " ratio plain at x=1: 1500.0x (verbs/krcore)\n");
	/* a method never measured: said once, no crash */
	has(s, " ratio zero: missing (no samples of nobody)\n");
	has(s, " ratio r1: missing (no figure nofigure)\n");
	has(s, " Declared, never measured\n");
	has(s, " (no samples)\n");
	has(s, " ratio r2: missing (no samples of a nor of b)\n");
	free(s);
	s = capture(r, 1, 0);
	json_valid(s);
	has(s, "\"name\":\"verbs_vs_krcore\",\"figure\":\"conn\",\"a\":\"verbs\","
	       "\"b\":\"krcore\",\"target\":{\"op\":\">=\",\"value\":1000.000000}");
	has(s, "{\"x\":\"1\",\"value\":1500.000000,\"status\":\"met\"}");
	has(s, "{\"x\":\"8\",\"value\":50.000000,\"status\":\"not met\"}");
	has(s, "{\"x\":\"1\",\"value\":null,\"status\":\"missing\"}");
	has(s, "\"name\":\"plain\",\"figure\":\"conn\",\"a\":\"verbs\","
	       "\"b\":\"krcore\",\"target\":null");
	has(s, "\"orphan_ratios\":[{\"name\":\"r1\",\"figure\":\"nofigure\"");
	/* met: 1; not met: 2; no target: 2; missing: x=1 of cm, 2 of zero, r1, r2 */
	has(s, "\"ratio_points\":{\"met\":1,\"not_met\":2,\"no_target\":2,"
	       "\"missing\":5,\"undefined\":0}");
	free(s);
	krr_free(r);
}

static void test_undefined(void **unused)
{
	struct krr *r = parse("S f a 1 5\nS f b 1 0\nR f q a b >= 1\n"
			      "S f a 2 1e308\nS f b 2 1e-308\n");
	char *s = capture(r, 0, 0);

	has(s, " ratio q at x=1: undefined (median of b is 0, or the quotient overflows)\n");
	has(s, " ratio q at x=2: undefined (median of b is 0, or the quotient overflows)\n");
	free(s);
	s = capture(r, 1, 0);
	json_valid(s);
	has(s, "\"undefined\":2");
	free(s);
	krr_free(r);
}

static void test_malformed(void **unused)
{
	static const char text[] =
		"# a comment\n"
		"\n"
		"\t\t\r\n"
		"KIND 1 2 3\n"			/* a benchmark's own line */
		"S f m 1\n"			/* no value */
		"S f m 1 2 3\n"			/* one field too many */
		"S f m 1 abc\n"			/* not a number */
		"S f m 1 nan\n"
		"S f m 1 inf\n"
		"S f m 1 1e999\n"		/* overflows: not finite */
		"S ../etc m 1 2\n"		/* not a file name */
		"S .hidden m 1 2\n"
		"S f m$ 1 2\n"
		"S f m x'y 2\n"
		"S f m 1 2\r\n"			/* CRLF: fine */
		"F f us\n"			/* no x label, no title */
		"F f u\x01s procs T\n"
		"R f r a\n"
		"R f r a b >=\n"
		"R f r a b => 2\n"
		"R f r a b >= x\n"
		"R f r a b >= 2y\n"
		"S\n"
		"Sx f m 1 2\n"
		"s f m 1 2\n"
		"S f averyveryveryveryverylongmethodname 1 2\n"
		"S f m 1 3";			/* no final newline: fine */
	struct krr_counts c;
	struct krr *r = parse(text);
	char *s;

	krr_get_counts(r, &c);
	assert_int_equal(c.files, 1);
	assert_int_equal(c.lines, 27);
	assert_int_equal(c.ignored, 3);
	assert_int_equal(c.samples, 2);
	assert_int_equal(c.figure_decls, 0);
	assert_int_equal(c.ratio_decls, 0);
	assert_int_equal(c.malformed, 22);
	assert_int_equal(c.dropped, 0);
	assert_string_equal(krr_first_problem(r), "in:4: not an S, F or R line");
	assert_int_equal(krr_nfigures(r), 1);
	assert_string_equal(krr_figure_name(r, 0), "f");
	assert_null(krr_figure_name(r, 1));
	s = capture(r, 0, 0);
	has(s, " input: 1 file(s), 27 lines, 2 samples, 22 malformed, 0 dropped\n");
	has(s, " first problem: in:4: not an S, F or R line\n");
	free(s);
	s = capture(r, 1, 0);
	json_valid(s);
	has(s, "\"malformed\":22");
	free(s);
	krr_free(r);
}

/* A NUL byte in a line, a line too long: malformed, the rest still read. */
static void test_nul_and_long(void **unused)
{
	char text[KRR_MAX_LINE + 64];
	struct krr_counts c;
	struct krr *r;
	size_t n;

	memcpy(text, "S f m 1 2\nS f m\0 1 2\n", 21);
	n = 21;
	memset(text + n, 'x', KRR_MAX_LINE + 1);
	n += KRR_MAX_LINE + 1;
	memcpy(text + n, "\nS f m 1 4\n", 11);
	n += 11;
	r = krr_new();
	assert_non_null(r);
	krr_set_quiet(r, true);
	krr_parse_buf(r, "in", text, n);
	krr_get_counts(r, &c);
	assert_int_equal(c.lines, 4);
	assert_int_equal(c.samples, 2);
	assert_int_equal(c.malformed, 2);
	krr_free(r);
}

static void test_limits(void **unused)
{
	char line[128], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct krr_counts c;
	struct krr *r;
	int i;

	assert_non_null(f);
	for (i = 0; i < KRR_MAX_FIGURES + 10; i++)
		fprintf(f, "S fig%d m 1 1\n", i);
	for (i = 0; i < KRR_MAX_METHODS + 3; i++)
		fprintf(f, "S fig0 m%d 1 1\n", i);
	for (i = 0; i < KRR_MAX_XS + 4; i++)
		fprintf(f, "S fig1 m %d 1\n", i + 100);
	for (i = 0; i < KRR_MAX_RATIOS + 5; i++)
		fprintf(f, "R fig0 r%d a b\n", i);
	/* a repeat is no new ratio, a repeated F no new figure */
	fputs("R fig0 r0 c d\nF fig0 us x First\nF fig0 ms y Second\n", f);
	fclose(f);
	r = parse(text);
	krr_get_counts(r, &c);
	assert_int_equal(krr_nfigures(r), KRR_MAX_FIGURES);
	/* fig0 had method m already, fig1 x 1: one more over each */
	assert_int_equal(c.dropped, 10 + 4 + 5 + 5);
	assert_int_equal(c.ratio_decls, KRR_MAX_RATIOS + 1);
	assert_int_equal(c.figure_decls, 2);
	assert_int_equal(c.malformed, 0);
	snprintf(line, sizeof(line), "%s", krr_first_problem(r));
	has(line, "dropped");
	free(text);
	text = capture(r, 0, 0);
	has(text, " First\n figure fig0, x: x, values in us\n");
	free(text);
	text = capture(r, 1, 0);
	json_valid(text);
	free(text);
	krr_free(r);
}

static void test_x_order(void **unused)
{
	struct krr *r = parse("S n a 8 1\nS n a 1 1\nS n a 2.5 1\nS n a 1e1 1\n"
			      "S c a small 1\nS c a big 2\nS c a 3 3\n");
	char *s = capture(r, 2, 0);

	/* numeric: sorted by value */
	has(s, "\n1 1 1\n2.5 1 1\n8 1 1\n1e1 1 1\n");
	free(s);
	/* categorical (one x is a word): the order of first appearance */
	s = capture(r, 2, 1);
	has(s, "\nsmall 1 1\nbig 2 2\n3 3 3\n");
	free(s);
	s = capture(r, 3, 1);
	has(s, "using 0:2:xtic(1) with linespoints title 'a'");
	hasnt(s, "logscale");
	free(s);
	s = capture(r, 1, 0);
	has(s, "\"x_numeric\":true,\"samples\":4,\"methods\":[\"a\"],"
	       "\"xs\":[\"1\",\"2.5\",\"8\",\"1e1\"]");
	has(s, "\"x_numeric\":false");
	free(s);
	krr_free(r);
}

static void test_gnuplot(void **unused)
{
	struct krr *r;
	char *s;

	r = parse("F wide us nodes It's \"quoted\"\\n\x7f and long\n"
		  "S wide a 10 1\nS wide a 10000 1000\nS wide b 10 5\n"
		  "F narrow us procs Narrow\n"
		  "S narrow a 1 10\nS narrow a 2 999\n"
		  "F bar qps procs Bars\n"
		  "S bar krcore 8 1\nS bar verbs 8 1000\n"
		  "F neg us procs Negative\n"
		  "S neg a 1 -1\nS neg a 2 1000\n");

	s = capture(r, 3, 0);
	/* title quoted for gnuplot, the DEL byte a space */
	has(s, "set title 'It''s \"quoted\"\\n  and long'\n");
	has(s, "set logscale y\n");
	has(s, "set logscale x\n");
	has(s, "set output 'wide.png'\n");
	has(s, "plot 'wide.dat' using 1:2 with linespoints title 'a', \\\n"
	       "\t'wide.dat' using 1:4 with linespoints title 'b'\n");
	has(s, "pngcairo");
	free(s);
	s = capture(r, 2, 0);
	has(s, "# nodes, then per method its median and p99 (NaN: no sample)\n"
	       "# a.median a.p99 b.median b.p99\n10 1 1 5 5\n10000 1000 1000 NaN NaN\n");
	free(s);
	/* 10 to 999: less than two decades */
	s = capture(r, 3, 1);
	hasnt(s, "logscale");
	free(s);
	/* a single x: bars per method */
	s = capture(r, 3, 2);
	has(s, "with boxes");
	has(s, "set xlabel 'procs = 8'\n");
	has(s, "set logscale y\n");
	free(s);
	s = capture(r, 2, 2);
	has(s, "\nkrcore 1 1\nverbs 1000 1000\n");
	free(s);
	/* a value <= 0: no log scale */
	s = capture(r, 3, 3);
	hasnt(s, "logscale");
	free(s);
	assert_int_equal(krr_write_gnuplot(r, 4, stdout), -1);
	assert_int_equal(krr_write_dat(r, 4, stdout), -1);
	krr_free(r);
}

/* The program: files in a directory, the summary also on stdout. */
static void test_main_dir(void **unused)
{
	char dir[64], in1[128], in2[128], out[160], path[256], *a, *b;
	char *argv[6];
	FILE *echo;
	size_t len = 0;
	struct krr *r;

	tmpdir(dir, sizeof(dir));
	snprintf(in1, sizeof(in1), "%s/one.samples", dir);
	snprintf(in2, sizeof(in2), "%s/two.samples", dir);
	snprintf(out, sizeof(out), "%s/results/deeper", dir);
	write_file(in1, ratio_input);
	write_file(in2, "S conn krcore 1 20\nbad line\n");
	argv[0] = "krbench_report";
	argv[1] = "-q";
	argv[2] = out;
	argv[3] = in1;
	argv[4] = in2;
	argv[5] = NULL;
	assert_int_equal(krr_main(5, argv), 0);
	snprintf(path, sizeof(path), "%s/summary.txt", out);
	a = read_all(path);
	has(a, " ratio verbs_vs_krcore at x=1: 1500.0x");
	has(a, " input: 2 file(s), 18 lines, 9 samples, 1 malformed, 0 dropped\n");
	free(a);
	snprintf(path, sizeof(path), "%s/results.json", out);
	a = read_all(path);
	json_valid(a);
	has(a, "\"generator\":\"krbench_report\"");
	has(a, "\"files\":[\"");
	has(a, "one.samples\",\"");
	has(a, "\"figures\":[{\"name\":\"conn\",\"title\":\"Connect: new process "
	       "to a ready connection\",\"unit\":\"us\",\"x_label\":\"procs\"");
	free(a);
	snprintf(path, sizeof(path), "%s/conn.dat", out);
	assert_true(exists(path));
	snprintf(path, sizeof(path), "%s/conn.gp", out);
	assert_true(exists(path));
	/* a figure with no samples has no data and no plot */
	snprintf(path, sizeof(path), "%s/empty.dat", out);
	assert_false(exists(path));

	/* the summary on stdout is summary.txt */
	r = krr_new();
	assert_non_null(r);
	krr_set_quiet(r, true);
	assert_int_equal(krr_parse_file(r, in1), 0);
	assert_int_equal(krr_parse_file(r, in2), 0);
	a = NULL;
	echo = open_memstream(&a, &len);
	assert_non_null(echo);
	snprintf(out, sizeof(out), "%s/again", dir);
	assert_int_equal(krr_write_dir(r, out, echo), 0);
	fclose(echo);
	snprintf(path, sizeof(path), "%s/summary.txt", out);
	b = read_all(path);
	assert_string_equal(a, b);
	free(a);
	free(b);
	krr_free(r);

	/* an input that cannot be read: exit 1, the rest still written */
	snprintf(path, sizeof(path), "%s/absent", dir);
	argv[3] = path;
	argv[4] = NULL;
	snprintf(out, sizeof(out), "%s/third", dir);
	argv[2] = out;
	assert_int_equal(krr_main(4, argv), 1);
	snprintf(path, sizeof(path), "%s/results.json", out);
	assert_true(exists(path));
	/* usage */
	argv[1] = NULL;
	assert_int_equal(krr_main(1, argv), 2);
	rm_rf(dir);
}

/* No input at all: an empty report, still one JSON document. */
static void test_empty(void **unused)
{
	struct krr *r = parse("");
	struct krr_counts c;
	char *s;

	krr_get_counts(r, &c);
	assert_int_equal(c.lines, 0);
	s = capture(r, 0, 0);
	has(s, " input: 1 file(s), 0 lines, 0 samples, 0 malformed, 0 dropped\n");
	hasnt(s, "first problem");
	free(s);
	s = capture(r, 1, 0);
	json_valid(s);
	has(s, "\"figures\":[]");
	free(s);
	krr_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_ratios),
		cmocka_unit_test(test_undefined),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_nul_and_long),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_x_order),
		cmocka_unit_test(test_gnuplot),
		cmocka_unit_test(test_main_dir),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
