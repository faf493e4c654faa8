// SPDX-License-Identifier: BSD-2-Clause
/*
 * json.c - a small streaming JSON writer (see json.h).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json.h"

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

int json_end(struct json *j)
{
	if (j->depth || !j->started || j->key_done)
		j->error = true;
	fputc('\n', j->f);
	return j->error ? -1 : 0;
}

/*
 * Before a value: is one allowed here? Writes the comma it needs. A value
 * inside an object needs its key first; at the top level there is one.
 */
static bool json_value_begin(struct json *j)
{
	if (j->depth == 0) {
		if (j->started) {
			j->error = true;
			return false;
		}
		j->started = true;
		return true;
	}
	if (j->is_object[j->depth - 1]) {
		if (!j->key_done) {
			j->error = true;
			return false;
		}
		j->key_done = false;
		return true;
	}
	if (j->has_items[j->depth - 1])
		fputc(',', j->f);
	j->has_items[j->depth - 1] = true;
	return true;
}

/*
 * The length of the well-formed UTF-8 sequence at @s, of at most @left
 * bytes (0: not one). A NUL byte is never a continuation byte.
 */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* no overlong forms */
		if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;	/* nothing above U+10FFFF */
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void json_write_string(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n;

	fputc('"', f);
	while (i < len && s[i]) {
		unsigned char c = s[i];

		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				fprintf(f, "\\u%04x", c);
			} else if (c < 0x80) {
				fputc(c, f);
			} else {
				n = utf8_len(s + i, len - i);
				if (!n) {
					fputs("\\ufffd", f);
					break;
				}
				fwrite(s + i, 1, n, f);
				i += n;
				continue;
			}
		}
		i++;
	}
	fputc('"', f);
}

void json_object_begin(struct json *j)
{
	if (j->depth >= JSON_MAX_DEPTH) {
		j->error = true;
		return;
	}
	if (!json_value_begin(j))
		return;
	fputc('{', j->f);
	j->is_object[j->depth] = true;
	j->has_items[j->depth] = false;
	j->depth++;
}

void json_array_begin(struct json *j)
{
	if (j->depth >= JSON_MAX_DEPTH) {
		j->error = true;
		return;
	}
	if (!json_value_begin(j))
		return;
	fputc('[', j->f);
	j->is_object[j->depth] = false;
	j->has_items[j->depth] = false;
	j->depth++;
}

static void json_close(struct json *j, bool object)
{
	if (!j->depth || j->is_object[j->depth - 1] != object || j->key_done) {
		j->error = true;
		return;
	}
	j->depth--;
	fputc(object ? '}' : ']', j->f);
}

void json_object_end(struct json *j)
{
	json_close(j, true);
}

void json_array_end(struct json *j)
{
	json_close(j, false);
}

void json_key(struct json *j, const char *key)
{
	if (!j->depth || !j->is_object[j->depth - 1] || j->key_done) {
		j->error = true;
		return;
	}
	if (j->has_items[j->depth - 1])
		fputc(',', j->f);
	j->has_items[j->depth - 1] = true;
	json_write_string(j->f, key, strlen(key));
	fputc(':', j->f);
	j->key_done = true;
}

void json_string_n(struct json *j, const char *s, size_t len)
{
	if (!s) {
		json_null(j);
		return;
	}
	if (json_value_begin(j))
		json_write_string(j->f, s, len);
}

void json_string(struct json *j, const char *s)
{
	json_string_n(j, s, s ? strlen(s) : 0);
}

void json_u64(struct json *j, uint64_t v)
{
	if (json_value_begin(j))
		fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	if (json_value_begin(j))
		fprintf(j->f, "%" PRId64, v);
}

void json_double(struct json *j, double v, int decimals)
{
	if (decimals < 0)
		decimals = 0;
	if (decimals > 9)
		decimals = 9;
	if (!json_value_begin(j))
		return;
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.*f", decimals, v);
}

void json_bool(struct json *j, bool v)
{
	if (json_value_begin(j))
		fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	if (json_value_begin(j))
		fputs("null", j->f);
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_kv_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void json_kv_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_i64(j, v);
}

void json_kv_double(struct json *j, const char *key, double v, int decimals)
{
	json_key(j, key);
	json_double(j, v, decimals);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

void json_kv_null(struct json *j, const char *key)
{
	json_key(j, key);
	json_null(j);
}
