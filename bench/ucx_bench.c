// SPDX-License-Identifier: BSD-2-Clause
/*
 * ucx_bench - UCX's start-up and first contact, and endpoints per second,
 * over whatever transport UCX_TLS names (make bench-ucx, bench/ucx.sh):
 * krcore (LD_PRELOAD=build/ucx/libuct_krcore.so UCX_TLS=krcore,self)
 * beside tcp (UCX_TLS=tcp,self), the same UCP calls.
 *
 *   ucx_bench serve DIR NAME [WORKERS]
 *   ucx_bench launch DIR NAME put|am K
 *   ucx_bench eps DIR NAME
 *
 * serve: one process with WORKERS (1) UCP workers over one context; a
 * 64 KiB buffer mapped for RMA; an AM handler (id 1) on every worker that
 * answers each request with an AM (id 2) on the request's reply endpoint.
 * It publishes DIR/NAME.info (the buffer's address, its packed rkey and
 * every worker's address; written under another name, then renamed) and
 * serves until DIR/NAME.stop exists.
 *
 * launch: K new processes, one after the other. Each is this program
 * again (fork, execv of /proc/self/exe), handed the CLOCK_MONOTONIC time
 * taken before its fork. It reads NAME.info, then prints one line with
 * the phases in microseconds:
 *   exec_us     fork, exec and the dynamic loader (UCX's libraries and
 *               an LD_PRELOAD'ed transport) up to main();
 *   init_us     ucp_init (the transports' resources, memory domains);
 *   worker_us   ucp_worker_create (interfaces, addresses);
 *   startup_us  the two, UCX's own start-up;
 *   ep_us       ucp_ep_create to worker 0 (and, for put, the rkey's
 *               unpacking);
 *   op_us       put: an 8 B ucp_put_nbx and ucp_ep_flush_nbx completed;
 *               am: an 8 B AM request (UCP_AM_SEND_FLAG_REPLY) until
 *               the server's reply AM ran its handler here;
 *   total_us    from before the fork to that completion (reading
 *               NAME.info, between main() and ucp_init, included);
 * the process then closes its endpoint and exits.
 *
 * eps: after its own start-up, creates an endpoint to every worker of
 * NAME.info, unpacks the rkey on each, posts an 8 B put on each and
 * flushes the worker: "ucx_bench: eps peers=P create_us=... total_us=...
 * eps_per_s=..." (P / total).
 *
 * Lines start "ucx_bench: "; an error is "ucx_bench: error: ..." on
 * stderr with exit status 1. Every wait gives up after 60 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#define INFO_MAGIC	0x6b726362U	/* "krcb" */
#define SRV_BUF_SIZE	(64 * 1024)
#define MAX_WORKERS	1024
#define AM_REQ_ID	1
#define AM_REPLY_ID	2
#define WAIT_SECS	60
#define MAX_PENDING	64	/* replies the server holds before sending */

/* The head of NAME.info: the rkey, then each address (u64 length, bytes). */
struct info_hdr {
	uint32_t magic;
	uint32_t workers;
	uint64_t buf_addr;
	uint64_t rkey_len;
};

struct info {
	struct info_hdr h;
	uint8_t *rkey;
	uint8_t *addr[MAX_WORKERS];
};

static ucp_context_h ctx;
static ucp_worker_h workers[MAX_WORKERS];
static unsigned int n_workers;
static ucp_ep_h pending_reply[MAX_PENDING];
static unsigned int n_pending;
static unsigned int n_replies;
static uint64_t reply_word;
static int got_reply;

static __attribute__((noreturn, format(printf, 1, 2)))
void die(const char *fmt, ...)
{
	va_list ap;

	fputs("ucx_bench: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double us(uint64_t from, uint64_t to)
{
	return (double)(to - from) / 1e3;
}

static const char *tls(void)
{
	const char *t = getenv("UCX_TLS");

	return t ? t : "default";
}

/* Progress every worker until @req completes; free it. */
static ucs_status_t wait_req(void *req, const char *what)
{
	uint64_t end = now_ns() + WAIT_SECS * 1000000000ULL;
	ucs_status_t st;
	unsigned int i, n = 0;

	if (!req)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	for (;;) {
		for (i = 0; i < n_workers; i++)
			ucp_worker_progress(workers[i]);
		st = ucp_request_check_status(req);
		if (st != UCS_INPROGRESS)
			break;
		if (!(++n & 1023) && now_ns() > end)
			die("%s: timed out", what);
	}
	ucp_request_free(req);
	return st;
}

static void check(ucs_status_t st, const char *what)
{
	if (st != UCS_OK)
		die("%s: %s", what, ucs_status_string(st));
}

static void ucx_init(unsigned int count, uint64_t *t_init, uint64_t *t_wrk)
{
	ucp_params_t p = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_RMA | UCP_FEATURE_AM,
	};
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	unsigned int i;

	check(ucp_init(&p, NULL, &ctx), "ucp_init");
	if (t_init)
		*t_init = now_ns();
	for (i = 0; i < count; i++)
		check(ucp_worker_create(ctx, &wp, &workers[i]),
		      "ucp_worker_create");
	n_workers = count;
	if (t_wrk)
		*t_wrk = now_ns();
}

static void set_am(ucp_worker_h w, unsigned int id, ucp_am_recv_callback_t cb)
{
	ucp_am_handler_param_t ap = {
		.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
			      UCP_AM_HANDLER_PARAM_FIELD_CB,
		.id = id,
		.cb = cb,
	};

	check(ucp_worker_set_am_recv_handler(w, &ap),
	      "ucp_worker_set_am_recv_handler");
}

/* The info file ------------------------------------------------------- */

static void wr(FILE *f, const void *p, size_t len, const char *path)
{
	if (len && fwrite(p, len, 1, f) != 1)
		die("writing %s: %s", path, strerror(errno));
}

static void write_info(const char *dir, const char *name, uint64_t buf_addr,
		       const void *rkey, size_t rkey_len)
{
	struct info_hdr h = {
		.magic = INFO_MAGIC,
		.workers = n_workers,
		.buf_addr = buf_addr,
		.rkey_len = rkey_len,
	};
	char path[4096], tmp[4200];
	ucp_address_t *addr;
	uint64_t len;
	size_t alen;
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.info", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		die("%s: %s", tmp, strerror(errno));
	wr(f, &h, sizeof(h), tmp);
	wr(f, rkey, rkey_len, tmp);
	for (i = 0; i < n_workers; i++) {
		check(ucp_worker_get_address(workers[i], &addr, &alen),
		      "ucp_worker_get_address");
		len = alen;
		wr(f, &len, sizeof(len), tmp);
		wr(f, addr, alen, tmp);
		ucp_worker_release_address(workers[i], addr);
	}
	if (fflush(f) || fsync(fileno(f)) || fclose(f))
		die("writing %s: %s", tmp, strerror(errno));
	if (rename(tmp, path))
		die("rename to %s: %s", path, strerror(errno));
}

static void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p)
		die("out of memory");
	return p;
}

static void rd(FILE *f, void *p, size_t len, const char *path)
{
	if (len && fread(p, len, 1, f) != 1)
		die("%s: short file", path);
}

static void read_info(const char *dir, const char *name, struct info *in)
{
	uint64_t end = now_ns() + WAIT_SECS * 1000000000ULL;
	char path[4096];
	uint64_t len;
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.info", dir, name);
	while (!(f = fopen(path, "r"))) {
		if (errno != ENOENT)
			die("%s: %s", path, strerror(errno));
		if (now_ns() > end)
			die("%s: not there after %d s", path, WAIT_SECS);
		usleep(100000);
	}
	rd(f, &in->h, sizeof(in->h), path);
	if (in->h.magic != INFO_MAGIC || !in->h.workers ||
	    in->h.workers > MAX_WORKERS || in->h.rkey_len > 65536)
		die("%s: not an info file", path);
	in->rkey = xmalloc(in->h.rkey_len);
	rd(f, in->rkey, in->h.rkey_len, path);
	for (i = 0; i < in->h.workers; i++) {
		rd(f, &len, sizeof(len), path);
		if (len > 65536)
			die("%s: an address of %" PRIu64 " bytes", path, len);
		in->addr[i] = xmalloc(len);
		rd(f, in->addr[i], len, path);
	}
	fclose(f);
}

/* serve ---------------------------------------------------------------- */

static ucs_status_t am_request(void *arg, const void *header,
			       size_t header_len, void *data, size_t length,
			       const ucp_am_recv_param_t *param)
{
	if (!(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ||
	    n_pending >= MAX_PENDING)
		return UCS_OK;
	if (length == sizeof(reply_word))
		memcpy(&reply_word, data, sizeof(reply_word));
	pending_reply[n_pending++] = param->reply_ep;
	return UCS_OK;
}

static void reply_done(void *req, ucs_status_t st, void *user)
{
	ucp_request_free(req);
}

/* The replies, sent from the main loop rather than from the handler. */
static void send_replies(void)
{
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
		.cb.send = reply_done,
	};
	void *req;
	unsigned int i;

	for (i = 0; i < n_pending; i++) {
		req = ucp_am_send_nbx(pending_reply[i], AM_REPLY_ID, NULL, 0,
				      &reply_word, sizeof(reply_word), &prm);
		if (UCS_PTR_IS_ERR(req))
			fprintf(stderr, "ucx_bench: reply: %s\n",
				ucs_status_string(UCS_PTR_STATUS(req)));
		n_replies++;
	}
	n_pending = 0;
}

static int do_serve(const char *dir, const char *name, unsigned int count)
{
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
		.length = SRV_BUF_SIZE,
	};
	char stop[4096];
	ucp_mem_h memh;
	void *rkey, *buf;
	size_t rkey_len;
	unsigned int i, n = 0;

	if (!count || count > MAX_WORKERS)
		die("serve: 1 to %d workers", MAX_WORKERS);
	ucx_init(count, NULL, NULL);
	buf = mmap(NULL, SRV_BUF_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	mp.address = buf;
	check(ucp_mem_map(ctx, &mp, &memh), "ucp_mem_map");
	check(ucp_rkey_pack(ctx, memh, &rkey, &rkey_len), "ucp_rkey_pack");
	for (i = 0; i < n_workers; i++)
		set_am(workers[i], AM_REQ_ID, am_request);
	write_info(dir, name, (uintptr_t)buf, rkey, rkey_len);
	printf("ucx_bench: serving name=%s workers=%u tls=%s\n", name,
	       n_workers, tls());
	fflush(stdout);
	snprintf(stop, sizeof(stop), "%s/%s.stop", dir, name);
	for (;;) {
		for (i = 0; i < n_workers; i++)
			ucp_worker_progress(workers[i]);
		if (n_pending)
			send_replies();
		if (!(++n & 4095) && !access(stop, F_OK))
			break;
	}
	printf("ucx_bench: served name=%s replies=%u\n", name, n_replies);
	/* the clients' endpoints and the workers go with the process */
	ucp_rkey_buffer_release(rkey);
	return 0;
}

/* first (a launched process) ------------------------------------------- */

static ucs_status_t am_reply(void *arg, const void *header,
			     size_t header_len, void *data, size_t length,
			     const ucp_am_recv_param_t *param)
{
	got_reply = 1;
	return UCS_OK;
}

static ucp_ep_h connect_to(ucp_worker_h w, const void *addr)
{
	ucp_ep_params_t ep_params = {
		.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
			      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
		.address = addr,
		.err_mode = UCP_ERR_HANDLING_MODE_NONE,
	};
	ucp_ep_h ep;

	check(ucp_ep_create(w, &ep_params, &ep), "ucp_ep_create");
	return ep;
}

static void close_ep(ucp_ep_h ep)
{
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
		.flags = 0,
	};

	wait_req(ucp_ep_close_nbx(ep, &prm), "ucp_ep_close_nbx");
}

static int do_first(const char *dir, const char *name, const char *op,
		    uint64_t t0, uint64_t t_main)
{
	static uint64_t word = 0x6b72636f7265ULL;
	ucp_request_param_t prm = { .op_attr_mask = 0 };
	uint64_t t_start, t_init, t_wrk, t_ep0, t_ep, t_op, end;
	ucp_rkey_h rkey = NULL;
	struct info in;
	unsigned int n = 0;
	int put = !strcmp(op, "put");
	ucp_ep_h ep;

	if (!put && strcmp(op, "am"))
		die("first: put or am, not %s", op);
	read_info(dir, name, &in);
	t_start = now_ns();
	ucx_init(1, &t_init, &t_wrk);
	if (!put)
		set_am(workers[0], AM_REPLY_ID, am_reply);
	t_ep0 = now_ns();
	ep = connect_to(workers[0], in.addr[0]);
	if (put)
		check(ucp_ep_rkey_unpack(ep, in.rkey, &rkey),
		      "ucp_ep_rkey_unpack");
	t_ep = now_ns();
	if (put) {
		check(wait_req(ucp_put_nbx(ep, &word, sizeof(word),
					   in.h.buf_addr, rkey, &prm), "put"),
		      "put");
		check(wait_req(ucp_ep_flush_nbx(ep, &prm), "flush"), "flush");
	} else {
		prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
		prm.flags = UCP_AM_SEND_FLAG_REPLY;
		check(wait_req(ucp_am_send_nbx(ep, AM_REQ_ID, NULL, 0, &word,
					       sizeof(word), &prm),
			       "am request"), "am request");
		end = now_ns() + WAIT_SECS * 1000000000ULL;
		while (!got_reply) {
			ucp_worker_progress(workers[0]);
			if (!(++n & 1023) && now_ns() > end)
				die("am: no reply in %d s", WAIT_SECS);
		}
	}
	t_op = now_ns();
	printf("ucx_bench: first op=%s tls=%s exec_us=%.1f init_us=%.1f "
	       "worker_us=%.1f startup_us=%.1f ep_us=%.1f op_us=%.1f "
	       "total_us=%.1f\n",
	       op, tls(), us(t0, t_main), us(t_start, t_init),
	       us(t_init, t_wrk), us(t_start, t_wrk), us(t_ep0, t_ep),
	       us(t_ep, t_op), us(t0, t_op));
	fflush(stdout);
	if (rkey)
		ucp_rkey_destroy(rkey);
	close_ep(ep);
	ucp_worker_destroy(workers[0]);
	ucp_cleanup(ctx);
	return 0;
}

static int do_launch(const char *self, const char *dir, const char *name,
		     const char *op, int k)
{
	char t0s[32];
	int i, status;
	pid_t pid;

	for (i = 0; i < k; i++) {
		snprintf(t0s, sizeof(t0s), "%" PRIu64, now_ns());
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			execl("/proc/self/exe", self, "first", dir, name, op,
			      t0s, (char *)NULL);
			die("exec: %s", strerror(errno));
		}
		if (waitpid(pid, &status, 0) < 0)
			die("waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			die("process %d of %d (%s) failed: status 0x%x", i + 1,
			    k, op, status);
	}
	return 0;
}

/* eps ------------------------------------------------------------------ */

static int do_eps(const char *dir, const char *name)
{
	static uint64_t word = 1;
	ucp_request_param_t prm = { .op_attr_mask = 0 };
	uint64_t t_start, t_made, t_done;
	ucp_rkey_h *rkeys;
	ucp_ep_h *ep;
	struct info in;
	unsigned int i, peers;
	void *req;

	read_info(dir, name, &in);
	peers = in.h.workers;
	ucx_init(1, NULL, NULL);
	ep = xmalloc(peers * sizeof(*ep));
	rkeys = xmalloc(peers * sizeof(*rkeys));
	t_start = now_ns();
	for (i = 0; i < peers; i++) {
		ep[i] = connect_to(workers[0], in.addr[i]);
		check(ucp_ep_rkey_unpack(ep[i], in.rkey, &rkeys[i]),
		      "ucp_ep_rkey_unpack");
	}
	t_made = now_ns();
	for (i = 0; i < peers; i++) {
		req = ucp_put_nbx(ep[i], &word, sizeof(word),
				  in.h.buf_addr + 8 * (i % 1024), rkeys[i],
				  &prm);
		if (UCS_PTR_IS_ERR(req))
			die("put %u: %s", i,
			    ucs_status_string(UCS_PTR_STATUS(req)));
		if (req)
			ucp_request_free(req);
	}
	check(wait_req(ucp_worker_flush_nbx(workers[0], &prm), "flush"),
	      "ucp_worker_flush_nbx");
	t_done = now_ns();
	printf("ucx_bench: eps tls=%s peers=%u create_us=%.1f "
	       "total_us=%.1f eps_per_s=%.1f\n",
	       tls(), peers, us(t_start, t_made), us(t_start, t_done),
	       peers / (us(t_start, t_done) / 1e6));
	fflush(stdout);
	for (i = 0; i < peers; i++) {
		ucp_rkey_destroy(rkeys[i]);
		close_ep(ep[i]);
	}
	ucp_worker_destroy(workers[0]);
	ucp_cleanup(ctx);
	return 0;
}

static __attribute__((noreturn)) void usage(void)
{
	fprintf(stderr,
		"usage: ucx_bench serve DIR NAME [WORKERS]\n"
		"       ucx_bench launch DIR NAME put|am K\n"
		"       ucx_bench eps DIR NAME\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t t_main = now_ns();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && argc <= 5 && !strcmp(argv[1], "serve"))
		return do_serve(argv[2], argv[3],
			     argc == 5 ? (unsigned int)atoi(argv[4]) : 1);
	if (argc == 6 && !strcmp(argv[1], "launch"))
		return do_launch(argv[0], argv[2], argv[3], argv[4],
			      atoi(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "first"))
		return do_first(argv[2], argv[3], argv[4],
			     strtoull(argv[5], NULL, 10), t_main);
	if (argc == 4 && !strcmp(argv[1], "eps"))
		return do_eps(argv[2], argv[3]);
	usage();
}
