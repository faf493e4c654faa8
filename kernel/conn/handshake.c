// SPDX-License-Identifier: GPL-2.0
/*
 * handshake.c - connecting a pair of pooled RC QPs without rdma_cm.
 *
 *   A (active)                                 B (passive)
 *   take a spare QP (INIT)
 *   CONNECT_REQ {card A, qpn, psn, B's incarnation as A knows it} --->
 *                                     incarnation wrong: CONNECT_NAK ESTALE
 *                                     take a spare, RTR + RTS -> HALF_OPEN
 *   <--- CONNECT_REP {card B, qpn, psn}
 *   RTR + RTS -> READY, qconnect returns
 *   RTU ---------------------------------------> HALF_OPEN -> READY
 *   <--- RTU_ACK
 *
 * Lost datagrams: A repeats its REQ (same request id, same QP) with
 * exponential backoff until hs_retries; B answers a repeated REQ with the
 * same REP (it finds the connection by A's QPN and incarnation). A repeats
 * the RTU (in the background) until acknowledged. B never sends on a
 * HALF_OPEN connection; one that gets no RTU expires and is destroyed.
 * A dead peer: A gives up after its retries (ETIMEDOUT) and destroys its
 * QP. Simultaneous connects from both ends: each side serves the other's
 * REQ as passive while its own completes as active; both pairs work and
 * both join the pools. A node that reloads says GOODBYE to the nodes it
 * knows, which then drop every connection to its old incarnation.
 */
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "conn/conn.h"

struct krc_hs {
	struct list_head node;		/* on krc_hs_pending */
	u64 req_id;
	struct krc_peer *peer;
	u32 qpn;			/* our QP */
	struct completion done;
	int status;			/* 0: reply holds the REP */
	struct krc_ctrl_msg reply;
};

static LIST_HEAD(krc_hs_pending);
static DEFINE_SPINLOCK(krc_hs_lock);
static atomic_t krc_hs_half_open = ATOMIC_INIT(0);	/* all peers */

void krc_hs_fill(struct krc_ctrl_msg *msg, u8 type, u64 req_id)
{
	memset(msg, 0, sizeof(*msg));
	msg->type = type;
	msg->req_id = req_id;
	msg->card = krc_node.card;
	msg->probe_addr = krc_node.page_mr ? krc_node.page_mr->iova : 0;
	msg->probe_rkey = krc_node.page_mr ? krc_node.page_mr->rkey : 0;
	msg->probe_len = krc_node.page_mr ? KRC_NODE_AREA : 0;
}

static void krc_conn_set_probe(struct krc_conn *conn, const struct krc_ctrl_msg *msg)
{
	conn->remote_incarnation = msg->card.incarnation;
	conn->probe_addr = msg->probe_addr;
	conn->probe_rkey = msg->probe_rkey;
	conn->probe_len = msg->probe_len;
}

/* The REQ for @hs, naming the incarnation of @peer we know. */
static void krc_hs_build_req(struct krc_hs *hs, struct krc_conn *conn,
			     struct krc_ctrl_msg *req)
{
	krc_hs_fill(req, KRC_MSG_CONNECT_REQ, hs->req_id);
	spin_lock(&hs->peer->lock);
	req->dst_incarnation = hs->peer->card.incarnation;
	spin_unlock(&hs->peer->lock);
	req->qpn = conn->qpn;
	req->psn = conn->psn;
	if (READ_ONCE(krc_fault_hs_bad_incarnation) > 0) {
		WRITE_ONCE(krc_fault_hs_bad_incarnation,
			   krc_fault_hs_bad_incarnation - 1);
		req->dst_incarnation = ~req->dst_incarnation;
	}
}

/*
 * Re-read @peer's card from the MetaServer (the cached one went
 * unanswered or was refused as stale). True if the card changed.
 */
static bool krc_hs_refresh(struct krc_peer *peer, struct krc_hs_opts *o)
{
	struct krcore_card card;
	u64 old;
	int ret;

	spin_lock(&peer->lock);
	old = peer->card.incarnation;
	spin_unlock(&peer->lock);
	ret = krc_meta_lookup(peer->gid, &card, &o->reads);
	if (ret) {
		o->lookup_error = ret;
		return false;
	}
	o->looked_up = true;
	krc_peer_set_card(peer, &card);
	if (card.incarnation == old)
		return false;
	o->refreshed = true;
	return true;
}

/*
 * Connect a new pooled connection to @peer (whose card is cached) before
 * o->deadline: one spare QP, one request repeated with backoff until
 * answered. With o->verify_card, a first request that goes unanswered, or
 * one refused as stale, makes us READ the card again: a peer that
 * reloaded has new QPNs, and the request goes on to the new ones. On
 * success the connection is READY, in @peer's pool, and *connp holds an
 * extra reference for the caller.
 */
int krc_hs_connect(struct krc_peer *peer, struct krc_hs_opts *o,
		   struct krc_conn **connp)
{
	unsigned long rto = msecs_to_jiffies(krc_param_hs_timeout_ms);
	bool answered = false, verified = !o->verify_card;
	int tries = 0, ret = -ETIMEDOUT;
	long left;
	u64 t = ktime_get_ns(), sent = 0;
	struct krc_conn *conn;
	struct krc_ctrl_msg req;
	struct krc_hs *hs;

	if (time_after_eq(jiffies, o->deadline))
		return -ETIMEDOUT;
	/* A place under the RC cap; the first one to a peer may evict. */
	ret = krc_rc_reserve(peer, !READ_ONCE(peer->nconns), o->deadline);
	if (ret)
		return ret;
	conn = krc_spare_take(jiffies_to_msecs(o->deadline - jiffies));
	if (!conn) {
		krc_rc_unreserve();
		return READ_ONCE(krc_node.up) ? -EAGAIN : -ENODEV;
	}
	krc_rc_counted(conn);	/* the place goes with the connection */
	o->t_spare = ktime_get_ns() - t;
	hs = kzalloc(sizeof(*hs), GFP_KERNEL);
	if (!hs) {
		krc_conn_kill(conn);
		krc_conn_put(conn);
		krc_spares_refill();
		return -ENOMEM;
	}
	conn->initiator = true;
	conn->state = KRC_CONN_CONNECTING;
	/* Unpredictable: only the node we asked can answer. */
	hs->req_id = get_random_u64();
	hs->peer = peer;
	hs->qpn = conn->qpn;
	init_completion(&hs->done);
	krc_hs_build_req(hs, conn, &req);

	spin_lock_bh(&krc_hs_lock);
	list_add(&hs->node, &krc_hs_pending);
	spin_unlock_bh(&krc_hs_lock);

	while (tries <= krc_param_hs_retries &&
	       time_before(jiffies, o->deadline)) {
		t = ktime_get_ns();
		ret = krc_peer_send(peer, &req);
		if (ret == -ENXIO)
			break;
		if (!sent) {
			sent = ktime_get_ns();
			o->t_send = sent - t;
		}
		o->attempts++;
		krc_event(tries++ ? KRC_EV_HS_RETRANSMITS : KRC_EV_HS_REQ_SENT);
		left = wait_for_completion_killable_timeout(&hs->done,
							    min(rto, o->deadline - jiffies));
		if (left < 0) {
			ret = -EINTR;	/* killed: give up at once */
			break;
		}
		if (left) {
			answered = true;
			if (hs->status != -ESTALE || verified)
				break;
			/* Refused as stale: READ the card, ask again. */
			answered = false;
		} else {
			rto = min(rto * 2, msecs_to_jiffies(2000));
			if (verified)
				continue;
		}
		verified = true;
		if (krc_hs_refresh(peer, o) || hs->status == -ESTALE) {
			spin_lock_bh(&krc_hs_lock);
			reinit_completion(&hs->done);
			hs->status = 0;
			spin_unlock_bh(&krc_hs_lock);
			krc_hs_build_req(hs, conn, &req);
			tries = 0;
		}
	}
	spin_lock_bh(&krc_hs_lock);
	list_del(&hs->node);
	/* An answer between the last timeout and the removal counts too. */
	if (completion_done(&hs->done))
		answered = true;
	spin_unlock_bh(&krc_hs_lock);

	if (!answered) {
		krc_event(KRC_EV_HS_TIMEOUTS);
		if (ret != -ENXIO && ret != -EINTR)
			ret = -ETIMEDOUT;
	} else if (hs->status) {
		ret = hs->status;
	} else {
		const struct krc_ctrl_msg *rep = &hs->reply;

		t = ktime_get_ns();
		o->t_rtt = sent ? t - sent : 0;
		ret = krc_conn_rtr_rts(conn, &rep->card, rep->qpn, rep->psn);
		o->t_qp = ktime_get_ns() - t;
		if (!ret) {
			krc_conn_set_probe(conn, rep);
			krc_peer_set_card(peer, &rep->card);
			conn->state = KRC_CONN_READY;
			ret = krc_peer_attach(peer, conn);
		}
		if (!ret) {
			kref_get(&conn->ref);	/* the caller's */
			conn->rtu_tries = 0;
			queue_delayed_work(krc_wq, &conn->rtu_work, 0);
			krc_event(KRC_EV_HS_CONNECTED);
			*connp = conn;
			kfree(hs);
			krc_spares_refill();
			return 0;
		}
	}
	kfree(hs);
	/* The peer may hold a HALF_OPEN QP pointing at this one: never reuse. */
	krc_conn_kill(conn);
	krc_conn_put(conn);
	krc_spares_refill();
	return ret;
}

/* The initiator repeats its RTU until the peer acknowledges it. */
void krc_hs_rtu_work(struct work_struct *work)
{
	struct krc_conn *conn = container_of(to_delayed_work(work),
					     struct krc_conn, rtu_work);
	struct krc_ctrl_msg msg = {};

	if (conn->rtu_acked || !conn->peer || READ_ONCE(conn->dead))
		return;
	if (conn->rtu_tries++ >= krc_param_hs_retries) {
		krc_event(KRC_EV_HS_RTU_GIVEUP);
		return;
	}
	msg.type = KRC_MSG_RTU;
	msg.card = krc_node.card;
	msg.qpn = conn->qpn;
	msg.peer_qpn = conn->remote_qpn;
	if (!krc_peer_send(conn->peer, &msg))
		krc_event(KRC_EV_HS_RTU_SENT);
	queue_delayed_work(krc_wq, &conn->rtu_work,
			   msecs_to_jiffies(krc_param_hs_timeout_ms <<
					    min(conn->rtu_tries, 4)));
}

/* Answer to @to: a reply about our connection @conn (NULL for NAKs). */
static void krc_hs_answer(struct krc_peer *to, u8 type, u64 req_id,
			  struct krc_conn *conn, u32 peer_qpn, int status)
{
	struct krc_ctrl_msg msg;

	krc_hs_fill(&msg, type, req_id);
	msg.status = status;
	msg.peer_qpn = peer_qpn;
	if (conn) {
		msg.qpn = conn->qpn;
		msg.psn = conn->psn;
	}
	if (!krc_peer_send(to, &msg))
		krc_event(type == KRC_MSG_CONNECT_NAK ? KRC_EV_HS_NAK_SENT :
			  type == KRC_MSG_CONNECT_REP ? KRC_EV_HS_REP_SENT :
			  KRC_EV_HS_RTU_ACK_SENT);
}

/* @conn leaves HALF_OPEN (expired, its RTU came, or it goes). */
void krc_hs_half_open_done(struct krc_conn *conn)
{
	if (xchg(&conn->half_open_counted, false)) {
		atomic_dec(&krc_hs_half_open);
		if (conn->peer)
			atomic_dec(&conn->peer->half_open);
	}
}

/*
 * Does @card, carried by a message that came from the QP it names, match
 * what we know of its node (the card we cached)? Replies, RTUs and
 * goodbyes must come from the control QP of the incarnation we know.
 */
static bool krc_hs_card_known(struct krc_peer *peer,
			      const struct krcore_card *card)
{
	bool ok;

	spin_lock(&peer->lock);
	ok = peer->card_valid && peer->card.ud_qpn == card->ud_qpn &&
	     peer->card.incarnation == card->incarnation;
	spin_unlock(&peer->lock);
	return ok;
}

/*
 * May the card of a REQ (it came from the QP it names, ctrl.c) become
 * the card we cache for its node (@peer: what we know of it, NULL:
 * nothing)? The same card: yes. A different one (the node reloaded, or a
 * process of that node speaks for it from a QP of its own) or a node we
 * do not know: only if the MetaServer holds that very card (one READ,
 * within source.c's limits). Without a reachable MetaServer a first card
 * is taken as it is: the REQ carried the cluster key's MAC (ctrl.c), so
 * a kernel of the cluster vouches for it (docs/trust-model.md).
 */
static bool krc_hs_card_verified(struct krc_peer *peer,
				 const struct krcore_card *card, u64 *read_ns)
{
	struct krcore_card known, meta;
	bool valid = false;
	u32 reads = 0;
	int ret;
	u64 t;

	if (peer) {
		spin_lock(&peer->lock);
		valid = peer->card_valid;
		known = peer->card;
		spin_unlock(&peer->lock);
		if (valid && !memcmp(&known, card, sizeof(known)))
			return true;
	}
	t = ktime_get_ns();
	ret = krc_src_lookup(peer, card->gid, &meta, &reads);
	*read_ns = ktime_get_ns() - t;
	if (!ret) {
		if (!memcmp(&meta, card, sizeof(meta)))
			return true;
		if (!valid)
			krc_src_miss(card->gid);	/* not that node's QP */
		return false;
	}
	return !valid && ret == -EHOSTUNREACH && krc_key();
}

/* A HALF_OPEN connection that never got its RTU is given up. */
static void krc_hs_expire_work(struct work_struct *work)
{
	struct krc_conn *conn = container_of(to_delayed_work(work),
					     struct krc_conn, rtu_work);

	if (conn->state != KRC_CONN_HALF_OPEN || atomic_read(&conn->nvqs))
		return;
	krc_hs_half_open_done(conn);
	krc_event(KRC_EV_HS_HALF_OPEN_EXPIRED);
	krc_conn_set_error(conn);
	/* The pool's reference; the kill (which cancels this work) runs
	 * from the release, in another work item.
	 */
	if (krc_peer_detach(conn))
		krc_conn_put(conn);
}

/* Is a handshake of ours to the node of @gid under way? */
static bool krc_hs_pending_to(const u8 gid[16])
{
	struct krc_hs *hs;
	bool found = false;

	spin_lock_bh(&krc_hs_lock);
	list_for_each_entry(hs, &krc_hs_pending, node)
		if (!memcmp(hs->peer->gid, gid, 16))
			found = true;
	spin_unlock_bh(&krc_hs_lock);
	return found;
}

static void krc_hs_on_req(const struct krc_ctrl_msg *msg)
{
	u64 start = ktime_get_ns(), verify_ns = 0, qp_ns;
	struct krc_peer *peer;
	struct krc_conn *conn;
	int ret;

	krc_event(KRC_EV_HS_REQ_RECV);
	/* Both ends connecting at once: each serves the other's request. */
	if (krc_hs_pending_to(msg->card.gid))
		krc_event(KRC_EV_HS_CROSSED);
	peer = krc_peer_get(msg->card.gid, false);
	if (peer && peer->local)
		goto out;
	/*
	 * The REQ names a QP of the node: news of it, once verified. Of a
	 * sender that does not pass, nothing is kept.
	 */
	if (!krc_hs_card_verified(peer, &msg->card, &verify_ns)) {
		krc_event(KRC_EV_HS_UNVERIFIED);
		pr_warn_ratelimited("krcore: a REQ with a card the MetaServer does not hold (or not now), dropped\n");
		goto out;
	}
	if (!peer) {
		peer = krc_peer_get(msg->card.gid, true);
		if (IS_ERR(peer))
			return;
	}
	krc_peer_set_card(peer, &msg->card);
	if (msg->dst_incarnation && msg->dst_incarnation != krc_incarnation) {
		krc_event(KRC_EV_HS_STALE);
		krc_hs_answer(peer, KRC_MSG_CONNECT_NAK, msg->req_id, NULL,
			      msg->qpn, ESTALE);
		goto out;
	}
	/* A repeated REQ (our REP was lost): the same answer again. */
	conn = krc_peer_find_conn(peer, 0, msg->qpn, msg->card.incarnation);
	if (conn) {
		krc_event(KRC_EV_HS_DUP_REQ);
		krc_hs_answer(peer, KRC_MSG_CONNECT_REP, msg->req_id, conn,
			      msg->qpn, 0);
		krc_conn_put(conn);
		goto out;
	}
	/* Half-open connections are bounded, per peer and in all. */
	if (atomic_read(&krc_hs_half_open) >= krc_param_max_half_open ||
	    atomic_read(&peer->half_open) >= krc_param_max_half_open_per_peer) {
		krc_event(KRC_EV_HS_REFUSED_CAP);
		krc_hs_answer(peer, KRC_MSG_CONNECT_NAK, msg->req_id, NULL,
			      msg->qpn, EBUSY);
		goto out;
	}
	/* At the RC cap: refused; an idle one is closed for the retry. */
	if (krc_rc_reserve(peer, false, 0)) {
		krc_rc_evict_async();
		krc_hs_answer(peer, KRC_MSG_CONNECT_NAK, msg->req_id, NULL,
			      msg->qpn, ENOSPC);
		goto out;
	}
	conn = krc_spare_take(krc_param_hs_timeout_ms);
	if (!conn) {
		krc_rc_unreserve();
		krc_hs_answer(peer, KRC_MSG_CONNECT_NAK, msg->req_id, NULL,
			      msg->qpn, EBUSY);
		goto out;
	}
	krc_rc_counted(conn);
	qp_ns = ktime_get_ns();
	ret = krc_conn_rtr_rts(conn, &msg->card, msg->qpn, msg->psn);
	qp_ns = ktime_get_ns() - qp_ns;
	if (ret) {
		krc_hs_answer(peer, KRC_MSG_CONNECT_NAK, msg->req_id, NULL,
			      msg->qpn, EIO);
		krc_conn_kill(conn);
		krc_conn_put(conn);
		goto out;
	}
	krc_conn_set_probe(conn, msg);
	conn->initiator = false;
	conn->state = KRC_CONN_HALF_OPEN;
	INIT_DELAYED_WORK(&conn->rtu_work, krc_hs_expire_work);
	if (krc_peer_attach(peer, conn)) {
		krc_conn_kill(conn);
		krc_conn_put(conn);
		goto out;
	}
	conn->half_open_counted = true;
	atomic_inc(&krc_hs_half_open);
	atomic_inc(&peer->half_open);
	krc_hs_answer(peer, KRC_MSG_CONNECT_REP, msg->req_id, conn, msg->qpn, 0);
	/* A first contact from that node (its card was verified): timed. */
	if (verify_ns) {
		krc_event(KRC_EV_FC_ACCEPTS);
		krc_event_add(KRC_EV_FC_VERIFY_NS, verify_ns);
		krc_event_add(KRC_EV_FC_ACCEPT_QP_NS, qp_ns);
		krc_event_add(KRC_EV_FC_ACCEPT_NS, ktime_get_ns() - start);
	}
	/* As long as the initiator may still retry, never longer. */
	queue_delayed_work(krc_wq, &conn->rtu_work,
			   msecs_to_jiffies(krc_param_hs_timeout_ms <<
					    min(krc_param_hs_retries + 2, 12U)));
out:
	krc_spares_refill();	/* the REP is out: make up for the spare */
	krc_peer_put(peer);
}

/* Wake the handshake @msg answers; false if none waits for it. */
static bool krc_hs_reply_match(const struct krc_ctrl_msg *msg)
{
	struct krc_hs *hs, *found = NULL;

	spin_lock_bh(&krc_hs_lock);
	list_for_each_entry(hs, &krc_hs_pending, node) {
		if (hs->req_id == msg->req_id && hs->qpn == msg->peer_qpn &&
		    !memcmp(hs->peer->gid, msg->card.gid, 16) &&
		    hs->peer->card.ud_qpn == msg->card.ud_qpn &&
		    !completion_done(&hs->done)) {
			found = hs;
			if (msg->type == KRC_MSG_CONNECT_REP) {
				hs->reply = *msg;
				hs->status = 0;
			} else {
				hs->status = -(int)msg->status;
			}
			complete(&hs->done);
			break;
		}
	}
	spin_unlock_bh(&krc_hs_lock);
	return found;
}

static void krc_hs_on_reply(const struct krc_ctrl_msg *msg)
{
	struct krc_peer *peer;
	struct krc_conn *conn;

	krc_event(msg->type == KRC_MSG_CONNECT_REP ? KRC_EV_HS_REP_RECV :
		  KRC_EV_HS_NAK_RECV);
	if (krc_hs_reply_match(msg) || msg->type != KRC_MSG_CONNECT_REP)
		return;

	/* A repeated REP: the RTU was lost or is late; send it again. */
	peer = krc_peer_get(msg->card.gid, false);
	if (!peer)
		return;
	if (!krc_hs_card_known(peer, &msg->card)) {
		krc_event(KRC_EV_HS_STRAY);
		krc_peer_put(peer);
		return;
	}
	conn = krc_peer_find_conn(peer, msg->peer_qpn, msg->qpn,
				  msg->card.incarnation);
	if (conn && conn->initiator && conn->state == KRC_CONN_READY) {
		conn->rtu_acked = false;
		conn->rtu_tries = 0;
		mod_delayed_work(krc_wq, &conn->rtu_work, 0);
	} else {
		krc_event(KRC_EV_HS_STRAY);
	}
	krc_conn_put(conn);
	krc_peer_put(peer);
}

static void krc_hs_on_rtu(const struct krc_ctrl_msg *msg)
{
	struct krc_peer *peer = krc_peer_get(msg->card.gid, false);
	struct krc_conn *conn;

	if (!peer)
		return;
	conn = krc_hs_card_known(peer, &msg->card) ?
	       krc_peer_find_conn(peer, msg->peer_qpn, msg->qpn,
				  msg->card.incarnation) : NULL;
	if (conn) {
		if (msg->type == KRC_MSG_RTU) {
			krc_event(KRC_EV_HS_RTU_RECV);
			if (conn->state == KRC_CONN_HALF_OPEN) {
				cancel_delayed_work(&conn->rtu_work);
				krc_hs_half_open_done(conn);
				conn->state = KRC_CONN_READY;
			}
			krc_hs_answer(peer, KRC_MSG_RTU_ACK, msg->req_id, conn,
				      msg->qpn, 0);
		} else {
			conn->rtu_acked = true;
		}
		krc_conn_put(conn);
	} else {
		krc_event(KRC_EV_HS_STRAY);
	}
	krc_peer_put(peer);
}

/* CLOSE_REQ and CLOSE_REP (the RC cap, evict.c), from a known node. */
static void krc_hs_on_close(const struct krc_ctrl_msg *msg)
{
	struct krc_peer *peer = krc_peer_get(msg->card.gid, false);

	if (!peer)
		return;
	if (peer->local || !krc_hs_card_known(peer, &msg->card))
		krc_event(KRC_EV_HS_STRAY);
	else if (msg->type == KRC_MSG_CLOSE_REQ)
		krc_rc_on_close_req(peer, msg);
	else
		krc_rc_on_close_rep(peer, msg);
	krc_peer_put(peer);
}

static void krc_hs_on_goodbye(const struct krc_ctrl_msg *msg)
{
	struct krc_peer *peer = krc_peer_get(msg->card.gid, false);

	krc_event(KRC_EV_GOODBYE_RECV);
	if (!peer)
		return;
	/* Only the control QP of the incarnation we know says goodbye. */
	if (!krc_hs_card_known(peer, &msg->card))
		krc_event(KRC_EV_HS_STRAY);
	else if (!peer->local)
		krc_peer_forget_incarnation(peer, msg->card.incarnation);
	krc_peer_put(peer);
}

/*
 * A FLOW or MEM message (data/flow.c, data/lmr*.c, data/lock*.c): from a
 * node whose card we hold, or one the MetaServer vouches for (as a
 * REQ's), then to the data layer's handler @fn. A MEM message may come
 * from this node itself (remote memory here, used by a process here).
 */
static void krc_hs_on_upper(const struct krc_ctrl_msg *msg,
			    void (*fn)(struct krc_peer *peer,
				       const struct krc_ctrl_msg *msg))
{
	struct krc_peer *peer = krc_peer_get(msg->card.gid, false);
	u64 verify_ns;

	if (peer && peer->local && !krc_msg_is_mem(msg->type)) {
		krc_peer_put(peer);
		return;		/* to ourselves: the data layer takes a shortcut */
	}
	if (!krc_hs_card_verified(peer, &msg->card, &verify_ns)) {
		krc_event(KRC_EV_HS_UNVERIFIED);
		krc_peer_put(peer);
		return;
	}
	if (!peer) {
		peer = krc_peer_get(msg->card.gid, true);
		if (IS_ERR(peer))
			return;
	}
	krc_peer_set_card(peer, &msg->card);
	fn(peer, msg);
	krc_peer_put(peer);
}

/*
 * A decoded control message, as it arrives (softirq): the answer to a
 * handshake under way wakes it at once, without the hop to process
 * context. False: krc_hs_recv() must see it.
 */
bool krc_hs_recv_fast(const struct krc_ctrl_msg *msg)
{
	if ((msg->type != KRC_MSG_CONNECT_REP &&
	     msg->type != KRC_MSG_CONNECT_NAK) || !READ_ONCE(krc_node.up) ||
	    !krc_hs_reply_match(msg))
		return false;
	krc_event(msg->type == KRC_MSG_CONNECT_REP ? KRC_EV_HS_REP_RECV :
		  KRC_EV_HS_NAK_RECV);
	return true;
}

/* A decoded control message; process context, one at a time. */
void krc_hs_recv(const struct krc_ctrl_msg *msg)
{
	if (!READ_ONCE(krc_node.up))
		return;
	switch (msg->type) {
	case KRC_MSG_CONNECT_REQ:
		krc_hs_on_req(msg);
		break;
	case KRC_MSG_CONNECT_REP:
	case KRC_MSG_CONNECT_NAK:
		krc_hs_on_reply(msg);
		break;
	case KRC_MSG_RTU:
	case KRC_MSG_RTU_ACK:
		krc_hs_on_rtu(msg);
		break;
	case KRC_MSG_GOODBYE:
		krc_hs_on_goodbye(msg);
		break;
	case KRC_MSG_CLOSE_REQ:
	case KRC_MSG_CLOSE_REP:
		krc_hs_on_close(msg);
		break;
	case KRC_MSG_FLOW_ASK:
	case KRC_MSG_FLOW_GRANT:
		krc_hs_on_upper(msg, krc_conn_ops->flow_msg);
		break;
	default:
		if (krc_msg_is_mem(msg->type))
			krc_hs_on_upper(msg, krc_conn_ops->mem_msg);
		else
			krc_event(KRC_EV_CTRL_RX_BAD);
		break;
	}
}

/* Tell every node we know that this incarnation is going away. */
void krc_hs_goodbye_all(void)
{
	struct krc_peer **peers = krc_peers_snapshot();
	struct krc_ctrl_msg msg;
	int i;

	if (!peers)
		return;
	krc_hs_fill(&msg, KRC_MSG_GOODBYE, 0);
	for (i = 0; peers[i]; i++) {
		if (!peers[i]->local && READ_ONCE(peers[i]->card_valid) &&
		    !READ_ONCE(krc_fault_goodbye_off) &&
		    !krc_peer_send(peers[i], &msg))
			krc_event(KRC_EV_GOODBYE_SENT);
		krc_peer_put(peers[i]);
	}
	kfree(peers);
}

void krc_hs_exit(void)
{
	struct krc_hs *hs;

	/* Wake every waiter; they clean up after themselves. */
	spin_lock_bh(&krc_hs_lock);
	list_for_each_entry(hs, &krc_hs_pending, node) {
		if (!completion_done(&hs->done)) {
			hs->status = -ENODEV;
			complete(&hs->done);
		}
	}
	spin_unlock_bh(&krc_hs_lock);
}
