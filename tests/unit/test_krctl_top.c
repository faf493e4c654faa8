// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_krctl_top.c - what krctl top computes between two samples
 * (tools/krctl/sample.c): deltas and rates per peer, peers that appear or
 * disappear between samples, counters that started over, a zero interval,
 * statistics missing from one sample (never a negative or absurd rate);
 * and the counter files read from a directory.
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

#include "sample.h"

static void set_gid(uint8_t gid[16], uint8_t last)
{
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	gid[12] = 10;
	gid[15] = last;
}

/* A peer 10.0.0.@last with the given counters. */
static struct krctl_peer peer(uint8_t last, uint64_t qconnects, uint64_t posted,
			      uint64_t bytes, uint64_t errors, uint64_t timeouts,
			      uint64_t recoveries)
{
	struct krctl_peer p;

	memset(&p, 0, sizeof(p));
	set_gid(p.info.card.gid, last);
	memcpy(p.stats.gid, p.info.card.gid, 16);
	p.info.card.node_id = last;
	p.info.qconnects = qconnects;
	p.stats.wr_posted = posted;
	p.stats.wr_bytes = bytes;
	p.stats.wr_errors = errors;
	p.stats.wr_timeouts = timeouts;
	p.stats.recoveries = recoveries;
	p.has_stats = true;
	return p;
}

static const struct krctl_top_row *row_of(const struct krctl_top_row *rows, int n,
					  uint8_t last)
{
	uint8_t gid[16];
	int i;

	set_gid(gid, last);
	for (i = 0; i < n; i++)
		if (!memcmp(rows[i].gid, gid, 16))
			return &rows[i];
	fail_msg("no row for 10.0.0.%u", last);
	return NULL;
}

static void test_delta(void **state)
{
	(void)state;
	assert_true(krctl_delta(0, 0) == 0);
	assert_true(krctl_delta(5, 12) == 7);
	assert_true(krctl_delta(UINT64_MAX - 1, UINT64_MAX) == 1);
	/* went back: started over, all of the new value is new */
	assert_true(krctl_delta(1000, 3) == 3);
	assert_true(krctl_delta(UINT64_MAX, 0) == 0);
}

static void test_rates(void **state)
{
	struct krctl_peer p0[2], p1[2];
	struct krctl_peers prev = { p0, 2, false }, cur = { p1, 2, false };
	const struct krctl_top_row *r;
	struct krctl_top_row *rows;
	int n;

	(void)state;
	p0[0] = peer(1, 10, 100, 4096, 1, 0, 2);
	p0[1] = peer(2, 0, 0, 0, 0, 0, 0);
	p1[0] = peer(1, 14, 1100, 4096 + 1000 * 4096, 3, 1, 5);
	p1[1] = peer(2, 1, 50, 50, 0, 0, 0);
	n = krctl_top_rows(&prev, &cur, 2.0, &rows);
	assert_int_equal(n, 2);
	/* sorted by requests/s, highest first */
	assert_int_equal(rows[0].gid[15], 1);
	assert_int_equal(rows[1].gid[15], 2);
	r = row_of(rows, n, 1);
	assert_false(r->is_new);
	assert_true(r->qconnects == 4);
	assert_true(r->wr_posted == 1000);
	assert_true(r->wr_bytes == 1000 * 4096);
	assert_true(r->recoveries == 3);
	assert_true(r->recoveries_total == 5);
	assert_true(r->drops == 3);		/* errors +2, timeouts +1 */
	assert_true(r->drops_total == 4);
	assert_true(r->connects_per_s == 2.0);
	assert_true(r->requests_per_s == 500.0);
	assert_true(r->bytes_per_s == 1000.0 * 4096 / 2);
	r = row_of(rows, n, 2);
	assert_true(r->wr_posted == 50 && r->requests_per_s == 25.0);
	free(rows);
}

static void test_peers_come_and_go(void **state)
{
	struct krctl_peer p0[2], p1[2];
	struct krctl_peers prev = { p0, 2, false }, cur = { p1, 2, false };
	const struct krctl_top_row *r;
	struct krctl_top_row *rows;
	int n;

	(void)state;
	/* 10.0.0.1 leaves, 10.0.0.3 arrives, 10.0.0.2 stays */
	p0[0] = peer(1, 50, 5000, 5000, 0, 0, 0);
	p0[1] = peer(2, 5, 100, 100, 0, 0, 0);
	p1[0] = peer(3, 2, 30, 300, 1, 0, 0);
	p1[1] = peer(2, 5, 100, 100, 0, 0, 0);
	n = krctl_top_rows(&prev, &cur, 1.0, &rows);
	assert_int_equal(n, 2);
	r = row_of(rows, n, 3);
	assert_true(r->is_new);
	/* its counters started at 0 when the node met it */
	assert_true(r->qconnects == 2 && r->wr_posted == 30 && r->wr_bytes == 300);
	assert_true(r->drops == 1);
	r = row_of(rows, n, 2);
	assert_false(r->is_new);
	assert_true(r->qconnects == 0 && r->wr_posted == 0 && r->requests_per_s == 0);
	free(rows);

	/* everyone left */
	cur.n = 0;
	n = krctl_top_rows(&prev, &cur, 1.0, &rows);
	assert_int_equal(n, 0);
	assert_null(rows);

	/* everyone is new (first look after a start with no peer) */
	prev.n = 0;
	cur.n = 2;
	n = krctl_top_rows(&prev, &cur, 1.0, &rows);
	assert_int_equal(n, 2);
	assert_true(rows[0].is_new && rows[1].is_new);
	free(rows);
}

static void test_started_over(void **state)
{
	struct krctl_peer p0[1], p1[1];
	struct krctl_peers prev = { p0, 1, false }, cur = { p1, 1, false };
	struct krctl_top_row *rows;
	int n;

	(void)state;
	/* the peer left the table and was met again: its counters went back */
	p0[0] = peer(1, 100, 100000, 1000000, 10, 10, 10);
	p1[0] = peer(1, 3, 7, 70, 0, 1, 0);
	n = krctl_top_rows(&prev, &cur, 1.0, &rows);
	assert_int_equal(n, 1);
	assert_true(rows[0].qconnects == 3);
	assert_true(rows[0].wr_posted == 7 && rows[0].wr_bytes == 70);
	assert_true(rows[0].drops == 1 && rows[0].recoveries == 0);
	assert_true(rows[0].requests_per_s == 7.0);
	assert_true(rows[0].connects_per_s >= 0 && rows[0].bytes_per_s >= 0);
	free(rows);
}

static void test_zero_interval(void **state)
{
	struct krctl_peer p0[1], p1[1];
	struct krctl_peers prev = { p0, 1, false }, cur = { p1, 1, false };
	struct krctl_top_row *rows;
	int n;

	(void)state;
	p0[0] = peer(1, 0, 0, 0, 0, 0, 0);
	p1[0] = peer(1, 1, 10, 10, 0, 0, 0);
	n = krctl_top_rows(&prev, &cur, 0.0, &rows);
	assert_int_equal(n, 1);
	assert_true(rows[0].wr_posted == 10);
	assert_true(rows[0].requests_per_s == 0 && rows[0].connects_per_s == 0 &&
		    rows[0].bytes_per_s == 0);
	free(rows);
	n = krctl_top_rows(&prev, &cur, -1.0, &rows);
	assert_int_equal(n, 1);
	assert_true(rows[0].requests_per_s == 0);
	free(rows);
}

static void test_missing_stats(void **state)
{
	struct krctl_peer p0[1], p1[1];
	struct krctl_peers prev = { p0, 1, false }, cur = { p1, 1, false };
	struct krctl_top_row *rows;
	int n;

	(void)state;
	/* gone before PEER_STATS in the previous look: no traffic shown */
	p0[0] = peer(1, 1, 0, 0, 0, 0, 0);
	p0[0].has_stats = false;
	p1[0] = peer(1, 2, 900, 900, 5, 0, 1);
	n = krctl_top_rows(&prev, &cur, 1.0, &rows);
	assert_int_equal(n, 1);
	assert_true(rows[0].has_stats);
	assert_true(rows[0].qconnects == 1);
	assert_true(rows[0].wr_posted == 0 && rows[0].drops == 0 && rows[0].recoveries == 0);
	assert_true(rows[0].recoveries_total == 1 && rows[0].drops_total == 5);
	free(rows);
	/* ... in the current one */
	p0[0] = peer(1, 1, 0, 0, 0, 0, 0);
	p1[0].has_stats = false;
	n = krctl_top_rows(&prev, &cur, 1.0, &rows);
	assert_int_equal(n, 1);
	assert_false(rows[0].has_stats);
	assert_true(rows[0].wr_posted == 0 && rows[0].recoveries_total == 0);
	free(rows);
}

static void test_vqs(void **state)
{
	struct krctl_peer p0[1], p1[1];
	struct krctl_peers prev = { p0, 0, false }, cur = { p1, 1, false };
	struct krctl_top_row *rows;
	int c, n;

	(void)state;
	p1[0] = peer(1, 0, 0, 0, 0, 0, 0);
	/* 10 connections, 8 listed with 1..8 VQs: 36 on RC */
	p1[0].info.nconns = 10;
	for (c = 0; c < KRCORE_PEER_MAX_CONNS; c++)
		p1[0].info.conns[c].vqs = c + 1;
	p1[0].info.dgram_vqs = 3;
	assert_int_equal(krctl_peer_rc_vqs(&p1[0].info), 36);
	n = krctl_top_rows(&prev, &cur, 1.0, &rows);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].rc_vqs, 36);
	assert_int_equal(rows[0].dgram_vqs, 3);
	assert_int_equal(rows[0].nconns, 10);
	free(rows);
	p1[0].info.nconns = 2;
	assert_int_equal(krctl_peer_rc_vqs(&p1[0].info), 3);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_counters(void **state)
{
	char dir[] = "/tmp/krctl-counters-XXXXXX", cmd[600];
	struct krctl_counters c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	put(dir, "wr_posted", "18446744073709551615\n");
	put(dir, "qconnect_pooled", "12\n");
	put(dir, "b_text", "abc\n");
	put(dir, "a_neg", "-1\n");
	put(dir, "zz", "7");
	assert_int_equal(krctl_counters_read(dir, &c), 0);
	assert_int_equal(c.n, 5);
	/* sorted by name */
	assert_string_equal(c.v[0].name, "a_neg");
	assert_string_equal(c.v[1].name, "b_text");
	assert_string_equal(c.v[2].name, "qconnect_pooled");
	assert_string_equal(c.v[3].name, "wr_posted");
	assert_string_equal(c.v[4].name, "zz");
	assert_false(c.v[0].numeric);
	assert_false(c.v[1].numeric);
	assert_string_equal(c.v[1].text, "abc");
	assert_true(c.v[2].numeric && c.v[2].value == 12);
	assert_true(c.v[3].numeric && c.v[3].value == UINT64_MAX);
	assert_true(c.v[4].numeric && c.v[4].value == 7);
	assert_true(krctl_counter(&c, "qconnect_pooled") == 12);
	assert_true(krctl_counter(&c, "nosuch") == 0);
	assert_true(krctl_counter(&c, "b_text") == 0);
	krctl_counters_free(&c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(krctl_counters_read(dir, &c), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_peers_come_and_go),
		cmocka_unit_test(test_started_over),
		cmocka_unit_test(test_zero_interval),
		cmocka_unit_test(test_missing_stats),
		cmocka_unit_test(test_vqs),
		cmocka_unit_test(test_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
