// SPDX-License-Identifier: BSD-2-Clause
/*
 * top.c - krctl top: every interval, per peer, connects/s, requests/s,
 * MB/s, recoveries, drops and the VQs on RC and on datagrams, plus a node
 * line from the counters. On a terminal the screen is redrawn; otherwise
 * one block per interval is printed (batch mode); --json: one JSON object
 * per line per interval.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "krctl.h"
#include "sample.h"

#define TOP_MIN_INTERVAL	0.01
#define TOP_MAX_INTERVAL	86400.0

static atomic_bool top_stop;	/* set by SIGINT and SIGTERM */

static void top_signal(int sig)
{
	(void)sig;
	atomic_store(&top_stop, true);
}

struct top_sample {
	struct krctl_peers peers;
	struct krctl_counters counters;
	bool counters_ok;
	struct timespec mono;
	struct timespec wall;
};

/* The node line's counters: deltas over the interval. */
static const char *const top_node_counters[] = {
	"qconnect_pooled", "qconnect_lookup", "qconnect_handshake",
	"qconnect_datagram", "wr_posted", "recoveries",
};

#define TOP_NODE_N	ARRAY_SIZE(top_node_counters)

static void sample_free(struct top_sample *s)
{
	krctl_peers_free(&s->peers);
	if (s->counters_ok)
		krctl_counters_free(&s->counters);
	s->counters_ok = false;
}

static int sample_take(struct krctl *k, struct krc_vq *vq, struct top_sample *s)
{
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &s->mono);
	clock_gettime(CLOCK_REALTIME, &s->wall);
	ret = krctl_peers_get(vq, &s->peers);
	if (ret < 0)
		return krctl_lib_fail(k, vq, ret, KRCTL_OP_QUERY);
	s->counters_ok = krctl_counters_read(KRCTL_COUNTERS_DIR, &s->counters) == 0;
	return 0;
}

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static uint64_t node_delta(const struct top_sample *prev, const struct top_sample *cur,
			   const char *name)
{
	if (!cur->counters_ok)
		return 0;
	return krctl_delta(prev->counters_ok ? krctl_counter(&prev->counters, name) : 0,
			   krctl_counter(&cur->counters, name));
}

static void top_json(struct krctl *k, const struct top_sample *prev,
		     const struct top_sample *cur, const struct krctl_top_row *rows,
		     int nrows, double dt, unsigned long sample)
{
	struct json *j = &k->json;
	char addr[KRC_GID_STRLEN];
	unsigned int i;
	int r;

	json_init(j, stdout);
	json_object_begin(j);
	json_kv_double(j, "time", (double)cur->wall.tv_sec + cur->wall.tv_nsec / 1e9, 3);
	json_kv_double(j, "interval", dt, 3);
	json_kv_u64(j, "sample", sample);
	json_key(j, "node");
	json_object_begin(j);
	for (i = 0; i < TOP_NODE_N; i++)
		json_kv_u64(j, top_node_counters[i],
			    node_delta(prev, cur, top_node_counters[i]));
	json_kv_u64(j, "recoveries_total", cur->counters_ok ?
		    krctl_counter(&cur->counters, "recoveries") : 0);
	json_kv_double(j, "requests_per_s",
		       dt > 0 ? node_delta(prev, cur, "wr_posted") / dt : 0, 1);
	json_object_end(j);
	json_key(j, "peers");
	json_array_begin(j);
	for (r = 0; r < nrows; r++) {
		const struct krctl_top_row *w = &rows[r];

		krc_gid_format(w->gid, addr, sizeof(addr));
		json_object_begin(j);
		json_kv_string(j, "addr", addr);
		json_kv_u64(j, "node_id", w->node_id);
		json_kv_bool(j, "local", w->local);
		json_kv_bool(j, "new", w->is_new);
		json_kv_double(j, "connects_per_s", w->connects_per_s, 1);
		json_kv_double(j, "requests_per_s", w->requests_per_s, 1);
		json_kv_double(j, "mbytes_per_s", w->bytes_per_s / 1e6, 3);
		json_kv_u64(j, "qconnects", w->qconnects);
		json_kv_u64(j, "wr_posted", w->wr_posted);
		json_kv_u64(j, "wr_bytes", w->wr_bytes);
		json_kv_u64(j, "recoveries", w->recoveries);
		json_kv_u64(j, "recoveries_total", w->recoveries_total);
		json_kv_u64(j, "drops", w->drops);
		json_kv_u64(j, "drops_total", w->drops_total);
		json_kv_u64(j, "nconns", w->nconns);
		json_kv_u64(j, "rc_vqs", w->rc_vqs);
		json_kv_u64(j, "dgram_vqs", w->dgram_vqs);
		json_kv_bool(j, "stats", w->has_stats);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
	json_end(j);
}

static void top_text(const struct top_sample *prev, const struct top_sample *cur,
		     const struct krctl_top_row *rows, int nrows, double dt,
		     bool screen)
{
	char addr[KRC_GID_STRLEN], when[16];
	uint64_t d[TOP_NODE_N];
	int r, width = 4;
	struct tm tm;
	unsigned int i;

	for (i = 0; i < TOP_NODE_N; i++)
		d[i] = node_delta(prev, cur, top_node_counters[i]);
	localtime_r(&cur->wall.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (screen)
		fputs("\033[H\033[2J", stdout);
	printf("krctl top - %s, interval %.2f s, %d peer%s\n", when, dt, nrows,
	       nrows == 1 ? "" : "s");
	printf("node: qconnect pooled +%llu lookup +%llu handshake +%llu datagram +%llu, "
	       "wr_posted +%llu (%.1f/s), recoveries +%llu (total %llu)\n",
	       (unsigned long long)d[0], (unsigned long long)d[1],
	       (unsigned long long)d[2], (unsigned long long)d[3],
	       (unsigned long long)d[4], dt > 0 ? d[4] / dt : 0.0,
	       (unsigned long long)d[5],
	       (unsigned long long)(cur->counters_ok ?
				    krctl_counter(&cur->counters, "recoveries") : 0));
	for (r = 0; r < nrows; r++) {
		krc_gid_format(rows[r].gid, addr, sizeof(addr));
		if ((int)strlen(addr) > width)
			width = (int)strlen(addr);
	}
	printf("%-*s %8s %10s %9s %6s %11s %6s %6s %6s\n", width, "PEER", "CONN/S",
	       "REQ/S", "MB/S", "RECOV", "RECOV_TOTAL", "DROPS", "RC_VQS", "DG_VQS");
	for (r = 0; r < nrows; r++) {
		const struct krctl_top_row *w = &rows[r];

		krc_gid_format(w->gid, addr, sizeof(addr));
		printf("%-*s %8.1f %10.1f %9.3f %6llu %11llu %6llu %6u %6u\n", width,
		       addr, w->connects_per_s, w->requests_per_s, w->bytes_per_s / 1e6,
		       (unsigned long long)w->recoveries,
		       (unsigned long long)w->recoveries_total,
		       (unsigned long long)w->drops, w->rc_vqs, w->dgram_vqs);
	}
	if (!nrows)
		printf("no peers\n");
	if (!screen)
		printf("\n");
	fflush(stdout);
}

static void ts_add(struct timespec *t, double seconds)
{
	time_t whole = (time_t)seconds;

	t->tv_sec += whole;
	t->tv_nsec += (long)((seconds - (double)whole) * 1e9);
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

/* Sleep until @deadline (CLOCK_MONOTONIC), or a signal asks to stop. */
static void sleep_until(const struct timespec *deadline)
{
	while (!atomic_load(&top_stop) &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL) == EINTR)
		;
}

static int top_args(struct krctl *k, double *interval, unsigned long *count)
{
	char *end;
	int i;

	for (i = 0; i < k->argc; i++) {
		const char *opt = k->argv[i];
		const char *val = i + 1 < k->argc ? k->argv[i + 1] : NULL;

		if (!strcmp(opt, "-d")) {
			if (!val)
				return krctl_usage(k, "top: -d needs SECONDS");
			errno = 0;
			*interval = strtod(val, &end);
			if (errno || end == val || *end || !isfinite(*interval) ||
			    *interval < TOP_MIN_INTERVAL || *interval > TOP_MAX_INTERVAL)
				return krctl_usage(k, "top: -d SECONDS: a number from %.2f "
						   "to %.0f, not '%s'", TOP_MIN_INTERVAL,
						   TOP_MAX_INTERVAL, val);
			i++;
		} else if (!strcmp(opt, "-n")) {
			if (!val)
				return krctl_usage(k, "top: -n needs COUNT");
			if (!parse_uint(val, 1000000000UL, count) || !*count)
				return krctl_usage(k, "top: -n COUNT: a positive number, not '%s'",
						   val);
			i++;
		} else {
			return krctl_usage(k, "top: unknown argument '%s'", opt);
		}
	}
	return 0;
}

int cmd_top(struct krctl *k)
{
	struct top_sample a, b, *prev = &a, *cur = &b, *t;
	struct krctl_top_row *rows;
	struct timespec deadline;
	unsigned long count = 0, n;
	double interval = 1.0, dt;
	struct sigaction sa;
	struct krc_vq *vq;
	bool screen;
	int ret, nrows;

	ret = top_args(k, &interval, &count);
	if (ret)
		return ret;
	ret = krctl_open(k, &vq);
	if (ret)
		return ret;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = top_signal;	/* no SA_RESTART: the sleep ends */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	screen = !k->json_mode && isatty(STDOUT_FILENO);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ret = sample_take(k, vq, prev);
	if (ret)
		goto out;
	if (screen) {
		printf("\033[H\033[2Jkrctl top: first sample taken, the next in %.2f s "
		       "(Ctrl-C to quit)\n", interval);
		fflush(stdout);
	}
	deadline = prev->mono;
	for (n = 1; !count || n <= count; n++) {
		ts_add(&deadline, interval);
		sleep_until(&deadline);
		if (atomic_load(&top_stop))
			break;
		ret = sample_take(k, vq, cur);
		if (ret)
			break;
		dt = ts_diff(&prev->mono, &cur->mono);
		nrows = krctl_top_rows(&prev->peers, &cur->peers, dt, &rows);
		if (nrows < 0) {
			ret = krctl_fail(k, KRCTL_FAILED, ENOMEM, "out of memory");
			break;
		}
		if (k->json_mode) {
			top_json(k, prev, cur, rows, nrows, dt, n);
			fflush(stdout);
		} else {
			top_text(prev, cur, rows, nrows, dt, screen);
		}
		free(rows);
		sample_free(prev);
		t = prev;
		prev = cur;
		cur = t;
		if (ferror(stdout)) {
			ret = krctl_fail(k, KRCTL_FAILED, EIO, "cannot write the output");
			break;
		}
	}
out:
	sample_free(&a);
	sample_free(&b);
	krc_vq_close(vq);
	return ret;
}
