// SPDX-License-Identifier: GPL-2.0
/*
 * evict.c - the RC cap: a node keeps at most rc_max RC connections to
 * other nodes, whatever the size of the cluster.
 *
 * Every RC connection to another node (made by a handshake of ours or
 * accepted from a peer's) holds one place, taken before its handshake
 * starts and given back when it leaves its pool. When no place is free,
 * the first connection to a peer closes the least recently used idle
 * connection of the node (pool growth never does):
 *
 *   1. the candidate: ready, nothing posted on it, no request posted or
 *      completed for rc_idle_ms, its VQs (if any) can go on over
 *      datagrams (dg_policy > 0);
 *   2. it is marked closing (no VQ joins it any more) and each of its
 *      VQs, idle under its own lock, moves to the datagram path of its
 *      peer (send.c moves it back to RC once its peer has a connection
 *      again);
 *   3. CLOSE_REQ to the peer (repeated like a handshake request): the
 *      peer does the same with its end (its VQs idle, moved to its
 *      datagram path) and answers CLOSE_REP 0, or EBUSY if its end is in
 *      use; a repeated CLOSE_REQ for a connection already gone is
 *      answered 0 again;
 *   4. on 0 the connection leaves the pool and is destroyed: its place
 *      is free. No answer at all (the peer gone) closes ours all the
 *      same: it is idle. On EBUSY it is usable again and the next
 *      candidate is tried.
 *
 * Nothing is lost: a connection is only closed when neither end has a
 * request on it, and the VQs moved had none outstanding. A peer at its
 * cap refuses a handshake with ENOSPC and closes one of its own idle
 * connections in the background, so a later attempt finds room.
 */
#include <linux/jiffies.h>
#include <linux/random.h>
#include <linux/slab.h>

#include <linux/moduleparam.h>

#include "conn/conn.h"

atomic_t krc_rc_conns = ATOMIC_INIT(0);

/* A close of ours waiting for the peer's answer. */
struct krc_close {
	struct list_head node;
	u64 req_id;
	struct krc_peer *peer;
	u32 qpn;			/* our end */
	int status;			/* the answer: 0 or -errno */
	struct completion done;
};

static LIST_HEAD(krc_close_pending);
static DEFINE_SPINLOCK(krc_close_lock);

static void krc_rc_evict_work_fn(struct work_struct *work);
static DECLARE_WORK(krc_rc_evict_work, krc_rc_evict_work_fn);

/* One place among rc_max (no cap: always). */
static bool krc_rc_take(void)
{
	int max = (int)min_t(u32, READ_ONCE(krc_param_rc_max), INT_MAX);
	int cur = atomic_read(&krc_rc_conns);

	do {
		if (max && cur >= max)
			return false;
	} while (!atomic_try_cmpxchg(&krc_rc_conns, &cur, cur + 1));
	krc_obj_created(KRC_OBJ_RC_PLACE);
	/* The most places ever taken at once: what tests hold rc_max to. */
	krc_event_max(KRC_EV_RC_HIGH_WATER, cur + 1);
	return true;
}

void krc_rc_unreserve(void)
{
	atomic_dec(&krc_rc_conns);
	krc_obj_destroyed(KRC_OBJ_RC_PLACE);
}

/* The place taken for @conn's handshake is now @conn's. */
void krc_rc_counted(struct krc_conn *conn)
{
	/* Idle from now on (the LRU's clock starts here). */
	conn->progress = jiffies;
	conn->last_post = conn->progress;
	WRITE_ONCE(conn->rc_counted, true);
}

/* @conn leaves its pool (or goes): its place is free. */
void krc_rc_uncount(struct krc_conn *conn)
{
	if (xchg(&conn->rc_counted, false))
		krc_rc_unreserve();
}

static unsigned long krc_conn_last_use(struct krc_conn *conn)
{
	unsigned long p = READ_ONCE(conn->progress);
	unsigned long l = READ_ONCE(conn->last_post);

	return time_after(p, l) ? p : l;
}

/* May @conn be closed for another? conn->lock held for a sure answer. */
static bool krc_rc_closable(struct krc_conn *conn, unsigned long now)
{
	unsigned long idle = msecs_to_jiffies(READ_ONCE(krc_param_rc_idle_ms));

	if (READ_ONCE(conn->state) != KRC_CONN_READY ||
	    READ_ONCE(conn->failing) || READ_ONCE(conn->dead) ||
	    READ_ONCE(conn->closing) || !READ_ONCE(conn->rc_counted) ||
	    READ_ONCE(conn->sq_head) != READ_ONCE(conn->sq_tail))
		return false;
	if (time_before(now, krc_conn_last_use(conn) + idle))
		return false;
	return !atomic_read(&conn->nvqs) ||
	       READ_ONCE(krc_param_dg_policy) != KRC_DG_OFF;
}

/*
 * The least recently used closable connection of any peer but @except,
 * marked closing, with a reference; NULL if there is none.
 */
static struct krc_conn *krc_rc_pick_victim(struct krc_peer *except)
{
	struct krc_peer **peers = krc_peers_snapshot();
	struct krc_conn *conn, *best = NULL;
	unsigned long now = jiffies, flags;
	bool still;
	int i;

	if (!peers)
		return NULL;
	for (i = 0; peers[i]; i++) {
		struct krc_peer *peer = peers[i];

		if (peer == except || peer->local)
			continue;
		/* A first look without conn->lock: checked again under it. */
		spin_lock(&peer->lock);
		list_for_each_entry(conn, &peer->conns, node) {
			bool ok = krc_rc_closable(conn, now);

			if (ok && (!best ||
				   time_before(krc_conn_last_use(conn),
					       krc_conn_last_use(best)))) {
				krc_conn_put(best);
				best = conn;
				kref_get(&best->ref);
			}
		}
		spin_unlock(&peer->lock);
	}
	for (i = 0; peers[i]; i++)
		krc_peer_put(peers[i]);
	kfree(peers);
	if (!best)
		return NULL;
	/* Closing from now on, if it still may be. */
	spin_lock_irqsave(&best->lock, flags);
	still = krc_rc_closable(best, now);
	if (still)
		best->closing = true;
	spin_unlock_irqrestore(&best->lock, flags);
	if (!still) {
		krc_conn_put(best);
		return NULL;
	}
	return best;
}

static void krc_rc_reopen(struct krc_conn *conn)
{
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	conn->closing = false;
	spin_unlock_irqrestore(&conn->lock, flags);
}

/*
 * Off the pool, its place free; the QP goes with the last reference, off
 * this path (a driver may take long to destroy a QP: rxe waits for its
 * packets in flight), as after a recovery. Only if nothing is posted on
 * it: checked again under its lock, where posts are refused from the
 * moment it was marked closing (send.c), so what was seen empty stays
 * empty. False (and it is usable again) if not.
 */
static bool krc_rc_close(struct krc_conn *conn)
{
	unsigned long flags;
	bool empty;

	spin_lock_irqsave(&conn->lock, flags);
	empty = conn->closing && conn->sq_head == conn->sq_tail &&
		!conn->failing;
	if (empty)
		conn->dead = true;
	else
		conn->closing = false;
	spin_unlock_irqrestore(&conn->lock, flags);
	if (!empty) {
		WARN_ON_ONCE(conn->sq_head != conn->sq_tail && !conn->failing);
		return false;
	}
	if (krc_peer_detach(conn))	/* gives the place back too */
		krc_conn_put(conn);	/* the pool's reference */
	return true;
}

/*
 * Ask @conn's peer to close its end; 0 once it did. No answer to any of
 * the hs_retries repeats (the peer gone) is -ETIMEDOUT: our end is idle,
 * so the caller closes it all the same. Reaching @deadline first is
 * -EAGAIN: the peer may still use its end, ours stays.
 */
static int krc_rc_close_handshake(struct krc_conn *conn,
				  unsigned long deadline)
{
	unsigned long rto = msecs_to_jiffies(krc_param_hs_timeout_ms);
	struct krc_close *cl;
	struct krc_ctrl_msg req;
	int tries, ret = -ETIMEDOUT;
	long left, wait;

	cl = kzalloc(sizeof(*cl), GFP_KERNEL);
	if (!cl)
		return -ENOMEM;
	cl->req_id = get_random_u64();
	cl->peer = conn->peer;
	cl->qpn = conn->qpn;
	init_completion(&cl->done);
	krc_hs_fill(&req, KRC_MSG_CLOSE_REQ, cl->req_id);
	req.qpn = conn->qpn;
	req.peer_qpn = conn->remote_qpn;

	spin_lock(&krc_close_lock);
	list_add(&cl->node, &krc_close_pending);
	spin_unlock(&krc_close_lock);
	for (tries = 0; tries <= krc_param_hs_retries; tries++) {
		if (!READ_ONCE(krc_node.up)) {
			ret = -ENODEV;
			break;
		}
		wait = min_t(long, rto, (long)(deadline - jiffies));
		if (wait <= 0) {
			ret = -EAGAIN;
			break;
		}
		ret = krc_peer_send(conn->peer, &req);
		if (ret == -ENXIO)
			break;
		krc_event(KRC_EV_RC_CLOSE_REQ_SENT);
		left = wait_for_completion_killable_timeout(&cl->done, wait);
		if (left < 0) {
			ret = -EINTR;
			break;
		}
		if (left) {
			ret = cl->status;
			break;
		}
		/* A wait the deadline cut short proves no silence. */
		ret = wait < (long)rto ? -EAGAIN : -ETIMEDOUT;
		rto = min(rto * 2, msecs_to_jiffies(2000));
	}
	spin_lock(&krc_close_lock);
	list_del(&cl->node);
	if ((ret == -ETIMEDOUT || ret == -EAGAIN) && completion_done(&cl->done))
		ret = cl->status;
	spin_unlock(&krc_close_lock);
	kfree(cl);
	return ret;
}

/* Close one idle connection (not to @except) by @deadline. */
static int krc_rc_evict_one(struct krc_peer *except, unsigned long deadline)
{
	struct krc_conn *conn;
	int ret, tries;

	for (tries = 0; tries < 4 && time_before(jiffies, deadline); tries++) {
		conn = krc_rc_pick_victim(except);
		if (!conn)
			return -ENOSPC;
		ret = krc_conn_ops->move_vqs(conn);
		if (!ret && READ_ONCE(conn->sq_head) != READ_ONCE(conn->sq_tail))
			ret = -EBUSY;
		if (!ret)
			krc_fault_sleep(&krc_fault_close_delay_ms);
		if (!ret) {
			ret = krc_rc_close_handshake(conn, deadline);
			if (ret == -ETIMEDOUT)	/* silent peer: ours goes */
				ret = 0;
		}
		if (!ret && !krc_rc_close(conn))
			ret = -EBUSY;
		if (!ret) {
			krc_event(KRC_EV_RC_EVICTIONS);
			pr_debug("krcore: conn %u closed for another (rc_max %u)\n",
				 conn->id, krc_param_rc_max);
			krc_conn_put(conn);
			return 0;
		}
		krc_event(KRC_EV_RC_EVICT_BUSY);
		krc_rc_reopen(conn);
		krc_conn_put(conn);
		if (ret == -EINTR || !READ_ONCE(krc_node.up))
			return ret;
	}
	return -ENOSPC;
}

/*
 * A place for one more RC connection to @peer, before its handshake:
 * 0 (the caller then owns the place: krc_rc_counted() or
 * krc_rc_unreserve()), or -ENOSPC. With @may_evict (the peer's first
 * connection), an idle connection of another peer is closed to make room,
 * before @deadline (the caller's connect deadline).
 */
int krc_rc_reserve(struct krc_peer *peer, bool may_evict,
		   unsigned long deadline)
{
	int tries;

	for (tries = 0; tries < 4; tries++) {
		if (krc_rc_take())
			return 0;
		if (!may_evict || krc_rc_evict_one(peer, deadline))
			break;
	}
	krc_event(KRC_EV_RC_CAPPED);
	return -ENOSPC;
}

static void krc_rc_evict_work_fn(struct work_struct *work)
{
	if (READ_ONCE(krc_node.up) && READ_ONCE(krc_param_rc_max) &&
	    atomic_read(&krc_rc_conns) >= READ_ONCE(krc_param_rc_max))
		krc_rc_evict_one(NULL, jiffies +
				 msecs_to_jiffies(krc_param_connect_timeout_ms));
}

/*
 * Fault injection: close connection @id as the RC cap would (if it may
 * be closed now), in the background; -ENOENT if there is no such
 * connection. Tests of eviction against recovery.
 */
struct krc_evict_req {
	struct work_struct work;
	struct krc_conn *conn;
};

static void krc_rc_evict_id_work(struct work_struct *work)
{
	struct krc_evict_req *r = container_of(work, struct krc_evict_req,
					       work);
	struct krc_conn *conn = r->conn;
	unsigned long flags;
	bool ok;
	int ret;

	spin_lock_irqsave(&conn->lock, flags);
	ok = conn->state == KRC_CONN_READY && !conn->failing && !conn->dead &&
	     !conn->closing && conn->rc_counted &&
	     conn->sq_head == conn->sq_tail;
	if (ok)
		conn->closing = true;
	spin_unlock_irqrestore(&conn->lock, flags);
	ret = ok ? krc_conn_ops->move_vqs(conn) : -EBUSY;
	if (!ret && READ_ONCE(conn->sq_head) != READ_ONCE(conn->sq_tail))
		ret = -EBUSY;
	if (!ret)
		krc_fault_sleep(&krc_fault_close_delay_ms);
	if (!ret) {
		ret = krc_rc_close_handshake(conn, jiffies +
					     msecs_to_jiffies(krc_param_connect_timeout_ms));
		if (ret == -ETIMEDOUT)
			ret = 0;
	}
	if (!ret && !krc_rc_close(conn))
		ret = -EBUSY;
	if (ret && ok)
		krc_rc_reopen(conn);
	pr_info("krcore: conn %u: eviction by fault injection: %d\n", conn->id,
		ret);
	if (!ret)
		krc_event(KRC_EV_RC_EVICTIONS);
	krc_conn_put(conn);
	kfree(r);
}

static int krc_rc_evict_id(u32 id)
{
	struct krc_evict_req *r;
	struct krc_conn *conn;

	conn = krc_conn_find_id(id);
	if (!conn)
		return -ENOENT;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		krc_conn_put(conn);
		return -ENOMEM;
	}
	r->conn = conn;
	INIT_WORK(&r->work, krc_rc_evict_id_work);
	queue_work(krc_wq, &r->work);
	return 0;
}

static int krc_fault_evict_conn_set(const char *val,
				    const struct kernel_param *kp)
{
	u32 id;
	int ret = kstrtou32(val, 0, &id);

	return ret ? ret : krc_rc_evict_id(id);
}

static const struct kernel_param_ops krc_fault_evict_conn_ops = {
	.set = krc_fault_evict_conn_set,
};

module_param_cb(fault_evict_conn, &krc_fault_evict_conn_ops, NULL, 0200);
MODULE_PARM_DESC(fault_evict_conn,
		 "Fault injection: close the connection with this id as the RC cap would, in the background");

/* At the cap, a peer's handshake was refused: make room for its retry. */
void krc_rc_evict_async(void)
{
	queue_work(krc_wq, &krc_rc_evict_work);
}

static void krc_rc_answer(struct krc_peer *peer, const struct krc_ctrl_msg *req,
			  int status)
{
	struct krc_ctrl_msg rep;

	krc_hs_fill(&rep, KRC_MSG_CLOSE_REP, req->req_id);
	rep.status = status;
	rep.qpn = req->peer_qpn;
	rep.peer_qpn = req->qpn;
	if (!krc_peer_send(peer, &rep))
		krc_event(KRC_EV_RC_CLOSE_REP_SENT);
}

/*
 * @peer (its card checked) asks to close our end of the connection
 * between its msg->qpn and our msg->peer_qpn. Control-plane context: a
 * VQ busy in a call makes the answer EBUSY rather than a wait.
 */
void krc_rc_on_close_req(struct krc_peer *peer, const struct krc_ctrl_msg *msg)
{
	struct krc_conn *conn;
	unsigned long flags;
	int ret = 0;

	krc_event(KRC_EV_RC_CLOSE_REQ_RECV);
	conn = krc_peer_find_conn(peer, msg->peer_qpn, msg->qpn,
				  msg->card.incarnation);
	if (!conn) {
		/* Gone already (our answer was lost): it is closed. */
		krc_rc_answer(peer, msg, 0);
		return;
	}
	spin_lock_irqsave(&conn->lock, flags);
	if (conn->state != KRC_CONN_READY || conn->failing || conn->dead ||
	    conn->closing || conn->sq_head != conn->sq_tail)
		ret = -EBUSY;
	else
		conn->closing = true;
	spin_unlock_irqrestore(&conn->lock, flags);
	if (!ret) {
		ret = krc_conn_ops->move_vqs(conn);
		if (!ret) {
			spin_lock_irqsave(&conn->lock, flags);
			if (conn->sq_head != conn->sq_tail)
				ret = -EBUSY;
			spin_unlock_irqrestore(&conn->lock, flags);
		}
		if (ret)
			krc_rc_reopen(conn);
	}
	/* Off the pool first: a repeated request finds nothing. */
	if (!ret && !krc_rc_close(conn))
		ret = -EBUSY;
	if (ret) {
		krc_event(KRC_EV_RC_EVICT_BUSY);
		krc_rc_answer(peer, msg, EBUSY);
	} else {
		krc_rc_answer(peer, msg, 0);
		krc_event(KRC_EV_RC_CLOSED_BY_PEER);
	}
	krc_conn_put(conn);
}

/* The answer to a close of ours (its sender's card checked). */
void krc_rc_on_close_rep(struct krc_peer *peer, const struct krc_ctrl_msg *msg)
{
	struct krc_close *cl;

	spin_lock(&krc_close_lock);
	list_for_each_entry(cl, &krc_close_pending, node) {
		if (cl->req_id == msg->req_id && cl->peer == peer &&
		    cl->qpn == msg->peer_qpn && !completion_done(&cl->done)) {
			/* 0: closed; anything else the peer says: not. */
			cl->status = msg->status ? -EBUSY : 0;
			complete(&cl->done);
			break;
		}
	}
	spin_unlock(&krc_close_lock);
}

/* The node stops: every close waiting for an answer gives up. */
void krc_rc_exit(void)
{
	struct krc_close *cl;

	spin_lock(&krc_close_lock);
	list_for_each_entry(cl, &krc_close_pending, node) {
		if (!completion_done(&cl->done)) {
			cl->status = -ENODEV;
			complete(&cl->done);
		}
	}
	spin_unlock(&krc_close_lock);
	/* It sees the node down and starts no other close. */
	cancel_work_sync(&krc_rc_evict_work);
}
