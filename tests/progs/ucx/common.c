// SPDX-License-Identifier: BSD-2-Clause
/*
 * ucx/common.c - the pieces the UCP test programs share (common.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

const char *role = "?";
unsigned int n_checks, n_failed;
ucp_context_h ctx;
ucp_worker_h worker;
ucp_ep_h ep;
const char *phase = "setup";
static const char *prog = "?";
char step[STEP_LEN];

/* Reporting ------------------------------------------------------------ */

void summary(void)
{
	printf("%s: %s %u checks, %u failed\n", prog, role, n_checks,
	       n_failed);
	fflush(stdout);
}

void pass(const char *what)
{
	n_checks++;
	printf("ok: %s\n", what);
}

static void vfail(const char *what, const char *fmt, va_list ap)
{
	n_checks++;
	n_failed++;
	printf("FAIL: %s: ", what);
	vprintf(fmt, ap);
	putchar('\n');
}

__attribute__((format(printf, 2, 3)))
void fail(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(what, fmt, ap);
	va_end(ap);
}

/* A failure after which nothing can go on. */
__attribute__((noreturn, format(printf, 2, 3)))
void fatal(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(what, fmt, ap);
	va_end(ap);
	summary();
	_exit(1);
}

__attribute__((format(printf, 1, 2)))
void set_step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(step, sizeof(step), fmt, ap);
	va_end(ap);
}

__attribute__((noreturn)) void timed_out(const char *what)
{
	if (step[0])
		fatal(what, "timed out (%s)", step);
	fatal(what, "timed out");
}

/* The last resort: a hang outside the waits below (ucp_ep_create...). */
static void on_alarm(int sig)
{
	char line[512];
	int n;

	(void)sig;
	n = snprintf(line, sizeof(line),
		     "FAIL: %s: timed out (whole program)\n%s: %s %u checks, %u failed\n",
		     phase, prog, role, n_checks + 1, n_failed + 1);
	if (n > 0 && write(1, line, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

/*
 * Name the program and the role for every report, print lines as they
 * come, and end the program after @prog_timeout seconds whatever it waits
 * for.
 */
void ucx_start(const char *prog_name, const char *role_name,
	       unsigned int prog_timeout)
{
	prog = prog_name;
	role = role_name;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(prog_timeout);
}

/* Data ----------------------------------------------------------------- */

/* Byte @i of a transfer of @size bytes: no period, unlike i * 7. */
uint8_t pat(uint64_t i, uint64_t size, uint64_t seed)
{
	uint64_t x = i + (size << 32) + (seed << 56);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (uint8_t)x;
}

void fill(uint8_t *p, size_t len, uint64_t size, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(i, size, seed);
}

/*
 * Bytes of @p that are not pat(@from + i, @size, @seed): their number,
 * the first in *@first (UINT64_MAX if none).
 */
uint64_t verify(const uint8_t *p, size_t len, uint64_t from,
		uint64_t size, uint64_t seed, uint64_t *first)
{
	uint64_t bad = 0;
	size_t i;

	*first = UINT64_MAX;
	for (i = 0; i < len; i++) {
		if (p[i] == pat(from + i, size, seed))
			continue;
		if (!bad)
			*first = from + i;
		bad++;
	}
	return bad;
}

uint64_t fnv1a(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

void *xmalloc(size_t len)
{
	void *p = malloc(len);

	if (!p)
		fatal("setup", "out of memory (%zu bytes)", len);
	return p;
}

/* Waits ---------------------------------------------------------------- */

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait for @req (what an _nbx call returned) for up to @secs seconds,
 * progressing the worker; free it. A tag receive gives @info.
 */
ucs_status_t wait_req(void *req, const char *what, int secs,
		      ucp_tag_recv_info_t *info)
{
	double end = now() + secs;
	ucs_status_t st;
	unsigned int n = 0;

	if (!req)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	for (;;) {
		ucp_worker_progress(worker);
		if (info)
			st = ucp_tag_recv_request_test(req, info);
		else
			st = ucp_request_check_status(req);
		if (st != UCS_INPROGRESS)
			break;
		if (!(++n & 255) && now() > end)
			timed_out(what);
	}
	ucp_request_free(req);
	return st;
}

void *post_send(const void *buf, size_t len, ucp_tag_t tag)
{
	ucp_request_param_t prm = { .op_attr_mask = 0 };

	return ucp_tag_send_nbx(ep, buf, len, tag, &prm);
}

void *post_recv(void *buf, size_t len, ucp_tag_t tag,
		ucp_tag_recv_info_t *info)
{
	/*
	 * UCX 1.13 fills no recv_info of a receive that completes at once:
	 * always a request, whose test gives the length.
	 */
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
	};

	info->length = 0;
	return ucp_tag_recv_nbx(worker, buf, len, tag, (ucp_tag_t)-1, &prm);
}

/* Send @len bytes with @tag and wait; a failure is fatal (the peer waits). */
void send_wait(const void *buf, size_t len, ucp_tag_t tag,
	       const char *what, int secs)
{
	ucs_status_t st;

	st = wait_req(post_send(buf, len, tag), what, secs, NULL);
	if (st != UCS_OK)
		fatal(what, "tag send: %s", ucs_status_string(st));
}

/* Receive exactly @len bytes with @tag; a failure is fatal. */
void recv_wait(void *buf, size_t len, ucp_tag_t tag, const char *what,
	       int secs)
{
	ucp_tag_recv_info_t info;
	ucs_status_t st;

	st = wait_req(post_recv(buf, len, tag, &info), what, secs, &info);
	if (st != UCS_OK)
		fatal(what, "tag recv: %s", ucs_status_string(st));
	if (info.length != len)
		fatal(what, "tag recv: %zu bytes, expected %zu", info.length,
		      len);
}

ucs_status_t flush_ep(const char *what)
{
	ucp_request_param_t prm = { .op_attr_mask = 0 };

	return wait_req(ucp_ep_flush_nbx(ep, &prm), what, OP_TIMEOUT, NULL);
}

/* Set up --------------------------------------------------------------- */

void ucx_init(ucp_address_t **addr, size_t *addr_len)
{
	ucp_params_t p = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA |
			    UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 |
			    UCP_FEATURE_AM,
	};
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	ucs_status_t st;

	st = ucp_init(&p, NULL, &ctx);
	if (st != UCS_OK)
		fatal("setup", "ucp_init: %s", ucs_status_string(st));
	st = ucp_worker_create(ctx, &wp, &worker);
	if (st != UCS_OK)
		fatal("setup", "ucp_worker_create: %s", ucs_status_string(st));
	st = ucp_worker_get_address(worker, addr, addr_len);
	if (st != UCS_OK)
		fatal("setup", "ucp_worker_get_address: %s",
		      ucs_status_string(st));
}

void connect_to(const void *addr, ucp_err_handler_cb_t on_error)
{
	ucp_ep_params_t ep_params = {
		.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
			      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
		.address = addr,
		.err_mode = UCP_ERR_HANDLING_MODE_NONE,
	};
	ucs_status_t st;

	/* a handler: UCX tells of a failed peer instead of aborting */
	if (on_error) {
		ep_params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
		ep_params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
		ep_params.err_handler.cb = on_error;
		ep_params.err_handler.arg = NULL;
	}

	st = ucp_ep_create(worker, &ep_params, &ep);
	if (st != UCS_OK)
		fatal("setup", "ucp_ep_create: %s", ucs_status_string(st));
}

/* Publish DIR/NAME: written as DIR/NAME.tmp, then renamed. */
void write_info(const char *dir, const char *name, uint64_t buf_addr,
		const void *rkey, size_t rkey_len, const void *addr,
		size_t addr_len)
{
	struct info_hdr h = {
		.magic = INFO_MAGIC,
		.buf_addr = buf_addr,
		.rkey_len = rkey_len,
		.addr_len = addr_len,
	};
	char path[4096], tmp[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);
	f = fopen(tmp, "w");
	if (!f)
		fatal("setup", "%s: %s", tmp, strerror(errno));
	if (fwrite(&h, sizeof(h), 1, f) != 1 ||
	    (rkey_len && fwrite(rkey, rkey_len, 1, f) != 1) ||
	    fwrite(addr, addr_len, 1, f) != 1 || fflush(f) ||
	    fsync(fileno(f))) {
		fclose(f);
		fatal("setup", "writing %s: %s", tmp, strerror(errno));
	}
	if (fclose(f))
		fatal("setup", "writing %s: %s", tmp, strerror(errno));
	if (rename(tmp, path))
		fatal("setup", "rename to %s: %s", path, strerror(errno));
}

/*
 * Wait up to @secs seconds for DIR/NAME and read it: its head in *@h, the
 * rest returned.
 */
uint8_t *read_info(const char *dir, const char *name, struct info_hdr *h,
		   int secs)
{
	double end = now() + secs;
	char path[4096], what[256];
	struct stat sb;
	uint8_t *body;
	size_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(what, sizeof(what), "setup: waiting for %s", name);
	while ((fd = open(path, O_RDONLY)) < 0) {
		if (errno != ENOENT)
			fatal("setup", "%s: %s", path, strerror(errno));
		if (now() > end)
			timed_out(what);
		usleep(100000);
	}
	if (fstat(fd, &sb) || (size_t)sb.st_size < sizeof(*h))
		fatal("setup", "%s: short file", path);
	len = (size_t)sb.st_size - sizeof(*h);
	body = xmalloc(len);
	if (read(fd, h, sizeof(*h)) != (ssize_t)sizeof(*h) ||
	    read(fd, body, len) != (ssize_t)len)
		fatal("setup", "%s: short read", path);
	close(fd);
	if (h->magic != INFO_MAGIC || h->rkey_len + h->addr_len != len)
		fatal("setup", "%s: not an info file", path);
	return body;
}
