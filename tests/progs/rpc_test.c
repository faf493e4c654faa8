// SPDX-License-Identifier: BSD-2-Clause
/*
 * rpc_test - libkrcore's RPC (docs/rpc.md) against a server it runs:
 *
 *   rpc_test serve PORT THREADS DIR   serve until DIR/stop exists; then
 *                                     write DIR/srv.stats and exit
 *   rpc_test serve PORT THREADS DIR hold  the same, but the port is not
 *                                     read until DIR/go exists
 *   rpc_test stream ADDR PORT N       N echo calls at once (N <= 256) to
 *                                     a server that does not read yet:
 *                                     prints "started", then waits up to
 *                                     300 s for every reply, each its own
 *                                     and once; prints the channel's counts
 *   rpc_test sizes ADDR PORT          echo and sized replies of 0, 1,
 *                                     4008, 4009, 4080, 4081 B, 1 and
 *                                     64 MiB (RPC_TEST_BIG: another
 *                                     largest), data checked both ways; a
 *                                     reply over the cap: -EMSGSIZE
 *   rpc_test clients ADDR PORT N CALLS  N processes, CALLS calls each,
 *                                     every reply its caller's own
 *   rpc_test count ADDR PORT N DELAY  N non-idempotent calls (the server
 *                                     counts; each takes 0..DELAY ms):
 *                                     replies 1..N in order; prints the
 *                                     channel's counts
 *   rpc_test async ADDR PORT          256 calls outstanding at once, a
 *                                     257th refused, 4 cancelled: each
 *                                     completes once, with its own result
 *   rpc_test hang ADDR PORT           a call the server sleeps in (kill
 *                                     the server): prints the error and
 *                                     how long after "calling" it came;
 *                                     then calls the port's next server
 *                                     on the same channel
 *   rpc_test once ADDR PORT           a new process's one call (prints
 *                                     the time from start to the reply)
 *   rpc_test hostile ADDR PORT N      N messages to the server's port from
 *                                     a raw VQ: random bytes, valid
 *                                     headers with one field broken,
 *                                     types only a server sends, writes
 *                                     claimed into grants never made,
 *                                     1 GiB asks; then a real call is
 *                                     answered right (prints counts)
 *
 * Methods of the server: 1 echo, 2 count (the n-th call ever gets n,
 * after sleeping its request's ms), 3 make (a reply of the size and
 * seed asked), 4 sleep (ms), 5 total (how many counts ran).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp.h"
#include "rpc.h"

enum { M_ECHO = 1, M_COUNT = 2, M_MAKE = 3, M_SLEEP = 4, M_TOTAL = 5 };

#define TAG	"rpc_test"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define BIG	(64u << 20)

static int failures;

static void check(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf(TAG ": %s: %s", ok ? "ok" : "FAIL", what);
	if (!ok) {
		failures++;
		printf(" (");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf(")");
	}
	printf("\n");
	fflush(stdout);
}

static uint8_t pat(uint64_t i, uint32_t seed)
{
	return (uint8_t)(i * 131 + seed * 7 + (i >> 12));
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pat(i, seed);
}

static size_t bad_at(const uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pat(i, seed))
			return i;
	return (size_t)-1;
}

/* ---- the server ---- */

static struct krc_srv *srv;
static const char *srv_dir;
static uint64_t counted, slept;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void serve_one(struct krc_req *req)
{
	uint64_t v, arg = 0;
	uint32_t seed;
	uint8_t *out;
	int ret;

	if (req->len >= 8)
		memcpy(&arg, req->data, 8);
	switch (req->method) {
	case M_ECHO:
		ret = krc_srv_reply(srv, req, 0, req->data, req->len);
		break;
	case M_COUNT:
		if (arg)
			usleep((useconds_t)(arg * 1000));
		pthread_mutex_lock(&count_lock);
		v = ++counted;
		pthread_mutex_unlock(&count_lock);
		ret = krc_srv_reply(srv, req, 0, &v, 8);
		break;
	case M_MAKE:
		seed = req->len >= 12 ? ((uint32_t *)req->data)[2] : 0;
		out = arg > KRC_RPC_INLINE ? krc_srv_reply_buf(srv, req, arg) :
					     malloc(arg ? arg : 1);
		if (!out) {
			ret = krc_srv_reply(srv, req, ENOMEM, NULL, 0);
			break;
		}
		fill(out, arg, seed);
		ret = krc_srv_reply(srv, req, 0, out, arg);
		if (arg <= KRC_RPC_INLINE)
			free(out);
		break;
	case M_SLEEP:
		pthread_mutex_lock(&count_lock);
		slept++;
		pthread_mutex_unlock(&count_lock);
		usleep((useconds_t)(arg * 1000));
		ret = krc_srv_reply(srv, req, 0, NULL, 0);
		break;
	case M_TOTAL:
		pthread_mutex_lock(&count_lock);
		v = counted;
		pthread_mutex_unlock(&count_lock);
		ret = krc_srv_reply(srv, req, 0, &v, 8);
		break;
	default:
		ret = krc_srv_reply(srv, req, EOPNOTSUPP, NULL, 0);
	}
	if (ret)
		fprintf(stderr, TAG ": reply: %s\n", krc_errmsg());
}

static int srv_file(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", srv_dir, name);
	return !stat(path, &st);
}

static int stopped(void)
{
	return srv_file("stop");
}

static void *serve_thread(void *arg)
{
	struct krc_req *req;
	int n;

	(void)arg;
	while (!stopped()) {
		n = krc_srv_next(srv, &req, 200);
		if (n < 0)
			tp_die(TAG ": next: %s", krc_errmsg());
		if (n)
			serve_one(req);
	}
	return NULL;
}

static int do_serve(int port, int threads, const char *dir, int hold)
{
	pthread_t t[16];
	struct krc_srv_stats st;
	char path[512];
	FILE *f;
	int i;

	srv_dir = dir;
	if (threads < 1 || threads > 16)
		tp_die("1..16 threads");
	if (krc_srv_open(&srv, (uint16_t)port, NULL))
		tp_die(TAG ": serve: %s", krc_errmsg());
	printf(TAG ": serving port %d with %d thread(s)\n", port, threads);
	fflush(stdout);
	snprintf(path, sizeof(path), "%s/ready", dir);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	/* The port is bound; its ring fills while nobody reads it. */
	while (hold && !srv_file("go") && !stopped())
		usleep(20000);
	for (i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, serve_thread, NULL);
	serve_thread(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	krc_srv_stats(srv, &st);
	snprintf(path, sizeof(path), "%s/srv.stats", dir);
	f = fopen(path, "w");
	if (!f)
		tp_die("%s", path);
	fprintf(f, "run=%llu dup_running=%llu dup_done=%llu old=%llu ",
		(unsigned long long)st.run, (unsigned long long)st.dup_running,
		(unsigned long long)st.dup_done, (unsigned long long)st.old);
	fprintf(f, "refused=%llu bad=%llu grants=%llu counted=%llu slept=%llu\n",
		(unsigned long long)st.refused, (unsigned long long)st.bad,
		(unsigned long long)st.grants, (unsigned long long)counted,
		(unsigned long long)slept);
	fclose(f);
	krc_srv_close(srv);
	return 0;
}

/* ---- callers ---- */

static struct krc_chan *chan(const char *addr, int port)
{
	struct krc_chan *ch;

	if (krc_chan_open(&ch, addr, (uint16_t)port, 20000))
		tp_die(TAG ": channel to %s:%d: %s", addr, port, krc_errmsg());
	return ch;
}

static int do_sizes(const char *addr, int port)
{
	/* The largest: 64 MiB, or RPC_TEST_BIG bytes (1 MiB at least). */
	const char *e = getenv("RPC_TEST_BIG");
	size_t big = e && strtoul(e, NULL, 0) >= (1u << 20) ?
		     strtoul(e, NULL, 0) : BIG;
	const size_t sizes[] = {
		0, 1, KRC_RPC_INLINE, KRC_RPC_INLINE + 1, 4080, 4081,
		1u << 20, big,
	};
	/*
	 * A page more than the largest call: the library then registers
	 * 64 MiB one page longer, as rxe in Linux 6.1 needs (krcl_reg_len).
	 */
	uint8_t *req = tp_xalloc(big + 4096), *rep = tp_xalloc(big + 4096);
	struct krc_chan *ch = chan(addr, port);
	uint32_t make[3];
	unsigned int i;
	int64_t r;
	size_t n;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		n = sizes[i];
		fill(req, n, (uint32_t)i + 1);
		memset(rep, 0xee, n + 1);
		r = krc_call(ch, M_ECHO, req, n, rep, big + 4096, 120000);
		check(r == (int64_t)n && bad_at(rep, n, (uint32_t)i + 1) ==
		      (size_t)-1 && rep[n] == 0xee,
		      "echo: the request's bytes are the reply's", "%zu B: %lld, %s",
		      n, (long long)r, r < 0 ? krc_errmsg() : "data");
		memcpy(make, &n, 8);
		make[2] = (uint32_t)i + 100;
		memset(rep, 0xee, n + 1);
		r = krc_call(ch, M_MAKE, make, sizeof(make), rep, big + 4096,
			     120000);
		check(r == (int64_t)n && bad_at(rep, n, (uint32_t)i + 100) ==
		      (size_t)-1 && rep[n] == 0xee,
		      "make: a reply of the size asked, its bytes", "%zu B: %lld, %s",
		      n, (long long)r, r < 0 ? krc_errmsg() : "data");
		printf(TAG ": size %zu both ways\n", n);
	}
	/* A reply larger than the caller takes: EMSGSIZE, inline or not. */
	n = 100;
	memcpy(make, &n, 8);
	r = krc_call(ch, M_MAKE, make, sizeof(make), rep, 99, 30000);
	check(r == -EMSGSIZE, "a 100 B reply into 99 B: -EMSGSIZE", "%lld",
	      (long long)r);
	n = 1u << 20;
	memcpy(make, &n, 8);
	r = krc_call(ch, M_MAKE, make, sizeof(make), rep, n - 1, 30000);
	check(r == -EMSGSIZE, "a 1 MiB reply into 1 MiB - 1: -EMSGSIZE", "%lld",
	      (long long)r);
	r = krc_call(ch, 77, NULL, 0, NULL, 0, 30000);
	check(r == -EOPNOTSUPP, "a status from the server comes back as -errno",
	      "%lld", (long long)r);
	krc_chan_close(ch);
	return failures ? 1 : 0;
}

static int one_client(const char *addr, int port, int calls, int who)
{
	struct krc_chan *ch = chan(addr, port);
	uint8_t req[256], rep[256];
	int i, bad = 0;
	int64_t r;

	for (i = 0; i < calls; i++) {
		size_t n = 16 + (size_t)(i % 200);

		fill(req, n, (uint32_t)(who * 100000 + i));
		r = krc_call(ch, M_ECHO, req, n, rep, sizeof(rep), 60000);
		if (r != (int64_t)n ||
		    bad_at(rep, n, (uint32_t)(who * 100000 + i)) != (size_t)-1) {
			fprintf(stderr, TAG ": client %d call %d: %lld %s\n", who,
				i, (long long)r, krc_errmsg());
			bad++;
		}
	}
	krc_chan_close(ch);
	return bad ? 1 : 0;
}

static int do_clients(const char *addr, int port, int n, int calls)
{
	int i, st, bad = 0;
	pid_t pid;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (!pid)
			_exit(one_client(addr, port, calls,
					 (int)(getpid() % 1000) * 10 + i));
	}
	for (i = 0; i < n; i++) {
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	check(!bad, "every process got its own replies, each checked",
	      "%d of %d processes failed", bad, n);
	return failures ? 1 : 0;
}

static int do_count(const char *addr, int port, int n, int delay)
{
	struct krc_chan *ch = chan(addr, port);
	struct krc_chan_stats st;
	uint64_t v, first = 0, ms;
	int i, order = 1, got = 0;
	int64_t r;

	for (i = 0; i < n; i++) {
		ms = delay ? (uint64_t)((i * 37) % (delay + 1)) : 0;
		r = krc_call(ch, M_COUNT, &ms, 8, &v, 8, 120000);
		if (r != 8) {
			fprintf(stderr, TAG ": count %d: %lld %s\n", i,
				(long long)r, krc_errmsg());
			continue;
		}
		if (!got++)
			first = v;
		else if (v != first + (uint64_t)i)
			order = 0;
	}
	krc_chan_stats(ch, &st);
	check(got == n && order,
	      "every call answered, the n-th with the count + n (none run twice)",
	      "%d of %d answered, in order %d", got, n, order);
	printf(TAG ": count: first=%llu calls=%llu resent=%llu stale=%llu queued=%llu\n",
	       (unsigned long long)first, (unsigned long long)st.calls,
	       (unsigned long long)st.resent, (unsigned long long)st.stale,
	       (unsigned long long)st.queued);
	r = krc_call(ch, M_TOTAL, NULL, 0, &v, 8, 30000);
	printf(TAG ": total=%llu\n", r == 8 ? (unsigned long long)v : 0ULL);
	krc_chan_close(ch);
	return failures ? 1 : 0;
}

static int do_async(const char *addr, int port)
{
	struct krc_chan *ch = chan(addr, port);
	uint64_t ids[KRC_CALLS_MAX], v[KRC_CALLS_MAX], ms[KRC_CALLS_MAX];
	struct krc_call_done d[64];
	int seen[KRC_CALLS_MAX] = { 0 };
	int i, k, n, bad = 0, done = 0, cancelled = 0, extra;
	struct krc_call_args a;
	uint64_t end;

	for (i = 0; i < KRC_CALLS_MAX; i++) {
		memset(&a, 0, sizeof(a));
		/* 1 in 64 sleeps at the server: cancelled before it answers */
		ms[i] = i % 64 == 0 ? 3000 : (uint64_t)i;
		a.method = i % 64 == 0 ? M_SLEEP : M_ECHO;
		a.req = &ms[i];
		a.req_len = 8;
		a.reply = &v[i];
		a.reply_cap = 8;
		a.timeout_ms = 60000;
		a.user = 1000 + (uint64_t)i;
		if (krc_call_start(ch, &a, &ids[i]))
			tp_die(TAG ": start %d: %s", i, krc_errmsg());
	}
	memset(&a, 0, sizeof(a));
	a.method = M_ECHO;
	a.timeout_ms = 1000;
	extra = krc_call_start(ch, &a, &end);
	check(extra == -EAGAIN, "call 257 with 256 outstanding: -EAGAIN", "%d",
	      extra);
	for (i = 0; i < KRC_CALLS_MAX; i += 64)
		cancelled += !krc_call_cancel(ch, ids[i]);
	end = tp_now_ms() + 60000;
	while (done < KRC_CALLS_MAX && tp_now_ms() < end) {
		n = krc_chan_poll(ch, d, 64, 1000);
		for (k = 0; k < n; k++) {
			i = (int)(d[k].user - 1000);
			if (i < 0 || i >= KRC_CALLS_MAX || seen[i]++ ||
			    d[k].id != ids[i]) {
				bad++;
				continue;
			}
			done++;
			if (i % 64 == 0 ? d[k].result != -ECANCELED :
			    d[k].result != 8 || v[i] != ms[i])
				bad++;
		}
	}
	check(done == KRC_CALLS_MAX && !bad && cancelled == KRC_CALLS_MAX / 64,
	      "256 outstanding: each completed once with its result, the cancelled with -ECANCELED",
	      "%d done, %d bad, %d cancelled", done, bad, cancelled);
	check(krc_call_cancel(ch, ids[1]) == -ENOENT,
	      "cancelling a completed call: -ENOENT", "");
	krc_chan_close(ch);
	return failures ? 1 : 0;
}

static int do_stream(const char *addr, int port, int n)
{
	struct krc_chan *ch = chan(addr, port);
	uint64_t v[KRC_CALLS_MAX], out[KRC_CALLS_MAX], end;
	struct krc_call_done d[64];
	int seen[KRC_CALLS_MAX] = { 0 };
	int i, k, got, bad = 0, done = 0;
	struct krc_chan_stats st;
	struct krc_call_args a;
	uint64_t id;

	if (n < 1 || n > KRC_CALLS_MAX)
		tp_die("1..%d calls", KRC_CALLS_MAX);
	for (i = 0; i < n; i++) {
		memset(&a, 0, sizeof(a));
		v[i] = (uint64_t)i * 7919 + (uint64_t)getpid() * 1000003;
		out[i] = 0;
		a.method = M_ECHO;
		a.req = &v[i];
		a.req_len = 8;
		a.reply = &out[i];
		a.reply_cap = 8;
		a.timeout_ms = 300000;
		a.user = (uint64_t)i;
		if (krc_call_start(ch, &a, &id))
			tp_die(TAG ": start %d: %s", i, krc_errmsg());
	}
	printf(TAG ": stream: started %d\n", n);
	fflush(stdout);
	end = tp_now_ms() + 300000;
	while (done < n && tp_now_ms() < end) {
		got = krc_chan_poll(ch, d, 64, 1000);
		for (k = 0; k < got; k++) {
			i = (int)d[k].user;
			if (i < 0 || i >= n || seen[i]++) {
				bad++;
				continue;
			}
			done++;
			if (d[k].result != 8 || out[i] != v[i])
				bad++;
		}
	}
	krc_chan_stats(ch, &st);
	check(done == n && !bad, "every call answered once, each its own reply",
	      "%d of %d done, %d bad", done, n, bad);
	printf(TAG ": stream: done=%d calls=%llu resent=%llu stale=%llu queued=%llu\n",
	       done, (unsigned long long)st.calls,
	       (unsigned long long)st.resent, (unsigned long long)st.stale,
	       (unsigned long long)st.queued);
	krc_chan_close(ch);
	return failures ? 1 : 0;
}

static int do_hang(const char *addr, int port)
{
	struct krc_chan *ch = chan(addr, port);
	uint64_t ms = 60000, t0;
	uint8_t rep[16];
	int64_t r;

	printf(TAG ": calling\n");
	fflush(stdout);
	t0 = tp_now_ms();
	r = krc_call(ch, M_SLEEP, &ms, 8, NULL, 0, 120000);
	printf(TAG ": hang: result %lld after %llu ms (%s)\n", (long long)r,
	       (unsigned long long)(tp_now_ms() - t0), krc_errmsg());
	/* A new server on the port: the same channel reaches it. */
	t0 = tp_now_ms();
	do {
		r = krc_call(ch, M_ECHO, "again", 5, rep, sizeof(rep), 5000);
		if (r != 5)
			usleep(200000);
	} while (r != 5 && tp_now_ms() - t0 < 60000);
	check(r == 5 && !memcmp(rep, "again", 5),
	      "the same channel calls the port's next server", "%lld %s",
	      (long long)r, krc_errmsg());
	krc_chan_close(ch);
	return failures ? 1 : 0;
}

static int do_once(const char *addr, int port, uint64_t t0)
{
	struct krc_chan *ch = chan(addr, port);
	uint8_t rep[64];
	int64_t r;

	r = krc_call(ch, M_ECHO, "hello", 5, rep, sizeof(rep), 30000);
	check(r == 5 && !memcmp(rep, "hello", 5), "one call from a new process",
	      "%lld %s", (long long)r, krc_errmsg());
	printf(TAG ": once: %llu us from start to the reply\n",
	       (unsigned long long)(tp_now_ms() - t0) * 1000);
	krc_chan_close(ch);
	return failures ? 1 : 0;
}

/* One raw SEND from @vq, waiting for the receiver's slots. */
static int raw_send(struct krc_vq *vq, const struct krc_mr *mr, uint32_t len)
{
	struct krcore_wr wr;
	struct krcore_cqe c;
	int ret, n;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = KRCORE_WR_SEND;
	wr.num_sge = 1;
	wr.sg_list[0].addr = (uintptr_t)mr->addr;
	wr.sg_list[0].length = len;
	wr.sg_list[0].lkey = mr->lkey;
	for (n = 0; n < 200; n++) {
		ret = krc_qpush(vq, &wr, 1);
		while (krc_qpop(vq, &c, 1) == 1)
			;
		if (ret == 1)
			return 0;
		if (ret != -EAGAIN)
			return ret;
		krc_qflow_wait(vq, 100);
	}
	return -ETIMEDOUT;
}

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A well-formed message of @kind, then (most of the time) one field broken. */
static uint32_t hostile_msg(uint8_t *buf, int kind)
{
	struct krc_rpc_hdr h;
	uint32_t len = KRC_RPC_HDR_SIZE, inl = (uint32_t)(rnd() % 64);

	memset(&h, 0, sizeof(h));
	h.epoch = 0x5eed0000ULL + (rnd() % 4);
	h.slot = (uint16_t)(rnd() % KRC_RPC_MAX_SLOTS);
	h.seq = 1 + (uint32_t)(rnd() % 3);
	switch (kind) {
	case 0:		/* random bytes */
		len = (uint32_t)(rnd() % KRCORE_MAX_SEND) + 1;
		for (inl = 0; inl < len; inl++)
			buf[inl] = (uint8_t)rnd();
		return len;
	case 1:		/* a server's message sent to a server */
		h.type = rnd() & 1 ? KRC_RPC_REPLY : KRC_RPC_GRANT;
		h.addr = rnd();
		h.rkey = (uint32_t)rnd() | 1;
		h.total_len = 4096;
		if (h.type == KRC_RPC_REPLY)
			h.flags = KRC_RPC_F_REMOTE;
		break;
	case 2:		/* written into a grant never made */
		h.type = KRC_RPC_CALL;
		h.flags = KRC_RPC_F_WRITTEN;
		h.total_len = 1 + rnd() % (1u << 20);
		h.method = M_ECHO;
		break;
	case 3:		/* asks for 1 GiB, more than the server grants */
		h.type = KRC_RPC_CALL;
		h.flags = KRC_RPC_F_LARGE;
		h.total_len = KRC_RPC_MAX_PAYLOAD;
		h.method = M_ECHO;
		break;
	case 4:		/* ACK and CANCEL of calls that do not exist */
		h.type = rnd() & 1 ? KRC_RPC_ACK : KRC_RPC_CANCEL;
		break;
	default:	/* a CALL, then one byte of its header changed */
		h.type = KRC_RPC_CALL;
		h.method = M_ECHO;
		h.inline_len = inl;
		h.total_len = inl;
		krc_rpc_encode(&h, buf);
		memset(buf + KRC_RPC_HDR_SIZE, 0, inl);
		buf[rnd() % KRC_RPC_HDR_SIZE] ^= (uint8_t)(1 + rnd() % 255);
		return KRC_RPC_HDR_SIZE + inl;
	}
	krc_rpc_encode(&h, buf);
	return len;
}

static int do_hostile(const char *addr, int port, int n)
{
	uint8_t *buf = tp_xalloc(8192), rep[64];
	struct krcore_qconnect qc;
	struct krc_chan *ch;
	struct krc_vq *vq;
	struct krc_mr mr;
	int i, sent = 0, ret;
	uint64_t v;
	int64_t r;

	if (krc_vq_open(&vq) || krc_qbind(vq, 9999) ||
	    krc_qconnect(vq, addr, (uint32_t)port, &qc) ||
	    krc_reg_mr(vq, buf, 8192, KRCORE_ACCESS_LOCAL_WRITE, &mr))
		tp_die(TAG ": hostile: %s", krc_errmsg());
	for (i = 0; i < n; i++) {
		ret = raw_send(vq, &mr, hostile_msg(buf, i % 6));
		if (ret)
			tp_die(TAG ": hostile send %d: %d %s", i, ret, krc_errmsg());
		sent++;
	}
	ch = chan(addr, port);
	r = krc_call(ch, M_ECHO, "still here", 10, rep, sizeof(rep), 30000);
	check(r == 10 && !memcmp(rep, "still here", 10),
	      "after the hostile messages a real call is answered right",
	      "%lld %s", (long long)r, krc_errmsg());
	r = krc_call(ch, M_TOTAL, NULL, 0, &v, 8, 30000);
	printf(TAG ": hostile: sent=%d total=%llu\n", sent,
	       r == 8 ? (unsigned long long)v : ~0ULL);
	krc_chan_close(ch);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t t0 = tp_now_ms();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((argc == 5 || (argc == 6 && !strcmp(argv[5], "hold"))) &&
	    !strcmp(argv[1], "serve"))
		return do_serve(atoi(argv[2]), atoi(argv[3]), argv[4],
				argc == 6);
	if (argc == 5 && !strcmp(argv[1], "stream"))
		return do_stream(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "sizes"))
		return do_sizes(argv[2], atoi(argv[3]));
	if (argc == 6 && !strcmp(argv[1], "clients"))
		return do_clients(argv[2], atoi(argv[3]), atoi(argv[4]),
				  atoi(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "count"))
		return do_count(argv[2], atoi(argv[3]), atoi(argv[4]),
				atoi(argv[5]));
	if (argc == 4 && !strcmp(argv[1], "async"))
		return do_async(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "hang"))
		return do_hang(argv[2], atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "hostile"))
		return do_hostile(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "once"))
		return do_once(argv[2], atoi(argv[3]), t0);
	fprintf(stderr, "usage: rpc_test %s ...\n",
		"serve|stream|sizes|clients|count|async|hang|once|hostile");
	return 2;
}
