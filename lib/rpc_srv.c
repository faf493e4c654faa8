// SPDX-License-Identifier: BSD-2-Clause
/*
 * rpc_srv.c - the server's side of RPC: a bound port, the callers it
 * remembers (common/rpc.c's sessions: a call runs at most once), the
 * memory it grants for large requests, the replies it keeps until the
 * caller has them, and a link to each caller for the replies
 * (docs/rpc.md).
 *
 * Everything in a call is the caller's to choose and checked as such:
 * its header is decoded by krc_rpc_decode, its session is named by what
 * the kernels wrote (source node and port) and its epoch, a large
 * request is written only into memory granted for that one call (of the
 * length the server granted, which it keeps), and that memory is
 * deregistered before the request is handed out, so the caller cannot
 * change it while it is served. The server never reads or writes a
 * caller's memory.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "rpc_link.h"

#define KRCL_SRV_IDLE_MS	120000	/* > the caller's KRCL_RESEND_MS */
#define KRCL_SRV_LINKS		256	/* links to callers kept open */
#define KRCL_SRV_CONNECT_MS	5000

enum krcl_rec_state {
	KRCL_R_WAIT_GRANT,	/* a large request the server is short for */
	KRCL_R_GRANTED,		/* its memory granted, being written */
	KRCL_R_RUNNING,		/* handed out */
	KRCL_R_REPLIED,		/* its reply kept */
};

/* A call of one slot of a session, as far as the server took it. */
struct krcl_rec {
	uint32_t seq;
	enum krcl_rec_state state;
	void *buf;		/* GRANTED: the grant; REPLIED: remote reply */
	size_t len;
	struct krc_mr mr;
	bool mr_ok;
	struct krc_rpc_hdr reply;	/* REPLIED */
	uint8_t *inl;			/* its inline bytes */
};

struct krcl_sess_ext {
	struct krc_rpc_key key;
	struct krcl_rec *rec[KRC_RPC_MAX_SLOTS];
};

struct krcl_peer {
	uint8_t gid[16];
	uint16_t port;
	bool open, wrband;
	uint64_t last_use;
	struct krcl_link link;
};

/* A request handed out (struct krc_req first: the user's view). */
struct krcl_sreq {
	struct krc_req pub;
	struct krcl_sreq *next;
	struct krc_rpc_key key;
	uint32_t sess;
	uint16_t slot;
	uint32_t seq;
	void *buf;		/* the request's bytes */
	size_t buf_len;
	bool mapped;		/* buf is a mapping (a grant), not malloc */
	void *rbuf;		/* krc_srv_reply_buf */
	size_t rbuf_len;
	struct krc_mr rmr;
	bool rmr_ok;
};

struct krc_srv {
	pthread_mutex_t lock;
	struct krc_vq *vq;
	uint16_t port;
	uint64_t instance;
	int efd;
	struct krc_srv_opts o;
	struct krc_rpc_sessions sessions;
	struct krc_rpc_sess *sess;
	struct krcl_sess_ext *ext;
	struct krcl_peer peer[KRCL_SRV_LINKS];
	size_t granted;
	struct krcl_sreq *head, *tail;
	struct krc_srv_stats st;
};

int krc_srv_open(struct krc_srv **srvp, uint16_t port,
		 const struct krc_srv_opts *opts)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct krc_srv *s;
	int ret;

	*srvp = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return krcl_fail(-ENOMEM, "out of memory");
	s->efd = -1;
	if (opts)
		s->o = *opts;
	if (!s->o.sessions)
		s->o.sessions = 256;
	if (!s->o.max_req || s->o.max_req > KRC_RPC_MAX_PAYLOAD)
		s->o.max_req = KRC_RPC_MAX_PAYLOAD;
	if (!s->o.grant_bytes)
		s->o.grant_bytes = 256u << 20;
	s->sess = calloc(s->o.sessions, sizeof(*s->sess));
	s->ext = calloc(s->o.sessions, sizeof(*s->ext));
	if (!s->sess || !s->ext) {
		ret = krcl_fail(-ENOMEM, "out of memory");
		goto fail;
	}
	krc_rpc_sessions_init(&s->sessions, s->sess, s->o.sessions,
			      KRCL_SRV_IDLE_MS);
	do {
		if (getrandom(&s->instance, sizeof(s->instance), 0) !=
		    sizeof(s->instance)) {
			ret = krcl_fail(-EIO, "no random instance");
			goto fail;
		}
	} while (!s->instance);
	ret = krc_vq_open(&s->vq);
	if (ret)
		goto fail;
	ret = krc_qbind(s->vq, port);
	if (ret)
		goto fail;
	s->port = port;
	s->efd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.u32 = 0;	/* the port; a link: its index + 1 */
	if (s->efd < 0 ||
	    epoll_ctl(s->efd, EPOLL_CTL_ADD, krc_vq_fd(s->vq), &ev)) {
		ret = krcl_fail(-errno, "epoll");
		goto fail;
	}
	pthread_mutex_init(&s->lock, NULL);
	*srvp = s;
	return 0;
fail:
	krc_vq_close(s->vq);
	if (s->efd >= 0)
		close(s->efd);
	free(s->sess);
	free(s->ext);
	free(s);
	return ret;
}

int krc_srv_fd(const struct krc_srv *srv)
{
	return srv->efd;
}

static void krcl_rec_free(struct krc_srv *s, struct krcl_rec *r)
{
	if (!r)
		return;
	if (r->mr_ok)
		krc_dereg_mr(s->vq, &r->mr);
	if (r->state == KRCL_R_GRANTED)
		s->granted -= r->len;
	if (r->buf)
		krcl_unmap(r->buf, r->len);
	free(r->inl);
	free(r);
}

/* Session @i is @key's now: what another caller left there goes. */
static struct krcl_sess_ext *krcl_ext(struct krc_srv *s, uint32_t i,
				      const struct krc_rpc_key *key)
{
	struct krcl_sess_ext *e = &s->ext[i];
	unsigned int k;

	if (memcmp(&e->key, key, sizeof(*key))) {
		for (k = 0; k < KRC_RPC_MAX_SLOTS; k++) {
			krcl_rec_free(s, e->rec[k]);
			e->rec[k] = NULL;
		}
		e->key = *key;
	}
	return e;
}

/* The session of @key if the server has one (no new one made). */
static struct krcl_sess_ext *krcl_ext_find(struct krc_srv *s,
					   const struct krc_rpc_key *key)
{
	unsigned int i;

	for (i = 0; i < s->o.sessions; i++)
		if (s->sess[i].used && !memcmp(&s->ext[i].key, key, sizeof(*key)))
			return &s->ext[i];
	return NULL;
}

static struct krcl_peer *krcl_peer_of(struct krc_srv *s, struct krcl_link *l)
{
	return (struct krcl_peer *)((char *)l - offsetof(struct krcl_peer, link));
}

/*
 * A link whose caller is gone (its port refused: that process exited, and
 * a link once refused stays so) or whose VQ hung up: closed, and opened
 * anew for the next caller on that port.
 */
static void krcl_peer_close(struct krc_srv *s, struct krcl_peer *p)
{
	epoll_ctl(s->efd, EPOLL_CTL_DEL, krc_vq_fd(p->link.vq), NULL);
	krcl_link_close(&p->link);
	p->open = false;
}

/* The link to a caller's node and port, opened (or the LRU's reused). */
static struct krcl_link *krcl_peer_link(struct krc_srv *s, const uint8_t gid[16],
					uint16_t port)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct krcl_peer *p, *lru = NULL;
	unsigned int i;

	for (i = 0; i < KRCL_SRV_LINKS; i++) {
		p = &s->peer[i];
		if (p->open && p->port == port && !memcmp(p->gid, gid, 16)) {
			p->last_use = krcl_now_ms();
			return &p->link;
		}
		/* Reuse a free one, else the least recently used idle one. */
		if (p->open && krcl_link_pending(&p->link))
			continue;
		if (!lru || (lru->open && !p->open) ||
		    (lru->open && p->last_use < lru->last_use))
			lru = p;
	}
	if (!lru)
		return NULL;	/* every link has replies waiting */
	if (lru->open)
		krcl_peer_close(s, lru);
	if (krcl_link_open(&lru->link, gid, port, KRCL_SRV_CONNECT_MS, 16,
			   false, NULL))
		return NULL;
	/*
	 * A caller that does not read its replies holds them here: at most
	 * this many; the rest it gets by asking again (they are kept).
	 */
	lru->link.max_queued = KRC_RPC_MAX_SLOTS;
	memcpy(lru->gid, gid, 16);
	lru->port = port;
	lru->open = true;
	lru->wrband = false;
	lru->last_use = krcl_now_ms();
	ev.data.u32 = (uint32_t)(lru - s->peer) + 1;
	epoll_ctl(s->efd, EPOLL_CTL_ADD, krc_vq_fd(lru->link.vq), &ev);
	return &lru->link;
}

static int krcl_srv_send(struct krc_srv *s, const struct krc_rpc_key *key,
			 const struct krc_rpc_hdr *h, const void *data,
			 size_t len)
{
	struct krcl_link *l = krcl_peer_link(s, key->gid, key->port);
	int ret;

	if (!l)
		return krcl_fail(-ENOTCONN, "no link to the caller");
	ret = krcl_link_send(l, h, data, len);
	if (l->error)
		krcl_peer_close(s, krcl_peer_of(s, l));
	return ret;
}

/* An answer without a payload (a status, or a grant) to @key's call. */
static void krcl_answer(struct krc_srv *s, const struct krc_rpc_key *key,
			const struct krc_rpc_hdr *call, uint8_t type,
			uint32_t status, const struct krcl_rec *grant)
{
	struct krc_rpc_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.epoch = key->epoch;
	h.slot = call->slot;
	h.seq = call->seq;
	h.method = status;
	h.instance = s->instance;
	if (grant) {
		h.addr = (uintptr_t)grant->buf;
		h.rkey = grant->mr.rkey;
		h.total_len = grant->len;
	}
	krcl_srv_send(s, key, &h, NULL, 0);
}

/* A call that ends with @status before it runs: kept like a reply. */
static void krcl_refuse(struct krc_srv *s, struct krcl_sess_ext *e,
			uint32_t si, const struct krc_rpc_hdr *h,
			uint32_t status)
{
	struct krcl_rec *r = calloc(1, sizeof(*r));

	s->st.refused++;
	krcl_answer(s, &e->key, h, KRC_RPC_REPLY, status, NULL);
	krc_rpc_done(&s->sessions, si, h->slot, h->seq);
	if (!r)
		return;
	r->seq = h->seq;
	r->state = KRCL_R_REPLIED;
	r->reply.type = KRC_RPC_REPLY;
	r->reply.epoch = e->key.epoch;
	r->reply.slot = h->slot;
	r->reply.seq = h->seq;
	r->reply.method = status;
	r->reply.instance = s->instance;
	krcl_rec_free(s, e->rec[h->slot]);
	e->rec[h->slot] = r;
}

/* Grant memory for a large request (or say EBUSY: asked again later). */
static void krcl_grant(struct krc_srv *s, struct krcl_sess_ext *e,
		       struct krcl_rec *r, const struct krc_rpc_hdr *h)
{
	if (r->state == KRCL_R_WAIT_GRANT) {
		if (s->granted + r->len > s->o.grant_bytes) {
			krcl_answer(s, &e->key, h, KRC_RPC_GRANT, EBUSY, NULL);
			return;
		}
		r->buf = krcl_map(r->len);
		if (!r->buf) {
			krcl_answer(s, &e->key, h, KRC_RPC_GRANT, EBUSY, NULL);
			return;
		}
		if (krc_reg_mr(s->vq, r->buf, krcl_reg_len(r->buf, r->len),
			       KRCORE_ACCESS_LOCAL_WRITE |
			       KRCORE_ACCESS_REMOTE_WRITE, &r->mr)) {
			krcl_unmap(r->buf, r->len);
			r->buf = NULL;
			krcl_answer(s, &e->key, h, KRC_RPC_GRANT, EBUSY, NULL);
			return;
		}
		r->mr_ok = true;
		r->state = KRCL_R_GRANTED;
		s->granted += r->len;
		s->st.grants++;
	}
	krcl_answer(s, &e->key, h, KRC_RPC_GRANT, 0, r);
}

static void krcl_enqueue(struct krc_srv *s, struct krcl_sreq *q)
{
	s->st.run++;
	q->next = NULL;
	if (s->tail)
		s->tail->next = q;
	else
		s->head = q;
	s->tail = q;
}

static struct krcl_sreq *krcl_sreq_new(const struct krc_rpc_key *key,
				       uint32_t si, const struct krc_rpc_hdr *h)
{
	struct krcl_sreq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->key = *key;
	q->sess = si;
	q->slot = h->slot;
	q->seq = h->seq;
	q->pub.method = h->method;
	q->pub.oneway = !!(h->flags & KRC_RPC_F_ONEWAY);
	q->pub.reply_cap = h->reply_cap;
	memcpy(q->pub.src_gid, key->gid, 16);
	q->pub.src_port = key->port;
	return q;
}

/* The large request was written: hand it out, the caller's key dropped. */
static void krcl_written(struct krc_srv *s, struct krcl_sess_ext *e,
			 uint32_t si, struct krcl_rec *r,
			 const struct krc_rpc_hdr *h)
{
	struct krcl_sreq *q = krcl_sreq_new(&e->key, si, h);

	if (!q)
		return;		/* sent again later */
	krc_dereg_mr(s->vq, &r->mr);
	r->mr_ok = false;
	s->granted -= r->len;
	q->buf = r->buf;
	q->buf_len = r->len;
	q->mapped = true;
	q->pub.data = q->buf;
	q->pub.len = r->len;
	r->buf = NULL;
	r->len = 0;
	r->state = KRCL_R_RUNNING;
	krcl_enqueue(s, q);
}

static void krcl_on_call(struct krc_srv *s, const struct krc_rpc_key *key,
			 const struct krc_rpc_hdr *h, const uint8_t *data)
{
	enum krc_rpc_verdict v;
	struct krcl_sess_ext *e;
	struct krcl_sreq *q;
	struct krcl_rec *r;
	uint32_t si;

	if (h->instance && h->instance != s->instance) {
		/* Meant for this port's server before this one: not run. */
		s->st.refused++;
		if (!(h->flags & KRC_RPC_F_ONEWAY))
			krcl_answer(s, key, h, KRC_RPC_REPLY, ECONNRESET, NULL);
		return;
	}
	v = krc_rpc_admit(&s->sessions, key, h, krcl_now_ms(), &si);
	if (v == KRC_RPC_FULL) {
		s->st.refused++;
		if (!(h->flags & KRC_RPC_F_ONEWAY))
			krcl_answer(s, key, h, KRC_RPC_REPLY, EBUSY, NULL);
		return;
	}
	e = krcl_ext(s, si, key);
	r = e->rec[h->slot];
	if (r && r->seq != h->seq && v != KRC_RPC_OLD) {
		krcl_rec_free(s, r);	/* the slot's earlier call is over */
		e->rec[h->slot] = NULL;
		r = NULL;
	}
	switch (v) {
	case KRC_RPC_RUN:
		if (h->flags & KRC_RPC_F_WRITTEN) {
			/* Written into a grant this server never made. */
			krcl_refuse(s, e, si, h, EPROTO);
			return;
		}
		if (h->flags & KRC_RPC_F_LARGE) {
			if (h->total_len > s->o.max_req) {
				krcl_refuse(s, e, si, h, EMSGSIZE);
				return;
			}
			r = calloc(1, sizeof(*r));
			if (!r)
				return;	/* it comes again */
			r->seq = h->seq;
			r->state = KRCL_R_WAIT_GRANT;
			r->len = h->total_len;
			e->rec[h->slot] = r;
			krcl_grant(s, e, r, h);
			return;
		}
		if (h->total_len > s->o.max_req) {
			krcl_refuse(s, e, si, h, EMSGSIZE);
			return;
		}
		r = calloc(1, sizeof(*r));
		if (!r) {
			krcl_refuse(s, e, si, h, ENOMEM);
			return;
		}
		q = krcl_sreq_new(key, si, h);
		if (q && h->inline_len) {
			q->buf = malloc(h->inline_len);
			if (q->buf)
				memcpy(q->buf, data, h->inline_len);
		}
		if (!q || (h->inline_len && !q->buf)) {
			if (q)
				free(q->buf);
			free(q);
			free(r);
			krcl_refuse(s, e, si, h, ENOMEM);
			return;
		}
		q->buf_len = h->inline_len;
		q->pub.data = q->buf;
		q->pub.len = h->inline_len;
		r->seq = h->seq;
		r->state = KRCL_R_RUNNING;
		e->rec[h->slot] = r;
		krcl_enqueue(s, q);
		return;
	case KRC_RPC_BUSY:
		s->st.dup_running += !(h->flags & KRC_RPC_F_WRITTEN);
		if (!r)
			return;
		if ((h->flags & KRC_RPC_F_LARGE) &&
		    (r->state == KRCL_R_WAIT_GRANT || r->state == KRCL_R_GRANTED))
			krcl_grant(s, e, r, h);
		else if ((h->flags & KRC_RPC_F_WRITTEN) &&
			 r->state == KRCL_R_GRANTED)
			krcl_written(s, e, si, r, h);
		return;
	case KRC_RPC_RESEND:
		s->st.dup_done++;
		/* Its reply again (not a remote one the caller has read). */
		if (r && r->state == KRCL_R_REPLIED &&
		    (!(r->reply.flags & KRC_RPC_F_REMOTE) || r->buf))
			krcl_srv_send(s, key, &r->reply, r->inl,
				      r->reply.inline_len);
		return;
	default:
		s->st.old++;
		return;		/* OLD */
	}
}

static void krcl_on_msg(struct krc_srv *s, const struct krc_msg *m)
{
	struct krc_rpc_key key;
	struct krcl_sess_ext *e;
	struct krc_rpc_hdr h;
	struct krcl_rec *r;

	if (krc_rpc_decode(m->data, m->len, &h)) {
		s->st.bad++;
		return;
	}
	memset(&key, 0, sizeof(key));
	memcpy(key.gid, m->src_gid, 16);
	key.port = m->src_port;
	key.epoch = h.epoch;
	if (h.type == KRC_RPC_CALL) {
		if (!key.port)
			return;	/* from a VQ with no port: no way to answer */
		krcl_on_call(s, &key, &h, (const uint8_t *)m->data +
			     KRC_RPC_HDR_SIZE);
		return;
	}
	if (h.type != KRC_RPC_CANCEL && h.type != KRC_RPC_ACK)
		return;
	e = krcl_ext_find(s, &key);
	r = e ? e->rec[h.slot] : NULL;
	if (!r || r->seq != h.seq)
		return;
	/* The caller has the reply, or gave up: the memory for it goes. */
	if (h.type == KRC_RPC_ACK && r->state == KRCL_R_REPLIED && r->buf) {
		krc_dereg_mr(s->vq, &r->mr);
		r->mr_ok = false;
		krcl_unmap(r->buf, r->len);
		r->buf = NULL;
	} else if (h.type == KRC_RPC_CANCEL &&
		   (r->state == KRCL_R_WAIT_GRANT ||
		    r->state == KRCL_R_GRANTED)) {
		krcl_rec_free(s, r);
		e->rec[h.slot] = NULL;
	}
}

static void krcl_srv_progress(struct krc_srv *s)
{
	struct epoll_event ev;
	struct krc_msg m;
	unsigned int i;

	while (krc_qpop_msg(s->vq, &m) == 1) {
		krcl_on_msg(s, &m);
		krc_qmsg_done(s->vq);
	}
	for (i = 0; i < KRCL_SRV_LINKS; i++) {
		struct krcl_peer *p = &s->peer[i];

		if (!p->open)
			continue;
		krcl_link_progress(&p->link, NULL, NULL);
		if (p->link.error) {
			krcl_peer_close(s, p);
			continue;
		}
		if (krcl_link_pending(&p->link) != p->wrband) {
			p->wrband = !p->wrband;
			ev.events = EPOLLIN | (p->wrband ? EPOLLWRBAND : 0);
			ev.data.u32 = i + 1;
			epoll_ctl(s->efd, EPOLL_CTL_MOD, krc_vq_fd(p->link.vq),
				  &ev);
		}
	}
}

/* Links whose VQ hung up (their node went away) are closed. */
static void krcl_srv_hangups(struct krc_srv *s, const struct epoll_event *ev,
			     int n)
{
	int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < n; i++) {
		uint32_t k = ev[i].data.u32;

		if (k && k <= KRCL_SRV_LINKS && s->peer[k - 1].open &&
		    ev[i].events & (EPOLLHUP | EPOLLERR))
			krcl_peer_close(s, &s->peer[k - 1]);
	}
	pthread_mutex_unlock(&s->lock);
}

int krc_srv_next(struct krc_srv *s, struct krc_req **reqp, int timeout_ms)
{
	uint64_t end = krcl_now_ms() + (timeout_ms < 0 ? 0 : (uint64_t)timeout_ms);
	struct epoll_event ev[4];
	struct krcl_sreq *q;
	uint64_t now;
	int n;

	for (;;) {
		pthread_mutex_lock(&s->lock);
		krcl_srv_progress(s);
		q = s->head;
		if (q) {
			s->head = q->next;
			if (!s->head)
				s->tail = NULL;
		}
		pthread_mutex_unlock(&s->lock);
		if (q) {
			*reqp = &q->pub;
			return 1;
		}
		now = krcl_now_ms();
		if (!timeout_ms || (timeout_ms > 0 && now >= end))
			return 0;
		n = epoll_wait(s->efd, ev, 4, timeout_ms < 0 ? 100 :
			       (int)(end - now < 100 ? end - now : 100));
		if (n < 0 && errno == EINTR)
			return krcl_fail(-EINTR, "interrupted");
		krcl_srv_hangups(s, ev, n);
	}
}

void *krc_srv_reply_buf(struct krc_srv *s, struct krc_req *req, size_t len)
{
	struct krcl_sreq *q = (struct krcl_sreq *)req;

	if (q->rbuf || !len || len > KRC_RPC_MAX_PAYLOAD)
		return NULL;
	q->rbuf = krcl_map(len);
	if (!q->rbuf)
		return NULL;
	q->rbuf_len = len;
	return q->rbuf;
}

static void krcl_sreq_free(struct krcl_sreq *q)
{
	if (q->mapped)
		krcl_unmap(q->buf, q->buf_len);
	else
		free(q->buf);
	if (q->rbuf)
		krcl_unmap(q->rbuf, q->rbuf_len);
	free(q);
}

/* Under the lock: @q's reply (@status, @data) goes and is kept in @r. */
static int krcl_reply(struct krc_srv *s, struct krcl_sreq *q,
		      struct krcl_rec *r, int status, const void *data,
		      size_t len)
{
	struct krc_rpc_hdr *h = &r->reply;
	size_t reg;
	int ret;

	memset(h, 0, sizeof(*h));
	h->type = KRC_RPC_REPLY;
	h->epoch = q->key.epoch;
	h->slot = q->slot;
	h->seq = q->seq;
	h->instance = s->instance;
	if (!status && len > q->pub.reply_cap)
		status = EMSGSIZE;
	h->method = (uint32_t)status;
	if (!status && len > KRCL_RPC_INLINE) {
		/* The caller READs it from here, then says ACK. */
		if (q->rbuf && data == q->rbuf && len <= q->rbuf_len) {
			r->buf = q->rbuf;
			r->len = q->rbuf_len;
			q->rbuf = NULL;
		} else {
			r->buf = krcl_map(len);
			if (!r->buf)
				return krcl_fail(-ENOMEM, "no memory for the reply");
			r->len = len;
			memcpy(r->buf, data, len);
		}
		/*
		 * The caller may READ up to the registration's end: what
		 * the server left after the reply in its buffer goes.
		 */
		reg = krcl_reg_len(r->buf, len);
		if (reg > len && r->len > len)
			memset((uint8_t *)r->buf + len, 0,
			       r->len - len < reg - len ? r->len - len :
			       reg - len);
		ret = krc_reg_mr(s->vq, r->buf, reg, KRCORE_ACCESS_REMOTE_READ,
				 &r->mr);
		if (ret) {
			krcl_unmap(r->buf, r->len);
			r->buf = NULL;
			return ret;
		}
		r->mr_ok = true;
		h->flags = KRC_RPC_F_REMOTE;
		h->addr = (uintptr_t)r->buf;
		h->rkey = r->mr.rkey;
		h->total_len = len;
	} else if (!status && len) {
		r->inl = malloc(len);
		if (!r->inl)
			return krcl_fail(-ENOMEM, "no memory for the reply");
		memcpy(r->inl, data, len);
		h->inline_len = (uint32_t)len;
		h->total_len = len;
	}
	r->state = KRCL_R_REPLIED;
	return krcl_srv_send(s, &q->key, h, r->inl, h->inline_len);
}

int krc_srv_reply(struct krc_srv *s, struct krc_req *req, int status,
		  const void *data, size_t len)
{
	struct krcl_sreq *q = (struct krcl_sreq *)req;
	struct krcl_sess_ext *e;
	struct krcl_rec *r;
	int ret = 0;

	if (status < 0 || status > KRC_RPC_MAX_STATUS || (len && !data))
		return krcl_fail(-EINVAL, "status 0..%d, data for a length",
				 KRC_RPC_MAX_STATUS);
	pthread_mutex_lock(&s->lock);
	e = &s->ext[q->sess];
	r = e->rec[q->slot];
	/* Still this caller's session and call (not given up, not reused)? */
	if (!memcmp(&e->key, &q->key, sizeof(q->key)) && r &&
	    r->seq == q->seq && r->state == KRCL_R_RUNNING) {
		krc_rpc_done(&s->sessions, q->sess, q->slot, q->seq);
		if (q->pub.oneway) {
			krcl_rec_free(s, r);
			e->rec[q->slot] = NULL;
		} else {
			ret = krcl_reply(s, q, r, status, data, len);
			if (ret && r->state != KRCL_R_REPLIED) {
				/* Not kept as asked: the caller gets why. */
				krcl_reply(s, q, r, ret == -ENOMEM ? ENOMEM : EIO,
					   NULL, 0);
			}
		}
	}
	krcl_srv_progress(s);
	pthread_mutex_unlock(&s->lock);
	krcl_sreq_free(q);
	return ret;
}

void krc_srv_stats(struct krc_srv *s, struct krc_srv_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	pthread_mutex_unlock(&s->lock);
}

void krc_srv_close(struct krc_srv *s)
{
	struct krcl_sreq *q;
	unsigned int i, k;

	if (!s)
		return;
	while (s->head) {
		q = s->head;
		s->head = q->next;
		krcl_sreq_free(q);
	}
	for (i = 0; i < KRCL_SRV_LINKS; i++)
		if (s->peer[i].open)
			krcl_peer_close(s, &s->peer[i]);
	for (i = 0; i < s->o.sessions; i++)
		for (k = 0; k < KRC_RPC_MAX_SLOTS; k++)
			krcl_rec_free(s, s->ext[i].rec[k]);
	krc_vq_close(s->vq);
	close(s->efd);
	free(s->sess);
	free(s->ext);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
