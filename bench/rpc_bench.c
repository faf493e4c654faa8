// SPDX-License-Identifier: BSD-2-Clause
/*
 * rpc_bench - krcore's RPC (libkrcore: krc_srv_*, krc_chan_*, krc_call*)
 * beside the same exchange over TCP sockets between the same two nodes
 * (issue 26, "Benchmark"). bench/rpc.sh runs it on two nodes and sets
 * perftest's verbs figures (ib_send_lat, ib_write_bw) and first_contact's
 * new verbs process beside it, then prints the ratios.
 *
 *   rpc_bench kserve PORT THREADS
 *       a krcore RPC server on PORT of this node, THREADS threads in
 *       krc_srv_next: method 1 echoes the request, 2 replies the number
 *       of bytes the request's first 8 bytes ask (built in
 *       krc_srv_reply_buf when large), 3 takes the request and replies
 *       its length (8 bytes); until SIGTERM, then its counters.
 *   rpc_bench tserve PORT
 *       the same three methods over TCP (TCP_NODELAY), a thread per
 *       connection: a 16-byte header (method or status, length), then
 *       the payload, each way; until SIGTERM.
 *   rpc_bench lat ADDR KPORT TPORT N
 *       one process, a channel to ADDR:KPORT and a TCP connection to
 *       ADDR:TPORT, warmed up; N synchronous 64 B echo calls on each, in
 *       10 rounds that alternate the two; each call timed from its start
 *       to its reply: the median and p99 of each.
 *   rpc_bench rate ADDR KPORT TPORT SECS P...
 *       for each P, krcore then TCP: P processes (forked; each opens its
 *       channel or connection and warms it up) start together at a pipe
 *       and make 64 B echo calls one after the other for SECS seconds;
 *       the calls per second of all of them: every call over the time
 *       from the start to the last process's end.
 *   rpc_bench big ADDR KPORT TPORT BYTES REPS
 *       REPS times, interleaved: a request of BYTES (method 3: an 8-byte
 *       reply) and a reply of BYTES (method 2: an 8-byte request), each
 *       timed from the call to its return: krcore with krc_call (the
 *       library registers the buffer for the call), krcore with a
 *       buffer registered beforehand (krc_call_start with req_mr or
 *       reply_mr, krc_chan_poll), TCP; the median time and MiB/s
 *       (2^20 bytes, as perftest's MB/sec).
 *   rpc_bench first ADDR KPORT TPORT K METHODS [CMD ARG...]
 *       a new process's first reply: K rounds, in each (order rotated)
 *       for each of the comma-separated METHODS a sample timed from
 *       before fork() to the child's exit. krcore and tcp: the child
 *       execs this program, "once"; any other name: the child execs
 *       CMD ARG... (its output passes through; it must exit 0). The
 *       median, min and max of each.
 *   rpc_bench once krcore|tcp ADDR PORT
 *       one 64 B echo call from this process: krc_chan_open and
 *       krc_call (krc_chan_close after), or socket, connect, send,
 *       receive; exit 0 if the reply is the request. Prints "once
 *       METHOD US": from its start (exec and loading done) to the reply,
 *       and "once_split METHOD OPEN_US CALL_US": its two parts.
 *
 * Output: one "rpc_bench: METHOD key=value ..." line per result, times
 * in microseconds (_us) or milliseconds (_ms). Exit 0; 1 if a call
 * failed or a reply was wrong; 2 on a usage error.
 *
 * With KRC_BENCH_SAMPLES set (bench/bench.h), lat, rate, big and first
 * also append their samples there for bench/krbench_report, one S line
 * per measurement: rpc_rtt (us, x 64: each call's round trip), rpc_rate
 * (per_s, x the processes: the calls per second of all of them),
 * rpc_big (MiB_per_s, x the bytes: each call, as METHOD_request or
 * METHOD_reply) and rpc_first (ms, x new_process: each new process).
 * bench/rpc.sh declares those figures and their ratios and adds the
 * verbs samples, the in-process times and the cold samples beside them.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "libkrcore.h"
#include "bench.h"

#define RB_ECHO		1
#define RB_MAKE		2
#define RB_SINK		3
#define RB_SMALL	64		/* the call's request and reply */
#define RB_MAX		1073741824ULL	/* largest payload either way: 1 GiB */
#define RB_CALL_MS	120000		/* a call's timeout */
#define RB_OPEN_MS	20000		/* krc_chan_open's */
#define RB_WARMUP	20
#define RB_ROUNDS	10
#define RB_PROCS_MAX	64
#define RB_SAMPLES_MAX	100000
#define RB_METHODS_MAX	8

/* The figures of the samples (bench/rpc.sh declares them). */
#define RB_FIG_RTT	"rpc_rtt"
#define RB_FIG_RATE	"rpc_rate"
#define RB_FIG_BIG	"rpc_big"
#define RB_FIG_FIRST	"rpc_first"

/* The TCP framing: a header, then len bytes. */
struct rb_hdr {
	uint32_t code;		/* the method; in a reply, 0 or an errno */
	uint32_t pad;
	uint64_t len;
};

static atomic_int stopping;

static void on_term(int sig)
{
	stopping = 1;
}

static void catch_term(void)
{
	struct sigaction sa = { .sa_handler = on_term };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return pct(v, n, 0.5);
}

/* The request every small call carries: its bytes vary with @i. */
static void small_fill(uint8_t *p, unsigned int i)
{
	int k;

	for (k = 0; k < RB_SMALL; k++)
		p[k] = (uint8_t)(i * 7 + (unsigned int)k);
}

/* A reply of @n bytes as both servers build it: @n at both ends. */
static void make_stamp(uint8_t *p, uint64_t n)
{
	if (n >= 8)
		memcpy(p, &n, 8);
	if (n >= 16)
		memcpy(p + n - 8, &n, 8);
}

static bool make_check(const uint8_t *p, uint64_t n)
{
	uint64_t a = n, b = n;

	if (n >= 8)
		memcpy(&a, p, 8);
	if (n >= 16)
		memcpy(&b, p + n - 8, 8);
	return a == n && b == n;
}

/* ---- TCP ---- */

static int read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A header and @len bytes of @data, in one system call when they fit. */
static int send_msg(int fd, uint32_t code, const void *data, uint64_t len)
{
	struct rb_hdr h = { .code = code, .len = len };
	struct iovec iov[2] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = (void *)data, .iov_len = (size_t)len },
	};
	struct iovec *v = iov;
	int nv = len ? 2 : 1;
	ssize_t n;

	while (nv) {
		n = writev(fd, v, nv);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		while (nv && (size_t)n >= v->iov_len) {
			n -= (ssize_t)v->iov_len;
			v++;
			nv--;
		}
		if (nv) {
			v->iov_base = (uint8_t *)v->iov_base + n;
			v->iov_len -= (size_t)n;
		}
	}
	return 0;
}

static void tcp_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int tcp_connect(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd;

	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "rpc_bench: %s: not an IPv4 address\n", addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	tcp_nodelay(fd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "rpc_bench: connect %s:%d: %s\n", addr, port,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A call over TCP: the reply's length (at most @cap bytes, into
 * @reply), or -1.
 */
static int64_t tcp_call(int fd, uint32_t method, const void *req,
			uint64_t len, void *reply, uint64_t cap)
{
	struct rb_hdr h;

	if (send_msg(fd, method, req, len) || read_full(fd, &h, sizeof(h)))
		return -1;
	if (h.code || h.len > cap)
		return -1;
	if (read_full(fd, reply, (size_t)h.len))
		return -1;
	return (int64_t)h.len;
}

/* Grow *@buf to @len bytes (its pages touched once); 0 or -1. */
static int tserve_grow(uint8_t **buf, uint64_t *cap, uint64_t len)
{
	uint8_t *p;

	if (len <= *cap)
		return 0;
	p = realloc(*buf, (size_t)len);
	if (!p)
		return -1;
	memset(p, 0, (size_t)len);
	*buf = p;
	*cap = len;
	return 0;
}

static void *tserve_conn(void *arg)
{
	uint64_t in_cap = 0, out_cap = 0, n;
	uint8_t *in = NULL, *out = NULL;
	int fd = (int)(intptr_t)arg;
	struct rb_hdr h;
	int ret;

	while (!read_full(fd, &h, sizeof(h))) {
		if (h.len > RB_MAX || tserve_grow(&in, &in_cap, h.len) ||
		    read_full(fd, in, (size_t)h.len))
			break;
		switch (h.code) {
		case RB_ECHO:
			ret = send_msg(fd, 0, in, h.len);
			break;
		case RB_SINK:
			ret = send_msg(fd, 0, &h.len, 8);
			break;
		case RB_MAKE:
			n = 0;
			if (h.len >= 8)
				memcpy(&n, in, 8);
			if (n > RB_MAX || tserve_grow(&out, &out_cap, n)) {
				ret = send_msg(fd, ENOMEM, NULL, 0);
				break;
			}
			make_stamp(out, n);
			ret = send_msg(fd, 0, out, n);
			break;
		default:
			ret = send_msg(fd, EOPNOTSUPP, NULL, 0);
		}
		if (ret)
			break;
	}
	close(fd);
	free(in);
	free(out);
	return NULL;
}

static int run_tserve(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	unsigned long conns = 0;
	pthread_attr_t attr;
	sigset_t term;
	pthread_t t;
	int lfd, fd, ret, one = 1;

	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 128)) {
		fprintf(stderr, "rpc_bench: TCP port %d: %s\n", port,
			strerror(errno));
		return 1;
	}
	catch_term();
	/* SIGTERM for this thread: its accept() ends, not a connection's. */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	printf("rpc_bench: tserve port=%d\n", port);
	fflush(stdout);
	while (!stopping) {
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		tcp_nodelay(fd);
		pthread_sigmask(SIG_BLOCK, &term, NULL);
		ret = pthread_create(&t, &attr, tserve_conn,
				     (void *)(intptr_t)fd);
		pthread_sigmask(SIG_UNBLOCK, &term, NULL);
		if (ret) {
			close(fd);
			continue;
		}
		conns++;
	}
	printf("rpc_bench: tserve connections=%lu\n", conns);
	return 0;
}

/* ---- the krcore server ---- */

static struct krc_srv *ksrv;
static atomic_ulong kreply_errors;

static void kserve_one(struct krc_req *req)
{
	uint8_t small[KRC_RPC_INLINE];
	uint64_t n = 0;
	uint8_t *out;
	int ret;

	switch (req->method) {
	case RB_ECHO:
		ret = krc_srv_reply(ksrv, req, 0, req->data, req->len);
		break;
	case RB_SINK:
		n = req->len;
		ret = krc_srv_reply(ksrv, req, 0, &n, 8);
		break;
	case RB_MAKE:
		if (req->len >= 8)
			memcpy(&n, req->data, 8);
		out = n > KRC_RPC_INLINE ?
		      krc_srv_reply_buf(ksrv, req, (size_t)n) : small;
		if (!out) {
			ret = krc_srv_reply(ksrv, req, ENOMEM, NULL, 0);
			break;
		}
		make_stamp(out, n);
		ret = krc_srv_reply(ksrv, req, 0, out, (size_t)n);
		break;
	default:
		ret = krc_srv_reply(ksrv, req, EOPNOTSUPP, NULL, 0);
	}
	if (ret && atomic_fetch_add(&kreply_errors, 1) < 5)
		fprintf(stderr, "rpc_bench: kserve: reply: %s\n", krc_errmsg());
}

static void *kserve_thread(void *arg)
{
	struct krc_req *req;
	int n;

	while (!stopping) {
		n = krc_srv_next(ksrv, &req, 200);
		if (n == -EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "rpc_bench: kserve: next: %s\n",
				krc_errmsg());
			stopping = 1;
			break;
		}
		if (n)
			kserve_one(req);
	}
	return NULL;
}

static int run_kserve(int port, int threads)
{
	pthread_t t[16];
	struct krc_srv_stats st;
	int i;

	if (threads < 1 || threads > 16) {
		fprintf(stderr, "rpc_bench: 1..16 threads\n");
		return 2;
	}
	if (krc_srv_open(&ksrv, (uint16_t)port, NULL)) {
		fprintf(stderr, "rpc_bench: kserve port %d: %s\n", port,
			krc_errmsg());
		return 1;
	}
	catch_term();
	printf("rpc_bench: kserve port=%d threads=%d\n", port, threads);
	fflush(stdout);
	for (i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, kserve_thread, NULL);
	kserve_thread(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	krc_srv_stats(ksrv, &st);
	printf("rpc_bench: kserve run=%llu dup_running=%llu dup_done=%llu "
	       "old=%llu refused=%llu bad=%llu grants=%llu reply_errors=%lu\n",
	       (unsigned long long)st.run, (unsigned long long)st.dup_running,
	       (unsigned long long)st.dup_done, (unsigned long long)st.old,
	       (unsigned long long)st.refused, (unsigned long long)st.bad,
	       (unsigned long long)st.grants, atomic_load(&kreply_errors));
	krc_srv_close(ksrv);
	return 0;
}

/* ---- callers ---- */

static struct krc_chan *kchan(const char *addr, int port)
{
	struct krc_chan *ch;

	if (krc_chan_open(&ch, addr, (uint16_t)port, RB_OPEN_MS)) {
		fprintf(stderr, "rpc_bench: channel to %s:%d: %s\n", addr, port,
			krc_errmsg());
		return NULL;
	}
	return ch;
}

/* One 64 B echo call, krcore (@ch) or TCP (@fd); 0 if answered right. */
static int small_call(struct krc_chan *ch, int fd, unsigned int i)
{
	uint8_t req[RB_SMALL], rep[RB_SMALL];
	int64_t n;

	small_fill(req, i);
	if (ch) {
		n = krc_call(ch, RB_ECHO, req, sizeof(req), rep, sizeof(rep),
			     RB_CALL_MS);
		if (n < 0)
			fprintf(stderr, "rpc_bench: krc_call: %s\n",
				krc_errmsg());
	} else {
		n = tcp_call(fd, RB_ECHO, req, sizeof(req), rep, sizeof(rep));
		if (n < 0)
			fprintf(stderr, "rpc_bench: TCP call failed\n");
	}
	return n == RB_SMALL && !memcmp(req, rep, RB_SMALL) ? 0 : -1;
}

static void chan_report(const char *what, struct krc_chan *ch)
{
	struct krc_chan_stats st;

	krc_chan_stats(ch, &st);
	if (st.resent || st.stale || st.reconnects)
		printf("rpc_bench: krcore %s_calls=%llu resent=%llu stale=%llu "
		       "queued=%llu reconnects=%llu\n",
		       what, (unsigned long long)st.calls,
		       (unsigned long long)st.resent,
		       (unsigned long long)st.stale,
		       (unsigned long long)st.queued,
		       (unsigned long long)st.reconnects);
}

static int run_lat(const char *addr, int kport, int tport, int n)
{
	double *kv, *tv, t;
	struct krc_chan *ch;
	int fd, i, r, k = 0, m = 0, per, bad = 0;
	char x[16];

	if (n < RB_ROUNDS || n > RB_SAMPLES_MAX) {
		fprintf(stderr, "rpc_bench: N from %d to %d\n", RB_ROUNDS,
			RB_SAMPLES_MAX);
		return 2;
	}
	kv = calloc((size_t)n, sizeof(*kv));
	tv = calloc((size_t)n, sizeof(*tv));
	ch = kchan(addr, kport);
	fd = tcp_connect(addr, tport);
	if (!kv || !tv || !ch || fd < 0)
		return 1;
	for (i = 0; i < RB_WARMUP && !bad; i++)
		bad = small_call(ch, -1, i) || small_call(NULL, fd, i);
	per = n / RB_ROUNDS;
	for (r = 0; r < RB_ROUNDS && !bad; r++) {
		bool kfirst = !(r & 1);
		int pass;

		for (pass = 0; pass < 2 && !bad; pass++) {
			bool kr = kfirst == !pass;

			for (i = 0; i < per && !bad; i++) {
				t = now_us();
				bad = small_call(kr ? ch : NULL, fd, i);
				t = now_us() - t;
				if (kr)
					kv[k++] = t;
				else
					tv[m++] = t;
			}
		}
	}
	chan_report("lat", ch);
	krc_chan_close(ch);
	close(fd);
	if (bad)
		return 1;
	snprintf(x, sizeof(x), "%d", RB_SMALL);
	for (i = 0; i < k; i++)
		bench_sample(RB_FIG_RTT, "krcore", x, kv[i]);
	for (i = 0; i < m; i++)
		bench_sample(RB_FIG_RTT, "tcp", x, tv[i]);
	qsort(kv, (size_t)k, sizeof(*kv), cmp_d);
	qsort(tv, (size_t)m, sizeof(*tv), cmp_d);
	printf("rpc_bench: krcore lat_median_us=%.1f lat_p99_us=%.1f "
	       "lat_min_us=%.1f calls=%d bytes=%d\n",
	       pct(kv, k, 0.5), pct(kv, k, 0.99), kv[0], k, RB_SMALL);
	printf("rpc_bench: tcp lat_median_us=%.1f lat_p99_us=%.1f "
	       "lat_min_us=%.1f calls=%d bytes=%d\n",
	       pct(tv, m, 0.5), pct(tv, m, 0.99), tv[0], m, RB_SMALL);
	free(kv);
	free(tv);
	return 0;
}

/* What a rate process did. */
struct rate_res {
	uint64_t calls;
	double end;
	int failed;
};

/* P processes of @method (krcore or TCP) for @secs: calls per second. */
static int rate_one(bool krcore, const char *addr, int port, double secs,
		    int procs, double *rate, uint64_t *calls)
{
	size_t len = sizeof(struct rate_res) * (size_t)procs;
	struct bench_gate gate;
	struct rate_res *shm;
	double t0, end = 0;
	int i, bad = 0;
	pid_t pid;

	*calls = 0;
	if (bench_gate_open(&gate, len))
		return -1;
	shm = gate.shm;
	for (i = 0; i < procs; i++) {
		pid = bench_gate_fork(&gate);
		if (pid < 0) {
			bad = 1;
			break;
		}
		if (pid == 0) {
			struct krc_chan *ch = NULL;
			unsigned int j = 0;
			double stop;
			int fd = -1, w;

			if (krcore)
				ch = kchan(addr, port);
			else
				fd = tcp_connect(addr, port);
			shm[i].failed = krcore ? !ch : fd < 0;
			for (w = 0; w < RB_WARMUP && !shm[i].failed; w++)
				shm[i].failed = small_call(ch, fd, j++) != 0;
			if (bench_gate_child(&gate))
				_exit(1);
			stop = now_us() + secs * 1e6;
			while (!shm[i].failed && now_us() < stop) {
				shm[i].failed = small_call(ch, fd, j++) != 0;
				shm[i].calls += !shm[i].failed;
			}
			shm[i].end = now_us();
			if (ch) {
				chan_report("rate", ch);
				krc_chan_close(ch);
			}
			if (fd >= 0)
				close(fd);
			exit(shm[i].failed);
		}
	}
	if (bench_gate_run(&gate, &t0))
		bad = 1;
	for (i = 0; i < gate.forked; i++) {
		*calls += shm[i].calls;
		bad |= shm[i].failed;
		if (shm[i].end > end)
			end = shm[i].end;
	}
	bench_gate_close(&gate);
	*rate = end > t0 ? *calls / ((end - t0) / 1e6) : 0;
	return bad ? -1 : 0;
}

static int run_rate(const char *addr, int kport, int tport, double secs,
		    char **pv, int np)
{
	uint64_t calls;
	double rate;
	int i, k, p, ret = 0;
	char x[16];

	for (i = 0; i < np; i++) {
		p = atoi(pv[i]);
		if (p < 1 || p > RB_PROCS_MAX) {
			fprintf(stderr, "rpc_bench: 1..%d processes\n",
				RB_PROCS_MAX);
			return 2;
		}
		for (k = 0; k < 2; k++) {
			const char *name = k ? "tcp" : "krcore";

			if (rate_one(!k, addr, k ? tport : kport, secs, p,
				     &rate, &calls)) {
				fprintf(stderr, "rpc_bench: %s rate at %d processes failed\n",
					name, p);
				ret = 1;
				continue;
			}
			printf("rpc_bench: %s rate_procs=%d calls_per_s=%.1f "
			       "calls=%llu secs=%.1f\n",
			       name, p, rate, (unsigned long long)calls, secs);
			snprintf(x, sizeof(x), "%d", p);
			bench_sample(RB_FIG_RATE, name, x, rate);
		}
	}
	return ret;
}

/* ---- large payloads ---- */

enum { BIG_K, BIG_KMR, BIG_TCP, BIG_METHODS };
static const char * const big_name[] = { "krcore", "krcore_mr", "tcp" };

struct big_ctx {
	struct krc_chan *ch;
	struct krc_mr mr;
	int fd;
	uint8_t *buf;
	uint64_t bytes;
};

/* krc_call_start with the registration, and wait for it. */
static int64_t kmr_call(struct big_ctx *b, uint32_t method, const void *req,
			size_t req_len, void *reply, size_t cap)
{
	struct krc_call_args a = {
		.method = method, .req = req, .req_len = req_len,
		.reply = reply, .reply_cap = cap, .timeout_ms = RB_CALL_MS,
	};
	struct krc_call_done d;
	uint64_t id;
	int n;

	if (req == b->buf)
		a.req_mr = &b->mr;
	if (reply == b->buf)
		a.reply_mr = &b->mr;
	if (krc_call_start(b->ch, &a, &id))
		return -1;
	n = krc_chan_poll(b->ch, &d, 1, RB_CALL_MS);
	if (n != 1 || d.id != id)
		return -1;
	return d.result;
}

/*
 * A request of @len bytes (reply: its length) or, @reply, a reply of
 * @len bytes; by method @m. Its time in us, or -1.
 */
static double big_call(struct big_ctx *b, int m, bool reply, uint64_t len)
{
	uint64_t small = len, got = 0;
	double t = now_us();
	int64_t n;

	if (reply) {
		if (m == BIG_TCP)
			n = tcp_call(b->fd, RB_MAKE, &small, 8, b->buf, len);
		else if (m == BIG_KMR)
			n = kmr_call(b, RB_MAKE, &small, 8, b->buf, len);
		else
			n = krc_call(b->ch, RB_MAKE, &small, 8, b->buf, len,
				     RB_CALL_MS);
		t = now_us() - t;
		if (n != (int64_t)len || !make_check(b->buf, len))
			goto bad;
		return t;
	}
	if (m == BIG_TCP)
		n = tcp_call(b->fd, RB_SINK, b->buf, len, &got, 8);
	else if (m == BIG_KMR)
		n = kmr_call(b, RB_SINK, b->buf, len, &got, 8);
	else
		n = krc_call(b->ch, RB_SINK, b->buf, len, &got, 8, RB_CALL_MS);
	t = now_us() - t;
	if (n != 8 || got != len)
		goto bad;
	return t;
bad:
	fprintf(stderr, "rpc_bench: %s %s of %llu B failed (%lld): %s\n",
		big_name[m], reply ? "reply" : "request",
		(unsigned long long)len, (long long)n,
		m == BIG_TCP ? "TCP" : krc_errmsg());
	return -1;
}

/* Each call's MiB/s as a sample: METHOD_request and METHOD_reply. */
static void big_samples(double *v[BIG_METHODS][2], uint64_t bytes, int reps)
{
	char method[48], x[24];
	int m, d, r;

	snprintf(x, sizeof(x), "%llu", (unsigned long long)bytes);
	for (m = 0; m < BIG_METHODS; m++)
		for (d = 0; d < 2; d++) {
			snprintf(method, sizeof(method), "%s_%s", big_name[m],
				 d ? "reply" : "request");
			for (r = 0; r < reps; r++)
				bench_sample(RB_FIG_BIG, method, x,
					     bytes / 1048576.0 /
					     (v[m][d][r] / 1e6));
		}
}

static int run_big(const char *addr, int kport, int tport, uint64_t bytes,
		   int reps)
{
	double *v[BIG_METHODS][2], t;
	struct krc_vq *vq = NULL;
	struct big_ctx b = {};
	int m, r, d, bad = 0;

	if (bytes < 16 || bytes > RB_MAX || reps < 1 || reps > 1000) {
		fprintf(stderr, "rpc_bench: 16 B..1 GiB, 1..1000 reps\n");
		return 2;
	}
	b.bytes = bytes;
	b.buf = malloc((size_t)bytes);
	if (!b.buf)
		return 1;
	memset(b.buf, 1, (size_t)bytes);
	for (m = 0; m < BIG_METHODS; m++)
		for (d = 0; d < 2; d++) {
			v[m][d] = calloc((size_t)reps, sizeof(double));
			if (!v[m][d])
				return 1;
		}
	b.ch = kchan(addr, kport);
	b.fd = tcp_connect(addr, tport);
	if (!b.ch || b.fd < 0)
		return 1;
	/* The registration krcore_mr's calls hold (any VQ's serves). */
	if (krc_vq_open(&vq) ||
	    krc_reg_mr(vq, b.buf, (size_t)bytes, KRCORE_ACCESS_LOCAL_WRITE,
		       &b.mr)) {
		fprintf(stderr, "rpc_bench: registration: %s\n", krc_errmsg());
		return 1;
	}
	/* Warm up: 1 MiB each way by each method (not timed). */
	for (m = 0; m < BIG_METHODS && !bad; m++)
		for (d = 0; d < 2 && !bad; d++)
			bad = big_call(&b, m, d, bytes < (1 << 20) ? bytes :
				       1 << 20) < 0;
	for (r = 0; r < reps && !bad; r++)
		for (d = 0; d < 2 && !bad; d++)
			for (m = 0; m < BIG_METHODS && !bad; m++) {
				int mm = (m + r) % BIG_METHODS;

				t = big_call(&b, mm, d, bytes);
				bad = t < 0;
				v[mm][d][r] = t;
				printf("big %s %s %d %.1f ms\n", big_name[mm],
				       d ? "reply" : "request", r, t / 1e3);
			}
	chan_report("big", b.ch);
	krc_dereg_mr(vq, &b.mr);
	krc_vq_close(vq);
	krc_chan_close(b.ch);
	close(b.fd);
	if (bad)
		return 1;
	big_samples(v, bytes, reps);
	for (m = 0; m < BIG_METHODS; m++) {
		double rq = median_of(v[m][0], reps);
		double rp = median_of(v[m][1], reps);

		printf("rpc_bench: %s big_bytes=%llu big_req_ms=%.1f "
		       "big_req_mib_s=%.1f big_reply_ms=%.1f "
		       "big_reply_mib_s=%.1f reps=%d\n",
		       big_name[m], (unsigned long long)bytes, rq / 1e3,
		       bytes / 1048576.0 / (rq / 1e6), rp / 1e3,
		       bytes / 1048576.0 / (rp / 1e6), reps);
	}
	return 0;
}

/* ---- a new process's first reply ---- */

/*
 * One call from a new process; prints "once METHOD US": the time from
 * here (exec and loading done) to the reply, the channel's close or the
 * socket's and the exit left out; then "once_split METHOD OPEN_US
 * CALL_US": that time's two parts, the channel's open (TCP: socket and
 * connect) and the call.
 */
static int run_once(const char *method, const char *addr, int port)
{
	double t0 = now_us(), t1;
	struct krc_chan *ch = NULL;
	int fd = -1, bad;

	if (!strcmp(method, "krcore")) {
		ch = kchan(addr, port);
		if (!ch)
			return 1;
	} else if (!strcmp(method, "tcp")) {
		fd = tcp_connect(addr, port);
		if (fd < 0)
			return 1;
	} else {
		return 2;
	}
	t1 = now_us();
	bad = small_call(ch, fd, 1);
	t1 = now_us() - t1;
	t0 = now_us() - t0;
	if (ch)
		krc_chan_close(ch);
	if (fd >= 0)
		close(fd);
	if (!bad)
		printf("once %s %.1f\nonce_split %s %.1f %.1f\n", method, t0,
		       method, t0 - t1, t1);
	return bad ? 1 : 0;
}

/* One sample: fork, exec, the child's exit; its time in us, or -1. */
static double first_one(const char *method, const char *addr,
			const char *kport, const char *tport, char **cmd)
{
	bool own = !strcmp(method, "krcore") || !strcmp(method, "tcp");
	const char *port = strcmp(method, "tcp") ? kport : tport;
	double t0;
	int status;
	pid_t pid;

	if (!own && !cmd[0]) {
		fprintf(stderr, "rpc_bench: %s: no command\n", method);
		return -1;
	}
	fflush(NULL);
	t0 = now_us();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (own)
			execl("/proc/self/exe", "rpc_bench", "once", method,
			      addr, port, (char *)NULL);
		else
			execvp(cmd[0], cmd);
		perror("rpc_bench: exec");
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	t0 = now_us() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "rpc_bench: %s: the new process failed\n",
			method);
		return -1;
	}
	return t0;
}

static int run_first(const char *addr, const char *kport, const char *tport,
		     int k, char *methods, char **cmd)
{
	char *name[RB_METHODS_MAX], *save = NULL, *tok;
	double *v[RB_METHODS_MAX], t;
	int nm = 0, r, i, bad = 0;

	if (k < 1 || k > 10000) {
		fprintf(stderr, "rpc_bench: K from 1 to 10000\n");
		return 2;
	}
	for (tok = strtok_r(methods, ",", &save); tok && nm < RB_METHODS_MAX;
	     tok = strtok_r(NULL, ",", &save)) {
		name[nm] = tok;
		v[nm] = calloc((size_t)k, sizeof(double));
		if (!v[nm])
			return 1;
		nm++;
	}
	if (!nm)
		return 2;
	for (r = 0; r < k && !bad; r++)
		for (i = 0; i < nm && !bad; i++) {
			int m = (i + r) % nm;

			t = first_one(name[m], addr, kport, tport, cmd);
			bad = t < 0;
			v[m][r] = t;
		}
	if (bad)
		return 1;
	for (i = 0; i < nm; i++) {
		for (r = 0; r < k; r++)
			bench_sample(RB_FIG_FIRST, name[i], "new_process",
				     v[i][r] / 1e3);
		qsort(v[i], (size_t)k, sizeof(double), cmp_d);
		printf("rpc_bench: %s first_reply_median_us=%.0f "
		       "first_reply_min_us=%.0f first_reply_max_us=%.0f "
		       "samples=%d\n",
		       name[i], pct(v[i], k, 0.5), v[i][0], v[i][k - 1], k);
	}
	return 0;
}

static void print_help(void)
{
	fprintf(stderr, "usage: rpc_bench kserve PORT THREADS\n"
		"       rpc_bench tserve PORT\n"
		"       rpc_bench lat ADDR KPORT TPORT N\n"
		"       rpc_bench rate ADDR KPORT TPORT SECS P...\n"
		"       rpc_bench big ADDR KPORT TPORT BYTES REPS\n"
		"       rpc_bench first ADDR KPORT TPORT K METHODS [CMD ARG...]\n"
		"       rpc_bench once krcore|tcp ADDR PORT\n");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && !strcmp(argv[1], "kserve"))
		return run_kserve(atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "tserve"))
		return run_tserve(atoi(argv[2]));
	if (argc == 6 && !strcmp(argv[1], "lat"))
		return run_lat(argv[2], atoi(argv[3]), atoi(argv[4]),
			       atoi(argv[5]));
	if (argc >= 7 && !strcmp(argv[1], "rate"))
		return run_rate(argv[2], atoi(argv[3]), atoi(argv[4]),
				atof(argv[5]), argv + 6, argc - 6);
	if (argc == 7 && !strcmp(argv[1], "big"))
		return run_big(argv[2], atoi(argv[3]), atoi(argv[4]),
			       strtoull(argv[5], NULL, 0), atoi(argv[6]));
	if (argc >= 7 && !strcmp(argv[1], "first"))
		return run_first(argv[2], argv[3], argv[4], atoi(argv[5]),
				 argv[6], argv + 7);
	if (argc == 5 && !strcmp(argv[1], "once"))
		return run_once(argv[2], argv[3], atoi(argv[4]));
	print_help();
	return 2;
}
