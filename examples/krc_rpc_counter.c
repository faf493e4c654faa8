// SPDX-License-Identifier: BSD-2-Clause
/*
 * krc_rpc_counter - a service with state: named counters, served by two
 * threads, and its callers.
 *
 *   krc_rpc_counter serve PORT                      serve until SIGTERM or
 *                                                   Ctrl-C, then print how
 *                                                   many requests it served
 *   krc_rpc_counter add ADDR PORT NAME DELTA N      N calls ADD: print the
 *                                                   last value
 *   krc_rpc_counter get ADDR PORT NAME              print the value
 *   krc_rpc_counter reset ADDR PORT NAME            a one-way RESET (no reply)
 *
 * The requests: ADD is an 8-byte delta (little-endian) then the name, GET
 * and RESET the name alone; a name is 1 to 64 bytes. ADD and GET answer
 * the value in 8 bytes. A counter never added to is 0.
 *
 * Build: cc krc_rpc_counter.c $(pkg-config --cflags --libs libkrcore) -lpthread
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libkrcore.h>

enum { M_ADD = 1, M_GET = 2, M_RESET = 3 };

#define NAME_MAX_LEN	64
#define COUNTERS	1024
#define THREADS		2

struct counter {
	char name[NAME_MAX_LEN];
	size_t len;
	int64_t value;
};

static struct counter table[COUNTERS];
static unsigned int used;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static struct krc_srv *srv;
static atomic_int stop;	/* SIGTERM or SIGINT came */

static void on_signal(int sig)
{
	stop = 1;
}

/* The counter of a name (a new one if @add), or NULL. Under the lock. */
static struct counter *find(const char *name, size_t len, int add)
{
	unsigned int i;

	for (i = 0; i < used; i++)
		if (table[i].len == len && !memcmp(table[i].name, name, len))
			return &table[i];
	if (!add || used == COUNTERS)
		return NULL;
	memcpy(table[used].name, name, len);
	table[used].len = len;
	table[used].value = 0;
	return &table[used++];
}

/*
 * Run one request: 0 and *value, or -errno (the caller gets it). The
 * bytes are the caller's choice: every length is checked before use.
 */
static int run(const struct krc_req *req, int64_t *value)
{
	const char *name = req->data;
	size_t len = req->len;
	struct counter *c;
	uint64_t delta = 0;
	int ret = 0;

	if (req->method == M_ADD) {
		if (len < 8)
			return -EINVAL;
		memcpy(&delta, name, 8);
		delta = le64toh(delta);
		name += 8;
		len -= 8;
	}
	if (len < 1 || len > NAME_MAX_LEN)
		return -EINVAL;
	pthread_mutex_lock(&table_lock);
	c = find(name, len, req->method == M_ADD);
	switch (req->method) {
	case M_ADD:
		if (!c)
			ret = -ENOSPC;	/* the table is full */
		else if (__builtin_add_overflow(c->value, (int64_t)delta,
						&c->value))
			ret = -ERANGE;
		break;
	case M_GET:
		break;
	case M_RESET:
		if (c)
			c->value = 0;
		break;
	default:
		ret = -EOPNOTSUPP;	/* no such method */
	}
	*value = c ? c->value : 0;
	pthread_mutex_unlock(&table_lock);
	return ret;
}

/* Each thread takes the next request: the library hands each to one. */
static void *serve_thread(void *arg)
{
	unsigned long *served = arg;
	struct krc_req *req;
	int64_t value;
	uint64_t le;
	int st;

	while (!stop) {
		st = krc_srv_next(srv, &req, 200);
		if (st < 0 && st != -EINTR) {
			fprintf(stderr, "krc_rpc_counter: next: %s\n", krc_errmsg());
			stop = 1;
		}
		if (st <= 0)
			continue;	/* none within 200 ms: look at stop */
		st = run(req, &value);
		le = htole64((uint64_t)value);
		/* A one-way request (RESET) gets no reply: this frees it. */
		krc_srv_reply(srv, req, -st, st ? NULL : &le, st ? 0 : 8);
		(*served)++;
	}
	return NULL;
}

static int serve_counters(int port)
{
	/* Our requests fit in one message: no memory granted for more. */
	struct krc_srv_opts opts = { .max_req = KRC_RPC_INLINE };
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long served[THREADS] = { 0 };
	pthread_t t[THREADS];
	int i;

	if (krc_srv_open(&srv, (uint16_t)port, &opts) < 0) {
		fprintf(stderr, "krc_rpc_counter: serve: %s\n", krc_errmsg());
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("krc_rpc_counter: serving port %d\n", port);
	fflush(stdout);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, serve_thread, &served[i]);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	krc_srv_close(srv);
	printf("krc_rpc_counter: served %lu requests\n", served[0] + served[1]);
	return 0;
}

/*
 * The caller's side: a channel, then calls (or a one-way send) on it.
 * The name goes as given: the server checks it (EINVAL if too long).
 */
static int client(char **argv)
{
	const char *cmd = argv[1];
	size_t len = strnlen(argv[4], NAME_MAX_LEN + 1);
	uint8_t req[8 + NAME_MAX_LEN + 1];
	uint64_t delta = 0, v = 0;
	long long i, n = 1;
	struct krc_chan *ch;
	int64_t r = 0;

	/* ADD sends req (the delta, then the name), GET req + 8 (the name). */
	if (!strcmp(cmd, "add")) {
		delta = htole64((uint64_t)atoll(argv[5]));
		n = atoll(argv[6]);
	}
	memcpy(req, &delta, 8);
	memcpy(req + 8, argv[4], len);
	if (krc_chan_open(&ch, argv[2], (uint16_t)atoi(argv[3]), 10000) < 0) {
		fprintf(stderr, "krc_rpc_counter: channel: %s\n", krc_errmsg());
		return 1;
	}
	if (!strcmp(cmd, "reset")) {
		/*
		 * No reply: 0 means posted, or only queued until the server
		 * lends room for it, and closing the channel drops what is
		 * still queued. A channel's first message is posted (it waits
		 * for that room) and closing waits for what is posted, so one
		 * send is safe; after many, make a call before closing: its
		 * reply means every message before it left.
		 */
		r = krc_send(ch, M_RESET, req + 8, len);
		n = 0;
	}
	for (i = 0; i < n && r >= 0; i++) {
		if (!strcmp(cmd, "add"))
			r = krc_call(ch, M_ADD, req, 8 + len, &v, 8, 10000);
		else
			r = krc_call(ch, M_GET, req + 8, len, &v, 8, 10000);
	}
	/* -EINVAL, -ENOSPC...: the status the server answered. */
	if (r < 0)
		fprintf(stderr, "krc_rpc_counter: %s: %s\n", cmd, krc_errmsg());
	else if (n)
		printf("%lld\n", (long long)le64toh(v));
	krc_chan_close(ch);
	return r < 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve_counters(atoi(argv[2]));
	if ((argc == 7 && !strcmp(argv[1], "add")) ||
	    (argc == 5 && !strcmp(argv[1], "get")) ||
	    (argc == 5 && !strcmp(argv[1], "reset")))
		return client(argv);
	fprintf(stderr, "usage: krc_rpc_counter serve PORT | add ADDR PORT NAME DELTA N |\n"
		"       get ADDR PORT NAME | reset ADDR PORT NAME\n");
	return 2;
}
