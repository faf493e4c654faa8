// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_krctl_json.c - krctl's JSON writer (tools/krctl/json.c): commas,
 * nesting, exact 64-bit integers, doubles, string escaping and UTF-8
 * repair, and the calls out of order it refuses. A random-string check
 * runs every output through a strict validator of JSON string literals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct out {
	char *buf;
	size_t len;
	FILE *f;
	struct json j;
};

static void out_open(struct out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
	json_init(&o->j, o->f);
}

/* Ends the document; returns json_end()'s result, o->buf the text. */
static int out_close(struct out *o)
{
	int ret = json_end(&o->j);

	fclose(o->f);
	return ret;
}

/* The document written for one string value. */
static char *string_doc(const char *s, size_t len)
{
	struct out o;

	out_open(&o);
	json_string_n(&o.j, s, len);
	assert_int_equal(out_close(&o), 0);
	return o.buf;
}

static void test_object(void **state)
{
	struct out o;

	(void)state;
	out_open(&o);
	json_object_begin(&o.j);
	json_kv_string(&o.j, "a", "x");
	json_kv_u64(&o.j, "b", 42);
	json_kv_i64(&o.j, "c", -7);
	json_kv_bool(&o.j, "d", true);
	json_kv_bool(&o.j, "e", false);
	json_kv_null(&o.j, "f");
	json_kv_double(&o.j, "g", 1.5, 3);
	json_key(&o.j, "h");
	json_array_begin(&o.j);
	json_u64(&o.j, 1);
	json_object_begin(&o.j);
	json_object_end(&o.j);
	json_array_begin(&o.j);
	json_array_end(&o.j);
	json_string(&o.j, "y");
	json_array_end(&o.j);
	json_key(&o.j, "i");
	json_object_begin(&o.j);
	json_kv_u64(&o.j, "j", 0);
	json_object_end(&o.j);
	json_object_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf,
			    "{\"a\":\"x\",\"b\":42,\"c\":-7,\"d\":true,\"e\":false,\"f\":null,"
			    "\"g\":1.500,\"h\":[1,{},[],\"y\"],\"i\":{\"j\":0}}\n");
	free(o.buf);
}

static void test_integers(void **state)
{
	struct out o;

	(void)state;
	out_open(&o);
	json_array_begin(&o.j);
	json_u64(&o.j, UINT64_MAX);
	json_u64(&o.j, (1ULL << 53) + 1);	/* beyond a double's precision */
	json_i64(&o.j, INT64_MIN);
	json_i64(&o.j, INT64_MAX);
	json_u64(&o.j, 0);
	json_array_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf, "[18446744073709551615,9007199254740993,"
			    "-9223372036854775808,9223372036854775807,0]\n");
	free(o.buf);
}

static void test_doubles(void **state)
{
	struct out o;

	(void)state;
	out_open(&o);
	json_array_begin(&o.j);
	json_double(&o.j, 0.0, 1);
	json_double(&o.j, 1234.5678, 1);
	json_double(&o.j, 2.0, 0);
	json_double(&o.j, 0.1234567891, 20);	/* capped at 9 decimals */
	json_double(&o.j, NAN, 3);
	json_double(&o.j, INFINITY, 3);
	json_double(&o.j, -INFINITY, 3);
	json_double(&o.j, 5.0, -1);
	json_array_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf, "[0.0,1234.6,2,0.123456789,null,null,null,5]\n");
	free(o.buf);
}

static void test_escapes(void **state)
{
	char *d;

	(void)state;
	d = string_doc("a\"b\\c/d", 7);
	assert_string_equal(d, "\"a\\\"b\\\\c/d\"\n");
	free(d);
	d = string_doc("\b\f\n\r\t", 5);
	assert_string_equal(d, "\"\\b\\f\\n\\r\\t\"\n");
	free(d);
	d = string_doc("\x01\x1f\x7f x", 5);
	assert_string_equal(d, "\"\\u0001\\u001f\\u007f x\"\n");
	free(d);
	d = string_doc("", 0);
	assert_string_equal(d, "\"\"\n");
	free(d);
	/* @len bounds the string, a NUL byte ends it */
	d = string_doc("abcdef", 3);
	assert_string_equal(d, "\"abc\"\n");
	free(d);
	d = string_doc("ab\0cd", 5);
	assert_string_equal(d, "\"ab\"\n");
	free(d);
}

static void test_keys_escaped(void **state)
{
	struct out o;

	(void)state;
	out_open(&o);
	json_object_begin(&o.j);
	json_kv_u64(&o.j, "a\"\n", 1);
	json_object_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf, "{\"a\\\"\\n\":1}\n");
	free(o.buf);
}

static void test_utf8(void **state)
{
	char *d;

	(void)state;
	/* well-formed: 2, 3 and 4 byte sequences pass as they are */
	d = string_doc("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 11);
	assert_string_equal(d, "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n");
	free(d);
	/* a stray continuation byte, 0xff, 0xc0 0xaf (overlong) */
	d = string_doc("a\x80\x62\xff\x63\xc0\xaf", 7);	/* 0x62 b, 0x63 c */
	assert_string_equal(d, "\"a\\ufffdb\\ufffdc\\ufffd\\ufffd\"\n");
	free(d);
	/* a surrogate (ed a0 80), beyond U+10FFFF (f4 90 80 80) */
	d = string_doc("\xed\xa0\x80", 3);
	assert_string_equal(d, "\"\\ufffd\\ufffd\\ufffd\"\n");
	free(d);
	d = string_doc("\xf4\x90\x80\x80", 4);
	assert_string_equal(d, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n");
	free(d);
	/* overlong 3-byte (e0 80 af), truncated at the end and at @len */
	d = string_doc("\xe0\x80\xaf", 3);
	assert_string_equal(d, "\"\\ufffd\\ufffd\\ufffd\"\n");
	free(d);
	d = string_doc("x\xe2\x82", 3);
	assert_string_equal(d, "\"x\\ufffd\\ufffd\"\n");
	free(d);
	d = string_doc("\xe2\x82\xac", 2);
	assert_string_equal(d, "\"\\ufffd\\ufffd\"\n");
	free(d);
	/* a NUL byte in a sequence ends the string */
	d = string_doc("\xe2\x00\xac", 3);
	assert_string_equal(d, "\"\\ufffd\"\n");
	free(d);
	/* U+10FFFF and U+FFFF are fine */
	d = string_doc("\xf4\x8f\xbf\xbf\xef\xbf\xbf", 7);
	assert_string_equal(d, "\"\xf4\x8f\xbf\xbf\xef\xbf\xbf\"\n");
	free(d);
}

/*
 * A strict validator of a JSON string literal followed by a newline: the
 * grammar of RFC 8259 and well-formed UTF-8 (no surrogates, no overlong
 * forms, nothing above U+10FFFF).
 */
static int valid_string_doc(const unsigned char *s)
{
	if (*s++ != '"')
		return 0;
	for (;;) {
		unsigned char c = *s;

		if (c == '"')
			return s[1] == '\n' && s[2] == '\0';
		if (c < 0x20)
			return 0;
		if (c == '\\') {
			s++;
			if (strchr("\"\\/bfnrt", *s) && *s) {
				s++;
				continue;
			}
			if (*s != 'u')
				return 0;
			for (int i = 1; i <= 4; i++)
				if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
					return 0;
			s += 5;
			continue;
		}
		if (c < 0x80) {
			s++;
			continue;
		}
		{
			unsigned int cp, n, i;

			if (c >= 0xc2 && c <= 0xdf) {
				n = 2;
				cp = c & 0x1f;
			} else if (c >= 0xe0 && c <= 0xef) {
				n = 3;
				cp = c & 0x0f;
			} else if (c >= 0xf0 && c <= 0xf4) {
				n = 4;
				cp = c & 0x07;
			} else {
				return 0;
			}
			for (i = 1; i < n; i++) {
				if ((s[i] & 0xc0) != 0x80)
					return 0;
				cp = cp << 6 | (s[i] & 0x3f);
			}
			if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
			    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
				return 0;
			s += n;
		}
	}
}

/* xorshift64*, fixed seed */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dULL;
}

static void test_random_strings(void **state)
{
	unsigned char in[64];
	uint64_t seed = 0x1234567887654321ULL;
	int round, i;

	(void)state;
	for (round = 0; round < 20000; round++) {
		size_t len = rnd(&seed) % sizeof(in);
		char *d;

		for (i = 0; i < (int)len; i++) {
			uint64_t r = rnd(&seed);

			/* bias towards the interesting bytes */
			in[i] = (r & 3) == 0 ? (unsigned char)(0x80 + (r >> 8) % 0x80) :
				(unsigned char)(r >> 16);
		}
		d = string_doc((const char *)in, len);
		if (!valid_string_doc((const unsigned char *)d))
			fail_msg("round %d: invalid output %s", round, d);
		free(d);
	}
}

static void test_refused(void **state)
{
	struct out o;

	(void)state;
	/* a value in an object without its key */
	out_open(&o);
	json_object_begin(&o.j);
	json_u64(&o.j, 1);
	json_object_end(&o.j);
	assert_int_equal(out_close(&o), -1);
	assert_string_equal(o.buf, "{}\n");
	free(o.buf);
	/* a key in an array, a key with no value */
	out_open(&o);
	json_array_begin(&o.j);
	json_key(&o.j, "k");
	json_array_end(&o.j);
	assert_int_equal(out_close(&o), -1);
	free(o.buf);
	out_open(&o);
	json_object_begin(&o.j);
	json_key(&o.j, "k");
	json_object_end(&o.j);
	assert_int_equal(out_close(&o), -1);
	free(o.buf);
	/* unbalanced, mismatched, two documents, nothing */
	out_open(&o);
	json_object_begin(&o.j);
	assert_int_equal(out_close(&o), -1);
	free(o.buf);
	out_open(&o);
	json_object_begin(&o.j);
	json_array_end(&o.j);
	json_object_end(&o.j);
	assert_int_equal(out_close(&o), -1);
	assert_string_equal(o.buf, "{}\n");
	free(o.buf);
	out_open(&o);
	json_u64(&o.j, 1);
	json_u64(&o.j, 2);
	assert_int_equal(out_close(&o), -1);
	assert_string_equal(o.buf, "1\n");
	free(o.buf);
	out_open(&o);
	assert_int_equal(out_close(&o), -1);
	free(o.buf);
	out_open(&o);
	json_object_end(&o.j);
	assert_int_equal(out_close(&o), -1);
	free(o.buf);
}

static void test_depth(void **state)
{
	struct out o;
	int i;

	(void)state;
	out_open(&o);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_array_begin(&o.j);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_array_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	free(o.buf);
	out_open(&o);
	for (i = 0; i <= JSON_MAX_DEPTH; i++)
		json_array_begin(&o.j);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_array_end(&o.j);
	assert_int_equal(out_close(&o), -1);
	free(o.buf);
}

static void test_null_string(void **state)
{
	struct out o;

	(void)state;
	out_open(&o);
	json_object_begin(&o.j);
	json_kv_string(&o.j, "s", NULL);
	json_object_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf, "{\"s\":null}\n");
	free(o.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_object),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_keys_escaped),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_random_strings),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_null_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
