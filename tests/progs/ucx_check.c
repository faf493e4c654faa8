// SPDX-License-Identifier: BSD-2-Clause
/*
 * ucx_check - checks the data UCX moves over the UCT transport "krcore"
 * (ucx/, docs/ucx.md): tag messages, RMA, atomics and active messages of
 * UCP between two processes, every byte verified.
 *
 *   ucx_check server DIR
 *   ucx_check client DIR
 *
 * DIR is a directory both nodes see. The server publishes the address of
 * its 2 MiB buffer, its packed rkey and its worker address in
 * DIR/server.info, the client its worker address in DIR/client.info
 * (each written under another name, then renamed; the reader waits for
 * it up to 60 s). Run with LD_PRELOAD=build/ucx/libuct_krcore.so and
 * UCX_TLS=krcore,self.
 *
 * Every check prints one line, "ok: WHAT" or "FAIL: WHAT: DETAIL"; a wait
 * that lasts longer than its limit is "FAIL: WHAT: timed out" and ends
 * the program. The last line is "ucx_check: ROLE N checks, M failed";
 * the exit status is 0 only if no check failed.
 *
 * The steps, in the order both sides take them:
 *  1. tags: the client sends 8, 4000, 65536 and 1048576 bytes; the server
 *     verifies each byte and answers with the FNV-1a hash of what it got;
 *     then the server sends 1 MiB that the client verifies;
 *  2. RMA: the client puts 1 MiB at offset 0 of the server's buffer, 8
 *     bytes at 8 and 4000 at 1001, each flushed and read back with a get;
 *     the server then verifies its buffer;
 *  3. atomics on the word at offset 0: 100 adds of 3, a fetch-add of 0
 *     (300), a compare-and-swap 300 -> 12345 (returns 300), a get (12345);
 *  4. active messages id 7 with an 8-byte header: 3000 bytes, 100000
 *     bytes, and 100000 bytes forced to rendezvous; the server verifies
 *     them and reports to the client by a tag message;
 *  5. "done" each way, flush and close of the endpoint.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "ucx/common.h"

#define BIG		(1024UL * 1024)	/* the largest message, the big put */
#define SRV_BUF_SIZE	(2 * BIG)	/* the server's mapped buffer */
#define RECV_SLACK	4096		/* receive room beyond the message */
#define PROG_TIMEOUT	110		/* seconds for the whole program */
#define AM_ID		7
#define AM_HDR_MAGIC	0x414d000000000000ULL
#define N_AM		3
#define N_ADDS		100
#define CSWAP_NEW	12345
#define AMO_W64		64	/* the words of the CAS-loop atomics */
#define AMO_W32		72
#define AMO_RACE	20

/* Tags of the messages: one per step, so that none matches another's. */
enum {
	TAG_DATA = 0x100,	/* + index of the size: client -> server */
	TAG_HASH = 0x200,	/* + index: the server's answer */
	TAG_S2C = 0x300,	/* 1 MiB server -> client */
	TAG_RMA_DONE = 0x400,	/* the client's puts are flushed */
	TAG_RMA_VERDICT = 0x401,
	TAG_AM_REPORT = 0x500,
	TAG_DONE = 0x600,
};

/* Seeds of the patterns: each transfer its own bytes. */
enum {
	SEED_TAG = 1,
	SEED_S2C,
	SEED_PUT_BIG,
	SEED_PUT_8,
	SEED_PUT_4000,
	SEED_AM,		/* + index of the active message */
};

/* What the server answers: a tag message's hash, or a step's verdict. */
struct answer {
	uint64_t hash;		/* FNV-1a of the bytes received */
	uint64_t len;		/* bytes received */
	uint64_t bad;		/* bytes (or messages) not as expected */
	uint64_t extra;		/* first bad byte; AM: how many by rndv */
};

/* The sizes and how each active message is sent. */
static const size_t am_size[N_AM] = { 3000, 100000, 100000 };
static const uint32_t am_flags[N_AM] = { 0, 0, UCP_AM_SEND_FLAG_RNDV };

static const size_t tag_size[] = { 8, 4000, 65536, BIG };
#define N_TAG	ARRAY_SIZE(tag_size)

/* One active message as the server's handler saw it. */
struct am_got {
	uint64_t hdr;
	size_t hdr_len;
	size_t len;
	void *desc;		/* rendezvous: to receive, else NULL */
	int rndv;
	uint64_t bad;		/* bytes not as expected (eager) */
	uint64_t first_bad;
};

static struct am_got am_got[N_AM];
static unsigned int am_count;

/* 1. Tag messages ------------------------------------------------------ */

static void tag_server(void)
{
	uint8_t *buf = xmalloc(BIG + RECV_SLACK);
	ucp_tag_recv_info_t info;
	struct answer a;
	char what[128];
	ucs_status_t st;
	size_t i, size;

	for (i = 0; i < N_TAG; i++) {
		size = tag_size[i];
		snprintf(what, sizeof(what), "tag recv %zu bytes", size);
		phase = "tag recv";
		memset(buf, 0, BIG + RECV_SLACK);
		st = wait_req(post_recv(buf, BIG + RECV_SLACK, TAG_DATA + i,
					&info),
			      what, STEP_TIMEOUT, &info);
		memset(&a, 0, sizeof(a));
		if (st != UCS_OK) {
			fail(what, "%s", ucs_status_string(st));
			a.bad = UINT64_MAX;
		} else {
			a.len = info.length;
			a.hash = fnv1a(buf, info.length);
			a.bad = verify(buf, info.length, 0, size, SEED_TAG,
				       &a.extra);
			if (info.length != size)
				fail(what, "got %zu bytes", info.length);
			else if (a.bad)
				fail(what, "%" PRIu64 " bytes differ, first at %" PRIu64,
				     a.bad, a.extra);
			else
				pass(what);
		}
		send_wait(&a, sizeof(a), TAG_HASH + i, what, OP_TIMEOUT);
	}

	snprintf(what, sizeof(what), "tag send server->client %lu bytes", BIG);
	phase = what;
	fill(buf, BIG, BIG, SEED_S2C);
	st = wait_req(post_send(buf, BIG, TAG_S2C), what, OP_TIMEOUT, NULL);
	if (st != UCS_OK)
		fatal(what, "%s", ucs_status_string(st));
	pass(what);
	free(buf);
}

static void tag_client(void)
{
	uint8_t *buf = xmalloc(BIG + RECV_SLACK);
	ucp_tag_recv_info_t info;
	ucs_status_t st, st2;
	uint64_t hash, bad, first;
	void *sreq, *rreq;
	struct answer a;
	char what[128];
	size_t i, size;

	for (i = 0; i < N_TAG; i++) {
		size = tag_size[i];
		snprintf(what, sizeof(what), "tag client->server %zu bytes",
			 size);
		phase = what;
		fill(buf, size, size, SEED_TAG);
		hash = fnv1a(buf, size);
		memset(&a, 0, sizeof(a));
		rreq = post_recv(&a, sizeof(a), TAG_HASH + i, &info);
		sreq = post_send(buf, size, TAG_DATA + i);
		set_step("send");
		st = wait_req(sreq, what, OP_TIMEOUT, NULL);
		set_step("the server's answer");
		st2 = wait_req(rreq, what, OP_TIMEOUT, &info);
		set_step("%s", "");
		if (st != UCS_OK)
			fail(what, "send: %s", ucs_status_string(st));
		else if (st2 != UCS_OK || info.length != sizeof(a))
			fail(what, "the server's answer: %s, %zu bytes",
			     ucs_status_string(st2), info.length);
		else if (a.bad == UINT64_MAX)
			fail(what, "the server's receive failed");
		else if (a.len != size)
			fail(what, "the server got %" PRIu64 " bytes", a.len);
		else if (a.bad)
			fail(what, "the server found %" PRIu64 " bytes wrong, first at %" PRIu64,
			     a.bad, a.extra);
		else if (a.hash != hash)
			fail(what, "hash 0x%016" PRIx64 " at the server, 0x%016" PRIx64 " here",
			     a.hash, hash);
		else
			pass(what);
	}

	snprintf(what, sizeof(what), "tag server->client %lu bytes", BIG);
	phase = what;
	memset(buf, 0, BIG + RECV_SLACK);
	st = wait_req(post_recv(buf, BIG + RECV_SLACK, TAG_S2C, &info), what,
		      STEP_TIMEOUT, &info);
	if (st != UCS_OK) {
		fail(what, "%s", ucs_status_string(st));
	} else if (info.length != BIG) {
		fail(what, "got %zu bytes", info.length);
	} else {
		bad = verify(buf, BIG, 0, BIG, SEED_S2C, &first);
		if (bad)
			fail(what, "%" PRIu64 " bytes differ, first at %" PRIu64,
			     bad, first);
		else
			pass(what);
	}
	free(buf);
}

/* 2. RMA --------------------------------------------------------------- */

static ucs_status_t put(const void *buf, size_t len, uint64_t raddr,
			ucp_rkey_h rkey, const char *what)
{
	ucp_request_param_t prm = { .op_attr_mask = 0 };

	return wait_req(ucp_put_nbx(ep, buf, len, raddr, rkey, &prm), what,
			OP_TIMEOUT, NULL);
}

static ucs_status_t get(void *buf, size_t len, uint64_t raddr,
			ucp_rkey_h rkey, const char *what)
{
	ucp_request_param_t prm = { .op_attr_mask = 0 };

	return wait_req(ucp_get_nbx(ep, buf, len, raddr, rkey, &prm), what,
			OP_TIMEOUT, NULL);
}

/* Put @len bytes at @off of the server's buffer, flush, get them back. */
static void put_get(uint64_t base, ucp_rkey_h rkey, size_t off, size_t len,
		    uint64_t seed)
{
	uint8_t *src = xmalloc(len), *dst = xmalloc(len);
	uint64_t bad, first;
	ucs_status_t st;
	char what[128];

	snprintf(what, sizeof(what), "rma put/get %zu bytes at offset %zu",
		 len, off);
	phase = what;
	fill(src, len, len, seed);
	memset(dst, 0, len);
	set_step("put");
	st = put(src, len, base + off, rkey, what);
	if (st == UCS_OK) {
		set_step("flush");
		st = flush_ep(what);
	}
	if (st == UCS_OK) {
		set_step("get");
		st = get(dst, len, base + off, rkey, what);
	}
	if (st != UCS_OK) {
		fail(what, "%s: %s", step, ucs_status_string(st));
		goto out;
	}
	bad = verify(dst, len, 0, len, seed, &first);
	if (bad)
		fail(what, "%" PRIu64 " bytes read back differ, first at %" PRIu64,
		     bad, first);
	else
		pass(what);
out:
	set_step("%s", "");
	free(src);
	free(dst);
}

static void rma_client(uint64_t base, ucp_rkey_h rkey)
{
	struct answer a;
	uint64_t go = 1;

	put_get(base, rkey, 0, BIG, SEED_PUT_BIG);
	put_get(base, rkey, 8, 8, SEED_PUT_8);
	put_get(base, rkey, 1001, 4000, SEED_PUT_4000);
	/* the server verifies its buffer; nothing may change it meanwhile */
	phase = "rma: the server's verdict";
	send_wait(&go, sizeof(go), TAG_RMA_DONE, phase, OP_TIMEOUT);
	recv_wait(&a, sizeof(a), TAG_RMA_VERDICT, phase, OP_TIMEOUT);
}

/* The server's buffer after the client's three puts. */
static void rma_server(const uint8_t *buf)
{
	static const char what[] = "rma the server's buffer holds the puts";
	struct region {
		size_t off, len;
		uint64_t size, seed;
	} regions[] = {
		{ 0, 8, BIG, SEED_PUT_BIG },
		{ 8, 8, 8, SEED_PUT_8 },
		{ 16, 1001 - 16, BIG, SEED_PUT_BIG },
		{ 1001, 4000, 4000, SEED_PUT_4000 },
		{ 5001, BIG - 5001, BIG, SEED_PUT_BIG },
	};
	uint64_t bad = 0, first = UINT64_MAX, n, f, from;
	struct answer a;
	uint64_t go;
	size_t i;

	phase = "rma: waiting for the client's puts";
	recv_wait(&go, sizeof(go), TAG_RMA_DONE, phase, STEP_TIMEOUT);
	for (i = 0; i < ARRAY_SIZE(regions); i++) {
		const struct region *r = &regions[i];

		/* the big put's pattern runs on from offset 0 */
		from = r->size == BIG ? r->off : 0;
		n = verify(buf + r->off, r->len, from, r->size, r->seed, &f);
		if (n && !bad)
			first = r->off + f - from;
		bad += n;
	}
	if (bad)
		fail(what, "%" PRIu64 " bytes differ, first at offset %" PRIu64,
		     bad, first);
	else
		pass(what);
	memset(&a, 0, sizeof(a));
	a.bad = bad;
	send_wait(&a, sizeof(a), TAG_RMA_VERDICT, what, OP_TIMEOUT);
}

/* 3. Atomics ----------------------------------------------------------- */

static void *amo(ucp_atomic_op_t op, const uint64_t *val, uint64_t *reply,
		 uint64_t raddr, ucp_rkey_h rkey)
{
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
		.datatype = ucp_dt_make_contig(sizeof(uint64_t)),
	};

	if (reply) {
		prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
		prm.reply_buffer = reply;
	}
	return ucp_atomic_op_nbx(ep, op, val, 1, raddr, rkey, &prm);
}

static void amo_client(uint64_t base, ucp_rkey_h rkey)
{
	static const uint64_t three = 3, zero, cmp = 3 * N_ADDS;
	static const char what_add[] = "amo 100 adds of 3, then fetch-add 0";
	static const char what_cas[] = "amo cswap 300 -> 12345";
	static const char what_get[] = "amo get after cswap";
	void *reqs[N_ADDS];
	uint64_t val, word = 0;
	unsigned int i, nbad = 0;
	ucs_status_t st, first = UCS_OK;

	phase = what_add;
	set_step("put of 0");
	st = put(&word, sizeof(word), base, rkey, what_add);
	if (st == UCS_OK) {
		set_step("flush after the put of 0");
		st = flush_ep(what_add);
	}
	if (st != UCS_OK) {
		fail(what_add, "%s: %s", step, ucs_status_string(st));
		return;
	}
	for (i = 0; i < N_ADDS; i++)
		reqs[i] = amo(UCP_ATOMIC_OP_ADD, &three, NULL, base, rkey);
	for (i = 0; i < N_ADDS; i++) {
		set_step("add %u of %u", i + 1, N_ADDS);
		st = wait_req(reqs[i], what_add, OP_TIMEOUT, NULL);
		if (st != UCS_OK && !nbad++)
			first = st;
	}
	if (nbad) {
		fail(what_add, "%u adds failed, the first: %s", nbad,
		     ucs_status_string(first));
		return;
	}
	set_step("flush after the adds");
	st = flush_ep(what_add);
	if (st != UCS_OK) {
		fail(what_add, "%s: %s", step, ucs_status_string(st));
		return;
	}
	set_step("fetch-add 0");
	val = UINT64_MAX;
	st = wait_req(amo(UCP_ATOMIC_OP_ADD, &zero, &val, base, rkey),
		      what_add, OP_TIMEOUT, NULL);
	if (st != UCS_OK)
		fail(what_add, "fetch-add: %s", ucs_status_string(st));
	else if (val != 3 * N_ADDS)
		fail(what_add, "fetched %" PRIu64 ", expected %u", val,
		     3 * N_ADDS);
	else
		pass(what_add);

	/* X (buffer) is compared, the reply buffer is swapped in */
	phase = what_cas;
	set_step("cswap");
	val = CSWAP_NEW;
	st = wait_req(amo(UCP_ATOMIC_OP_CSWAP, &cmp, &val, base, rkey),
		      what_cas, OP_TIMEOUT, NULL);
	if (st != UCS_OK)
		fail(what_cas, "%s", ucs_status_string(st));
	else if (val != cmp)
		fail(what_cas, "returned %" PRIu64 ", expected %" PRIu64, val,
		     cmp);
	else
		pass(what_cas);

	phase = what_get;
	set_step("flush after the cswap");
	word = 0;
	st = flush_ep(what_get);
	if (st == UCS_OK) {
		set_step("get");
		st = get(&word, sizeof(word), base, rkey, what_get);
	}
	if (st != UCS_OK)
		fail(what_get, "%s: %s", step, ucs_status_string(st));
	else if (word != CSWAP_NEW)
		fail(what_get, "read %" PRIu64 ", expected %u", word,
		     CSWAP_NEW);
	else
		pass(what_get);
	set_step("%s", "");
}

/*
 * The atomics RDMA has no verb for, which krcore does as compare-and-swap
 * loops: 64-bit swap, and, or, xor; 32-bit add, swap and cswap on both
 * halves of one 8-byte word. Many at once on one word, so that the CASes
 * race and loop; every fetched value and the words' last values checked
 * against a model.
 */
static void *amo32(ucp_atomic_op_t op, const uint32_t *val, uint32_t *reply,
		   uint64_t raddr, ucp_rkey_h rkey)
{
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
		.datatype = ucp_dt_make_contig(sizeof(uint32_t)),
	};

	if (reply) {
		prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
		prm.reply_buffer = reply;
	}
	return ucp_atomic_op_nbx(ep, op, val, 1, raddr, rkey, &prm);
}

/* Wait for @n requests; the number that failed, the first's status. */
static unsigned int wait_all(void **reqs, unsigned int n, const char *what,
			     ucs_status_t *first)
{
	unsigned int i, nbad = 0;
	ucs_status_t st;

	for (i = 0; i < n; i++) {
		st = wait_req(reqs[i], what, OP_TIMEOUT, NULL);
		if (st != UCS_OK && !nbad++)
			*first = st;
	}
	return nbad;
}

static void amo_loop_client(uint64_t base, ucp_rkey_h rkey)
{
	static const char what64[] =
		"amo 64-bit swap, and, or, xor, 20 ors at once";
	static const char what32[] =
		"amo 32-bit: 20 adds on each half at once, swap, cswap";
	uint64_t w64 = base + AMO_W64, w32 = base + AMO_W32;
	uint64_t word = 0, v, got[4], bit[AMO_RACE];
	uint32_t one = 1, two = 2, v32, r32[3], c32;
	void *reqs[2 * AMO_RACE];
	ucs_status_t st = UCS_OK;
	unsigned int i, nbad;

	phase = what64;
	v = 0x1234;
	word = 0xf0f0;
	if (put(&word, sizeof(word), w64, rkey, what64) != UCS_OK ||
	    put(&word, sizeof(word), w32, rkey, what64) != UCS_OK ||
	    flush_ep(what64) != UCS_OK) {
		fail(what64, "the words not set");
		return;
	}
	/* swap 0x1234 (gets 0xf0f0), and 0xff0 (0x230), or 0x5 (0x235), xor */
	v = 0x1234;
	st = wait_req(amo(UCP_ATOMIC_OP_SWAP, &v, &got[0], w64, rkey), what64,
		      OP_TIMEOUT, NULL);
	v = 0xff0;
	if (st == UCS_OK)
		st = wait_req(amo(UCP_ATOMIC_OP_AND, &v, &got[1], w64, rkey),
			      what64, OP_TIMEOUT, NULL);
	v = 0x5;
	if (st == UCS_OK)
		st = wait_req(amo(UCP_ATOMIC_OP_OR, &v, &got[2], w64, rkey),
			      what64, OP_TIMEOUT, NULL);
	v = 0xffff000000000000ULL;
	if (st == UCS_OK)
		st = wait_req(amo(UCP_ATOMIC_OP_XOR, &v, &got[3], w64, rkey),
			      what64, OP_TIMEOUT, NULL);
	/* then 20 ors of one bit each, all in flight at once, no reply */
	for (i = 0; st == UCS_OK && i < AMO_RACE; i++) {
		bit[i] = 1ULL << (16 + i);
		reqs[i] = amo(UCP_ATOMIC_OP_OR, &bit[i], NULL, w64, rkey);
	}
	nbad = st == UCS_OK ? wait_all(reqs, AMO_RACE, what64, &st) : 1;
	if (!nbad)
		st = flush_ep(what64);
	word = 0;
	if (!nbad && st == UCS_OK)
		st = get(&word, sizeof(word), w64, rkey, what64);
	if (nbad || st != UCS_OK)
		fail(what64, "%u failed: %s", nbad, ucs_status_string(st));
	else if (got[0] != 0xf0f0 || got[1] != 0x1234 || got[2] != 0x230 ||
		 got[3] != 0x235 ||
		 word != (0xffff000000000235ULL | 0xfffffULL << 16))
		fail(what64, "fetched %#" PRIx64 " %#" PRIx64 " %#" PRIx64
		     " %#" PRIx64 ", the word %#" PRIx64, got[0], got[1],
		     got[2], got[3], word);
	else
		pass(what64);

	/* the 8 bytes at w32 hold 0xf0f0: low half 0xf0f0, high half 0 */
	phase = what32;
	for (i = 0; i < AMO_RACE; i++) {
		reqs[2 * i] = amo32(UCP_ATOMIC_OP_ADD, &one, NULL, w32, rkey);
		reqs[2 * i + 1] = amo32(UCP_ATOMIC_OP_ADD, &two, NULL, w32 + 4,
					rkey);
	}
	nbad = wait_all(reqs, 2 * AMO_RACE, what32, &st);
	if (!nbad)
		st = flush_ep(what32);
	v32 = 5;
	if (!nbad && st == UCS_OK)	/* low: 0xf0f0 + 20 -> 5 */
		st = wait_req(amo32(UCP_ATOMIC_OP_SWAP, &v32, &r32[0], w32,
				    rkey), what32, OP_TIMEOUT, NULL);
	c32 = 2 * AMO_RACE;
	r32[1] = 7;		/* the reply buffer: the value swapped in */
	if (!nbad && st == UCS_OK)	/* high: 40 -> 7 */
		st = wait_req(amo32(UCP_ATOMIC_OP_CSWAP, &c32, &r32[1],
				    w32 + 4, rkey), what32, OP_TIMEOUT, NULL);
	c32 = 99;
	r32[2] = 8;
	if (!nbad && st == UCS_OK)	/* high: 7, not 99: unchanged */
		st = wait_req(amo32(UCP_ATOMIC_OP_CSWAP, &c32, &r32[2],
				    w32 + 4, rkey), what32, OP_TIMEOUT, NULL);
	if (!nbad && st == UCS_OK)
		st = flush_ep(what32);
	word = 0;
	if (!nbad && st == UCS_OK)
		st = get(&word, sizeof(word), w32, rkey, what32);
	if (nbad || st != UCS_OK)
		fail(what32, "%u failed: %s", nbad, ucs_status_string(st));
	else if (r32[0] != 0xf0f0 + AMO_RACE || r32[1] != 2 * AMO_RACE ||
		 r32[2] != 7 || word != (7ULL << 32 | 5))
		fail(what32, "fetched %#x %#x %#x, the word %#" PRIx64,
		     r32[0], r32[1], r32[2], word);
	else
		pass(what32);
}

/* 4. Active messages --------------------------------------------------- */

/* The header of active message @i: its index and its size. */
static uint64_t am_hdr(unsigned int i)
{
	return AM_HDR_MAGIC | (uint64_t)i << 32 | am_size[i];
}

static ucs_status_t am_cb(void *arg, const void *header, size_t header_len,
			  void *data, size_t length,
			  const ucp_am_recv_param_t *param)
{
	struct am_got *g;
	unsigned int i;

	(void)arg;
	if (am_count >= N_AM) {
		am_count++;
		return UCS_OK;
	}
	g = &am_got[am_count++];
	memset(g, 0, sizeof(*g));
	g->hdr_len = header_len;
	if (header_len == sizeof(g->hdr))
		memcpy(&g->hdr, header, sizeof(g->hdr));
	g->len = length;
	if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
		/* received by ucp_am_recv_data_nbx in am_server() */
		g->rndv = 1;
		g->desc = data;
		return UCS_INPROGRESS;
	}
	i = (unsigned int)(g->hdr >> 32 & 0xffff);
	if (i < N_AM && g->hdr == am_hdr(i) && length == am_size[i])
		g->bad = verify(data, length, 0, length, SEED_AM + i,
				&g->first_bad);
	return UCS_OK;
}

static void am_server(const uint8_t *buf)
{
	unsigned int i, k, n = 0, rndv = 0, bad_msgs = 0;
	ucp_request_param_t prm;
	double end;
	struct am_got *g;
	struct answer a;
	char what[128];
	ucs_status_t st;
	uint64_t word;
	uint8_t *data;

	phase = "am: waiting for the client's messages";
	end = now() + STEP_TIMEOUT;
	while (am_count < N_AM) {
		ucp_worker_progress(worker);
		if (!(++n & 255) && now() > end) {
			memcpy(&word, buf, sizeof(word));
			set_step("%u of %u arrived, the atomic word is %" PRIu64,
				 am_count, N_AM, word);
			timed_out(phase);
		}
	}
	for (k = 0; k < N_AM; k++) {
		g = &am_got[k];
		i = (unsigned int)(g->hdr >> 32 & 0xffff);
		snprintf(what, sizeof(what), "am %zu bytes (message %u, %s)",
			 g->len, k, g->rndv ? "rndv" : "eager");
		phase = what;
		if (g->rndv) {
			rndv++;
			data = xmalloc(g->len ? g->len : 1);
			memset(&prm, 0, sizeof(prm));
			st = wait_req(ucp_am_recv_data_nbx(worker, g->desc, data,
							   g->len, &prm),
				      what, OP_TIMEOUT, NULL);
			if (st != UCS_OK) {
				g->bad = UINT64_MAX;
				fail(what, "ucp_am_recv_data_nbx: %s",
				     ucs_status_string(st));
				free(data);
				bad_msgs++;
				continue;
			}
			if (i < N_AM && g->len == am_size[i])
				g->bad = verify(data, g->len, 0, g->len,
						SEED_AM + i, &g->first_bad);
			free(data);
		}
		if (g->hdr_len != sizeof(g->hdr) || i >= N_AM ||
		    g->hdr != am_hdr(i)) {
			fail(what, "header of %zu bytes 0x%016" PRIx64,
			     g->hdr_len, g->hdr);
			bad_msgs++;
		} else if (g->len != am_size[i]) {
			fail(what, "message %u should have %zu bytes", i,
			     am_size[i]);
			bad_msgs++;
		} else if (g->bad) {
			fail(what, "%" PRIu64 " bytes differ, first at %" PRIu64,
			     g->bad, g->first_bad);
			bad_msgs++;
		} else {
			pass(what);
		}
	}

	/* the atomics are done: the client read 12345 back */
	memcpy(&word, buf, sizeof(word));
	if (word != CSWAP_NEW)
		fail("amo the server's word", "%" PRIu64 ", expected %u", word,
		     CSWAP_NEW);
	else
		pass("amo the server's word is 12345");

	memset(&a, 0, sizeof(a));
	a.len = am_count;
	a.bad = bad_msgs;
	a.extra = rndv;
	send_wait(&a, sizeof(a), TAG_AM_REPORT, "am report", OP_TIMEOUT);
}

static void am_client(void)
{
	static const char what[] = "am id 7 to the server";
	uint8_t *data[N_AM];
	void *reqs[N_AM];
	uint64_t hdr[N_AM];
	ucs_status_t st;
	struct answer a;
	unsigned int i, nbad = 0;
	char line[128];

	phase = what;
	/* all posted before any wait: the server receives them together */
	for (i = 0; i < N_AM; i++) {
		ucp_request_param_t prm = {
			.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
			.flags = am_flags[i],
		};

		hdr[i] = am_hdr(i);
		data[i] = xmalloc(am_size[i]);
		fill(data[i], am_size[i], am_size[i], SEED_AM + i);
		reqs[i] = ucp_am_send_nbx(ep, AM_ID, &hdr[i], sizeof(hdr[i]),
					  data[i], am_size[i], &prm);
	}
	for (i = 0; i < N_AM; i++) {
		set_step("send of message %u", i);
		st = wait_req(reqs[i], what, OP_TIMEOUT, NULL);
		if (st != UCS_OK) {
			nbad++;
			fail(what, "send of message %u (%zu bytes): %s", i,
			     am_size[i], ucs_status_string(st));
		}
		free(data[i]);
	}
	set_step("the server's report");
	recv_wait(&a, sizeof(a), TAG_AM_REPORT, what, STEP_TIMEOUT);
	set_step("%s", "");
	if (nbad)
		return;
	if (a.len != N_AM || a.bad) {
		fail(what, "the server got %" PRIu64 " messages, %" PRIu64 " wrong",
		     a.len, a.bad);
		return;
	}
	snprintf(line, sizeof(line),
		 "am id 7: the server got %u messages intact, %" PRIu64 " by rndv",
		 N_AM, a.extra);
	pass(line);
}

/* 5. The end ----------------------------------------------------------- */

static void finish(void)
{
	static const char done[8] = "done";
	ucp_tag_recv_info_t info;
	ucp_request_param_t prm;
	char got[8] = "";
	ucs_status_t st, st2;
	void *sreq, *rreq;

	phase = "done";
	rreq = post_recv(got, sizeof(got), TAG_DONE, &info);
	sreq = post_send(done, sizeof(done), TAG_DONE);
	st = wait_req(sreq, "done", STEP_TIMEOUT, NULL);
	st2 = wait_req(rreq, "done", STEP_TIMEOUT, &info);
	if (st != UCS_OK || st2 != UCS_OK)
		fail("done exchanged", "send %s, recv %s",
		     ucs_status_string(st), ucs_status_string(st2));
	else if (info.length != sizeof(got) || memcmp(got, done, sizeof(got)))
		fail("done exchanged", "got %zu bytes \"%.8s\"", info.length,
		     got);
	else
		pass("done exchanged");

	phase = "endpoint flush";
	st = flush_ep(phase);
	if (st != UCS_OK)
		fail(phase, "%s", ucs_status_string(st));
	else
		pass(phase);

	/* no UCP_EP_CLOSE_FLAG_FORCE: UCP_EP_CLOSE_MODE_FLUSH */
	phase = "endpoint close";
	memset(&prm, 0, sizeof(prm));
	prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	prm.flags = 0;
	st = wait_req(ucp_ep_close_nbx(ep, &prm), phase, OP_TIMEOUT, NULL);
	ep = NULL;
	if (st != UCS_OK)
		fail(phase, "%s", ucs_status_string(st));
	else
		pass(phase);
}

/* The roles ------------------------------------------------------------ */

static void run_server(const char *dir, ucp_address_t *addr, size_t addr_len)
{
	ucp_am_handler_param_t ap = {
		.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
			      UCP_AM_HANDLER_PARAM_FIELD_CB |
			      UCP_AM_HANDLER_PARAM_FIELD_ARG,
		.id = AM_ID,
		.cb = am_cb,
		.arg = NULL,
	};
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
		.length = SRV_BUF_SIZE,
	};
	struct info_hdr h;
	ucp_mem_h memh;
	ucs_status_t st;
	void *rkey_buf;
	size_t rkey_len;
	uint8_t *buf, *peer;

	buf = mmap(NULL, SRV_BUF_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		fatal("setup", "mmap: %s", strerror(errno));
	mp.address = buf;
	st = ucp_mem_map(ctx, &mp, &memh);
	if (st != UCS_OK)
		fatal("setup", "ucp_mem_map: %s", ucs_status_string(st));
	st = ucp_rkey_pack(ctx, memh, &rkey_buf, &rkey_len);
	if (st != UCS_OK)
		fatal("setup", "ucp_rkey_pack: %s", ucs_status_string(st));
	st = ucp_worker_set_am_recv_handler(worker, &ap);
	if (st != UCS_OK)
		fatal("setup", "ucp_worker_set_am_recv_handler: %s",
		      ucs_status_string(st));
	write_info(dir, "server.info", (uintptr_t)buf, rkey_buf, rkey_len,
		   addr, addr_len);
	peer = read_info(dir, "client.info", &h, FILE_TIMEOUT);
	connect_to(peer, NULL);
	free(peer);

	tag_server();
	rma_server(buf);
	am_server(buf);
	finish();

	ucp_rkey_buffer_release(rkey_buf);
	st = ucp_mem_unmap(ctx, memh);
	if (st != UCS_OK)
		fail("ucp_mem_unmap", "%s", ucs_status_string(st));
	munmap(buf, SRV_BUF_SIZE);
}

static void run_client(const char *dir, ucp_address_t *addr, size_t addr_len)
{
	struct info_hdr h;
	ucp_rkey_h rkey;
	ucs_status_t st;
	uint8_t *info;

	info = read_info(dir, "server.info", &h, FILE_TIMEOUT);
	connect_to(info + h.rkey_len, NULL);
	st = ucp_ep_rkey_unpack(ep, info, &rkey);
	if (st != UCS_OK)
		fatal("setup", "ucp_ep_rkey_unpack: %s", ucs_status_string(st));
	write_info(dir, "client.info", 0, NULL, 0, addr, addr_len);

	tag_client();
	/* UCP's lanes to the server, wired up by now (t_ucx reads them) */
	ucp_ep_print_info(ep, stdout);
	rma_client(h.buf_addr, rkey);
	amo_client(h.buf_addr, rkey);
	amo_loop_client(h.buf_addr, rkey);
	am_client();
	/* an rkey goes before the endpoint it was unpacked on */
	ucp_rkey_destroy(rkey);
	finish();
	free(info);
}

int main(int argc, char **argv)
{
	ucp_address_t *addr;
	size_t addr_len;

	if (argc != 3 || (strcmp(argv[1], "server") &&
			  strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: ucx_check server|client DIR\n");
		return 2;
	}
	ucx_start("ucx_check", argv[1], PROG_TIMEOUT);

	ucx_init(&addr, &addr_len);
	if (!strcmp(role, "server"))
		run_server(argv[2], addr, addr_len);
	else
		run_client(argv[2], addr, addr_len);

	ucp_worker_release_address(worker, addr);
	ucp_worker_destroy(worker);
	ucp_cleanup(ctx);
	summary();
	return n_failed ? 1 : 0;
}
