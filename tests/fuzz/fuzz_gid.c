// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_gid.c - libFuzzer target for the GID text of common/card.c:
 * parse(format(parse(s))) gives the same GID, the text form is canonical,
 * IPv6 text is read as the C library reads it, and formatting into
 * buffers of any size stays in bounds, NUL-terminated and reports the
 * full length.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "card.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TEXT	128

static void check(bool ok)
{
	if (!ok)
		abort();
}

static void fuzz_parse(const uint8_t *data, size_t size)
{
	char s[MAX_TEXT + 1], text[KRC_GID_STRLEN], text2[KRC_GID_STRLEN];
	u8 gid[16], gid2[16], ref[16];
	size_t n = size < MAX_TEXT ? size : MAX_TEXT;
	int rc, len;

	memcpy(s, data, n);
	s[n] = '\0';
	rc = krc_gid_parse(s, gid);
	check(rc == 0 || rc == -EINVAL);
	/* text with a colon is IPv6 text: it reads as inet_pton reads it */
	if (strchr(s, ':')) {
		bool libc = inet_pton(AF_INET6, s, ref) == 1;

		check(libc == !rc);
		check(rc || !memcmp(gid, ref, 16));
	}
	if (rc)
		return;
	len = krc_gid_format(gid, text, sizeof(text));
	check(len > 0 && len < KRC_GID_STRLEN && (size_t)len == strlen(text));
	check(krc_gid_parse(text, gid2) == 0);
	check(!memcmp(gid, gid2, 16));
	/* the text form is canonical: formatting it again changes nothing */
	check(krc_gid_format(gid2, text2, sizeof(text2)) == len);
	check(!strcmp(text, text2));
}

/* Format @gid into @cap bytes at @buf: in bounds, NUL-terminated, full length. */
static void format_into(const u8 gid[16], char *buf, size_t cap,
			const char *full, int len)
{
	size_t want = (size_t)len < cap ? (size_t)len : cap - 1;

	check(krc_gid_format(gid, buf, cap) == len);
	if (cap) {
		check(strnlen(buf, cap) == want);
		check(!memcmp(buf, full, want));
	}
}

static void fuzz_format(const uint8_t *data, size_t size)
{
	char full[KRC_GID_STRLEN + 16], buf[KRC_GID_STRLEN + 16];
	u8 gid[16], back[16];
	size_t cap, i;
	char *heap;
	int len;

	if (size < 16)
		return;
	memcpy(gid, data, 16);
	len = krc_gid_format(gid, full, sizeof(full));
	check(len > 0 && len < KRC_GID_STRLEN && (size_t)len == strlen(full));
	check(krc_gid_parse(full, back) == 0 && !memcmp(gid, back, 16));
	/*
	 * Every size that truncates, fits exactly or leaves room (larger
	 * ones behave as len + 2): nothing past the first cap bytes changes.
	 */
	for (cap = 0; cap <= KRC_GID_STRLEN && cap <= (size_t)len + 2; cap++) {
		memset(buf, 'x', sizeof(buf));
		format_into(gid, buf, cap, full, len);
		for (i = cap; i < sizeof(buf); i++)
			check(buf[i] == 'x');
	}
	/* one size the input picks, in an exact heap buffer ASan guards */
	cap = size > 16 ? data[16] % (KRC_GID_STRLEN + 1) : (size_t)len + 1;
	heap = malloc(cap ? cap : 1);
	check(heap);
	format_into(gid, cap ? heap : heap + 1, cap, full, len);
	free(heap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_parse(data, size);
	fuzz_format(data, size);
	return 0;
}
