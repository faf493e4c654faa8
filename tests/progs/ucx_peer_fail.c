// SPDX-License-Identifier: BSD-2-Clause
/*
 * ucx_peer_fail - a UCP peer killed mid-run, its node's krcore reloaded:
 * the survivor gets an error from UCX, not a hang, and then talks to the
 * peer's next process as if nothing had happened (t_ucx_fail, docs/ucx.md).
 *
 *   ucx_peer_fail survivor DIR
 *   ucx_peer_fail victim DIR GEN
 *
 * DIR is a directory both nodes see: the survivor's worker address is in
 * DIR/survivor.info, victim GEN's in DIR/victim.GEN.info (common.h). The
 * survivor sends pings of 8, 4000 and 65536 bytes (every eighth:
 * rendezvous) with the round's number in the tag; the victim checks each
 * byte and answers with a pong of the same size (4000 bytes at most: one
 * fragment) and its own pattern, which the survivor checks.
 *
 * Generation 1: after MARK_ROUNDS round trips the survivor creates
 * DIR/traffic.1 and goes on; the cluster script kills victim 1 (SIGKILL)
 * and reloads krcore on its node. The survivor's endpoint has UCX's peer
 * error handling: its handler must be called, once, with an error, within
 * ERR_LIMIT seconds of the last round trip; the requests in flight must
 * end and a forced close of the endpoint must complete.
 * Generation 2: the survivor waits for victim 2 (its node's krcore now a
 * new incarnation), connects anew, makes GEN2_ROUNDS round trips, every
 * byte checked, says "done" and closes the endpoint with a flush; no
 * error may be reported on it.
 *
 * Every check prints "ok: WHAT" or "FAIL: WHAT: DETAIL"; the last line is
 * "ucx_peer_fail: ROLE N checks, M failed"; exit status 0 only if none
 * failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "ucx/common.h"

#define MAX_SIZE	65536
#define PONG_MAX	4000
#define MARK_ROUNDS	50	/* round trips before DIR/traffic.1 */
#define GEN2_ROUNDS	100
#define ERR_LIMIT	30	/* seconds from the last round trip to the error */
#define QUIET_SECS	2	/* a second report would come within these */
#define GEN2_WAIT	300	/* seconds for victim 2: a module reload */
#define PROG_TIMEOUT	560
#define VICTIM_TIMEOUT	400	/* victim 1 is killed long before */

/* The tag: the kind in the high half, the round in the low half. */
#define TAG_KIND(t)	((t) >> 32)
#define TAG_ROUND(t)	((uint32_t)(t))
#define TAG(kind, r)	((ucp_tag_t)(kind) << 32 | (r))
#define TAG_KIND_MASK	((ucp_tag_t)0xffffffff << 32)

enum { KIND_PING = 1, KIND_PONG, KIND_DONE };

/* What the error handler saw. */
static struct {
	unsigned int calls;
	ucs_status_t status;
	double when;
} err;

static size_t round_size(uint32_t r)
{
	static const size_t sizes[] = { 8, 4000, 8, 4000, 8, 4000, 8, MAX_SIZE };

	return sizes[r % ARRAY_SIZE(sizes)];
}

/*
 * A pong is one fragment at most: a receive that UCP matched to a message
 * of several fragments waits for the rest, and the dead peer sends none
 * (UCP 1.13 does not end it when the endpoint fails, over any transport).
 * The pings, the survivor's sends, are up to 64 KiB (rendezvous).
 */
static size_t pong_size(uint32_t r)
{
	return round_size(r) < PONG_MAX ? round_size(r) : PONG_MAX;
}

/* The seeds of a round's ping and pong. */
static uint64_t ping_seed(uint32_t r)
{
	return 0x100000000ULL | r;
}

static uint64_t pong_seed(uint32_t r)
{
	return 0x200000000ULL | r;
}

static void on_error(void *arg, ucp_ep_h failed, ucs_status_t status)
{
	(void)arg;
	(void)failed;
	if (!err.calls++) {
		err.status = status;
		err.when = now();
	}
}

static void *post_recv_mask(void *buf, size_t len, ucp_tag_t tag,
			    ucp_tag_t mask)
{
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
	};

	return ucp_tag_recv_nbx(worker, buf, len, tag, mask, &prm);
}

/* The victim --------------------------------------------------------- */

/* Answer pings until "done" (generation 2) or the end (generation 1). */
static void run_victim(const char *dir, unsigned int gen,
		       ucp_address_t *addr, size_t addr_len)
{
	uint8_t *in = xmalloc(MAX_SIZE), *out = xmalloc(MAX_SIZE);
	unsigned int rounds = 0, bad_rounds = 0;
	ucp_tag_recv_info_t info;
	struct info_hdr h;
	char name[64], what[96];
	uint64_t first;
	ucs_status_t st;
	uint8_t *peer;
	uint32_t r;

	snprintf(name, sizeof(name), "victim.%u.info", gen);
	write_info(dir, name, 0, NULL, 0, addr, addr_len);
	peer = read_info(dir, "survivor.info", &h, FILE_TIMEOUT);
	connect_to(peer, on_error);
	free(peer);
	printf("victim %u: serving\n", gen);
	phase = "pings";
	for (;;) {
		/* victim 1 is killed waiting; victim 2's survivor may die */
		st = wait_req(post_recv_mask(in, MAX_SIZE, 0, 0), "ping",
			      gen == 1 ? VICTIM_TIMEOUT : STEP_TIMEOUT, &info);
		if (st != UCS_OK)
			fatal("ping", "tag recv: %s", ucs_status_string(st));
		r = TAG_ROUND(info.sender_tag);
		if (TAG_KIND(info.sender_tag) == KIND_DONE)
			break;
		snprintf(what, sizeof(what), "round %u", r);
		if (TAG_KIND(info.sender_tag) != KIND_PING ||
		    info.length != round_size(r) ||
		    verify(in, info.length, 0, info.length, ping_seed(r),
			   &first)) {
			fail(what, "tag %#" PRIx64 ", %zu bytes, not the ping sent",
			     (uint64_t)info.sender_tag, info.length);
			bad_rounds++;
		}
		fill(out, pong_size(r), pong_size(r), pong_seed(r));
		send_wait(out, pong_size(r), TAG(KIND_PONG, r), what,
			  OP_TIMEOUT);
		rounds++;
	}
	send_wait("done", 5, TAG(KIND_DONE, 0), "done", OP_TIMEOUT);
	snprintf(what, sizeof(what), "victim %u: %u pings, every byte as sent",
		 gen, rounds);
	if (bad_rounds)
		fail(what, "%u not", bad_rounds);
	else
		pass(what);
	st = flush_ep("flush");
	if (st != UCS_OK)
		fail("flush", "%s", ucs_status_string(st));
	free(in);
	free(out);
}

/* The survivor ------------------------------------------------------- */

/*
 * One round trip: ping @r, wait for its pong. UCS_OK when both completed
 * (the pong checked: a difference fails "what"); UCS_ERR_CANCELED when the
 * error handler was called first, the requests left in *@sreq, *@rreq.
 */
static ucs_status_t round_trip(uint32_t r, uint8_t *ping, uint8_t *pong,
			       void **sreq, void **rreq, const char *what)
{
	size_t size = round_size(r), psize = pong_size(r);
	ucp_tag_recv_info_t info;
	ucs_status_t sst = UCS_INPROGRESS, rst = UCS_INPROGRESS;
	double end = now() + ERR_LIMIT;
	uint64_t first, bad;

	fill(ping, size, size, ping_seed(r));
	memset(pong, 0, psize);
	*rreq = post_recv_mask(pong, MAX_SIZE, TAG(KIND_PONG, r), (ucp_tag_t)-1);
	*sreq = post_send(ping, size, TAG(KIND_PING, r));
	if (UCS_PTR_IS_ERR(*rreq))
		fatal(what, "tag recv: %s",
		      ucs_status_string(UCS_PTR_STATUS(*rreq)));
	if (UCS_PTR_IS_ERR(*sreq)) {
		sst = UCS_PTR_STATUS(*sreq);
		*sreq = NULL;
	} else if (!*sreq) {
		sst = UCS_OK;
	}
	while (sst == UCS_INPROGRESS || rst == UCS_INPROGRESS) {
		ucp_worker_progress(worker);
		if (*sreq && sst == UCS_INPROGRESS) {
			sst = ucp_request_check_status(*sreq);
			if (sst != UCS_INPROGRESS) {
				ucp_request_free(*sreq);
				*sreq = NULL;
			}
		}
		if (rst == UCS_INPROGRESS) {
			rst = ucp_tag_recv_request_test(*rreq, &info);
			if (rst != UCS_INPROGRESS) {
				ucp_request_free(*rreq);
				*rreq = NULL;
			}
		}
		if (err.calls)
			return UCS_ERR_CANCELED;
		if (now() > end)
			return UCS_ERR_TIMED_OUT;
	}
	if (sst != UCS_OK || rst != UCS_OK) {
		fail(what, "send %s, recv %s", ucs_status_string(sst),
		     ucs_status_string(rst));
		return UCS_ERR_IO_ERROR;
	}
	bad = verify(pong, info.length, 0, psize, pong_seed(r), &first);
	if (info.length != psize || bad) {
		fail(what, "pong of %zu bytes (expected %zu), %" PRIu64 " differ",
		     info.length, psize, bad);
		return UCS_ERR_IO_ERROR;
	}
	return UCS_OK;
}

/* Progress until @req (may be NULL) ends: its status, or a timeout. */
static ucs_status_t settle(void *req, int secs)
{
	double end = now() + secs;
	ucs_status_t st;

	if (!req)
		return UCS_OK;
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
		ucp_worker_progress(worker);
		if (now() > end)
			return UCS_ERR_TIMED_OUT;
	}
	ucp_request_free(req);
	return st;
}

static void close_ep(int force, const char *what)
{
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
		.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0,
	};
	void *req = ucp_ep_close_nbx(ep, &prm);
	ucs_status_t st;

	ep = NULL;
	if (UCS_PTR_IS_ERR(req))
		st = UCS_PTR_STATUS(req);
	else
		st = settle(req, OP_TIMEOUT);
	/* a forced close of a failed endpoint may say so */
	if (st == UCS_ERR_TIMED_OUT || (!force && st != UCS_OK))
		fail(what, "%s", ucs_status_string(st));
	else
		pass(what);
}

static void create_marker(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fclose(f))
		fatal("setup", "%s: %s", path, strerror(errno));
}

/* Generation 1: round trips until the victim dies under them. */
static void survivor_gen1(const char *dir, uint8_t *ping, uint8_t *pong)
{
	unsigned int rounds = 0, bad_rounds = 0;
	void *sreq = NULL, *rreq = NULL;
	double last = now();
	ucs_status_t st, sst, rst;
	struct info_hdr h;
	char what[128];
	uint8_t *peer;
	uint32_t r;

	peer = read_info(dir, "victim.1.info", &h, FILE_TIMEOUT);
	connect_to(peer, on_error);
	free(peer);
	phase = "generation 1: round trips until the victim is killed";
	for (r = 0;; r++) {
		snprintf(what, sizeof(what), "generation 1: round %u", r);
		st = round_trip(r, ping, pong, &sreq, &rreq, what);
		if (st == UCS_OK) {
			rounds++;
			last = now();
		} else if (st == UCS_ERR_IO_ERROR) {
			bad_rounds++;
		} else {
			break;
		}
		if (rounds == MARK_ROUNDS)
			create_marker(dir, "traffic.1");
	}
	printf("generation 1: %u round trips, then %s after %.1f s\n", rounds,
	       st == UCS_ERR_CANCELED ? "the error handler" : "nothing",
	       now() - last);

	snprintf(what, sizeof(what),
		 "generation 1: %u round trips (at least %u) before the kill, every byte checked",
		 rounds, MARK_ROUNDS);
	if (rounds < MARK_ROUNDS || bad_rounds)
		fail(what, "%u of them wrong", bad_rounds);
	else
		pass(what);
	snprintf(what, sizeof(what),
		 "UCX reported the killed peer within %d s of the last round trip",
		 ERR_LIMIT);
	if (st != UCS_ERR_CANCELED)
		fatal(what, "no error handler call: %s", ucs_status_string(st));
	pass(what);

	/* the requests in flight end; the receive is the worker's, cancelled */
	sst = settle(sreq, OP_TIMEOUT);
	if (rreq)
		ucp_request_cancel(worker, rreq);
	rst = settle(rreq, OP_TIMEOUT);
	printf("in flight at the error: send %s, receive %s\n",
	       ucs_status_string(sst), ucs_status_string(rst));
	if (sst == UCS_ERR_TIMED_OUT || rst == UCS_ERR_TIMED_OUT)
		fail("the requests in flight ended", "send %s, receive %s",
		     ucs_status_string(sst), ucs_status_string(rst));
	else
		pass("the requests in flight ended");

	/* a second report of the same failure would come now */
	last = now();
	while (now() < last + QUIET_SECS)
		ucp_worker_progress(worker);
	snprintf(what, sizeof(what), "the error handler: called once, %s",
		 ucs_status_string(err.status));
	if (err.calls != 1 || err.status == UCS_OK)
		fail(what, "%u calls", err.calls);
	else
		pass(what);
	close_ep(1, "generation 1: the failed endpoint closed (forced)");
}

/* Generation 2: the next process on the reloaded node. */
static void survivor_gen2(const char *dir, uint8_t *ping, uint8_t *pong)
{
	unsigned int rounds = 0, bad_rounds = 0;
	void *sreq, *rreq;
	struct info_hdr h;
	ucs_status_t st;
	char what[128];
	uint8_t *peer;
	uint32_t r;

	memset(&err, 0, sizeof(err));
	phase = "generation 2: waiting for the next victim";
	peer = read_info(dir, "victim.2.info", &h, GEN2_WAIT);
	connect_to(peer, on_error);
	free(peer);
	phase = "generation 2: round trips";
	for (r = 0; r < GEN2_ROUNDS; r++) {
		snprintf(what, sizeof(what), "generation 2: round %u", r);
		st = round_trip(r, ping, pong, &sreq, &rreq, what);
		if (st == UCS_OK)
			rounds++;
		else if (st == UCS_ERR_IO_ERROR)
			bad_rounds++;
		else
			fatal(what, "%s (error handler: %u calls, %s)",
			      ucs_status_string(st), err.calls,
			      ucs_status_string(err.status));
	}
	snprintf(what, sizeof(what),
		 "generation 2 (node reloaded): %u round trips, every byte checked",
		 GEN2_ROUNDS);
	if (rounds != GEN2_ROUNDS)
		fail(what, "%u wrong", bad_rounds);
	else
		pass(what);

	phase = "generation 2: done";
	send_wait("done", 5, TAG(KIND_DONE, 0), phase, OP_TIMEOUT);
	recv_wait(pong, 5, TAG(KIND_DONE, 0), phase, STEP_TIMEOUT);
	pass("generation 2: done exchanged");
	st = flush_ep(phase);
	if (st != UCS_OK)
		fail("generation 2: endpoint flush", "%s", ucs_status_string(st));
	else
		pass("generation 2: endpoint flush");
	close_ep(0, "generation 2: endpoint closed (flush)");
	if (err.calls)
		fail("generation 2: no error reported", "%u calls, %s",
		     err.calls, ucs_status_string(err.status));
	else
		pass("generation 2: no error reported");
}

int main(int argc, char **argv)
{
	ucp_address_t *addr;
	size_t addr_len;
	uint8_t *ping, *pong;
	unsigned int gen = 0;

	if (argc == 4 && !strcmp(argv[1], "victim"))
		gen = (unsigned int)atoi(argv[3]);
	if (!((argc == 3 && !strcmp(argv[1], "survivor")) ||
	      (gen == 1 || gen == 2))) {
		fprintf(stderr,
			"usage: ucx_peer_fail survivor DIR | victim DIR 1|2\n");
		return 2;
	}
	ucx_start("ucx_peer_fail", argv[1], PROG_TIMEOUT);
	ucx_init(&addr, &addr_len);
	if (gen) {
		run_victim(argv[2], gen, addr, addr_len);
	} else {
		ping = xmalloc(MAX_SIZE);
		pong = xmalloc(MAX_SIZE);
		write_info(argv[2], "survivor.info", 0, NULL, 0, addr,
			   addr_len);
		survivor_gen1(argv[2], ping, pong);
		survivor_gen2(argv[2], ping, pong);
		free(ping);
		free(pong);
	}
	ucp_worker_release_address(worker, addr);
	ucp_worker_destroy(worker);
	ucp_cleanup(ctx);
	summary();
	return n_failed ? 1 : 0;
}
