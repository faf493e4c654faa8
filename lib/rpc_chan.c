// SPDX-License-Identifier: BSD-2-Clause
/*
 * rpc_chan.c - the caller's side of RPC: a channel to a server's port,
 * its calls in their slots, the large payloads it writes into the
 * server's grants and the large replies it reads, and the timers that
 * send a call again until its answer comes (common/rpc.h; docs/rpc.md).
 *
 * A call lives in a slot (KRC_CALLS_MAX per channel) under the slot's
 * next sequence number; it is sent again with the same number every
 * rto (doubling up to KRCL_RTO_MAX_MS) while no answer came, for at most
 * KRCL_RESEND_MS (the server remembers a caller longer than that, so a
 * call is never run twice). A reply is taken only from the server's node
 * (the kernels write src_gid), with this channel's epoch (random, seen
 * only by the server process) and the call's slot and number.
 * A call's buffers are the user's again when it completes: its
 * registrations are dropped first, which waits for a transfer in flight.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "rpc_link.h"

#define KRCL_RTO_MIN_MS		200
#define KRCL_RTO_MAX_MS		1000
#define KRCL_RESEND_MS		60000
#define KRCL_WR_RETRIES		3
#define KRCL_CLOSE_MS		2000

enum krcl_call_state {
	KRCL_SENT,	/* CALL (or CALL+LARGE) out, waiting */
	KRCL_WRITING,	/* the payload's WRITE into the grant in flight */
	KRCL_WRITTEN,	/* CALL+WRITTEN out, waiting for the reply */
	KRCL_READING,	/* the reply's READ in flight */
	KRCL_DONE,
};

struct krcl_call {
	uint64_t id;
	uint64_t user;
	uint32_t method;
	const uint8_t *req;
	size_t req_len;
	uint8_t *reply;
	size_t reply_cap;
	struct krc_mr req_mr, reply_mr;
	bool req_mr_ok, reply_mr_ok;	/* usable */
	bool req_mr_own, reply_mr_own;	/* registered for this call */
	uint16_t slot;
	uint32_t seq;
	enum krcl_call_state state;
	bool large, sync;
	bool inflight;			/* its WRITE or READ not completed */
	bool post_wait;			/* ... not posted yet: the VQ was full */
	uint64_t raddr;			/* grant or remote reply */
	uint32_t rkey;
	uint64_t rlen;
	unsigned int wr_tries;
	uint64_t start, deadline, resend_at;
	uint32_t rto;
	int64_t result;
	struct krcl_call *next;		/* the done list */
};

struct krc_chan {
	pthread_mutex_t lock;
	struct krcl_link link;
	uint8_t gid[16];
	uint16_t port, myport;
	unsigned int timeout_ms;	/* of a connect */
	uint64_t epoch;
	uint64_t instance;		/* the server's, from its first answer */
	int reset;			/* the server went away: its error */
	int efd, tfd;
	uint64_t armed;		/* when tfd is set to go off (ms), or 0 */
	bool wrband;
	struct krcl_call *slot[KRC_CALLS_MAX];
	uint32_t seq[KRC_CALLS_MAX];
	uint16_t free[KRC_CALLS_MAX];
	unsigned int nfree;
	uint64_t next_id;
	struct krcl_call *done_head, *done_tail;
	struct krc_chan_stats st;
};

/*
 * A link to the server's port (a VQ bound to a free port of this node for
 * the replies) and a new session: a new random epoch, no instance known.
 */
static int krcl_chan_connect(struct krc_chan *ch)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ret;

	ret = krcl_link_open(&ch->link, ch->gid, ch->port, ch->timeout_ms, 16,
			     true, &ch->myport);
	if (ret)
		return ret;
	do {
		if (getrandom(&ch->epoch, sizeof(ch->epoch), 0) !=
		    sizeof(ch->epoch)) {
			krcl_link_close(&ch->link);
			return krcl_fail(-EIO, "no random epoch");
		}
	} while (!ch->epoch);
	ch->instance = 0;
	ch->reset = 0;
	ch->wrband = false;
	ev.data.fd = krc_vq_fd(ch->link.vq);
	if (epoll_ctl(ch->efd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		ret = krcl_fail(-errno, "epoll_ctl");
		krcl_link_close(&ch->link);
		return ret;
	}
	return 0;
}

int krc_chan_open(struct krc_chan **chp, const char *addr, uint16_t port,
		  int timeout_ms)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct krc_chan *ch;
	int i, ret;

	*chp = NULL;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return krcl_fail(-ENOMEM, "out of memory");
	ch->efd = -1;
	ch->tfd = -1;
	ret = krc_gid_parse(addr, ch->gid);
	if (ret) {
		krcl_fail(ret, "%s: not an IPv4 address or a GID", addr);
		goto fail;
	}
	ch->port = port;
	ch->timeout_ms = timeout_ms < 0 ? 0 : (unsigned int)timeout_ms;
	ch->efd = epoll_create1(EPOLL_CLOEXEC);
	ch->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ch->efd < 0 || ch->tfd < 0) {
		ret = krcl_fail(-errno, "no epoll or timer fd");
		goto fail;
	}
	ev.data.fd = ch->tfd;
	if (epoll_ctl(ch->efd, EPOLL_CTL_ADD, ch->tfd, &ev)) {
		ret = krcl_fail(-errno, "epoll_ctl");
		goto fail;
	}
	ret = krcl_chan_connect(ch);
	if (ret)
		goto fail;
	for (i = 0; i < KRC_CALLS_MAX; i++)
		ch->free[i] = (uint16_t)(KRC_CALLS_MAX - 1 - i);
	ch->nfree = KRC_CALLS_MAX;
	ch->next_id = 1;
	pthread_mutex_init(&ch->lock, NULL);
	*chp = ch;
	return 0;
fail:
	if (ch->link.vq)
		krcl_link_close(&ch->link);
	if (ch->efd >= 0)
		close(ch->efd);
	if (ch->tfd >= 0)
		close(ch->tfd);
	free(ch);
	return ret;
}

int krc_chan_fd(const struct krc_chan *ch)
{
	return ch->efd;
}

static void krcl_hdr(const struct krc_chan *ch, const struct krcl_call *c,
		     uint8_t type, struct krc_rpc_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->epoch = ch->epoch;
	h->slot = c->slot;
	h->seq = c->seq;
	h->instance = ch->instance;
}

/* Drop what the call registered: waits for its transfer in flight. */
static void krcl_call_unreg(struct krc_chan *ch, struct krcl_call *c)
{
	if (c->req_mr_own)
		krc_dereg_mr(ch->link.vq, &c->req_mr);
	if (c->reply_mr_own)
		krc_dereg_mr(ch->link.vq, &c->reply_mr);
	c->req_mr_own = false;
	c->reply_mr_own = false;
}

static void krcl_on_cqe(void *arg, const struct krcore_cqe *e);

struct krcl_drain {
	struct krc_chan *ch;
	uint64_t id;
	bool seen;
};

static void krcl_on_cqe_drain(void *arg, const struct krcore_cqe *e)
{
	struct krcl_drain *d = arg;

	if (e->wr_id == d->id)
		d->seen = true;
	else
		krcl_on_cqe(d->ch, e);
}

/*
 * A call ends with its WRITE or READ in flight, in memory the user
 * registered (no registration of ours to drop, which would wait): wait
 * for its completion, which the kernel always gives, so that the buffer
 * is the user's again.
 */
static void krcl_drain(struct krc_chan *ch, struct krcl_call *c)
{
	struct krcl_drain d = { .ch = ch, .id = c->id };
	struct pollfd p = { .fd = krc_vq_fd(ch->link.vq), .events = POLLIN };
	unsigned int n;

	c->inflight = false;
	for (n = 0; !d.seen && n < 1200; n++) {
		krcl_link_progress(&ch->link, krcl_on_cqe_drain, &d);
		if (!d.seen)
			poll(&p, 1, 100);
	}
}

static void krcl_complete(struct krc_chan *ch, struct krcl_call *c,
			  int64_t result)
{
	if (c->inflight && ch->link.vq)
		krcl_drain(ch, c);
	krcl_call_unreg(ch, c);
	c->state = KRCL_DONE;
	c->result = result;
	ch->slot[c->slot] = NULL;
	ch->free[ch->nfree++] = c->slot;
	if (c->sync)
		return;		/* its waiter takes it */
	c->next = NULL;
	if (ch->done_tail)
		ch->done_tail->next = c;
	else
		ch->done_head = c;
	ch->done_tail = c;
}

/* The call goes (again): CALL, CALL+LARGE or CALL+WRITTEN. */
static int krcl_call_send(struct krc_chan *ch, struct krcl_call *c)
{
	struct krc_rpc_hdr h;

	krcl_hdr(ch, c, KRC_RPC_CALL, &h);
	h.method = c->method;
	h.reply_cap = c->reply_cap;
	if (!c->large) {
		h.inline_len = (uint32_t)c->req_len;
		h.total_len = c->req_len;
		return krcl_link_send(&ch->link, &h, c->req, c->req_len);
	}
	h.flags = c->state == KRCL_WRITTEN ? KRC_RPC_F_WRITTEN :
					     KRC_RPC_F_LARGE;
	h.total_len = c->req_len;
	return krcl_link_send(&ch->link, &h, NULL, 0);
}

static void krcl_call_armed(struct krcl_call *c, uint64_t now)
{
	c->resend_at = now + c->rto;
}

/* Post the call's WRITE (into the grant) or READ (of the reply). */
static int krcl_call_rdma(struct krc_chan *ch, struct krcl_call *c)
{
	bool rd = c->state == KRCL_READING;
	struct krcore_wr wr;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = c->id;
	wr.opcode = rd ? KRCORE_WR_READ : KRCORE_WR_WRITE;
	wr.flags = KRCORE_WR_SIGNALED;
	wr.num_sge = 1;
	wr.sg_list[0].addr = (uintptr_t)(rd ? c->reply : c->req);
	wr.sg_list[0].length = (uint32_t)c->rlen;
	wr.sg_list[0].lkey = rd ? c->reply_mr.lkey : c->req_mr.lkey;
	wr.remote_addr = c->raddr;
	wr.rkey = c->rkey;
	ret = krc_qpush(ch->link.vq, &wr, 1);
	c->inflight = ret == 1;
	c->wr_tries += ret == 1;
	/*
	 * A transfer over the VQ's byte cap goes only alone: with one of
	 * our SENDs in flight it waits (posted again at each progress).
	 */
	c->post_wait = ret == -EAGAIN;
	return ret == 1 || ret == -EAGAIN ? 0 : ret < 0 ? ret : -EIO;
}

/* Does @mr (given by the user) hold [p, p + len)? */
static bool krcl_mr_holds(const struct krc_mr *mr, const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)mr->addr, b = (uintptr_t)p;

	return mr->lkey && b >= a && len <= mr->length &&
	       b - a <= mr->length - len;
}

static void krcl_on_grant(struct krc_chan *ch, struct krcl_call *c,
			  const struct krc_rpc_hdr *h)
{
	int ret;

	if (c->state != KRCL_SENT || !c->large)
		return;		/* a grant sent again: done with it */
	if (h->method == EBUSY)
		return;		/* the server is short: asked again later */
	if (h->method) {
		krcl_complete(ch, c, -(int64_t)h->method);
		return;
	}
	if (h->total_len != c->req_len)
		return;		/* not what we asked for */
	if (!c->req_mr_ok) {
		/*
		 * One page more when rxe 6.1 needs it (krcl_reg_len) and
		 * the page after the request is there to pin; only this
		 * VQ's local reads of the request use the registration.
		 */
		ret = krc_reg_mr(ch->link.vq, (void *)c->req,
				 krcl_reg_len(c->req, c->req_len), 0,
				 &c->req_mr);
		if (ret && krcl_reg_len(c->req, c->req_len) > c->req_len)
			ret = krc_reg_mr(ch->link.vq, (void *)c->req,
					 c->req_len, 0, &c->req_mr);
		if (ret) {
			krcl_complete(ch, c, ret);
			return;
		}
		c->req_mr_ok = true;
		c->req_mr_own = true;
	}
	c->raddr = h->addr;
	c->rkey = h->rkey;
	c->rlen = c->req_len;
	c->state = KRCL_WRITING;
	c->wr_tries = 0;
	ret = krcl_call_rdma(ch, c);
	if (ret)
		krcl_complete(ch, c, ret);
}

static void krcl_on_reply(struct krc_chan *ch, struct krcl_call *c,
			  const struct krc_rpc_hdr *h, const uint8_t *data)
{
	struct krc_rpc_hdr a;
	int ret;

	if (c->state != KRCL_SENT && c->state != KRCL_WRITTEN)
		return;		/* a transfer in flight, or sent again */
	if (h->method) {
		krcl_complete(ch, c, -(int64_t)h->method);
		return;
	}
	if (!(h->flags & KRC_RPC_F_REMOTE)) {
		if (h->inline_len > c->reply_cap) {
			krcl_complete(ch, c, -EMSGSIZE);
			return;
		}
		if (h->inline_len)
			memcpy(c->reply, data, h->inline_len);
		krcl_complete(ch, c, h->inline_len);
		return;
	}
	if (h->total_len > c->reply_cap) {
		krcl_hdr(ch, c, KRC_RPC_ACK, &a);
		krcl_link_send(&ch->link, &a, NULL, 0);
		krcl_complete(ch, c, -EMSGSIZE);
		return;
	}
	if (!c->reply_mr_ok) {
		size_t reg = krcl_reg_len(c->reply, h->total_len);

		/* The caller's buffer is reply_cap bytes: no more. */
		ret = krc_reg_mr(ch->link.vq, c->reply,
				 reg <= c->reply_cap ? reg : h->total_len,
				 KRCORE_ACCESS_LOCAL_WRITE, &c->reply_mr);
		if (ret) {
			krcl_complete(ch, c, ret);
			return;
		}
		c->reply_mr_ok = true;
		c->reply_mr_own = true;
	}
	c->raddr = h->addr;
	c->rkey = h->rkey;
	c->rlen = h->total_len;
	c->state = KRCL_READING;
	c->wr_tries = 0;
	ret = krcl_call_rdma(ch, c);
	if (ret)
		krcl_complete(ch, c, ret);
}

static void krcl_on_msg(struct krc_chan *ch, const struct krc_msg *m)
{
	const uint8_t *p = m->data;
	struct krc_rpc_hdr h;
	struct krcl_call *c;

	if (memcmp(m->src_gid, ch->gid, 16) ||
	    krc_rpc_decode(p, m->len, &h) || h.epoch != ch->epoch) {
		ch->st.stale++;
		return;		/* not from our server, or not for us */
	}
	c = ch->slot[h.slot];
	if (!c || c->seq != h.seq) {
		ch->st.stale++;
		return;		/* an answer to a call given up */
	}
	if (h.type == KRC_RPC_REPLY && h.method == ECONNRESET &&
	    h.instance != ch->instance) {
		/* Our server went away; its successor ran nothing of ours. */
		ch->reset = ECONNRESET;
		return;
	}
	if (ch->instance && h.instance != ch->instance) {
		ch->st.stale++;
		return;		/* from a server before or after ours */
	}
	ch->instance = h.instance;
	if (h.type == KRC_RPC_GRANT)
		krcl_on_grant(ch, c, &h);
	else if (h.type == KRC_RPC_REPLY)
		krcl_on_reply(ch, c, &h, p + KRC_RPC_HDR_SIZE);
}

static struct krcl_call *krcl_by_id(struct krc_chan *ch, uint64_t id)
{
	unsigned int i;

	for (i = 0; i < KRC_CALLS_MAX; i++)
		if (ch->slot[i] && ch->slot[i]->id == id)
			return ch->slot[i];
	return NULL;
}

/* A WRITE or READ of a call completed. */
static void krcl_on_cqe(void *arg, const struct krcore_cqe *e)
{
	struct krc_chan *ch = arg;
	struct krcl_call *c = krcl_by_id(ch, e->wr_id);
	struct krc_rpc_hdr h;
	int ret;

	if (!c || (c->state != KRCL_WRITING && c->state != KRCL_READING))
		return;
	c->inflight = false;
	if (e->status != KRCORE_WC_SUCCESS) {
		/* A connection that failed and recovered: once more. */
		ret = c->wr_tries < KRCL_WR_RETRIES ? krcl_call_rdma(ch, c) :
						     -EIO;
		if (ret)
			krcl_complete(ch, c, ret);
		return;
	}
	if (c->state == KRCL_WRITING) {
		c->state = KRCL_WRITTEN;
		c->rto = KRCL_RTO_MIN_MS;
		krcl_call_armed(c, krcl_now_ms());
		ret = krcl_call_send(ch, c);
		if (ret == -ECONNREFUSED)
			krcl_complete(ch, c, ret);
		return;
	}
	krcl_hdr(ch, c, KRC_RPC_ACK, &h);
	krcl_link_send(&ch->link, &h, NULL, 0);
	krcl_complete(ch, c, (int64_t)c->rlen);
}

/* Timers: calls past their deadline fail, unanswered ones go again. */
static void krcl_timers(struct krc_chan *ch, uint64_t now)
{
	struct itimerspec its = {};
	uint64_t next = 0, t;
	struct krc_rpc_hdr h;
	unsigned int i;
	int ret;

	for (i = 0; i < KRC_CALLS_MAX; i++) {
		struct krcl_call *c = ch->slot[i];

		if (!c)
			continue;
		if (c->deadline && now >= c->deadline) {
			krcl_hdr(ch, c, KRC_RPC_CANCEL, &h);
			krcl_link_send(&ch->link, &h, NULL, 0);
			krcl_complete(ch, c, -ETIMEDOUT);
			continue;
		}
		/* Not while messages wait for credit: the call is among them. */
		if ((c->state == KRCL_SENT || c->state == KRCL_WRITTEN) &&
		    now >= c->resend_at && now - c->start < KRCL_RESEND_MS &&
		    !krcl_link_pending(&ch->link)) {
			c->rto = c->rto * 2 > KRCL_RTO_MAX_MS ?
				 KRCL_RTO_MAX_MS : c->rto * 2;
			krcl_call_armed(c, now);
			ch->st.resent++;
			ret = krcl_call_send(ch, c);
			if (ret == -ECONNREFUSED) {
				krcl_complete(ch, c, ret);
				continue;
			}
		}
		t = c->deadline;
		if (c->post_wait && (!t || now + 10 < t))
			t = now + 10;	/* a transfer to post again */
		if ((c->state == KRCL_SENT || c->state == KRCL_WRITTEN) &&
		    now - c->start < KRCL_RESEND_MS &&
		    (!t || c->resend_at < t))
			t = c->resend_at;
		if (t && (!next || t < next))
			next = t;
	}
	/*
	 * A system call only when the timer went off (setting it again
	 * also clears its expiry: no read of tfd) or must go off sooner.
	 * Set for a time that has passed (a call done, a deadline later
	 * than it), it goes off early once and is set anew here: a call
	 * costs no timer system call while calls follow each other within
	 * their RTO.
	 */
	if (!(ch->armed && now >= ch->armed) &&
	    (!next || (ch->armed && ch->armed <= next)))
		return;
	if (next) {
		t = next > now ? next - now : 1;
		its.it_value.tv_sec = (time_t)(t / 1000);
		its.it_value.tv_nsec = (long)(t % 1000) * 1000000;
	}
	ch->armed = next ? now + t : 0;
	timerfd_settime(ch->tfd, 0, &its, NULL);
}

/*
 * The server we talked to is gone (its port refused us, or its successor
 * said so): every call fails, and the next one starts a new session on a
 * new link.
 */
static void krcl_fail_all(struct krc_chan *ch)
{
	unsigned int i;

	for (i = 0; i < KRC_CALLS_MAX; i++)
		if (ch->slot[i])
			krcl_complete(ch, ch->slot[i], -ch->reset);
}

/* Transfers that found the VQ full are posted again. */
static void krcl_repost(struct krc_chan *ch)
{
	unsigned int i;
	int ret;

	for (i = 0; i < KRC_CALLS_MAX; i++) {
		struct krcl_call *c = ch->slot[i];

		if (!c || !c->post_wait)
			continue;
		ret = krcl_call_rdma(ch, c);
		if (ret)
			krcl_complete(ch, c, ret);
	}
}

/* Under the lock: everything that can move, moves. */
static void krcl_progress(struct krc_chan *ch)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct krc_msg m;

	if (!ch->link.vq) {
		/* reset, and no new link yet: no call either (timer off) */
		krcl_timers(ch, krcl_now_ms());
		return;
	}
	krcl_link_progress(&ch->link, krcl_on_cqe, ch);
	while (krc_qpop_msg(ch->link.vq, &m) == 1) {
		krcl_on_msg(ch, &m);
		krc_qmsg_done(ch->link.vq);
	}
	krcl_repost(ch);
	krcl_timers(ch, krcl_now_ms());
	if (ch->link.error && !ch->reset)
		ch->reset = -ch->link.error;
	if (ch->reset)
		krcl_fail_all(ch);
	if (krcl_link_pending(&ch->link) != ch->wrband) {
		ch->wrband = !ch->wrband;
		ev.events |= ch->wrband ? EPOLLWRBAND : 0;
		ev.data.fd = krc_vq_fd(ch->link.vq);
		epoll_ctl(ch->efd, EPOLL_CTL_MOD, ev.data.fd, &ev);
	}
}

/* After a reset (no call left): a new link, a new session. */
static int krcl_chan_reconnect(struct krc_chan *ch)
{
	krcl_fail_all(ch);
	if (ch->link.vq) {
		epoll_ctl(ch->efd, EPOLL_CTL_DEL, krc_vq_fd(ch->link.vq), NULL);
		krcl_link_close(&ch->link);
	}
	ch->st.reconnects++;
	return krcl_chan_connect(ch);
}

static int krcl_start(struct krc_chan *ch, const struct krc_call_args *a,
		      bool sync, struct krcl_call **out)
{
	struct krcl_call *c;
	uint64_t now;
	int ret;

	if (a->req_len > KRC_RPC_MAX_PAYLOAD || a->reply_cap > KRC_RPC_MAX_PAYLOAD)
		return krcl_fail(-EMSGSIZE, "a payload of at most 1 GiB");
	if ((a->req_len && !a->req) || (a->reply_cap && !a->reply))
		return krcl_fail(-EINVAL, "a length without a buffer");
	if (!a->timeout_ms || a->timeout_ms < -1)
		return krcl_fail(-EINVAL, "a timeout: -1 or > 0 ms");
	if (!ch->nfree)
		return krcl_fail(-EAGAIN, "%d calls outstanding", KRC_CALLS_MAX);
	if (ch->reset) {
		ret = krcl_chan_reconnect(ch);
		if (ret)
			return ret;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return krcl_fail(-ENOMEM, "out of memory");
	c->id = ch->next_id++;
	c->user = a->user;
	c->method = a->method;
	c->req = a->req;
	c->req_len = a->req_len;
	c->reply = a->reply;
	c->reply_cap = a->reply_cap;
	if (a->req_mr && krcl_mr_holds(a->req_mr, a->req, a->req_len)) {
		c->req_mr = *a->req_mr;
		c->req_mr_ok = true;
	}
	if (a->reply_mr && krcl_mr_holds(a->reply_mr, a->reply, a->reply_cap)) {
		c->reply_mr = *a->reply_mr;
		c->reply_mr_ok = true;
	}
	c->large = a->req_len > KRC_RPC_INLINE;
	c->sync = sync;
	c->slot = ch->free[--ch->nfree];
	c->seq = ++ch->seq[c->slot];
	if (!c->seq)
		c->seq = ++ch->seq[c->slot];
	now = krcl_now_ms();
	c->start = now;
	c->deadline = a->timeout_ms < 0 ? 0 : now + (uint64_t)a->timeout_ms;
	c->rto = KRCL_RTO_MIN_MS;
	krcl_call_armed(c, now);
	ch->slot[c->slot] = c;
	ret = krcl_call_send(ch, c);
	if (ret) {
		ch->slot[c->slot] = NULL;
		ch->free[ch->nfree++] = c->slot;
		free(c);
		if (ret == -ECONNREFUSED)
			ch->reset = ECONNREFUSED;	/* next: a new session */
		return ret == -ECONNREFUSED ?
		       krcl_fail(ret, "no process serves port %u there", ch->port) :
		       ret;
	}
	ch->st.calls++;
	krcl_timers(ch, now);
	*out = c;
	return 0;
}

int krc_call_start(struct krc_chan *ch, const struct krc_call_args *a,
		   uint64_t *id)
{
	struct krcl_call *c;
	int ret;

	pthread_mutex_lock(&ch->lock);
	ret = krcl_start(ch, a, false, &c);
	if (!ret)
		*id = c->id;
	pthread_mutex_unlock(&ch->lock);
	return ret;
}

/* Sleep until the channel's fd says something may have moved: 0, or -1 (a signal). */
static int krcl_wait(struct krc_chan *ch, int timeout_ms)
{
	struct epoll_event ev[2];

	return epoll_wait(ch->efd, ev, 2, timeout_ms) < 0 && errno == EINTR ?
	       -1 : 0;
}

int64_t krc_call(struct krc_chan *ch, uint32_t method, const void *req,
		 size_t req_len, void *reply, size_t reply_cap, int timeout_ms)
{
	struct krc_call_args a = {
		.method = method, .req = req, .req_len = req_len,
		.reply = reply, .reply_cap = reply_cap,
		.timeout_ms = timeout_ms,
	};
	struct krcl_call *c;
	int64_t ret;

	pthread_mutex_lock(&ch->lock);
	ret = krcl_start(ch, &a, true, &c);
	while (!ret && c->state != KRCL_DONE) {
		pthread_mutex_unlock(&ch->lock);
		krcl_wait(ch, 100);
		pthread_mutex_lock(&ch->lock);
		krcl_progress(ch);
	}
	pthread_mutex_unlock(&ch->lock);
	if (ret)
		return ret;
	ret = c->result;
	free(c);
	if (ret == -ETIMEDOUT)
		krcl_fail((int)ret, "no answer within %d ms", timeout_ms);
	else if (ret == -ECONNREFUSED)
		krcl_fail((int)ret, "no process serves port %u there", ch->port);
	else if (ret < 0)
		krcl_fail((int)ret, "the call failed");
	return ret;
}

int krc_chan_poll(struct krc_chan *ch, struct krc_call_done *done,
		  unsigned int max, int timeout_ms)
{
	uint64_t end = krcl_now_ms() + (timeout_ms < 0 ? 0 : (uint64_t)timeout_ms);
	struct krcl_call *c;
	unsigned int n = 0;
	uint64_t now;

	for (;;) {
		pthread_mutex_lock(&ch->lock);
		krcl_progress(ch);
		while (n < max && ch->done_head) {
			c = ch->done_head;
			ch->done_head = c->next;
			if (!ch->done_head)
				ch->done_tail = NULL;
			done[n].id = c->id;
			done[n].user = c->user;
			done[n].result = c->result;
			n++;
			free(c);
		}
		pthread_mutex_unlock(&ch->lock);
		if (n || !timeout_ms || !max)
			return (int)n;
		now = krcl_now_ms();
		if (timeout_ms > 0 && now >= end)
			return 0;
		if (krcl_wait(ch, timeout_ms < 0 ? 100 :
			      (int)(end - now < 100 ? end - now : 100)))
			return krcl_fail(-EINTR, "interrupted");
	}
}

int krc_call_cancel(struct krc_chan *ch, uint64_t id)
{
	struct krcl_call *c;
	struct krc_rpc_hdr h;

	pthread_mutex_lock(&ch->lock);
	c = krcl_by_id(ch, id);
	if (!c || c->sync) {
		pthread_mutex_unlock(&ch->lock);
		return krcl_fail(-ENOENT, "no call %llu outstanding",
				 (unsigned long long)id);
	}
	krcl_hdr(ch, c, KRC_RPC_CANCEL, &h);
	krcl_link_send(&ch->link, &h, NULL, 0);
	krcl_complete(ch, c, -ECANCELED);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

int krc_send(struct krc_chan *ch, uint32_t method, const void *data,
	     size_t len)
{
	struct krcl_call c = { .method = method, .req = data, .req_len = len };
	struct krc_rpc_hdr h;
	int ret;

	if (len > KRC_RPC_INLINE)
		return krcl_fail(-EMSGSIZE, "a one-way message of at most %d bytes",
				 KRC_RPC_INLINE);
	pthread_mutex_lock(&ch->lock);
	if (!ch->nfree) {
		pthread_mutex_unlock(&ch->lock);
		return krcl_fail(-EAGAIN, "%d calls outstanding", KRC_CALLS_MAX);
	}
	if (ch->reset) {
		ret = krcl_chan_reconnect(ch);
		if (ret) {
			pthread_mutex_unlock(&ch->lock);
			return ret;
		}
	}
	/* A slot for a moment: its number says "new" to the server. */
	c.slot = ch->free[ch->nfree - 1];
	c.seq = ++ch->seq[c.slot];
	if (!c.seq)
		c.seq = ++ch->seq[c.slot];
	krcl_hdr(ch, &c, KRC_RPC_CALL, &h);
	h.flags = KRC_RPC_F_ONEWAY;
	h.method = method;
	h.inline_len = (uint32_t)len;
	h.total_len = len;
	ret = krcl_link_send(&ch->link, &h, data, len);
	ch->st.calls += !ret;
	if (ret == -ECONNREFUSED)
		ch->reset = ECONNREFUSED;
	krcl_progress(ch);
	pthread_mutex_unlock(&ch->lock);
	return ret == -ECONNREFUSED ?
	       krcl_fail(ret, "no process serves port %u there", ch->port) : ret;
}

void krc_chan_stats(struct krc_chan *ch, struct krc_chan_stats *st)
{
	pthread_mutex_lock(&ch->lock);
	*st = ch->st;
	st->queued = ch->link.queued_total;
	pthread_mutex_unlock(&ch->lock);
}

void krc_chan_close(struct krc_chan *ch)
{
	struct krc_rpc_hdr h;
	struct krcl_call *c;
	unsigned int i;
	uint64_t end;

	if (!ch)
		return;
	/*
	 * What the server holds for our calls goes (CANCEL), and what waits
	 * for its credit (one-way sends) goes out first: for up to
	 * KRCL_CLOSE_MS.
	 */
	for (i = 0; i < KRC_CALLS_MAX; i++)
		if (ch->slot[i] && ch->link.vq && !ch->reset) {
			krcl_hdr(ch, ch->slot[i], KRC_RPC_CANCEL, &h);
			krcl_link_send(&ch->link, &h, NULL, 0);
		}
	for (i = 0; i < KRC_CALLS_MAX; i++)
		if (ch->slot[i]) {
			if (ch->slot[i]->inflight && ch->link.vq)
				krcl_drain(ch, ch->slot[i]);
			krcl_call_unreg(ch, ch->slot[i]);
			free(ch->slot[i]);
		}
	end = krcl_now_ms() + KRCL_CLOSE_MS;
	while (ch->link.vq && krcl_link_pending(&ch->link) &&
	       !ch->link.error && krcl_now_ms() < end) {
		krc_qflow_wait(ch->link.vq, 100);
		krcl_link_progress(&ch->link, NULL, NULL);
	}
	while (ch->done_head) {
		c = ch->done_head;
		ch->done_head = c->next;
		free(c);
	}
	krcl_link_close(&ch->link);
	close(ch->efd);
	close(ch->tfd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}
