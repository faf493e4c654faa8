/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * json.h - a small streaming JSON writer for krctl --json.
 *
 * Writes one compact document (no newline inside it) to a stdio stream:
 * objects and arrays are opened and closed in order, a value inside an
 * object follows its key. Commas and escaping are the writer's business.
 * Strings are escaped as RFC 8259 wants (quote, backslash, control
 * characters); bytes that are not well-formed UTF-8 become U+FFFD, so the
 * output is valid UTF-8 whatever the input. Integers are written exactly
 * (all 64 bits); a double that is not finite is written as null.
 * A call out of order (a value where a key is due, a close that matches
 * no open, too deep a nesting) is not written and sets the error flag,
 * which json_end() reports.
 */
#ifndef KRCTL_JSON_H
#define KRCTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	16

struct json {
	FILE *f;
	int depth;			/* open containers */
	bool is_object[JSON_MAX_DEPTH];	/* per level: object (else array) */
	bool has_items[JSON_MAX_DEPTH];	/* per level: something written */
	bool key_done;			/* a key was written, its value is due */
	bool started;			/* the top-level value was begun */
	bool error;
};

void json_init(struct json *j, FILE *f);
/* Ends the document with a newline; 0, or -1 if it is not complete. */
int json_end(struct json *j);

void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
void json_key(struct json *j, const char *key);

void json_string(struct json *j, const char *s);
/* At most @len bytes of @s (stops at a NUL byte). */
void json_string_n(struct json *j, const char *s, size_t len);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
/* A double with up to @decimals digits after the point (0..9). */
void json_double(struct json *j, double v, int decimals);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* A key and its value. */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_i64(struct json *j, const char *key, int64_t v);
void json_kv_double(struct json *j, const char *key, double v, int decimals);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_null(struct json *j, const char *key);

#endif /* KRCTL_JSON_H */
